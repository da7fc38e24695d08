/* fuzz_meta.c - libFuzzer target: Zarr metadata parsing and chunk keys.
 *
 * The input is one metadata document, optionally followed by a NUL byte and a
 * second document.  It is parsed as v3 zarr.json (the part before the NUL)
 * and as a v2 .zarray (before the NUL) with .zattrs (after it, if present).
 * Whenever a parse reports a timedelta or datetime array, the parsed zf_meta is checked
 * for internal consistency, chunk keys are built for a few grid coordinates
 * into buffers of several capacities (exact-size heap buffers, so an
 * overflow is caught by ASan), and the pipeline is described.  The raw member
 * reader (consolidated metadata) walks the first document, nested objects
 * included, and every span it reports must lie inside its parent.
 *
 * Build: scripts/fuzz (or CMake with -DZF_FUZZ=ON, clang). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/json.h"
#include "zarr/meta.h"
#include "chunk/convert.h"
#include "codec/pipeline.h"

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "fuzz_meta: check failed at %s:%d: %s\n", __FILE__, __LINE__, \
                    #cond);                                                            \
            abort();                                                                   \
        }                                                                              \
    } while (0)

/* a heap copy without a terminator: the parsers get explicit lengths */
static char *dup_exact(const uint8_t *p, size_t n)
{
    char *s = malloc(n ? n : 1);
    if (s && n)
        memcpy(s, p, n);
    return s;
}

static void check_err_text(const char *err, size_t cap)
{
    CHECK(memchr(err, '\0', cap) != NULL);
}

static void check_keys(const zf_meta *m)
{
    static const size_t caps[] = {1, 2, 8, 24, 64, 4096};
    uint64_t grid[ZF_MAX_DIMS];
    for (unsigned d = 0; d < m->ndim; d++)
        grid[d] = (m->shape[d] + m->chunks[d] - 1) / m->chunks[d];
    for (int which = 0; which < 4; which++) {
        uint64_t coords[ZF_MAX_DIMS];
        for (unsigned d = 0; d < m->ndim; d++) {
            switch (which) {
            case 0: coords[d] = 0; break;
            case 1: coords[d] = grid[d] ? grid[d] - 1 : 0; break;
            case 2: coords[d] = grid[d] / 2; break;
            default: coords[d] = UINT64_MAX; break;
            }
        }
        for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
            char *buf = malloc(caps[c]);
            CHECK(buf);
            memset(buf, 'X', caps[c]);
            int rc = zf_meta_chunk_key(m, coords, buf, caps[c]);
            CHECK(rc == ZF_OK || rc == ZF_EINVAL);
            if (rc == ZF_OK) {
                size_t len = strnlen(buf, caps[c]);
                CHECK(len < caps[c]);
                CHECK(len > 0);
                if (!m->key_v2)
                    CHECK(buf[0] == 'c');
                /* no empty path component, no leading or trailing separator */
                CHECK(buf[0] != '/' && buf[0] != '.');
                CHECK(buf[len - 1] != '/' && buf[len - 1] != '.');
                CHECK(strstr(buf, "//") == NULL);
            }
            free(buf);
        }
    }
}

/* a CF descriptor is consistent, and converting its fill (and a few
 * elements built from it) never overflows the buffer or the arithmetic */
static void check_cf(const zf_meta *m)
{
    const zf_cf *cf = &m->cf;
    CHECK(cf->how == ZF_CF_NATIVE || cf->how == ZF_CF_UNITS || cf->how == ZF_CF_UNITS_DTYPE ||
          cf->how == ZF_CF_SINCE);
    CHECK((cf->how == ZF_CF_SINCE) == (m->values != ZF_VALUES_DURATION) ||
          (cf->how == ZF_CF_NATIVE && m->values == ZF_VALUES_DATETIME));
    CHECK(cf->how != ZF_CF_SINCE || (cf->decoding == ZF_CF_DEC_CFTIME
                                     ? m->values == ZF_VALUES_CFTIME && cf->unit == ZF_UNIT_us
                                     : m->values == ZF_VALUES_DATETIME && cf->unit == ZF_UNIT_ns));
    CHECK(cf->how != ZF_CF_SINCE || cf->decoding != ZF_CF_DEC_PANDAS || cf->epoch_ns != INT64_MIN);
    CHECK(cf->how != ZF_CF_SINCE || cf->decoding == ZF_CF_DEC_PANDAS ||
          (cf->ref.us >= 0 && cf->ref.us < ZF_US_PER_DAY && cf->us_per > 0));
    if (cf->how == ZF_CF_NATIVE) {
        CHECK(m->elem.kind == ZF_ELEM_INT && m->elem.size == 8);
        return;
    }
    CHECK(cf->elem.kind == m->elem.kind && cf->elem.size == m->elem.size);
    CHECK(cf->elem.size == 1 || cf->elem.size == 2 || cf->elem.size == 4 || cf->elem.size == 8);
    CHECK(cf->src >= ZF_UNIT_D && cf->src <= ZF_UNIT_ns);
    CHECK(cf->target >= ZF_UNIT_s && cf->target <= ZF_UNIT_ns);
    CHECK(cf->unit >= ZF_UNIT_s && cf->unit <= ZF_UNIT_ns && m->unit == cf->unit && m->scale == 1);
    CHECK(cf->nmask_i <= ZF_CF_MAX_MASK && cf->nmask_f <= ZF_CF_MAX_MASK);
    CHECK(memchr(cf->attrs_text, '\0', sizeof cf->attrs_text) != NULL);
    CHECK(zf_cf_shown(cf, ZF_CF_ALL) && !zf_cf_shown(cf, ZF_CF_OFF));
    /* the fill, and every byte pattern of a few lengths */
    uint8_t elems[8 * 8];
    char err[160];
    int64_t t;
    int rc = zf_convert_one(cf, cf->fill_raw, &t, err, sizeof err);
    CHECK(rc == ZF_OK || rc == ZF_ECORRUPT || (rc == ZF_ERANGE && cf->may_cftime));
    for (size_t i = 0; i < sizeof elems; i++)
        elems[i] = cf->fill_raw[i % cf->elem.size] ^ (uint8_t)(i * 37);
    uint64_t shape[2] = {2, 4}, valid[2] = {2, 3};
    uint8_t again[sizeof elems];
    memcpy(again, elems, sizeof elems);
    unsigned coarser = 9;
    rc = zf_convert_chunk(cf, elems, 2, shape, valid, &coarser, err, sizeof err);
    CHECK(rc == ZF_OK || rc == ZF_ECORRUPT || rc == ZF_ENOMEM || (rc == ZF_ERANGE && cf->may_cftime));
    CHECK(coarser <= 3 && (!coarser || (rc == ZF_OK && zf_convert_may_coarsen(cf))));
    if (rc)
        CHECK(memchr(err, '\0', sizeof err) != NULL);
    if (cf->may_cftime) { /* the same elements as cftime objects */
        zf_cf c;
        zf_cf_cftime(cf, &c);
        rc = zf_convert_chunk(&c, again, 2, shape, valid, NULL, err, sizeof err);
        CHECK(rc == ZF_OK || rc == ZF_ECORRUPT);
    }
    zf_sbuf sb = {0};
    zf_cf_describe(cf, m->values != ZF_VALUES_DURATION, &sb);
    free(sb.data);
    zf_fp fp;
    zf_fp_init(&fp);
    zf_cf_fingerprint(cf, &fp);
}

static void check_meta(const zf_meta *m, int v2)
{
    CHECK(m->zarr_format == (v2 ? 2 : 3));
    CHECK(m->ndim <= ZF_MAX_DIMS);
    uint64_t n = 1, ce = 1;
    for (unsigned d = 0; d < m->ndim; d++) {
        CHECK(m->chunks[d] >= 1);
        n *= m->shape[d]; /* bounded by the parser */
        ce *= m->chunks[d];
    }
    CHECK(n == m->nelems);
    CHECK(m->scale >= 1 && m->scale <= INT32_MAX);
    CHECK((unsigned)m->unit <= ZF_UNIT_GENERIC);
    CHECK(m->separator == '/' || m->separator == '.');
    CHECK(m->pipeline != NULL);
    CHECK(zf_pipeline_chunk_elems(m->pipeline) == ce);
    CHECK(zf_pipeline_max_encoded(m->pipeline) >= ce * m->elem.size);
    check_cf(m);
    CHECK(memchr(m->dtype_text, '\0', sizeof m->dtype_text) != NULL);
    CHECK(memchr(m->fill_text, '\0', sizeof m->fill_text) != NULL);
    for (unsigned d = m->ndim; d < ZF_MAX_DIMS; d++)
        CHECK(m->dim_names[d] == NULL);
    char desc[64];
    zf_pipeline_describe(m->pipeline, desc, sizeof desc);
    CHECK(memchr(desc, '\0', sizeof desc) != NULL);
    char tiny[4];
    zf_pipeline_describe(m->pipeline, tiny, sizeof tiny);
    CHECK(memchr(tiny, '\0', sizeof tiny) != NULL);
    check_keys(m);
}

typedef struct span_ctx {
    const char *base;
    size_t n;
    int depth;
} span_ctx;

static int check_member(void *arg, const char *key, const char *val, size_t vlen)
{
    span_ctx *c = arg;
    CHECK(val >= c->base && vlen <= c->n && (size_t)(val - c->base) <= c->n - vlen);
    CHECK(strlen(key) < ZF_JSON_KEY_MAX);
    if (c->depth < 8 && vlen && *val == '{') {
        span_ctx sub = {val, vlen, c->depth + 1};
        int rc = zf_json_raw_members(val, vlen, check_member, &sub);
        CHECK(rc == ZF_OK || rc == ZF_ECORRUPT);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, '\0', size);
    size_t n1 = nul ? (size_t)(nul - data) : size;
    char *doc = dup_exact(data, n1);
    char *attrs = nul ? dup_exact(nul + 1, size - n1 - 1) : NULL;
    size_t an = nul ? size - n1 - 1 : 0;
    if (!doc || (nul && !attrs)) {
        free(doc);
        free(attrs);
        return 0;
    }
    char err[128];
    zf_node_kind kind;
    zf_meta m;

    span_ctx top = {doc, n1, 0};
    int raw = zf_json_raw_members(doc, n1, check_member, &top);
    CHECK(raw == ZF_OK || raw == ZF_ECORRUPT);

    /* v3 */
    err[0] = '\0';
    int rc = zf_meta_parse_v3(doc, n1, &kind, &m, err, sizeof err);
    check_err_text(err, sizeof err);
    if (rc == ZF_OK) {
        CHECK(kind == ZF_KIND_GROUP || kind == ZF_KIND_TIMEDELTA || kind == ZF_KIND_OTHER_ARRAY);
        if (kind == ZF_KIND_TIMEDELTA)
            check_meta(&m, 0);
        zf_meta_clear(&m);
        zf_meta_clear(&m); /* clearing twice is allowed */
    } else {
        CHECK(rc == ZF_ECORRUPT || rc == ZF_EUNSUPPORTED || rc == ZF_ENOMEM);
        CHECK(err[0] != '\0');
        CHECK(m.pipeline == NULL);
    }

    /* v2, with and without .zattrs; an errcap of 1 must not overflow either */
    for (int pass = 0; pass < 2; pass++) {
        err[0] = '\0';
        size_t cap = pass ? 1 : sizeof err;
        rc = zf_meta_parse_v2(doc, n1, pass ? NULL : attrs, pass ? 0 : an, &kind, &m, err, cap);
        check_err_text(err, cap);
        if (rc == ZF_OK) {
            CHECK(kind == ZF_KIND_TIMEDELTA || kind == ZF_KIND_OTHER_ARRAY);
            if (kind == ZF_KIND_TIMEDELTA)
                check_meta(&m, 1);
            zf_meta_clear(&m);
        } else {
            CHECK(rc == ZF_ECORRUPT || rc == ZF_EUNSUPPORTED || rc == ZF_ENOMEM);
            CHECK(pass || err[0] != '\0');
            CHECK(m.pipeline == NULL);
        }
        if (!nul)
            break;
    }
    free(doc);
    free(attrs);
    return 0;
}
