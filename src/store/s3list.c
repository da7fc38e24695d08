/* s3list.c - ListObjectsV2 pages and S3 error documents, with expat.
 *
 * The parser keeps the names of the open elements (namespace prefixes
 * dropped) and collects the text of the few leaves that matter, each within
 * a bound; a DTD stops it before any declaration is read. */
#include "store/s3list.h"

#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "base/sbuf.h"
#include "base/utf8.h"
#include "base/vec.h"
#include "store/store.h"

#define DEPTH_MAX 16  /* deeper documents are refused */
#define NAME_MAX_ 32  /* element names kept (longer ones are kept cut) */
#define TEXT_MAX 4096 /* text of a leaf other than a key */

enum { LEAF_NONE, LEAF_KEY, LEAF_SIZE, LEAF_ETAG, LEAF_MTIME, LEAF_PREFIX, LEAF_TRUNC, LEAF_TOKEN,
       LEAF_COUNT, LEAF_CODE, LEAF_MESSAGE };

typedef struct pstate {
    XML_Parser xp;
    const char *root;           /* the root element expected */
    int depth;
    char names[DEPTH_MAX + 1][NAME_MAX_];
    int leaf;                   /* the leaf whose text is being collected */
    zf_sbuf text;
    size_t textmax;
    char why[160];              /* first failure; "" while fine */
    zf_s3list_page *page;       /* list mode */
    zf_s3list_item cur;         /* the entry being read */
    size_t itemcap;
    char *code, *message;       /* error mode */
} pstate;

static void fail(pstate *s, const char *why)
{
    if (!s->why[0])
        snprintf(s->why, sizeof s->why, "%s", why);
    XML_StopParser(s->xp, XML_FALSE);
}

/* the local part of an element name (after any "prefix:") */
static const char *local(const char *name)
{
    const char *c = strrchr(name, ':');
    return c ? c + 1 : name;
}

/* which leaf an element at the current depth is, given its parents */
static int leaf_of(const pstate *s, const char *n)
{
    const char *parent = s->depth >= 2 ? s->names[s->depth - 1] : "";
    if (s->page && s->depth == 2) {
        return !strcmp(n, "IsTruncated") ? LEAF_TRUNC
               : !strcmp(n, "NextContinuationToken") ? LEAF_TOKEN
               : !strcmp(n, "KeyCount") ? LEAF_COUNT : LEAF_NONE;
    }
    if (s->page && s->depth == 3 && !strcmp(parent, "Contents")) {
        return !strcmp(n, "Key") ? LEAF_KEY
               : !strcmp(n, "Size") ? LEAF_SIZE
               : !strcmp(n, "ETag") ? LEAF_ETAG
               : !strcmp(n, "LastModified") ? LEAF_MTIME : LEAF_NONE;
    }
    if (s->page && s->depth == 3 && !strcmp(parent, "CommonPrefixes"))
        return !strcmp(n, "Prefix") ? LEAF_PREFIX : LEAF_NONE;
    if (!s->page && s->depth == 2)
        return !strcmp(n, "Code") ? LEAF_CODE : !strcmp(n, "Message") ? LEAF_MESSAGE : LEAF_NONE;
    return LEAF_NONE;
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    pstate *s = ud;
    const char *n = local(name);
    if (++s->depth > DEPTH_MAX) {
        fail(s, "elements nested too deeply");
        return;
    }
    snprintf(s->names[s->depth], NAME_MAX_, "%s", n);
    if (s->depth == 1 && strcmp(n, s->root)) {
        fail(s, s->page ? "not a ListBucketResult document" : "not an Error document");
        return;
    }
    if (s->page && s->depth == 2 && (!strcmp(n, "Contents") || !strcmp(n, "CommonPrefixes"))) {
        if (s->page->n >= ZF_S3LIST_ITEMS) {
            fail(s, "more entries than a page may hold");
            return;
        }
        s->cur = (zf_s3list_item){.prefix = !strcmp(n, "CommonPrefixes")};
    }
    s->leaf = leaf_of(s, n);
    s->text.len = 0;
    if (s->text.data)
        s->text.data[0] = '\0';
    s->textmax = s->leaf == LEAF_KEY || s->leaf == LEAF_PREFIX ? ZF_KEY_MAX - 1 : TEXT_MAX;
}

static void XMLCALL on_text(void *ud, const XML_Char *t, int len)
{
    pstate *s = ud;
    if (!s->leaf)
        return;
    if ((size_t)len > s->textmax - s->text.len) {
        int key = s->leaf == LEAF_KEY || s->leaf == LEAF_PREFIX;
        fail(s, key ? "a key longer than a key may be" : "an element's text too long");
        return;
    }
    zf_sbuf_add(&s->text, t, (size_t)len);
    if (s->text.failed)
        fail(s, "out of memory");
}

/* text as an unsigned decimal */
static int parse_u64(const char *t, uint64_t *v)
{
    if (!*t)
        return 0;
    uint64_t x = 0;
    for (; *t; t++) {
        if (*t < '0' || *t > '9' || x > (UINT64_MAX - (uint64_t)(*t - '0')) / 10)
            return 0;
        x = x * 10 + (uint64_t)(*t - '0');
    }
    *v = x;
    return 1;
}

/* keep a copy of the collected text in *dst (first one wins) */
static void keep(pstate *s, char **dst, const char *t)
{
    if (*dst) {
        fail(s, "an element given twice");
        return;
    }
    *dst = strdup(t);
    if (!*dst)
        fail(s, "out of memory");
}

static void push_item(pstate *s)
{
    if (!s->cur.key || !s->cur.key[0]) {
        fail(s, "an entry without a key");
        return;
    }
    zf_s3list_page *p = s->page;
    if (zf_grow(&p->items, &s->itemcap, p->n, sizeof *p->items, 64)) {
        fail(s, "out of memory");
        return;
    }
    p->items[p->n++] = s->cur;
    s->cur = (zf_s3list_item){0};
}

/* a leaf's text, now complete */
static void leaf_done(pstate *s, const char *t)
{
    uint64_t v;
    switch (s->leaf) {
    case LEAF_KEY:
    case LEAF_PREFIX: keep(s, &s->cur.key, t); return;
    case LEAF_ETAG: keep(s, &s->cur.etag, t); return;
    case LEAF_TOKEN: keep(s, &s->page->next_token, t); return;
    case LEAF_CODE: keep(s, &s->code, t); return;
    case LEAF_MESSAGE: keep(s, &s->message, t); return;
    case LEAF_SIZE:
        if (!parse_u64(t, &v)) {
            fail(s, "a Size that is not a number");
            return;
        }
        s->cur.size = v;
        return;
    case LEAF_MTIME:
        if (zf_s3list_time(t, &s->cur.mtime_ns) != ZF_OK)
            fail(s, "a LastModified that is not a time");
        return;
    case LEAF_COUNT:
        if (!parse_u64(t, &v) || v > ZF_S3LIST_ITEMS) {
            fail(s, "a KeyCount that is not a count");
            return;
        }
        s->page->key_count = (long)v;
        return;
    case LEAF_TRUNC:
        if (strcmp(t, "true") && strcmp(t, "false")) {
            fail(s, "an IsTruncated that is neither true nor false");
            return;
        }
        s->page->truncated = t[0] == 't';
        return;
    default: return;
    }
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    pstate *s = ud;
    if (s->leaf)
        leaf_done(s, s->text.data ? s->text.data : "");
    s->leaf = LEAF_NONE;
    if (s->page && s->depth == 2 && (!strcmp(s->names[2], "Contents") ||
                                     !strcmp(s->names[2], "CommonPrefixes")))
        push_item(s);
    s->depth--;
}

static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
                               const XML_Char *pubid, int has_internal_subset)
{
    fail(ud, "a document type declaration (DTDs are refused)");
}

/* parse xml with s's handlers; ZF_OK or ZF_ECORRUPT with s->why set */
static int run(pstate *s, const char *xml, size_t len)
{
    s->xp = XML_ParserCreate("UTF-8");
    if (!s->xp)
        return ZF_ENOMEM;
    XML_SetUserData(s->xp, s);
    XML_SetElementHandler(s->xp, on_start, on_end);
    XML_SetCharacterDataHandler(s->xp, on_text);
    XML_SetStartDoctypeDeclHandler(s->xp, on_doctype);
    int rc = ZF_OK;
    if (len > (size_t)INT32_MAX) {
        fail(s, "a document too large");
    } else if (XML_Parse(s->xp, xml, (int)len, XML_TRUE) != XML_STATUS_OK && !s->why[0]) {
        snprintf(s->why, sizeof s->why, "malformed XML at line %lu: %s",
                 (unsigned long)XML_GetCurrentLineNumber(s->xp),
                 XML_ErrorString(XML_GetErrorCode(s->xp)));
    }
    if (s->why[0])
        rc = ZF_ECORRUPT;
    XML_ParserFree(s->xp);
    free(s->text.data);
    free(s->cur.key);
    free(s->cur.etag);
    return rc;
}

int zf_s3list_parse(const char *xml, size_t len, zf_s3list_page *page, char *err, size_t errcap)
{
    *page = (zf_s3list_page){.key_count = -1};
    pstate s = {.root = "ListBucketResult", .page = page};
    int rc = run(&s, xml, len);
    if (rc == ZF_OK && page->truncated && !page->next_token) {
        snprintf(s.why, sizeof s.why, "IsTruncated without a NextContinuationToken");
        rc = ZF_ECORRUPT;
    }
    if (rc != ZF_OK && err && errcap)
        snprintf(err, errcap, "ListObjectsV2 answer: %s", s.why[0] ? s.why : "out of memory");
    return rc;
}

void zf_s3list_page_free(zf_s3list_page *page)
{
    for (size_t i = 0; i < page->n; i++) {
        free(page->items[i].key);
        free(page->items[i].etag);
    }
    free(page->items);
    free(page->next_token);
    *page = (zf_s3list_page){0};
}

/* copy t into out (cap bytes), control characters (base/utf8.h) as '?' */
static void clean_copy(char *out, size_t cap, const char *t)
{
    if (cap)
        zf_utf8_clean_copy(out, cap, t ? t : "", t ? strlen(t) : 0, '?');
}

int zf_s3list_error(const char *xml, size_t len, char *code, size_t codecap, char *msg,
                    size_t msgcap)
{
    pstate s = {.root = "Error"};
    int rc = run(&s, xml, len);
    if (rc == ZF_OK && (!s.code || !*s.code))
        rc = ZF_ECORRUPT; /* no code: not an S3 error */
    clean_copy(code, codecap, rc == ZF_OK ? s.code : "");
    clean_copy(msg, msgcap, rc == ZF_OK ? s.message : "");
    free(s.code);
    free(s.message);
    return rc;
}

/* n decimal digits at s as an int; -1 if any is not a digit */
static int digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

int zf_s3list_time(const char *s, int64_t *ns)
{
    if (strlen(s) < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
        s[16] != ':')
        return ZF_ECORRUPT;
    struct tm tm = {.tm_year = digits(s, 4) - 1900, .tm_mon = digits(s + 5, 2) - 1,
                    .tm_mday = digits(s + 8, 2), .tm_hour = digits(s + 11, 2),
                    .tm_min = digits(s + 14, 2), .tm_sec = digits(s + 17, 2)};
    if (tm.tm_year < 0 || tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
        tm.tm_hour < 0 || tm.tm_hour > 23 || tm.tm_min < 0 || tm.tm_min > 59 || tm.tm_sec < 0 ||
        tm.tm_sec > 60)
        return ZF_ECORRUPT;
    const char *p = s + 19;
    int64_t frac = 0, scale = 1000000000;
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++)
            if (scale > 1) {
                scale /= 10;
                frac += (*p - '0') * scale;
            }
    }
    if (strcmp(p, "Z") && strcmp(p, "+00:00"))
        return ZF_ECORRUPT;
    time_t t = timegm(&tm);
    if (t < -(INT64_MAX / 1000000000) || t >= INT64_MAX / 1000000000)
        return ZF_ECORRUPT; /* beyond what ns since the epoch hold (1677 to 2262) */
    *ns = (int64_t)t * 1000000000 + frac;
    return ZF_OK;
}
