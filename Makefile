# SPDX-License-Identifier: BSD-3-Clause
# smbdirect-preload — build, test and install.
# Sources are discovered per folder; each folder is one module (see docs/ARCHITECTURE.md "Layers").

CC      ?= cc
BUILD   ?= build
PREFIX  ?= /usr/local
DESTDIR ?=
# Install directories; LIBDIR may be multiarch (Debian: /usr/lib/<triplet>). The shim is
# preloaded, never linked against, so it lives in a private folder (as rdma-core's
# rsocket/librspreload.so); the relay is a daemon for the administrator, hence sbin.
BINDIR  ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
LIBDIR  ?= $(PREFIX)/lib
SHIMDIR ?= $(LIBDIR)/smbdirect
MANDIR  ?= $(PREFIX)/share/man
# The configuration file's folder is /etc whatever PREFIX is: the programs look there
# (SD_CONFIG_DEFAULT; SMBDIRECT_CONFIG names another file).
CONFDIR  = /etc/smbdirect
# The version: debian/changelog's first entry, its one copy. Compiled into every program
# and the shim (common/sd_version.c) and written into the smbdirect wrapper.
VERSION := $(shell sed -n '1s/^[^ ]* (\(.*\)) .*/\1/p' debian/changelog)
SAN     ?=
OPT     ?= -O2

WARN     = -Wall -Wextra -Werror
CFLAGS  += -std=c11 -D_GNU_SOURCE $(OPT) -g -fPIC $(WARN)

# Include folders by layer (docs/ARCHITECTURE.md): each folder is compiled seeing only
# its own headers and the layers below it, so an upward #include does not build.
INC_COMMON   = -Icommon
INC_PORTMAP  = $(INC_COMMON) -Iportmap
INC_PROVIDER = $(INC_COMMON) -Itransport
INC_SMBD     = $(INC_PROVIDER) -Itransport/smbd
INC_CHANNEL  = $(INC_SMBD) -Itransport/channel
INC_LINK     = $(INC_SMBD) -Itransport/link
INC_BRIDGE   = $(INC_CHANNEL) -Itransport/link -Itransport/bridge
INC_SETTINGS = $(INC_BRIDGE) -Iportmap -Itransport/settings
INC_ALL      = $(INC_SETTINGS) -Ipreload
# The conformance client sits on the channel layer; only tools/ (the probe) sees it.
INC_CONF     = $(INC_CHANNEL) -Iconformance
INC_TOOLS    = $(INC_ALL) -Iconformance
INCLUDES     = $(INC_ALL)
ifeq ($(SAN),1)
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif
RDMA_LIBS = -lrdmacm -libverbs
# libnettle: SMB2 signing (transport/channel/smb2_sign.c) in the core
LIBS      = $(RDMA_LIBS) -lnettle -lpthread -ldl
CONF_LIBS = -lnettle   # MD4 and HMAC-MD5 of NTLMv2 (conformance/cf_ntlm.c)

CORE_DIRS = common portmap transport transport/smbd transport/channel transport/link \
            transport/bridge transport/settings transport/soft transport/verbs
CORE_SRC  = $(foreach d,$(CORE_DIRS),$(wildcard $(d)/*.c))
SHIM_SRC  = $(wildcard preload/*.c)
CORE_OBJ  = $(CORE_SRC:%.c=$(BUILD)/obj/%.o)
SHIM_OBJ  = $(SHIM_SRC:%.c=$(BUILD)/obj/%.o)
CONF_SRC  = $(wildcard conformance/*.c)
CONF_OBJ  = $(CONF_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_SRC  = $(wildcard tests/unit/test_*.c)
UNIT_HELP = $(filter-out $(UNIT_SRC),$(wildcard tests/unit/*.c))
UNIT_BIN  = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TOOLS     = $(BUILD)/smbdirect-relay $(BUILD)/smbdirect-probe
DOCGEN    = $(BUILD)/smbdirect-settings-doc
FUZZ_SRC  = $(wildcard tests/fuzz/fuzz_*.c)

.PHONY: print-includes deps all progs tests docs test test-unit test-bats test-cluster test-vm test-deb demo bench bench-engine bench-vm soak torture fuzz install deb clean
PROGS = $(BUILD)/libsmbdirect.so $(TOOLS) $(BUILD)/smbdirect
all: $(PROGS) $(DOCGEN) tests
# What `make install` installs (debian/rules builds only these under nocheck).
progs: $(PROGS)

$(BUILD)/obj/common/%.o:             INCLUDES = $(INC_COMMON)
$(BUILD)/obj/portmap/%.o:            INCLUDES = $(INC_PORTMAP)
$(BUILD)/obj/transport/%.o:          INCLUDES = $(INC_PROVIDER)
$(BUILD)/obj/transport/soft/%.o:     INCLUDES = $(INC_PROVIDER) -Itransport/soft
$(BUILD)/obj/transport/verbs/%.o:    INCLUDES = $(INC_PROVIDER) -Itransport/verbs
$(BUILD)/obj/transport/smbd/%.o:     INCLUDES = $(INC_SMBD)
$(BUILD)/obj/transport/channel/%.o:  INCLUDES = $(INC_CHANNEL)
$(BUILD)/obj/transport/link/%.o:     INCLUDES = $(INC_LINK)
$(BUILD)/obj/transport/bridge/%.o:   INCLUDES = $(INC_BRIDGE)
$(BUILD)/obj/transport/settings/%.o: INCLUDES = $(INC_SETTINGS)
$(BUILD)/obj/conformance/%.o:        INCLUDES = $(INC_CONF)
$(BUILD)/obj/tools/%.o:              INCLUDES = $(INC_TOOLS)
$(BUILD)/obj/tools/relay/%.o:        INCLUDES = $(INC_ALL) -Itools/relay

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC   $<"
	@$(CC) $(CPPFLAGS) $(CFLAGS) $(INCLUDES) -MMD -MP -c $< -o $@

# The version is compiled into sd_version.o alone, rebuilt when debian/changelog changes.
$(BUILD)/obj/common/sd_version.o: override CPPFLAGS += -DSD_VERSION='"$(VERSION)"'
$(BUILD)/obj/common/sd_version.o: debian/changelog

$(BUILD)/libsmbdirect-core.a: $(CORE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The preload library: the shim over the core, no symbol versions added.
$(BUILD)/libsmbdirect.so: $(SHIM_OBJ) $(CORE_OBJ) preload/exports.map
	$(CC) -shared $(LDFLAGS) -Wl,--version-script=preload/exports.map -o $@ $(SHIM_OBJ) $(CORE_OBJ) $(LIBS)

$(BUILD)/libsmbdirect-conformance.a: $(CONF_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/smbdirect-probe: $(BUILD)/obj/tools/smbdirect-probe.o $(BUILD)/libsmbdirect-conformance.a \
                          $(BUILD)/libsmbdirect-core.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) $(CONF_LIBS)

RELAY_OBJ = $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tools/relay/*.c))
$(BUILD)/smbdirect-relay: $(RELAY_OBJ) $(BUILD)/libsmbdirect-core.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/smbdirect-%: $(BUILD)/obj/tools/smbdirect-%.o $(BUILD)/libsmbdirect-core.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# wrapper SHIMDIR BINDIR OUT — the smbdirect wrapper preloading SHIMDIR/libsmbdirect.so,
# with BINDIR/smbdirect-probe for its --check-config, and the version.
wrapper = sed -e 's|@SHIMDIR@|$(1)|' -e 's|@BINDIR@|$(2)|' -e 's|@VERSION@|$(VERSION)|' \
          tools/smbdirect.in > $(3) && chmod 0755 $(3)
$(BUILD)/smbdirect: tools/smbdirect.in debian/changelog
	@mkdir -p $(dir $@)
	$(call wrapper,$(abspath $(BUILD)),$(abspath $(BUILD)),$@)

# Unit tests link the core library and the test helpers; only test_shim_* also link
# the shim's objects (which interpose connect() and friends), and test_relay_X the
# relay's module relay_X.c.
tests: $(UNIT_BIN)
UNIT_DEPS = $(UNIT_HELP:%.c=$(BUILD)/obj/%.o) $(BUILD)/libsmbdirect-conformance.a \
            $(BUILD)/libsmbdirect-core.a
$(BUILD)/tests/test_shim_%: tests/unit/test_shim_%.c $(SHIM_OBJ) $(UNIT_DEPS)
	@mkdir -p $(dir $@)
	@echo "  LINK $@"
	@$(CC) $(CPPFLAGS) $(CFLAGS) $(INC_TOOLS) -Itests/unit -o $@ $^ -lcmocka $(LIBS) $(CONF_LIBS) $(LDFLAGS)
$(BUILD)/tests/test_relay_%: tests/unit/test_relay_%.c $(BUILD)/obj/tools/relay/relay_%.o \
                             $(UNIT_DEPS)
	@mkdir -p $(dir $@)
	@echo "  LINK $@"
	@$(CC) $(CPPFLAGS) $(CFLAGS) $(INC_TOOLS) -Itools/relay -Itests/unit -o $@ $^ -lcmocka $(LIBS) $(CONF_LIBS) $(LDFLAGS)
$(BUILD)/tests/%: tests/unit/%.c $(UNIT_DEPS)
	@mkdir -p $(dir $@)
	@echo "  LINK $@"
	@$(CC) $(CPPFLAGS) $(CFLAGS) $(INC_TOOLS) -Itests/unit -o $@ $^ -lcmocka $(LIBS) $(CONF_LIBS) $(LDFLAGS)

# test_shim_siglearn calls GnuTLS through the shim's interposers, linked in front of it
# (the shim itself finds GnuTLS at run time and does not link it).
$(BUILD)/tests/test_shim_siglearn: LIBS += -lgnutls

# Test-only programs (tests/tools/): built beside the unit tests, never installed.
TEST_TOOLS = $(BUILD)/tests/hostile-smbd
tests: $(TEST_TOOLS)
$(BUILD)/tests/hostile-smbd: tests/tools/hostile_smbd.c $(BUILD)/libsmbdirect-core.a
	@mkdir -p $(dir $@)
	@echo "  LINK $@"
	@$(CC) $(CPPFLAGS) $(CFLAGS) $(INC_SMBD) -Itransport/soft -o $@ $^ $(LIBS) $(LDFLAGS)

# Rewrites the settings blocks of README.md, the man pages and the smbdirect wrapper
# from the settings table (the unit tier fails while they differ).
docs: $(DOCGEN) $(TOOLS)
	scripts/settings-docs $(BUILD)

# The include flags of the whole tree, for scripts that compile on their own (scripts/fuzz).
print-includes:
	@echo $(INC_TOOLS)

# Every test tier that needs no VM; ends with "N passed, N failed, N skipped".
test: all
	scripts/run-tests

test-unit: all
	scripts/run-tests unit

test-bats: all
	scripts/run-tests bats

# Clustered Samba tier: two CTDB nodes in namespaces, smbd with clustering = yes and the
# relay on each, failover checked through the shim (tests/cluster, docs/CLUSTER.md; root).
test-cluster: all
	scripts/run-tests cluster

# Real-peer tier: kernel siw/rxe, ksmbd and cifs in a qemu (TCG) VM; see scripts/vm/run-tests.
test-vm: all
	scripts/vm/run-tests

# The Debian packages: builds them with build/deb/src as a pristine copy of the tree
# and puts the .deb, .changes and the rest into build/deb (scripts/deb-build).
deb:
	scripts/deb-build $(BUILD)/deb

# The packages checked: make deb, lintian, install, the autopkgtest (debian/tests/demo)
# against the installed files, purge leaves nothing; root, installs and purges them.
test-deb:
	scripts/deb-check

# Installs the build/test/demo dependencies (root, Debian 12, apt-get).
deps:
	scripts/install-deps

demo: all
	scripts/demo

bench-engine: all
	scripts/bench-engine

bench: all
	scripts/bench-engine
	scripts/bench

# VM benchmark (one qemu VM, ksmbd on kernel siw): the shim on verbs and soft-iWARP vs kernel cifs -o rdma.
bench-vm: all
	scripts/vm/bench

# Soak: 32 smbclient clients x 600 s through one relay (SOAK_SECONDS, SOAK_CLIENTS, SOAK_MAX_MIB).
soak: all
	scripts/soak

torture: all
	scripts/torture

fuzz:
	scripts/fuzz

install: $(PROGS)
	install -d $(DESTDIR)$(SHIMDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) \
	           $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 \
	           $(DESTDIR)$(MANDIR)/man8
	install -m 0644 $(BUILD)/libsmbdirect.so $(DESTDIR)$(SHIMDIR)/libsmbdirect.so
	install -m 0755 $(BUILD)/smbdirect-probe $(DESTDIR)$(BINDIR)/
	install -m 0755 $(BUILD)/smbdirect-relay $(DESTDIR)$(SBINDIR)/
	$(call wrapper,$(SHIMDIR),$(BINDIR),$(DESTDIR)$(BINDIR)/smbdirect)
	install -m 0644 docs/smbdirect.1 docs/smbdirect-probe.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 docs/smbdirect.conf.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 docs/libsmbdirect.7 $(DESTDIR)$(MANDIR)/man7/
	install -m 0644 docs/smbdirect-relay.8 $(DESTDIR)$(MANDIR)/man8/
	@# an existing configuration is the administrator's: never overwritten
	install -d $(DESTDIR)$(CONFDIR)
	[ -e $(DESTDIR)$(CONFDIR)/smbdirect.conf ] || \
	    install -m 0644 docs/smbdirect.conf $(DESTDIR)$(CONFDIR)/smbdirect.conf

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
