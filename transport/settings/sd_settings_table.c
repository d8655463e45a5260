/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/settings/sd_settings_table.c — the table of every setting: the only place
 * a default or a bound is written. Defaults are text, parsed like a user's value (so
 * a unit test checks each against its own bounds); the docs, --help and the error
 * messages are generated from these rows. */
#include "sd_settings.h"

#include "bridge_framer.h"

#define SHIM  SD_PROG_BIT(SD_PROG_SHIM)
#define RELAY SD_PROG_BIT(SD_PROG_RELAY)
#define PROBE SD_PROG_BIT(SD_PROG_PROBE)
#define TOOLS (RELAY | PROBE)
#define ALL   (SHIM | RELAY | PROBE)
#define SAME(d) { [SD_PROG_SHIM] = (d), [SD_PROG_RELAY] = (d), [SD_PROG_PROBE] = (d) }

const char *const sd_settings_prog_names[SD_PROG_COUNT] = {
    [SD_PROG_SHIM] = "shim", [SD_PROG_RELAY] = "relay", [SD_PROG_PROBE] = "probe",
};

static const char *const transports[] = { "auto", "rdma", "soft", "tcp", NULL };
static const char *const fallbacks[] = { "tcp", "none", NULL };
static const char *const crc_choices[] = { "0", "1", NULL };
static const char *const off_on[] = { "off", "on", NULL };

const struct sd_setting sd_settings_table[SD_SET_COUNT] = {
    [SD_SET_TRANSPORT] = {
        .env = "SMBDIRECT_TRANSPORT", .flag = "transport", .env_progs = SHIM | TOOLS,
        .flag_progs = TOOLS, .kind = SD_KIND_CHOICE, .choices = transports,
        .def = SAME("auto"),
        .help = "RDMA provider: auto is rdma-core verbs when an RDMA device reaches the "
                "address, else soft-iWARP; rdma forces verbs; soft is userspace soft-iWARP "
                "over TCP (no RDMA NIC needed); tcp makes the shim tunnel nothing (the relay "
                "and the probe refuse it)",
        .brief = "auto: verbs if an RDMA device reaches the address, else soft-iWARP; tcp: no "
                 "tunnel" },
    [SD_SET_PORTS] = {
        .env = "SMBDIRECT_PORTS", .env_progs = SHIM, .kind = SD_KIND_PORTS,
        .def = SAME("445"),
        .help = "TCP ports whose connects are tunneled (139 only when listed): 1-65535, at "
                "most 32, no duplicates",
        .brief = "TCP ports whose connects are tunneled (139 only when listed)" },
    [SD_SET_PORTMAP] = {
        .env = "SMBDIRECT_PORTMAP", .env_progs = SHIM, .kind = SD_KIND_PORTMAP,
        .def = SAME(""),
        .help = "SMB Direct port to dial for a tunneled TCP port; a port not listed uses "
                "5445 over iWARP and soft-iWARP, the TCP port itself over InfiniBand/RoCE "
                "(MS-SMB2 2.1)",
        .brief = "SMB Direct port to dial for a tunneled TCP port; unlisted: 5445 over "
                 "(soft-)iWARP, the port itself over InfiniBand/RoCE" },
    [SD_SET_ADDRMAP] = {
        .env = "SMBDIRECT_ADDRMAP", .env_progs = SHIM | PROBE, .kind = SD_KIND_ADDRMAP,
        .def = SAME(""),
        .help = "RDMA address to dial in place of a server's TCP address (the probe: of "
                "HOST's), for servers with RDMA on another network: numeric addresses, IPv6 "
                "in brackets before a port, at most 32 entries; a port given replaces the "
                "port map's (the probe's default), and a TCP fallback connects to the "
                "address the program asked for",
        .brief = "RDMA address (and port) to dial in place of a server's TCP address, for servers "
                 "with RDMA on another network" },
    [SD_SET_FALLBACK] = {
        .env = "SMBDIRECT_FALLBACK", .env_progs = SHIM, .kind = SD_KIND_CHOICE,
        .choices = fallbacks, .def = SAME("tcp"),
        .help = "when SMB Direct cannot be set up: tcp connects over TCP as the program "
                "asked (with a warning), none fails the connect with the SMB Direct error",
        .brief = "when SMB Direct cannot be set up: tcp connects over TCP (with a warning), none "
                 "fails the connect" },
    [SD_SET_LOG] = {
        .env = "SMBDIRECT_LOG", .env_progs = ALL, .kind = SD_KIND_LOG,
        /* The probe prints its own failures: library lines would repeat them. The
         * relay's connection lines are notices. */
        .def = { [SD_PROG_SHIM] = "warn", [SD_PROG_RELAY] = "notice",
                 [SD_PROG_PROBE] = "error" },
        .help = "log level; lines go to standard error as smbdirect[PID] LEVEL: message "
                "(the relay's as relay: message), each with its syslog priority when "
                "standard error is the systemd journal; at info the shim logs each "
                "tunnel's setup and end with byte counts, at notice the relay logs each "
                "connection",
        .brief = "log level; info logs each tunnel, notice each relay connection" },
    [SD_SET_CONNECT_TIMEOUT] = {
        .env = "SMBDIRECT_CONNECT_TIMEOUT", .flag = "timeout", .env_progs = SHIM | TOOLS,
        .flag_progs = TOOLS, .kind = SD_KIND_NUMBER, .unit = SD_UNIT_MS, .min = 1,
        .max = 600000, .def = SAME("10000"),
        .help = "bound on the RDMA connect plus the SMB Direct negotiation (the shim's "
                "connect(), the probe); for the relay, on accept plus negotiation and on "
                "each backend connect",
        .brief = "bound on the RDMA connect or accept plus the SMB Direct negotiation, and on "
                 "the relay's backend connects" },
    [SD_SET_CREDITS] = {
        .env = "SMBDIRECT_CREDITS", .flag = "credits", .env_progs = SHIM | TOOLS,
        .flag_progs = TOOLS, .kind = SD_KIND_NUMBER, .min = SMBD_MIN_PEER_CREDITS,
        .max = 255, .def = SAME("255"),
        /* 255: what tshark's dissector and the Linux peers expect; the verbs receive
         * queue holds 1024. */
        .help = "receive credits offered and send credits asked for (MS-SMBD 3.1.1.1 "
                "ReceiveCreditMax, SendCreditTarget)",
        .brief = "receive credits offered and send credits asked for (MS-SMBD 3.1.1.1)" },
    [SD_SET_MAX_SEND_SIZE] = {
        .env = "SMBDIRECT_MAX_SEND_SIZE", .flag = "max-send-size", .env_progs = SHIM | TOOLS,
        .flag_progs = TOOLS, .kind = SD_KIND_NUMBER, .unit = SD_UNIT_BYTES,
        .min = SMBD_MIN_RECEIVE_SIZE, .max = SMBD_MAX_MESSAGE_SIZE, .def = SAME("8136"),
        .help = "preferred send size; 8136 is the largest Windows Server accepts (MS-SMBD "
                "Appendix B note <5>), the negotiated size is at most the peer's "
                "MaxReceiveSize (1364 for ksmbd)",
        .brief = "preferred send size (8136: the largest Windows Server accepts); the peer's "
                 "MaxReceiveSize caps it" },
    [SD_SET_MAX_RECEIVE_SIZE] = {
        .env = "SMBDIRECT_MAX_RECEIVE_SIZE", .flag = "max-receive-size", .env_progs = SHIM | TOOLS,
        .flag_progs = TOOLS, .kind = SD_KIND_NUMBER, .unit = SD_UNIT_BYTES,
        .min = SMBD_MIN_RECEIVE_SIZE, .max = SMBD_MAX_MESSAGE_SIZE, .def = SAME("8192"),
        .help = "size of each posted receive: the largest message the peer may send" },
    [SD_SET_MAX_FRAGMENTED_SIZE] = {
        .env = "SMBDIRECT_MAX_FRAGMENTED_SIZE", .flag = "max-fragmented-size",
        .env_progs = SHIM | TOOLS, .flag_progs = TOOLS, .kind = SD_KIND_NUMBER,
        .unit = SD_UNIT_BYTES, .min = SMBD_MIN_FRAGMENTED_SIZE,
        .max = BRIDGE_FRAMER_MAX_MSG, .def = SAME("8454144"),
        .help = "largest message reassembled from fragments; the default holds an 8 MiB "
                "SMB2 READ response with its headers, the maximum is the 24-bit length of "
                "the Direct-TCP prefix (MS-SMB2 2.1)",
        .brief = "largest message reassembled from fragments" },
    [SD_SET_MAX_READ_WRITE_SIZE] = {
        .env = "SMBDIRECT_MAX_READ_WRITE_SIZE", .flag = "max-read-write-size",
        .env_progs = SHIM | TOOLS, .flag_progs = TOOLS, .kind = SD_KIND_NUMBER,
        .unit = SD_UNIT_BYTES, .min = 4096, .max = 16777216, .def = SAME("8388608"),
        .help = "largest RDMA read or write of one buffer descriptor" },
    [SD_SET_KEEPALIVE] = {
        .env = "SMBDIRECT_KEEPALIVE", .flag = "keepalive", .env_progs = SHIM | TOOLS,
        .flag_progs = TOOLS, .kind = SD_KIND_NUMBER, .unit = SD_UNIT_S, .min = 0,
        .max = 3600, .def = SAME("120"),
        .help = "idle time before an SMB Direct keepalive (MS-SMBD 3.1.6.2); 0 sends none",
        .brief = "idle time before an SMB Direct keepalive; 0 sends none" },
    [SD_SET_IRD] = {
        .env = "SMBDIRECT_IRD", .flag = "ird", .env_progs = SHIM | TOOLS, .flag_progs = TOOLS,
        .kind = SD_KIND_NUMBER, .min = 1, .max = 255, .def = SAME("16"),
        /* 255: rdma_cm carries IRD/ORD in 8 bits (responder_resources); soft-iWARP's
         * MPA field takes 14. */
        .help = "incoming RDMA Reads offered to the peer (IRD, MS-SMBD 6.1); providers "
                "lower it to what the device supports",
        .brief = "incoming RDMA Reads offered to the peer (IRD), lowered to what the device "
                 "supports" },
    [SD_SET_ORD] = {
        .env = "SMBDIRECT_ORD", .flag = "ord", .env_progs = SHIM | TOOLS, .flag_progs = TOOLS,
        .kind = SD_KIND_NUMBER, .min = 1, .max = 255, .def = SAME("16"),
        .help = "outgoing RDMA Reads asked for (ORD, MS-SMBD 6.1); providers lower it to "
                "what the device supports",
        .brief = "outgoing RDMA Reads asked for (ORD), lowered to what the device supports" },
    [SD_SET_RDMA_THRESHOLD] = {
        .env = "SMBDIRECT_RDMA_THRESHOLD", .env_progs = SHIM, .kind = SD_KIND_NUMBER,
        .unit = SD_UNIT_BYTES, .min = 0, .max = 16777216, .def = SAME("4096"),
        /* 4096: the Linux SMB Direct client's rdma_readwrite_threshold. */
        .help = "SMB2 READs and WRITEs of more bytes than this, at dialect 3.0 or later in "
                "unsigned sessions or signed ones whose key the shim learned (not through "
                "the keyless relay), have the server move the data by RDMA Read and Write "
                "(the READ/WRITE channel, MS-SMB2 2.2.19, 2.2.21); encrypted sessions stay "
                "inline; 0 keeps all I/O inline",
        .brief = "SMB2 READs and WRITEs larger than this move their data by RDMA (dialect 3.0+, "
                 "not encrypted); 0: all inline" },
    [SD_SET_CHANNEL_IO_SIZE] = {
        .env = "SMBDIRECT_CHANNEL_IO_SIZE", .env_progs = SHIM, .kind = SD_KIND_NUMBER,
        .unit = SD_UNIT_BYTES, .min = 4096, .max = 16777216, .def = SAME("2097152"),
        /* 2 MiB: each hop moves a channel I/O whole before the next starts on it (the
         * shim hands a READ's data on once the response says the server's RDMA Writes are
         * done, the relay forwards a WRITE once its RDMA Read is), and smbclient keeps
         * 16 MiB of I/O outstanding: 8 MiB I/Os keep two in flight, 2 MiB ones eight.
         * smbclient through the shim and the relay, 1 GiB, median of 8 runs (2026-11-25):
         * get 1062 MiB/s at 8 MiB, 1160 at 4, 1517 at 2, 1497 at 1, 1453 at 0.5; put 643
         * at 8 MiB, 811 at 4, 863 at 2, 829 at 1. The Linux client's and Windows' own
         * channel I/O is 1 MiB by default. */
        .help = "largest SMB2 READ or WRITE the program is offered on a tunnel whose I/O "
                "uses the RDMA channel (MaxReadWriteSize and the server's own limits still "
                "apply): smaller I/Os keep more of them in flight, as each hop moves a "
                "channel I/O whole before passing it on",
        .brief = "largest SMB2 READ or WRITE offered to the program on a tunnel whose I/O uses the "
                 "RDMA channel" },
    [SD_SET_CHANNEL_MEMORY] = {
        .env = "SMBDIRECT_CHANNEL_MEMORY", .flag = "channel-memory", .env_progs = SHIM | RELAY,
        .flag_progs = RELAY, .kind = SD_KIND_NUMBER, .unit = SD_UNIT_BYTES, .min = 1048576,
        .max = 1073741824, .def = SAME("67108864"),
        .help = "READ/WRITE channel buffers one connection may hold (registered for the "
                "peer or RDMA-read into, MS-SMBD 3.1.4.3): past it, further channel I/O waits "
                "for earlier I/O to finish (the program's or the client's requests are "
                "held back, never failed); one I/O always proceeds",
        .brief = "RDMA channel buffers one connection may hold; past it, further channel I/O "
                 "waits" },
    [SD_SET_CHANNEL_MEMORY_TOTAL] = {
        .env = "SMBDIRECT_CHANNEL_MEMORY_TOTAL", .flag = "channel-memory-total",
        .env_progs = SHIM | RELAY, .flag_progs = RELAY, .kind = SD_KIND_NUMBER,
        .unit = SD_UNIT_BYTES, .min = 1048576, .max = 4294967295u, .def = SAME("536870912"),
        .help = "the same bound for all connections of the process together (with verbs, "
                "registered memory counts against RLIMIT_MEMLOCK)",
        .brief = "the same bound for all the process's connections together" },
    [SD_SET_SOCKBUF] = {
        .env = "SMBDIRECT_SOCKBUF", .env_progs = SHIM, .kind = SD_KIND_NUMBER,
        .unit = SD_UNIT_BYTES, .min = 65536, .max = 268435456, .def = SAME("4194304"),
        .help = "send and receive buffer of each end of the program's socketpair (above "
                "net.core.wmem_max it needs CAP_NET_ADMIN)",
        .brief = "send and receive buffer of each end of the program's socketpair" },
    [SD_SET_SOFT_CRC] = {
        .env = "SMBDIRECT_SOFT_CRC", .env_progs = ALL, .kind = SD_KIND_CHOICE,
        .choices = crc_choices, .def = SAME("0"),
        .help = "soft-iWARP: 1 asks the peer for MPA CRC32c on every FPDU (RFC 5044 8), 0 "
                "uses it only when the peer asks (the Linux siw default)",
        .brief = "soft-iWARP: 1 asks the peer for MPA CRC32c, 0 uses it only when the peer asks" },
    [SD_SET_SOFT_HANDSHAKE_MS] = {
        .env = "SMBDIRECT_SOFT_HANDSHAKE_MS", .env_progs = ALL, .kind = SD_KIND_NUMBER,
        .unit = SD_UNIT_MS, .min = 1, .max = 600000, .def = SAME("5000"),
        .help = "soft-iWARP listeners (the relay): time an accepted connection has to send "
                "its MPA request (RFC 5044 7.1.2) before it is dropped",
        .brief = "soft-iWARP listeners (the relay): time an accepted connection has to send its "
                 "MPA request" },
    [SD_SET_LISTEN] = {
        .env = "SMBDIRECT_LISTEN", .flag = "listen", .env_progs = RELAY, .flag_progs = RELAY,
        .kind = SD_KIND_HOSTPORT, .def = SAME(""),
        .help = "address the relay accepts SMB Direct on (iWARP usually uses 5445); 0.0.0.0 "
                "or [::] is every address, on every RDMA device; required",
        .brief = "address the relay accepts SMB Direct on (0.0.0.0 or [::]: every address); "
                 "required" },
    [SD_SET_BACKEND] = {
        .env = "SMBDIRECT_BACKEND", .flag = "backend", .env_progs = RELAY, .flag_progs = RELAY,
        .kind = SD_KIND_HOSTPORT, .def = SAME(""),
        .help = "TCP address of the SMB server the relay bridges each connection to "
                "(usually port 445); required",
        .brief = "TCP address of the SMB server the relay bridges each connection to; required" },
    [SD_SET_ALLOW] = {
        .env = "SMBDIRECT_ALLOW", .flag = "allow", .env_progs = RELAY, .flag_progs = RELAY,
        .kind = SD_KIND_PREFIXES, .def = SAME("0.0.0.0/0,::/0"),
        /* The backend sees every client as the relay's address, so its own host
         * allow list no longer tells clients apart: this one does. */
        .help = "client addresses the relay serves: a connection from any other is refused "
                "before it is accepted and before any backend connection is opened "
                "(logged once a minute per address, counted in --status); SIGHUP re-reads "
                "it",
        .brief = "client addresses the relay serves; a connection from any other is refused before "
                 "it is accepted" },
    [SD_SET_SERVE_ADDRESSES] = {
        .env = "SMBDIRECT_SERVE_ADDRESSES", .flag = "serve-addresses", .env_progs = RELAY,
        .flag_progs = RELAY, .kind = SD_KIND_PREFIXES, .def = SAME("0.0.0.0/0,::/0"),
        /* A relay listening on a wildcard address serves a cluster's public addresses
         * wherever they land; this keeps it off the node's other addresses. */
        .help = "the relay's own addresses it serves (with a wildcard listen, e.g. a "
                "cluster's public addresses): a connection made to any other address of "
                "the host is refused before it is accepted (counted in --status); SIGHUP "
                "re-reads it",
        .brief = "its own addresses it serves (with a wildcard listen); a connection to another "
                 "is refused" },
    [SD_SET_MAX_CONNECTIONS] = {
        .env = "SMBDIRECT_MAX_CONNECTIONS", .flag = "max-connections", .env_progs = RELAY,
        .flag_progs = RELAY, .kind = SD_KIND_NUMBER, .min = 0, .max = 65536,
        .def = SAME("0"),
        .help = "connections the relay serves at once (negotiating ones included): past it, "
                "new connections are refused and live ones are never disturbed; 0: as many "
                "as the open-file limit allows (ulimit -n, LimitNOFILE=; the relay logs the "
                "number at start); SIGHUP re-reads it",
        .brief = "connections the relay serves at once, past which new ones are refused; 0: what "
                 "the open-file limit allows" },
    [SD_SET_MAX_CONNECTIONS_PER_CLIENT] = {
        .env = "SMBDIRECT_MAX_CONNECTIONS_PER_CLIENT", .flag = "max-connections-per-client",
        .env_progs = RELAY, .flag_progs = RELAY, .kind = SD_KIND_NUMBER, .min = 0,
        .max = 65536, .def = SAME("0"),
        /* No bound by default: the relay must not refuse what its backend accepts
         * (smbtorture's smb2.multichannel opens 151 connections from one address). */
        .help = "the same bound for the connections of one client address; 0: none, like "
                "smbd's and ksmbd's default (one multichannel client opens many "
                "connections from one address); SIGHUP re-reads it",
        .brief = "the same bound per client address; 0: none, like smbd's default" },
    [SD_SET_DRAIN_TIME] = {
        .env = "SMBDIRECT_DRAIN_TIME", .flag = "drain-time", .env_progs = RELAY,
        .flag_progs = RELAY, .kind = SD_KIND_NUMBER, .unit = SD_UNIT_S, .min = 0,
        .max = 3600, .def = SAME("30"),
        .help = "on SIGTERM or SIGINT the relay stops accepting and lets live connections "
                "end by themselves for this long, then ends the rest in order (SMB Direct "
                "disconnect, FIN to the backend); a second signal ends them at once; "
                "SIGHUP re-reads it",
        .brief = "on SIGTERM, how long live connections may end by themselves before the relay "
                 "ends the rest" },
    [SD_SET_STATUS_SOCKET] = {
        .env = "SMBDIRECT_STATUS_SOCKET", .flag = "status-socket", .env_progs = RELAY,
        .flag_progs = RELAY, .kind = SD_KIND_PATH, .def = SAME("/run/smbdirect/relay.sock"),
        .help = "UNIX socket where the relay serves its live status, and which "
                "smbdirect-relay --status reads; none: no status socket. When the "
                "default's folder is missing the relay runs without one (the service "
                "creates it)",
        .brief = "the relay's status socket, read by smbdirect-relay --status; none: no socket" },
    [SD_SET_LOOPS] = {
        .env = "SMBDIRECT_LOOPS", .flag = "loops", .env_progs = RELAY, .flag_progs = RELAY,
        .kind = SD_KIND_NUMBER, .min = 0, .max = 256, .def = SAME("0"),
        .help = "event loops (threads) the relay runs; each connection lives on one of them, "
                "the one with the fewest connections when it arrives; 0: one per CPU the "
                "relay may run on (its affinity mask, e.g. systemd's CPUAffinity=)",
        .brief = "event loops (threads) the relay runs; 0: one per CPU it may run on" },
    [SD_SET_BUSY_POLL] = {
        .env = "SMBDIRECT_BUSY_POLL", .flag = "busy-poll", .env_progs = SHIM | RELAY,
        .flag_progs = RELAY, .kind = SD_KIND_NUMBER, .unit = SD_UNIT_US, .min = 0,
        .max = 10000,
        .def = { [SD_PROG_SHIM] = "0", [SD_PROG_RELAY] = "100", [SD_PROG_PROBE] = "0" },
        /* The shim's 0: a library preloaded into any program pays for polling in its
         * CPU; polling 1000 us cost the client 1.6-1.9x the CPU per small request of
         * polling off, on two hosts, for no p50 gain beyond the noise (scripts/bench's
         * small-request section; docs/BENCHMARKS.md's decisions). */
        .help = "the most an event loop (the shim's engine thread, each relay loop) looks for "
                "the next event without sleeping, adapted to how soon events come: an answer "
                "that comes within it is taken without a sleep and a wake-up (the latency of "
                "small requests), at the cost of that CPU time; between looks it yields the "
                "CPU to any other runnable thread, but the scheduler still shares the CPU "
                "between them. The shim sleeps by default: a program's small requests then "
                "cost it the least CPU (polling 1000 us cost the client about twice the CPU "
                "per small request for little or no gain in latency where measured); the "
                "relay's short poll lets smbd on its machine answer a small request within "
                "it and get the CPU back while it creates or writes a file. The shim does not "
                "poll while a tunnel has 256 KiB or more of RDMA channel I/O in flight (bulk "
                "data comes a transfer's time apart); 0: always sleep",
        .brief = "the most an event loop looks for the next event without sleeping (CPU for "
                 "latency); 0: always sleep" },
    [SD_SET_DIRECT_SEND] = {
        .env = "SMBDIRECT_DIRECT_SEND", .env_progs = SHIM, .kind = SD_KIND_CHOICE,
        .choices = off_on, .def = SAME("on"),
        .help = "on: the program's own write or send on a tunnel frames and posts its SMB2 "
                "requests itself, so a request leaves without waking the engine thread (and "
                "a large WRITE is copied once, not through the socketpair); it falls back to "
                "the socketpair whenever the engine is still busy with earlier bytes or "
                "holds the tunnel back (credits, memory); off: always the socketpair",
        .brief = "on: the program's own write or send posts its SMB2 requests when it can, without "
                 "waking the engine thread" },
    [SD_SET_SPLICE] = {
        .env = "SMBDIRECT_SPLICE", .env_progs = SHIM, .kind = SD_KIND_CHOICE,
        .choices = off_on, .def = SAME("on"),
        .help = "on: the data of a READ that came by the RDMA channel goes into the "
                "program's socketpair by reference (vmsplice and splice), not copied, so the "
                "program's own read is the only copy of it in the shim; its buffer is reused "
                "only once the program has read past it (where the kernel does not allow "
                "this, it is copied); off: always copied",
        .brief = "on: where the kernel allows, a channel READ's data reaches the program's "
                 "socketpair without a copy (splice)" },
};
