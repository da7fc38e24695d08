/* cred.c - a credential provider (cred.h): the current value behind a lock,
 * fetched again by a thread of its own before it expires, or by the first
 * request that finds it unusable. */
#include "store/cred.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/deadline.h"
#include "base/err.h"

#define LEAD_MAX_S 900      /* refresh at most this long before the expiry */
#define MARGIN_MAX_S 30     /* a value is not used within this of its expiry */
#define RETRY_MIN_S 1       /* the first wait after a failed refresh */
#define RETRY_MAX_S 60
#define FRESH_S 5           /* a value this young is not rejected (zf_cred_reject) */
#define DESC_CAP 160
#define WHY_CAP 256

struct zf_cred {
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* refreshing ended, or stop (monotonic clock) */
    zf_cred_fetch_fn fetch;     /* NULL: a static value */
    void *ctx;
    void (*free_ctx)(void *);
    zf_cred_note_fn note;
    zf_cred_value *cur;         /* never NULL once open */
    int64_t fetched;            /* when cur was fetched (epoch s) */
    int64_t usable_until;       /* epoch s; INT64_MAX: never expires */
    int64_t refresh_at;         /* epoch s: the thread's next fetch */
    unsigned failures;          /* refreshes failed in a row */
    int refreshing;
    int stop;
    int thread_alive;
    pthread_t thr;
    uint64_t rng;
    char desc[DESC_CAP];
    char why[WHY_CAP];          /* the last refresh's failure */
    zf_cred *reg_next;
};

/* ---- the registry (fork: the child has no refresh thread) ---------------- */

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static zf_cred *registry;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
    pthread_mutex_lock(&registry_mu);
    for (zf_cred *c = registry; c; c = c->reg_next)
        pthread_mutex_lock(&c->mu);
}

static void fork_parent(void)
{
    for (zf_cred *c = registry; c; c = c->reg_next)
        pthread_mutex_unlock(&c->mu);
    pthread_mutex_unlock(&registry_mu);
}

static void fork_child(void)
{
    for (zf_cred *c = registry; c; c = c->reg_next) {
        c->thread_alive = 0;
        c->refreshing = 0; /* the thread that was fetching is not in the child */
        pthread_mutex_unlock(&c->mu);
    }
    pthread_mutex_unlock(&registry_mu);
}

static void install_atfork(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* ---- values --------------------------------------------------------------- */

static void wipe_free(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

void zf_cred_value_clear(zf_cred_value *v)
{
    free(v->id);
    wipe_free(v->secret);
    wipe_free(v->token);
    memset(v, 0, sizeof *v);
}

static void value_free(zf_cred_value *v)
{
    if (v) {
        zf_cred_value_clear(v);
        free(v);
    }
}

static int64_t now_s(void)
{
    return (int64_t)time(NULL);
}

static uint64_t next_rand(zf_cred *c)
{
    c->rng ^= c->rng >> 12;
    c->rng ^= c->rng << 25;
    c->rng ^= c->rng >> 27;
    return c->rng * 2685821657736338717ull;
}

static void note(const zf_cred *c, zf_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(const zf_cred *c, zf_log_level level, const char *fmt, ...)
{
    if (!c->note)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    c->note(level, line);
}

/* make v (fetched at t) the current value and plan its refresh (mu held) */
static void install(zf_cred *c, zf_cred_value *v, int64_t t)
{
    v->gen = c->cur ? c->cur->gen + 1 : 1;
    v->refs = 1;
    zf_cred_value *old = c->cur;
    c->cur = v;
    c->fetched = t;
    c->failures = 0;
    if (!v->expires) {
        c->usable_until = c->refresh_at = INT64_MAX;
    } else {
        int64_t life = v->expires > t ? v->expires - t : 0;
        int64_t margin = life / 10 < MARGIN_MAX_S ? life / 10 : MARGIN_MAX_S;
        int64_t lead = life / 4 < LEAD_MAX_S ? life / 4 : LEAD_MAX_S;
        int64_t jitter = lead / 4 ? (int64_t)(next_rand(c) % (uint64_t)(lead / 4 + 1)) : 0;
        c->usable_until = v->expires - margin;
        c->refresh_at = v->expires - lead - jitter;
    }
    if (old && --old->refs == 0)
        value_free(old);
}

/* a failed refresh (mu held): try again after a growing wait, before the
 * value becomes unusable when that is sooner */
static void failed(zf_cred *c, int64_t t)
{
    unsigned k = c->failures < 6 ? c->failures : 6;
    int64_t wait = (int64_t)RETRY_MIN_S << k;
    if (wait > RETRY_MAX_S)
        wait = RETRY_MAX_S;
    c->failures++;
    c->refresh_at = t + wait;
}

/* fetch a value (the caller set refreshing; mu not held); returns with mu
 * held, refreshing cleared and waiters woken */
static int refresh_locked_after(zf_cred *c, const char *who)
{
    zf_cred_value *v = calloc(1, sizeof *v);
    char desc[DESC_CAP], why[WHY_CAP] = "";
    pthread_mutex_lock(&c->mu);
    memcpy(desc, c->desc, sizeof desc);
    pthread_mutex_unlock(&c->mu);
    int rc = v ? c->fetch(c->ctx, v, desc, sizeof desc, why, sizeof why) : ZF_ENOMEM;
    if (rc == ZF_OK && v->expires && v->expires <= now_s()) {
        rc = ZF_EIO;
        snprintf(why, sizeof why, "the credentials it gave have already expired");
    }
    if (rc == ZF_OK && !v->secret && !v->token) {
        rc = ZF_EIO;
        snprintf(why, sizeof why, "it gave no credentials");
    }
    int64_t t = now_s();
    pthread_mutex_lock(&c->mu);
    c->refreshing = 0;
    pthread_cond_broadcast(&c->cv);
    if (rc == ZF_OK) {
        desc[DESC_CAP - 1] = '\0';
        memcpy(c->desc, desc, sizeof desc);
        install(c, v, t);
        c->why[0] = '\0';
        if (c->cur->gen > 1)
            note(c, ZF_LOG_INFO, "credentials: refreshed from %s (%s); they expire in %llds", c->desc,
                 who, (long long)(c->cur->expires - t));
        else if (c->cur->expires)
            note(c, ZF_LOG_INFO, "credentials: from %s; they expire in %llds", c->desc,
                 (long long)(c->cur->expires - t));
        else
            note(c, ZF_LOG_INFO, "credentials: from %s", c->desc);
        return ZF_OK;
    }
    value_free(v);
    if (!c->cur) { /* the first fetch: the caller reports it */
        snprintf(c->why, sizeof c->why, "%s", *why ? why : zf_strerror(rc));
        return rc;
    }
    if (!*why)
        snprintf(why, sizeof why, "%s", zf_strerror(rc));
    snprintf(c->why, sizeof c->why, "%s", why);
    failed(c, t);
    if (c->usable_until > t)
        note(c, ZF_LOG_WARN, "credentials: refresh from %s failed: %s; the current ones serve "
             "for %llds more", c->desc, c->why, (long long)(c->usable_until - t));
    else
        note(c, ZF_LOG_ERROR, "credentials: refresh from %s failed: %s; reads fail until a "
             "refresh succeeds", c->desc, c->why);
    return rc;
}

/* ---- the refresh thread ---------------------------------------------------- */

/* the monotonic time (for cond waits) s seconds from now */
static struct timespec mono_in(int64_t s)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += (time_t)(s > 86400 ? 86400 : s < 0 ? 0 : s);
    return ts;
}

static void *refresher(void *arg)
{
    zf_cred *c = arg;
    pthread_mutex_lock(&c->mu);
    while (!c->stop) {
        int64_t t = now_s();
        if (c->refresh_at > t || c->refreshing) {
            struct timespec until = mono_in(c->refreshing ? 1 : c->refresh_at - t);
            pthread_cond_timedwait(&c->cv, &c->mu, &until);
            continue;
        }
        c->refreshing = 1;
        pthread_mutex_unlock(&c->mu);
        refresh_locked_after(c, "ahead of the expiry");
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* start the thread if a temporary value needs one and none runs (mu held) */
static void ensure_thread(zf_cred *c)
{
    if (c->thread_alive || !c->fetch || c->refresh_at == INT64_MAX || c->stop)
        return;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 256 << 10);
    if (pthread_create(&c->thr, &a, refresher, c) == 0)
        c->thread_alive = 1;
    pthread_attr_destroy(&a);
}

/* ---- the interface ---------------------------------------------------------- */

static zf_cred *cred_new(const char *desc, zf_cred_note_fn notefn)
{
    zf_cred *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_once(&atfork_once, install_atfork);
    pthread_mutex_init(&c->mu, NULL);
    zf_deadline_cond_init(&c->cv);
    c->note = notefn;
    c->rng = ((uint64_t)time(NULL) << 20) ^ (uint64_t)(uintptr_t)c ^ 0x9e3779b97f4a7c15ull;
    snprintf(c->desc, sizeof c->desc, "%s", desc);
    pthread_mutex_lock(&registry_mu);
    c->reg_next = registry;
    registry = c;
    pthread_mutex_unlock(&registry_mu);
    return c;
}

int zf_cred_open_static(const char *desc, zf_cred_value *v, zf_cred_note_fn notefn,
                        zf_cred **out)
{
    *out = NULL;
    zf_cred *c = cred_new(desc, notefn);
    zf_cred_value *h = c ? malloc(sizeof *h) : NULL;
    if (!h) {
        zf_cred_value_clear(v);
        zf_cred_free(c);
        return ZF_ENOMEM;
    }
    *h = *v;
    memset(v, 0, sizeof *v);
    h->expires = 0;
    install(c, h, now_s());
    note(c, ZF_LOG_INFO, "credentials: from %s", c->desc);
    *out = c;
    return ZF_OK;
}

int zf_cred_open(const char *desc, zf_cred_fetch_fn fetch, void *ctx, void (*free_ctx)(void *),
                 zf_cred_note_fn notefn, zf_cred **out, char *err, size_t errcap)
{
    *out = NULL;
    zf_cred *c = cred_new(desc, notefn);
    if (!c) {
        if (free_ctx)
            free_ctx(ctx);
        return ZF_ENOMEM;
    }
    c->fetch = fetch;
    c->ctx = ctx;
    c->free_ctx = free_ctx;
    c->refreshing = 1;
    int rc = refresh_locked_after(c, "at start");
    if (rc != ZF_OK && err && errcap)
        snprintf(err, errcap, "credentials from %s: %s", c->desc, c->why);
    pthread_mutex_unlock(&c->mu);
    if (rc != ZF_OK) {
        zf_cred_free(c);
        return rc;
    }
    *out = c;
    return ZF_OK;
}

/* hold the current value (mu held) */
static const zf_cred_value *hold(zf_cred *c)
{
    c->cur->refs++;
    return c->cur;
}

int zf_cred_get(zf_cred *c, const zf_cred_value **v, char *err, size_t errcap)
{
    *v = NULL;
    pthread_mutex_lock(&c->mu);
    ensure_thread(c);
    int tried = 0;
    for (;;) {
        int64_t t = now_s();
        if (c->usable_until > t) {
            *v = hold(c);
            pthread_mutex_unlock(&c->mu);
            return ZF_OK;
        }
        if (tried) /* this request's own refresh failed */
            break;
        if (c->refreshing) {
            if (zf_deadline_wait(&c->cv, &c->mu) == ETIMEDOUT) {
                pthread_mutex_unlock(&c->mu);
                if (err && errcap)
                    snprintf(err, errcap, "credentials from %s: the request's time budget "
                             "was spent waiting for a refresh", c->desc);
                return ZF_ETIMEDOUT;
            }
            tried = !c->refreshing && c->usable_until <= now_s(); /* the other's failed */
            continue;
        }
        c->refreshing = 1;
        pthread_mutex_unlock(&c->mu);
        refresh_locked_after(c, "they had expired");
        tried = 1;
    }
    if (err && errcap)
        snprintf(err, errcap, "credentials from %s expired and cannot be refreshed: %s", c->desc,
                 *c->why ? c->why : "rejected by the server");
    pthread_mutex_unlock(&c->mu);
    return ZF_EIO;
}

void zf_cred_put(zf_cred *c, const zf_cred_value *v)
{
    if (!v)
        return;
    zf_cred_value *w = (zf_cred_value *)v;
    pthread_mutex_lock(&c->mu);
    int last = --w->refs == 0;
    pthread_mutex_unlock(&c->mu);
    if (last)
        value_free(w);
}

int zf_cred_reject(zf_cred *c, const zf_cred_value *v)
{
    pthread_mutex_lock(&c->mu);
    int64_t t = now_s();
    int newer = v && c->cur->gen != v->gen;
    int again = c->fetch && v && v->expires && (newer || t - c->fetched >= FRESH_S);
    if (again && !newer && c->usable_until != 0) {
        c->usable_until = 0;
        c->refresh_at = t;
        note(c, ZF_LOG_INFO, "credentials from %s were rejected as expired; fetching new ones",
             c->desc);
    }
    pthread_mutex_unlock(&c->mu);
    return again;
}

void zf_cred_describe(zf_cred *c, char *out, size_t cap)
{
    pthread_mutex_lock(&c->mu);
    snprintf(out, cap, "%s", c->desc);
    pthread_mutex_unlock(&c->mu);
}

void zf_cred_free(zf_cred *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&registry_mu);
    for (zf_cred **pp = &registry; *pp; pp = &(*pp)->reg_next)
        if (*pp == c) {
            *pp = c->reg_next;
            break;
        }
    pthread_mutex_unlock(&registry_mu);
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    int alive = c->thread_alive;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (alive)
        pthread_join(c->thr, NULL);
    if (c->cur && --c->cur->refs == 0)
        value_free(c->cur);
    if (c->free_ctx)
        c->free_ctx(c->ctx);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    explicit_bzero(c->why, sizeof c->why);
    free(c);
}
