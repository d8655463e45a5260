/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/unit/th_sock.h — local stream sockets for the tests of what a bridge writes into
 * its stream: a socketpair with a small or large send buffer, and reading back what it
 * holds without blocking. */
#ifndef TH_SOCK_H
#define TH_SOCK_H

#include <stddef.h>
#include <stdint.h>

/* An AF_UNIX stream socketpair whose first end is non-blocking and takes about sndbuf
 * bytes at a time (the test fails if it cannot be made). */
void th_sock_writer_pair(int sv[2], int sndbuf);

/* Reads what fd holds now, up to cap bytes, without blocking; returns the bytes read. */
size_t th_sock_drain(int fd, uint8_t *to, size_t cap);

#endif
