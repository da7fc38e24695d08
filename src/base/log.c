/* log.c - atomic one-line messages on stderr. */
#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* length of the valid UTF-8 sequence at p (0 if invalid) */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned c = *p;
    size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 && c >= 0xC2 ? 2 : (c & 0xF0) == 0xE0 ? 3
             : (c & 0xF8) == 0xF0 && c <= 0xF4 ? 4 : 0;
    if (n == 0 || (size_t)(end - p) < n)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    if ((n == 3 && c == 0xE0 && p[1] < 0xA0) || (n == 4 && c == 0xF0 && p[1] < 0x90))
        return 0; /* overlong */
    return n;
}

/* copy text to out as printable UTF-8: control bytes and invalid sequences as \xNN */
static size_t escape(const char *text, size_t n, char *out, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)text, *end = p + n;
    size_t len = 0;
    while (p < end && len + 4 < cap) {
        size_t k = utf8_len(p, end);
        if (k && (*p >= 0x20 && *p != 0x7F)) {
            if (len + k > cap)
                break;
            for (size_t i = 0; i < k; i++)
                out[len++] = (char)p[i];
            p += k;
        } else {
            out[len++] = '\\';
            out[len++] = 'x';
            out[len++] = hex[*p >> 4];
            out[len++] = hex[*p & 15];
            p++;
        }
    }
    return len;
}

void zf_log(const char *fmt, ...)
{
    char msg[1024], line[4096 + 16];
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t n = m < 0 ? 0 : (size_t)m < sizeof msg ? (size_t)m : sizeof msg - 1;
    memcpy(line, "zarrfs: ", 8);
    size_t len = 8 + escape(msg, n, line + 8, sizeof line - 10);
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}
