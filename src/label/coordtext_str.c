/* coordtext_str.c - the CSV text of strings and bytes as pandas writes
 * xarray's decoded values: Python's repr of bytes, UTF-32 as UTF-8, and
 * pandas' CSV quoting (coordtext.h). */
#include "label/coordtext.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "coordtext_impl.h"

/* ---- strings and bytes ------------------------------------------------- */

void zf_coordtext_bytes_repr(zf_sbuf *out, const uint8_t *s, size_t n)
{
    int dq = memchr(s, '\'', n) && !memchr(s, '"', n);
    char quote = dq ? '"' : '\'';
    zf_sbuf_printf(out, "b%c", quote);
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c == quote || c == '\\')
            zf_sbuf_printf(out, "\\%c", c);
        else if (c == '\t' || c == '\n' || c == '\r')
            zf_sbuf_printf(out, "\\%c", c == '\t' ? 't' : c == '\n' ? 'n' : 'r');
        else if (c < 0x20 || c >= 0x7f)
            zf_sbuf_printf(out, "\\x%02x", c);
        else
            zf_sbuf_add(out, (const char *)&c, 1);
    }
    zf_sbuf_add(out, &quote, 1);
}

void zf_coordtext_csv_field(zf_sbuf *out, const char *s, size_t n)
{
    int quote = 0;
    for (size_t i = 0; i < n && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || s[i] == '\n'; /* not CR: pandas' lineterminator is LF */
    if (!quote) {
        zf_sbuf_add(out, s, n);
        return;
    }
    zf_sbuf_add(out, "\"", 1);
    for (const char *p = s, *end = s + n; p < end;) {
        const char *q = memchr(p, '"', (size_t)(end - p));
        size_t run = q ? (size_t)(q - p) + 1 : (size_t)(end - p);
        zf_sbuf_add(out, p, run);
        if (q)
            zf_sbuf_add(out, "\"", 1);
        p += run;
    }
    zf_sbuf_add(out, "\"", 1);
}

/* one UTF-32 code point as UTF-8; 0 if it is not a Unicode scalar value */
static int put_utf8(zf_sbuf *out, uint32_t c)
{
    char b[4];
    size_t n;
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    if (c < 0x80)
        b[0] = (char)c, n = 1;
    else if (c < 0x800)
        b[0] = (char)(0xC0 | c >> 6), b[1] = (char)(0x80 | (c & 0x3F)), n = 2;
    else if (c < 0x10000)
        b[0] = (char)(0xE0 | c >> 12), b[1] = (char)(0x80 | (c >> 6 & 0x3F)),
        b[2] = (char)(0x80 | (c & 0x3F)), n = 3;
    else
        b[0] = (char)(0xF0 | c >> 18), b[1] = (char)(0x80 | (c >> 12 & 0x3F)),
        b[2] = (char)(0x80 | (c >> 6 & 0x3F)), b[3] = (char)(0x80 | (c & 0x3F)), n = 4;
    zf_sbuf_add(out, b, n);
    return 1;
}

/* a fixed-length UTF-32 string of p (trailing NULs are not part of it) as
 * UTF-8 into field */
static int utf32_field(zf_sbuf *field, const zf_plain_meta *p, const uint8_t *e, char *err,
                       size_t errcap)
{
    size_t units = p->item_bytes / 4;
    for (; units; units--) {
        const uint8_t *u = e + 4 * (units - 1);
        if (u[0] | u[1] | u[2] | u[3])
            break;
    }
    for (size_t i = 0; i < units; i++) {
        const uint8_t *u = e + 4 * i;
        uint32_t c = p->big_endian
                         ? (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3]
                         : (uint32_t)u[3] << 24 | (uint32_t)u[2] << 16 | (uint32_t)u[1] << 8 | u[0];
        if (!put_utf8(field, c)) {
            snprintf(err, errcap, "0x%" PRIx32 " is not a Unicode character", c);
            return ZF_ECORRUPT;
        }
    }
    return ZF_OK;
}

int zf_coordtext_fixed(zf_sbuf *text, zf_sbuf *field, const zf_plain_meta *p, const uint8_t *e,
                       char *err, size_t errcap)
{
    field->len = 0;
    if (p->type == ZF_PLAIN_BYTES) { /* numpy drops trailing NULs */
        size_t n = p->item_bytes;
        while (n && e[n - 1] == 0)
            n--;
        zf_coordtext_bytes_repr(field, e, n);
    } else {
        int rc = utf32_field(field, p, e, err, errcap);
        if (rc)
            return rc;
    }
    zf_coordtext_csv_field(text, field->data ? field->data : "", field->len);
    return ZF_OK;
}

