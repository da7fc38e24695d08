/* net.h - the HTTP engine of the remote stores: libcurl, one multi handle
 * driven by its own thread, requests from many threads at once.
 *
 * One engine per store (zf_net_open).  It runs at most `connections`
 * transfers at once on reused connections (HTTP/1.1 keep-alive; HTTP/2
 * multiplexed where a TLS server offers it), verifies TLS peers and host
 * names always (the system CA bundle, or cafile), and retries what may pass:
 * timeouts, refused or reset connections, bodies cut short, HTTP 429, 500,
 * 502, 503 and 504.
 *
 * Time bounds (T = timeout_ms, C = connect_timeout_ms, B = budget_ms):
 *   - an attempt connects within C, fails when no byte moves for T (rounded
 *     up to whole seconds: libcurl's low-speed check), and lasts at most 3 T;
 *   - between attempts the engine waits a random time in [0, min(5 s,
 *     100 ms * 2^(k-1))] after the k-th attempt (full jitter), or the
 *     server's Retry-After when larger, but never more than 5 s;
 *   - a request makes at most `retries` attempts in all, and no attempt
 *     outlives the request's deadline: zf_net_run's call + B, or the calling
 *     thread's request deadline (base/deadline.h) when that is earlier; no
 *     attempt starts and no back-off sleeps past it, and an attempt in
 *     flight is cut at it.  So
 *         zf_net_run returns within min(B, the thread's deadline - now)
 *         (plus a few ms) of its call,
 *     whatever the servers do, queueing behind other requests included;
 *   - and within ZF_DEADLINE_POLL_MS of the cancellation of the calling
 *     thread's request, or of zf_deadline_cancel_all (base/deadline.h): its
 *     requests then fail with ZF_EIO "cancelled: ...", attempts in flight
 *     are cut, and none starts.
 *     Defaults: connections 16, retries 8, T 10 s, C = T, B = 6 T (60 s).
 *
 * Memory: the engine's own is O(connections) (one easy handle and its
 * buffers per slot); bodies go straight into the callers' buffers, never more
 * than they allow.
 *
 * Threads: zf_net_run may be called from any number of threads at once; each
 * call blocks until all its requests have finished.  The engine's thread
 * starts with the first request.  Call zf_net_global_init once at program
 * start, before any other thread runs.  fork() is safe while no zf_net_run
 * is running (zarrfs daemonizes after reading the metadata): the child's
 * engines start a thread of their own, keeping their connections. */
#ifndef ZF_NET_H
#define ZF_NET_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

typedef struct zf_net zf_net;

/* Engine options; 0 in any number field means its default (above). */
typedef struct zf_net_opts {
    unsigned connections;        /* transfers at once (and connections kept) */
    unsigned retries;            /* attempts in all per request (1: no retry) */
    unsigned timeout_ms;         /* T: no progress for this long fails an attempt */
    unsigned connect_timeout_ms; /* C */
    unsigned budget_ms;          /* B: a whole request, all attempts and waits */
    const char *cafile;          /* PEM CA bundle to trust instead of the system's; copied */
    int netrc;                   /* basic authentication from ~/.netrc for https
                                  * requests only; redirects then stay on https */
} zf_net_opts;

/* One request.  Inputs are the caller's and must stay valid during
 * zf_net_run; the engine writes only the "out" fields and the buffers.
 *
 * Modes (what the body is, and where it goes):
 *   head:              HEAD; no body.
 *   len > 0 (ranged):  GET with Range: bytes=off-(off+len-1); exactly len
 *                      bytes land in buf (cap >= len).  A 206 must start at
 *                      off and hold len bytes; a 200 (a server that ignores
 *                      Range) is accepted as the whole object and the range
 *                      is taken from it as it streams by.
 *   len == 0 (whole):  GET of the whole object into grow (reallocated, at
 *                      most max bytes), or, when grow is NULL, into buf (at
 *                      most cap bytes).  It asks for Accept-Encoding:
 *                      identity, and an object stored with a Content-Encoding
 *                      (gzip, deflate, br, zstd: an S3 object uploaded so) is
 *                      decoded, as zarr-python's aiohttp does; a range of one
 *                      is refused (ZF_ECORRUPT: its bytes mean nothing).
 * Redirects (at most 5, to http or https; to https only for a request with a
 * bearer token or an engine with netrc) are followed unless the request has
 * extra headers or a method: signed requests stay with the server they were
 * signed for (a 3xx is then ZF_EIO "HTTP 301").
 * After a non-2xx final answer the start of its body (at most 4 KiB, at most
 * what the buffer allows) is in the buffer and n says how much: an S3 error
 * document, for the caller to read a <Code> from.
 *
 * Results (rc):
 *   ZF_OK         2xx, and the body is what was asked
 *   ZF_ENOTFOUND  404 or 410
 *   ZF_ECORRUPT   a body longer than the buffer allows, a 206 for another
 *                 range or one shorter than asked (the object ends before
 *                 off + len; 416 too), a range of an encoded object: the
 *                 object is not what the caller expects, so no retry
 *   ZF_EIO        any other status (403, 401, 400, 3xx not followed, 416 to a
 *                 whole-object GET...), TLS
 *                 or name failures, retries exhausted or budget spent; err
 *                 says which: "HTTP 503 after 8 attempts", "timed out after 8
 *                 attempts", "HTTP 403", "connection refused after 3 attempts",
 *                 "timed out after 2 attempts (the request's time budget was
 *                 spent)" when the thread's request deadline cut it short
 *   ZF_ENOMEM     the grow buffer could not be enlarged
 * err never holds the URL, headers or credentials: callers add the key. */
typedef struct zf_net_req {
    /* in */
    const char *url;             /* absolute http(s) URL; never carries credentials */
    int head;                    /* HEAD instead of GET */
    const char *method;          /* "POST", "PUT" (with body), or NULL: GET / HEAD */
    const void *body;            /* the request body of a POST or PUT (body_len bytes) */
    size_t body_len;
    const char *bearer;          /* a bearer token for an https URL (libcurl's: sent to the
                                  * first host only, never after a redirect to another
                                  * host, port or scheme); NULL: none */
    uint64_t off, len;           /* ranged GET when len > 0 (see above) */
    const char *const *headers;  /* extra "Name: value" lines, NULL-terminated, or NULL */
    uint8_t *buf;                /* caller's buffer: ranged GETs, or whole ones without grow */
    size_t cap;                  /* bytes buf holds */
    zf_store_buf *grow;          /* whole-object GET: grown (realloc) up to max bytes */
    size_t max;
    char *err;                   /* one-line reason on failure ("" on success); may be NULL */
    size_t errcap;
    /* out */
    int rc;                      /* ZF_OK or a negative zf_err (above) */
    long status;                 /* final HTTP status; 0 if no answer came */
    unsigned attempts;           /* attempts made (0 if the budget ran out in the queue) */
    size_t n;                    /* body bytes in the buffer */
    uint64_t size;               /* whole object's size when the answer says it
                                  * (Content-Length of a 200 or HEAD, the total of a
                                  * Content-Range; a whole GET's bytes, or as stored
                                  * when they came decoded), else 0 */
    int size_known;              /* 1 when size was said */
    char etag[128];              /* ETag as sent, quotes included ("" if none; cut at 127) */
    int64_t last_modified_ns;    /* Last-Modified, ns since the epoch; 0 if none */
    char generation[24];         /* x-goog-generation (Google Cloud Storage), "" if none */
} zf_net_req;

/* What a finished request saw of the object's version (store.h), from its
 * response: ETag, Last-Modified, the whole object's size when said. */
void zf_net_req_seen(const zf_net_req *r, zf_store_seen *seen);

/* Counters of an engine since it was opened (for .info and benchmarks). */
typedef struct zf_net_stats {
    uint64_t requests;  /* requests finished */
    uint64_t attempts;  /* attempts made (requests + retries) */
    uint64_t failures;  /* requests finished with rc != ZF_OK */
    uint64_t bytes;     /* body bytes received */
} zf_net_stats;

/* Initialise libcurl for the whole program; call once from main before any
 * thread starts.  ZF_EIO (reason in err) if libcurl cannot start. */
int zf_net_global_init(char *err, size_t errcap);

/* Release what zf_net_global_init took (after every engine is closed). */
void zf_net_global_cleanup(void);

/* Start an engine (its thread, its multi handle); *out owns it
 * (zf_net_close).  ZF_EINVAL for an unreadable cafile; ZF_ENOMEM, ZF_EIO. */
int zf_net_open(const zf_net_opts *o, zf_net **out, char *err, size_t errcap);

/* Stop the engine: joins its
 * thread and frees everything; NULL is allowed.  No zf_net_run may be running. */
void zf_net_close(zf_net *net);

/* Run n requests (in any order, many at once) and wait until every one has
 * finished; each request's rc tells its result.  Returns ZF_OK if all
 * succeeded, else the rc of the first request (by index) that failed. */
int zf_net_run(zf_net *net, zf_net_req *reqs, size_t n);

/* The engine's budget B per zf_net_run call, in ms (defaults applied). */
unsigned zf_net_budget_ms(const zf_net *net);

/* Transfers the engine runs at once (its connections option, defaults applied). */
unsigned zf_net_connections(const zf_net *net);

/* The engine's counters now. */
void zf_net_get_stats(zf_net *net, zf_net_stats *st);

#endif
