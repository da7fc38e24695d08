/* gen.c - tree generations: re-check the store after the timeout, swap in a
 * rebuilt tree when it changed, and tell the kernel to drop what it cached. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "zarrfs.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* a new generation holding one reference, linked into fs->live (lock held) */
static zf_gen *gen_new(zf_fs *fs, zf_tree *tree)
{
    zf_gen *g = calloc(1, sizeof *g);
    if (g) {
        g->tree = tree;
        g->refs = 1;
        g->next = fs->live;
        if (fs->live)
            fs->live->prev = g;
        fs->live = g;
    }
    return g;
}

static void gen_unlink(zf_fs *fs, zf_gen *g)
{
    if (g->prev)
        g->prev->next = g->next;
    else
        fs->live = g->next;
    if (g->next)
        g->next->prev = g->prev;
}

void zf_gen_put(zf_fs *fs, zf_gen *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&fs->mu);
    int last = --g->refs == 0;
    if (last)
        gen_unlink(fs, g);
    pthread_mutex_unlock(&fs->mu);
    if (last) {
        zf_tree_free(g->tree);
        free(g);
    }
}

/* tell the kernel to drop the entries and cached pages of every node of old */
static void invalidate(zf_fs *fs, const zf_tree *t)
{
    for (uint64_t i = 0, n = zf_tree_count(t); i < n; i++) {
        const zf_node *d = zf_tree_node_at(t, i);
        fuse_lowlevel_notify_inval_inode(fs->se, d->ino, 0, 0);
        for (size_t k = 0; d->is_dir && k < d->nchildren; k++) {
            const zf_node *c = zf_tree_child(t, d, k);
            fuse_lowlevel_notify_inval_entry(fs->se, d->ino, c->name, strlen(c->name));
        }
    }
}

/* the notifier thread: invalidates replaced generations outside any request
 * (notifying from inside a request could deadlock on the kernel's page locks) */
static void *notifier(void *arg)
{
    zf_fs *fs = arg;
    pthread_mutex_lock(&fs->mu);
    for (;;) {
        while (!fs->replaced && !fs->stopping)
            pthread_cond_wait(&fs->wake, &fs->mu);
        zf_gen *old = fs->replaced;
        fs->replaced = NULL;
        if (!old)
            break;
        pthread_mutex_unlock(&fs->mu);
        invalidate(fs, old->tree);
        zf_gen_put(fs, old);
        pthread_mutex_lock(&fs->mu);
    }
    pthread_mutex_unlock(&fs->mu);
    return NULL;
}

int zf_gen_start(zf_fs *fs, zf_tree *tree)
{
    pthread_mutex_init(&fs->mu, NULL);
    pthread_cond_init(&fs->wake, NULL);
    fs->cur = gen_new(fs, tree);
    fs->checked = now();
    return fs->cur ? 0 : -1;
}

int zf_gen_start_notifier(zf_fs *fs)
{
    fs->notifier_running = pthread_create(&fs->notifier, NULL, notifier, fs) == 0;
    return fs->notifier_running ? 0 : -1;
}

void zf_gen_stop_notifier(zf_fs *fs)
{
    pthread_mutex_lock(&fs->mu);
    fs->stopping = 1;
    pthread_cond_signal(&fs->wake);
    pthread_mutex_unlock(&fs->mu);
    if (fs->notifier_running)
        pthread_join(fs->notifier, NULL);
    fs->notifier_running = 0;
}

void zf_gen_stop(zf_fs *fs)
{
    zf_gen_stop_notifier(fs);
    while (fs->live) { /* the session is gone: no reference can be used any more */
        zf_gen *g = fs->live;
        gen_unlink(fs, g);
        zf_tree_free(g->tree);
        free(g);
    }
    fs->cur = fs->replaced = NULL;
    pthread_cond_destroy(&fs->wake);
    pthread_mutex_destroy(&fs->mu);
}

/* rebuild the tree; swap it in if the store changed */
static void check(zf_fs *fs)
{
    zf_tree *fresh = NULL;
    zf_layout_opts opts = *fs->opts; /* the tree reads opts only while it is built */
    opts.generation = fs->generation + 1;
    if (zf_tree_build(fs->store, fs->cache, &opts, &fresh) != 0) {
        zf_log("the store can no longer be read; keeping the last view");
        return;
    }
    int stale = zf_tree_stale(fs->cur->tree, fresh); /* only this thread swaps cur */
    zf_gen *g = NULL, *older = NULL;
    if (stale) {
        pthread_mutex_lock(&fs->mu);
        g = gen_new(fs, fresh);
        pthread_mutex_unlock(&fs->mu);
    }
    if (!g) {
        if (stale)
            zf_log("out of memory while switching to the changed store");
        zf_tree_free(fresh);
        return;
    }
    zf_log("the store changed; the view now shows its new state");
    fs->generation++;
    pthread_mutex_lock(&fs->mu);
    older = fs->replaced;          /* not yet invalidated: its nodes are in cur too */
    fs->replaced = fs->cur;        /* fs's reference moves to the notifier */
    fs->cur = g;
    pthread_cond_signal(&fs->wake);
    pthread_mutex_unlock(&fs->mu);
    zf_gen_put(fs, older);
}

zf_gen *zf_gen_get(zf_fs *fs)
{
    double t = now();
    pthread_mutex_lock(&fs->mu);
    int due = !fs->checking && t - fs->checked >= fs->timeout;
    if (due)
        fs->checking = 1;
    pthread_mutex_unlock(&fs->mu);
    if (due) {
        check(fs);
        pthread_mutex_lock(&fs->mu);
        fs->checking = 0;
        fs->checked = now();
        pthread_mutex_unlock(&fs->mu);
    }
    pthread_mutex_lock(&fs->mu);
    zf_gen *g = fs->cur;
    g->refs++;
    pthread_mutex_unlock(&fs->mu);
    return g;
}
