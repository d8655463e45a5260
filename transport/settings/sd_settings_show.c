/* SPDX-License-Identifier: BSD-3-Clause */
/* transport/settings/sd_settings_show.c — --check-config: a value in force as text
 * (sd_settings_format, as the configuration file takes it), and a program's settings in
 * force written as a configuration file, each with where it came from, and the problems
 * loading them met (see sd_settings.h). */
#include "sd_settings_int.h"

#include <string.h>

#include "sd_addr.h"

#define SOURCE_COLUMN 40 /* where "# source" starts after a short "key = value" */
#define VALUE_MAX 4096   /* the longest value: a full address map */

/* An address map entry as am_parse takes it: "10.0.0.5=192.168.100.5:5445",
 * "[2001:db8::5]=[fd00::5]:445". */
static void add_addrmap_entry(char *buf, size_t len, const struct am_entry *e)
{
    char from[SD_ADDR_STRLEN], to[SD_ADDR_STRLEN];
    int v6 = e->to.family == AF_INET6;

    am_ip_format(&e->from, from, sizeof(from));
    am_ip_format(&e->to, to, sizeof(to));
    if (e->port)
        sd_settings_add(buf, len, "%s=%s%s%s:%u", from, v6 ? "[" : "", to, v6 ? "]" : "", e->port);
    else
        sd_settings_add(buf, len, "%s=%s", from, to);
}

char *sd_settings_format(const struct sd_settings *s, enum sd_setting_id id, char *buf,
                         size_t len)
{
    const struct sd_setting *row = &sd_settings_table[id];
    const void *f = sd_settings_field(s, id);
    const struct pm_ports *ports = f;
    const struct pm_map *map = f;
    const struct am_map *am = f;
    const struct sd_hostport *hp = f;

    buf[0] = '\0';
    switch (row->kind) {
    case SD_KIND_NUMBER: sd_settings_add(buf, len, "%u", *(const uint32_t *)f); break;
    case SD_KIND_CHOICE: sd_settings_add(buf, len, "%s", row->choices[*(const int *)f]); break;
    case SD_KIND_LOG:
        sd_settings_add(buf, len, "%s", sd_log_level_name(*(const enum sd_log_level *)f));
        break;
    case SD_KIND_PORTS:
        for (int i = 0; i < ports->n; i++)
            sd_settings_add(buf, len, "%s%u", i ? "," : "", ports->port[i]);
        break;
    case SD_KIND_PORTMAP:
        for (int i = 0; i < map->n; i++)
            sd_settings_add(buf, len, "%s%u:%u", i ? "," : "", map->e[i].tcp, map->e[i].rdma);
        break;
    case SD_KIND_ADDRMAP:
        for (int i = 0; i < am->n; i++) {
            sd_settings_add(buf, len, "%s", i ? "," : "");
            add_addrmap_entry(buf, len, &am->e[i]);
        }
        break;
    case SD_KIND_HOSTPORT:
        if (hp->len)
            sd_addr_format((const struct sockaddr *)&hp->addr, buf, len);
        break;
    case SD_KIND_PREFIXES: sd_prefix_list_format(f, buf, len); break;
    case SD_KIND_PATH:
        sd_settings_add(buf, len, "%s", *(const char *)f ? (const char *)f : "none");
        break;
    }
    return buf;
}

int sd_settings_check_config(FILE *out, FILE *diag, const struct sd_settings *s,
                             const struct sd_settings_report *r)
{
    const char *name = sd_settings_prog_names[r->prog];

    for (unsigned i = 0; i < r->kept; i++)
        fprintf(diag, "%s%s\n", r->problem[i].is_error ? "" : "warning: ", r->problem[i].text);
    if (r->errors + r->warnings > r->kept)
        fprintf(diag, "(%u more problems not shown)\n", r->errors + r->warnings - r->kept);
    if (r->errors)
        return 1;
    fprintf(out, "# The %s's settings in force and where each comes from\n", name);
    fprintf(out, "# Configuration file: %s\n", *r->file ? r->file : "none");
    fprintf(out, "[%s]\n", name);
    for (int id = 0; id < SD_SET_COUNT; id++) {
        char key[64], value[VALUE_MAX], source[SD_REPORT_PATH + 64];
        int n;

        if (!(sd_settings_table[id].env_progs & SD_PROG_BIT(r->prog)))
            continue;
        sd_settings_key((enum sd_setting_id)id, key, sizeof(key));
        sd_settings_format(s, (enum sd_setting_id)id, value, sizeof(value));
        sd_settings_report_source(r, (enum sd_setting_id)id, source, sizeof(source));
        n = fprintf(out, "%s =%s%s", key, *value ? " " : "", value);
        fprintf(out, "%*s# %s\n", n < SOURCE_COLUMN ? SOURCE_COLUMN - n : 2, "", source);
    }
    return 0;
}
