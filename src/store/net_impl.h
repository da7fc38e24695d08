/* net_impl.h - private to the engine (net.c, net_resp.c): one request's
 * state across its attempts, and what a response's callbacks record. */
#ifndef ZF_NET_IMPL_H
#define ZF_NET_IMPL_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdint.h>

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
    zf_net_batch *batch;
    struct zf_net_xfer *next;  /* in the engine's queue or wait list */
    int64_t deadline;          /* monotonic ms: the request's budget ends */
    int by_request;            /* deadline is the calling thread's request deadline
                                * (base/deadline.h), earlier than its own budget */
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

#endif
