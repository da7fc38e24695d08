/* kc_parse.c - a kerchunk reference document (fsspec/kerchunk spec,
 * versions 0 and 1) into a checked, sorted table of references (kc_impl.h).
 * The document is untrusted: every key, string, offset and length is
 * checked, and the memory it takes is bounded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/err.h"
#include "base/json.h"
#include "base/sbuf.h"
#include "base/vec.h"
#include "store/kc_impl.h"
#include "store/store.h"

#define ERR(code, ...) zf_errf(p->err, p->errcap, code, __VA_ARGS__)

#define TEMPLATES_MAX 4096
#define NAME_MAX_LEN 256

typedef struct parser {
    zf_sbuf arena;
    kc_ref *refs;
    size_t n, cap;
    const char *base;
    size_t limit;
    int version;
    cJSON *templates;        /* v1: {name: string}, or NULL */
    char *scratch;           /* strings decoded here first */
    size_t scap;
    uint64_t last_url;       /* the previous reference's URL, reused when equal */
    int have_last;
    char *err;
    size_t errcap;
} parser;

/* ------------------------------------------------------------ checks */

/* is key a store key (store.h): no leading or trailing '/', no empty, "."
 * or ".." segment, no control byte, shorter than ZF_KEY_MAX */
static int key_ok(const char *key)
{
    size_t n = strlen(key);
    if (!n || n >= ZF_KEY_MAX)
        return 0;
    for (const char *c = key; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return 0;
    for (const char *seg = key;;) {
        size_t len = strcspn(seg, "/");
        if (!len || (len == 1 && seg[0] == '.') || (len == 2 && !strncmp(seg, "..", 2)))
            return 0;
        if (!seg[len])
            return 1;
        seg += len + 1;
    }
}

/* the memory the document takes so far, with more bytes */
static int over_limit(const parser *p, size_t more)
{
    size_t used = p->arena.len + p->n * sizeof(kc_ref);
    return more > p->limit || used > p->limit - more;
}

/* append n bytes and a NUL to the arena; *at their offset */
static int arena_add(parser *p, const char *s, size_t n, uint64_t *at)
{
    if (over_limit(p, n + 1))
        return ERR(ZF_ECORRUPT, "the reference document needs more than the %zu bytes of memory "
                   "allowed", p->limit);
    *at = p->arena.len;
    zf_sbuf_add(&p->arena, s, n);
    zf_sbuf_add(&p->arena, "", 1); /* each string's NUL kept */
    return p->arena.failed || !p->arena.data ? ZF_ENOMEM : ZF_OK;
}

/* the JSON string literal [val, val+vlen) decoded into p->scratch */
static int decode_string(parser *p, const char *val, size_t vlen, size_t *len)
{
    if (vlen > p->scap) {
        char *s = realloc(p->scratch, vlen);
        if (!s)
            return ZF_ENOMEM;
        p->scratch = s;
        p->scap = vlen;
    }
    if (zf_json_unescape(val, vlen, p->scratch, len) != ZF_OK)
        return ERR(ZF_ECORRUPT, "a malformed JSON string");
    return ZF_OK;
}

/* ------------------------------------------------------------ base64 */

static int b64_value(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26
           : c >= '0' && c <= '9' ? c - '0' + 52 : c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* decode standard, padded base64 in place (s, n bytes); *out_len; -1 if malformed */
static int b64_decode(char *s, size_t n, size_t *out_len)
{
    if (n % 4)
        return -1;
    size_t w = 0;
    for (size_t i = 0; i < n; i += 4) {
        int pad = (s[i + 3] == '=') + (s[i + 2] == '=' && s[i + 3] == '=');
        if (pad && i + 4 != n)
            return -1;
        int v[4];
        for (int k = 0; k < 4 - pad; k++)
            if ((v[k] = b64_value((unsigned char)s[i + k])) < 0)
                return -1;
        for (int k = 4 - pad; k < 4; k++)
            v[k] = 0;
        uint32_t q = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        s[w++] = (char)(q >> 16);
        if (pad < 2)
            s[w++] = (char)(q >> 8);
        if (pad < 1)
            s[w++] = (char)q;
    }
    *out_len = w;
    return 0;
}

/* ------------------------------------------------------------ templates */

/* the value of name among the gen dimensions (dims, values) or templates */
static const char *lookup(const parser *p, const char *name, const cJSON *dims,
                          const char *const *values)
{
    int i = 0;
    for (const cJSON *d = dims ? dims->child : NULL; d; d = d->next, i++)
        if (!strcmp(d->string, name))
            return values[i];
    const cJSON *t = p->templates ? cJSON_GetObjectItemCaseSensitive(p->templates, name) : NULL;
    return cJSON_IsString(t) ? t->valuestring : NULL;
}

/* render s ({{name}} substituted, the one form kerchunk writes) into out */
static int render(parser *p, const char *s, size_t n, const cJSON *dims, const char *const *values,
                  zf_sbuf *out)
{
    const char *end = s + n;
    while (s < end) {
        const char *open = s;
        while (open + 1 < end && !(open[0] == '{' && memchr("{%#", open[1], 3)))
            open++;
        if (open + 1 >= end) {
            zf_sbuf_add(out, s, (size_t)(end - s));
            break;
        }
        zf_sbuf_add(out, s, (size_t)(open - s));
        const char *a = open + 2, *close = a;
        while (close + 1 < end && !(close[0] == '}' && close[1] == '}'))
            close++;
        while (a < close && *a == ' ')
            a++;
        const char *b = a;
        while (b < close && (*b == '_' || (*b >= 'a' && *b <= 'z') || (*b >= 'A' && *b <= 'Z') ||
                             (b > a && *b >= '0' && *b <= '9')))
            b++;
        size_t len = (size_t)(b - a);
        while (b < close && *b == ' ')
            b++;
        if (open[1] != '{' || close + 1 >= end || b != close || !len || len >= NAME_MAX_LEN)
            return ERR(ZF_EUNSUPPORTED, "a template expression zarrfs does not evaluate "
                       "(only {{name}}): %.*s", (int)((close + 2 <= end ? close + 2 : end) - open),
                       open);
        char name[NAME_MAX_LEN];
        memcpy(name, a, len);
        name[len] = '\0';
        const char *v = lookup(p, name, dims, values);
        if (!v)
            return ERR(ZF_ECORRUPT, "a template names %s, which is not defined", name);
        zf_sbuf_add(out, v, strlen(v));
        s = close + 2;
    }
    if (!out->data)
        zf_sbuf_add(out, "", 0);
    return out->failed ? ZF_ENOMEM : ZF_OK;
}

/* the templates of a version 1 document: an object of strings without templates */
static int load_templates(parser *p, const char *val, size_t vlen)
{
    p->templates = cJSON_ParseWithLength(val, vlen);
    if (!cJSON_IsObject(p->templates))
        return ERR(ZF_ECORRUPT, "\"templates\" is not a JSON object");
    int count = 0;
    for (const cJSON *t = p->templates->child; t; t = t->next) {
        if (++count > TEMPLATES_MAX || !cJSON_IsString(t) || strlen(t->string) >= NAME_MAX_LEN)
            return ERR(ZF_ECORRUPT, "\"templates\" holds something other than up to %d short "
                       "names of strings", TEMPLATES_MAX);
        if (strstr(t->valuestring, "{{") || strstr(t->valuestring, "{%"))
            return ERR(ZF_EUNSUPPORTED, "template %s is itself a template, which zarrfs does not "
                       "evaluate", t->string);
    }
    return ZF_OK;
}

/* ------------------------------------------------------------ references */

/* the absolute form of target URL u (n bytes, templates rendered) into the arena */
static int add_url(parser *p, const char *u, size_t n, const cJSON *dims,
                   const char *const *values, uint64_t *at)
{
    zf_sbuf r = {0}, s = {0};
    int rc = ZF_OK;
    if (p->version == 1 && memmem(u, n, "{{", 2)) { /* templates first: they may make it absolute */
        if ((rc = render(p, u, n, dims, values, &r)) != ZF_OK) {
            free(r.data);
            return rc;
        }
        u = r.data;
        n = r.len;
    }
    if (memchr(u, '\0', n) || !n) {
        free(r.data);
        return ERR(ZF_ECORRUPT, "an empty target URL, or one holding a NUL");
    }
    if (!memmem(u, n, "://", 3) && u[0] != '/') /* relative: to the document's directory */
        zf_sbuf_add(&s, p->base, strlen(p->base));
    zf_sbuf_add(&s, u, n);
    free(r.data);
    if (s.failed)
        rc = ZF_ENOMEM;
    if (rc == ZF_OK && p->have_last && !strcmp(p->arena.data + p->last_url, s.data))
        *at = p->last_url; /* kerchunk's references name a few files many times, in runs */
    else if (rc == ZF_OK && (rc = arena_add(p, s.data, s.len, at)) == ZF_OK) {
        p->last_url = *at;
        p->have_last = 1;
    }
    free(s.data);
    return rc;
}

/* append reference r (its key added to the arena) */
static int push_ref(parser *p, const char *key, kc_ref r)
{
    if (!key_ok(key))
        return ERR(ZF_ECORRUPT, "not a key a Zarr store may hold: \"%.200s\"", key);
    if (over_limit(p, sizeof r))
        return ERR(ZF_ECORRUPT, "the reference document needs more than the %zu bytes of memory "
                   "allowed", p->limit);
    if (zf_grow(&p->refs, &p->cap, p->n, sizeof *p->refs, 64))
        return ZF_ENOMEM;
    int rc = arena_add(p, key, strlen(key), &r.key);
    if (rc == ZF_OK)
        p->refs[p->n++] = r;
    return rc;
}

/* an offset or length: an integer in [0, KC_RANGE_MAX] */
static int range_int(parser *p, const char *val, size_t vlen, uint64_t *out)
{
    int64_t v;
    if (zf_json_raw_int(val, vlen, &v) != ZF_OK || v < 0 || (uint64_t)v > KC_RANGE_MAX)
        return ERR(ZF_ECORRUPT, "an offset or length that is not a whole number from 0 to 2^62");
    *out = (uint64_t)v;
    return ZF_OK;
}

/* the items of a [url] or [url, offset, length] reference */
typedef struct items {
    parser *p;
    kc_ref r;
    int count, rc;
} items;

static int on_item(void *arg, const char *unused, const char *val, size_t vlen)
{
    (void)unused;
    items *it = arg;
    parser *p = it->p;
    size_t len;
    if (it->count == 0) {
        if (*val != '"')
            return it->rc = ERR(ZF_ECORRUPT, "a reference whose URL is not a string");
        it->rc = decode_string(p, val, vlen, &len);
        if (it->rc == ZF_OK) {
            char *u = strndup(p->scratch, len); /* add_url may grow the scratch */
            it->rc = u ? add_url(p, u, len, NULL, NULL, &it->r.url) : ZF_ENOMEM;
            free(u);
        }
    } else if (it->count <= 2) {
        it->rc = range_int(p, val, vlen, it->count == 1 ? &it->r.off : &it->r.len);
    }
    it->count++;
    return it->rc;
}

static int on_ref(void *arg, const char *key, const char *val, size_t vlen)
{
    parser *p = arg;
    kc_ref r = {.kind = KC_INLINE};
    size_t len;
    int rc;
    if (*val == '"') {
        if ((rc = decode_string(p, val, vlen, &len)) != ZF_OK)
            return rc;
        if (len >= 7 && !memcmp(p->scratch, "base64:", 7)) {
            if (b64_decode(p->scratch + 7, len - 7, &len) != 0)
                return ERR(ZF_ECORRUPT, "%.200s: malformed base64 data", key);
            rc = arena_add(p, p->scratch + 7, len, &r.off);
        } else {
            rc = arena_add(p, p->scratch, len, &r.off);
        }
        r.len = len;
    } else if (*val == '{') { /* metadata as nested JSON: its text, checked */
        cJSON *j = cJSON_ParseWithLength(val, vlen);
        int ok = cJSON_IsObject(j);
        cJSON_Delete(j);
        if (!ok)
            return ERR(ZF_ECORRUPT, "%.200s: malformed nested JSON", key);
        rc = arena_add(p, val, vlen, &r.off);
        r.len = vlen;
    } else if (*val == '[') {
        items it = {.p = p, .r = {.kind = KC_RANGE}};
        rc = zf_json_raw_items(val, vlen, on_item, &it);
        if (rc == ZF_ECORRUPT && it.rc == ZF_OK)
            return ERR(ZF_ECORRUPT, "%.200s: a malformed reference", key);
        if (rc != ZF_OK)
            return rc;
        if (it.count != 1 && it.count != 3)
            return ERR(ZF_ECORRUPT, "%.200s: a reference of %d items (1 or 3: [url] or [url, "
                       "offset, length])", key, it.count);
        r = it.r;
        r.kind = it.count == 1 ? KC_WHOLE : KC_RANGE;
        if (r.off + r.len > KC_RANGE_MAX)
            return ERR(ZF_ECORRUPT, "%.200s: a range that ends beyond 2^62", key);
    } else {
        return ERR(ZF_ECORRUPT, "%.200s: neither data, nested JSON nor a reference", key);
    }
    return rc == ZF_OK ? push_ref(p, key, r) : rc;
}

/* ------------------------------------------------------------ gen */

#define DIMS_MAX 32

/* one dimension of a gen entry: a list of values, or a range */
typedef struct dim {
    const cJSON *list;      /* the values, or NULL for a range */
    int64_t start, step;
    uint64_t count;
    char text[32];          /* a number's text */
} dim;

/* a whole number in a gen entry (within 2^53, as JSON numbers are read) */
static int gen_int(const cJSON *j, int64_t *out)
{
    return zf_json_int(j, -(int64_t)ZF_JSON_MAX_EXACT, (int64_t)ZF_JSON_MAX_EXACT, out);
}

/* dimension j of a gen entry into d */
static int load_dim(parser *p, const cJSON *j, dim *d)
{
    *d = (dim){0};
    if (cJSON_IsArray(j)) {
        d->list = j;
        d->count = (uint64_t)cJSON_GetArraySize(j);
        for (const cJSON *v = j->child; v; v = v->next)
            if (!cJSON_IsString(v) && !gen_int(v, &d->start))
                return ERR(ZF_ECORRUPT, "gen dimension %s lists something other than whole "
                           "numbers and strings", j->string);
        return ZF_OK;
    }
    int64_t stop;
    const cJSON *start = cJSON_GetObjectItemCaseSensitive(j, "start"),
                *step = cJSON_GetObjectItemCaseSensitive(j, "step");
    d->step = 1;
    if (!cJSON_IsObject(j) || !gen_int(cJSON_GetObjectItemCaseSensitive(j, "stop"), &stop) ||
        (start && !gen_int(start, &d->start)) || (step && !gen_int(step, &d->step)) || !d->step)
        return ERR(ZF_ECORRUPT, "gen dimension %s is neither a list nor {start, stop, step} of "
                   "whole numbers (step not 0)", j->string ? j->string : "?");
    int64_t span = d->step > 0 ? stop - d->start : d->start - stop, mag = d->step > 0 ? d->step : -d->step;
    d->count = span > 0 ? (uint64_t)((span + mag - 1) / mag) : 0;
    return ZF_OK;
}

/* the text of dimension d's value number i */
static const char *dim_value(dim *d, uint64_t i)
{
    int64_t v = d->start + (int64_t)i * d->step;
    if (d->list) {
        const cJSON *item = cJSON_GetArrayItem(d->list, (int)i);
        if (cJSON_IsString(item))
            return item->valuestring;
        gen_int(item, &v);
    }
    snprintf(d->text, sizeof d->text, "%lld", (long long)v);
    return d->text;
}

/* a gen entry's field: a string (a template) or a whole number, as text */
static const char *gen_field(const cJSON *e, const char *name, char *num, size_t cap)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(e, name);
    int64_t v;
    if (cJSON_IsString(f))
        return f->valuestring;
    if (!gen_int(f, &v))
        return NULL;
    snprintf(num, cap, "%lld", (long long)v);
    return num;
}

/* one combination of a gen entry's dimensions into a reference */
static int gen_one(parser *p, const cJSON *e, const cJSON *dims, const char *const *values)
{
    char knum[32], unum[32], onum[32], lnum[32];
    const char *key = gen_field(e, "key", knum, sizeof knum), *url = gen_field(e, "url", unum, sizeof unum);
    const char *off = gen_field(e, "offset", onum, sizeof onum), *len = gen_field(e, "length", lnum, sizeof lnum);
    if (!key || !url || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "key")) || !!off != !!len)
        return ERR(ZF_ECORRUPT, "a gen entry without a key and url, or with only one of offset and "
                   "length");
    zf_sbuf k = {0}, o = {0}, l = {0};
    kc_ref r = {.kind = off ? KC_RANGE : KC_WHOLE};
    int rc = render(p, key, strlen(key), dims, values, &k);
    if (rc == ZF_OK && off && (rc = render(p, off, strlen(off), dims, values, &o)) == ZF_OK &&
        (rc = render(p, len, strlen(len), dims, values, &l)) == ZF_OK &&
        ((rc = range_int(p, o.data, o.len, &r.off)) != ZF_OK ||
         (rc = range_int(p, l.data, l.len, &r.len)) != ZF_OK || r.off + r.len > KC_RANGE_MAX))
        rc = rc ? rc : ERR(ZF_ECORRUPT, "%.200s: a range that ends beyond 2^62", k.data);
    if (rc == ZF_OK && memchr(k.data, 0, k.len))
        rc = ERR(ZF_ECORRUPT, "a gen key holding a NUL");
    if (rc == ZF_OK)
        rc = add_url(p, url, strlen(url), dims, values, &r.url);
    if (rc == ZF_OK)
        rc = push_ref(p, k.data, r);
    free(k.data);
    free(o.data);
    free(l.data);
    return rc;
}

/* every combination of gen entry e's dimensions (the last varying fastest) */
static int gen_entry(parser *p, const cJSON *e)
{
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(e, "dimensions");
    int nd = cJSON_GetArraySize(dims);
    if (!cJSON_IsObject(e) || !cJSON_IsObject(dims) || nd > DIMS_MAX)
        return ERR(ZF_ECORRUPT, "a gen entry without an object of at most %d dimensions", DIMS_MAX);
    dim d[DIMS_MAX];
    const char *values[DIMS_MAX];
    uint64_t total = 1, at[DIMS_MAX] = {0};
    int i = 0, rc = ZF_OK;
    for (const cJSON *j = dims->child; j && rc == ZF_OK; j = j->next, i++) {
        rc = load_dim(p, j, &d[i]);
        if (rc == ZF_OK && d[i].count && total > (p->limit / sizeof(kc_ref)) / d[i].count)
            rc = ERR(ZF_ECORRUPT, "gen makes more references than the memory allowed holds");
        total *= d[i].count;
    }
    for (uint64_t done = 0; rc == ZF_OK && done < total; done++) {
        for (int k = 0; k < nd; k++)
            values[k] = dim_value(&d[k], at[k]);
        rc = gen_one(p, e, dims, values);
        for (int k = nd - 1; k >= 0 && ++at[k] == d[k].count; k--)
            at[k] = 0;
    }
    return rc;
}

/* the gen entries of a version 1 document */
static int parse_gen(parser *p, const char *val, size_t vlen)
{
    cJSON *g = cJSON_ParseWithLength(val, vlen);
    int rc = cJSON_IsArray(g) ? ZF_OK : ERR(ZF_ECORRUPT, "\"gen\" is not a JSON array");
    for (const cJSON *e = g ? g->child : NULL; rc == ZF_OK && e; e = e->next)
        rc = gen_entry(p, e);
    cJSON_Delete(g);
    return rc;
}

/* ------------------------------------------------------------ the table */

static const char *arena_str(const parser *p, uint64_t at)
{
    return p->arena.data + at;
}

static int by_key(const void *a, const void *b, void *arg)
{
    const parser *p = arg;
    return strcmp(arena_str(p, ((const kc_ref *)a)->key), arena_str(p, ((const kc_ref *)b)->key));
}

/* sort the references; refuse a key given twice or one that is also a directory */
static int finish(parser *p, kc_doc *out)
{
    if (p->n) /* (qsort of NULL is undefined) */
        qsort_r(p->refs, p->n, sizeof *p->refs, by_key, p);
    *out = (kc_doc){.version = p->version, .arena = p->arena.data, .arena_len = p->arena.len,
                    .refs = p->refs, .n = p->n};
    for (size_t i = 0; i < p->n; i++) {
        kc_ref *r = &p->refs[i];
        const char *k = arena_str(p, r->key);
        out->counts[r->kind]++;
        if (r->kind == KC_INLINE) {
            zf_fp_init(&r->digest);
            zf_fp_add(&r->digest, p->arena.data + r->off, (size_t)r->len);
        }
        if (i && !strcmp(k, arena_str(p, p->refs[i - 1].key)))
            return ERR(ZF_ECORRUPT, "key %.200s is given twice", k);
        int is_dir = 0;
        kc_find(out, k, &is_dir);
        if (is_dir)
            return ERR(ZF_ECORRUPT, "key %.200s is both a value and a directory", k);
    }
    return ZF_OK;
}

static int no_member(void *arg, const char *key, const char *val, size_t vlen)
{
    (void)arg, (void)key, (void)val, (void)vlen;
    return 0;
}

/* the refs of a version 1 document (templates, then refs, then gen) */
static int parse_v1(parser *p, const char *text, size_t n)
{
    const char *val;
    size_t vlen;
    int rc = ZF_OK;
    if (zf_json_raw_member(text, n, "templates", &val, &vlen) == ZF_OK)
        rc = load_templates(p, val, vlen);
    if (rc == ZF_OK && zf_json_raw_member(text, n, "refs", &val, &vlen) == ZF_OK) {
        if (*val != '{')
            return ERR(ZF_ECORRUPT, "\"refs\" is not a JSON object");
        rc = zf_json_raw_members(val, vlen, on_ref, p);
    }
    if (rc == ZF_OK && zf_json_raw_member(text, n, "gen", &val, &vlen) == ZF_OK)
        rc = parse_gen(p, val, vlen);
    return rc;
}

int kc_parse(const char *text, size_t n, const char *base, size_t limit, kc_doc *out, char *err,
             size_t errcap)
{
    memset(out, 0, sizeof *out);
    parser pr = {.base = base, .limit = limit, .err = err, .errcap = errcap}, *p = &pr;
    const char *val;
    size_t vlen;
    int64_t version = 0;
    int rc = zf_json_raw_members(text, n, no_member, NULL); /* whole, not cut short */
    if (rc == ZF_OK)
        rc = zf_json_raw_member(text, n, "version", &val, &vlen);
    if (rc == ZF_ECORRUPT)
        rc = ERR(ZF_ECORRUPT, "malformed JSON, or not an object of references (a key holding "
                 "a NUL?)");
    else if (rc == ZF_OK && (zf_json_raw_int(val, vlen, &version) != ZF_OK || version != 1))
        rc = ERR(ZF_EUNSUPPORTED, "reference spec version %.*s (zarrfs reads versions 0 and 1)",
                 (int)(vlen < 20 ? vlen : 20), val);
    else
        rc = ZF_OK;
    p->version = (int)version;
    if (rc == ZF_OK)
        rc = version == 1 ? parse_v1(p, text, n) : zf_json_raw_members(text, n, on_ref, p);
    if (rc == ZF_ECORRUPT && err && !*err)
        rc = ERR(ZF_ECORRUPT, "malformed JSON");
    if (rc == ZF_OK)
        rc = finish(p, out);
    cJSON_Delete(p->templates);
    free(p->scratch);
    if (rc != ZF_OK) {
        free(p->arena.data);
        free(p->refs);
        memset(out, 0, sizeof *out);
    }
    return rc;
}

void kc_doc_free(kc_doc *d)
{
    free(d->arena);
    free(d->refs);
    memset(d, 0, sizeof *d);
}

const char *kc_key(const kc_doc *d, const kc_ref *r)
{
    return d->arena + r->key;
}

const char *kc_url(const kc_doc *d, const kc_ref *r)
{
    return r->kind == KC_INLINE ? NULL : d->arena + r->url;
}

size_t kc_lower(const kc_doc *d, const char *s)
{
    size_t lo = 0, hi = d->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(d->arena + d->refs[mid].key, s) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const kc_ref *kc_find(const kc_doc *d, const char *key, int *is_dir)
{
    size_t n = strlen(key);
    *is_dir = !n;
    if (!n)
        return NULL;
    size_t i = kc_lower(d, key);
    const kc_ref *r = i < d->n && !strcmp(d->arena + d->refs[i].key, key) ? &d->refs[i] : NULL;
    char prefix[ZF_KEY_MAX + 1];
    if (n + 1 >= sizeof prefix)
        return r;
    memcpy(prefix, key, n);
    memcpy(prefix + n, "/", 2);
    size_t j = kc_lower(d, prefix);
    *is_dir = j < d->n && !strncmp(d->arena + d->refs[j].key, prefix, n + 1);
    return r;
}
