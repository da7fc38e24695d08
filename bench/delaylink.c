/* bench/delaylink.c - an emulated network link for the remote rows of
 * scripts/bench, for kernels without sch_netem: a TCP forwarder on loopback
 * that delays every byte by DELAY ms in each direction and serialises each
 * direction at RATE Mbit/s (shared by all connections), like
 * `tc qdisc add dev lo root netem delay DELAY rate RATE` does per packet.
 *
 *   delaylink PORTFILE UPSTREAM_PORT DELAY_MS RATE_MBIT DEADLINE_S
 *
 * Listens on 127.0.0.1 (port chosen by the OS, written to PORTFILE); every
 * accepted connection gets its own connection to 127.0.0.1:UPSTREAM_PORT.
 * A new connection's first request reaches the server no earlier than
 * 3 x DELAY after the accept, as it would after a TCP handshake over the
 * emulated link (SYN, SYN-ACK, then the request).  At most WINDOW bytes wait
 * per direction of a connection (then the source is not read: TCP's flow
 * control).  Stops on SIGTERM/SIGINT or after DEADLINE_S seconds; prints
 * the connections and bytes it carried to stderr.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SEG_MAX (64u << 10)
#define WINDOW (4u << 20)

typedef struct seg {
    struct seg *next;
    uint64_t due;       /* CLOCK_MONOTONIC ns when it arrives at the far end */
    size_t len, off;    /* len 0: the source's FIN */
    unsigned char data[];
} seg;

struct conn;
typedef struct end {          /* one socket of a connection */
    struct conn *c;
    int fd, side;             /* side 0: client, 1: upstream */
    int registered;           /* in the epoll set (not while it has nothing to wait for) */
} end;

typedef struct dir {          /* bytes flowing from ends[i] to ends[1-i] */
    seg *head, *tail;
    size_t queued;
    int eof_read, done;
} dir;

typedef struct conn {
    end ends[2];
    dir dirs[2];              /* dirs[i]: read from ends[i], written to ends[1-i] */
    uint64_t not_before;      /* client -> server: handshake time */
    struct conn *next;
    int dead;
} conn;

static uint64_t g_delay, g_rate_bps;
static uint64_t g_link_free[2];  /* per direction: when the emulated wire is free */
static unsigned long long g_conns, g_bytes[2];
static volatile sig_atomic_t g_stop;
static int g_ep;
static conn *g_conns_list;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

/* The epoll interest of one end: readable while its direction has room,
 * writable while the other direction has a due segment it could not write. */
static void rearm(end *e)
{
    conn *c = e->c;
    dir *in = &c->dirs[e->side], *out = &c->dirs[1 - e->side];
    struct epoll_event ev = {0};
    if (!in->eof_read && in->queued < WINDOW)
        ev.events |= EPOLLIN;
    if (out->head && out->head->due <= now_ns())
        ev.events |= EPOLLOUT;
    ev.data.ptr = e;
    /* out of the set while idle: a hung-up socket would report EPOLLHUP forever */
    if (!ev.events) {
        if (e->registered)
            epoll_ctl(g_ep, EPOLL_CTL_DEL, e->fd, NULL);
        e->registered = 0;
        return;
    }
    epoll_ctl(g_ep, e->registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, e->fd, &ev);
    e->registered = 1;
}

static void kill_conn(conn *c)
{
    if (c->dead)
        return;
    c->dead = 1;
    for (int i = 0; i < 2; i++) {
        if (c->ends[i].registered)
            epoll_ctl(g_ep, EPOLL_CTL_DEL, c->ends[i].fd, NULL);
        close(c->ends[i].fd);
        for (seg *s = c->dirs[i].head, *n; s; s = n) {
            n = s->next;
            free(s);
        }
        c->dirs[i].head = c->dirs[i].tail = NULL;
    }
}

static void enqueue(conn *c, int side, seg *s, uint64_t now)
{
    dir *d = &c->dirs[side];
    uint64_t start = now > g_link_free[side] ? now : g_link_free[side];
    if (side == 0 && start < c->not_before)
        start = c->not_before;
    uint64_t wire = g_rate_bps ? (uint64_t)s->len * 8u * 1000000000u / g_rate_bps : 0;
    g_link_free[side] = start + wire;
    s->due = start + wire + g_delay;
    if (d->tail && s->due < d->tail->due)  /* keep the order of one stream */
        s->due = d->tail->due;
    s->next = NULL;
    if (d->tail)
        d->tail->next = s;
    else
        d->head = s;
    d->tail = s;
    d->queued += s->len;
}

/* Read what end e has (within the window) into its direction's queue. */
static void pull(end *e)
{
    conn *c = e->c;
    dir *d = &c->dirs[e->side];
    while (!d->eof_read && d->queued < WINDOW) {
        seg *s = malloc(sizeof *s + SEG_MAX);
        if (!s) {
            kill_conn(c);
            return;
        }
        ssize_t n = read(e->fd, s->data, SEG_MAX);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            free(s);
            return;
        }
        if (n < 0) {  /* reset: the other end sees a reset too */
            free(s);
            kill_conn(c);
            return;
        }
        s->len = (size_t)n;
        s->off = 0;
        if (n == 0)
            d->eof_read = 1;
        g_bytes[e->side] += (size_t)n;
        enqueue(c, e->side, s, now_ns());
    }
}

/* Write the due segments of direction `side` to the other end. */
static void push(conn *c, int side, uint64_t now)
{
    dir *d = &c->dirs[side];
    end *to = &c->ends[1 - side];
    while (d->head && d->head->due <= now) {
        seg *s = d->head;
        if (s->len == 0) {
            shutdown(to->fd, SHUT_WR);
            d->done = 1;
        } else {
            ssize_t n = write(to->fd, s->data + s->off, s->len - s->off);
            if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
            if (n < 0) {
                kill_conn(c);
                return;
            }
            s->off += (size_t)n;
            if (s->off < s->len)
                return;
            d->queued -= s->len;
        }
        d->head = s->next;
        if (!d->head)
            d->tail = NULL;
        free(s);
    }
}

static int listen_any(unsigned *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 512) ||
        getsockname(fd, (struct sockaddr *)&a, &len))
        return -1;
    *port = ntohs(a.sin_port);
    return fd;
}

static int connect_upstream(unsigned port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) {  /* loopback: immediate */
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void accept_all(int lfd, unsigned upstream)
{
    for (;;) {
        int cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0)
            return;
        int ufd = connect_upstream(upstream);
        conn *c = ufd < 0 ? NULL : calloc(1, sizeof *c);
        if (!c) {
            close(cfd);
            if (ufd >= 0)
                close(ufd);
            continue;
        }
        int one = 1;
        setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        fcntl(ufd, F_SETFL, O_NONBLOCK);
        c->not_before = now_ns() + 2 * g_delay;
        c->ends[0] = (end){c, cfd, 0, 1};
        c->ends[1] = (end){c, ufd, 1, 1};
        for (int i = 0; i < 2; i++) {
            struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &c->ends[i]};
            epoll_ctl(g_ep, EPOLL_CTL_ADD, c->ends[i].fd, &ev);
        }
        c->next = g_conns_list;
        g_conns_list = c;
        g_conns++;
    }
}

/* One pass over every connection: deliver what is due, rearm, free the
 * finished ones; returns the earliest future due time (0: none). */
static uint64_t sweep(void)
{
    uint64_t now = now_ns(), next = 0;
    for (conn **pp = &g_conns_list; *pp;) {
        conn *c = *pp;
        for (int i = 0; i < 2 && !c->dead; i++)
            push(c, i, now);
        if (!c->dead && c->dirs[0].done && c->dirs[1].done)
            kill_conn(c);
        if (c->dead) {
            *pp = c->next;
            free(c);
            continue;
        }
        for (int i = 0; i < 2; i++) {
            rearm(&c->ends[i]);
            seg *h = c->dirs[i].head;
            if (h && h->due > now && (!next || h->due < next))
                next = h->due;
        }
        pp = &c->next;
    }
    return next;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: delaylink PORTFILE UPSTREAM_PORT DELAY_MS RATE_MBIT DEADLINE_S\n");
        return 2;
    }
    unsigned upstream = (unsigned)strtoul(argv[2], NULL, 10), port;
    g_delay = strtoull(argv[3], NULL, 10) * 1000000u;
    g_rate_bps = strtoull(argv[4], NULL, 10) * 1000000u;
    uint64_t deadline = now_ns() + strtoull(argv[5], NULL, 10) * 1000000000u;
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);
    int lfd = listen_any(&port);
    g_ep = epoll_create1(EPOLL_CLOEXEC);
    if (lfd < 0 || g_ep < 0 || upstream == 0 || upstream > 65535) {
        perror("delaylink");
        return 1;
    }
    struct epoll_event lev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(g_ep, EPOLL_CTL_ADD, lfd, &lev);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
    FILE *pf = fopen(tmp, "w");
    if (!pf || fprintf(pf, "%u\n", port) < 0 || fclose(pf) || rename(tmp, argv[1])) {
        perror("delaylink: port file");
        return 1;
    }
    uint64_t next = 0;
    while (!g_stop && now_ns() < deadline) {
        struct epoll_event evs[64];
        uint64_t now = now_ns(), wait = 100000000u;  /* re-check the deadline at 10 Hz */
        if (next)
            wait = next > now ? (next - now < wait ? next - now : wait) : 0;
        struct timespec ts = {.tv_sec = (time_t)(wait / 1000000000u),
                              .tv_nsec = (long)(wait % 1000000000u)};
        int n = epoll_pwait2(g_ep, evs, 64, &ts, NULL);
        for (int i = 0; i < n; i++) {
            end *e = evs[i].data.ptr;
            if (!e)
                accept_all(lfd, upstream);
            else if (!e->c->dead && (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
                pull(e);
        }
        next = sweep();
    }
    while (g_conns_list) {
        conn *c = g_conns_list;
        g_conns_list = c->next;
        kill_conn(c);
        free(c);
    }
    fprintf(stderr, "delaylink: %llu connections, %llu bytes up, %llu bytes down\n", g_conns,
            g_bytes[0], g_bytes[1]);
    return 0;
}
