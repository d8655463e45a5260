/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/settings/sd_settings_file.c — the configuration file front end: one file
 * (SD_CONFIG_DEFAULT, or SMBDIRECT_CONFIG) of "key = value" lines whose keys are the
 * settings' names (sd_settings_key), for every program or in a [shim], [relay] or
 * [probe] section for one. Every program checks the whole file and applies the lines
 * that are for it; the environment and the flags come after it (sd_settings.h). */
#include "sd_settings.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_LEN 4096 /* a full address map (32 IPv6 entries with ports) fits */

static const char *const section_names[SD_PROG_COUNT] = {
    [SD_PROG_SHIM] = "shim", [SD_PROG_RELAY] = "relay", [SD_PROG_PROBE] = "probe",
};

const char *sd_settings_key(enum sd_setting_id id, char *buf, size_t len)
{
    const char *env = sd_settings_table[id].env + strlen("SMBDIRECT_");
    size_t i;

    for (i = 0; env[i] && i + 1 < len; i++)
        buf[i] = (char)tolower((unsigned char)env[i]);
    buf[i] = '\0';
    return buf;
}

static int row_of(const char *key)
{
    char name[64];

    for (int id = 0; id < SD_SET_COUNT; id++)
        if (strcmp(sd_settings_key((enum sd_setting_id)id, name, sizeof(name)), key) == 0)
            return id;
    return -1;
}

static unsigned takers(int id)
{
    return sd_settings_table[id].env_progs | sd_settings_table[id].flag_progs;
}

static char *trim(char *s)
{
    char *e;

    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

struct file_ctx {
    const char *path;
    unsigned line;
    char *err;
    size_t errlen;
};

static int fail(const struct file_ctx *f, const char *fmt, ...)
{
    char what[400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    snprintf(f->err, f->errlen, "%s:%u: %s", f->path, f->line, what);
    return -1;
}

/* "[name]": which program's section begins (SD_PROG_COUNT: every program's again). */
static int section_line(const struct file_ctx *f, char *text, int *section)
{
    size_t n = strlen(text);

    if (n < 2 || text[n - 1] != ']')
        return fail(f, "'%s' is no section header: use [shim], [relay], [probe] or [global]", text);
    text[n - 1] = '\0';
    text = trim(text + 1);
    if (strcmp(text, "global") == 0) {
        *section = SD_PROG_COUNT;
        return 0;
    }
    for (int p = 0; p < SD_PROG_COUNT; p++) {
        if (strcmp(text, section_names[p]) == 0) {
            *section = p;
            return 0;
        }
    }
    return fail(f, "unknown section [%s]: use [shim], [relay], [probe] or [global]", text);
}

/* "key = value" in section: checked for every program it concerns, applied to s when
 * prog is one of them. */
static int setting_line(const struct file_ctx *f, char *text, int section, struct sd_settings *s,
                        enum sd_program prog)
{
    char *eq = strchr(text, '='), *key, *value, why[256];
    unsigned mask;
    int id;

    if (!eq)
        return fail(f, "'%s' is no setting: use key = value", text);
    *eq = '\0';
    key = trim(text);
    value = trim(eq + 1);
    if ((id = row_of(key)) < 0)
        return fail(f, "unknown key '%s' (the keys are the SMBDIRECT_ variables' names in "
                       "lower case, e.g. credits)", key);
    mask = section == SD_PROG_COUNT ? takers(id) : SD_PROG_BIT(section);
    if (section != SD_PROG_COUNT && !(takers(id) & mask))
        return fail(f, "'%s' is not a setting of the %s", key, section_names[section]);
    for (int p = 0; p < SD_PROG_COUNT; p++) {
        struct sd_settings scratch;

        if (!(mask & SD_PROG_BIT(p)))
            continue;
        /* Another program's HOST:PORT is that program's to check: resolving a name
         * here would put a DNS lookup into the shim's first connect. */
        if (p != (int)prog && sd_settings_table[id].kind == SD_KIND_HOSTPORT)
            continue;
        sd_settings_defaults(&scratch, (enum sd_program)p);
        if (sd_settings_set(p == (int)prog ? s : &scratch, (enum sd_program)p,
                            (enum sd_setting_id)id, value, why, sizeof(why)) < 0)
            return fail(f, "%s = '%s' is invalid: %s", key, value, why);
    }
    return 0;
}

static int parse(FILE *in, const struct file_ctx *start, struct sd_settings *s,
                 enum sd_program prog)
{
    struct file_ctx f = *start;
    char buf[LINE_MAX_LEN + 2];
    int section = SD_PROG_COUNT;

    f.line = 0;
    while (fgets(buf, sizeof(buf), in)) {
        size_t n = strlen(buf);
        char *text, *hash;

        f.line++;
        if (n == sizeof(buf) - 1 && buf[n - 1] != '\n' && !feof(in))
            return fail(&f, "line longer than %d bytes", LINE_MAX_LEN);
        if ((hash = strchr(buf, '#')) != NULL)
            *hash = '\0'; /* no value holds a '#' */
        text = trim(buf);
        if (*text == '\0' || *text == ';')
            continue;
        if (*text == '[' ? section_line(&f, text, &section) < 0
                         : setting_line(&f, text, section, s, prog) < 0)
            return -1;
    }
    if (ferror(in))
        return fail(&f, "read error: %s", strerror(errno));
    return 0;
}

int sd_settings_from_file(struct sd_settings *s, enum sd_program prog, char *err, size_t errlen)
{
    const char *path = getenv("SMBDIRECT_CONFIG");
    struct file_ctx f = { .err = err, .errlen = errlen };
    int chosen = path != NULL, rc;
    FILE *in;

    if (chosen && *path == '\0')
        return 0; /* empty: no file */
    f.path = chosen ? path : SD_CONFIG_DEFAULT;
    if (!(in = fopen(f.path, "re"))) {
        if (!chosen && errno == ENOENT)
            return 0; /* no file installed: the defaults stand */
        snprintf(err, errlen, "%s%s: cannot read it: %s", chosen ? "SMBDIRECT_CONFIG=" : "",
                 f.path, strerror(errno));
        return -1;
    }
    rc = parse(in, &f, s, prog);
    fclose(in);
    return rc;
}
