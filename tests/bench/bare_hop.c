/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/bench/bare_hop.c — the bench's floor for one user-space hop: a TCP forwarder
 * that does nothing but move bytes, and never sleeps. Each accepted connection gets a
 * process (fork) that connects to the backend and then, in turn on both sockets,
 * receives what has come (MSG_DONTWAIT) and sends it on, yielding the CPU between turns
 * that found nothing: no epoll, no wakeup, no parsing, one CPU per connection while it
 * lasts. Whatever a real forwarder adds to a round trip beyond this one's is its own
 * cost; what this one adds is what any user-space hop costs on the machine.
 * Usage: bare_hop LISTEN_ADDR LISTEN_PORT BACKEND_ADDR BACKEND_PORT (IPv4). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define HOP_BUF (256u << 10)

/* One direction: bytes received from `from` not yet sent to `to`. */
struct hop_dir {
    int from, to;
    size_t off, len;
    unsigned char buf[HOP_BUF];
};

static int parse_addr(const char *ip, const char *port, struct sockaddr_in *a)
{
    char *end;
    long p = strtol(port, &end, 10);

    memset(a, 0, sizeof(*a));
    a->sin_family = AF_INET;
    a->sin_port = htons((unsigned short)p);
    return *end || p <= 0 || p > 65535 || inet_pton(AF_INET, ip, &a->sin_addr) != 1 ? -1 : 0;
}

/* Sends what is held, else receives what came: 1 when bytes moved, 0 when none could,
 * -1 when the connection is over (EOF or an error on either socket). */
static int hop_turn(struct hop_dir *d)
{
    ssize_t n;

    if (d->len == 0) {
        n = recv(d->from, d->buf, sizeof(d->buf), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            return -1;
        if (n < 0)
            return 0;
        d->off = 0;
        d->len = (size_t)n;
    }
    n = send(d->to, d->buf + d->off, d->len, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
    d->off += (size_t)n;
    d->len -= (size_t)n;
    return 1;
}

static void serve(int client, const struct sockaddr_in *backend)
{
    static struct hop_dir up, down;
    int server = socket(AF_INET, SOCK_STREAM, 0), one = 1;

    if (server < 0 || connect(server, (const struct sockaddr *)backend, sizeof(*backend)) < 0) {
        perror("bare_hop: backend");
        _exit(1);
    }
    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    up = (struct hop_dir){ .from = client, .to = server };
    down = (struct hop_dir){ .from = server, .to = client };
    for (;;) {
        int a = hop_turn(&up), b = hop_turn(&down);

        if (a < 0 || b < 0)
            _exit(0);
        if (a == 0 && b == 0)
            sched_yield();
    }
}

int main(int argc, char **argv)
{
    struct sockaddr_in listen_at, backend;
    int ls, one = 1;

    if (argc != 5 || parse_addr(argv[1], argv[2], &listen_at) < 0 ||
        parse_addr(argv[3], argv[4], &backend) < 0) {
        fprintf(stderr, "usage: bare_hop LISTEN_ADDR LISTEN_PORT BACKEND_ADDR BACKEND_PORT\n");
        return 2;
    }
    signal(SIGCHLD, SIG_IGN); /* connections' processes are reaped as they end */
    ls = socket(AF_INET, SOCK_STREAM, 0);
    if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(ls, (const struct sockaddr *)&listen_at, sizeof(listen_at)) < 0 ||
        listen(ls, 64) < 0) {
        perror("bare_hop: listen");
        return 1;
    }
    for (;;) {
        int c = accept(ls, NULL, NULL);

        if (c < 0)
            continue;
        if (fork() == 0) {
            close(ls);
            serve(c, &backend);
        }
        close(c);
    }
}
