/* json.c - typed cJSON getters and an exact reader of top-level integers. */
#include "base/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

/* --- Python's non-finite literals --- */

/* the non-finite literal at p (end: the text's end): its length and value, 0 if none */
static size_t nonfinite_at(const char *p, const char *end, double *v)
{
    static const struct { const char *word; size_t len; double v; } words[] = {
        {"NaN", 3, NAN}, {"Infinity", 8, INFINITY}, {"-Infinity", 9, -INFINITY}};
    for (size_t i = 0; i < 3; i++)
        if ((size_t)(end - p) >= words[i].len && !memcmp(p, words[i].word, words[i].len)) {
            *v = words[i].v;
            return words[i].len;
        }
    return 0;
}

/* where the string literal starting at p (a quote) ends, after its closing quote */
static const char *after_string(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return end;
}

/* a non-finite literal replaced by a number: its ordinal among the numbers
 * of the text and its value */
typedef struct nonfinite {
    size_t ordinal;
    double v;
} nonfinite;

/* copy text to out, each non-finite literal outside strings replaced by "0"
 * and spaces (cJSON reads numbers only) and recorded in *nf (grown); the
 * number of them, or (size_t)-1 out of memory */
static size_t replace_nonfinite(const char *text, size_t n, char *out, nonfinite **nf)
{
    const char *p = text, *end = text + n;
    size_t numbers = 0, count = 0, cap = 0;
    memcpy(out, text, n);
    while (p < end) {
        double v;
        size_t len;
        if (*p == '"') {
            p = after_string(p, end);
        } else if ((len = nonfinite_at(p, end, &v))) {
            if (count == cap) {
                cap = cap ? 2 * cap : 8;
                nonfinite *grown = realloc(*nf, cap * sizeof *grown);
                if (!grown)
                    return (size_t)-1;
                *nf = grown;
            }
            (*nf)[count++] = (nonfinite){numbers++, v};
            memset(out + (p - text), ' ', len);
            out[p - text] = '0';
            p += len;
        } else if (*p == '-' || (*p >= '0' && *p <= '9')) {
            numbers++;
            while (p < end && !strchr(",]} \t\r\n", *p))
                p++;
        } else {
            p++;
        }
    }
    return count;
}

/* give the numbers of item's tree (document order) with the ordinals in
 * nf[*next..count) their non-finite values; *seen counts the numbers */
static void restore_nonfinite(cJSON *item, const nonfinite *nf, size_t count, size_t *next,
                              size_t *seen)
{
    for (; item && *next < count; item = item->next) {
        if (cJSON_IsNumber(item) && (*seen)++ == nf[*next].ordinal)
            cJSON_SetNumberValue(item, nf[(*next)++].v);
        restore_nonfinite(item->child, nf, count, next, seen);
    }
}

cJSON *zf_json_parse(const char *text, size_t n)
{
    cJSON *root = cJSON_ParseWithLength(text, n);
    if (root || !n)
        return root;
    char *copy = malloc(n);
    nonfinite *nf = NULL;
    size_t count = copy ? replace_nonfinite(text, n, copy, &nf) : (size_t)-1;
    if (count && count != (size_t)-1 && (root = cJSON_ParseWithLength(copy, n))) {
        size_t next = 0, seen = 0;
        restore_nonfinite(root, nf, count, &next, &seen);
    }
    free(copy);
    free(nf);
    return root;
}

int zf_json_int(const cJSON *item, int64_t lo, int64_t hi, int64_t *out)
{
    if (!cJSON_IsNumber(item))
        return 0;
    double d = item->valuedouble;
    if (!isfinite(d) || d != floor(d) || fabs(d) > ZF_JSON_MAX_EXACT)
        return 0;
    int64_t v = (int64_t)d;
    if (v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

int zf_json_entry(const cJSON *entry, const char **name, const cJSON **config, char *err,
                  size_t errcap)
{
    *config = NULL;
    if (cJSON_IsString(entry)) {
        *name = entry->valuestring;
        return ZF_OK;
    }
    if (!cJSON_IsObject(entry)) {
        snprintf(err, errcap, "extension entry is neither a string nor an object");
        return ZF_ECORRUPT;
    }
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(entry, "name");
    if (!cJSON_IsString(n)) {
        snprintf(err, errcap, "extension entry has no string \"name\"");
        return ZF_ECORRUPT;
    }
    *name = n->valuestring;
    for (const cJSON *k = entry->child; k; k = k->next) {
        if (!strcmp(k->string, "name"))
            continue;
        if (!strcmp(k->string, "configuration")) {
            if (!cJSON_IsObject(k)) {
                snprintf(err, errcap, "%s: \"configuration\" is not an object", *name);
                return ZF_ECORRUPT;
            }
            *config = k;
        } else if (!strcmp(k->string, "must_understand")) {
            if (!cJSON_IsBool(k)) {
                snprintf(err, errcap, "%s: \"must_understand\" is not a boolean", *name);
                return ZF_ECORRUPT;
            }
        } else {
            snprintf(err, errcap, "%s: unknown field \"%s\"", *name, k->string);
            return ZF_EUNSUPPORTED;
        }
    }
    return ZF_OK;
}

int zf_json_only_keys(const cJSON *config, const char *const *allowed, const char *what,
                      char *err, size_t errcap)
{
    if (!config)
        return ZF_OK;
    for (const cJSON *k = config->child; k; k = k->next) {
        const char *const *a = allowed;
        while (*a && strcmp(*a, k->string))
            a++;
        if (!*a) {
            snprintf(err, errcap, "%s: unexpected configuration field \"%s\"", what, k->string);
            return ZF_ECORRUPT;
        }
    }
    return ZF_OK;
}

/* --- minimal scanner over raw JSON text: member spans and exact integers --- */

typedef struct scan {
    const char *p, *end;
} scan;

static void skip_ws(scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

/* skip a string starting at '"'; returns 0 on malformed input */
static int skip_string(scan *s)
{
    const char *p = s->p + 1;
    for (;;) {
        const char *q = memchr(p, '"', (size_t)(s->end - p));
        if (!q)
            return 0;
        const char *b = q; /* the quote is escaped if an odd run of backslashes precedes it */
        while (b > p && b[-1] == '\\')
            b--;
        p = q + 1;
        if (((q - b) & 1) == 0) {
            s->p = p;
            return 1;
        }
    }
}

/* skip any value (brackets are only counted, not matched by kind) */
static int skip_value(scan *s)
{
    skip_ws(s);
    if (s->p >= s->end)
        return 0;
    if (*s->p == '"')
        return skip_string(s);
    if (*s->p == '{' || *s->p == '[') {
        int depth = 0;
        while (s->p < s->end) {
            char c = *s->p;
            if (c == '"') {
                if (!skip_string(s))
                    return 0;
                continue;
            }
            s->p++;
            if (c == '{' || c == '[')
                depth++;
            else if ((c == '}' || c == ']') && --depth == 0)
                return 1;
        }
        return 0;
    }
    while (s->p < s->end && !strchr(",}] \t\r\n", *s->p))
        s->p++;
    return 1;
}

/* parse an integer literal at s->p into *out (exact) */
static int raw_integer(scan *s, int64_t *out)
{
    const char *start = s->p;
    const char *q = start;
    if (q < s->end && *q == '-')
        q++;
    const char *digits = q;
    while (q < s->end && *q >= '0' && *q <= '9')
        q++;
    if (q == digits || (q < s->end && strchr(".eE", *q)))
        return ZF_ENOTFOUND;
    char buf[32];
    size_t len = (size_t)(q - start);
    if (len >= sizeof buf)
        return ZF_ECORRUPT;
    memcpy(buf, start, len);
    buf[len] = '\0';
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno == ERANGE)
        return ZF_ECORRUPT;
    *out = v;
    return ZF_OK;
}

static int hex4(const char *p, const char *end, unsigned *out)
{
    unsigned v = 0;
    if (end - p < 4)
        return 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return 0;
        v = v * 16 + (unsigned)d;
    }
    *out = v;
    return 1;
}

/* code point cp as UTF-8 at out; its length */
static size_t put_utf8(unsigned cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* one escape at p (after the backslash) into out; the bytes of input used, or 0 */
static size_t unescape_one(const char *p, const char *end, char *out, size_t *w)
{
    static const char from[] = "\"/bfnrt", to[] = "\"/\b\f\n\r\t";
    const char *e = p < end ? strchr(from, *p) : NULL;
    if (e && *p) {
        out[(*w)++] = to[e - from];
        return 1;
    }
    unsigned cp, lo;
    if (p >= end || *p != 'u' || !hex4(p + 1, end, &cp))
        return 0;
    size_t used = 5;
    if (cp >= 0xdc00 && cp < 0xe000)
        return 0; /* a lone low surrogate */
    if (cp >= 0xd800 && cp < 0xdc00) { /* a pair */
        if (end - p < 11 || p[5] != '\\' || p[6] != 'u' || !hex4(p + 7, end, &lo) ||
            lo < 0xdc00 || lo >= 0xe000)
            return 0;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        used = 11;
    }
    *w += put_utf8(cp, out + *w);
    return used;
}

int zf_json_unescape(const char *lit, size_t n, char *out, size_t *len)
{
    if (n < 2 || lit[0] != '"' || lit[n - 1] != '"')
        return ZF_ECORRUPT;
    const char *p = lit + 1, *end = lit + n - 1;
    size_t w = 0;
    while (p < end) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == '"')
            return ZF_ECORRUPT;
        if (c != '\\') {
            out[w++] = (char)c;
            p++;
            continue;
        }
        size_t used = unescape_one(p + 1, end, out, &w);
        if (!used)
            return ZF_ECORRUPT;
        p += 1 + used;
    }
    *len = w;
    return ZF_OK;
}

/* unescape the JSON string literal [q, end) (quotes included) into buf; a
 * key holding a NUL (\u0000) is refused */
static int raw_key(const char *q, const char *end, char *buf, size_t cap)
{
    size_t n = (size_t)(end - q), len;
    if (n - 2 >= cap || zf_json_unescape(q, n, buf, &len) != ZF_OK || memchr(buf, 0, len))
        return 0;
    buf[len] = '\0';
    return 1;
}

/* call fn for every member of an object (keyed) or item of an array */
static int raw_each(const char *text, size_t n, int keyed, zf_json_member_fn fn, void *arg)
{
    scan s = {text, text + n};
    char open = keyed ? '{' : '[', close = keyed ? '}' : ']';
    skip_ws(&s);
    if (s.p >= s.end || *s.p++ != open)
        return ZF_ECORRUPT;
    skip_ws(&s);
    if (s.p < s.end && *s.p == close)
        return ZF_OK;
    for (;;) {
        skip_ws(&s);
        const char *kstart = s.p;
        char key[ZF_JSON_KEY_MAX];
        if (keyed && (s.p >= s.end || *s.p != '"' || !skip_string(&s) ||
                      !raw_key(kstart, s.p, key, sizeof key)))
            return ZF_ECORRUPT;
        skip_ws(&s);
        if (keyed && (s.p >= s.end || *s.p++ != ':'))
            return ZF_ECORRUPT;
        skip_ws(&s);
        const char *val = s.p;
        if (!skip_value(&s))
            return ZF_ECORRUPT;
        int rc = fn(arg, keyed ? key : NULL, val, (size_t)(s.p - val));
        if (rc)
            return rc;
        skip_ws(&s);
        if (s.p < s.end && *s.p == close)
            return ZF_OK;
        if (s.p >= s.end || *s.p++ != ',')
            return ZF_ECORRUPT;
    }
}

int zf_json_raw_members(const char *text, size_t n, zf_json_member_fn fn, void *arg)
{
    return raw_each(text, n, 1, fn, arg);
}

typedef struct find_ctx {
    const char *key;
    const char *val;
    size_t vlen;
} find_ctx;

static int find_member(void *arg, const char *key, const char *val, size_t vlen)
{
    find_ctx *f = arg;
    if (strcmp(key, f->key))
        return 0;
    f->val = val;
    f->vlen = vlen;
    return 1;
}

int zf_json_raw_member(const char *text, size_t n, const char *key, const char **val, size_t *vlen)
{
    find_ctx f = {key, NULL, 0};
    int rc = zf_json_raw_members(text, n, find_member, &f);
    if (rc < 0)
        return rc;
    if (!f.val)
        return ZF_ENOTFOUND;
    *val = f.val;
    *vlen = f.vlen;
    return ZF_OK;
}

int zf_json_raw_int64(const char *text, size_t n, const char *key, int64_t *out)
{
    const char *val;
    size_t vlen;
    if (zf_json_raw_member(text, n, key, &val, &vlen) != ZF_OK)
        return ZF_ENOTFOUND;
    scan s = {val, val + vlen};
    return raw_integer(&s, out);
}

int zf_json_raw_int_array(const char *text, size_t n, int64_t *out, unsigned cap, unsigned *count)
{
    scan s = {text, text + n};
    unsigned k = 0;
    skip_ws(&s);
    if (s.p >= s.end || *s.p++ != '[')
        return ZF_ECORRUPT;
    skip_ws(&s);
    if (s.p < s.end && *s.p == ']') {
        *count = 0;
        return ZF_OK;
    }
    for (;;) {
        skip_ws(&s);
        if (k == cap || raw_integer(&s, &out[k++]) != ZF_OK || !skip_value(&s))
            return ZF_ECORRUPT;
        skip_ws(&s);
        if (s.p < s.end && *s.p == ']') {
            *count = k;
            return ZF_OK;
        }
        if (s.p >= s.end || *s.p++ != ',')
            return ZF_ECORRUPT;
    }
}

int zf_json_raw_items(const char *text, size_t n, zf_json_member_fn fn, void *arg)
{
    return raw_each(text, n, 0, fn, arg);
}

int zf_json_raw_int(const char *text, size_t n, int64_t *out)
{
    scan s = {text, text + n};
    skip_ws(&s);
    int rc = raw_integer(&s, out);
    if (rc != ZF_OK)
        return rc;
    s.p += *s.p == '-'; /* raw_integer leaves s.p at the literal */
    while (s.p < s.end && *s.p >= '0' && *s.p <= '9')
        s.p++;
    skip_ws(&s);
    return s.p == s.end ? ZF_OK : ZF_ENOTFOUND;
}
