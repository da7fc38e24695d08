/* inodes.c - the node numbers the kernel holds: a hash table from number to
 * lookup count and the generation the number was last answered from.  The
 * table only stores; locking and generation references are gen.c's. */
#include <errno.h>
#include <stdlib.h>

#include "zarrfs.h"

#define FIRST_BUCKETS 64

/* the bucket of ino (Fibonacci hashing; the table is a power of two) */
static size_t bucket(const zf_inodes *t, uint64_t ino)
{
    return (size_t)((ino * 0x9E3779B97F4A7C15ull) >> 32) & (t->nbuckets - 1);
}

zf_ino_ent *zf_inodes_find(const zf_inodes *t, uint64_t ino)
{
    if (!t->nbuckets)
        return NULL;
    zf_ino_ent *e = t->buckets[bucket(t, ino)];
    while (e && e->ino != ino)
        e = e->next;
    return e;
}

/* double the bucket array once entries outnumber buckets; 0 or -ENOMEM */
static int grow(zf_inodes *t)
{
    if (t->count < t->nbuckets)
        return 0;
    size_t n = t->nbuckets ? t->nbuckets * 2 : FIRST_BUCKETS;
    zf_ino_ent **b = calloc(n, sizeof *b);
    if (!b)
        return t->nbuckets ? 0 : -ENOMEM; /* a full table still works, only slower */
    zf_inodes old = *t;
    t->buckets = b;
    t->nbuckets = n;
    for (size_t i = 0; i < old.nbuckets; i++) {
        for (zf_ino_ent *e = old.buckets[i], *next; e; e = next) {
            next = e->next;
            e->next = b[bucket(t, e->ino)];
            b[bucket(t, e->ino)] = e;
        }
    }
    free(old.buckets);
    return 0;
}

int zf_inodes_add(zf_inodes *t, uint64_t ino, zf_ino_ent **out)
{
    zf_ino_ent *e = calloc(1, sizeof *e);
    if (!e || grow(t) != 0) {
        free(e);
        return -ENOMEM;
    }
    e->ino = ino;
    e->next = t->buckets[bucket(t, ino)];
    t->buckets[bucket(t, ino)] = e;
    t->count++;
    *out = e;
    return 0;
}

void zf_inodes_remove(zf_inodes *t, zf_ino_ent *e)
{
    zf_ino_ent **p = &t->buckets[bucket(t, e->ino)];
    while (*p != e)
        p = &(*p)->next;
    *p = e->next;
    t->count--;
    free(e);
}

void zf_inodes_each(const zf_inodes *t, void (*fn)(zf_ino_ent *e, void *arg), void *arg)
{
    for (size_t i = 0; i < t->nbuckets; i++)
        for (zf_ino_ent *e = t->buckets[i]; e; e = e->next)
            fn(e, arg);
}

void zf_inodes_clear(zf_inodes *t)
{
    for (size_t i = 0; i < t->nbuckets; i++) {
        for (zf_ino_ent *e = t->buckets[i], *next; e; e = next) {
            next = e->next;
            free(e);
        }
    }
    free(t->buckets);
    t->buckets = NULL;
    t->nbuckets = t->count = 0;
}
