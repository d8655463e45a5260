/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_case.h — the conformance case table and runner: each case of
 * /work/shared/conformance's MS-SMBD server list is one function that drives the server
 * under test and returns PASS, FAIL or SKIP with a one-line detail; the runner picks
 * the cases whose name matches a glob, runs them in order and prints one table row
 * each. A new group is one more table (cf_groups in cf_case.c). */
#ifndef SMBDIRECT_CF_CASE_H
#define SMBDIRECT_CF_CASE_H

#include <stdio.h>

#include "cf_smbd.h"

/* What every case is given. */
struct cf_ctx {
    const struct cf_target *t;
    const char *user;       /* DOMAIN\USER or USER; NULL: anonymous */
    const char *password;
    const char *share;
    char run_id[32];        /* makes the cases' file names unique per run */
    int keepalive_wait_ms;  /* how long the idle cases wait for the server's keepalive */
};

/* The default of keepalive_wait_ms: a server keepalive interval (MS-SMBD 3.1.2.2)
 * longer than this makes the idle cases SKIP (the relay's default is 120 s). */
#define CF_KEEPALIVE_WAIT_MS 5000

enum cf_verdict { CF_PASS, CF_FAIL, CF_SKIP };

struct cf_result {
    enum cf_verdict verdict;
    char detail[256];
};

/* Sets r (a case's last word wins); returns the verdict. */
enum cf_verdict cf_result(struct cf_result *r, enum cf_verdict v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

struct cf_case {
    const char *name;
    void (*run)(struct cf_ctx *ctx, struct cf_result *r);
};

struct cf_group {
    const char *name;
    const struct cf_case *cases;
    size_t n;
};

/* The groups, in the order they run. */
extern const struct cf_group cf_group_smbd_negotiate;
extern const struct cf_group cf_group_smbd_data_transfer;
extern const struct cf_group cf_group_smbd_credit_mgmt;
extern const struct cf_group cf_group_smb2_over_rdma;
extern const struct cf_group cf_group_remote_invalidation;
extern const struct cf_group cf_group_smb2_multichannel;

struct cf_totals {
    unsigned run, passed, failed, skipped;
};

/* Runs every case whose name (or GROUP/NAME) matches glob (NULL: all), printing the
 * table to out. Returns the totals; none matched is run == 0. */
struct cf_totals cf_run(struct cf_ctx *ctx, const char *glob, FILE *out);

/* Lists the cases (GROUP/NAME, one a line). */
void cf_list(FILE *out);

#endif
