/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_fixture.h — what the SMB2 cases share: a session with one open test
 * file (connect, negotiate a dialect set, log in, tree connect, create a file unique to
 * the run, delete-on-close), buffers registered for the server's RDMA with Buffer
 * Descriptor V1 lists over them (MS-SMBD 2.2.3.1, 3.1.4.3), the pattern data every
 * byte is checked against, and the "a new connection is still served" check. */
#ifndef SMBDIRECT_CF_FIXTURE_H
#define SMBDIRECT_CF_FIXTURE_H

#include "cf_case.h"
#include "cf_smb2.h"

/* Dialect sets a case asks for. */
enum cf_dialects { CF_DIALECTS_ALL, CF_DIALECTS_0300, CF_DIALECTS_0302 };

struct cf_file {
    struct cf_smb2 c;
    uint8_t fid[CF_SMB2_FILEID_SIZE];
    char name[80];
    int open;
};

/* Opens a session and a test file (tag goes into its name). 0; or -1 with r set: SKIP
 * when the server cannot run the case (signing required, dialect not offered), else
 * FAIL. Close with cf_file_end either way. */
int cf_file_open(struct cf_ctx *ctx, struct cf_file *f, enum cf_dialects d, const char *tag,
                 struct cf_result *r);
/* Closes the file (when the connection still stands) and the connection. */
void cf_file_end(struct cf_file *f);

/* The case list's defaults (MS-SMBD 1.0 only, CreditsRequested 10, PreferredSendSize
 * and MaxReceiveSize 1024, MaxFragmentedSize 131072) on ctx's target: *t, and *c a copy
 * of ctx that uses it (for cf_file_open). */
void cf_list_target(const struct cf_ctx *ctx, struct cf_target *t, struct cf_ctx *c);
/* A raw SMB Direct session on t, negotiated: 0, or -1 with r FAIL. Close it with
 * cf_smbd_close either way. */
int cf_raw_open(const struct cf_target *t, struct cf_smbd *s, struct cf_result *r);
/* A new connection with t's Negotiate Request negotiates: 0, or -1 with r FAIL. */
int cf_still_negotiates(const struct cf_target *t, struct cf_result *r);

/* How long a connection the server must end (MS-SMBD 3.1.5.8 "terminate") may take,
 * and how soon a message with SMB_DIRECT_RESPONSE_REQUESTED must be answered. */
#define CF_END_MS 3000
#define CF_ANSWER_MS 5000

/* One raw Data Transfer message (MS-SMBD 2.2.3), well-formed or not: its header fields
 * and length. Its data starts with an SMB2 NEGOTIATE request (a backend that gets those
 * bytes waits for the rest), zeros after. */
struct cf_dt {
    uint16_t credits_requested, credits_granted, flags;
    uint32_t remaining, offset, length;
    size_t len;
};
#define CF_DT_MAX_SEND ((size_t)-1)   /* len: the negotiated send size */
#define CF_DT_PAST_END 0xFFFFFFFEu    /* length: one byte more than the message holds */
#define CF_DT_MFS_PLUS_1 0xFFFFFFFEu  /* remaining: the server's MaxFragmentedSize + 1 */
/* Sends d as one Send (no credit accounting). 0, or a negative errno. */
int cf_send_dt(struct cf_smbd *s, const struct cf_dt *d);

/* One variant of a malformed exchange: up to 3 messages in order on a new connection. */
struct cf_bad {
    const char *what;
    struct cf_dt d[3];
    size_t n;
};
/* Each variant on its own connection negotiated with the list's defaults: the server
 * must end it within CF_END_MS of the last message; then a new connection negotiates.
 * PASS (pass says what was sent) or FAIL. */
void cf_expect_end(struct cf_ctx *ctx, struct cf_result *r, const struct cf_bad *v, size_t nv,
                   const char *pass);

/* Sends a keepalive (cf_smbd_keepalive) and waits CF_ANSWER_MS for any message: 0 with
 * r PASS ("what: answered after N ms"); -1 with r FAIL. */
int cf_keepalive_answered(struct cf_smbd *s, const char *what, struct cf_result *r);

/* A buffer registered for the server, and descriptors over it. */
struct cf_buf {
    uint8_t *mem;
    size_t len;
    struct sd_mr mr;
    int reg;
};
/* len bytes, registered with access (SD_ACCESS_*); 0, or a negative errno. */
int cf_buf_new(struct cf_file *f, size_t len, int access, struct cf_buf *b);
/* Deregisters (when still registered) and frees. */
void cf_buf_free(struct cf_file *f, struct cf_buf *b);
/* n descriptors covering the whole buffer in n nearly equal pieces, in order. */
void cf_buf_descs(const struct cf_buf *b, struct smbd_buffer_desc *d, size_t n);

/* The test pattern: byte i of the file at offset off for seed. */
void cf_pattern(uint8_t *buf, size_t len, uint64_t off, uint32_t seed);
/* Index of the first byte of buf differing from the pattern, or -1. */
long cf_pattern_diff(const uint8_t *buf, size_t len, uint64_t off, uint32_t seed);

/* Writes len pattern bytes from offset 0 inline (setup of READ cases). */
int cf_file_fill(struct cf_file *f, size_t len, uint32_t seed, struct cf_result *r);

/* One inline WRITE of len pattern bytes at 0 (one request, however many fragments),
 * then READs them back, checked. *wresp (when not NULL): the WRITE response's cf_msg
 * fields (not its data). 0, or -1 with r FAIL. */
int cf_write_back(struct cf_file *f, uint32_t len, uint32_t seed, struct cf_msg *wresp,
                  struct cf_result *r);

/* A new connection to the server completes a normal channel READ (64 KiB, checked):
 * 0, or -1 with what failed in why. */
int cf_still_serving(struct cf_ctx *ctx, char *why, size_t whylen);

#endif
