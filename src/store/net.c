/* net.c - the HTTP engine: a libcurl multi handle on its own thread, a queue
 * of requests from the callers of zf_net_run, retries with backoff within
 * each request's budget (the bounds are stated in net.h). */
#include "store/net.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/deadline.h"
#include "base/err.h"
#include "store/net_impl.h"

#define BACKOFF_BASE_MS 100
#define BACKOFF_CAP_MS 5000
#define ATTEMPT_CAP_TIMEOUTS 3   /* an attempt lasts at most this many T */
#define BUDGET_TIMEOUTS 6        /* default B in T */

/* One transfer slot: a reused easy handle and the request it serves. */
typedef struct slot {
    CURL *easy;
    zf_net_xfer *x;             /* NULL: free */
    struct curl_slist *hdrs;    /* the current request's extra headers */
    char errbuf[CURL_ERROR_SIZE];
} slot;

struct zf_net {
    zf_net_opts o;              /* defaults filled in; cafile owned */
    CURLM *multi;
    pthread_t thr;
    int thread_alive;           /* thr runs (started by the first zf_net_run; guarded by mu) */
    pthread_mutex_t curl_mu;    /* held by the engine thread except while it sleeps in poll */
    pthread_mutex_t mu;         /* guards queue, stop, stats, thread_alive */
    zf_net *reg_next;           /* in the registry of engines (fork handling) */
    zf_net_xfer *qhead, *qtail; /* submitted, not started: FIFO (deadlines in any order) */
    int stop;
    zf_net_stats stats;
    /* the engine thread's own */
    zf_net_xfer *waiting;       /* between attempts, until their due time */
    slot *slots;
    unsigned active;
    uint64_t rng;
};

/* monotonic milliseconds (the clock of base/deadline.h) */
static int64_t now_ms(void)
{
    return (int64_t)zf_deadline_now_ms();
}

/* xorshift64*: the jitter of backoffs (engine thread only) */
static uint64_t next_rand(zf_net *net)
{
    net->rng ^= net->rng >> 12;
    net->rng ^= net->rng << 25;
    net->rng ^= net->rng >> 27;
    return net->rng * 2685821657736338717ull;
}

/* Every open engine, so that a fork (zarrfs daemonizing after it has read
 * the store's metadata) leaves the child usable: the handlers below hold
 * each engine's locks across fork(), so the child's copy of the multi handle
 * is not in the middle of a change, and the child, which has no engine
 * thread, starts one on its next zf_net_run. */
static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static zf_net *registry;

static void fork_prepare(void)
{
    pthread_mutex_lock(&registry_mu);
    for (zf_net *n = registry; n; n = n->reg_next) {
        pthread_mutex_lock(&n->curl_mu);
        pthread_mutex_lock(&n->mu);
    }
}

static void fork_parent(void)
{
    for (zf_net *n = registry; n; n = n->reg_next) {
        pthread_mutex_unlock(&n->mu);
        pthread_mutex_unlock(&n->curl_mu);
    }
    pthread_mutex_unlock(&registry_mu);
}

static void fork_child(void)
{
    for (zf_net *n = registry; n; n = n->reg_next) {
        n->thread_alive = 0; /* threads do not cross fork() */
        pthread_mutex_unlock(&n->mu);
        pthread_mutex_unlock(&n->curl_mu);
    }
    pthread_mutex_unlock(&registry_mu);
}

int zf_net_global_init(char *err, size_t errcap)
{
    CURLcode c = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (c == CURLE_OK && pthread_atfork(fork_prepare, fork_parent, fork_child) != 0) {
        curl_global_cleanup();
        c = CURLE_FAILED_INIT;
    }
    if (c != CURLE_OK) {
        if (err && errcap)
            snprintf(err, errcap, "libcurl: %s", curl_easy_strerror(c));
        return ZF_EIO;
    }
    return ZF_OK;
}

void zf_net_global_cleanup(void)
{
    curl_global_cleanup();
}

/* ---- finishing requests ------------------------------------------------- */

/* hand a finished request back to its caller (rc and err already set) */
static void finish(zf_net *net, zf_net_xfer *x)
{
    zf_net_batch *b = x->batch;
    int failed = x->req->rc != ZF_OK;
    uint64_t bytes = x->req->n;
    pthread_mutex_lock(&net->mu);
    net->stats.requests++;
    net->stats.failures += failed;
    net->stats.bytes += bytes;
    if (--b->left == 0)
        pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&net->mu); /* x may be gone from here on */
}

/* fail a request whose attempts or budget are spent, after a transient why;
 * budget: the time ran out (its own budget, or the calling thread's request
 * deadline when that came first: base/deadline.h) */
static void give_up(zf_net *net, zf_net_xfer *x, const char *why, int budget)
{
    zf_net_req *r = x->req;
    r->rc = ZF_EIO;
    r->status = x->status;
    const char *whose = x->by_request ? "the request's time budget was spent" : "time budget spent";
    char spent[48] = "";
    if (budget)
        snprintf(spent, sizeof spent, " (%s)", whose);
    if (r->err && r->errcap) {
        if (!r->attempts && x->by_request)
            snprintf(r->err, r->errcap, "%s before an attempt could start", whose);
        else if (!r->attempts)
            snprintf(r->err, r->errcap, "no connection free within the %u ms budget",
                     net->o.budget_ms);
        else
            snprintf(r->err, r->errcap, "%s after %u attempt%s%s", why, r->attempts,
                     r->attempts == 1 ? "" : "s", spent);
    }
    finish(net, x);
}

/* ---- attempts ------------------------------------------------------------ */

/* an easy handle with the options every attempt shares */
static CURL *new_easy(zf_net *net, slot *s)
{
    CURL *e = curl_easy_init();
    if (!e)
        return NULL;
    long low_speed_s = (long)((net->o.timeout_ms + 999) / 1000);
    int bad = 0;
    bad |= curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_MAXREDIRS, 5L) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L) != CURLE_OK;
    if (net->o.cafile)
        bad |= curl_easy_setopt(e, CURLOPT_CAINFO, net->o.cafile) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, low_speed_s) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_USERAGENT, "zarrfs/" ZF_VERSION) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_ERRORBUFFER, s->errbuf) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, zf_net_on_header) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, zf_net_on_body) != CURLE_OK;
    if (bad) {
        curl_easy_cleanup(e);
        return NULL;
    }
    return e;
}

/* the request's extra header lines as a curl list (NULL if none or no memory) */
static struct curl_slist *header_list(const zf_net_req *r, int *oom)
{
    struct curl_slist *l = NULL;
    for (const char *const *h = r->headers; h && *h; h++) {
        struct curl_slist *n = curl_slist_append(l, *h);
        if (!n) {
            curl_slist_free_all(l);
            *oom = 1;
            return NULL;
        }
        l = n;
    }
    return l;
}

/* GET, HEAD, or r's method with its body */
static void set_method(CURL *e, const zf_net_req *r)
{
    if (r->method) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body ? r->body : "");
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
        return;
    }
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, NULL);
    if (r->head)
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    else
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
}

/* a bearer token, or basic authentication from ~/.netrc, on https only:
 * libcurl keeps both to the first host, port and scheme of a redirect
 * chain, and the chain stays on https */
static void set_auth(zf_net *net, CURL *e, const zf_net_req *r)
{
    int https = !strncmp(r->url, "https://", 8);
    const char *bearer = https ? r->bearer : NULL;
    int netrc = net->o.netrc && https && !bearer;
    curl_easy_setopt(e, CURLOPT_XOAUTH2_BEARER, bearer);
    curl_easy_setopt(e, CURLOPT_HTTPAUTH, bearer ? CURLAUTH_BEARER : CURLAUTH_BASIC);
    curl_easy_setopt(e, CURLOPT_NETRC, netrc ? (long)CURL_NETRC_OPTIONAL : (long)CURL_NETRC_IGNORED);
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, bearer || netrc ? "https" : "http,https");
}

/* start x's next attempt in the free slot s; 0 if it could not start (x is
 * then finished) */
static int start(zf_net *net, slot *s, zf_net_xfer *x, int64_t now)
{
    zf_net_req *r = x->req;
    int oom = 0;
    s->hdrs = header_list(r, &oom);
    if (oom) {
        r->rc = ZF_ENOMEM;
        finish(net, x);
        return 0;
    }
    int64_t left = x->deadline - now;
    int64_t cap = (int64_t)net->o.timeout_ms * ATTEMPT_CAP_TIMEOUTS;
    long total = (long)(left < cap ? left : cap);
    long conn = (long)net->o.connect_timeout_ms < total ? (long)net->o.connect_timeout_ms : total;
    char range[48];
    snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)r->off,
             (unsigned long long)(r->off + r->len - 1));
    CURL *e = s->easy;
    s->errbuf[0] = '\0';
    zf_net_resp_reset(x);
    curl_easy_setopt(e, CURLOPT_URL, r->url);
    set_method(e, r);
    set_auth(net, e, r);
    curl_easy_setopt(e, CURLOPT_RANGE, r->len && !r->head ? range : NULL);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, s->hdrs);
    /* a signed request's headers (a session token) never go to another server */
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, r->headers || r->method ? 0L : 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, total);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, conn);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_PRIVATE, s);
    if (curl_multi_add_handle(net->multi, e) != CURLM_OK) {
        curl_slist_free_all(s->hdrs);
        s->hdrs = NULL;
        r->rc = ZF_EIO;
        if (r->err && r->errcap)
            snprintf(r->err, r->errcap, "libcurl refused the transfer");
        finish(net, x);
        return 0;
    }
    s->x = x;
    net->active++;
    r->attempts++;
    pthread_mutex_lock(&net->mu);
    net->stats.attempts++;
    pthread_mutex_unlock(&net->mu);
    return 1;
}

/* the wait before attempt k+1 (full jitter, Retry-After within the cap) */
static int64_t backoff(zf_net *net, const zf_net_xfer *x, unsigned k)
{
    uint64_t ceil = BACKOFF_BASE_MS;
    for (unsigned i = 1; i < k && ceil < BACKOFF_CAP_MS; i++)
        ceil *= 2;
    if (ceil > BACKOFF_CAP_MS)
        ceil = BACKOFF_CAP_MS;
    int64_t d = (int64_t)(next_rand(net) % (ceil + 1));
    if (x->retry_after_ms > d)
        d = x->retry_after_ms < BACKOFF_CAP_MS ? x->retry_after_ms : BACKOFF_CAP_MS;
    return d;
}

/* an attempt in slot s ended with code */
static void attempt_done(zf_net *net, slot *s, CURLcode code)
{
    zf_net_xfer *x = s->x;
    curl_multi_remove_handle(net->multi, s->easy);
    curl_slist_free_all(s->hdrs);
    s->hdrs = NULL;
    s->x = NULL;
    net->active--;
    char why[64];
    if (zf_net_judge(x, code, s->errbuf, why, sizeof why) == ZF_NET_DONE) {
        finish(net, x);
        return;
    }
    int64_t now = now_ms();
    if (now >= x->deadline) { /* cut at the deadline, or ended just then */
        give_up(net, x, why, 1);
        return;
    }
    if (x->req->attempts >= net->o.retries) {
        give_up(net, x, why, 0);
        return;
    }
    x->due = now + backoff(net, x, x->req->attempts);
    if (x->due >= x->deadline) {
        give_up(net, x, why, 1);
        return;
    }
    x->next = net->waiting;
    net->waiting = x;
}

/* ---- the engine thread --------------------------------------------------- */

static slot *free_slot(zf_net *net)
{
    for (unsigned i = 0; i < net->o.connections; i++)
        if (!net->slots[i].x)
            return &net->slots[i];
    return NULL;
}

/* fail the queued requests whose deadline has come, wherever they wait in
 * the queue (deadlines differ: each caller's request deadline); *wake gets
 * the earliest deadline of those left */
static void expire_queued(zf_net *net, int64_t now, int64_t *wake)
{
    zf_net_xfer *expired = NULL;
    pthread_mutex_lock(&net->mu);
    net->qtail = NULL;
    for (zf_net_xfer **pp = &net->qhead; *pp;) {
        zf_net_xfer *x = *pp;
        if (x->deadline <= now) {
            *pp = x->next;
            x->next = expired;
            expired = x;
            continue;
        }
        if (x->deadline < *wake)
            *wake = x->deadline;
        net->qtail = x;
        pp = &x->next;
    }
    pthread_mutex_unlock(&net->mu);
    while (expired) {
        zf_net_xfer *x = expired;
        expired = x->next;
        give_up(net, x, "timed out", 1);
    }
}

/* start retries that are due, then queued requests, while slots are free;
 * fail those whose budget ran out; *wake gets the next time to look again */
static void schedule(zf_net *net, int64_t now, int64_t *wake)
{
    expire_queued(net, now, wake);
    for (zf_net_xfer **pp = &net->waiting; *pp;) {
        zf_net_xfer *x = *pp;
        slot *s = x->due <= now ? free_slot(net) : NULL;
        if (x->due <= now && x->deadline <= now) {
            *pp = x->next;
            give_up(net, x, "timed out", 1);
        } else if (s) {
            *pp = x->next;
            start(net, s, x, now);
        } else {
            int64_t t = x->due > now ? x->due : x->deadline;
            if (t < *wake)
                *wake = t;
            pp = &x->next;
        }
    }
    for (;;) {
        pthread_mutex_lock(&net->mu);
        zf_net_xfer *x = net->qhead;
        slot *s = x ? free_slot(net) : NULL;
        if (x && (s || x->deadline <= now)) { /* (queued since expire_queued looked) */
            net->qhead = x->next;
            if (!net->qhead)
                net->qtail = NULL;
        } else {
            x = NULL;
        }
        pthread_mutex_unlock(&net->mu);
        if (!x)
            return;
        if (x->deadline <= now)
            give_up(net, x, "timed out", 1);
        else
            start(net, s, x, now);
    }
}

/* 1 while there is work or no stop was asked */
static int keep_running(zf_net *net)
{
    pthread_mutex_lock(&net->mu);
    int go = !net->stop || net->qhead || net->active || net->waiting;
    pthread_mutex_unlock(&net->mu);
    return go;
}

static void *engine(void *arg)
{
    zf_net *net = arg;
    pthread_mutex_lock(&net->curl_mu);
    while (keep_running(net)) {
        int64_t now = now_ms();
        int64_t wake = now + 1000;
        schedule(net, now, &wake);
        int running = 0;
        curl_multi_perform(net->multi, &running);
        int left, done = 0;
        CURLMsg *m;
        while ((m = curl_multi_info_read(net->multi, &left))) {
            if (m->msg != CURLMSG_DONE)
                continue;
            slot *s = NULL;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&s);
            attempt_done(net, s, m->data.result);
            done = 1;
        }
        if (done)
            continue; /* slots were freed: fill them before waiting */
        int64_t wait = wake - now_ms();
        pthread_mutex_unlock(&net->curl_mu);
        curl_multi_poll(net->multi, NULL, 0, wait < 0 ? 0 : (int)wait, NULL);
        pthread_mutex_lock(&net->curl_mu);
    }
    pthread_mutex_unlock(&net->curl_mu);
    return NULL;
}

/* ---- the interface ------------------------------------------------------- */

/* fill the defaults of net.h into o */
static void defaults(zf_net_opts *o)
{
    if (!o->connections)
        o->connections = 16;
    if (!o->retries)
        o->retries = 8;
    if (!o->timeout_ms)
        o->timeout_ms = 10000;
    if (!o->connect_timeout_ms)
        o->connect_timeout_ms = o->timeout_ms;
    if (!o->budget_ms)
        o->budget_ms = o->timeout_ms > UINT32_MAX / BUDGET_TIMEOUTS ? UINT32_MAX
                                                                   : o->timeout_ms * BUDGET_TIMEOUTS;
}

void zf_net_close(zf_net *net)
{
    if (!net)
        return;
    pthread_mutex_lock(&registry_mu);
    for (zf_net **pp = &registry; *pp; pp = &(*pp)->reg_next)
        if (*pp == net) {
            *pp = net->reg_next;
            break;
        }
    pthread_mutex_unlock(&registry_mu);
    pthread_mutex_lock(&net->mu);
    net->stop = 1;
    int alive = net->thread_alive;
    pthread_mutex_unlock(&net->mu);
    if (alive) {
        curl_multi_wakeup(net->multi);
        pthread_join(net->thr, NULL);
    }
    for (unsigned i = 0; i < net->o.connections; i++)
        curl_easy_cleanup(net->slots[i].easy);
    curl_multi_cleanup(net->multi);
    pthread_mutex_destroy(&net->mu);
    pthread_mutex_destroy(&net->curl_mu);
    free(net->slots);
    free((char *)net->o.cafile);
    free(net);
}

/* the multi handle and the slots' easy handles */
static int setup_curl(zf_net *net)
{
    net->multi = curl_multi_init();
    net->slots = calloc(net->o.connections, sizeof *net->slots);
    if (!net->multi || !net->slots)
        return ZF_ENOMEM;
    curl_multi_setopt(net->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)net->o.connections);
    curl_multi_setopt(net->multi, CURLMOPT_MAXCONNECTS, (long)net->o.connections);
    curl_multi_setopt(net->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    for (unsigned i = 0; i < net->o.connections; i++)
        if (!(net->slots[i].easy = new_easy(net, &net->slots[i])))
            return ZF_ENOMEM;
    return ZF_OK;
}

int zf_net_open(const zf_net_opts *o, zf_net **out, char *err, size_t errcap)
{
    *out = NULL;
    if (o->cafile) {
        FILE *f = fopen(o->cafile, "r");
        if (!f) {
            if (err && errcap)
                snprintf(err, errcap, "cannot read cafile %s: %s", o->cafile, strerror(errno));
            return ZF_EINVAL;
        }
        fclose(f);
    }
    zf_net *net = calloc(1, sizeof *net);
    if (!net)
        return ZF_ENOMEM;
    net->o = *o;
    defaults(&net->o);
    net->o.cafile = NULL;
    net->rng = ((uint64_t)now_ms() << 20) ^ (uint64_t)(uintptr_t)net ^ 0x9e3779b97f4a7c15ull;
    pthread_mutex_init(&net->mu, NULL);
    pthread_mutex_init(&net->curl_mu, NULL);
    int rc = ZF_ENOMEM;
    if ((!o->cafile || (net->o.cafile = strdup(o->cafile))) && (rc = setup_curl(net)) == ZF_OK) {
        pthread_mutex_lock(&registry_mu);
        net->reg_next = registry;
        registry = net;
        pthread_mutex_unlock(&registry_mu);
        *out = net;
        return ZF_OK;
    }
    for (unsigned i = 0; net->slots && i < net->o.connections; i++)
        if (net->slots[i].easy)
            curl_easy_cleanup(net->slots[i].easy);
    if (net->multi)
        curl_multi_cleanup(net->multi);
    pthread_mutex_destroy(&net->mu);
    pthread_mutex_destroy(&net->curl_mu);
    free(net->slots);
    free((char *)net->o.cafile);
    free(net);
    if (err && errcap)
        snprintf(err, errcap, "cannot start the HTTP engine");
    return rc;
}

/* check a request's inputs and clear its outputs; ZF_EINVAL if unusable */
static int prepare(zf_net_req *r)
{
    r->rc = ZF_OK;
    r->status = 0;
    r->attempts = 0;
    r->n = 0;
    r->size = 0;
    r->size_known = 0;
    r->etag[0] = '\0';
    r->last_modified_ns = 0;
    if (r->err && r->errcap)
        r->err[0] = '\0';
    int ok = r->url && (r->head || (r->len ? r->buf && r->cap >= r->len && r->off <= UINT64_MAX - r->len
                                           : (r->grow || r->buf)));
    if (!ok) {
        r->rc = ZF_EINVAL;
        if (r->err && r->errcap)
            snprintf(r->err, r->errcap, "a malformed request (no URL, or no room for its body)");
    }
    return r->rc;
}

/* the engine thread runs from the first request on (and again in a forked child) */
static int start_thread(zf_net *net)
{
    int rc = ZF_OK;
    pthread_mutex_lock(&net->mu);
    if (!net->thread_alive) {
        if (pthread_create(&net->thr, NULL, engine, net) == 0)
            net->thread_alive = 1;
        else
            rc = ZF_EIO;
    }
    pthread_mutex_unlock(&net->mu);
    return rc;
}

int zf_net_run(zf_net *net, zf_net_req *reqs, size_t n)
{
    zf_net_xfer *xs = n ? calloc(n, sizeof *xs) : NULL;
    if (n && !xs) {
        for (size_t i = 0; i < n; i++)
            reqs[i].rc = ZF_ENOMEM;
        return ZF_ENOMEM;
    }
    zf_net_batch b = {.left = 0};
    pthread_cond_init(&b.cv, NULL);
    uint64_t own = (uint64_t)now_ms() + net->o.budget_ms;
    uint64_t bound = zf_deadline_bound(own); /* the thread's request deadline, when earlier */
    int64_t deadline = (int64_t)bound;
    int by_request = bound < own;
    zf_net_xfer *head = NULL, *last = NULL;
    for (size_t i = 0; i < n; i++) {
        if (prepare(&reqs[i]) != ZF_OK)
            continue;
        xs[i] = (zf_net_xfer){.req = &reqs[i], .batch = &b, .deadline = deadline,
                              .by_request = by_request};
        if (last)
            last->next = &xs[i];
        else
            head = &xs[i];
        last = &xs[i];
        b.left++;
    }
    if (head && start_thread(net) != ZF_OK) {
        for (zf_net_xfer *x = head; x; x = x->next) {
            x->req->rc = ZF_EIO;
            if (x->req->err && x->req->errcap)
                snprintf(x->req->err, x->req->errcap, "cannot start the HTTP engine's thread");
        }
        head = NULL;
    }
    if (head) {
        pthread_mutex_lock(&net->mu);
        if (net->qtail)
            net->qtail->next = head;
        else
            net->qhead = head;
        net->qtail = last;
        pthread_mutex_unlock(&net->mu);
        curl_multi_wakeup(net->multi);
        pthread_mutex_lock(&net->mu);
        while (b.left)
            pthread_cond_wait(&b.cv, &net->mu);
        pthread_mutex_unlock(&net->mu);
    }
    pthread_cond_destroy(&b.cv);
    free(xs);
    for (size_t i = 0; i < n; i++)
        if (reqs[i].rc != ZF_OK)
            return reqs[i].rc;
    return ZF_OK;
}

unsigned zf_net_budget_ms(const zf_net *net)
{
    return net->o.budget_ms;
}

unsigned zf_net_connections(const zf_net *net)
{
    return net->o.connections;
}

void zf_net_get_stats(zf_net *net, zf_net_stats *st)
{
    pthread_mutex_lock(&net->mu);
    *st = net->stats;
    pthread_mutex_unlock(&net->mu);
}
