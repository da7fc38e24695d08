/* test_icechunk.c - the pieces of the Icechunk backend a user cannot reach
 * one by one: the FlatBuffers and FlexBuffers readers on hand-made hostile
 * buffers, the 39-byte header, ids in base 32, the real spec 2 files of
 * tests/data decoded, and the virtual chunk targets (locations, consent,
 * coalescing, version checks) over a fake store. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "base/err.h"
#include "base/flatbuf.h"
#include "base/flexbuf.h"
#include "check.h"
#include "store/ic_impl.h"
#include "store/open.h"
#include "store/targets.h"

/* ----------------------------------------------------------- FlatBuffers */

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* a buffer: the root offset (-> 16), a vtable at 4 (12 bytes: fields 0..2 at
 * +4, +8, +12, field 3 absent), the table at 16 (16 bytes: a u32 7, an offset
 * to the string "abc" at 32, an offset to the vector [5, 6] at 40) */
static size_t make_table(uint8_t *d)
{
    memset(d, 0, 64);
    put32(d + 0, 16);
    put16(d + 4, 12);
    put16(d + 6, 16);
    put16(d + 8, 4);
    put16(d + 10, 8);
    put16(d + 12, 12);
    put16(d + 14, 0);
    put32(d + 16, 12);        /* soffset: the vtable at 16 - 12 = 4 */
    put32(d + 20, 7);
    put32(d + 24, 32 - 24);
    put32(d + 28, 40 - 28);
    put32(d + 32, 3);
    memcpy(d + 36, "abc", 4);
    put32(d + 40, 2);
    put32(d + 44, 5);
    put32(d + 48, 6);
    return 52;
}

static void test_flatbuf(void)
{
    uint8_t d[64];
    size_t n = make_table(d);
    zf_fb_table t;
    uint32_t v;
    const char *s;
    size_t sl;
    zf_fb_vec vec;
    CHECK(zf_fb_root(d, n, &t) == ZF_OK, "root");
    CHECK(zf_fb_u32(&t, 0, 9, &v) == ZF_OK && v == 7, "u32 field: %u", v);
    CHECK(zf_fb_u32(&t, 3, 9, &v) == ZF_ENOTFOUND && v == 9, "absent field: default");
    CHECK(zf_fb_u32(&t, 40, 9, &v) == ZF_ENOTFOUND && v == 9, "a field beyond the vtable: absent");
    CHECK(zf_fb_string(&t, 1, &s, &sl) == ZF_OK && sl == 3 && !memcmp(s, "abc", 3), "string");
    CHECK(zf_fb_vector(&t, 2, 4, &vec) == ZF_OK && vec.count == 2 &&
              zf_fb_le32(zf_fb_vec_at(&vec, 1)) == 6, "vector");
    CHECK(zf_fb_vector(&t, 2, 40, &vec) == ZF_ECORRUPT, "elements past the end");
    CHECK(zf_fb_vec_table(&vec, 0, &t) == ZF_ECORRUPT, "numbers read as table offsets lead out of the buffer");
    for (size_t cut = 0; cut < n; cut++) { /* every truncation: nothing read past the end */
        uint8_t *p = malloc(cut ? cut : 1);
        memcpy(p, d, cut);
        if (zf_fb_root(p, cut, &t) == ZF_OK) {
            zf_fb_u32(&t, 0, 0, &v);
            zf_fb_string(&t, 1, &s, &sl);
            if (zf_fb_vector(&t, 2, 4, &vec) == ZF_OK && vec.count)
                (void)zf_fb_le32(zf_fb_vec_at(&vec, vec.count - 1));
        }
        free(p); /* ASan: a read past cut fails the test */
    }
    put32(d + 32, 0xFFFFFFF0u); /* the string's length: beyond the buffer */
    CHECK(zf_fb_root(d, n, &t) == ZF_OK && zf_fb_string(&t, 1, &s, &sl) == ZF_ECORRUPT, "a long string");
    put32(d + 32, 4); /* its NUL outside the buffer: "abc" and the count word */
    CHECK(zf_fb_string(&t, 1, &s, &sl) == ZF_OK, "4 bytes, then the NUL inside");
    put32(d + 40, 0x40000000u); /* a vector count whose bytes overflow 32 bits */
    CHECK(zf_fb_vector(&t, 2, 4, &vec) == ZF_ECORRUPT, "a huge vector");
    put32(d + 16, (uint32_t)-0x7FFFFFF0); /* soffset: the vtable far behind */
    CHECK(zf_fb_root(d, n, &t) == ZF_ECORRUPT, "a vtable outside the buffer");
    put32(d + 16, 12);
    put16(d + 4, 3); /* an odd vtable size */
    CHECK(zf_fb_root(d, n, &t) == ZF_ECORRUPT, "an odd vtable size");
    put16(d + 4, 12);
    put16(d + 6, 200); /* a table larger than the buffer */
    CHECK(zf_fb_root(d, n, &t) == ZF_ECORRUPT, "a table past the end");
    put16(d + 6, 16);
    put16(d + 8, 14); /* field 0 at +14 of a 16-byte table: a u32 does not fit */
    CHECK(zf_fb_root(d, n, &t) == ZF_OK && zf_fb_u32(&t, 0, 0, &v) == ZF_ECORRUPT, "a field past its table");
    put32(d, 100); /* a root past the end */
    CHECK(zf_fb_root(d, n, &t) == ZF_ECORRUPT, "a root past the end");
}

/* ----------------------------------------------------------- FlexBuffers */

static void test_flexbuf(void)
{
    /* {"a": "xy", "b": null}: keys, key vector, string, map, root */
    uint8_t b[64];
    size_t k = 0;
    memcpy(b + k, "a\0b\0", 4);             /* keys at 0 and 2 */
    k = 4;
    b[k++] = 2;                             /* key vector: count 2, width 1 */
    size_t keys = k;
    b[k] = (uint8_t)(k - 0); k++;           /* -> "a" */
    b[k] = (uint8_t)(k - 2); k++;           /* -> "b" */
    b[k++] = 2;                             /* string: length 2 */
    size_t str = k;
    memcpy(b + k, "xy\0", 3);
    k += 3;
    /* map: [keys offset][keys width][count] values... types... */
    b[k] = (uint8_t)(k - keys); k++;
    b[k++] = 1;
    b[k++] = 2;
    size_t vals = k;
    b[k] = (uint8_t)(k - str); k++;         /* "a": the string */
    b[k++] = 0;                             /* "b": null */
    b[k++] = ZF_FLEX_STRING << 2;           /* types */
    b[k++] = ZF_FLEX_NULL << 2;
    b[k] = (uint8_t)(k - vals); k++;        /* root: the map */
    b[k++] = ZF_FLEX_MAP << 2;
    b[k++] = 1;
    zf_flex root, v;
    const char *s;
    size_t n, count;
    CHECK(zf_flex_root(b, k, &root) == ZF_OK && root.type == ZF_FLEX_MAP, "root map");
    CHECK(zf_flex_map_size(&root, &count) == ZF_OK && count == 2, "size");
    CHECK(zf_flex_map_get(&root, "a", &v) == ZF_OK && zf_flex_string(&v, &s, &n) == ZF_OK &&
              n == 2 && !memcmp(s, "xy", 2), "a");
    CHECK(zf_flex_map_get(&root, "b", &v) == ZF_OK && v.type == ZF_FLEX_NULL, "b is null");
    CHECK(zf_flex_map_get(&root, "c", &v) == ZF_ENOTFOUND, "no c");
    for (size_t cut = 0; cut < k; cut++) { /* truncated: checked, never read past */
        uint8_t *p = malloc(cut ? cut : 1);
        memcpy(p, b + k - cut, cut);
        if (zf_flex_root(p, cut, &root) == ZF_OK) {
            zf_flex_map_get(&root, "a", &v);
            zf_flex_string(&v, &s, &n);
        }
        free(p);
    }
    b[str - 1] = 200; /* a string longer than the buffer */
    zf_flex_root(b, k, &root);
    CHECK(zf_flex_map_get(&root, "a", &v) == ZF_OK && zf_flex_string(&v, &s, &n) == ZF_ECORRUPT,
          "long string refused");
}

/* ----------------------------------------------------------- ids, headers */

static void test_ids_and_header(void)
{
    static const uint8_t first[12] = {0x0b, 0x1c, 0xc8, 0xd6, 0x78, 0x75, 0x80, 0xf0, 0xe3, 0x3a, 0x65, 0x34};
    char text[IC_ID_TEXT];
    uint8_t id[12];
    ic_id_text(first, 12, text);
    CHECK(!strcmp(text, "1CECHNKREP0F1RSTCMT0"), "the first snapshot's id: %s", text);
    CHECK(ic_id_parse("1cechnkrep0f1rstcmt0", id) == 0 && !memcmp(id, first, 12), "lower case");
    CHECK(ic_id_parse("ICECHNKREPOFIRSTCMTO", id) == 0 && !memcmp(id, first, 12), "I, O read as 1, 0");
    CHECK(ic_id_parse("1CECHNKREP0F1RSTCMT", id) != 0, "19 characters");
    CHECK(ic_id_parse("1CECHNKREP0F1RSTCMTU", id) != 0, "U is no digit");
    ic_id_text(first, 8, text);
    CHECK(strlen(text) == 13, "a node id: 13 characters");
    uint8_t h[IC_HEADER_LEN + 8];
    static const uint8_t magic[12] = {'I', 'C', 'E', 0xF0, 0x9F, 0xA7, 0x8A, 'C', 'H', 'U', 'N', 'K'};
    memcpy(h, magic, 12);
    memset(h + 12, ' ', 24);
    memcpy(h + 12, "ic-9.9.9", 8);
    h[36] = 2, h[37] = IC_SNAPSHOT, h[38] = 0;
    memset(h + 39, 0, 8);
    ic_file f;
    char err[200];
    CHECK(ic_file_decode(h, sizeof h, IC_MANIFEST, 1 << 20, &f, err, sizeof err) == ZF_ECORRUPT &&
              strstr(err, "a snapshot file"), "the wrong type: %s", err);
    h[36] = 3;
    CHECK(ic_file_decode(h, sizeof h, IC_SNAPSHOT, 1 << 20, &f, err, sizeof err) == ZF_EUNSUPPORTED,
          "spec 3: %s", err);
    h[36] = 1, h[38] = 7;
    CHECK(ic_file_decode(h, sizeof h, IC_SNAPSHOT, 1 << 20, &f, err, sizeof err) == ZF_EUNSUPPORTED,
          "compression 7: %s", err);
    h[0] = 'X';
    CHECK(ic_file_decode(h, sizeof h, IC_SNAPSHOT, 1 << 20, &f, err, sizeof err) == ZF_ECORRUPT,
          "no magic");
    /* a zstd bomb: refused at the bound, not allocated */
    size_t big = 64 << 20;
    uint8_t *zeros = calloc(1, big), *z = malloc(ZSTD_compressBound(big) + IC_HEADER_LEN);
    memcpy(z, magic, 12);
    memset(z + 12, ' ', 24);
    z[36] = 2, z[37] = IC_MANIFEST, z[38] = 1;
    size_t zn = ZSTD_compress(z + IC_HEADER_LEN, ZSTD_compressBound(big), zeros, big, 1);
    CHECK(ic_file_decode(z, zn + IC_HEADER_LEN, IC_MANIFEST, 1 << 20, &f, err, sizeof err) == ZF_ECORRUPT &&
              strstr(err, "more than"), "a bomb: %s", err);
    CHECK(ic_file_decode(z, zn + IC_HEADER_LEN - 5, IC_MANIFEST, big, &f, err, sizeof err) == ZF_ECORRUPT,
          "cut short: %s", err);
    free(zeros);
    free(z);
}

/* ----------------------------------------------------------- the real files */

static void test_real_files(void)
{
    zf_store *raw;
    CHECK(zf_store_open_local("data/icechunk/spec2/forecast.icechunk", 0, &raw) == ZF_OK, "open");
    ic_file f;
    char err[256] = "";
    CHECK(ic_file_fetch(raw, "repo", IC_REPO_INFO, 1 << 26, &f, NULL, err, sizeof err) == ZF_OK,
          "the repo file: %s", err);
    CHECK(!strcmp(f.writer, "ic-2.3.0") && f.spec == 2, "its header: %s %u", f.writer, f.spec);
    ic_vcc vcc;
    CHECK(ic_vcc_load(&f, &vcc, err, sizeof err) == ZF_OK && vcc.n == 0, "no containers");
    ic_file_free(&f);
    zf_store_close(raw);
    CHECK(zf_store_open_local("data/icechunk/spec2/virtual.icechunk", 0, &raw) == ZF_OK, "open");
    CHECK(ic_file_fetch(raw, "repo", IC_REPO_INFO, 1 << 26, &f, NULL, err, sizeof err) == ZF_OK, "repo");
    CHECK(ic_vcc_load(&f, &vcc, err, sizeof err) == ZF_OK && vcc.n == 1 &&
              !strcmp(vcc.names[0], "local") && !strcmp(vcc.prefixes[0], "file:///tmp/zarrfs-ic2-virtual/"),
          "the container: %s", err);
    char url[256];
    CHECK(ic_vcc_expand(&vcc, "vcc://local/time.bin", 20, url, sizeof url) == ZF_OK &&
              !strcmp(url, "file:///tmp/zarrfs-ic2-virtual/time.bin"), "vcc: %s", url);
    CHECK(ic_vcc_expand(&vcc, "vcc://other/x", 13, url, sizeof url) == ZF_ENOTFOUND, "unknown container");
    CHECK(ic_vcc_expand(&vcc, "s3://b/k", 8, url, sizeof url) == ZF_OK && !strcmp(url, "s3://b/k"), "absolute");
    ic_vcc_free(&vcc);
    ic_file_free(&f);
    zf_store_close(raw);
}

/* ----------------------------------------------------------- targets */

typedef struct fake {
    const char *spec;
    uint8_t data[256];
    size_t size;
    const char *etag;
    int64_t mtime_ns;
    int calls, ranges;
    char last_key[256];
} fake;

static fake fakes[4];
static int nfakes;
static char opened[8][64];
static int nopened;

static int fake_read_many(const zf_store *s, zf_store_req *reqs, size_t n)
{
    fake *f = s->impl;
    f->calls++;
    int first = ZF_OK;
    for (size_t i = 0; i < n; i++) {
        zf_store_req *q = &reqs[i];
        f->ranges++;
        snprintf(f->last_key, sizeof f->last_key, "%s", q->key);
        q->rc = strcmp(q->key, "dir/obj.bin") ? ZF_ENOTFOUND
                : q->off + q->len > f->size ? ZF_ECORRUPT : ZF_OK;
        if (q->rc == ZF_OK) {
            memcpy(q->buf, f->data + q->off, q->len);
            if (q->seen)
                *q->seen = (zf_store_seen){.mtime_ns = f->mtime_ns, .ino = 0x12, .size = f->size};
            if (q->seen && f->etag)
                snprintf(q->seen->etag, sizeof q->seen->etag, "%s", f->etag);
        }
        if (q->rc && first == ZF_OK)
            first = q->rc;
    }
    return first;
}

static void fake_close(zf_store *s)
{
    (void)s;
}

static const zf_store_ops fake_ops = {.close = fake_close, .read_many = fake_read_many};

static int fake_open(void *ctx, const char *spec, zf_store **out, char *err, size_t errcap)
{
    (void)ctx;
    snprintf(opened[nopened++ % 8], 64, "%s", spec);
    for (int i = 0; i < nfakes; i++)
        if (!strcmp(fakes[i].spec, spec)) {
            zf_store *s = calloc(1, sizeof *s);
            s->ops = &fake_ops;
            s->impl = &fakes[i];
            s->name = strdup(spec);
            *out = s;
            return ZF_OK;
        }
    snprintf(err, errcap, "no such server");
    return ZF_EIO;
}

static int read_one(zf_targets *t, const char *url, uint64_t off, size_t len, const char *etag,
                    uint32_t lm, uint8_t *buf, char *err)
{
    zf_target_req q = {.url = url, .off = off, .len = len, .buf = buf, .etag = etag,
                       .last_modified = lm, .err = err, .errcap = 256};
    return zf_targets_read(t, &q, 1);
}

static void test_targets(void)
{
    nfakes = 3;
    fakes[0] = (fake){.spec = "https://host:8443", .size = 100, .etag = "\"abc\"", .mtime_ns = 5000000000};
    fakes[1] = (fake){.spec = "/data/v", .size = 100, .mtime_ns = 7000123456};
    fakes[2] = (fake){.spec = "s3://bkt", .size = 100, .etag = "\"e\""};
    for (int i = 0; i < 100; i++)
        fakes[0].data[i] = fakes[1].data[i] = fakes[2].data[i] = (uint8_t)i;
    zf_consent *c = zf_consent_new();
    char err[256];
    CHECK(zf_consent_add_list(c, "https://HOST:8443/dir/,file:///data/v/,s3://bkt/dir/,file:///data/w",
                              err, sizeof err) == ZF_OK, "consent");
    zf_targets *t = zf_targets_new(c, fake_open, NULL, NULL);
    uint8_t buf[64];
    CHECK(read_one(t, "https://host:8443/dir/obj.bin", 10, 5, NULL, 0, buf, err) == ZF_OK && buf[0] == 10,
          "https: %s", err);
    CHECK(!strcmp(fakes[0].last_key, "dir/obj.bin"), "the key under the origin: %s", fakes[0].last_key);
    CHECK(read_one(t, "https://host:8443/dir/obj.bin", 10, 5, "abc", 0, buf, err) == ZF_OK, "ETag without quotes");
    CHECK(read_one(t, "https://host:8443/dir/obj.bin", 10, 5, "W/\"abc\"", 0, buf, err) == ZF_OK, "weak ETag");
    CHECK(read_one(t, "https://host:8443/dir/obj.bin", 10, 5, "\"abd\"", 0, buf, err) == ZF_EIO &&
              strstr(err, "changed since the reference") && strstr(err, "https://host:8443/dir/obj.bin"),
          "another ETag: %s", err);
    CHECK(read_one(t, "https://host:8443/dir/obj.bin", 10, 5, NULL, 5, buf, err) == ZF_OK, "not newer");
    CHECK(read_one(t, "https://host:8443/dir/obj.bin", 10, 5, NULL, 4, buf, err) == ZF_EIO &&
              strstr(err, "modified after"), "newer: %s", err);
    CHECK(read_one(t, "https://host:8443/dir/obj.bin?sig=SECRET", 95, 10, NULL, 0, buf, err) == ZF_EIO &&
              !strstr(err, "SECRET"), "short, no query in the reason: %s", err);
    CHECK(read_one(t, "https://host:8443/dir/none.bin", 0, 5, NULL, 0, buf, err) == ZF_EIO &&
              strstr(err, "does not exist"), "missing: %s", err);
    CHECK(read_one(t, "https://host:8443/other/x", 0, 5, NULL, 0, buf, err) == ZF_EIO &&
              strstr(err, "add -o virtual=https://host:8443/"), "not authorised: %s", err);
    CHECK(read_one(t, "file:///etc/shadow", 0, 5, NULL, 0, buf, err) == ZF_EIO &&
              strstr(err, "not authorised; to read it, add -o virtual=file:///etc/"), "shadow: %s", err);
    CHECK(read_one(t, "file:///data/v/dir/../../../etc/shadow", 0, 5, NULL, 0, buf, err) == ZF_EIO,
          "dot segments: %s", err);
    CHECK(read_one(t, "file:///data/v/dir%2F..%2F..%2Fx", 0, 5, NULL, 0, buf, err) == ZF_EIO &&
              strstr(err, "segment"), "an encoded slash: %s", err);
    CHECK(read_one(t, "file:///data/v/dir/obj.bin", 1, 5, NULL, 0, buf, err) == ZF_OK && buf[0] == 1,
          "a local file: %s", err);
    CHECK(!strcmp(opened[nopened - 1], "/data/v"), "rooted at the consent prefix: %s", opened[nopened - 1]);
    CHECK(read_one(t, "file:///data/w/x.bin", 0, 5, NULL, 0, buf, err) == ZF_EIO &&
              !strcmp(opened[nopened - 1], "/data/w"), "a prefix without a '/' that is the URL's "
              "directory roots there: %s", opened[nopened - 1]);
    char want[64];
    snprintf(want, sizeof want, "%x-%llx-%x", 0x12, 7000123ULL, 100);
    CHECK(read_one(t, "file:///data/v/dir/obj.bin", 1, 5, want, 0, buf, err) == ZF_OK,
          "the local store's ETag %s: %s", want, err);
    CHECK(read_one(t, "file:///data/v/dir/obj.bin", 1, 5, "12-0-64", 0, buf, err) == ZF_EIO, "another");
    CHECK(read_one(t, "s3://bkt/dir/obj.bin", 0, 5, NULL, 0, buf, err) == ZF_OK, "s3: %s", err);
    CHECK(read_one(t, "s3://bkt/dir/obj.bin", 0, 5, NULL, 1, buf, err) == ZF_EIO &&
              strstr(err, "no Last-Modified"), "no time to check: %s", err);
    /* neighbours in one call are read at once */
    int before = fakes[2].calls, ranges = fakes[2].ranges;
    zf_target_req q[3];
    uint8_t b3[3][8];
    char e3[3][256];
    for (int i = 0; i < 3; i++)
        q[i] = (zf_target_req){.url = "s3://bkt/dir/obj.bin", .off = (uint64_t)(40 - 10 * i), .len = 8,
                               .buf = b3[i], .err = e3[i], .errcap = 256};
    CHECK(zf_targets_read(t, q, 3) == ZF_OK && b3[0][0] == 40 && b3[1][0] == 30 && b3[2][7] == 27,
          "three neighbours: %s", e3[0]);
    CHECK(fakes[2].calls == before + 1 && fakes[2].ranges == ranges + 1, "in one range: %d calls, %d ranges",
          fakes[2].calls - before, fakes[2].ranges - ranges);
    zf_targets_free(t);
}

int main(void)
{
    test_flatbuf();
    test_flexbuf();
    test_ids_and_header();
    test_real_files();
    test_targets();
    return check_summary("test_icechunk");
}
