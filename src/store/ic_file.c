/* ic_file.c - Icechunk metadata files: the 39-byte header, the zstd payload,
 * and object ids in Crockford base 32 (ic_impl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "base/err.h"
#include "store/ic_impl.h"

#define ERR(code, ...) zf_errf(err, errcap, code, __VA_ARGS__)

/* "ICE🧊CHUNK": the first 12 bytes of every metadata file */
static const uint8_t magic[12] = {'I', 'C', 'E', 0xF0, 0x9F, 0xA7, 0x8A, 'C', 'H', 'U', 'N', 'K'};

static const char crockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

static const char *type_name(uint8_t t)
{
    return t == IC_SNAPSHOT ? "snapshot" : t == IC_MANIFEST ? "manifest"
           : t == IC_REPO_INFO ? "repository info" : "other";
}

/* decode a zstd payload (any number of frames) into out, at most max bytes */
static int unzstd(const uint8_t *src, size_t n, size_t max, uint8_t **out, size_t *len, char *err,
                  size_t errcap)
{
    ZSTD_DStream *ds = ZSTD_createDStream();
    unsigned long long hint = ZSTD_getFrameContentSize(src, n);
    size_t cap = hint != ZSTD_CONTENTSIZE_UNKNOWN && hint != ZSTD_CONTENTSIZE_ERROR && hint <= max
                     ? (size_t)hint + 1 : (n < max / 4 ? 4 * n + 64 : max);
    uint8_t *buf = ds ? malloc(cap ? cap : 1) : NULL;
    if (!buf) {
        ZSTD_freeDStream(ds);
        return ZF_ENOMEM;
    }
    ZSTD_inBuffer in = {src, n, 0};
    ZSTD_outBuffer o = {buf, cap, 0};
    int rc = ZF_OK;
    for (;;) {
        if (o.pos == o.size) { /* full: grow, within max */
            size_t grow = o.size < max / 2 ? o.size * 2 : max;
            uint8_t *p = grow > o.size ? realloc(buf, grow) : NULL;
            if (!p) {
                rc = grow > o.size ? ZF_ENOMEM : ERR(ZF_ECORRUPT, "decodes to more than %zu bytes", max);
                break;
            }
            buf = o.dst = p;
            o.size = grow;
        }
        size_t ret = ZSTD_decompressStream(ds, &o, &in);
        if (ZSTD_isError(ret)) {
            rc = ERR(ZF_ECORRUPT, "zstd: %s", ZSTD_getErrorName(ret));
            break;
        }
        if (in.pos == in.size && ret == 0)
            break; /* every frame complete */
        if (in.pos == in.size && o.pos < o.size) {
            rc = ERR(ZF_ECORRUPT, "zstd: the payload is cut short");
            break;
        }
    }
    ZSTD_freeDStream(ds);
    if (rc != ZF_OK) {
        free(buf);
        return rc;
    }
    *out = buf;
    *len = o.pos;
    return ZF_OK;
}

int ic_file_header(const uint8_t *raw, size_t n, uint8_t type)
{
    return n >= IC_HEADER_LEN && !memcmp(raw, magic, sizeof magic) && raw[37] == type ? ZF_OK
                                                                                     : ZF_ECORRUPT;
}

int ic_file_decode(const uint8_t *raw, size_t n, uint8_t type, size_t max, ic_file *out,
                   char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    if (n < IC_HEADER_LEN || memcmp(raw, magic, sizeof magic) != 0)
        return ERR(ZF_ECORRUPT, "not an Icechunk metadata file (no ICE\xF0\x9F\xA7\x8A" "CHUNK header)");
    uint8_t spec = raw[36], got = raw[37], comp = raw[38];
    if (spec != 1 && spec != 2)
        return ERR(ZF_EUNSUPPORTED, "written for Icechunk spec version %u (zarrfs reads 1 and 2)", spec);
    if (got != type)
        return ERR(ZF_ECORRUPT, "a %s file (type %u) where a %s file belongs", type_name(got), got,
                   type_name(type));
    memcpy(out->writer, raw + 12, 24);
    size_t w = 24;
    while (w && (out->writer[w - 1] == ' ' || out->writer[w - 1] == '\0'))
        w--;
    out->writer[w] = '\0';
    for (size_t i = 0; i < w; i++)
        if ((unsigned char)out->writer[i] < 0x20 || out->writer[i] == 0x7f)
            out->writer[i] = '?';
    out->spec = spec;
    const uint8_t *body = raw + IC_HEADER_LEN;
    size_t blen = n - IC_HEADER_LEN;
    int rc;
    if (comp == 0) {
        rc = blen > max ? ERR(ZF_ECORRUPT, "more than %zu bytes", max) : ZF_OK;
        if (rc == ZF_OK && !(out->data = malloc(blen ? blen : 1)))
            rc = ZF_ENOMEM;
        if (rc == ZF_OK) {
            memcpy(out->data, body, blen);
            out->len = blen;
        }
    } else if (comp == 1) {
        rc = unzstd(body, blen, max, &out->data, &out->len, err, errcap);
    } else {
        rc = ERR(ZF_EUNSUPPORTED, "compression %u (zarrfs reads 0, none, and 1, zstd)", comp);
    }
    if (rc == ZF_OK && zf_fb_root(out->data, out->len, &out->root) != ZF_OK)
        rc = ERR(ZF_ECORRUPT, "the %s table is damaged", type_name(type));
    if (rc != ZF_OK)
        ic_file_free(out);
    return rc;
}

int ic_file_fetch(const zf_store *raw, const char *key, uint8_t type, size_t max, ic_file *out,
                  zf_stamp *st, char *err, size_t errcap)
{
    zf_store_buf b = {NULL, 0};
    size_t n = 0;
    /* a compressed file is smaller than what it decodes to, and bounded by it */
    int rc = zf_store_read(raw, key, max, &b, &n, st, err, errcap);
    if (rc == ZF_OK)
        rc = ic_file_decode(b.p, n, type, max, out, err, errcap);
    free(b.p);
    return rc;
}

void ic_file_free(ic_file *f)
{
    free(f->data);
    memset(f, 0, sizeof *f);
}

void ic_id_text(const uint8_t *id, size_t n, char *out)
{
    unsigned acc = 0, bits = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        acc = (acc << 8) | id[i];
        bits += 8;
        while (bits >= 5) {
            out[k++] = crockford[(acc >> (bits - 5)) & 31];
            bits -= 5;
        }
    }
    if (bits)
        out[k++] = crockford[(acc << (5 - bits)) & 31];
    out[k] = '\0';
}

/* the value of a Crockford base-32 character, -1 if none */
static int b32_value(char c)
{
    if (c >= 'a' && c <= 'z')
        c = (char)(c - 'a' + 'A');
    if (c == 'O')
        return 0;
    if (c == 'I' || c == 'L')
        return 1;
    const char *p = c ? strchr(crockford, c) : NULL;
    return p ? (int)(p - crockford) : -1;
}

int ic_id_parse(const char *text, uint8_t id[IC_ID_LEN])
{
    if (strlen(text) != 20)
        return -1;
    unsigned acc = 0, bits = 0;
    size_t k = 0;
    for (size_t i = 0; i < 20; i++) {
        int v = b32_value(text[i]);
        if (v < 0)
            return -1;
        acc = (acc << 5) | (unsigned)v;
        bits += 5;
        if (bits >= 8) {
            if (k < IC_ID_LEN)
                id[k++] = (uint8_t)(acc >> (bits - 8));
            bits -= 8;
        }
    }
    return k == IC_ID_LEN ? 0 : -1;
}
