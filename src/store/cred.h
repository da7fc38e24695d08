/* cred.h - a credential provider: the secret material a remote store signs
 * or authorises its requests with, from one source (an AWS chain's winner,
 * a GCS token source), kept fresh.
 *
 * A provider holds the current value (an AWS key, secret and session token;
 * an OAuth access token) and its expiry.  A value that never expires (keys
 * from the environment or a file) is fetched once.  A temporary one is
 * fetched again by the provider's own thread before it expires: at 3/4 of
 * its lifetime but at most 15 minutes ahead, less a random part of a
 * quarter of that (so many mounts do not refresh at once).  A request never
 * waits for a refresh unless the value is no longer usable (it expires
 * within a tenth of its lifetime, at most 30 s): then the first request
 * refreshes, within its own time budget, and the others wait for it.
 *
 * When a refresh fails, the last value serves while it is usable (the
 * thread tries again after 1, 2, 4 ... 60 s), and a warning names the source
 * and the reason; once it is not usable, requests fail with ZF_EIO and that
 * reason.  A server that rejects a value as expired or invalid
 * (zf_cred_reject) makes the next request refresh once, whatever its expiry.
 *
 * The note function (a front end's log) gets a line naming the source when
 * the provider opens and one per refresh (info), and one per failure
 * (warning, or error once the value has expired); lines and reasons never hold a secret.  Secrets are
 * wiped when a value is freed.
 *
 * Threads: every function may be called from many threads at once.  The
 * refresh thread starts with the first zf_cred_get after a temporary value
 * was fetched, and again in a forked child (the daemon forks after reading
 * the metadata). */
#ifndef ZF_CRED_H
#define ZF_CRED_H

#include <stddef.h>
#include <stdint.h>

#include "base/log.h"

/* One value.  Strings are owned by the value (wiped and freed with it). */
typedef struct zf_cred_value {
    char *id;        /* an access key id; NULL: none (a bearer token) */
    char *secret;    /* a secret key; NULL: none */
    char *token;     /* a session token or an access token; NULL: none */
    int64_t expires; /* seconds since the epoch (UTC); 0: never */
    /* kept by the provider */
    uint64_t gen;    /* 1, 2, ...: which fetch made it */
    int refs;
} zf_cred_value;

/* A source: fetch a fresh value into *v (fields zeroed by the caller;
 * strings malloc'd, taken over even on failure).  May rewrite desc (cap
 * bytes, NUL-terminated, never a secret) with what it learned ("instance
 * metadata (role NAME)").  0 or a negative ZF_E* with a one-line reason in
 * err (never a secret). */
typedef int (*zf_cred_fetch_fn)(void *ctx, zf_cred_value *v, char *desc, size_t cap, char *err,
                                size_t errcap);

/* Where log lines go (a front end's log; NULL: nowhere). */
typedef void (*zf_cred_note_fn)(zf_log_level level, const char *line);

typedef struct zf_cred zf_cred;

/* A provider for source (desc: what the source is, for messages), fetching
 * with fetch(ctx); ctx is freed by free_ctx (may be NULL) with the provider,
 * also when this fails.  The first value is fetched now: its error (the
 * reason naming desc) fails the call.  *out is the caller's (zf_cred_free). */
int zf_cred_open(const char *desc, zf_cred_fetch_fn fetch, void *ctx, void (*free_ctx)(void *),
                 zf_cred_note_fn note, zf_cred **out, char *err, size_t errcap);

/* A provider holding the never-expiring value v (taken over, also on
 * failure); no fetch, no thread.  note (may be NULL) is told the source. */
int zf_cred_open_static(const char *desc, zf_cred_value *v, zf_cred_note_fn note,
                        zf_cred **out);

/* The current value, refreshed first when it is not usable; *v is held
 * until zf_cred_put.  ZF_EIO (the source and the reason in err) when no
 * usable value can be had; ZF_ETIMEDOUT when the thread's request deadline
 * passed while another thread refreshed. */
int zf_cred_get(zf_cred *c, const zf_cred_value **v, char *err, size_t errcap);

/* Release a value from zf_cred_get; NULL is allowed. */
void zf_cred_put(zf_cred *c, const zf_cred_value *v);

/* A server rejected v as expired or invalid: unless a newer value is
 * already there, the next zf_cred_get fetches anew.  Returns 1 when it
 * will (retry the request once), 0 when the value is kept: it never
 * expires (fetching it again gives the same), or it was fetched less than
 * 5 s ago (a fresh value rejected again is refused for another reason). */
int zf_cred_reject(zf_cred *c, const zf_cred_value *v);

/* What the source is, as the log and .info show it (cap bytes). */
void zf_cred_describe(zf_cred *c, char *out, size_t cap);

/* Stop the refresh thread and free everything; NULL is allowed. */
void zf_cred_free(zf_cred *c);

/* Wipe and free the strings of v (v itself is the caller's); zeroes it. */
void zf_cred_value_clear(zf_cred_value *v);

#endif
