/* test_deadline.c - unit tests for the per-thread request deadline
 * (src/base/deadline.c): the arithmetic of deadline.h (after, bound,
 * remaining, spent, with and without a deadline, at the edges of the clock),
 * that a deadline belongs to its thread only, that zf_deadline_wait ends
 * at the deadline (and not before) or when woken, and cancellation: a
 * request cancelled by its ticket from another thread (its waits end within
 * ZF_DEADLINE_POLL_MS, with or without a deadline), tickets of ended requests
 * cancelling nothing, helpers adopting a request's cancellation, and
 * zf_deadline_cancel_all reaching every thread.  Run from tests/. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "base/deadline.h"

#include "check.h"

static void sleep_ms(long ms)
{
    nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000}, NULL);
}

/* no deadline: nothing is bounded, nothing is spent */
static void test_none(void)
{
    zf_deadline_clear();
    CHECK(zf_deadline_bound(ZF_DEADLINE_NONE) == ZF_DEADLINE_NONE, "none after clear");
    CHECK(zf_deadline_remaining_ms() == ZF_DEADLINE_NONE, "none: no remaining time");
    CHECK(!zf_deadline_spent(), "none: never spent");
    CHECK(zf_deadline_bound(12345) == 12345, "none: a call's own deadline stands");
    CHECK(zf_deadline_bound(ZF_DEADLINE_NONE) == ZF_DEADLINE_NONE, "none and none");
}

/* after, bound and remaining against a deadline set by hand */
static void test_arithmetic(void)
{
    uint64_t now = zf_deadline_now_ms();
    CHECK(now > 0, "the monotonic clock runs");
    uint64_t a = zf_deadline_after(1000);
    CHECK(a >= now + 1000 && a <= now + 1100, "after(1000) = now + 1000 (%llu vs %llu)",
          (unsigned long long)a, (unsigned long long)now);
    CHECK(zf_deadline_after(0) >= now, "after(0) is now");
    CHECK(zf_deadline_after(UINT64_MAX - 5) == ZF_DEADLINE_NONE, "after saturates: no overflow");
    CHECK(zf_deadline_after(ZF_DEADLINE_NONE) == ZF_DEADLINE_NONE, "after(none) is none");

    zf_deadline_set(a);
    CHECK(zf_deadline_bound(ZF_DEADLINE_NONE) == a, "bound(none) is what was set");
    CHECK(zf_deadline_bound(a + 500) == a, "an own deadline later than the request's: the request's");
    CHECK(zf_deadline_bound(a - 500) == a - 500, "an own deadline earlier: its own");
    CHECK(zf_deadline_bound(ZF_DEADLINE_NONE) == a, "no own deadline: the request's");
    uint64_t left = zf_deadline_remaining_ms();
    CHECK(left > 900 && left <= 1000, "about 1000 ms left, got %llu", (unsigned long long)left);
    CHECK(!zf_deadline_spent(), "not spent yet");

    zf_deadline_set(now > 10 ? now - 10 : 0); /* in the past */
    CHECK(zf_deadline_remaining_ms() == 0, "past: 0 left (no wrap-around)");
    CHECK(zf_deadline_spent(), "past: spent");
    zf_deadline_set(0);
    CHECK(zf_deadline_remaining_ms() == 0 && zf_deadline_spent(), "0: spent");
    zf_deadline_clear();
    CHECK(!zf_deadline_spent() && zf_deadline_bound(ZF_DEADLINE_NONE) == ZF_DEADLINE_NONE,
          "clear ends it");
}

/* a short deadline is spent once its time has passed */
static void test_passes(void)
{
    zf_deadline_set(zf_deadline_after(30));
    CHECK(!zf_deadline_spent(), "30 ms: not spent at once");
    sleep_ms(50);
    CHECK(zf_deadline_spent() && zf_deadline_remaining_ms() == 0, "spent after 50 ms");
    zf_deadline_clear();
}

static void *other_thread(void *arg)
{
    uint64_t *seen = arg;
    *seen = zf_deadline_bound(ZF_DEADLINE_NONE);
    zf_deadline_set(1); /* must not reach the main thread */
    return NULL;
}

/* the deadline is the calling thread's alone */
static void test_thread_local(void)
{
    uint64_t mine = zf_deadline_after(5000), seen = 0;
    zf_deadline_set(mine);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, other_thread, &seen) == 0, "thread starts");
    pthread_join(t, NULL);
    CHECK(seen == ZF_DEADLINE_NONE, "a new thread has no deadline");
    CHECK(zf_deadline_bound(ZF_DEADLINE_NONE) == mine, "another thread's set leaves ours");
    zf_deadline_clear();
}

typedef struct waker {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int woken;
} waker;

static void *wake_later(void *arg)
{
    waker *w = arg;
    sleep_ms(50);
    pthread_mutex_lock(&w->mu);
    w->woken = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* zf_deadline_wait: ETIMEDOUT at the deadline, not before; 0 when woken first */
static void test_wait(void)
{
    waker w = {.woken = 0};
    pthread_mutex_init(&w.mu, NULL);
    zf_deadline_cond_init(&w.cv);

    uint64_t t0 = zf_deadline_now_ms();
    zf_deadline_set(t0 + 150);
    pthread_mutex_lock(&w.mu);
    int rc = 0;
    while (rc != ETIMEDOUT)
        rc = zf_deadline_wait(&w.cv, &w.mu); /* nobody wakes it */
    pthread_mutex_unlock(&w.mu);
    uint64_t took = zf_deadline_now_ms() - t0;
    CHECK(took >= 150 && took < 1000, "an unwoken wait ends at the deadline (%llu ms)",
          (unsigned long long)took);

    zf_deadline_set(zf_deadline_after(5000));
    pthread_t t;
    CHECK(pthread_create(&t, NULL, wake_later, &w) == 0, "waker starts");
    t0 = zf_deadline_now_ms();
    pthread_mutex_lock(&w.mu);
    rc = 0;
    while (!w.woken && rc == 0)
        rc = zf_deadline_wait(&w.cv, &w.mu);
    pthread_mutex_unlock(&w.mu);
    pthread_join(t, NULL);
    took = zf_deadline_now_ms() - t0;
    CHECK(rc == 0 && w.woken && took < 2000, "woken before the deadline: 0 (rc %d, %llu ms)", rc,
          (unsigned long long)took);

    zf_deadline_set(zf_deadline_now_ms() - 1); /* already spent: no wait at all */
    pthread_mutex_lock(&w.mu);
    rc = zf_deadline_wait(&w.cv, &w.mu);
    pthread_mutex_unlock(&w.mu);
    CHECK(rc == ETIMEDOUT, "a spent deadline: ETIMEDOUT at once (%d)", rc);
    zf_deadline_clear();
    pthread_cond_destroy(&w.cv);
    pthread_mutex_destroy(&w.mu);
}

/* a thread waiting cancellably on a condition nobody signals */
typedef struct sleeper {
    waker w;
    uint64_t abs_ms;         /* its deadline (ZF_DEADLINE_NONE: none) */
    zf_deadline_ctx adopt;   /* when adopt.cancel: work under another request's */
    uint64_t ticket;         /* out: its request's ticket (0 until it waits) */
    int rc;                  /* out: what the wait ended with */
    uint64_t took;           /* out: ms from the ticket to the end of the wait */
} sleeper;

static void *sleep_until_cancelled(void *arg)
{
    sleeper *s = arg;
    uint64_t ticket = 0;
    if (s->adopt.cancel)
        zf_deadline_restore(s->adopt);
    else
        ticket = zf_deadline_begin(s->abs_ms);
    pthread_mutex_lock(&s->w.mu);
    uint64_t t0 = zf_deadline_now_ms();
    __atomic_store_n(&s->ticket, ticket ? ticket : 1, __ATOMIC_RELEASE);
    int rc = 0;
    while (rc == 0 && zf_deadline_now_ms() - t0 < 10000)
        rc = zf_deadline_wait(&s->w.cv, &s->w.mu); /* nobody signals: 0 every poll */
    s->took = zf_deadline_now_ms() - t0;
    s->rc = rc;
    pthread_mutex_unlock(&s->w.mu);
    zf_deadline_end();
    return NULL;
}

static void sleeper_start(sleeper *s, pthread_t *t)
{
    pthread_mutex_init(&s->w.mu, NULL);
    zf_deadline_cond_init(&s->w.cv);
    CHECK(pthread_create(t, NULL, sleep_until_cancelled, s) == 0, "sleeper starts");
    while (!__atomic_load_n(&s->ticket, __ATOMIC_ACQUIRE))
        sleep_ms(1);
}

static void sleeper_join(sleeper *s, pthread_t t)
{
    pthread_join(t, NULL);
    pthread_cond_destroy(&s->w.cv);
    pthread_mutex_destroy(&s->w.mu);
}

/* begin / cancel / end on the calling thread: what a cancelled request sees */
static void test_cancel_self(void)
{
    uint64_t a = zf_deadline_begin(ZF_DEADLINE_NONE);
    CHECK(a != 0 && !zf_deadline_cancelled() && !zf_deadline_spent(), "a fresh request runs");
    CHECK(zf_deadline_remaining_ms() == ZF_DEADLINE_NONE, "no deadline: no bound");
    zf_deadline_cancel(a);
    CHECK(zf_deadline_cancelled() && zf_deadline_spent(), "cancelled: spent");
    CHECK(zf_deadline_remaining_ms() == 0 && zf_deadline_bound(ZF_DEADLINE_NONE) == 0 &&
          zf_deadline_bound(12345) == 0, "cancelled: no time left, whatever the own bound");
    CHECK(zf_deadline_flag_set(zf_deadline_flag()), "its flag is set");
    zf_deadline_end();
    CHECK(!zf_deadline_cancelled() && !zf_deadline_spent() && zf_deadline_flag() == NULL,
          "ended: the thread serves nothing");
    uint64_t b = zf_deadline_begin(zf_deadline_after(5000));
    CHECK(b != a, "tickets are not reused (%llu, %llu)", (unsigned long long)a,
          (unsigned long long)b);
    zf_deadline_cancel(a); /* the old request's ticket */
    CHECK(!zf_deadline_cancelled() && zf_deadline_remaining_ms() > 4000,
          "an ended request's ticket cancels nothing");
    CHECK(!zf_deadline_flag_set(NULL), "no flag, no stop: not set");
    zf_deadline_end();
}

/* another thread cancels a request whose thread waits: the wait ends within
 * the poll period, with a deadline far off and with none */
static void test_cancel_wait(void)
{
    for (int with_deadline = 0; with_deadline < 2; with_deadline++) {
        sleeper s = {.abs_ms = with_deadline ? zf_deadline_after(60000) : ZF_DEADLINE_NONE};
        pthread_t t;
        sleeper_start(&s, &t);
        sleep_ms(150); /* it waits (and wakes every poll period without ending) */
        uint64_t t0 = zf_deadline_now_ms();
        zf_deadline_cancel(s.ticket);
        sleeper_join(&s, t);
        uint64_t late = zf_deadline_now_ms() - t0;
        CHECK(s.rc == ETIMEDOUT, "a cancelled wait ends as spent (%d)", s.rc);
        CHECK(s.took >= 150 && late < ZF_DEADLINE_POLL_MS + 400,
              "ended %llu ms after the cancel (waited %llu ms; %s deadline)",
              (unsigned long long)late, (unsigned long long)s.took, with_deadline ? "a" : "no");
    }
}

/* a helper under zf_deadline_restore ends with the request it works for */
static void test_cancel_helper(void)
{
    uint64_t ticket = zf_deadline_begin(ZF_DEADLINE_NONE);
    sleeper s = {.adopt = zf_deadline_save()};
    CHECK(s.adopt.cancel != NULL && s.adopt.abs_ms == ZF_DEADLINE_NONE, "the request's context");
    pthread_t t;
    sleeper_start(&s, &t);
    sleep_ms(50);
    zf_deadline_cancel(ticket);
    sleeper_join(&s, t);
    CHECK(s.rc == ETIMEDOUT && s.took < 1000, "the helper's wait ended with the request (%d, %llu ms)",
          s.rc, (unsigned long long)s.took);
    zf_deadline_end();
}

/* cancel_all (last: it is for good) ends every thread's waits, those that
 * serve no request too */
static void test_cancel_all(void)
{
    CHECK(!zf_deadline_stopping(), "not stopping yet");
    sleeper s = {.abs_ms = ZF_DEADLINE_NONE};
    pthread_t t;
    sleeper_start(&s, &t);
    sleep_ms(50);
    zf_deadline_cancel_all();
    sleeper_join(&s, t);
    CHECK(s.rc == ETIMEDOUT && s.took < 1000, "a waiting thread ended (%d, %llu ms)", s.rc,
          (unsigned long long)s.took);
    zf_deadline_clear();
    CHECK(zf_deadline_stopping() && zf_deadline_cancelled() && zf_deadline_spent(),
          "a thread without a request is stopped too");
    CHECK(zf_deadline_flag_set(NULL), "every flag reads as set");
    waker w;
    pthread_mutex_init(&w.mu, NULL);
    zf_deadline_cond_init(&w.cv);
    pthread_mutex_lock(&w.mu);
    CHECK(zf_deadline_wait(&w.cv, &w.mu) == ETIMEDOUT, "no wait starts");
    pthread_mutex_unlock(&w.mu);
    pthread_cond_destroy(&w.cv);
    pthread_mutex_destroy(&w.mu);
}

/* zf_deadline_workers: n threads run the function, each under the
 * caller's deadline and cancellation, and all have ended when it returns */
typedef struct crew {
    int runs, saw_deadline, saw_cancel, on_caller, saw_unattended; /* atomic */
    pthread_t caller;
    uint64_t want_ms;
} crew;

static void *crew_member(void *arg)
{
    crew *c = arg;
    sleep_ms(20); /* all at once: each still counts when the call returns */
    __atomic_fetch_add(&c->runs, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->on_caller, pthread_equal(pthread_self(), c->caller) != 0,
                       __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->saw_deadline, zf_deadline_save().abs_ms == c->want_ms,
                       __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->saw_cancel, zf_deadline_cancelled(), __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->saw_unattended, zf_deadline_unattended(), __ATOMIC_RELAXED);
    return NULL;
}

static void test_workers(void)
{
    uint64_t ticket = zf_deadline_begin(zf_deadline_after(60000));
    crew c = {.caller = pthread_self(), .want_ms = zf_deadline_save().abs_ms};
    zf_deadline_workers(5, crew_member, &c);
    CHECK(c.runs == 5 && c.on_caller == 1, "5 runs, one on the caller (%d, %d)", c.runs,
          c.on_caller);
    CHECK(c.saw_deadline == 5 && c.saw_cancel == 0, "each under the caller's deadline (%d, %d)",
          c.saw_deadline, c.saw_cancel);
    zf_deadline_cancel(ticket);
    crew d = {.caller = pthread_self(), .want_ms = c.want_ms};
    zf_deadline_workers(3, crew_member, &d);
    CHECK(d.runs == 3 && d.saw_cancel == 3, "a cancelled request: every worker sees it (%d)",
          d.saw_cancel);
    zf_deadline_end();
    crew e = {.caller = pthread_self(), .want_ms = ZF_DEADLINE_NONE};
    zf_deadline_workers(ZF_WORKERS_MAX + 10, crew_member, &e);
    CHECK(e.runs == ZF_WORKERS_MAX && e.saw_deadline == ZF_WORKERS_MAX,
          "at most ZF_WORKERS_MAX (%d), none under a deadline", e.runs);
    crew f = {.caller = pthread_self()};
    zf_deadline_workers(0, crew_member, &f);
    CHECK(f.runs == 1 && f.on_caller == 1, "0 or 1: the caller alone (%d)", f.runs);
    CHECK(c.saw_unattended + d.saw_unattended + e.saw_unattended == 0, "attended requests");
}

/* a request for no one: its helpers are too; begin, end and clear end it */
static void test_unattended(void)
{
    CHECK(!zf_deadline_unattended(), "no request: attended");
    zf_deadline_begin(ZF_DEADLINE_NONE);
    zf_deadline_set_unattended();
    crew c = {.caller = pthread_self(), .want_ms = ZF_DEADLINE_NONE};
    zf_deadline_workers(4, crew_member, &c);
    CHECK(c.runs == 4 && c.saw_unattended == 4, "every helper works for no one (%d)",
          c.saw_unattended);
    zf_deadline_end();
    CHECK(!zf_deadline_unattended(), "ended with the request");
    zf_deadline_set_unattended();
    zf_deadline_begin(ZF_DEADLINE_NONE);
    CHECK(!zf_deadline_unattended(), "a new request is attended");
    zf_deadline_set_unattended();
    zf_deadline_clear();
    CHECK(!zf_deadline_unattended(), "cleared with the request");
}

int main(void)
{
    test_none();
    test_arithmetic();
    test_passes();
    test_thread_local();
    test_wait();
    test_cancel_self();
    test_cancel_wait();
    test_cancel_helper();
    test_workers(); /* (before test_cancel_all: the process stops for good there) */
    test_unattended();
    test_cancel_all();
    return check_summary("test_deadline");
}
