/* sigv4.h - AWS Signature Version 4 (header form) for S3 requests, signed
 * here with OpenSSL rather than by libcurl (whose CURLOPT_AWS_SIGV4 in
 * Debian 12 neither adds x-amz-content-sha256 nor sorts the query string).
 *
 * A request is described by its parts before encoding (method, host, raw
 * path, raw query pairs); zf_sigv4_sign returns the header lines to send
 * with it.  The URL actually sent must carry the same path and query, so
 * the encoders below are the ones the caller builds its URL with:
 *   URL = scheme "://" host zf_sigv4_path(path) ["?" zf_sigv4_query(q)]
 * Secrets: the secret key never leaves this module; the lines returned may
 * hold a session token and are wiped by zf_sigv4_free. */
#ifndef ZF_SIGV4_H
#define ZF_SIGV4_H

#include <stddef.h>
#include <stdint.h>

#include "base/sbuf.h"

/* SHA-256 of the empty string, hex: the payload hash of GET and HEAD. */
#define ZF_SIGV4_EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* One query parameter or header (unencoded name and value). */
typedef struct zf_sigv4_param {
    const char *name, *value;
} zf_sigv4_param;

/* Who signs, and for which region and service ("s3"). */
typedef struct zf_sigv4_cred {
    const char *access_key;
    const char *secret_key;
    const char *session_token; /* NULL or "": none */
    const char *region;
    const char *service;
} zf_sigv4_cred;

/* A signing key derived for one day from the secret, region and service:
 * many signatures of that day may share it (four HMACs fewer each).  A
 * secret, as the secret key: wipe it when done (explicit_bzero). */
typedef struct zf_sigv4_key {
    char day[9];          /* "YYYYMMDD" (UTC); "" for none */
    unsigned char key[32];
} zf_sigv4_key;

/* The request to sign. */
typedef struct zf_sigv4_req {
    const char *method;              /* "GET", "HEAD", ... */
    const char *host;                /* the Host header's value: host[:port] */
    const char *path;                /* unencoded, starting with '/' */
    const zf_sigv4_param *query;     /* unencoded pairs, any order (value "" for ?name) */
    size_t nquery;
    const zf_sigv4_param *headers;   /* more headers to sign (any case), besides host and x-amz-* */
    size_t nheaders;
    const char *payload_hash;        /* hex SHA-256 of the body; NULL: the empty body */
    int content_sha256;              /* send and sign x-amz-content-sha256 (S3 requires it) */
    int64_t time;                    /* signing time, seconds since the epoch (UTC) */
    const zf_sigv4_key *key;         /* c's key for time's day, or NULL (derived here; a
                                      * key for another day is not used either) */
} zf_sigv4_req;

/* Sign r with c: *lines gets the NULL-terminated header lines to send
 * ("Authorization: ...", "x-amz-date: ...", then x-amz-content-sha256 and
 * x-amz-security-token when they apply).  The caller sends Host as r->host
 * and the headers of r->headers itself.  *lines is one allocation owned by
 * the caller (zf_sigv4_free).  ZF_EINVAL for a header name or value with a
 * control character, ZF_ENOMEM. */
int zf_sigv4_sign(const zf_sigv4_cred *c, const zf_sigv4_req *r, char ***lines);

/* Derive c's signing key for the UTC day of time into *k (ZF_EIO if
 * OpenSSL fails, ZF_ENOMEM). */
int zf_sigv4_derive(const zf_sigv4_cred *c, int64_t time, zf_sigv4_key *k);

/* The hex SHA-256 of n bytes at data into out (65 bytes): a payload hash.
 * ZF_EIO if OpenSSL fails. */
int zf_sigv4_sha256_hex(const void *data, size_t n, char out[65]);

/* Wipe and free lines from zf_sigv4_sign; NULL is allowed. */
void zf_sigv4_free(char **lines);

/* Append s URI-encoded as SigV4 wants (every byte but A-Z a-z 0-9 - . _ ~
 * as %XX, upper-case hex); '/' is kept when keep_slash. */
void zf_sigv4_encode(zf_sbuf *b, const char *s, int keep_slash);

/* Append the canonical path of an S3 request: each segment encoded once,
 * '/' kept (no normalisation: S3 keys may hold "." or "//"). */
void zf_sigv4_path(zf_sbuf *b, const char *path);

/* Append the canonical query string: pairs encoded, sorted by name then
 * value, joined "name=value&...". */
void zf_sigv4_query(zf_sbuf *b, const zf_sigv4_param *q, size_t n);

#endif
