/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_case.c — the case runner: selection by glob, the result table (see
 * cf_case.h). */
#include "cf_case.h"

#include <fnmatch.h>
#include <stdarg.h>
#include <string.h>

static const struct cf_group *const groups[] = {
    &cf_group_smbd_negotiate,
    &cf_group_smbd_data_transfer,
    &cf_group_smbd_credit_mgmt,
    &cf_group_smb2_over_rdma,
    &cf_group_remote_invalidation,
    &cf_group_smb2_multichannel,
};
#define NGROUPS (sizeof(groups) / sizeof(groups[0]))

static const char *const verdict_names[] = { [CF_PASS] = "PASS", [CF_FAIL] = "FAIL",
                                             [CF_SKIP] = "SKIP" };

enum cf_verdict cf_result(struct cf_result *r, enum cf_verdict v, const char *fmt, ...)
{
    va_list ap;

    r->verdict = v;
    va_start(ap, fmt);
    vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
    va_end(ap);
    return v;
}

static int selected(const struct cf_group *g, const struct cf_case *c, const char *glob)
{
    char full[200];

    if (!glob)
        return 1;
    snprintf(full, sizeof(full), "%s/%s", g->name, c->name);
    return fnmatch(glob, c->name, 0) == 0 || fnmatch(glob, full, 0) == 0;
}

/* The name column's width: the longest selected name. */
static int name_width(const char *glob)
{
    size_t w = strlen("case");

    for (size_t gi = 0; gi < NGROUPS; gi++)
        for (size_t i = 0; i < groups[gi]->n; i++)
            if (selected(groups[gi], &groups[gi]->cases[i], glob) &&
                strlen(groups[gi]->cases[i].name) > w)
                w = strlen(groups[gi]->cases[i].name);
    return (int)w;
}

struct cf_totals cf_run(struct cf_ctx *ctx, const char *glob, FILE *out)
{
    struct cf_totals t = { 0 };
    int w = name_width(glob);

    for (size_t gi = 0; gi < NGROUPS; gi++) {
        const struct cf_group *g = groups[gi];

        for (size_t i = 0; i < g->n; i++) {
            struct cf_result r = { CF_FAIL, "the case set no result" };

            if (!selected(g, &g->cases[i], glob))
                continue;
            if (t.run++ == 0)
                fprintf(out, "%-*s %-6s %s\n", w, "case", "result", "detail");
            g->cases[i].run(ctx, &r);
            fprintf(out, "%-*s %-6s %s\n", w, g->cases[i].name, verdict_names[r.verdict],
                    r.detail);
            fflush(out);
            t.passed += r.verdict == CF_PASS;
            t.failed += r.verdict == CF_FAIL;
            t.skipped += r.verdict == CF_SKIP;
        }
    }
    if (t.run)
        fprintf(out, "%u cases: %u passed, %u failed, %u skipped\n", t.run, t.passed, t.failed,
                t.skipped);
    return t;
}

void cf_list(FILE *out)
{
    for (size_t gi = 0; gi < NGROUPS; gi++)
        for (size_t i = 0; i < groups[gi]->n; i++)
            fprintf(out, "%s/%s\n", groups[gi]->name, groups[gi]->cases[i].name);
}
