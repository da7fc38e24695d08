/* codec_lzma.c - numcodecs LZMA (Python's lzma module) via liblzma.
 *
 * Decoding is what lzma.decompress(buf, format, filters=filters) does:
 * streams are decoded one after another while input remains; input after a
 * complete stream that is not a valid stream is ignored (Python drops it),
 * a stream cut short is an error.  Formats: 0 auto (xz or .lzma), 1 xz,
 * 2 .lzma ("alone"), 3 raw with the filter chain of the metadata (LZMA1,
 * LZMA2, delta, BCJ).  A decoder's memory is bounded by the decoded size
 * plus ZF_LZMA_MEM_SLACK (a stream declaring a larger dictionary is refused,
 * ZF_ECORRUPT).  The lzma_stream is cached per thread. */
#include <lzma.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "codec_impl.h"
#include "base/err.h"
#include "base/json.h"

/* preset 9's 64 MiB dictionary and the decoder's own tables, with room */
#define ZF_LZMA_MEM_SLACK ((uint64_t)96 << 20)

/* ---- configuration ------------------------------------------------------- */

static const cJSON *member(const cJSON *obj, const char *key)
{
    return obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

/* An optional member that must be null or an integer in [lo, hi]; *out keeps
 * its value when the member is absent or null. */
static int opt_uint(const cJSON *obj, const char *key, int64_t lo, int64_t hi, int64_t *out,
                    const char *what, char *err, size_t errcap)
{
    const cJSON *v = member(obj, key);
    if (!v || cJSON_IsNull(v))
        return ZF_OK;
    if (!zf_json_int(v, lo, hi, out))
        return zf_codec_errf(err, errcap, ZF_ECORRUPT, "%s: \"%s\" must be an integer in %lld..%lld",
                             what, key, (long long)lo, (long long)hi);
    return ZF_OK;
}

/* Every key of obj is one of the NULL-terminated allowed. */
static int only_keys(const cJSON *obj, const char *const *allowed, const char *what, char *err,
                     size_t errcap)
{
    for (const cJSON *k = obj->child; k; k = k->next) {
        const char *const *a = allowed;
        while (*a && strcmp(*a, k->string))
            a++;
        if (!*a)
            return zf_codec_errf(err, errcap, ZF_ECORRUPT, "%s: unknown filter option \"%.64s\"",
                                 what, k->string);
    }
    return ZF_OK;
}

/* The filter id of a raw chain entry (cJSON keeps numbers as doubles:
 * LZMA1's 0x4000000000000001 arrives as 2^62). */
static int filter_id(const cJSON *f, uint64_t *id, char *err, size_t errcap)
{
    const cJSON *v = member(f, "id");
    if (cJSON_IsNumber(v) && v->valuedouble == (double)LZMA_FILTER_LZMA1) {
        *id = LZMA_FILTER_LZMA1;
        return ZF_OK;
    }
    int64_t i;
    if (!zf_json_int(v, 0, 255, &i))
        return zf_codec_errf(err, errcap, ZF_ECORRUPT, "lzma: a filter has no integer \"id\"");
    static const uint64_t known[] = {LZMA_FILTER_LZMA2, LZMA_FILTER_DELTA, LZMA_FILTER_X86,
                                     LZMA_FILTER_POWERPC, LZMA_FILTER_IA64, LZMA_FILTER_ARM,
                                     LZMA_FILTER_ARMTHUMB, LZMA_FILTER_SPARC};
    for (size_t k = 0; k < sizeof known / sizeof *known; k++)
        if ((uint64_t)i == known[k]) {
            *id = known[k];
            return ZF_OK;
        }
    return zf_codec_errf(err, errcap, ZF_EUNSUPPORTED, "lzma: unsupported filter id %lld",
                         (long long)i);
}

/* LZMA1 / LZMA2 options: the preset's, then the keys given (as Python does). */
static int parse_lzma_opts(const cJSON *f, zf_lzma_filter *lf, char *err, size_t errcap)
{
    static const char *const keys[] = {"id", "preset", "dict_size", "lc", "lp", "pb", "mode",
                                       "nice_len", "mf", "depth", NULL};
    int64_t preset = LZMA_PRESET_DEFAULT, v;
    int rc = only_keys(f, keys, "lzma", err, errcap);
    if (!rc)
        rc = opt_uint(f, "preset", 0, UINT32_MAX, &preset, "lzma", err, errcap);
    lzma_options_lzma o;
    if (!rc && lzma_lzma_preset(&o, (uint32_t)preset))
        return zf_codec_errf(err, errcap, ZF_ECORRUPT, "lzma: invalid preset %lld", (long long)preset);
    struct { const char *key; int64_t lo, hi; uint32_t *dst; } num[] = {
        {"dict_size", LZMA_DICT_SIZE_MIN, UINT32_MAX, &o.dict_size},
        {"lc", 0, LZMA_LCLP_MAX, &o.lc}, {"lp", 0, LZMA_LCLP_MAX, &o.lp},
        {"pb", 0, LZMA_PB_MAX, &o.pb}};
    for (size_t k = 0; !rc && k < sizeof num / sizeof *num; k++) {
        v = *num[k].dst;
        rc = opt_uint(f, num[k].key, num[k].lo, num[k].hi, &v, "lzma", err, errcap);
        *num[k].dst = (uint32_t)v;
    }
    static const char *const enc_only[] = {"mode", "nice_len", "mf", "depth"};
    for (size_t k = 0; !rc && k < 4; k++) /* encoder settings: checked, not used */
        rc = opt_uint(f, enc_only[k], 0, UINT32_MAX, &v, "lzma", err, errcap);
    lf->dict_size = o.dict_size, lf->lc = o.lc, lf->lp = o.lp, lf->pb = o.pb;
    return rc;
}

/* One entry of a raw filter chain. */
static int parse_filter(const cJSON *f, zf_lzma_filter *lf, char *err, size_t errcap)
{
    if (!cJSON_IsObject(f))
        return zf_codec_errf(err, errcap, ZF_ECORRUPT, "lzma: a filter is not an object");
    memset(lf, 0, sizeof *lf);
    int rc = filter_id(f, &lf->id, err, errcap);
    if (rc)
        return rc;
    if (lf->id == LZMA_FILTER_LZMA1 || lf->id == LZMA_FILTER_LZMA2)
        return parse_lzma_opts(f, lf, err, errcap);
    int64_t v = lf->id == LZMA_FILTER_DELTA ? 1 : 0;
    if (lf->id == LZMA_FILTER_DELTA) {
        static const char *const keys[] = {"id", "dist", NULL};
        rc = only_keys(f, keys, "lzma", err, errcap);
        if (!rc)
            rc = opt_uint(f, "dist", LZMA_DELTA_DIST_MIN, LZMA_DELTA_DIST_MAX, &v, "lzma", err, errcap);
        lf->dist = (uint32_t)v;
        return rc;
    }
    static const char *const keys[] = {"id", "start_offset", NULL};
    rc = only_keys(f, keys, "lzma", err, errcap);
    if (!rc)
        rc = opt_uint(f, "start_offset", 0, UINT32_MAX, &v, "lzma", err, errcap);
    lf->start_offset = (uint32_t)v;
    return rc;
}

/* liblzma's filter chain for the parsed raw filters; opts holds the options. */
typedef struct chain {
    lzma_filter f[ZF_LZMA_FILTERS + 1];
    lzma_options_lzma lz[ZF_LZMA_FILTERS];
    lzma_options_delta delta[ZF_LZMA_FILTERS];
    lzma_options_bcj bcj[ZF_LZMA_FILTERS];
} chain;

static void build_chain(const zf_codec_params *par, chain *c)
{
    memset(c, 0, sizeof *c);
    for (unsigned i = 0; i < par->lzma_nfilters; i++) {
        const zf_lzma_filter *lf = &par->lzma_filters[i];
        c->f[i].id = lf->id;
        if (lf->id == LZMA_FILTER_LZMA1 || lf->id == LZMA_FILTER_LZMA2) {
            lzma_lzma_preset(&c->lz[i], LZMA_PRESET_DEFAULT);
            c->lz[i].dict_size = lf->dict_size;
            c->lz[i].lc = lf->lc, c->lz[i].lp = lf->lp, c->lz[i].pb = lf->pb;
            c->f[i].options = &c->lz[i];
        } else if (lf->id == LZMA_FILTER_DELTA) {
            c->delta[i].type = LZMA_DELTA_TYPE_BYTE;
            c->delta[i].dist = lf->dist;
            c->f[i].options = &c->delta[i];
        } else {
            c->bcj[i].start_offset = lf->start_offset;
            c->f[i].options = &c->bcj[i];
        }
    }
    c->f[par->lzma_nfilters].id = LZMA_VLI_UNKNOWN;
}

/* The raw chain of "filters" (format 3 only: lzma.decompress refuses filters
 * with any other format, so numcodecs cannot read such data either). */
static int parse_filters(const cJSON *fl, int format, zf_codec_params *par, char *err,
                         size_t errcap)
{
    int given = fl && !cJSON_IsNull(fl);
    if (format != 3)
        return given ? zf_codec_errf(err, errcap, ZF_EUNSUPPORTED,
                                     "lzma: \"filters\" with format %d (numcodecs cannot decode it)",
                                     format)
                     : ZF_OK;
    if (!cJSON_IsArray(fl) || cJSON_GetArraySize(fl) < 1 || cJSON_GetArraySize(fl) > ZF_LZMA_FILTERS)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT,
                             "lzma: format 3 (raw) needs a list of 1 to %d filters", ZF_LZMA_FILTERS);
    par->lzma_nfilters = 0;
    for (const cJSON *f = fl->child; f; f = f->next) {
        int rc = parse_filter(f, &par->lzma_filters[par->lzma_nfilters++], err, errcap);
        if (rc)
            return rc;
    }
    chain c;
    build_chain(par, &c);
    if (lzma_raw_decoder_memusage(c.f) == UINT64_MAX)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT, "lzma: invalid raw filter chain");
    return ZF_OK;
}

/* Parse a numcodecs LZMA configuration (format, check, preset, filters). */
int zf_lzma_parse(const cJSON *cfg, const char *codec, zf_codec_params *par, char *err,
                  size_t errcap)
{
    int64_t format = 1, check = -1, preset = 0;
    int rc = opt_uint(cfg, "format", 0, 3, &format, codec, err, errcap);
    if (!rc)
        rc = opt_uint(cfg, "check", -1, LZMA_CHECK_ID_MAX, &check, codec, err, errcap);
    if (!rc && check != -1 && !lzma_check_is_supported((lzma_check)check))
        rc = zf_codec_errf(err, errcap, ZF_ECORRUPT, "%s: unknown check %lld", codec, (long long)check);
    if (!rc) /* an encoder setting: only checked */
        rc = opt_uint(cfg, "preset", 0, UINT32_MAX, &preset, codec, err, errcap);
    if (!rc && ((preset & ~(int64_t)LZMA_PRESET_EXTREME) > 9))
        rc = zf_codec_errf(err, errcap, ZF_ECORRUPT, "%s: invalid preset %lld", codec,
                           (long long)preset);
    par->lzma_format = (int)format;
    return rc ? rc : parse_filters(member(cfg, "filters"), (int)format, par, err, errcap);
}

/* ---- per-thread decoder ---------------------------------------------------- */

static pthread_key_t strm_key;
static pthread_once_t strm_once = PTHREAD_ONCE_INIT;
static bool strm_key_ok;

static void strm_destroy(void *p)
{
    lzma_end(p);
    free(p);
}

static void strm_key_init(void)
{
    strm_key_ok = pthread_key_create(&strm_key, strm_destroy) == 0;
}

/* This thread's cached stream; *owned is set if the caller must free it. */
static lzma_stream *strm_get(bool *owned)
{
    *owned = false;
    pthread_once(&strm_once, strm_key_init);
    lzma_stream *s = strm_key_ok ? pthread_getspecific(strm_key) : NULL;
    if (s)
        return s;
    s = malloc(sizeof *s);
    if (!s)
        return NULL;
    *s = (lzma_stream)LZMA_STREAM_INIT;
    if (!(strm_key_ok && pthread_setspecific(strm_key, s) == 0))
        *owned = true;
    return s;
}

/* ---- decoding ----------------------------------------------------------------- */

typedef struct job {
    const zf_codec_params *par;
    uint64_t memlimit;
    size_t stream_at; /* input offset of the stream being decoded */
    char *err;
    size_t errcap;
} job;

static int fail(const job *j, int code, const char *what)
{
    if (j->stream_at == 0)
        return zf_codec_errf(j->err, j->errcap, code, "lzma: %s", what);
    return zf_codec_errf(j->err, j->errcap, code, "lzma: stream at byte %zu: %s", j->stream_at, what);
}

/* Set s up to decode one stream of the configured format. */
static lzma_ret start(const job *j, lzma_stream *s)
{
    switch (j->par->lzma_format) {
    case 0: return lzma_auto_decoder(s, j->memlimit, 0);
    case 1: return lzma_stream_decoder(s, j->memlimit, 0);
    case 2: return lzma_alone_decoder(s, j->memlimit);
    default: {
        chain c;
        build_chain(j->par, &c);
        if (lzma_raw_decoder_memusage(c.f) > j->memlimit)
            return LZMA_MEMLIMIT_ERROR;
        return lzma_raw_decoder(s, c.f);
    }
    }
}

static int lib_error(const job *j, lzma_ret r)
{
    switch (r) {
    case LZMA_MEM_ERROR: return fail(j, ZF_ENOMEM, "out of memory");
    case LZMA_MEMLIMIT_ERROR:
        return fail(j, ZF_ECORRUPT, "decoding needs more memory (its dictionary) than a chunk "
                                    "of this size is allowed");
    case LZMA_FORMAT_ERROR: return fail(j, ZF_ECORRUPT, "not a stream of the configured format");
    case LZMA_OPTIONS_ERROR: return fail(j, ZF_ECORRUPT, "unsupported stream options");
    case LZMA_DATA_ERROR: return fail(j, ZF_ECORRUPT, "corrupt data");
    default: return fail(j, ZF_ECORRUPT, "decoder error");
    }
}

typedef enum outcome { O_END, O_TRUNCATED, O_TOO_BIG, O_ERROR } outcome;

/* Decode one stream from s's input into its output as Python's
 * LZMADecompressor does (LZMA_RUN until the end of the stream or of the
 * input); a full output is probed one byte at a time for more.  *r gets
 * liblzma's code for O_ERROR. */
static outcome one_stream(lzma_stream *s, lzma_ret *r)
{
    uint8_t probe;
    for (;;) {
        int probing = s->avail_out == 0;
        uint8_t *keep = s->next_out;
        if (probing)
            s->next_out = &probe, s->avail_out = 1;
        *r = lzma_code(s, LZMA_RUN);
        int produced = probing && s->avail_out == 0;
        if (*r == LZMA_BUF_ERROR && s->avail_in == 0 && s->avail_out > 0)
            *r = LZMA_OK; /* out of input: not an error yet */
        if (probing)
            s->next_out = keep, s->avail_out = 0;
        if (produced)
            return O_TOO_BIG;
        if (*r == LZMA_STREAM_END)
            return O_END;
        if (*r != LZMA_OK)
            return O_ERROR;
        if (s->avail_out == 0 && !probing)
            continue;
        if (s->avail_in == 0)
            return O_TRUNCATED; /* "ended before the end-of-stream marker" */
    }
}

/* Decode the streams of in into out, as lzma.decompress does: after a
 * complete stream, input that fails to decode as a stream (but is not cut
 * short) is dropped. */
static int run(job *j, lzma_stream *s, const uint8_t *in, size_t n, uint8_t *out, size_t cap,
               size_t *outn)
{
    size_t made = 0;
    for (;;) {
        lzma_ret r = start(j, s);
        if (r != LZMA_OK)
            return lib_error(j, r);
        s->next_in = in + j->stream_at, s->avail_in = n - j->stream_at;
        s->next_out = out + made, s->avail_out = cap - made;
        outcome o = one_stream(s, &r);
        if (o == O_TOO_BIG)
            return zf_codec_errf(j->err, j->errcap, ZF_ECORRUPT, "lzma: output exceeds %zu bytes", cap);
        if (o == O_TRUNCATED)
            return fail(j, ZF_ECORRUPT, "truncated input");
        if (o == O_ERROR) {
            if (j->stream_at == 0 || r == LZMA_MEM_ERROR || r == LZMA_MEMLIMIT_ERROR)
                return lib_error(j, r);
            break; /* not a stream after a complete one: dropped, as Python does */
        }
        made = (size_t)(s->next_out - out);
        j->stream_at = n - s->avail_in;
        if (s->avail_in == 0)
            break;
    }
    *outn = made;
    return ZF_OK;
}

/* Decode a numcodecs LZMA buffer. */
int zf_dec_lzma(ZF_DEC_ARGS)
{
    if (n == 0)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT, "lzma: empty input");
    bool owned;
    lzma_stream *s = strm_get(&owned);
    if (!s)
        return zf_codec_errf(err, errcap, ZF_ENOMEM, "lzma: out of memory");
    uint8_t none;
    job j = {par, cap > UINT64_MAX - ZF_LZMA_MEM_SLACK ? UINT64_MAX : cap + ZF_LZMA_MEM_SLACK, 0,
             err, errcap};
    int rc = run(&j, s, in, n, out ? out : &none, out ? cap : 0, outn);
    if (owned)
        strm_destroy(s);
    return rc;
}
