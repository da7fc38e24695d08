/* utf8.c - UTF-8 characters and control characters (utf8.h). */
#include "base/utf8.h"

#include <string.h>

size_t zf_utf8_len(const char *p, const char *end)
{
    const unsigned char *s = (const unsigned char *)p;
    unsigned c = s[0];
    size_t n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : (c & 0xF0) == 0xE0 ? 3
             : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (n == 0 || (size_t)(end - p) < n)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xF0 && s[1] < 0x90) || /* overlong */
        (c == 0xED && s[1] >= 0xA0) ||                               /* a surrogate */
        (c == 0xF4 && s[1] >= 0x90))                                 /* beyond U+10FFFF */
        return 0;
    return n;
}

int zf_utf8_is_control(const char *p, size_t n)
{
    const unsigned char *s = (const unsigned char *)p;
    if (n == 1)
        return s[0] < 0x20 || s[0] == 0x7F;
    if (n == 2) /* U+0080-U+009F: C2 80 - C2 9F */
        return s[0] == 0xC2 && s[1] < 0xA0;
    if (n == 3 && s[0] == 0xE2 && s[1] == 0x80) /* U+202A-U+202E: E2 80 AA - E2 80 AE */
        return s[2] >= 0xAA && s[2] <= 0xAE;
    if (n == 3 && s[0] == 0xE2 && s[1] == 0x81) /* U+2066-U+2069: E2 81 A6 - E2 81 A9 */
        return s[2] >= 0xA6 && s[2] <= 0xA9;
    return 0;
}

int zf_utf8_has_control(const char *s)
{
    for (const char *p = s, *end = s + strlen(s); p < end;) {
        size_t k = zf_utf8_len(p, end);
        if (k && zf_utf8_is_control(p, k))
            return 1;
        p += k ? k : 1;
    }
    return 0;
}

size_t zf_utf8_clean_copy(char *out, size_t cap, const char *text, size_t n, char repl)
{
    const char *p = text, *end = text + n;
    size_t len = 0;
    while (p < end) {
        size_t k = zf_utf8_len(p, end);
        int control = k && zf_utf8_is_control(p, k);
        size_t take = k ? k : 1, put = control ? 1 : take;
        if (len + put >= cap)
            break;
        for (size_t i = 0; i < put; i++)
            out[len++] = control ? repl : p[i];
        p += take;
    }
    out[len] = '\0';
    return (size_t)(p - text);
}
