/* net_engine.c - the HTTP engine's thread: a libcurl multi handle running
 * the attempts of queued requests, retries with backoff within each
 * request's budget, and handing finished requests back to their callers
 * (opening the engine and queueing requests: net.c; reading responses:
 * net_resp.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "store/net_impl.h"

#define BACKOFF_BASE_MS 100
#define BACKOFF_CAP_MS 5000
/* the connect timeout until a server first answered: one that is not there
 * fails a mount in seconds, not after every retry */
#define FIRST_CONNECT_MS 5000
/* how early libcurl's timer may end an attempt limited by the deadline */
#define DEADLINE_SLACK_MS 50
#define ATTEMPT_CAP_TIMEOUTS 3   /* an attempt lasts at most this many T */

/* xorshift64*: the jitter of backoffs (engine thread only) */
static uint64_t next_rand(zf_net *net)
{
    net->rng ^= net->rng >> 12;
    net->rng ^= net->rng << 25;
    net->rng ^= net->rng >> 27;
    return net->rng * 2685821657736338717ull;
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

/* has x's caller abandoned it (its request was cancelled, or the process
 * is stopping: base/deadline.h)? */
static int cancelled(const zf_net_xfer *x)
{
    return zf_deadline_flag_set(x->cancel);
}

/* is x's time over: its deadline has come, or it was cancelled? */
static int over(const zf_net_xfer *x, int64_t now)
{
    return x->deadline <= now || cancelled(x);
}

/* fail a request whose attempts or budget are spent, after a transient why;
 * budget: the time ran out (its own budget, or the calling thread's request
 * deadline when that came first: base/deadline.h), or the request was
 * cancelled */
static void give_up(zf_net *net, zf_net_xfer *x, const char *why, int budget)
{
    zf_net_req *r = x->req;
    r->rc = ZF_EIO;
    r->status = x->status;
    const char *whose = cancelled(x) ? "cancelled: the caller was interrupted, or zarrfs is stopping"
                        : x->by_request ? "the request's time budget was spent" : "time budget spent";
    char spent[80] = "";
    if (budget)
        snprintf(spent, sizeof spent, " (%s)", whose);
    if (r->err && r->errcap) {
        if (!r->attempts && (x->by_request || cancelled(x)))
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
CURL *zf_net_new_easy(zf_net *net, zf_net_slot *s)
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
static int start(zf_net *net, zf_net_slot *s, zf_net_xfer *x, int64_t now)
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
    x->at_deadline = left <= cap;
    long conn = (long)net->o.connect_timeout_ms < total ? (long)net->o.connect_timeout_ms : total;
    if (!net->answered && conn > FIRST_CONNECT_MS) /* no server has answered yet: none may be there */
        conn = FIRST_CONNECT_MS;
    char range[48];
    snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)r->off,
             (unsigned long long)(r->off + r->len - 1));
    CURL *e = s->easy;
    x->easy = e;
    s->errbuf[0] = '\0';
    zf_net_resp_reset(x);
    curl_easy_setopt(e, CURLOPT_URL, r->url);
    set_method(e, r);
    set_auth(net, e, r);
    curl_easy_setopt(e, CURLOPT_RANGE, r->len && !r->head ? range : NULL);
    /* a whole object stored with a Content-Encoding (gzip...) is decoded, as
     * zarr-python's aiohttp does; asking for identity keeps servers from
     * encoding what is stored plain.  A range of an encoded object means
     * nothing: not decoded, refused (net_resp.c) */
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, !r->len && !r->head && !r->method ? "identity" : NULL);
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

/* end the attempt in slot s (the slot is free again); its request */
static zf_net_xfer *release_slot(zf_net *net, zf_net_slot *s)
{
    zf_net_xfer *x = s->x;
    curl_multi_remove_handle(net->multi, s->easy);
    curl_slist_free_all(s->hdrs);
    s->hdrs = NULL;
    s->x = NULL;
    net->active--;
    return x;
}

/* an attempt in slot s ended with code */
static void attempt_done(zf_net *net, zf_net_slot *s, CURLcode code)
{
    curl_off_t connected_us = 0; /* 0: no connection was made */
    curl_easy_getinfo(s->easy, CURLINFO_CONNECT_TIME_T, &connected_us);
    zf_net_xfer *x = release_slot(net, s);
    char why[64];
    int never = !net->answered; /* before any answer: a connection that fails is not retried */
    net->answered |= x->status > 0;
    if (zf_net_judge(x, code, s->errbuf, why, sizeof why) == ZF_NET_DONE) {
        finish(net, x);
        return;
    }
    if (never && !connected_us &&
        (code == CURLE_COULDNT_CONNECT || code == CURLE_OPERATION_TIMEDOUT)) {
        give_up(net, x, why, 0); /* (a mount tells an absent server at once) */
        return;
    }
    int64_t now = zf_net_now_ms();
    if (over(x, now)) { /* cut at the deadline, or ended just then */
        give_up(net, x, why, 1);
        return;
    }
    if (x->at_deadline && code == CURLE_OPERATION_TIMEDOUT && now + DEADLINE_SLACK_MS >= x->deadline) {
        /* libcurl's timer, set to what was left, fired a moment before the
         * deadline: the budget is what ended it.  It fails at the deadline
         * itself (schedule), so that no later call finds time to start one
         * more attempt */
        x->due = x->deadline;
        x->next = net->waiting;
        net->waiting = x;
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

static zf_net_slot *free_slot(zf_net *net)
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
        if (over(x, now)) {
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
        zf_net_slot *s = x->due <= now ? free_slot(net) : NULL;
        if ((x->due <= now && x->deadline <= now) || cancelled(x)) {
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
        zf_net_slot *s = x ? free_slot(net) : NULL;
        if (x && (s || over(x, now))) { /* (queued since expire_queued looked) */
            net->qhead = x->next;
            if (!net->qhead)
                net->qtail = NULL;
        } else {
            x = NULL;
        }
        pthread_mutex_unlock(&net->mu);
        if (!x)
            return;
        if (over(x, now))
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

/* are requests queued? */
static int queued(zf_net *net)
{
    pthread_mutex_lock(&net->mu);
    int q = net->qhead != NULL;
    pthread_mutex_unlock(&net->mu);
    return q;
}

/* cut the attempts in flight whose request was cancelled */
static void cut_cancelled(zf_net *net)
{
    for (unsigned i = 0; net->active && i < net->o.connections; i++) {
        zf_net_slot *s = &net->slots[i];
        if (s->x && cancelled(s->x))
            give_up(net, release_slot(net, s), "cut", 1);
    }
}

void *zf_net_engine(void *arg)
{
    zf_net *net = arg;
    pthread_mutex_lock(&net->curl_mu);
    while (keep_running(net)) {
        int64_t now = zf_net_now_ms();
        cut_cancelled(net);
        /* with work to do, look often enough to see a cancellation */
        int64_t wake = now + (net->active || net->waiting || queued(net) ? ZF_DEADLINE_POLL_MS : 1000);
        schedule(net, now, &wake);
        int running = 0;
        curl_multi_perform(net->multi, &running);
        int left, done = 0;
        CURLMsg *m;
        while ((m = curl_multi_info_read(net->multi, &left))) {
            if (m->msg != CURLMSG_DONE)
                continue;
            zf_net_slot *s = NULL;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&s);
            attempt_done(net, s, m->data.result);
            done = 1;
        }
        if (done)
            continue; /* slots were freed: fill them before waiting */
        int64_t wait = wake - zf_net_now_ms();
        pthread_mutex_unlock(&net->curl_mu);
        curl_multi_poll(net->multi, NULL, 0, wait < 0 ? 0 : (int)wait, NULL);
        pthread_mutex_lock(&net->curl_mu);
    }
    pthread_mutex_unlock(&net->curl_mu);
    return NULL;
}
