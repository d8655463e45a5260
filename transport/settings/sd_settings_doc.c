/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/settings/sd_settings_doc.c — the settings table rendered for people: the
 * tools' --help, the smbdirect wrapper's, README.md's table, the man pages'
 * ENVIRONMENT entries and smbdirect.conf(5)'s keys (scripts/settings-docs keeps the
 * committed docs in step). A value in force as text is sd_settings_show.c's. */
#include "sd_settings_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <string.h>

#include "sd_num.h"

#define KIB 1024u
#define MIB (1024u * 1024u)
#define WIDTH 79      /* --help lines end before this column */
#define HELP_INDENT 6 /* --help descriptions start at this column */
#define ENV_FLAG_COLUMN 40 /* --help: a flag after its variable's name */

static const char *const unit_nouns[] = {
    [SD_UNIT_NONE] = "", [SD_UNIT_BYTES] = "bytes",
    [SD_UNIT_US] = "microseconds", [SD_UNIT_MS] = "milliseconds",
    [SD_UNIT_S] = "seconds",
};
/* After a number range in README.md's table (bytes go by their short spelling). */
static const char *const unit_symbols[] = {
    [SD_UNIT_NONE] = "", [SD_UNIT_BYTES] = "", [SD_UNIT_US] = " µs", [SD_UNIT_MS] = " ms",
    [SD_UNIT_S] = " s",
};
static const char *const metavars[] = {
    [SD_UNIT_NONE] = "N", [SD_UNIT_BYTES] = "BYTES", [SD_UNIT_US] = "US", [SD_UNIT_MS] = "MS",
    [SD_UNIT_S] = "SECONDS",
};

/* How a document spells what the table's values need. */
struct style {
    const char *dash, *minus;       /* in ranges, and in "16 MiB - 1" */
    const char *open, *close, *last; /* around words; between the last two */
    const char *portmap;            /* the form of a port map */
    const char *addrmap;            /* the form of an address map */
    const char *prefixes;           /* the form of an address prefix list */
    int short_ranges;               /* a range by its short spellings: "128 KiB–16 MiB" */
};
#define PREFIXES "address prefixes (10.0.0.0/8, fd00::/8, 192.0.2.7), comma-separated"
static const struct style md = { "–", "−", "`", "`", ", ", "`tcpport:rdmaport,...`",
                                  "`addr=rdmaaddr[:port],...`", "`prefix[/len],...`", 1 };
static const struct style plain = { "-", "-", "", "", " or ", "tcpport:rdmaport,...",
                                    "addr=rdmaaddr[:port],...", PREFIXES, 0 };
static const struct style man = { "\\(en", "\\-", "\\fB", "\\fR", " or ",
                                  "\\fItcpport\\fR:\\fIrdmaport\\fR[,.\\|.\\|.]",
                                  "\\fIaddr\\fR=\\fIrdmaaddr\\fR[:\\fIport\\fR][,.\\|.\\|.]",
                                  PREFIXES, 0 };

void sd_settings_add(char *buf, size_t len, const char *fmt, ...)
{
    size_t n = strlen(buf);
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf + n, len - n, fmt, ap);
    va_end(ap);
}

/* Appends the shorter spelling of v when there is one ("8 MiB + 64 KiB",
 * "16 MiB - 1"); returns whether there was. */
static int add_size_short(char *buf, size_t len, uint64_t v, const struct style *st)
{
    unsigned long long mib = (unsigned long long)(v / MIB);
    unsigned long long kib = (unsigned long long)(v % MIB / KIB);

    if (v >= MIB && v % MIB == 0)
        sd_settings_add(buf, len, "%llu MiB", mib);
    else if (v > MIB && v % KIB == 0)
        sd_settings_add(buf, len, "%llu MiB + %llu KiB", mib, kib);
    else if (v >= KIB && v % KIB == 0)
        sd_settings_add(buf, len, "%llu KiB", kib);
    else if ((v + 1) % MIB == 0)
        sd_settings_add(buf, len, "%llu MiB %s 1", (unsigned long long)((v + 1) / MIB), st->minus);
    else
        return 0;
    return 1;
}

/* Appends v, with a shorter spelling after it when there is one:
 * "8454144 (8 MiB + 64 KiB)", "16777215 (16 MiB - 1)". */
static void add_size(char *buf, size_t len, uint64_t v, const struct style *st)
{
    char s[64] = "";

    sd_settings_add(buf, len, "%llu", (unsigned long long)v);
    if (add_size_short(s, sizeof(s), v, st))
        sd_settings_add(buf, len, " (%s)", s);
}

/* Appends a bound of row in a short range: bytes by their shorter spelling. */
static void add_bound_short(char *buf, size_t len, const struct sd_setting *row, uint64_t v,
                            const struct style *st)
{
    if (row->unit != SD_UNIT_BYTES || !add_size_short(buf, len, v, st))
        sd_settings_add(buf, len, "%llu", (unsigned long long)v);
}

/* Appends a default of row: a number (bytes with their shorter spelling), a word in
 * the style's quotes, or "none" for an empty list. */
static void add_default(char *buf, size_t len, const struct sd_setting *row, const char *text,
                        const struct style *st)
{
    uint64_t v;

    if (!*text)
        sd_settings_add(buf, len, "none");
    else if (row->kind == SD_KIND_NUMBER && row->unit == SD_UNIT_BYTES &&
             sd_num_parse_str(text, 0, UINT64_MAX, &v) == 0)
        add_size(buf, len, v, st);
    else if (row->kind == SD_KIND_CHOICE || row->kind == SD_KIND_LOG)
        sd_settings_add(buf, len, "%s%s%s", st->open, text, st->close);
    else
        sd_settings_add(buf, len, "%s", text);
}

/* Appends what row accepts: "bytes, 128–1048576 (1 MiB)" (short: "128–1 MiB",
 * "1–600000 ms"), "`auto`, `rdma`, ...". */
static void add_values(char *buf, size_t len, const struct sd_setting *row,
                       const struct style *st)
{
    char words[256];

    switch (row->kind) {
    case SD_KIND_NUMBER:
        if (st->short_ranges) {
            add_bound_short(buf, len, row, row->min, st);
            sd_settings_add(buf, len, "%s", st->dash);
            add_bound_short(buf, len, row, row->max, st);
            sd_settings_add(buf, len, "%s", unit_symbols[row->unit]);
            break;
        }
        if (row->unit != SD_UNIT_NONE)
            sd_settings_add(buf, len, "%s, ", unit_nouns[row->unit]);
        if (row->unit == SD_UNIT_BYTES) {
            add_size(buf, len, row->min, st);
            sd_settings_add(buf, len, "%s", st->dash);
            add_size(buf, len, row->max, st);
        } else {
            sd_settings_add(buf, len, "%llu%s%llu", (unsigned long long)row->min, st->dash,
                            (unsigned long long)row->max);
        }
        break;
    case SD_KIND_CHOICE:
    case SD_KIND_LOG:
        sd_settings_words(row, st->open, st->close, ", ", st->last, words, sizeof(words));
        sd_settings_add(buf, len, "%s", words);
        break;
    case SD_KIND_PORTS:
        sd_settings_add(buf, len, "TCP ports, comma-separated");
        break;
    case SD_KIND_PORTMAP:
        sd_settings_add(buf, len, "%s", st->portmap);
        break;
    case SD_KIND_HOSTPORT:
        sd_settings_add(buf, len, "HOST:PORT");
        break;
    case SD_KIND_PREFIXES:
        sd_settings_add(buf, len, "%s", st->prefixes);
        break;
    case SD_KIND_PATH:
        sd_settings_add(buf, len, "an absolute path, or none");
        break;
    case SD_KIND_ADDRMAP:
        sd_settings_add(buf, len, "%s", st->addrmap);
        break;
    }
}

/* "shim, relay" for a mask of programs. */
static void add_progs(char *buf, size_t len, unsigned progs)
{
    const char *sep = "";

    for (int p = 0; p < SD_PROG_COUNT; p++) {
        if (progs & SD_PROG_BIT(p)) {
            sd_settings_add(buf, len, "%s%s", sep, sd_settings_prog_names[p]);
            sep = ", ";
        }
    }
}

/* Appends the default of the first program in progs, then each other program's that
 * differs from it ("warn (relay: notice, probe: error)"); returns that first program. */
static int add_defaults(char *buf, size_t len, const struct sd_setting *row, unsigned progs,
                        const struct style *st)
{
    const char *sep = " (";
    int first = -1;

    for (int p = 0; p < SD_PROG_COUNT; p++) {
        if (!(progs & SD_PROG_BIT(p)))
            continue;
        if (first < 0) {
            first = p;
            add_default(buf, len, row, row->def[p], st);
        } else if (strcmp(row->def[p], row->def[first]) != 0) {
            sd_settings_add(buf, len, "%s%s: ", sep, sd_settings_prog_names[p]);
            add_default(buf, len, row, row->def[p], st);
            sep = ", ";
        }
    }
    if (*sep == ',')
        sd_settings_add(buf, len, ")");
    return first;
}

/* Appends help with its first letter capitalized. */
static void add_sentence(char *buf, size_t len, const char *help)
{
    sd_settings_add(buf, len, "%c%s", toupper((unsigned char)help[0]), help + 1);
}

/* ---- --help ---- */

/* Prints text after prefix on each line, wrapped at word boundaries before WIDTH. */
static void wrap_after(FILE *out, const char *prefix, const char *text)
{
    int col = 0, start = (int)strlen(prefix);

    while (*text) {
        int w = (int)strcspn(text, " ");

        if (col > start && col + 1 + w > WIDTH) {
            fputc('\n', out);
            col = 0;
        }
        if (col == 0)
            col = fprintf(out, "%s", prefix);
        else
            col += fprintf(out, " ");
        col += fprintf(out, "%.*s", w, text);
        text += w;
        text += strspn(text, " ");
    }
    fputc('\n', out);
}

/* Prints text from column HELP_INDENT, wrapped before WIDTH. */
static void wrap(FILE *out, const char *text)
{
    wrap_after(out, "      ", text);
}

/* "  --NAME METAVAR" or "  NAME=METAVAR", without the line's end. */
static void usage_name(FILE *out, const struct sd_setting *row, const char *name_fmt,
                       const char *name)
{
    char words[128];

    fprintf(out, name_fmt, name);
    if (row->kind == SD_KIND_NUMBER)
        fprintf(out, "%s", metavars[row->unit]);
    else if (row->kind == SD_KIND_PORTS)
        fprintf(out, "PORT[,PORT...]");
    else if (row->kind == SD_KIND_PORTMAP)
        fprintf(out, "TCPPORT:RDMAPORT[,...]");
    else if (row->kind == SD_KIND_HOSTPORT)
        fprintf(out, "HOST:PORT");
    else if (row->kind == SD_KIND_PREFIXES)
        fprintf(out, "PREFIX[,PREFIX...]");
    else if (row->kind == SD_KIND_PATH)
        fprintf(out, "PATH");
    else if (row->kind == SD_KIND_ADDRMAP)
        fprintf(out, "ADDR=RDMAADDR[:PORT][,...]");
    else
        fprintf(out, "%s", sd_settings_words(row, "", "", "|", "|", words, sizeof(words)));
}

/* The name line, then the help with bounds and default. */
static void usage_entry(FILE *out, const struct sd_setting *row, enum sd_program prog,
                        const char *name_fmt, const char *name)
{
    char text[1024] = "";

    usage_name(out, row, name_fmt, name);
    fputc('\n', out);
    add_sentence(text, sizeof(text), row->help);
    sd_settings_add(text, sizeof(text), ". ");
    if (row->kind == SD_KIND_NUMBER)
        sd_settings_add(text, sizeof(text), "%llu-%llu%s%s, default", (unsigned long long)row->min,
                        (unsigned long long)row->max, row->unit ? " " : "", unit_nouns[row->unit]);
    else
        sd_settings_add(text, sizeof(text), "Default");
    sd_settings_add(text, sizeof(text), " %s.", *row->def[prog] ? row->def[prog] : "none");
    wrap(out, text);
}

void sd_settings_usage_env(FILE *out, enum sd_program prog)
{
    for (int id = 0; id < SD_SET_COUNT; id++) {
        const struct sd_setting *row = &sd_settings_table[id];
        int n;

        if (!(row->env_progs & SD_PROG_BIT(prog)))
            continue;
        if (!(row->flag_progs & SD_PROG_BIT(prog))) {
            usage_entry(out, row, prog, "  %s=", row->env);
            continue;
        }
        n = fprintf(out, "  %s", row->env);
        fprintf(out, "%*sas --%s\n", n < ENV_FLAG_COLUMN ? ENV_FLAG_COLUMN - n : 1, "",
                row->flag);
    }
}

void sd_settings_usage(FILE *out, enum sd_program prog)
{
    fprintf(out, "SMB Direct settings:\n");
    for (int id = 0; id < SD_SET_COUNT; id++) {
        const struct sd_setting *row = &sd_settings_table[id];

        if (row->flag_progs & SD_PROG_BIT(prog))
            usage_entry(out, row, prog, "  --%s ", row->flag);
    }
    fprintf(out, "\nEnvironment (read after the configuration file and before the flags; "
                 "unset or\nempty keeps the file's value or the default):\n");
    sd_settings_usage_env(out, prog);
}

/* ---- README.md ---- */

/* One row per setting, each well under 200 characters: a range by its short spellings
 * and the gist of the help (the full text is smbdirect.conf(5)'s). */
void sd_settings_markdown(FILE *out)
{
    fprintf(out, "| variable | read by | flag | values | default | what it does |\n"
                 "| --- | --- | --- | --- | --- | --- |\n");
    for (int id = 0; id < SD_SET_COUNT; id++) {
        const struct sd_setting *row = &sd_settings_table[id];
        unsigned progs = row->env_progs | row->flag_progs;
        char line[1024] = "";

        sd_settings_add(line, sizeof(line), "| `%s` | ", row->env);
        add_progs(line, sizeof(line), row->env_progs);
        sd_settings_add(line, sizeof(line), " | ");
        if (row->flag) /* taken by each tool that reads the variable (a unit test checks) */
            sd_settings_add(line, sizeof(line), "`--%s`", row->flag);
        sd_settings_add(line, sizeof(line), " | ");
        add_values(line, sizeof(line), row, &md);
        sd_settings_add(line, sizeof(line), " | ");
        add_defaults(line, sizeof(line), row, progs, &md);
        sd_settings_add(line, sizeof(line), " | %s |", row->brief ? row->brief : row->help);
        fprintf(out, "%s\n", line);
    }
}

/* ---- the example configuration file ---- */

void sd_settings_conf(FILE *out)
{
    for (int id = 0; id < SD_SET_COUNT; id++) {
        const struct sd_setting *row = &sd_settings_table[id];
        unsigned progs = row->env_progs | row->flag_progs;
        char text[2048] = "", key[64];
        int first;

        sd_settings_key((enum sd_setting_id)id, key, sizeof(key));
        sd_settings_add(text, sizeof(text), "%s (", key);
        add_progs(text, sizeof(text), progs);
        sd_settings_add(text, sizeof(text), "; %s", row->env);
        if (row->flag)
            sd_settings_add(text, sizeof(text), ", --%s", row->flag);
        sd_settings_add(text, sizeof(text), "): ");
        add_sentence(text, sizeof(text), row->help);
        sd_settings_add(text, sizeof(text), ". ");
        add_values(text, sizeof(text), row, &plain);
        sd_settings_add(text, sizeof(text), "; default ");
        first = add_defaults(text, sizeof(text), row, progs, &plain);
        sd_settings_add(text, sizeof(text), ".");
        fprintf(out, "\n");
        wrap_after(out, "# ", text);
        fprintf(out, "#%s =%s%s\n", key, *row->def[first] ? " " : "", row->def[first]);
    }
}

/* ---- man pages ---- */

/* Prints text for roff: a backslash is roff's escape character. */
static void man_text(FILE *out, const char *text)
{
    for (; *text; text++) {
        if (*text == '\\')
            fputs("\\e", out);
        else
            fputc(*text, out);
    }
}

/* One .TP entry: head (a roff line), the help, then what the row accepts and the
 * defaults of progs. */
static void man_entry(FILE *out, const struct sd_setting *row, unsigned progs, const char *head)
{
    char values[512] = "", help[1024] = "";

    add_values(values, sizeof(values), row, &man);
    sd_settings_add(values, sizeof(values), "; default ");
    add_defaults(values, sizeof(values), row, progs, &man);
    add_sentence(help, sizeof(help), row->help);
    fprintf(out, ".TP\n%s\n", head);
    man_text(out, help);
    fprintf(out, ".\n%c%s.\n", toupper((unsigned char)values[0]), values + 1);
}

void sd_settings_man(FILE *out)
{
    for (int id = 0; id < SD_SET_COUNT; id++) {
        const struct sd_setting *row = &sd_settings_table[id];
        char head[96];

        if (!(row->env_progs & SD_PROG_BIT(SD_PROG_SHIM)))
            continue;
        snprintf(head, sizeof(head), ".B %s", row->env);
        man_entry(out, row, SD_PROG_BIT(SD_PROG_SHIM), head);
    }
}

/* Prints a flag's name for roff, never hyphenated: "\%\-\-max\-send\-size". */
static void man_flag(FILE *out, const char *flag)
{
    fputs("\\%\\-\\-", out);
    for (; *flag; flag++) {
        if (*flag == '-')
            fputs("\\-", out);
        else
            fputc(*flag, out);
    }
}

void sd_settings_man_keys(FILE *out)
{
    for (int id = 0; id < SD_SET_COUNT; id++) {
        const struct sd_setting *row = &sd_settings_table[id];
        char key[64], progs[64] = "", head[160];

        sd_settings_key((enum sd_setting_id)id, key, sizeof(key));
        add_progs(progs, sizeof(progs), row->env_progs);
        snprintf(head, sizeof(head), ".BR %s \" (%s)\"", key, progs);
        man_entry(out, row, row->env_progs, head);
        fprintf(out, "Variable \\fB\\%%%s\\fR", row->env);
        if (row->flag) {
            progs[0] = '\0';
            add_progs(progs, sizeof(progs), row->flag_progs);
            fputs(", flag \\fB", out);
            man_flag(out, row->flag);
            fprintf(out, "\\fR (%s)", progs);
        }
        fputs(".\n", out);
    }
}
