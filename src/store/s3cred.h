/* s3cred.h - S3 credentials, region and endpoint, found the way the AWS CLI
 * finds them.
 *
 * Precedence (highest first), as the AWS CLI documents it:
 *   credentials  AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN);
 *                else the profile (AWS_PROFILE, default "default") in the
 *                shared credentials file (AWS_SHARED_CREDENTIALS_FILE, default
 *                ~/.aws/credentials, section [NAME]); else the same profile in
 *                the config file (AWS_CONFIG_FILE, default ~/.aws/config,
 *                section [profile NAME], or [default]).
 *   region       -o region=; AWS_REGION; AWS_DEFAULT_REGION; the profile's
 *                region in the config file; us-east-1.
 *   endpoint     -o endpoint=; AWS_ENDPOINT_URL_S3; AWS_ENDPOINT_URL; the
 *                profile's s3 endpoint_url, then endpoint_url; none (AWS).
 *   CA bundle    AWS_CA_BUNDLE; the profile's ca_bundle (-o cafile= wins over both).
 * -o anonymous reads no credentials: requests go unsigned.
 *
 * Secrets (secret key, session token) live in memory only, are wiped when
 * freed, and never appear in error texts. */
#ifndef ZF_S3CRED_H
#define ZF_S3CRED_H

#include <stddef.h>

/* What the command line says (each field NULL/0: not given). */
typedef struct zf_s3cred_opts {
    const char *region;   /* -o region= */
    const char *endpoint; /* -o endpoint= */
    int anonymous;        /* -o anonymous */
} zf_s3cred_opts;

/* Credentials and where to send requests. */
typedef struct zf_s3cred {
    char *access_key;     /* NULL when anonymous */
    char *secret_key;     /* NULL when anonymous; secret */
    char *session_token;  /* NULL: none; secret */
    char *region;         /* never NULL */
    char *endpoint;       /* "http[s]://host[:port][/path]" without a trailing '/'; NULL: AWS */
    char *ca_bundle;      /* AWS_CA_BUNDLE, else the profile's ca_bundle; NULL: none */
    const char *source;   /* where the credentials came from, for messages: "environment",
                           * "credentials file", "config file" or "anonymous" (static) */
} zf_s3cred;

/* Find credentials, region and endpoint for o; *out is the caller's
 * (zf_s3cred_free).  ZF_ENOTFOUND when no credentials are found (the reason
 * suggests -o anonymous), ZF_EINVAL for a bad endpoint, a missing profile or
 * half a key pair, ZF_ECORRUPT for an unreadable file; a one-line reason
 * (never a secret) in err. */
int zf_s3cred_load(const zf_s3cred_opts *o, zf_s3cred **out, char *err, size_t errcap);

/* Wipe and free c; NULL is allowed. */
void zf_s3cred_free(zf_s3cred *c);

#endif
