/* sbuf.c - growable text buffers, CSV quoting. */
#include "base/sbuf.h"

#include "base/utf8.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reserve(zf_sbuf *b, size_t extra)
{
    if (b->failed || extra >= SIZE_MAX - b->len) { /* a length past SIZE_MAX: failed */
        b->failed = 1;
        return 0;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *d = realloc(b->data, cap);
    if (!d) {
        b->failed = 1;
        return 0;
    }
    b->data = d;
    b->cap = cap;
    return 1;
}

void zf_sbuf_add(zf_sbuf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void zf_sbuf_printf(zf_sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void zf_sbuf_csv_field(zf_sbuf *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        zf_sbuf_add(b, s, strlen(s));
        return;
    }
    zf_sbuf_add(b, "\"", 1);
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            zf_sbuf_add(b, "\"\"", 2);
        else
            zf_sbuf_add(b, p, 1);
    }
    zf_sbuf_add(b, "\"", 1);
}

void zf_csv_quote(const char *s, char *out, size_t cap)
{
    zf_sbuf b = {0};
    zf_sbuf_csv_field(&b, s);
    snprintf(out, cap, "%s", b.failed || !b.data ? "" : b.data);
    free(b.data);
}

void zf_sbuf_one_line(zf_sbuf *b, const char *s, size_t n)
{
    const char *end = s + n;
    while (s < end) {
        size_t k = zf_utf8_len(s, end);
        if (k && !zf_utf8_is_control(s, k)) {
            zf_sbuf_add(b, *s == '\\' ? "\\\\" : s, *s == '\\' ? 2 : k);
            s += k;
            continue;
        }
        for (size_t i = 0; i < (k ? k : 1); i++)
            zf_sbuf_printf(b, "\\x%02x", (unsigned char)s[i]);
        s += k ? k : 1;
    }
}
