/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/settings/sd_settings_file.c — the configuration file front end: one file
 * (SD_CONFIG_DEFAULT, SMBDIRECT_CONFIG or --check-config's) of "key = value" lines whose
 * keys are the settings' names (sd_settings_key), for every program or in a [shim],
 * [relay] or [probe] section for one. Every program checks the whole file and applies
 * the right lines that are for it; a wrong line is an error of the programs it
 * concerns and a warning for the others (sd_settings_report_add); the environment and
 * the flags come after it (sd_settings.h). */
#include "sd_settings.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_LEN 4096 /* a full address map (32 IPv6 entries with ports) fits */
#define UNKNOWN_SECTION (-1) /* after a bad section header: its lines are nobody's */
#define GLOBAL SD_PROG_COUNT  /* before any section header, or after [global] */

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
    struct sd_settings_report *r;
};

/* The current line's problem, for the programs in progs. */
static void problem(const struct file_ctx *f, unsigned progs, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void problem(const struct file_ctx *f, unsigned progs, const char *fmt, ...)
{
    char what[SD_REPORT_TEXT];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    sd_settings_report_add(f->r, progs, "%s:%u: %s", f->path, f->line, what);
}

/* The programs a line of section concerns: the section's, or for a line before any
 * header every program taking its key (id), or every program when it names no key. */
static unsigned concerned(int section, int id)
{
    if (section != GLOBAL)
        return SD_PROG_BIT(section);
    return id < 0 ? SD_PROG_ALL : sd_settings_table[id].env_progs;
}

/* "[name]": which program's section begins (GLOBAL: every program's again). A bad
 * header concerns every program: whose lines follow it is not known. */
static void section_line(const struct file_ctx *f, char *text, int *section)
{
    size_t n = strlen(text);

    *section = UNKNOWN_SECTION;
    if (n < 2 || text[n - 1] != ']') {
        problem(f, SD_PROG_ALL, "'%s' is no section header: use [shim], [relay], [probe] or "
                "[global]", text);
        return;
    }
    text[n - 1] = '\0';
    text = trim(text + 1);
    if (strcmp(text, "global") == 0) {
        *section = GLOBAL;
        return;
    }
    for (int p = 0; p < SD_PROG_COUNT; p++) {
        if (strcmp(text, sd_settings_prog_names[p]) == 0) {
            *section = p;
            return;
        }
    }
    problem(f, SD_PROG_ALL, "unknown section [%s]: use [shim], [relay], [probe] or [global]",
            text);
}

/* "key = value" in section: checked for every program it concerns, applied to s when
 * it is right for r's program and concerns it. */
static void setting_line(const struct file_ctx *f, char *text, int section, struct sd_settings *s)
{
    enum sd_program prog = f->r->prog;
    char *eq = strchr(text, '='), *key, *value, why[256], mine[256] = "";
    unsigned mask, bad = 0;
    int id;

    if (!eq) {
        problem(f, concerned(section, -1), "'%s' is no setting: use key = value", text);
        return;
    }
    *eq = '\0';
    key = trim(text);
    value = trim(eq + 1);
    if ((id = row_of(key)) < 0) {
        problem(f, concerned(section, -1), "unknown key '%s' (the keys are the SMBDIRECT_ "
                "variables' names in lower case, e.g. credits)", key);
        return;
    }
    mask = concerned(section, id);
    if (!(sd_settings_table[id].env_progs & mask)) {
        problem(f, mask, "'%s' is not a setting of the %s", key, sd_settings_prog_names[section]);
        return;
    }
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
                            (enum sd_setting_id)id, value, why, sizeof(why)) == 0)
            continue;
        if (!bad || p == (int)prog)
            snprintf(mine, sizeof(mine), "%s", why); /* r's program's words first */
        bad |= SD_PROG_BIT(p);
    }
    if (bad)
        problem(f, bad, "%s = '%s' is invalid: %s", key, value, mine);
    if ((mask & ~bad) & SD_PROG_BIT(prog))
        sd_settings_report_from(f->r, (enum sd_setting_id)id, SD_ORIGIN_FILE, f->line);
}

static void parse(FILE *in, struct file_ctx *f, struct sd_settings *s)
{
    char buf[LINE_MAX_LEN + 2];
    int section = GLOBAL;

    f->line = 0;
    while (fgets(buf, sizeof(buf), in)) {
        size_t n = strlen(buf);
        char *text, *hash;

        f->line++;
        if (n == sizeof(buf) - 1 && buf[n - 1] != '\n' && !feof(in)) {
            if (section != UNKNOWN_SECTION)
                problem(f, concerned(section, -1), "line longer than %d bytes", LINE_MAX_LEN);
            while (fgets(buf, sizeof(buf), in) && !strchr(buf, '\n'))
                ; /* the rest of that line */
            continue;
        }
        if ((hash = strchr(buf, '#')) != NULL)
            *hash = '\0'; /* no value holds a '#' */
        text = trim(buf);
        if (*text == '\0' || *text == ';')
            continue;
        if (*text == '[')
            section_line(f, text, &section);
        else if (section != UNKNOWN_SECTION)
            setting_line(f, text, section, s);
    }
    if (ferror(in))
        sd_settings_report_add(f->r, SD_PROG_ALL, "%s: cannot read it: %s", f->path,
                               strerror(errno));
}

void sd_settings_from_file(struct sd_settings *s, const char *file, struct sd_settings_report *r)
{
    const char *env = getenv("SMBDIRECT_CONFIG");
    struct file_ctx f = { .r = r };
    FILE *in;

    if (!file && env && *env == '\0')
        return; /* SMBDIRECT_CONFIG= : no file */
    f.path = file ? file : env ? env : SD_CONFIG_DEFAULT;
    if (!(in = fopen(f.path, "re"))) {
        if (!file && !env && errno == ENOENT)
            return; /* no file installed: the defaults stand */
        /* The operator's settings cannot be applied: no program knows whose they are. */
        sd_settings_report_add(r, SD_PROG_ALL, "%s%s: cannot read it: %s",
                               !file && env ? "SMBDIRECT_CONFIG=" : "", f.path,
                               strerror(errno));
        return;
    }
    snprintf(r->file, sizeof(r->file), "%s", f.path);
    parse(in, &f, s);
    fclose(in);
}
