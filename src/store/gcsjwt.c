/* gcsjwt.c - the signed assertion a Google service account key is
 * exchanged with (RFC 7523): a JWT, RS256 over its header and claims,
 * signed with OpenSSL. */
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/sbuf.h"
#include "store/gcs_impl.h"

/* append n bytes of p to b in base64url without padding (RFC 7515) */
static void b64url(zf_sbuf *b, const unsigned char *p, size_t n)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        char out[4] = {a[v >> 18 & 63], a[v >> 12 & 63], a[v >> 6 & 63], a[v & 63]};
        zf_sbuf_add(b, out, n - i >= 3 ? 4 : n - i + 1);
    }
}

/* a JSON string's text: only what JSON needs escaped ('"', '\\', controls) */
static void json_str(zf_sbuf *b, const char *s)
{
    zf_sbuf_add(b, "\"", 1);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            zf_sbuf_printf(b, "\\%c", *s);
        else if ((unsigned char)*s < ' ')
            zf_sbuf_printf(b, "\\u%04x", (unsigned)(unsigned char)*s);
        else
            zf_sbuf_add(b, s, 1);
    }
    zf_sbuf_add(b, "\"", 1);
}

/* RS256 of the n bytes at msg with the PEM private key into sig (cap bytes) */
static int rs256(const char *pem, const char *msg, size_t n, unsigned char *sig, size_t *siglen)
{
    BIO *bio = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *key = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
    EVP_MD_CTX *md = key ? EVP_MD_CTX_new() : NULL;
    int ok = md && EVP_PKEY_base_id(key) == EVP_PKEY_RSA &&
             EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) == 1 &&
             EVP_DigestSign(md, sig, siglen, (const unsigned char *)msg, n) == 1;
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(key);
    BIO_free(bio);
    return ok ? ZF_OK : ZF_EINVAL;
}

int zf_gcs_jwt(const zf_gcs_jwt_claims *c, char **out)
{
    *out = NULL;
    zf_sbuf hdr = {0}, claims = {0}, jwt = {0};
    zf_sbuf_printf(&hdr, "{\"alg\":\"RS256\",\"typ\":\"JWT\"");
    if (c->key_id) {
        zf_sbuf_printf(&hdr, ",\"kid\":");
        json_str(&hdr, c->key_id);
    }
    zf_sbuf_add(&hdr, "}", 1);
    zf_sbuf_printf(&claims, "{\"iss\":");
    json_str(&claims, c->issuer);
    zf_sbuf_printf(&claims, ",\"scope\":");
    json_str(&claims, c->scope);
    zf_sbuf_printf(&claims, ",\"aud\":");
    json_str(&claims, c->audience);
    zf_sbuf_printf(&claims, ",\"iat\":%lld,\"exp\":%lld}", (long long)c->issued,
                   (long long)(c->issued + c->lifetime));
    b64url(&jwt, (const unsigned char *)(hdr.data ? hdr.data : ""), hdr.len);
    zf_sbuf_add(&jwt, ".", 1);
    b64url(&jwt, (const unsigned char *)(claims.data ? claims.data : ""), claims.len);
    unsigned char sig[1024]; /* RSA up to 8192 bits */
    size_t siglen = sizeof sig;
    int rc = hdr.failed || claims.failed || jwt.failed ? ZF_ENOMEM
             : rs256(c->key_pem, jwt.data, jwt.len, sig, &siglen);
    if (rc == ZF_OK) {
        zf_sbuf_add(&jwt, ".", 1);
        b64url(&jwt, sig, siglen);
        rc = jwt.failed ? ZF_ENOMEM : ZF_OK;
    }
    free(hdr.data);
    free(claims.data);
    if (rc == ZF_OK)
        *out = jwt.data;
    else
        free(jwt.data);
    return rc;
}
