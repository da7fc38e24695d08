/* gcscred.h - Google Cloud Storage credentials, found as Google's client
 * libraries find Application Default Credentials, first found wins:
 *   1. GOOGLE_APPLICATION_CREDENTIALS: a JSON key file, either a service
 *      account key ("type": "service_account": a JWT signed RS256 with its
 *      private key, exchanged at its token_uri for an access token) or an
 *      authorized user ("type": "authorized_user", what `gcloud auth
 *      application-default login` writes: its refresh token exchanged);
 *   2. gcloud's file of the same kinds in its well-known place:
 *      $CLOUDSDK_CONFIG/application_default_credentials.json, else
 *      ~/.config/gcloud/application_default_credentials.json;
 *   3. the metadata server of a Google Cloud machine (GCE, GKE, Cloud Run):
 *      http://GCE_METADATA_HOST (default metadata.google.internal)
 *      /computeMetadata/v1/instance/service-accounts/default/token with
 *      Metadata-Flavor: Google; asked only when GCE_METADATA_HOST is set or
 *      the firmware (DMI) says the machine is a Google one.
 * Access tokens are OAuth 2.0 bearer tokens for the scope
 * devstorage.read_only, refreshed by cred.h's provider before they expire.
 * A token endpoint must be https (http only on a loopback address: tests);
 * key files, tokens and refresh tokens never appear in a message. */
#ifndef ZF_GCSCRED_H
#define ZF_GCSCRED_H

#include <stddef.h>

#include "store/cred.h"

/* What the command line says. */
typedef struct zf_gcscred_opts {
    const char *cafile;   /* -o cafile= (also for the token endpoints) */
    zf_cred_note_fn note; /* where refreshes are reported, or NULL */
} zf_gcscred_opts;

/* The first source configured, as a provider with its first token
 * fetched (*out, the caller's), or *out NULL and ZF_OK when none is
 * configured (the store then goes anonymous).  ZF_EINVAL for a key file of
 * another kind or missing fields, ZF_ECORRUPT for an unreadable one,
 * ZF_EIO when the source fails; the reason in err names the source. */
int zf_gcscred_open(const zf_gcscred_opts *o, zf_cred **out, char *err, size_t errcap);

/* An OAuth token endpoint's or the metadata server's answer (doc, a JSON
 * object with access_token and expires_in, NUL-terminated) into v->token
 * and v->expires (now + expires_in).  ZF_EIO with the reason (after what)
 * in err otherwise. */
int zf_gcs_token_parse(const char *doc, int64_t now, const char *what, zf_cred_value *v, char *err,
                       size_t errcap);

/* The reason of an OAuth error answer (doc: {"error": CODE,
 * "error_description": TEXT}, or NULL) appended to err after its text,
 * control characters as '?', cut to fit. */
void zf_gcs_oauth_error(const char *doc, char *err, size_t errcap);

#endif
