/* deadline.h - the time budget of the request a thread is serving.
 *
 * A front end that serves requests gives each one a single deadline:
 * zf_deadline_set(zf_deadline_after(budget)) when the request starts,
 * zf_deadline_clear() once it is done (the FUSE daemon does so for every
 * read of a remote store, with the store's retry budget).  Every wait of
 * that thread for the store ends by then, whatever the wait's own bound: the
 * HTTP engine starts no attempt and sleeps no back-off past it and cuts the
 * attempts in flight at it (store/net.h); the chunk cache and the shard
 * index cache stop waiting for another thread's load (chunk/cache.h,
 * chunk/shardidx.h).  So a request that needs many store calls (several
 * chunks, a shard index and then the shard) ends within one budget, not one
 * per call, and fails with the store's EIO, logged once with the key and
 * "the request's time budget was spent".
 *
 * Threads that serve no request (prefetch, the size pass's helpers, the
 * export tool) have no deadline: only each call's own budget bounds them.
 *
 * Times are CLOCK_MONOTONIC milliseconds; ZF_DEADLINE_NONE means "none".
 * The deadline is thread-local: setting it affects the calling thread only. */
#ifndef ZF_DEADLINE_H
#define ZF_DEADLINE_H

#include <pthread.h>
#include <stdint.h>

/* No deadline (later than any time). */
#define ZF_DEADLINE_NONE UINT64_MAX

/* The monotonic clock now, in ms. */
uint64_t zf_deadline_now_ms(void);

/* The time ms from now (ZF_DEADLINE_NONE if that does not fit). */
uint64_t zf_deadline_after(uint64_t ms);

/* Give the calling thread's current request the deadline abs_ms. */
void zf_deadline_set(uint64_t abs_ms);

/* The calling thread serves no request any more: no deadline. */
void zf_deadline_clear(void);

/* The earlier of own_abs_ms (a call's own deadline) and the thread's
 * (ZF_DEADLINE_NONE: the thread's deadline itself). */
uint64_t zf_deadline_bound(uint64_t own_abs_ms);

/* Milliseconds left of the thread's deadline: 0 once spent,
 * ZF_DEADLINE_NONE if it has none. */
uint64_t zf_deadline_remaining_ms(void);

/* 1 if the thread has a deadline and it is spent, else 0. */
int zf_deadline_spent(void);

/* Initialise cv on the monotonic clock, for zf_deadline_wait. */
void zf_deadline_cond_init(pthread_cond_t *cv);

/* pthread_cond_wait on cv (from zf_deadline_cond_init) with mu held, ending
 * at the thread's deadline: 0 when woken, ETIMEDOUT once it has passed. */
int zf_deadline_wait(pthread_cond_t *cv, pthread_mutex_t *mu);

#endif
