/* test_deadline.c - unit tests for the per-thread request deadline
 * (src/base/deadline.c): the arithmetic of deadline.h (after, bound,
 * remaining, spent, with and without a deadline, at the edges of the clock),
 * that a deadline belongs to its thread only, and that zf_deadline_wait ends
 * at the deadline (and not before) or when woken.  Run from tests/. */
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

int main(void)
{
    test_none();
    test_arithmetic();
    test_passes();
    test_thread_local();
    test_wait();
    return check_summary("test_deadline");
}
