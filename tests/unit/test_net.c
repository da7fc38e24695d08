/* test_net.c - the HTTP engine against tests/unit/net_server.py on
 * loopback: ranges, whole objects, HEAD, 404, retries that succeed after
 * 503s, 429 with Retry-After, cut and reset connections, stalls and budgets
 * (bounded in time), bodies larger or shorter than allowed, a server that
 * ignores Range, redirects (only to the same origin, or http to https), refused
 * connections, many threads at once, and
 * the calling thread's request deadline (base/deadline.h) over several
 * calls, in flight and in the queue. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/deadline.h"
#include "base/err.h"
#include "check.h"
#include "net_server.h"
#include "store/net.h"

static net_server srv;
static char base[64];

/* byte i of the server's object of size bytes */
static uint8_t obj_byte(uint64_t size, uint64_t i)
{
    return (uint8_t)((i * 7 + size) % 251);
}

/* 1 if buf holds bytes off..off+len of the object of size bytes */
static int same(const uint8_t *buf, uint64_t size, uint64_t off, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != obj_byte(size, off + i))
            return 0;
    return 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void url(char *buf, size_t cap, const char *path)
{
    snprintf(buf, cap, "%s%s", base, path);
}

/* one ranged GET */
static int get_range(zf_net *net, const char *path, uint64_t off, uint64_t len, uint8_t *buf,
                     zf_net_req *r, char *err)
{
    static __thread char u[256];
    url(u, sizeof u, path);
    *r = (zf_net_req){.url = u, .off = off, .len = len, .buf = buf, .cap = len, .err = err,
                      .errcap = 200};
    return zf_net_run(net, r, 1);
}

static void test_basics(zf_net *net)
{
    uint8_t buf[5000];
    char err[200], u[256];
    zf_net_req r;
    CHECK(get_range(net, "/data/10000", 1234, 4000, buf, &r, err) == ZF_OK, "range: %s", err);
    CHECK(r.status == 206 && r.n == 4000 && same(buf, 10000, 1234, 4000), "range: %ld %zu", r.status, r.n);
    CHECK(r.size_known && r.size == 10000, "size %" PRIu64, r.size);
    CHECK(!strcmp(r.etag, "\"s10000\""), "etag %s", r.etag);
    CHECK(r.last_modified_ns == INT64_C(1796119200) * 1000000000, "mtime %" PRId64, r.last_modified_ns);
    CHECK(r.attempts == 1 && !err[0], "attempts %u err %s", r.attempts, err);

    /* whole object, grown */
    zf_store_buf b = {0};
    url(u, sizeof u, "/data/300000");
    r = (zf_net_req){.url = u, .grow = &b, .max = 300000, .err = err, .errcap = sizeof err};
    CHECK(zf_net_run(net, &r, 1) == ZF_OK, "whole: %s", err);
    CHECK(r.n == 300000 && same(b.p, 300000, 0, 300000) && r.size == 300000, "whole: %zu", r.n);
    /* ... larger than max: refused at once, no retry */
    r = (zf_net_req){.url = u, .grow = &b, .max = 299999, .err = err, .errcap = sizeof err};
    CHECK(zf_net_run(net, &r, 1) == ZF_ECORRUPT && r.attempts == 1, "max: %s", err);
    CHECK(strstr(err, "300000 bytes") != NULL, "reason: %s", err);
    /* ... chunked (no Content-Length): stopped when it passes the bound */
    url(u, sizeof u, "/chunked/50000");
    r = (zf_net_req){.url = u, .grow = &b, .max = 20000, .err = err, .errcap = sizeof err};
    CHECK(zf_net_run(net, &r, 1) == ZF_ECORRUPT && r.n <= 20000, "chunked: %s", err);
    r = (zf_net_req){.url = u, .grow = &b, .max = 50000, .err = err, .errcap = sizeof err};
    CHECK(zf_net_run(net, &r, 1) == ZF_OK && r.n == 50000 && same(b.p, 50000, 0, 50000), "chunked: %s", err);
    /* ... into a fixed buffer */
    url(u, sizeof u, "/data/4000");
    r = (zf_net_req){.url = u, .buf = buf, .cap = sizeof buf, .err = err, .errcap = sizeof err};
    CHECK(zf_net_run(net, &r, 1) == ZF_OK && r.n == 4000 && same(buf, 4000, 0, 4000), "buf: %s", err);
    free(b.p);

    /* HEAD */
    url(u, sizeof u, "/data/777");
    r = (zf_net_req){.url = u, .head = 1, .err = err, .errcap = sizeof err};
    CHECK(zf_net_run(net, &r, 1) == ZF_OK && r.size_known && r.size == 777 && r.n == 0, "head: %s", err);
    CHECK(!strcmp(r.etag, "\"s777\"") && r.last_modified_ns > 0, "head etag %s", r.etag);
    url(u, sizeof u, "/nothing");
    r = (zf_net_req){.url = u, .head = 1, .err = err, .errcap = sizeof err};
    CHECK(zf_net_run(net, &r, 1) == ZF_ENOTFOUND && r.status == 404 && r.attempts == 1, "head 404: %s", err);
    CHECK(get_range(net, "/nothing", 0, 10, buf, &r, err) == ZF_ENOTFOUND, "404: %s", err);
    CHECK(!strcmp(err, "HTTP 404"), "404 reason: %s", err);
}

static void test_ranges(zf_net *net)
{
    uint8_t buf[5000];
    char err[200];
    zf_net_req r;
    /* beyond the end: 416 */
    CHECK(get_range(net, "/data/1000", 1000, 10, buf, &r, err) == ZF_ECORRUPT && r.attempts == 1,
          "416: %s", err);
    CHECK(strstr(err, "1000 bytes, shorter") != NULL, "416 reason: %s", err);
    /* overlapping the end: a short 206 */
    CHECK(get_range(net, "/data/1000", 900, 200, buf, &r, err) == ZF_ECORRUPT, "short: %s", err);
    CHECK(strstr(err, "shorter") != NULL, "short reason: %s", err);
    /* a 206 for another range */
    CHECK(get_range(net, "/wrongrange/1000", 10, 20, buf, &r, err) == ZF_ECORRUPT, "wrong: %s", err);
    CHECK(strstr(err, "not the range asked") != NULL, "wrong reason: %s", err);
    /* a server that ignores Range: the range is taken from the whole */
    CHECK(get_range(net, "/norange/100000", 5000, 3000, buf, &r, err) == ZF_OK, "norange: %s", err);
    CHECK(r.status == 200 && same(buf, 100000, 5000, 3000) && r.size == 100000, "norange bytes");
    CHECK(get_range(net, "/norange/100000", 99990, 10, buf, &r, err) == ZF_OK && same(buf, 100000, 99990, 10),
          "norange tail: %s", err);
    CHECK(get_range(net, "/norange/100", 95, 10, buf, &r, err) == ZF_ECORRUPT, "norange short: %s", err);
    /* a redirect is followed */
    CHECK(get_range(net, "/redirect/2000", 100, 50, buf, &r, err) == ZF_OK && same(buf, 2000, 100, 50),
          "redirect: %s", err);
    /* ... but not by a request with headers of its own (signed) */
    static const char *const hdrs[] = {"X-Test: 1", NULL};
    char u[256];
    url(u, sizeof u, "/redirect/2000");
    r = (zf_net_req){.url = u, .off = 100, .len = 50, .buf = buf, .cap = 50, .headers = hdrs,
                     .err = err, .errcap = 200};
    CHECK(zf_net_run(net, &r, 1) == ZF_EIO && r.status == 302 && !strcmp(err, "HTTP 302"),
          "signed redirect: %s", err);
}

/* redirects go only to the same scheme, host and port, or from http to
 * https on the same host (issue 24); each hop is checked */
static void test_redirect_rule(zf_net *net)
{
    uint8_t buf[100];
    char err[300], path[256];
    zf_net_req r;
    /* the same origin, spelled in full: followed */
    CHECK(get_range(net, "/goto/http/127.0.0.1/self/data/2000", 10, 50, buf, &r, err) == ZF_OK &&
              same(buf, 2000, 10, 50), "same origin: %s", err);
    /* another host name for the same server, another port: refused, once, naming where */
    CHECK(get_range(net, "/goto/http/localhost/self/data/2000", 10, 50, buf, &r, err) == ZF_EIO &&
              r.attempts == 1 && strstr(err, "redirect to http://localhost:") && strstr(err, "refused"),
          "another host: %s", err);
    snprintf(path, sizeof path, "/goto/http/127.0.0.1/%u/data/2000", srv.port == 65535 ? 1 : srv.port + 1);
    CHECK(get_range(net, path, 10, 50, buf, &r, err) == ZF_EIO && strstr(err, "refused") &&
              !strstr(err, "connect"), "another port: %s", err);
    /* the second hop of two is checked too */
    CHECK(get_range(net, "/goto/http/127.0.0.1/self/goto/http/localhost/self/data/2000", 10, 50, buf,
                    &r, err) == ZF_EIO && strstr(err, "redirect to http://localhost:"),
          "second hop: %s", err);
    /* user information: refused, and never shown */
    CHECK(get_range(net, "/goto/http/user:s3cret@127.0.0.1/self/data/2000", 10, 50, buf, &r, err) ==
              ZF_EIO && strstr(err, "with user information") && !strstr(err, "s3cret"),
          "user information: %s", err);
    /* http to https on the same host is followed (this server speaks no TLS:
     * the attempt fails at the handshake, not at the rule) */
    CHECK(get_range(net, "/goto/https/127.0.0.1/self/data/2000", 10, 50, buf, &r, err) == ZF_EIO &&
              !strstr(err, "redirect"), "http to https: %s", err);
}

static void test_retries(zf_net *net)
{
    uint8_t buf[5000];
    char err[200];
    zf_net_req r;
    CHECK(get_range(net, "/fail/a/3/503/5000", 0, 5000, buf, &r, err) == ZF_OK, "503x3: %s", err);
    CHECK(r.attempts == 4 && same(buf, 5000, 0, 5000), "503x3 attempts %u", r.attempts);
    CHECK(get_range(net, "/fail/b/2/500/100", 10, 10, buf, &r, err) == ZF_OK && r.attempts == 3,
          "500x2: %s", err);
    double t0 = now_s();
    CHECK(get_range(net, "/fail/c/1/429/100", 0, 100, buf, &r, err) == ZF_OK && r.attempts == 2,
          "429: %s", err);
    CHECK(now_s() - t0 >= 0.95, "Retry-After: 1 honoured (%.2f s)", now_s() - t0);
    /* a connection cut mid-body is retried */
    uint8_t *big = malloc(20000);
    CHECK(get_range(net, "/cut/e/2/20000", 0, 20000, big, &r, err) == ZF_OK, "cut: %s", err);
    CHECK(r.attempts == 3 && same(big, 20000, 0, 20000), "cut attempts %u", r.attempts);
    CHECK(get_range(net, "/reset/h/2/20000", 100, 19900, big, &r, err) == ZF_OK, "reset: %s", err);
    CHECK(r.attempts == 3 && same(big, 20000, 100, 19900), "reset attempts %u", r.attempts);
    free(big);
    /* 8 attempts in all, then the reason */
    t0 = now_s();
    CHECK(get_range(net, "/fail/f/100/503/100", 0, 100, buf, &r, err) == ZF_EIO, "503 forever");
    CHECK(!strcmp(err, "HTTP 503 after 8 attempts") && r.attempts == 8 && r.status == 503,
          "reason: %s (%u)", err, r.attempts);
    CHECK(now_s() - t0 < 20, "8 attempts took %.1f s", now_s() - t0);
    /* other statuses are not retried */
    CHECK(get_range(net, "/fail/g/100/403/100", 0, 100, buf, &r, err) == ZF_EIO && r.attempts == 1,
          "403: %s", err);
    CHECK(!strcmp(err, "HTTP 403"), "403 reason: %s", err);
}

/* a stalled server: every attempt times out, the budget bounds the whole */
static void test_budget(void)
{
    zf_net *net;
    char err[200], u[256];
    zf_net_opts o = {.connections = 2, .retries = 8, .timeout_ms = 1000, .budget_ms = 3500};
    CHECK(zf_net_open(&o, &net, err, sizeof err) == ZF_OK, "open: %s", err);
    uint8_t buf[100];
    zf_net_req r[3];
    url(u, sizeof u, "/stall/100");
    for (int i = 0; i < 3; i++) /* 3 requests, 2 connections: one waits for a slot */
        r[i] = (zf_net_req){.url = u, .off = 0, .len = 100, .buf = buf, .cap = 100, .err = err,
                            .errcap = sizeof err};
    double t0 = now_s();
    CHECK(zf_net_run(net, r, 3) == ZF_EIO, "stall");
    double dt = now_s() - t0;
    CHECK(dt >= 1.5 && dt < 4.5, "budget of 3.5 s: took %.2f s", dt);
    CHECK(strstr(err, "timed out after") != NULL, "reason: %s", err);
    /* the time is the bound; the count only has to stay within retries (an
     * attempt on a connection the stalled server dropped fails at once, so
     * a slow run, e.g. under ThreadSanitizer, may fit a fourth one in) */
    for (int i = 0; i < 3; i++)
        CHECK(r[i].rc == ZF_EIO && r[i].attempts >= 1 && r[i].attempts <= o.retries,
              "req %d: %u attempts", i, r[i].attempts);
    zf_net_close(net);

    /* a refused connection before any server answered: not retried (a mount
     * tells an absent server at once); once one answered, retried */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    bind(fd, (struct sockaddr *)&a, sizeof a);
    getsockname(fd, (struct sockaddr *)&a, &al);
    close(fd); /* nothing listens there now */
    snprintf(u, sizeof u, "http://127.0.0.1:%u/x", ntohs(a.sin_port));
    o = (zf_net_opts){.retries = 3};
    CHECK(zf_net_open(&o, &net, err, sizeof err) == ZF_OK, "open: %s", err);
    r[0] = (zf_net_req){.url = u, .head = 1, .err = err, .errcap = sizeof err};
    CHECK(zf_net_run(net, r, 1) == ZF_EIO && r[0].attempts == 1, "refused first: %s", err);
    CHECK(!strcmp(err, "could not connect after 1 attempt"), "refused first reason: %s", err);
    char live[256];
    uint8_t got[16];
    snprintf(live, sizeof live, "%s/data/10", base);
    r[1] = (zf_net_req){.url = live, .buf = got, .cap = sizeof got, .err = err, .errcap = sizeof err};
    CHECK(zf_net_run(net, &r[1], 1) == ZF_OK && r[1].n == 10, "a live server: %s", err);
    r[0] = (zf_net_req){.url = u, .head = 1, .err = err, .errcap = sizeof err};
    CHECK(zf_net_run(net, r, 1) == ZF_EIO && r[0].attempts == 3, "refused: %s", err);
    CHECK(!strcmp(err, "could not connect after 3 attempts"), "refused reason: %s", err);
    zf_net_close(net);
}

/* a stalled request of its own budget, on another thread (no deadline there) */
typedef struct staller {
    zf_net *net;
    const char *url;
    uint8_t buf[100];
    zf_net_req r;
} staller;

static void *stall_alone(void *arg)
{
    staller *s = arg;
    s->r = (zf_net_req){.url = s->url, .len = 100, .buf = s->buf, .cap = 100};
    zf_net_run(s->net, &s->r, 1);
    return NULL;
}

/* 1 once net has made more than `before` attempts, within 5 s */
static int wait_attempt(zf_net *net, uint64_t before)
{
    zf_net_stats st = {0};
    for (int i = 0; i < 500 && st.attempts <= before; i++) {
        zf_net_get_stats(net, &st);
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    return st.attempts > before;
}

/* the thread's request deadline bounds every call it makes, before the
 * engine's own budget (20 s here): an attempt in flight is cut at it, the
 * next call fails at once without an attempt, a request queued behind
 * another thread's (which has no deadline) fails at it, and the reasons say
 * that the request's budget was spent */
static void test_request_deadline(void)
{
    zf_net *net;
    char err[200], u[256];
    zf_net_opts o = {.connections = 1, .retries = 2, .timeout_ms = 1000, .budget_ms = 20000};
    CHECK(zf_net_open(&o, &net, err, sizeof err) == ZF_OK, "open: %s", err);
    uint8_t buf[100];
    url(u, sizeof u, "/stall/100");
    zf_net_req r = {.url = u, .len = 100, .buf = buf, .cap = 100, .err = err, .errcap = sizeof err};
    zf_deadline_set(zf_deadline_after(1500));
    double t0 = now_s();
    CHECK(zf_net_run(net, &r, 1) == ZF_EIO, "stall under a 1.5 s deadline");
    double first = now_s() - t0;
    CHECK(first >= 1.4 && first < 2.2, "cut at the deadline: %.2f s", first);
    CHECK(strstr(err, "(the request's time budget was spent)") && r.attempts >= 1,
          "reason: %s (%u attempts)", err, r.attempts);
    CHECK(zf_net_run(net, &r, 1) == ZF_EIO && r.attempts == 0, "a second call: no attempt");
    CHECK(!strcmp(err, "the request's time budget was spent before an attempt could start"),
          "second reason: %s", err);
    double both = now_s() - t0;
    CHECK(both < 2.4, "two calls within one budget: %.2f s", both);
    zf_deadline_clear();

    /* queued behind another thread's stalled request on the only connection */
    staller st = {.net = net, .url = u};
    zf_net_stats before;
    zf_net_get_stats(net, &before);
    pthread_t t;
    int started = pthread_create(&t, NULL, stall_alone, &st) == 0;
    CHECK(started && wait_attempt(net, before.attempts), "the other thread's request runs");
    char ok_url[256];
    url(ok_url, sizeof ok_url, "/data/100");
    r = (zf_net_req){.url = ok_url, .len = 100, .buf = buf, .cap = 100, .err = err,
                     .errcap = sizeof err};
    zf_deadline_set(zf_deadline_after(400));
    t0 = now_s();
    CHECK(zf_net_run(net, &r, 1) == ZF_EIO && r.attempts == 0, "queued: EIO (%s)", err);
    double queued = now_s() - t0;
    zf_deadline_clear();
    CHECK(queued >= 0.35 && queued < 1.0, "queued request failed at its deadline: %.2f s", queued);
    CHECK(strstr(err, "request's time budget was spent"), "queued reason: %s", err);
    if (started)
        pthread_join(t, NULL); /* its own budget: both attempts, of 1 s or so each */
    CHECK(st.r.rc == ZF_EIO && st.r.attempts == 2, "the other request kept its own budget: %u attempts",
          st.r.attempts);
    zf_net_close(net);
}

/* a request cancelled (base/deadline.h) from another thread: its attempt in
 * flight and the one queued behind it on the only connection end within the
 * poll period, far before the budget; the other thread's request without a
 * cancellation is untouched; the next request of the thread runs again */
typedef struct canceller {
    zf_net *net;
    uint64_t ticket;
} canceller;

static void *cancel_later(void *arg)
{
    canceller *c = arg;
    wait_attempt(c->net, 0); /* its first attempt is in flight */
    nanosleep(&(struct timespec){0, 300000000}, NULL);
    zf_deadline_cancel(c->ticket);
    return NULL;
}

static void test_cancel(void)
{
    zf_net *net;
    char err[200], err2[200], u[256];
    zf_net_opts o = {.connections = 1, .retries = 4, .timeout_ms = 5000, .budget_ms = 20000};
    CHECK(zf_net_open(&o, &net, err, sizeof err) == ZF_OK, "open: %s", err);
    uint8_t buf[200];
    url(u, sizeof u, "/stall/100");
    zf_net_req r[2] = {
        {.url = u, .len = 100, .buf = buf, .cap = 100, .err = err, .errcap = sizeof err},
        {.url = u, .len = 100, .buf = buf + 100, .cap = 100, .err = err2, .errcap = sizeof err2}};
    canceller c = {.net = net, .ticket = zf_deadline_begin(ZF_DEADLINE_NONE)};
    pthread_t t;
    int started = pthread_create(&t, NULL, cancel_later, &c) == 0;
    double t0 = now_s();
    CHECK(zf_net_run(net, r, 2) == ZF_EIO, "cancelled: EIO");
    double dt = now_s() - t0;
    if (started)
        pthread_join(t, NULL);
    CHECK(started && dt >= 0.25 && dt < 1.5, "ended at the cancel, not at the budget: %.2f s", dt);
    CHECK(r[0].attempts == 1 && strstr(err, "cancelled"), "in flight: cut (%s, %u attempts)", err,
          r[0].attempts);
    CHECK(r[1].attempts == 0 && strstr(err2, "cancelled") && strstr(err2, "before an attempt"),
          "queued: never started (%s)", err2);
    zf_deadline_end();
    char ok_url[256];
    url(ok_url, sizeof ok_url, "/data/100");
    r[0] = (zf_net_req){.url = ok_url, .len = 100, .buf = buf, .cap = 100, .err = err,
                        .errcap = sizeof err};
    zf_deadline_begin(ZF_DEADLINE_NONE);
    CHECK(zf_net_run(net, r, 1) == ZF_OK && same(buf, 100, 0, 100), "a new request runs: %s", err);
    zf_deadline_end();
    zf_net_close(net);
}

/* many threads at once through few connections */
typedef struct worker {
    zf_net *net;
    unsigned seed;
    int bad;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    enum { N = 16 };
    uint8_t *bufs = malloc(N * 3000);
    zf_net_req r[N];
    char u[N][256], err[N][200];
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < N; i++) {
            uint64_t size = 5000 + rand_r(&w->seed) % 50000;
            uint64_t len = 1 + rand_r(&w->seed) % 3000, off = rand_r(&w->seed) % (size - len);
            snprintf(u[i], sizeof u[i], "%s/data/%" PRIu64, base, size);
            r[i] = (zf_net_req){.url = u[i], .off = off, .len = len, .buf = bufs + i * 3000,
                                .cap = 3000, .err = err[i], .errcap = sizeof err[i]};
        }
        if (zf_net_run(w->net, r, N) != ZF_OK)
            w->bad++;
        for (int i = 0; i < N; i++) {
            uint64_t size = strtoull(strrchr(u[i], '/') + 1, NULL, 10);
            if (r[i].rc != ZF_OK || !same(r[i].buf, size, r[i].off, r[i].len))
                w->bad++;
        }
    }
    free(bufs);
    return NULL;
}

static void test_threads(void)
{
    zf_net *net;
    char err[200];
    zf_net_opts o = {.connections = 4};
    CHECK(zf_net_open(&o, &net, err, sizeof err) == ZF_OK, "open: %s", err);
    enum { T = 8 };
    pthread_t th[T];
    worker w[T];
    for (int i = 0; i < T; i++) {
        w[i] = (worker){.net = net, .seed = 1234u + (unsigned)i};
        pthread_create(&th[i], NULL, work, &w[i]);
    }
    int bad = 0;
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        bad += w[i].bad;
    }
    CHECK(bad == 0, "%d wrong results from %d threads", bad, T);
    zf_net_stats st;
    zf_net_get_stats(net, &st);
    CHECK(st.requests == T * 5 * 16 && st.attempts == st.requests && st.failures == 0,
          "stats: %" PRIu64 " requests %" PRIu64 " attempts", st.requests, st.attempts);
    zf_net_close(net);
}

int main(void)
{
    char err[200];
    if (zf_net_global_init(err, sizeof err) != ZF_OK) {
        fprintf(stderr, "test_net: %s\n", err);
        return 1;
    }
    if (net_server_start(&srv, "unit/net_server.py") != 0) {
        fprintf(stderr, "test_net: cannot start unit/net_server.py\n");
        return 1;
    }
    snprintf(base, sizeof base, "http://127.0.0.1:%u", srv.port);
    zf_net *net;
    zf_net_opts o = {.connections = 4, .timeout_ms = 5000};
    CHECK(zf_net_open(&o, &net, err, sizeof err) == ZF_OK, "open: %s", err);
    test_basics(net);
    test_ranges(net);
    test_redirect_rule(net);
    test_retries(net);
    zf_net_close(net);
    test_budget();
    test_request_deadline();
    test_cancel();
    test_threads();
    zf_net_opts bad = {.cafile = "/nonexistent/ca.pem"};
    CHECK(zf_net_open(&bad, &net, err, sizeof err) == ZF_EINVAL && strstr(err, "cafile"), "cafile: %s", err);
    net_server_stop(&srv);
    zf_net_global_cleanup();
    return check_summary("test_net");
}
