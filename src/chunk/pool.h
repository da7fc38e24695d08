/* pool.h - a bounded set of idle large buffers kept for reuse.
 *
 * Every fresh page a process touches is a page fault and a page cleared by
 * the kernel: for multi-megabyte buffers allocated and freed once per chunk
 * (the stored bytes a load reads) that was a sixth of the daemon's CPU.  A
 * pool keeps buffers that were given back, up to `limit` idle bytes, and
 * hands them out again.
 *
 * Contract:
 *  - Buffers are malloc'd memory.  zf_pool_take passes ownership of a buffer
 *    to the caller, who frees it or gives it back; zf_pool_give passes
 *    ownership to the pool (which may free it at once).
 *  - `cap` is the buffer's allocated size in bytes; callers must give a buffer
 *    back with its true capacity.
 *  - Idle bytes never exceed the limit: memory held by a pool is bounded by it.
 *    Buffers under 256 KiB (cheap to malloc) and more than 16 are not kept.
 *  - All functions are thread-safe. */
#ifndef ZF_POOL_H
#define ZF_POOL_H

#include <stddef.h>

typedef struct zf_pool zf_pool;

/* New pool keeping at most `limit` idle bytes; NULL on allocation failure. */
zf_pool *zf_pool_new(size_t limit);

/* Free the pool and every idle buffer.  NULL is allowed. */
void zf_pool_free(zf_pool *p);

/* The smallest idle buffer of at least min bytes, its capacity in *cap; NULL
 * if there is none.  The caller owns it. */
void *zf_pool_take(zf_pool *p, size_t min, size_t *cap);

/* A new buffer of `bytes` bytes, to be freed with free() or given to a pool;
 * large ones are 2 MiB aligned and advised to use transparent huge pages, so
 * that first touching them costs one fault per 2 MiB instead of per 4 KiB.
 * NULL on allocation failure. */
void *zf_pool_alloc(size_t bytes);

/* Give back buf of capacity cap (kept if the limit allows, else freed).
 * NULL is allowed. */
void zf_pool_give(zf_pool *p, void *buf, size_t cap);

#endif
