/* gen.c - tree generations.  The notifier thread re-checks the store every
 * timeout, off the request path, swaps in a rebuilt tree when the store
 * changed and tells the kernel to drop what it cached.  Every node number the
 * kernel holds keeps resolving to the generation that gave it out until the
 * kernel forgets it, so open files keep reading (and stat-ing) their own
 * version; a generation is freed when nothing refers to it any more. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "base/log.h"
#include "zarrfs.h"

/* shortest pause between two re-checks, so that timeout=0 does not spin */
#define CHECK_MIN_PAUSE 0.1

/* While no file or directory of the mount is open, the chunk stamps of sized
 * arrays (a stat or a listing per chunk: the bulk of a re-check's cost) are
 * compared only every CHUNK_EVERY timeouts, and at most one part in
 * CHUNK_SHARE of the time (a store with more chunks: less often); the
 * metadata documents every timeout.  A read that meets a changed chunk fails
 * and asks for a re-check whatever the pacing (ops.c), so a stale size is
 * never read from. */
#define CHUNK_EVERY 10
#define CHUNK_SHARE 1000

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

/* take g out of fs->live (lock held) */
static void gen_unlink(zf_fs *fs, zf_gen *g)
{
    if (g->prev)
        g->prev->next = g->next;
    else
        fs->live = g->next;
    if (g->next)
        g->next->prev = g->prev;
    g->prev = g->next = NULL;
}

/* drop one reference (lock held); the last one moves g onto the list *dead,
 * to be freed with gens_free once the lock is released */
static void unref_locked(zf_fs *fs, zf_gen *g, zf_gen **dead)
{
    if (--g->refs)
        return;
    gen_unlink(fs, g);
    g->next = *dead;
    *dead = g;
}

/* free the generations of a list made by unref_locked (lock not held) */
static void gens_free(zf_gen *dead)
{
    while (dead) {
        zf_gen *next = dead->next;
        zf_tree_free(dead->tree);
        free(dead);
        dead = next;
    }
}

void zf_gen_put(zf_fs *fs, zf_gen *g)
{
    if (!g)
        return;
    zf_gen *dead = NULL;
    pthread_mutex_lock(&fs->mu);
    unref_locked(fs, g, &dead);
    pthread_mutex_unlock(&fs->mu);
    gens_free(dead);
}

void zf_gen_hold(zf_fs *fs, zf_gen *g)
{
    pthread_mutex_lock(&fs->mu);
    g->refs++;
    pthread_mutex_unlock(&fs->mu);
}

zf_gen *zf_gen_get(zf_fs *fs)
{
    pthread_mutex_lock(&fs->mu);
    zf_gen *g = fs->cur;
    g->refs++;
    pthread_mutex_unlock(&fs->mu);
    return g;
}

const zf_node *zf_gen_node(zf_fs *fs, uint64_t ino, zf_gen **g)
{
    pthread_mutex_lock(&fs->mu);
    zf_gen *r = fs->cur;
    const zf_node *n = zf_tree_node(r->tree, ino);
    const zf_ino_ent *e = n ? NULL : zf_inodes_find(&fs->inodes, ino);
    if (e) {
        r = e->gen;
        n = zf_tree_node(r->tree, ino);
    }
    r->refs++;
    pthread_mutex_unlock(&fs->mu);
    *g = r;
    return n;
}

/* make entry e resolve to g, moving its reference (lock held) */
static void ent_move(zf_fs *fs, zf_ino_ent *e, zf_gen *g, zf_gen **dead)
{
    if (e->gen == g)
        return;
    g->refs++;
    if (e->gen)
        unref_locked(fs, e->gen, dead);
    e->gen = g;
}

int zf_gen_remember(zf_fs *fs, zf_gen *g, uint64_t ino)
{
    zf_gen *dead = NULL;
    pthread_mutex_lock(&fs->mu);
    if (g != fs->cur && zf_tree_node(fs->cur->tree, ino))
        g = fs->cur; /* swapped since g answered: a surviving directory pins the new tree */
    zf_ino_ent *e = zf_inodes_find(&fs->inodes, ino);
    int rc = e ? 0 : zf_inodes_add(&fs->inodes, ino, &e);
    if (rc == 0) {
        e->nlookup++;
        ent_move(fs, e, g, &dead);
    }
    pthread_mutex_unlock(&fs->mu);
    gens_free(dead);
    return rc;
}

void zf_gen_forget(zf_fs *fs, uint64_t ino, uint64_t n)
{
    zf_gen *dead = NULL;
    pthread_mutex_lock(&fs->mu);
    zf_ino_ent *e = zf_inodes_find(&fs->inodes, ino);
    if (e) {
        e->nlookup -= n < e->nlookup ? n : e->nlookup;
        if (e->nlookup == 0) {
            unref_locked(fs, e->gen, &dead);
            zf_inodes_remove(&fs->inodes, e);
        }
    }
    pthread_mutex_unlock(&fs->mu);
    gens_free(dead);
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

typedef struct rebase_ctx {
    zf_fs *fs;
    zf_gen *to;
    zf_gen *dead;
} rebase_ctx;

/* a held number the new tree also has (a surviving directory) now means the
 * new tree's node, so the old tree need not stay for it */
static void rebase_one(zf_ino_ent *e, void *arg)
{
    rebase_ctx *c = arg;
    if (e->gen != c->to && zf_tree_node(c->to->tree, e->ino))
        ent_move(c->fs, e, c->to, &c->dead);
}

/* a re-check could not tell what the store holds now (why): keep the last
 * view, and say so once until the store answers again (told_answers) */
static void told_unknown(zf_fs *fs, const char *why)
{
    if (!fs->recheck_failing)
        zf_log("the store could not be re-checked (%s); keeping the last view until it answers",
               why);
    fs->recheck_failing = 1;
}

/* a re-check could tell: after failures, say once that it answers again */
static void told_answers(zf_fs *fs)
{
    if (fs->recheck_failing)
        zf_log("the store answers again; the view follows its changes again");
    fs->recheck_failing = 0;
}

/* ask the store whether what it shows moved (an Icechunk branch): 1 with
 * *moved a store showing the new version or NULL, 0 (told_unknown) if that
 * cannot be told now */
static int update_store(zf_fs *fs, const zf_store *from, zf_store **moved)
{
    char why[256] = "";
    int rc = zf_store_update(from, moved, why, sizeof why);
    if (rc == ZF_OK)
        return 1;
    told_unknown(fs, *why ? why : zf_strerror(rc));
    return 0;
}

/* the fresh tree store shows now, or NULL (logged once: told_unknown)
 * when it could not say all of it: a failure never replaces what is shown */
static zf_tree *rebuild(zf_fs *fs, const zf_store *store)
{
    zf_tree *fresh = NULL;
    zf_layout_opts opts = *fs->opts; /* the tree reads opts only while it is built */
    opts.generation = fs->generation + 1;
    char why[400] = "";
    if (zf_tree_build(store, fs->cache, &opts, &fresh) != 0)
        told_unknown(fs, "the root metadata cannot be read");
    else if (zf_tree_incomplete(fresh, why, sizeof why))
        told_unknown(fs, why);
    else
        return fresh;
    zf_tree_free(fresh);
    return NULL;
}

/* does fresh show what the current tree does not (the chunks of sized
 * arrays too if chunks)?  1, or 0 (fresh freed); a current tree the store
 * could not tell all of is replaced by a whole one */
static int differs(zf_fs *fs, zf_tree *fresh, int chunks)
{
    char why[400] = "";
    int rc = zf_tree_incomplete(fs->cur->tree, why, sizeof why)
                 ? 1 : zf_tree_stale(fs->cur->tree, fresh, chunks, why, sizeof why);
    if (rc < 0)
        told_unknown(fs, why);
    else
        told_answers(fs);
    if (rc <= 0)
        zf_tree_free(fresh);
    return rc > 0;
}

/* rebuild the tree; if the store changed (its metadata, or if chunks the
 * chunks of sized arrays), make the new tree current and return the
 * replaced generation (with the reference fs->cur had), else NULL.  Runs on
 * the notifier thread only, the one writer of fs->cur. */
static zf_gen *check(zf_fs *fs, int chunks)
{
    const zf_store *from = zf_tree_store(fs->cur->tree);
    zf_store *moved = NULL; /* what it follows moved: a store showing its new version */
    if (!update_store(fs, from, &moved))
        return NULL;
    char why[400] = "";
    int same = moved ? 0 : zf_tree_unchanged(fs->cur->tree, chunks, why, sizeof why); /* remote: one HEAD */
    if (same) {
        if (same < 0)
            told_unknown(fs, why);
        else
            told_answers(fs);
        return NULL;
    }
    zf_tree *fresh = rebuild(fs, moved ? moved : from);
    if (!fresh) {
        zf_store_close(moved);
        return NULL;
    }
    if (moved) { /* a new snapshot: shown, even if nothing the tree compares changed */
        told_answers(fs);
        zf_tree_own_store(fresh, moved);
    } else if (!differs(fs, fresh, chunks))
        return NULL;
    struct timespec seen;
    clock_gettime(CLOCK_REALTIME, &seen);
    zf_tree_inherit_times(fresh, fs->cur->tree, (int64_t)seen.tv_sec * 1000000000 + seen.tv_nsec);
    pthread_mutex_lock(&fs->mu);
    zf_gen *g = gen_new(fs, fresh), *old = fs->cur;
    rebase_ctx c = {fs, g, NULL};
    if (g) {
        fs->cur = g;
        zf_inodes_each(&fs->inodes, rebase_one, &c);
    }
    pthread_mutex_unlock(&fs->mu);
    if (!g) {
        zf_log_error("out of memory while switching to the changed store");
        zf_tree_free(fresh);
        return NULL;
    }
    gens_free(c.dead); /* never old: the reference fs->cur had keeps it */
    fs->generation++;
    zf_log("the store changed; the view now shows its new state");
    return old;
}

/* wait on fs->wake until monotonic time t, a stop or a spurious wake-up (lock held) */
static void wait_until(zf_fs *fs, double t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec < 0 || ts.tv_nsec > 999999999L)
        ts.tv_nsec = 0;
    pthread_cond_timedwait(&fs->wake, &fs->mu, &ts);
}

/* the notifier thread: re-check the store every timeout (never in a request,
 * which would wait for a whole tree build), and invalidate a replaced tree
 * here too (notifying from inside a request could deadlock on the kernel's
 * page locks).  A pause is at least as long as the last check took, so
 * re-checking a large store uses at most half a core. */
static void *notifier(void *arg)
{
    zf_fs *fs = arg;
    double pause = fs->timeout > CHECK_MIN_PAUSE ? fs->timeout : CHECK_MIN_PAUSE;
    double due = now() + pause, soon = now() + CHECK_MIN_PAUSE, chunks_due = 0;
    pthread_mutex_lock(&fs->mu);
    while (!fs->stopping) {
        double t = fs->recheck_soon && soon < due ? soon : due;
        if (now() < t) {
            wait_until(fs, t);
            continue;
        }
        /* asked (a request, SIGUSR1), in use, or their turn: the chunks too */
        int chunks = fs->recheck_soon || fs->open || now() >= chunks_due;
        fs->recheck_soon = 0;
        pthread_mutex_unlock(&fs->mu);
        double start = now();
        zf_gen *old = check(fs, chunks);
        if (old) {
            invalidate(fs, old->tree);
            invalidate(fs, fs->cur->tree); /* new names, which the kernel may hold as absent */
            zf_gen_put(fs, old);
        }
        double end = now(), took = end - start;
        due = end + (took > pause ? took : pause);
        soon = end + (took > CHECK_MIN_PAUSE ? took : CHECK_MIN_PAUSE);
        if (chunks)
            chunks_due = end + (took * CHUNK_SHARE > pause * CHUNK_EVERY ? took * CHUNK_SHARE
                                                                        : pause * CHUNK_EVERY);
        pthread_mutex_lock(&fs->mu);
    }
    pthread_mutex_unlock(&fs->mu);
    return NULL;
}

void zf_gen_recheck_soon(zf_fs *fs)
{
    pthread_mutex_lock(&fs->mu);
    if (!fs->recheck_soon) {
        fs->recheck_soon = 1;
        pthread_cond_signal(&fs->wake);
    }
    pthread_mutex_unlock(&fs->mu);
}

int zf_gen_start(zf_fs *fs, zf_tree *tree)
{
    pthread_condattr_t ca;
    pthread_mutex_init(&fs->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* timed waits ignore clock jumps */
    pthread_cond_init(&fs->wake, &ca);
    pthread_condattr_destroy(&ca);
    fs->cur = gen_new(fs, tree);
    return fs->cur ? 0 : -ENOMEM;
}

/* the thread that turns each SIGUSR1 (blocked in every thread: main.c)
 * into a re-check; zf_gen_stop_notifier ends it with one of its own */
static void *recheck_on_signal(void *arg)
{
    zf_fs *fs = arg;
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    for (;;) {
        int sig = 0;
        sigwait(&usr1, &sig);
        pthread_mutex_lock(&fs->mu);
        int stopping = fs->stopping;
        pthread_mutex_unlock(&fs->mu);
        if (stopping)
            return NULL;
        zf_log_info("SIGUSR1: re-checking the store now");
        zf_gen_recheck_soon(fs);
    }
}

int zf_gen_start_notifier(zf_fs *fs)
{
    sigset_t all, old; /* SIGTERM and SIGINT go to the session loop's thread */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&fs->notifier, NULL, notifier, fs);
    fs->notifier_running = rc == 0;
    if (rc == 0) {
        rc = pthread_create(&fs->signal_waiter, NULL, recheck_on_signal, fs);
        fs->signal_waiter_running = rc == 0;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return -rc;
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
    if (fs->signal_waiter_running && pthread_kill(fs->signal_waiter, SIGUSR1) == 0)
        pthread_join(fs->signal_waiter, NULL);
    fs->signal_waiter_running = 0;
}

void zf_gen_stop(zf_fs *fs)
{
    zf_gen_stop_notifier(fs);
    zf_inodes_clear(&fs->inodes); /* the session is gone: nothing can use a number */
    while (fs->live) {
        zf_gen *g = fs->live;
        gen_unlink(fs, g);
        zf_tree_free(g->tree);
        free(g);
    }
    fs->cur = NULL;
    pthread_cond_destroy(&fs->wake);
    pthread_mutex_destroy(&fs->mu);
}
