/* textutil.h - small text helpers: integer digits, growable buffers, CSV quoting. */
#ifndef ZF_TEXTUTIL_H
#define ZF_TEXTUTIL_H

#include <stddef.h>
#include <stdint.h>

/* Number of decimal digits of v (1 for 0). */
static inline unsigned zf_u64_digits(uint64_t v)
{
    unsigned n = 1;
    while (v >= 10000) {
        v /= 10000;
        n += 4;
    }
    return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* Sum of the decimal digit counts of every integer in [a, b). */
static inline uint64_t zf_digit_sum(uint64_t a, uint64_t b)
{
    uint64_t sum = b > a ? b - a : 0, p = 10;
    for (int k = 1; k < 20 && p < b; k++, p *= 10) /* each x >= 10^k has a digit more */
        sum += b - (a > p ? a : p);
    return sum;
}

/* Write v in decimal at out (no NUL); returns the number of bytes written. */
size_t zf_u64_text(uint64_t v, char *out);

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

/* Append s as one CSV field, quoted per RFC 4180 if it holds , " CR or LF. */
void zf_sbuf_csv_field(zf_sbuf *b, const char *s);

/* Write s as a CSV field into out (capacity cap, NUL-terminated, truncated). */
void zf_csv_quote(const char *s, char *out, size_t cap);

#endif
