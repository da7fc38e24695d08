/* kc_impl.h - a kerchunk reference document, parsed and checked (kc_parse.c),
 * for the reference-set store (kerchunk.c).  Private to store/. */
#ifndef ZF_KC_IMPL_H
#define ZF_KC_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "base/fp.h"

/* Largest offset or length a reference may give (2^62). */
#define KC_RANGE_MAX ((uint64_t)1 << 62)

/* What a key's value is. */
typedef enum kc_kind {
    KC_INLINE = 1, /* bytes held in the document (raw, base64: decoded, or nested JSON) */
    KC_RANGE,      /* [url, offset, length] */
    KC_WHOLE       /* [url]: the whole object */
} kc_kind;

/* One key's reference.  Strings and bytes are offsets into the arena. */
typedef struct kc_ref {
    uint64_t key;       /* the key, NUL-terminated */
    uint64_t url;       /* KC_RANGE, KC_WHOLE: the absolute URL, NUL-terminated */
    uint64_t off, len;  /* KC_RANGE: the range; KC_INLINE: the bytes in the arena */
    uint32_t kind;      /* kc_kind */
    uint32_t zero;
    zf_fp digest;       /* KC_INLINE: of its bytes (stamps ask often: hashed once) */
} kc_ref;

/* A parsed document: refs sorted by key, every key unique, no key both a
 * value and a directory.  Immutable once parsed. */
typedef struct kc_doc {
    int version;        /* 0 or 1 */
    char *arena;        /* keys, URLs, inline bytes (owned) */
    size_t arena_len;
    kc_ref *refs;       /* owned */
    size_t n;
    size_t counts[4];   /* refs of each kc_kind */
} kc_doc;

/* Parse the reference document text (n bytes) into *out.  Relative target
 * URLs are resolved against base (a directory URL or absolute path ending
 * in '/').  limit bounds the memory the parsed document may take (keys,
 * URLs, inline bytes, and the table).  ZF_ECORRUPT for a malformed or
 * unsafe document, ZF_EUNSUPPORTED for a version or template expression
 * zarrfs does not read, ZF_ENOMEM; a one-line reason in err. */
int kc_parse(const char *text, size_t n, const char *base, size_t limit, kc_doc *out, char *err,
             size_t errcap);

/* Free what kc_parse made; zeroes d. */
void kc_doc_free(kc_doc *d);

/* The key of ref r, and its URL (NULL for an inline one). */
const char *kc_key(const kc_doc *d, const kc_ref *r);
const char *kc_url(const kc_doc *d, const kc_ref *r);

/* The reference of key, or NULL; *is_dir set when keys lie under key/
 * ("" is the root, always a directory). */
const kc_ref *kc_find(const kc_doc *d, const char *key, int *is_dir);

/* The index of the first ref whose key is >= s (d->n if none). */
size_t kc_lower(const kc_doc *d, const char *s);

#endif
