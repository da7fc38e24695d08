/* open.h - open any store from its STORE argument (url.h) and options: a
 * local directory, http(s):// (http.h), gs:// (gcs.h), s3:// (s3.h) or
 * az:// (azure.h); an Icechunk repository in any of them is recognised by
 * its layout and opened at the snapshot the options select (icechunk.h). */
#ifndef ZF_OPEN_H
#define ZF_OPEN_H

#include <stddef.h>

#include "store/cred.h"
#include "store/store.h"

/* How to open a store.  Strings are owned (zf_store_opts_free); 0 / NULL
 * means "not given" (net.h's defaults for the numbers). */
typedef struct zf_store_opts {
    int follow_symlinks;     /* local: follow symlinks leaving the store */
    unsigned connections;    /* remote: transfers at once */
    unsigned retries;        /* remote: attempts in all */
    unsigned timeout_ms;     /* remote: no progress for this long fails an attempt */
    char *cafile;            /* remote: PEM CA bundle instead of the system's */
    char *endpoint;          /* s3, gs, az: the server ("http[s]://host[:port][/path]") */
    char *region;            /* s3 */
    int anonymous;           /* s3, gs, az: unsigned requests, no credentials read */
    int requester_pays;      /* s3: x-amz-request-payer: requester (signed); gs: with a value */
    char *user_project;      /* gs: -o requester_pays=PROJECT, the project billed (userProject) */
    char *account;           /* az: the storage account */
    char *bearer_token_file; /* https: a file holding a bearer token, re-read when it changes */
    zf_cred_note_fn note;    /* where credential refreshes are reported (a log); not an option */
    char *branch, *tag, *snapshot; /* an Icechunk repository's snapshot shown (icechunk.h) */
    char *virtual_ok;        /* where its virtual chunks may be read from (-o virtual=) */
    size_t cache_bytes;      /* the mount's cache size (a repository's manifests take a quarter) */
} zf_store_opts;

/* Set the option name to value (NULL for a flag: follow_symlinks,
 * anonymous, requester_pays; requester_pays may also take a value, gs://'s
 * project; branch, tag, snapshot and virtual are an Icechunk repository's).
 * ZF_ENOTFOUND if name is no store option (the caller's, then);
 * ZF_EINVAL for a bad value, with the reason in err; ZF_ENOMEM. */
int zf_store_opt_set(zf_store_opts *o, const char *name, const char *value, char *err,
                     size_t errcap);

/* Free the strings of o (o itself is the caller's); zeroes it. */
void zf_store_opts_free(zf_store_opts *o);

/* Drop from o the options that apply to remote stores only (a local store
 * ignores them, so that one fstab line serves both); their names,
 * comma-separated, into names (capacity cap; "" if none). */
void zf_store_opts_drop_remote(zf_store_opts *o, char *names, size_t cap);

/* 1 if spec names a remote store (it has a SCHEME://), else 0. */
int zf_store_spec_remote(const char *spec);

/* Open the store spec names, with o; *out owns it (zf_store_close).  A
 * remote store's name (zf_store_path) is spec itself: url.h refuses
 * credentials in it.  A repository (a repo file, or refs/branch.main/ref.json,
 * at the root) opens as its selected snapshot; the repository options on
 * anything else are ZF_EINVAL.  Errors: ZF_EINVAL (a malformed spec or an option that
 * does not apply to its kind; an unknown branch or tag, listing those there are), ZF_ENOTFOUND (a local path that is not a
 * directory; a bucket or prefix that does not exist), ZF_EUNSUPPORTED,
 * ZF_ENOMEM, ZF_EIO; a one-line reason in err (none for a local
 * ZF_ENOTFOUND, which callers word themselves). */
int zf_store_open_spec(const char *spec, const zf_store_opts *o, zf_store **out, char *err,
                       size_t errcap);

#endif
