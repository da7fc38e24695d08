/* log.c - one-line messages with a level, to stderr, a file or syslog. */
#include "base/log.h"

#include "base/utf8.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

enum { SINK_STDERR, SINK_FD, SINK_SYSLOG };

static atomic_int log_threshold = ZF_LOG_WARN;
static atomic_int log_sink = SINK_STDERR;
static atomic_int log_fd = -1;
static atomic_int log_copy_stderr = 0;

static const char *const level_word[] = {"error", "warning", "info", "debug"};
static const int level_priority[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};

#define MSG_MAX 1024          /* a message is cut there */
#define TEXT_MAX (4 * MSG_MAX) /* its escaped text (every byte may become \xNN) */

/* copy text to out as printable UTF-8: each byte of a control character
 * (base/utf8.h: C0, DEL, C1, bidi overrides) or an invalid sequence as \xNN */
static size_t escape(const char *text, size_t n, char *out, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    const char *p = text, *end = text + n;
    size_t len = 0;
    while (p < end && len + 4 < cap) {
        size_t k = zf_utf8_len(p, end);
        if (k && !zf_utf8_is_control(p, k)) {
            if (len + k > cap)
                break;
            for (size_t i = 0; i < k; i++)
                out[len++] = p[i];
            p += k;
            continue;
        }
        for (size_t i = 0; i < (k ? k : 1) && len + 4 <= cap; i++, p++) {
            unsigned char c = (unsigned char)*p;
            out[len++] = '\\';
            out[len++] = 'x';
            out[len++] = hex[c >> 4];
            out[len++] = hex[c & 15];
        }
    }
    return len;
}

/* write a whole buffer to fd, once (a short or failed write loses the line) */
static void put(int fd, const char *p, size_t n)
{
    ssize_t w;
    do
        w = write(fd, p, n);
    while (w < 0 && errno == EINTR);
}

/* "zarrfs: LEVEL: TEXT\n" on stderr, in one write */
static void put_stderr(zf_log_level level, const char *text, size_t n)
{
    char line[TEXT_MAX + 32];
    int k = snprintf(line, sizeof line, "zarrfs: %s: ", level_word[level]);
    memcpy(line + k, text, n);
    line[k + n] = '\n';
    put(STDERR_FILENO, line, (size_t)k + n + 1);
}

/* "2026-01-02T03:04:05.678+0100 zarrfs[PID]: LEVEL: TEXT\n" on fd, in one write */
static void put_file(int fd, zf_log_level level, const char *text, size_t n)
{
    char line[TEXT_MAX + 96], stamp[32] = "", zone[8] = "";
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (localtime_r(&ts.tv_sec, &tm)) {
        strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
        strftime(zone, sizeof zone, "%z", &tm);
    }
    int k = snprintf(line, sizeof line, "%s.%03ld%s zarrfs[%ld]: %s: ", stamp, ts.tv_nsec / 1000000,
                     zone, (long)getpid(), level_word[level]);
    memcpy(line + k, text, n);
    line[k + n] = '\n';
    put(fd, line, (size_t)k + n + 1);
}

void zf_log_vmsg(zf_log_level level, const char *fmt, va_list ap)
{
    if (!zf_log_enabled(level))
        return;
    int saved = errno;
    char msg[MSG_MAX], text[TEXT_MAX];
    int m = vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = m < 0 ? 0 : (size_t)m < sizeof msg ? (size_t)m : sizeof msg - 1;
    n = escape(msg, n, text, sizeof text);
    int sink = atomic_load_explicit(&log_sink, memory_order_relaxed);
    if (sink == SINK_STDERR ||
        (level <= ZF_LOG_WARN && atomic_load_explicit(&log_copy_stderr, memory_order_relaxed)))
        put_stderr(level, text, n); /* start-up copies: the problems, not the news */
    if (sink == SINK_FD)
        put_file(atomic_load_explicit(&log_fd, memory_order_relaxed), level, text, n);
    else if (sink == SINK_SYSLOG)
        syslog(level_priority[level], "%s: %.*s", level_word[level], (int)n, text);
    errno = saved;
}

void zf_log_msg(zf_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    zf_log_vmsg(level, fmt, ap);
    va_end(ap);
}

/* the function fn logs at level */
#define DEFINE_LOG(fn, level)                 \
    void fn(const char *fmt, ...)             \
    {                                         \
        va_list ap;                           \
        va_start(ap, fmt);                    \
        zf_log_vmsg(level, fmt, ap);          \
        va_end(ap);                           \
    }
DEFINE_LOG(zf_log, ZF_LOG_WARN)
DEFINE_LOG(zf_log_error, ZF_LOG_ERROR)
DEFINE_LOG(zf_log_warn, ZF_LOG_WARN)
DEFINE_LOG(zf_log_info, ZF_LOG_INFO)
DEFINE_LOG(zf_log_debug, ZF_LOG_DEBUG)

int zf_log_enabled(zf_log_level level)
{
    return (int)level <= atomic_load_explicit(&log_threshold, memory_order_relaxed);
}

void zf_log_set_level(zf_log_level level)
{
    atomic_store(&log_threshold, (int)level);
}

int zf_log_level_parse(const char *name, zf_log_level *out)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    for (int i = 0; i <= ZF_LOG_DEBUG; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (zf_log_level)i;
            return 0;
        }
    return -1;
}

void zf_log_to_stderr(void)
{
    atomic_store(&log_sink, SINK_STDERR);
}

void zf_log_to_fd(int fd)
{
    atomic_store(&log_fd, fd);
    atomic_store(&log_sink, SINK_FD);
}

void zf_log_to_syslog(void)
{
    openlog("zarrfs", LOG_PID | LOG_NDELAY, LOG_DAEMON);
    atomic_store(&log_sink, SINK_SYSLOG);
}

void zf_log_copy_stderr(int on)
{
    atomic_store(&log_copy_stderr, on != 0);
}
