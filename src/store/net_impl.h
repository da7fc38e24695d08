/* net_impl.h - private to the engine (net.c, net_engine.c, net_resp.c): one
 * request's state across its attempts, what a response's callbacks record,
 * and the engine's own state. */
#ifndef ZF_NET_IMPL_H
#define ZF_NET_IMPL_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdint.h>

#include "base/deadline.h"
#include "store/net.h"

/* Longest error body kept for the caller (an S3 error document). */
#define ZF_NET_ERRBODY_MAX 4096u

/* The callers' side of one zf_net_run: how many requests are unfinished. */
typedef struct zf_net_batch {
    pthread_cond_t cv;  /* signalled (under the engine's lock) when left reaches 0 */
    size_t left;
} zf_net_batch;

/* One request across its attempts; owned by its zf_net_run call. */
typedef struct zf_net_xfer {
    zf_net_req *req;
    CURL *easy;                /* the handle of the current attempt (its URL: each redirect's) */
    zf_net_batch *batch;
    struct zf_net_xfer *next;  /* in the engine's queue or wait list */
    int64_t deadline;          /* monotonic ms: the request's budget ends */
    int at_deadline;           /* the current attempt's time limit is what was left of it */
    int by_request;            /* deadline is the calling thread's request deadline
                                * (base/deadline.h), earlier than its own budget */
    const int *cancel;         /* the calling thread's request's cancellation flag
                                * (base/deadline.h: zf_deadline_flag), or NULL */
    int64_t due;               /* monotonic ms: next attempt not before */
    /* the current response (reset by zf_net_resp_reset before each attempt) */
    long status;               /* of the latest status line */
    uint64_t clen;             /* Content-Length */
    int clen_known;
    uint64_t cr_start, cr_end, cr_total;  /* Content-Range */
    int cr_known, cr_total_known;
    int64_t retry_after_ms;    /* -1: none */
    uint64_t pos;              /* body bytes received */
    int abort_rc;              /* set by a callback that stopped the transfer */
    int range_done;            /* a 200's body passed the range: stopped early, on purpose */
    char etag[128];
    int64_t last_modified_ns;
    char coding[32];           /* Content-Encoding other than identity ("" none) */
    char generation[24];       /* x-goog-generation */
} zf_net_xfer;

/* What an attempt's end means. */
typedef enum zf_net_verdict {
    ZF_NET_DONE,   /* finished: req->rc and err are set */
    ZF_NET_RETRY   /* transient: try again if attempts and budget allow */
} zf_net_verdict;

/* Forget the previous attempt's response (before each attempt). */
void zf_net_resp_reset(zf_net_xfer *x);

/* libcurl header callback (CURLOPT_HEADERFUNCTION; userdata: the xfer). */
size_t zf_net_on_header(char *b, size_t size, size_t n, void *ud);

/* libcurl write callback (CURLOPT_WRITEFUNCTION; userdata: the xfer). */
size_t zf_net_on_body(char *b, size_t size, size_t n, void *ud);

/* Judge an attempt that ended with code (and errbuf, libcurl's detail):
 * fills req->rc/err/status/size/... when DONE; *why gets a short label of
 * the transient failure when RETRY ("HTTP 503", "timed out"). */
zf_net_verdict zf_net_judge(zf_net_xfer *x, CURLcode code, const char *errbuf, char *why,
                            size_t whycap);

/* ---- the engine itself (net.c opens and closes it; net_engine.c is its thread) ---- */

/* One transfer slot: a reused easy handle and the request it serves. */
typedef struct zf_net_slot {
    CURL *easy;
    zf_net_xfer *x;             /* NULL: free */
    struct curl_slist *hdrs;    /* the current request's extra headers */
    char errbuf[CURL_ERROR_SIZE];
} zf_net_slot;

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
    zf_net_slot *slots;
    unsigned active;
    uint64_t rng;
    int answered;               /* a server has answered (any HTTP status) since the start */
};

/* monotonic milliseconds (the clock of base/deadline.h) */
static inline int64_t zf_net_now_ms(void)
{
    return (int64_t)zf_deadline_now_ms();
}

/* An easy handle with the options every attempt of net's shares, writing
 * libcurl's error detail into s->errbuf; NULL if libcurl refuses. */
CURL *zf_net_new_easy(zf_net *net, zf_net_slot *s);

/* The engine thread (pthread_create's start routine; arg: the zf_net): runs
 * the multi handle, attempts and retries, until a stop is asked and no
 * work is left. */
void *zf_net_engine(void *arg);

#endif
