/* presize.c - size a directory's other arrays while its first one is sized.
 *
 * A request that sizes a file whose array is not sized yet (its size pass:
 * every chunk read and measured) is most often the first of several: `ls
 * -l`, or a `cat` or `rsync` of every file of the directory.  On a remote
 * store each pass waits mostly on round trips, so the other arrays' passes
 * are started at once, on background threads: their chunks come while the
 * first array's do and while it is read, and their first stat answers from
 * what is done.
 *
 * Bounds: once per directory and generation of the tree; the directory's
 * arrays in name order whose values (8 bytes each, as decoded) add up to at
 * most -o presize bytes (0: none); ZF_PRESIZE_THREADS passes at once, on
 * threads started when first needed.  A
 * background pass is the pass a request would run (zf_layout_size): a
 * request for the same array waits for it within its own deadline, its
 * result is persisted like any other, and a failure is kept for no one, so
 * the next request runs the pass again and reports it.  zf_presize_stop
 * drops the jobs not started and cancels those running (their waits for
 * the store end at once, base/deadline.h). */
#include <pthread.h>
#include <stdlib.h>

#include "base/deadline.h"
#include "base/log.h"
#include "zarrfs.h"

#define ZF_PRESIZE_THREADS 4

/* one array to size: its .txt node, in generation gen (a reference held) */
typedef struct job {
    zf_gen *gen;
    const zf_node *node;
    struct job *next;
} job;

/* a background thread and the request it serves */
typedef struct slot {
    zf_presize *p;
    pthread_t thread;
    uint64_t ticket;            /* its pass's request ticket, 0: idle (under mu) */
} slot;

struct zf_presize {
    zf_fs *fs;
    uint64_t budget;            /* bytes of values per directory; 0: never */
    pthread_mutex_t mu;
    pthread_cond_t wake;
    job *head, **tail;          /* jobs not started, in order */
    slot slots[ZF_PRESIZE_THREADS];
    unsigned nthreads;
    int stopping;
    const zf_gen *seen_gen;     /* the generation whose directories seen[] are */
    uint64_t *seen;             /* directories already sized ahead (their inos) */
    size_t nseen, capseen;
};

/* take the next job for s (NULL: stopping), its request begun */
static job *next_job(slot *s)
{
    zf_presize *p = s->p;
    pthread_mutex_lock(&p->mu);
    while (!p->stopping && !p->head)
        pthread_cond_wait(&p->wake, &p->mu);
    job *j = p->stopping ? NULL : p->head;
    if (j) {
        p->head = j->next;
        if (!p->head)
            p->tail = &p->head;
        s->ticket = zf_deadline_begin(ZF_DEADLINE_NONE); /* no bound but the stop */
        zf_deadline_set_unattended();                   /* its failures: for whoever asks */
    }
    pthread_mutex_unlock(&p->mu);
    return j;
}

/* a background thread: size each job's array (its result is the layout's) */
static void *worker(void *arg)
{
    slot *s = arg;
    zf_presize *p = s->p;
    job *j;
    while ((j = next_job(s))) {
        uint64_t size;
        (void)zf_layout_size(j->node->layout, ZF_VIEW_TXT, &size); /* (a failure: kept for no one) */
        pthread_mutex_lock(&p->mu);
        s->ticket = 0;
        zf_deadline_end();
        pthread_mutex_unlock(&p->mu);
        zf_gen_put(p->fs, j->gen);
        free(j);
    }
    return NULL;
}

zf_presize *zf_presize_start(zf_fs *fs, uint64_t budget)
{
    zf_presize *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->fs = fs;
    p->budget = budget;
    p->tail = &p->head;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    return p;
}

/* have a thread for each of `jobs` jobs, at most ZF_PRESIZE_THREADS (lock
 * held): started when first needed, so that a mount that never sizes ahead
 * has none */
static void start_threads(zf_presize *p, unsigned jobs)
{
    while (p->nthreads < jobs && p->nthreads < ZF_PRESIZE_THREADS) {
        slot *s = &p->slots[p->nthreads];
        s->p = p;
        if (pthread_create(&s->thread, NULL, worker, s) != 0) {
            zf_log_warn("cannot start a thread; %u arrays are sized ahead at once", p->nthreads);
            return; /* (with none, the jobs wait for the stop, which drops them) */
        }
        p->nthreads++;
    }
}

/* has directory ino of generation g been sized ahead?  Marks it so (lock
 * held); 1 also when it cannot be recorded (no memory: never twice) */
static int seen_before(zf_presize *p, const zf_gen *g, uint64_t ino)
{
    if (p->seen_gen != g) { /* (a newer tree: its directories are new) */
        p->seen_gen = g;
        p->nseen = 0;
    }
    for (size_t i = 0; i < p->nseen; i++)
        if (p->seen[i] == ino)
            return 1;
    if (p->nseen == p->capseen) {
        size_t cap = p->capseen ? 2 * p->capseen : 16;
        uint64_t *s = realloc(p->seen, cap * sizeof *s);
        if (!s)
            return 1;
        p->seen = s;
        p->capseen = cap;
    }
    p->seen[p->nseen++] = ino;
    return 0;
}

/* queue array node c of g (lock held); 0, or -1 without memory */
static int queue(zf_presize *p, zf_gen *g, const zf_node *c)
{
    job *j = malloc(sizeof *j);
    if (!j)
        return -1;
    zf_gen_hold(p->fs, g);
    *j = (job){g, c, NULL};
    *p->tail = j;
    p->tail = &j->next;
    return 0;
}

void zf_presize_dir(zf_presize *p, zf_gen *g, const zf_node *n)
{
    if (!p || !p->budget || n->is_dir || zf_layout_sized(n->layout))
        return;
    pthread_mutex_lock(&p->mu);
    const zf_node *d = zf_tree_node(g->tree, n->parent);
    if (!p->stopping && d && !seen_before(p, g, d->ino)) {
        uint64_t left = p->budget;
        unsigned jobs = 0;
        for (size_t i = 0; i < d->nchildren; i++) {
            const zf_node *c = zf_tree_child(g->tree, d, i);
            if (c->is_dir || c->view != ZF_VIEW_TXT || c->layout == n->layout ||
                zf_layout_sized(c->layout))
                continue;
            uint64_t nelems = zf_array_meta(zf_layout_array(c->layout))->nelems;
            if (nelems > left / 8) /* (too large for what is left: the next may fit) */
                continue;
            if (queue(p, g, c))
                break;
            left -= nelems * 8;
            jobs++;
        }
        start_threads(p, jobs);
        pthread_cond_broadcast(&p->wake);
    }
    pthread_mutex_unlock(&p->mu);
}

void zf_presize_stop(zf_presize *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    job *pending = p->head;
    p->head = NULL;
    p->tail = &p->head;
    for (unsigned i = 0; i < p->nthreads; i++)
        if (p->slots[i].ticket)
            zf_deadline_cancel(p->slots[i].ticket);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->nthreads; i++)
        pthread_join(p->slots[i].thread, NULL);
    while (pending) {
        job *j = pending;
        pending = j->next;
        zf_gen_put(p->fs, j->gen);
        free(j);
    }
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    free(p->seen);
    free(p);
}
