/* aws_impl.h - what the AWS credential sources share (private to
 * src/store): the AWS CLI's shared files, and the sources that fetch
 * temporary credentials (STS, credential_process, SSO, container, instance
 * metadata), each a fetch function for cred.h. */
#ifndef ZF_AWS_IMPL_H
#define ZF_AWS_IMPL_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "store/cred.h"
#include "store/net.h"

/* Longest document a credential source may answer with. */
#define ZF_AWS_DOC_MAX (64u << 10)

/* The AWS CLI's shared files, read once per resolution (texts wiped when freed). */
typedef struct zf_awsfiles {
    char *cred_text, *conf_text;   /* NULL: the file does not exist */
    char *cred_path, *conf_path;   /* NULL: no home directory */
} zf_awsfiles;

/* Read both files (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE, or
 * ~/.aws/credentials and ~/.aws/config); ZF_ECORRUPT for an unreadable one. */
int zf_awsfiles_load(zf_awsfiles *f, char *err, size_t errcap);

/* Wipe and free what f holds. */
void zf_awsfiles_free(zf_awsfiles *f);

/* Which section a lookup reads. */
typedef enum zf_aws_section {
    ZF_AWS_CRED,        /* [NAME] of the credentials file */
    ZF_AWS_PROFILE,     /* [profile NAME] (or [default]) of the config file */
    ZF_AWS_SSO_SESSION  /* [sso-session NAME] of the config file */
} zf_aws_section;

/* The value of key in section name (nested under sub when sub is not NULL),
 * malloc'd, or NULL; *seen |= the section exists (seen may be NULL). */
char *zf_aws_lookup(const zf_awsfiles *f, zf_aws_section sec, const char *name, const char *sub,
                    const char *key, int *seen);

/* The environment variable name, if set and not empty. */
const char *zf_aws_env(const char *name);

/* The whole of a small regular file (at most max bytes; NUL-terminated,
 * malloc'd, the caller wipes it); ZF_ENOTFOUND if it does not exist,
 * ZF_ECORRUPT (reason in err) if it cannot be read or is larger. */
int zf_aws_read_file(const char *path, size_t max, char **text, char *err, size_t errcap);

/* What a temporary-credential source needs (one chain, one of these per
 * source; a role's source is chained under it). */
typedef enum zf_aws_kind {
    ZF_AWS_STATIC,      /* keys (a role's source profile or the environment) */
    ZF_AWS_ROLE,        /* STS AssumeRole with the inner source's credentials */
    ZF_AWS_WEBID,       /* STS AssumeRoleWithWebIdentity with a token file */
    ZF_AWS_PROCESS,     /* credential_process */
    ZF_AWS_SSO,         /* the SSO cache's token, then GetRoleCredentials */
    ZF_AWS_CONTAINER,   /* ECS / EKS Pod Identity container credentials */
    ZF_AWS_IMDS         /* EC2 instance metadata, IMDSv2 */
} zf_aws_kind;

typedef struct zf_aws_src zf_aws_src;
struct zf_aws_src {
    zf_aws_kind kind;
    zf_net *net;             /* the chain's engine (owned by the outermost source) */
    int owns_net;
    zf_cred_value keys;      /* STATIC */
    char *role_arn, *session_name, *external_id;   /* ROLE, WEBID */
    char *token_file;        /* WEBID */
    char *region;            /* ROLE, WEBID, SSO: the region of STS / the SSO portal */
    char *endpoint;          /* ROLE, WEBID: STS; SSO: the portal; CONTAINER: the URL;
                              * IMDS: the service; no trailing '/' */
    char **argv;             /* PROCESS: NULL-terminated */
    char *cache_key;         /* SSO: the sso_session name or the start URL */
    char *account, *role_name; /* SSO */
    char *auth, *auth_file;  /* CONTAINER: the Authorization token or its file */
    zf_aws_src *inner;       /* ROLE: the source of the credentials that assume it */
};

/* Free a source and what it holds (its inner source too); NULL is allowed. */
void zf_aws_src_free(zf_aws_src *s);

/* zf_cred_fetch_fn over a zf_aws_src (ctx): dispatches on its kind. */
int zf_aws_fetch(void *ctx, zf_cred_value *v, char *desc, size_t cap, char *err, size_t errcap);

/* STS: AssumeRole (signed with inner credentials) or AssumeRoleWithWebIdentity. */
int zf_aws_sts_fetch(zf_aws_src *s, zf_cred_value *v, char *err, size_t errcap);

/* credential_process: run s->argv without a shell, read its JSON. */
int zf_aws_process_fetch(zf_aws_src *s, zf_cred_value *v, char *err, size_t errcap);

/* The HTTP JSON sources: SSO, container credentials, instance metadata
 * (desc gets the role name of the last). */
int zf_aws_http_fetch(zf_aws_src *s, zf_cred_value *v, char *desc, size_t cap, char *err,
                      size_t errcap);

/* The credentials in the JSON object obj (credential_process, the container
 * endpoint, instance metadata, SSO's roleCredentials) into *v: names are
 * the members of the key id, secret, session token and expiry (an ISO 8601
 * text, or ms since the epoch; absent: never expires).  ZF_EIO (what is
 * missing in err, after what) otherwise. */
int zf_aws_json_creds(const cJSON *obj, const char *const names[4], const char *what,
                      zf_cred_value *v, char *err, size_t errcap);

/* What the chain is resolved from. */
typedef struct zf_aws_chain {
    const zf_awsfiles *files;
    const char *profile;     /* AWS_PROFILE, or "default" */
    int explicit_profile;    /* AWS_PROFILE was set: a missing profile is an error */
    const char *region;      /* of STS and the SSO portal when the profile names none */
    const zf_net_opts *net;  /* the engine the sources fetch with (cafile) */
    zf_cred_note_fn note;
} zf_aws_chain;

/* The first source of the AWS CLI's chain that is configured (s3cred.h's
 * list), as a provider with its first value fetched; *out is the caller's.
 * ZF_ENOTFOUND when no source is configured (the reason suggests -o
 * anonymous), ZF_EINVAL for a broken configuration, ZF_EIO when the source
 * fails; the reason in err names the source. */
int zf_aws_chain_open(const zf_aws_chain *ch, zf_cred **out, char *err, size_t errcap);

/* Check and normalise an endpoint URL (http or https, no user, query or
 * fragment, no trailing '/'), malloc'd into *out. */
int zf_aws_endpoint_check(const char *url, char **out, char *err, size_t errcap);

/* ISO 8601 UTC time ("2026-01-02T03:04:05Z", fractions, "+00:00") as
 * seconds since the epoch; ZF_ECORRUPT otherwise. */
int zf_aws_time(const char *s, int64_t *out);

#endif
