/* s3cred.h - S3 credentials, region and endpoint, found the way the AWS CLI
 * finds them.
 *
 * Credentials: the first source configured, in the AWS CLI's order:
 *   1. AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN);
 *   2. the profile's role_arn (STS AssumeRole with the credentials of its
 *      source_profile, chained, or of its credential_source: Environment,
 *      Ec2InstanceMetadata, EcsContainer);
 *   3. web identity: AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN
 *      [+ AWS_ROLE_SESSION_NAME], or the profile's web_identity_token_file
 *      (STS AssumeRoleWithWebIdentity, unsigned);
 *   4. SSO: the profile's sso_session (or sso_start_url) with sso_account_id
 *      and sso_role_name: the token `aws sso login` cached in
 *      ~/.aws/sso/cache, then the portal's GetRoleCredentials;
 *   5. the profile's keys in the credentials file (AWS_SHARED_CREDENTIALS_FILE,
 *      default ~/.aws/credentials, section [NAME]);
 *   6. the profile's credential_process (run without a shell);
 *   7. the profile's keys in the config file (AWS_CONFIG_FILE, default
 *      ~/.aws/config, [profile NAME] or [default]);
 *   8. container credentials: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or
 *      _FULL_URI, with AWS_CONTAINER_AUTHORIZATION_TOKEN[_FILE];
 *   9. EC2 instance metadata (IMDSv2), unless AWS_EC2_METADATA_DISABLED is
 *      true; asked only when AWS_EC2_METADATA_SERVICE_ENDPOINT is set or the
 *      machine's firmware says it is an EC2 instance.
 * The profile is AWS_PROFILE (else AWS_DEFAULT_PROFILE, else "default").
 * STS: AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, the profile's sts
 * endpoint_url, else https://sts.REGION.amazonaws.com; the SSO portal:
 * AWS_ENDPOINT_URL_SSO, else https://portal.sso.REGION.amazonaws.com.
 * Temporary credentials are refreshed by cred.h's provider.
 *
 *   region       -o region=; AWS_REGION; AWS_DEFAULT_REGION; the profile's
 *                region in the config file; us-east-1.
 *   endpoint     -o endpoint=; AWS_ENDPOINT_URL_S3; AWS_ENDPOINT_URL; the
 *                profile's s3 endpoint_url, then endpoint_url; none (AWS).
 *   CA bundle    AWS_CA_BUNDLE; the profile's ca_bundle (-o cafile= wins over both).
 * -o anonymous reads no credentials: requests go unsigned.
 *
 * Secrets (secret key, session token, web identity and SSO tokens) live in
 * memory only, are wiped when freed, and never appear in error texts. */
#ifndef ZF_S3CRED_H
#define ZF_S3CRED_H

#include <stddef.h>

#include "store/cred.h"

/* What the command line says (each field NULL/0: not given). */
typedef struct zf_s3cred_opts {
    const char *region;   /* -o region= */
    const char *endpoint; /* -o endpoint= */
    int anonymous;        /* -o anonymous */
    const char *cafile;   /* -o cafile= (also for STS and the other sources) */
    zf_cred_note_fn note; /* where refreshes are reported (a log), or NULL */
} zf_s3cred_opts;

/* Credentials and where to send requests. */
typedef struct zf_s3cred {
    zf_cred *cred;        /* NULL when anonymous */
    char *region;         /* never NULL */
    char *endpoint;       /* "http[s]://host[:port][/path]" without a trailing '/'; NULL: AWS */
    char *ca_bundle;      /* AWS_CA_BUNDLE, else the profile's ca_bundle; NULL: none */
} zf_s3cred;

/* Find credentials, region and endpoint for o; *out is the caller's
 * (zf_s3cred_free).  ZF_ENOTFOUND when no credentials are found (the reason
 * suggests -o anonymous), ZF_EINVAL for a bad endpoint, a missing profile or
 * half a key pair, ZF_ECORRUPT for an unreadable file, ZF_EIO when the
 * source that applies fails (the first value is fetched here); a one-line
 * reason (never a secret) in err. */
int zf_s3cred_load(const zf_s3cred_opts *o, zf_s3cred **out, char *err, size_t errcap);

/* Wipe and free c; NULL is allowed. */
void zf_s3cred_free(zf_s3cred *c);

/* The parsers of what AWS credential sources answer (untrusted: also
 * fuzzed).  An STS AssumeRole or AssumeRoleWithWebIdentity answer (xml, n
 * bytes; no DTD, texts bounded) into *v (strings taken even on failure);
 * ZF_EIO with the reason after action otherwise. */
int zf_aws_sts_parse(const char *xml, size_t n, const char *action, zf_cred_value *v, char *err,
                     size_t errcap);

/* A JSON credentials document (doc NUL-terminated) into *v: the container
 * endpoint's, instance metadata's or credential_process's names (sso 0),
 * or SSO GetRoleCredentials' roleCredentials (sso 1).  ZF_EIO otherwise. */
int zf_aws_creds_parse(const char *doc, int sso, zf_cred_value *v, char *err, size_t errcap);

#endif
