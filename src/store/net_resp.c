/* net_resp.c - one attempt's response: headers parsed as they arrive, the
 * body written straight into the caller's buffer within its bounds, and the
 * verdict on how the attempt ended. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/err.h"
#include "store/net_impl.h"

/* write a one-line reason into the request's err */
static void set_err(zf_net_xfer *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(zf_net_xfer *x, const char *fmt, ...)
{
    zf_net_req *r = x->req;
    if (!r->err || !r->errcap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, r->errcap, fmt, ap);
    va_end(ap);
}

/* stop the transfer from a callback with rc (and the reason already set) */
static size_t abort_with(zf_net_xfer *x, int rc)
{
    x->abort_rc = rc;
    return 0; /* any count other than the one given makes libcurl stop */
}

void zf_net_resp_reset(zf_net_xfer *x)
{
    x->status = 0;
    x->clen = 0;
    x->clen_known = 0;
    x->cr_start = x->cr_end = x->cr_total = 0;
    x->cr_known = x->cr_total_known = 0;
    x->retry_after_ms = -1;
    x->pos = 0;
    x->abort_rc = 0;
    x->range_done = 0;
    x->etag[0] = '\0';
    x->last_modified_ns = 0;
    x->coding[0] = '\0';
    x->generation[0] = '\0';
    x->req->n = 0;
}

/* parse a decimal uint64 at *p (advancing it); 0 if there is none or it overflows */
static int parse_u64(const char **p, uint64_t *v)
{
    const char *s = *p;
    uint64_t acc = 0;
    if (*s < '0' || *s > '9')
        return 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (acc > (UINT64_MAX - d) / 10)
            return 0;
        acc = acc * 10 + d;
    }
    *p = s;
    *v = acc;
    return 1;
}

/* "bytes S-E/T", "bytes S-E/(star)" or "bytes (star)/T" */
static void parse_content_range(zf_net_xfer *x, const char *v)
{
    if (strncasecmp(v, "bytes", 5) != 0)
        return;
    v += 5;
    while (*v == ' ')
        v++;
    if (*v == '*') {
        v++;
    } else {
        if (!parse_u64(&v, &x->cr_start) || *v++ != '-' || !parse_u64(&v, &x->cr_end) ||
            x->cr_end < x->cr_start)
            return;
        x->cr_known = 1;
    }
    if (*v++ != '/')
        return;
    x->cr_total_known = parse_u64(&v, &x->cr_total);
}

/* Retry-After: delay-seconds or an HTTP date */
static void parse_retry_after(zf_net_xfer *x, const char *v)
{
    uint64_t s;
    const char *p = v;
    if (parse_u64(&p, &s)) {
        x->retry_after_ms = s > 86400 ? 86400000 : (int64_t)s * 1000;
        return;
    }
    time_t t = curl_getdate(v, NULL);
    if (t != -1) {
        time_t now = time(NULL);
        x->retry_after_ms = t > now ? (int64_t)(t - now) * 1000 : 0;
    }
}

/* one "Name: value" line (value trimmed, NUL-terminated) */
static void on_field(zf_net_xfer *x, const char *name, const char *v)
{
    if (!strcasecmp(name, "content-length")) {
        x->clen_known = parse_u64(&v, &x->clen);
    } else if (!strcasecmp(name, "content-range")) {
        parse_content_range(x, v);
    } else if (!strcasecmp(name, "etag")) {
        snprintf(x->etag, sizeof x->etag, "%s", v);
    } else if (!strcasecmp(name, "last-modified")) {
        time_t t = curl_getdate(v, NULL);
        x->last_modified_ns = (t == -1 || t < 0 || t > INT64_MAX / 1000000000) ? 0
                                                                             : (int64_t)t * 1000000000;
    } else if (!strcasecmp(name, "x-goog-generation")) {
        snprintf(x->generation, sizeof x->generation, "%s", v);
    } else if (!strcasecmp(name, "retry-after")) {
        parse_retry_after(x, v);
    } else if (!strcasecmp(name, "content-encoding") && *v && strcasecmp(v, "identity")) {
        snprintf(x->coding, sizeof x->coding, "%s", v);
    }
}

/* the bytes a whole-object GET may hold */
static size_t whole_limit(const zf_net_req *r)
{
    return r->grow ? r->max : r->cap;
}

/* checks once a 2xx answer's headers are complete: 0 stops the transfer */
static int check_head(zf_net_xfer *x)
{
    zf_net_req *r = x->req;
    if (r->head)
        return 1;
    if (r->len) {
        uint64_t last = r->off + r->len - 1;
        if (*x->coding) {
            set_err(x, "the object is stored with Content-Encoding: %s; a byte range of it cannot "
                       "be read (only whole objects are decoded)", x->coding);
            return 0;
        }
        if (x->status == 206 && !x->cr_known) {
            set_err(x, "a partial answer (206) without a Content-Range");
            return 0;
        }
        if (x->status == 206 && x->cr_end < last && x->cr_start == r->off && x->cr_total_known &&
            x->cr_total == x->cr_end + 1) {
            set_err(x, "the object is %" PRIu64 " bytes, shorter than the range asked (%" PRIu64
                       "-%" PRIu64 ")", x->cr_total, r->off, last);
            return 0;
        }
        if (x->status == 206 && (x->cr_start != r->off || x->cr_end != last)) {
            set_err(x, "answer for bytes %" PRIu64 "-%" PRIu64 ", not the range asked (%" PRIu64
                       "-%" PRIu64 ")", x->cr_start, x->cr_end, r->off, last);
            return 0;
        }
        if (x->status == 200 && x->clen_known && x->clen <= last) {
            set_err(x, "the object is %" PRIu64 " bytes, shorter than the range asked (%" PRIu64
                       "-%" PRIu64 ")", x->clen, r->off, last);
            return 0;
        }
        return 1;
    }
    if (x->status == 206) {
        set_err(x, "a partial answer (206) to a whole-object request");
        return 0;
    }
    if (x->clen_known && x->clen > whole_limit(r)) {
        set_err(x, "the object is %" PRIu64 " bytes, more than the %zu allowed", x->clen,
                whole_limit(r));
        return 0;
    }
    if (r->grow && x->clen_known && x->clen > 0 && zf_store_buf_reserve(r->grow, x->clen) != ZF_OK) {
        set_err(x, "out of memory for a %" PRIu64 "-byte object", x->clen);
        x->abort_rc = ZF_ENOMEM;
        return 0;
    }
    return 1;
}

static int is_2xx(long status)
{
    return status >= 200 && status < 300;
}

/* the statuses libcurl follows a Location of */
static int is_redirect(long status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

/* may a redirect from the URL from go to location (resolved against it)?
 * Only to the same scheme, host and port, or from http to https on the same
 * host, and never with user information.  shown gets where it leads
 * (scheme://host:port: no user information, path or query). */
static int redirect_allowed(const char *from, const char *location, char *shown, size_t cap)
{
    CURLU *a = curl_url(), *b = curl_url();
    char *sa = NULL, *sb = NULL, *ha = NULL, *hb = NULL, *pa = NULL, *pb = NULL, *user = NULL;
    int ok = 0;
    snprintf(shown, cap, "a URL that cannot be read");
    if (a && b && !curl_url_set(a, CURLUPART_URL, from, 0) && !curl_url_set(b, CURLUPART_URL, from, 0) &&
        !curl_url_set(b, CURLUPART_URL, location, 0) && /* relative to from */
        !curl_url_get(a, CURLUPART_SCHEME, &sa, 0) && !curl_url_get(b, CURLUPART_SCHEME, &sb, 0) &&
        !curl_url_get(a, CURLUPART_HOST, &ha, 0) && !curl_url_get(b, CURLUPART_HOST, &hb, 0) &&
        !curl_url_get(a, CURLUPART_PORT, &pa, CURLU_DEFAULT_PORT) &&
        !curl_url_get(b, CURLUPART_PORT, &pb, CURLU_DEFAULT_PORT)) {
        int has_user = curl_url_get(b, CURLUPART_USER, &user, 0) == CURLUE_OK;
        int same_host = !strcasecmp(ha, hb);
        ok = !has_user && same_host && ((!strcasecmp(sa, sb) && !strcmp(pa, pb)) ||
                                        (!strcasecmp(sa, "http") && !strcasecmp(sb, "https")));
        snprintf(shown, cap, "%s://%s:%s%s", sb, hb, pb, has_user ? " with user information" : "");
    }
    char *parts[] = {sa, sb, ha, hb, pa, pb, user};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        curl_free(parts[i]);
    curl_url_cleanup(a);
    curl_url_cleanup(b);
    return ok;
}

/* a Location of a redirect libcurl would follow: 0 stops the transfer
 * when it leads elsewhere (the reason set) */
static int check_location(zf_net_xfer *x, const char *location)
{
    const char *from = NULL;
    if (x->req->headers || x->req->method || !is_redirect(x->status)) /* followed by none */
        return 1;
    if (x->easy)
        curl_easy_getinfo(x->easy, CURLINFO_EFFECTIVE_URL, (char **)&from);
    char shown[300];
    if (redirect_allowed(from && *from ? from : x->req->url, location, shown, sizeof shown))
        return 1;
    set_err(x, "HTTP %ld: a redirect to %s refused (only the same scheme, host and port are "
               "followed, or http to https on the same host)", x->status, shown);
    return 0;
}

size_t zf_net_on_header(char *b, size_t size, size_t n, void *ud)
{
    zf_net_xfer *x = ud;
    size_t len = size * n;
    if (len >= 5 && !strncmp(b, "HTTP/", 5)) { /* a new response (after 1xx or a redirect) */
        zf_net_resp_reset(x);
        const char *sp = memchr(b, ' ', len);
        const char *p = sp ? sp + 1 : NULL;
        uint64_t st = 0;
        if (p && p < b + len && parse_u64(&p, &st) && st < 1000)
            x->status = (long)st;
        return len;
    }
    if (len <= 2 && (len == 0 || b[0] == '\r' || b[0] == '\n')) { /* end of the headers */
        if (is_2xx(x->status) && !check_head(x))
            return abort_with(x, x->abort_rc ? x->abort_rc : ZF_ECORRUPT);
        return len;
    }
    char line[4096];
    if (len >= sizeof line && len > 9 && !strncasecmp(b, "location:", 9) && is_redirect(x->status) &&
        !x->req->headers && !x->req->method) {
        set_err(x, "HTTP %ld: a redirect to a URL of %zu bytes refused", x->status, len);
        return abort_with(x, ZF_EIO);
    }
    if (len >= sizeof line)
        return len; /* no other field we read is this long */
    memcpy(line, b, len);
    while (len && (line[len - 1] == '\r' || line[len - 1] == '\n' || line[len - 1] == ' '))
        len--;
    line[len] = '\0';
    char *colon = strchr(line, ':');
    if (!colon)
        return size * n;
    *colon = '\0';
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t')
        v++;
    if (!strcasecmp(line, "location") && !check_location(x, v))
        return abort_with(x, ZF_EIO);
    on_field(x, line, v);
    return size * n;
}

/* the start of an error answer's body, kept for the caller */
static size_t keep_error_body(zf_net_xfer *x, const char *b, size_t len)
{
    zf_net_req *r = x->req;
    size_t room = r->grow ? r->max : r->cap;
    if (room > ZF_NET_ERRBODY_MAX)
        room = ZF_NET_ERRBODY_MAX;
    if (r->n >= room)
        return len;
    size_t take = len < room - r->n ? len : room - r->n;
    uint8_t *dst = r->buf;
    if (r->grow) {
        if (zf_store_buf_reserve(r->grow, room) != ZF_OK)
            return len;
        dst = r->grow->p;
    }
    if (dst)
        memcpy(dst + r->n, b, take);
    r->n += dst ? take : 0;
    return len;
}

/* a 200 answer to a ranged request: take the range as the object streams by */
static size_t range_from_whole(zf_net_xfer *x, const char *b, size_t len)
{
    zf_net_req *r = x->req;
    uint64_t lo = x->pos, hi = x->pos + len, end = r->off + r->len;
    uint64_t a = lo > r->off ? lo : r->off, z = hi < end ? hi : end;
    if (a < z) {
        memcpy(r->buf + (a - r->off), b + (a - lo), (size_t)(z - a));
        r->n += (size_t)(z - a);
    }
    x->pos = hi;
    if (hi >= end) {
        x->range_done = 1;
        return 0; /* the rest is not needed: stop here */
    }
    return len;
}

/* a whole-object body: into grow (doubling up to max) or buf */
static size_t whole_body(zf_net_xfer *x, const char *b, size_t len)
{
    zf_net_req *r = x->req;
    size_t limit = whole_limit(r);
    if (len > limit - r->n) {
        set_err(x, "the object is more than the %zu bytes allowed", limit);
        return abort_with(x, ZF_ECORRUPT);
    }
    uint8_t *dst = r->buf;
    if (r->grow) {
        size_t need = r->n + len;
        if (need > r->grow->cap || !r->grow->p) {
            size_t want = r->grow->cap > limit / 2 ? limit : r->grow->cap * 2;
            if (want < need)
                want = need;
            if (zf_store_buf_reserve(r->grow, want) != ZF_OK) {
                set_err(x, "out of memory for a %zu-byte object", want);
                return abort_with(x, ZF_ENOMEM);
            }
        }
        dst = r->grow->p;
    }
    memcpy(dst + r->n, b, len);
    r->n += len;
    x->pos += len;
    return len;
}

size_t zf_net_on_body(char *b, size_t size, size_t n, void *ud)
{
    zf_net_xfer *x = ud;
    zf_net_req *r = x->req;
    size_t len = size * n;
    if (!is_2xx(x->status))
        return keep_error_body(x, b, len);
    if (!r->len)
        return whole_body(x, b, len);
    if (x->status != 206)
        return range_from_whole(x, b, len);
    if (len > r->len - r->n) {
        set_err(x, "more bytes than the %" PRIu64 " asked", r->len);
        return abort_with(x, ZF_ECORRUPT);
    }
    memcpy(r->buf + r->n, b, len);
    r->n += len;
    x->pos += len;
    return len;
}

/* libcurl results worth another attempt, with their labels */
static const char *transient(CURLcode code)
{
    switch (code) {
    case CURLE_OPERATION_TIMEDOUT: return "timed out";
    case CURLE_COULDNT_CONNECT: return "could not connect";
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR: return "connection lost";
    case CURLE_GOT_NOTHING: return "empty reply";
    case CURLE_PARTIAL_FILE: return "body cut short";
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return "HTTP/2 stream failed";
    default: return NULL;
    }
}

/* the object's size, as far as the final answer says it */
static void fill_size(zf_net_xfer *x)
{
    zf_net_req *r = x->req;
    if (x->status == 206 && x->cr_total_known) {
        r->size = x->cr_total;
        r->size_known = 1;
    } else if (is_2xx(x->status) && !r->head && !r->len && !x->abort_rc) {
        r->size = *x->coding && x->clen_known ? x->clen : r->n; /* as stored (HEAD, listings) */
        r->size_known = 1;
    } else if (x->status == 200 && x->clen_known) {
        r->size = x->clen;
        r->size_known = 1;
    }
}

/* a finished attempt with an HTTP answer */
static zf_net_verdict judge_status(zf_net_xfer *x, char *why, size_t whycap)
{
    zf_net_req *r = x->req;
    long st = x->status;
    if (is_2xx(st)) {
        if (r->len && r->n != r->len) {
            uint64_t got = x->status == 206 ? x->cr_start + r->n : x->pos;
            set_err(x, "the object is %" PRIu64 " bytes, shorter than the range asked (%" PRIu64
                       "-%" PRIu64 ")", got, r->off, r->off + r->len - 1);
            r->rc = ZF_ECORRUPT;
        }
        return ZF_NET_DONE;
    }
    if (st == 404 || st == 410) {
        set_err(x, "HTTP %ld", st);
        r->rc = ZF_ENOTFOUND;
    } else if (st == 416 && !r->len) {
        set_err(x, "HTTP 416 (range not satisfiable) to a request for the whole object, which "
                   "asked for no range");
        r->rc = ZF_EIO;
    } else if (st == 416) {
        if (x->cr_total_known)
            set_err(x, "the object is %" PRIu64 " bytes, shorter than the range asked (%" PRIu64
                       "-%" PRIu64 ")", x->cr_total, r->off, r->off + r->len - 1);
        else
            set_err(x, "HTTP 416: the range asked is beyond the object's end");
        r->rc = ZF_ECORRUPT;
    } else if (st == 429 || st == 500 || st == 502 || st == 503 || st == 504) {
        snprintf(why, whycap, "HTTP %ld", st);
        return ZF_NET_RETRY;
    } else {
        set_err(x, "HTTP %ld", st);
        r->rc = ZF_EIO;
    }
    return ZF_NET_DONE;
}

zf_net_verdict zf_net_judge(zf_net_xfer *x, CURLcode code, const char *errbuf, char *why,
                            size_t whycap)
{
    zf_net_req *r = x->req;
    zf_net_verdict v = ZF_NET_DONE;
    r->rc = ZF_OK;
    r->status = x->status;
    if (x->range_done) {
        v = judge_status(x, why, whycap);
    } else if (x->abort_rc) {
        r->rc = x->abort_rc;
    } else if (code != CURLE_OK) {
        const char *t = transient(code);
        if (t) {
            snprintf(why, whycap, "%s", t);
            return ZF_NET_RETRY;
        }
        set_err(x, "%s", errbuf && *errbuf ? errbuf : curl_easy_strerror(code));
        r->rc = ZF_EIO;
    } else {
        v = judge_status(x, why, whycap);
    }
    if (v == ZF_NET_DONE) {
        memcpy(r->etag, x->etag, sizeof r->etag);
        r->last_modified_ns = x->last_modified_ns;
        memcpy(r->generation, x->generation, sizeof r->generation);
        fill_size(x);
        if (r->rc == ZF_OK && r->err && r->errcap)
            r->err[0] = '\0';
    }
    return v;
}

void zf_net_req_seen(const zf_net_req *r, zf_store_seen *seen)
{
    memset(seen, 0, sizeof *seen);
    snprintf(seen->etag, sizeof seen->etag, "%s", r->etag);
    seen->mtime_ns = r->last_modified_ns;
    seen->size = r->size_known ? r->size : 0;
}
