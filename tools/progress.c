/* progress.c - "12.0 MiB of 45.6 MiB (26%), 98.1 MiB/s, 0:03 left" on a
 * terminal, redrawn in place (carriage return) and cleared at the end. */
#include "progress.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REDRAW_EVERY 0.25 /* seconds between two drawings */

/* CLOCK_MONOTONIC in seconds */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* bytes as "512 B", "3.4 KiB", "12.0 MiB", "1.5 GiB"... into out */
static void human(double bytes, char *out, size_t cap)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    size_t u = 0;
    while (bytes >= 1024 && u + 1 < sizeof unit / sizeof *unit) {
        bytes /= 1024;
        u++;
    }
    snprintf(out, cap, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
}

/* seconds as "0:07", "12:30" or "3:05:09" into out */
static void clock_text(double s, char *out, size_t cap)
{
    unsigned long t = s > 0 && s < 1e9 ? (unsigned long)(s + 0.5) : 0;
    if (t >= 3600)
        snprintf(out, cap, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(out, cap, "%lu:%02lu", t / 60, t % 60);
}

/* write all of buf to fd (a terminal; errors are ignored) */
static void put(int fd, const char *buf, size_t n)
{
    while (n) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        buf += w;
        n -= (size_t)w;
    }
}

/* draw the line for done bytes at time t (the rate and time left once known) */
static void draw(zf_progress *p, uint64_t done, double t)
{
    double elapsed = t - p->start, rate = elapsed > 0 && done ? (double)done / elapsed : 0;
    char d[24], tot[24], r[24], left[32], line[160];
    human((double)done, d, sizeof d);
    human((double)p->total, tot, sizeof tot);
    unsigned pct = p->total ? (unsigned)((double)done * 100 / (double)p->total) : 100;
    int n;
    if (rate > 0) {
        human(rate, r, sizeof r);
        clock_text((double)(p->total - done) / rate, left, sizeof left);
        n = snprintf(line, sizeof line, "\rzarrfs-cat: %s of %s (%u%%), %s/s, %s left", d, tot, pct,
                     r, left);
    } else {
        n = snprintf(line, sizeof line, "\rzarrfs-cat: %s of %s (%u%%)", d, tot, pct);
    }
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    int width = (int)len - 1;
    /* blank what a longer previous line left */
    while (width < p->width && len + 1 < sizeof line) {
        line[len++] = ' ';
        width++;
    }
    put(p->fd, line, len);
    p->width = width;
    p->drawn = t;
}

void zf_progress_start(zf_progress *p, int fd, uint64_t total, uint64_t min)
{
    memset(p, 0, sizeof *p);
    p->fd = total >= min && isatty(fd) ? fd : -1;
    p->total = total;
    p->start = now();
    if (p->fd >= 0)
        draw(p, 0, p->start);
}

void zf_progress_update(zf_progress *p, uint64_t done)
{
    if (p->fd < 0)
        return;
    double t = now();
    if (t - p->drawn >= REDRAW_EVERY)
        draw(p, done, t);
}

void zf_progress_end(zf_progress *p)
{
    if (p->fd < 0 || !p->width)
        return;
    char line[160];
    int w = p->width < (int)sizeof line - 2 ? p->width : (int)sizeof line - 2;
    line[0] = '\r';
    memset(line + 1, ' ', (size_t)w);
    line[w + 1] = '\r';
    put(p->fd, line, (size_t)w + 2);
    p->width = 0;
}
