/* sbuf.h - a growable text buffer and CSV field quoting. */
#ifndef ZF_SBUF_H
#define ZF_SBUF_H

#include <stddef.h>

/* A growable byte buffer; data is NUL-terminated and malloc'd (caller frees). */
typedef struct zf_sbuf {
    char *data;
    size_t len, cap;
    int failed; /* an allocation failed; contents are incomplete */
} zf_sbuf;

/* Append n bytes to b. */
void zf_sbuf_add(zf_sbuf *b, const char *s, size_t n);

/* Append formatted text to b. */
void zf_sbuf_printf(zf_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append n bytes of text as part of one line: each control character
 * (utf8.h) or byte of invalid UTF-8 as \xNN, a backslash as \\. */
void zf_sbuf_one_line(zf_sbuf *b, const char *s, size_t n);

/* Append s as one CSV field, quoted per RFC 4180 if it holds , " CR or LF. */
void zf_sbuf_csv_field(zf_sbuf *b, const char *s);

/* Write s as a CSV field into out (capacity cap, NUL-terminated, truncated). */
void zf_csv_quote(const char *s, char *out, size_t cap);

#endif
