/* log.h - one-line diagnostics to standard error, safe from any thread. */
#ifndef ZF_LOG_H
#define ZF_LOG_H

/* Print "zarrfs: " + the formatted message + newline to stderr, atomically. */
void zf_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
