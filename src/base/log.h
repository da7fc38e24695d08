/* log.h - one-line diagnostics with a level, safe from any thread.
 *
 * A line is "zarrfs: LEVEL: message" (LEVEL is error, warning, info or
 * debug); control bytes and invalid UTF-8 in the message are shown as \xNN,
 * so a line is always one printable line.  Lines below the threshold
 * (zf_log_set_level, default warn) are dropped.  They go to standard error
 * unless the front end picks another sink: a file descriptor (each line then
 * starts with a local timestamp and the process id) or syslog (facility
 * LOG_DAEMON, ident "zarrfs", the level as priority).  While zf_log_copy_stderr
 * is on, error and warning lines also go to standard error.  Configure the log before starting
 * threads; logging itself is safe from any thread. */
#ifndef ZF_LOG_H
#define ZF_LOG_H

#include <stdarg.h>

typedef enum zf_log_level {
    ZF_LOG_ERROR, /* the daemon cannot do something it was asked to */
    ZF_LOG_WARN,  /* damaged or unsupported data, a degraded mode */
    ZF_LOG_INFO,  /* start, stop, changes of the store */
    ZF_LOG_DEBUG, /* detail for finding a problem */
} zf_log_level;

/* A warning (zf_log_warn): the core's diagnostics. */
void zf_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void zf_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void zf_log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void zf_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void zf_log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Log one line at level. */
void zf_log_msg(zf_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* zf_log_msg with the arguments in ap. */
void zf_log_vmsg(zf_log_level level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* Would a line at level be written? */
int zf_log_enabled(zf_log_level level);

/* Drop lines below level from now on. */
void zf_log_set_level(zf_log_level level);

/* The level called name ("error", "warn", "info", "debug") in *out: 0, or
 * -1 for an unknown name. */
int zf_log_level_parse(const char *name, zf_log_level *out);

/* Write lines to fd (open for appending; the log does not own it) from now on. */
void zf_log_to_fd(int fd);

/* Write lines to standard error from now on (the default). */
void zf_log_to_stderr(void);

/* Write lines to syslog from now on (opens the connection now). */
void zf_log_to_syslog(void);

/* Copy error and warning lines to standard error too (on) or not (off, the
 * default); for start-up, while someone may be reading standard error. */
void zf_log_copy_stderr(int on);

#endif
