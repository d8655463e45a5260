/* SPDX-License-Identifier: BSD-3-Clause */
/* conformance/cf_tcp.h — SMB2 over TCP for the conformance client (MS-SMB2 2.1, the
 * Direct TCP transport: each message after a 4-byte header, a zero byte and its length
 * in 24 bits big-endian): connect with a timeout, send one message, receive one whole
 * message with a timeout. The Smb2Multichannel cases set up a session over it and bind
 * a second channel over SMB Direct. */
#ifndef SMBDIRECT_CF_TCP_H
#define SMBDIRECT_CF_TCP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "cf_smbd.h" /* struct cf_msg */

#define CF_TCP_MAX_MSG 0xFFFFFFu /* the header's 24-bit length */

/* A connected socket, or a negative errno (-ETIMEDOUT after timeout_ms). */
int cf_tcp_connect(const struct sockaddr *addr, socklen_t len, int timeout_ms);
/* Sends the header and len bytes: 0, or a negative errno (-ENOTCONN: the peer closed;
 * -ETIMEDOUT: not all sent within timeout_ms). */
int cf_tcp_send(int fd, const void *msg, size_t len, int timeout_ms);
/* The next whole message, allocated (the caller frees it): 0 with *msg; -ETIMEDOUT when
 * it has not all come within timeout_ms; -ENOTCONN when the peer closed; -EPROTO for a
 * header whose first byte is not zero. */
int cf_tcp_recv(int fd, int timeout_ms, struct cf_msg **msg);

#endif
