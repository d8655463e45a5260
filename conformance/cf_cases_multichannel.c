/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_cases_multichannel.c — the Smb2Multichannel group: a session set up
 * over TCP (or over SMB Direct) and a second channel bound to it over SMB Direct, data
 * written on one read back on the other (MS-SMB2 3.2.4.1.7, 3.3.5.5.2). Binding a
 * channel needs a SESSION_SETUP with SMB2_SESSION_FLAG_BINDING signed with the session's
 * key (3.3.5.5.2: the server verifies it), and this client does not sign, so both cases
 * report SKIP with that reason rather than not appear. */
#include "cf_case.h"

static void not_signing(struct cf_ctx *ctx, struct cf_result *r)
{
    (void)ctx;
    cf_result(r, CF_SKIP, "binding a channel needs a signed SESSION_SETUP (MS-SMB2 3.3.5.5.2); "
              "this client does not sign");
}

static const struct cf_case cases[] = {
    { "BVT_Smb2MultiChannel_2Channels_DiffNicTypeDiffTransport", not_signing },
    { "Smb2Multichannel_2Channels_DiffTransport", not_signing },
};

const struct cf_group cf_group_smb2_multichannel = { "Smb2Multichannel", cases,
                                                     sizeof(cases) / sizeof(cases[0]) };
