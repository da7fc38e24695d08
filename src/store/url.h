/* url.h - the STORE argument: a local path or the URL of a remote store.
 *
 *   PATH                        anything without "SCHEME://": a local directory
 *   http://HOST[:PORT][/PATH]   HOST a name, an IPv4 address or [IPv6]
 *   https://HOST[:PORT][/PATH]
 *   s3://BUCKET[/PREFIX]
 *   gs://BUCKET[/PREFIX]
 *   az://CONTAINER[/PREFIX]     also abfs:// and abfss:// (fsspec's spellings)
 *
 * Refused, with a one-line reason: other schemes, user information
 * ("user:password@": credentials never go in the STORE argument, which the
 * mount table and process lists show), query strings and fragments, empty
 * hosts or buckets, bad ports, "." and ".." segments, bad %-escapes,
 * control characters (however written), spaces in an http(s) URL.
 * Every path (http, https, s3, gs, az) is %-decoded: %XX is the byte XX (%20 a
 * space, %25 a '%', %3F a '?', %23 a '#'); any other character stands for
 * itself, and an s3, gs or az prefix may hold spaces as they are (as the AWS and
 * gcloud tools take them), so "s3://b/my data" and "s3://b/my%20data" are
 * the same prefix.  Object URLs are built by %-encoding keys
 * (zf_url_escape). */
#ifndef ZF_URL_H
#define ZF_URL_H

#include <stddef.h>

#include "base/sbuf.h"

/* What a STORE argument names. */
typedef enum zf_url_kind {
    ZF_URL_LOCAL = 0,
    ZF_URL_HTTP,
    ZF_URL_HTTPS,
    ZF_URL_S3,
    ZF_URL_GS,
    ZF_URL_AZ
} zf_url_kind;

/* A parsed STORE argument; strings owned (zf_url_free). */
typedef struct zf_url {
    zf_url_kind kind;
    char *host;     /* http(s): host, an IPv6 literal in brackets; s3/gs: the bucket;
                     * az: the container;
                     * local: NULL */
    unsigned port;  /* http(s): the port given, 0 if none */
    char *path;     /* local: the argument as given; otherwise the prefix, unescaped,
                     * without leading or trailing '/', single '/' between
                     * segments ("" for the root) */
} zf_url;

/* 1 if spec starts with "SCHEME://" (a URL, whether supported or not), else 0. */
int zf_url_has_scheme(const char *spec);

/* spec as it may be shown in messages: user information and anything from
 * '?' or '#' on (which url.h refuses, but may hold secrets) become "***";
 * written into out (cap bytes, truncated, NUL-terminated).  Everything from
 * "SCHEME://" up to the last '@' counts as user information, even a path:
 * a password may hold '/', '?' or '#'. */
void zf_url_redact(const char *spec, char *out, size_t cap);

/* Parse spec into *u (zeroed first).  ZF_EINVAL with the reason in err for
 * a malformed or refused argument; ZF_ENOMEM. */
int zf_url_parse(const char *spec, zf_url *u, char *err, size_t errcap);

/* Free what u holds (u itself is the caller's); zeroes it. */
void zf_url_free(zf_url *u);

/* "http[s]://HOST[:PORT]" of an http(s) URL: malloc'd, NULL when out of memory. */
char *zf_url_origin(const zf_url *u);

/* The byte the %-escape at s[i] ('%' and two hex digits, within the n
 * bytes of s) stands for, or -1 if it is none. */
int zf_url_unescape_at(const char *s, size_t n, size_t i);

/* Append s to b %-encoded: unreserved characters (A-Z a-z 0-9 - . _ ~) and
 * '/' stay, every other byte becomes %XX (upper-case hex). */
void zf_url_escape(zf_sbuf *b, const char *s);

/* The URL of key under origin and prefix: origin "/" escape(prefix "/" key)
 * (prefix or key may be ""); malloc'd, NULL when out of memory. */
char *zf_url_object(const char *origin, const char *prefix, const char *key);

#endif
