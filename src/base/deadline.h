/* deadline.h - the time budget of the request a thread is serving, and its
 * cancellation.
 *
 * A front end that serves requests gives each one a single deadline:
 * zf_deadline_set(zf_deadline_after(budget)) when the request starts,
 * zf_deadline_clear() once it is done (the FUSE daemon does so for every
 * read of a remote store, with the store's retry budget).  Every wait of
 * that thread for the store ends by then, whatever the wait's own bound: the
 * HTTP engine starts no attempt and sleeps no back-off past it and cuts the
 * attempts in flight at it (store/net.h); the chunk cache and the shard
 * index cache stop waiting for another thread's load (chunk/cache.h,
 * chunk/shardidx.h); a reader stops waiting for another reader's size pass
 * (view/layout.h).  So a request that needs many store calls (several
 * chunks, a shard index and then the shard) ends within one budget, not one
 * per call, and fails with the store's EIO, logged once with the key and
 * "the request's time budget was spent".
 *
 * Cancellation.  A request may also be abandoned before its deadline: the
 * front end starts it with zf_deadline_begin, which returns a ticket, and
 * zf_deadline_cancel(ticket) from any thread (the caller was interrupted or
 * killed) makes the request's deadline spent at once.  zf_deadline_cancel_all
 * (the process is stopping: SIGTERM) does so for every thread, those without
 * a request too.  Every wait that honours the deadline then ends within
 * ZF_DEADLINE_POLL_MS: zf_deadline_wait wakes at least that often while a
 * cancellation may come, and the HTTP engine looks at the requests in flight
 * as often.  A cancelled request fails as one whose budget was spent
 * (ZF_ETIMEDOUT / the store's EIO: never taken for damaged or absent data);
 * zf_deadline_cancelled tells the two apart at the front end.
 *
 * Threads that serve no request (prefetch, the export tool) have no
 * deadline: only each call's own budget bounds them (and cancel_all).  A
 * thread that works for a request (the size pass's helpers) takes the
 * request's deadline and cancellation with zf_deadline_save/restore.
 *
 * Times are CLOCK_MONOTONIC milliseconds; ZF_DEADLINE_NONE means "none".
 * The deadline is thread-local: setting it affects the calling thread only. */
#ifndef ZF_DEADLINE_H
#define ZF_DEADLINE_H

#include <pthread.h>
#include <stdint.h>

/* No deadline (later than any time). */
#define ZF_DEADLINE_NONE UINT64_MAX

/* How long a wait may take to notice a cancellation, at most (ms). */
#define ZF_DEADLINE_POLL_MS 100

/* The monotonic clock now, in ms. */
uint64_t zf_deadline_now_ms(void);

/* The time ms from now (ZF_DEADLINE_NONE if that does not fit). */
uint64_t zf_deadline_after(uint64_t ms);

/* Give the calling thread's current request the deadline abs_ms. */
void zf_deadline_set(uint64_t abs_ms);

/* The calling thread serves no request any more: no deadline (and no
 * cancellable request: see zf_deadline_end). */
void zf_deadline_clear(void);

/* The calling thread starts serving a request with deadline abs_ms
 * (ZF_DEADLINE_NONE: none, but cancellable).  Returns its ticket for
 * zf_deadline_cancel (never 0).  End it with zf_deadline_end. */
uint64_t zf_deadline_begin(uint64_t abs_ms);

/* The calling thread's request (zf_deadline_begin) has ended: no deadline,
 * and its ticket cancels nothing any more. */
void zf_deadline_end(void);

/* Abandon the request with this ticket, from any thread (not from a signal
 * handler: it takes a lock).  No effect once that request has ended. */
void zf_deadline_cancel(uint64_t ticket);

/* The calling thread's request (zf_deadline_begin) is for no one: work
 * done ahead of a request that may come (sizing an array ahead).  The
 * store's failures it meets are not reported: they are not kept, and the
 * request that needs the same data meets them again and reports them
 * (damage, a verdict kept, is reported whoever finds it).  Its helpers
 * inherit this with its deadline; zf_deadline_begin, _end and _clear end
 * it. */
void zf_deadline_set_unattended(void);

/* 1 if the calling thread works for a request for no one, else 0. */
int zf_deadline_unattended(void);

/* The process is stopping: every thread's waits end as if their deadline
 * were spent, now and from now on.  Async-signal-safe. */
void zf_deadline_cancel_all(void);

/* 1 once zf_deadline_cancel_all was called. */
int zf_deadline_stopping(void);

/* 1 if the calling thread's request was cancelled, or the process is
 * stopping; else 0. */
int zf_deadline_cancelled(void);

/* What makes the calling thread's request end: its deadline and its
 * cancellation, for a thread that works on its behalf. */
typedef struct zf_deadline_ctx {
    uint64_t abs_ms;
    const int *cancel;   /* the request's cancellation flag, or NULL */
    int unattended;      /* zf_deadline_set_unattended */
} zf_deadline_ctx;

/* The calling thread's deadline and cancellation (valid while its request
 * lasts: a helper must be done before the request ends). */
zf_deadline_ctx zf_deadline_save(void);

/* Work under ctx (from zf_deadline_save of another thread); end with
 * zf_deadline_clear. */
void zf_deadline_restore(zf_deadline_ctx ctx);

/* most threads zf_deadline_workers runs */
#define ZF_WORKERS_MAX 64

/* Run fn(arg) on n threads at once (the calling one and up to n - 1 more,
 * at most ZF_WORKERS_MAX; fewer when threads cannot be started: fn shares
 * its work out itself), each under the calling thread's deadline and
 * cancellation; return when every one has. */
void zf_deadline_workers(unsigned n, void *(*fn)(void *), void *arg);

/* The cancellation flag of the calling thread's request (read it with
 * zf_deadline_flag_set), or NULL: for a waiter on another thread's
 * behalf (the HTTP engine), valid while the request lasts. */
const int *zf_deadline_flag(void);

/* Is the flag from zf_deadline_flag (NULL allowed) set, or is the process
 * stopping? */
int zf_deadline_flag_set(const int *flag);

/* The earlier of own_abs_ms (a call's own deadline) and the thread's
 * (ZF_DEADLINE_NONE: the thread's deadline itself); 0 (long past) once the
 * thread's request was cancelled. */
uint64_t zf_deadline_bound(uint64_t own_abs_ms);

/* Milliseconds left of the thread's deadline: 0 once spent or cancelled,
 * ZF_DEADLINE_NONE if it has none. */
uint64_t zf_deadline_remaining_ms(void);

/* 1 if the thread has a deadline and it is spent, or its request was
 * cancelled, or the process is stopping; else 0. */
int zf_deadline_spent(void);

/* Initialise cv on the monotonic clock, for zf_deadline_wait. */
void zf_deadline_cond_init(pthread_cond_t *cv);

/* pthread_cond_wait on cv (from zf_deadline_cond_init) with mu held, ending
 * at the thread's deadline or its cancellation: 0 when woken (or after
 * ZF_DEADLINE_POLL_MS: callers wait in a loop on their condition, as for any
 * spurious wake-up), ETIMEDOUT once the deadline has passed or the request
 * was cancelled. */
int zf_deadline_wait(pthread_cond_t *cv, pthread_mutex_t *mu);

#endif
