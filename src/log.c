/* log.c - atomic one-line messages on stderr. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

void zf_log(const char *fmt, ...)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "zarrfs: ");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}
