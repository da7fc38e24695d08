/* codec.c - bytes-to-bytes codecs: metadata parsing and dispatch.
 *
 * The decoders themselves live in codec_<name>.c.  A codec keeps only what
 * decoding needs: its decoder, name and the few parameters the data does not
 * describe itself (shuffle's element size, a checksum's place, lzma's format
 * and raw filter chain); other configuration values are validated here and
 * then dropped. */
#include "codec/codec.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_impl.h"
#include "base/err.h"

/* The largest encoding of n bytes a writer can produce: n + n / per + add
 * (per 0: no growth with n).  See the table of specs below. */
typedef struct growth {
    unsigned per;
    size_t add;
} growth;

struct zf_codec {
    const char *name;    /* static string, as written in metadata */
    zf_decode_fn decode;
    zf_codec_params par;
    growth grow;
};

/* Validates a configuration object (may be NULL) and fills in par (which
 * holds the defaults); returns ZF_OK or an error. */
typedef int (*parse_fn)(const cJSON *cfg, const char *codec, zf_codec_params *par, char *err,
                        size_t errcap);

typedef struct codec_spec {
    const char *name;
    zf_decode_fn decode;
    parse_fn check;
    growth grow;
} codec_spec;

/* ---- configuration checks ------------------------------------------------ */

static const cJSON *member(const cJSON *obj, const char *key)
{
    return obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

/* An optional integer member must be an integral number in [lo, hi]. */
static int opt_int(const cJSON *obj, const char *key, long lo, long hi,
                   const char *codec, char *err, size_t errcap)
{
    const cJSON *v = member(obj, key);
    if (!v)
        return ZF_OK;
    if (!cJSON_IsNumber(v))
        return zf_codec_errf(err, errcap, ZF_ECORRUPT,
                             "%s: configuration \"%s\" must be an integer", codec, key);
    double d = v->valuedouble;
    if (!(d >= (double)lo && d <= (double)hi) || (double)(long)d != d)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT,
                             "%s: configuration \"%s\" must be an integer in %ld..%ld, got %g",
                             codec, key, lo, hi, d);
    return ZF_OK;
}

static int opt_bool(const cJSON *obj, const char *key, const char *codec,
                    char *err, size_t errcap)
{
    const cJSON *v = member(obj, key);
    if (v && !cJSON_IsBool(v))
        return zf_codec_errf(err, errcap, ZF_ECORRUPT,
                             "%s: configuration \"%s\" must be a boolean", codec, key);
    return ZF_OK;
}

/* An optional string member must be one of the NULL-terminated choices. */
static int opt_enum(const cJSON *obj, const char *key, const char *const *choices,
                    const char *codec, char *err, size_t errcap)
{
    const cJSON *v = member(obj, key);
    if (!v)
        return ZF_OK;
    if (!cJSON_IsString(v) || !v->valuestring)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT,
                             "%s: configuration \"%s\" must be a string", codec, key);
    for (const char *const *c = choices; *c; c++)
        if (strcmp(*c, v->valuestring) == 0)
            return ZF_OK;
    return zf_codec_errf(err, errcap, ZF_ECORRUPT, "%s: unknown %s \"%.64s\"", codec, key,
                         v->valuestring);
}

#define INT_LO (-2147483647L - 1)
#define INT_HI 2147483647L

static const char *const blosc_cnames[] = {"lz4", "lz4hc", "blosclz", "zstd", "zlib",
                                           "snappy", NULL};
static const char *const blosc_shuffles[] = {"noshuffle", "shuffle", "bitshuffle", NULL};

static int check_none(const cJSON *cfg, const char *codec, zf_codec_params *par, char *err,
                      size_t errcap)
{
    (void)cfg, (void)codec, (void)par, (void)err, (void)errcap;
    return ZF_OK;
}

static int check_level(const cJSON *cfg, const char *codec, zf_codec_params *par, char *err,
                       size_t errcap)
{
    return opt_int(cfg, "level", INT_LO, INT_HI, codec, err, errcap);
}

static int check_zstd(const cJSON *cfg, const char *codec, zf_codec_params *par, char *err,
                      size_t errcap)
{
    int rc = check_level(cfg, codec, par, err, errcap);
    return rc ? rc : opt_bool(cfg, "checksum", codec, err, errcap);
}

static int check_lz4(const cJSON *cfg, const char *codec, zf_codec_params *par, char *err,
                     size_t errcap)
{
    return opt_int(cfg, "acceleration", INT_LO, INT_HI, codec, err, errcap);
}

/* Fields common to the v2 and v3 blosc configurations. */
static int check_blosc_common(const cJSON *cfg, const char *codec, char *err, size_t errcap)
{
    int rc = opt_enum(cfg, "cname", blosc_cnames, codec, err, errcap);
    if (!rc)
        rc = opt_int(cfg, "clevel", 0, 9, codec, err, errcap);
    if (!rc)
        rc = opt_int(cfg, "blocksize", 0, INT_HI, codec, err, errcap);
    return rc;
}

static int check_v3_blosc(const cJSON *cfg, const char *codec, zf_codec_params *par, char *err,
                          size_t errcap)
{
    int rc = check_blosc_common(cfg, codec, err, errcap);
    if (!rc)
        rc = opt_enum(cfg, "shuffle", blosc_shuffles, codec, err, errcap);
    if (!rc)
        rc = opt_int(cfg, "typesize", 1, INT_HI, codec, err, errcap);
    return rc;
}

/* v2 (numcodecs) shuffle: -1 auto, 0 none, 1 byte, 2 bit. */
static int check_v2_blosc(const cJSON *cfg, const char *codec, zf_codec_params *par, char *err,
                          size_t errcap)
{
    int rc = check_blosc_common(cfg, codec, err, errcap);
    if (!rc)
        rc = opt_int(cfg, "shuffle", -1, 2, codec, err, errcap);
    if (!rc)
        rc = opt_int(cfg, "typesize", 1, INT_HI, codec, err, errcap);
    return rc;
}

static const char *const locations[] = {"start", "end", NULL};

/* numcodecs Checksum32 "location": "start" or "end" (the default is in par). */
static int check_location(const cJSON *cfg, const char *codec, zf_codec_params *par, char *err,
                          size_t errcap)
{
    int rc = opt_enum(cfg, "location", locations, codec, err, errcap);
    const cJSON *v = member(cfg, "location");
    if (!rc && v)
        par->at_end = strcmp(v->valuestring, "end") == 0;
    return rc;
}

static int check_start(const cJSON *cfg, const char *codec, zf_codec_params *par, char *err,
                       size_t errcap)
{
    par->at_end = 0;
    return check_location(cfg, codec, par, err, errcap);
}

static int check_end(const cJSON *cfg, const char *codec, zf_codec_params *par, char *err,
                     size_t errcap)
{
    par->at_end = 1;
    return check_location(cfg, codec, par, err, errcap);
}

/* Fletcher32 takes no location: its checksum always trails the data. */
static int check_fletcher32(const cJSON *cfg, const char *codec, zf_codec_params *par,
                            char *err, size_t errcap)
{
    par->at_end = 1;
    if (member(cfg, "location"))
        return zf_codec_errf(err, errcap, ZF_ECORRUPT,
                             "%s: takes no \"location\" (the checksum always trails the data)",
                             codec);
    return ZF_OK;
}

/* numcodecs Shuffle "elementsize" (the default is in par). */
static int check_shuffle(const cJSON *cfg, const char *codec, zf_codec_params *par, char *err,
                         size_t errcap)
{
    const cJSON *v = member(cfg, "elementsize");
    if (!v || cJSON_IsNull(v))
        return ZF_OK;
    int rc = opt_int(cfg, "elementsize", INT_LO, INT_HI, codec, err, errcap);
    if (!rc)
        par->elementsize = v->valuedouble < 1 ? 0 : (unsigned)v->valuedouble;
    return rc;
}

/* ---- codec tables ---------------------------------------------------------- */

/* How much each codec can legitimately expand its input (zf_codec_max_encoded),
 * generous beyond each library's own worst case so that other writers, and
 * streams flushed in many blocks or frames, stay within it:
 *   zstd     libzstd's ZSTD_compressBound is n + n/256 + 64 at most (frame
 *            header 18 bytes, checksum 4); n/128 + 1024 leaves room for a
 *            3-byte block header every 384 bytes and a few more frames
 *   deflate  zlib's deflateBound is n + n/4096 + n/16384 + 13, the gzip
 *            wrapper 18 (a name or comment in its header more): n/128 + 1024
 *   bz2      the bzip2 manual's n + n/100 + 600: n/64 + 1024
 *   lz4      LZ4_compressBound n + n/255 + 16, numcodecs' size header 4
 *   blosc    c-blosc writes at most n + 16 (BLOSC_MAX_OVERHEAD): n/256 + 256
 *   lzma     xz's lzma_stream_buffer_bound is about n + n/21845 + 1200; raw
 *            and LZMA-alone streams of incompressible data grow by a few per
 *            cent: n/16 + 4096
 *   shuffle  the same size; checksums 4 bytes */
#define GROW_ZSTD {128, 1024}
#define GROW_DEFLATE {128, 1024}
#define GROW_BZ2 {64, 1024}
#define GROW_LZ4 {128, 64}
#define GROW_BLOSC {256, 256}
#define GROW_LZMA {16, 4096}
#define GROW_SAME {0, 0}
#define GROW_SUM {0, 4}

static const codec_spec v3_specs[] = {
    {"zstd", zf_dec_zstd, check_zstd, GROW_ZSTD},
    {"gzip", zf_dec_gzip, check_level, GROW_DEFLATE},
    {"blosc", zf_dec_blosc, check_v3_blosc, GROW_BLOSC},
    {"crc32c", zf_dec_crc32c, check_none, GROW_SUM},
    /* numcodecs compressors wrapped for v3 by zarr-python (numcodecs.zarr3);
     * their configuration is the numcodecs one without "id". */
    {"numcodecs.zstd", zf_dec_zstd, check_zstd, GROW_ZSTD},
    {"numcodecs.blosc", zf_dec_blosc, check_v2_blosc, GROW_BLOSC},
    {"numcodecs.zlib", zf_dec_zlib, check_level, GROW_DEFLATE},
    {"numcodecs.gzip", zf_dec_gzip, check_level, GROW_DEFLATE},
    {"numcodecs.bz2", zf_dec_bz2, check_level, GROW_BZ2},
    {"numcodecs.lz4", zf_dec_lz4, check_lz4, GROW_LZ4},
    {"numcodecs.lzma", zf_dec_lzma, zf_lzma_parse, GROW_LZMA},
    {"numcodecs.shuffle", zf_dec_shuffle, check_shuffle, GROW_SAME},
    {"numcodecs.crc32", zf_dec_crc32, check_start, GROW_SUM},
    {"numcodecs.adler32", zf_dec_adler32, check_start, GROW_SUM},
    {"numcodecs.crc32c", zf_dec_crc32c, check_end, GROW_SUM},
    {"numcodecs.fletcher32", zf_dec_fletcher32, check_fletcher32, GROW_SUM},
};

static const codec_spec v2_specs[] = {
    {"zstd", zf_dec_zstd, check_zstd, GROW_ZSTD},
    {"blosc", zf_dec_blosc, check_v2_blosc, GROW_BLOSC},
    {"zlib", zf_dec_zlib, check_level, GROW_DEFLATE},
    {"gzip", zf_dec_gzip, check_level, GROW_DEFLATE},
    {"bz2", zf_dec_bz2, check_level, GROW_BZ2},
    {"lz4", zf_dec_lz4, check_lz4, GROW_LZ4},
    {"lzma", zf_dec_lzma, zf_lzma_parse, GROW_LZMA},
    {"shuffle", zf_dec_shuffle, check_shuffle, GROW_SAME},
    {"crc32", zf_dec_crc32, check_start, GROW_SUM},
    {"adler32", zf_dec_adler32, check_start, GROW_SUM},
    {"crc32c", zf_dec_crc32c, check_end, GROW_SUM},
    {"fletcher32", zf_dec_fletcher32, check_fletcher32, GROW_SUM},
};

static const codec_spec *find_spec(const codec_spec *specs, size_t count, const char *name)
{
    for (size_t i = 0; i < count; i++)
        if (strcmp(specs[i].name, name) == 0)
            return &specs[i];
    return NULL;
}

/* Checks cfg against spec and allocates the codec; shuffle's element size
 * defaults to elementsize (numcodecs: 4; zarr-python v3: the data type's). */
static int make_codec(const codec_spec *spec, const cJSON *cfg, unsigned elementsize,
                      zf_codec **out, char *err, size_t errcap)
{
    zf_codec_params par = {.elementsize = elementsize, .at_end = 1, .lzma_format = 1};
    int rc = spec->check(cfg, spec->name, &par, err, errcap);
    if (rc)
        return rc;
    zf_codec *c = malloc(sizeof *c);
    if (!c)
        return zf_codec_errf(err, errcap, ZF_ENOMEM, "%s: out of memory", spec->name);
    c->name = spec->name;
    c->decode = spec->decode;
    c->par = par;
    c->grow = spec->grow;
    *out = c;
    return ZF_OK;
}

/* ---- public API ------------------------------------------------------------ */

/* Input bytes given to this thread's decoders so far (see codec.h). */
static _Thread_local uint64_t decoder_input;

uint64_t zf_codec_work(void)
{
    return decoder_input;
}


/* Split a v3 entry into its name and (possibly NULL) configuration. */
static int v3_split(const cJSON *entry, const char **name, const cJSON **cfg,
                    char *err, size_t errcap)
{
    *cfg = NULL;
    if (cJSON_IsString(entry) && entry->valuestring) {
        *name = entry->valuestring;
        return ZF_OK;
    }
    if (!cJSON_IsObject(entry))
        return zf_codec_errf(err, errcap, ZF_ECORRUPT,
                             "codec entry must be an object or a string");
    const cJSON *n = member(entry, "name");
    if (!cJSON_IsString(n) || !n->valuestring)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT, "codec entry has no string \"name\"");
    *name = n->valuestring;
    const cJSON *c = member(entry, "configuration");
    if (c && !cJSON_IsNull(c) && !cJSON_IsObject(c))
        return zf_codec_errf(err, errcap, ZF_ECORRUPT,
                             "%.64s: \"configuration\" must be an object", *name);
    *cfg = cJSON_IsObject(c) ? c : NULL;
    return ZF_OK;
}

/* Parse a v3 bytes-to-bytes codec entry (see codec.h). */
int zf_codec_from_v3(const cJSON *entry, unsigned elem_size, zf_codec **out, char *err,
                     size_t errcap)
{
    const char *name = NULL;
    const cJSON *cfg = NULL;
    *out = NULL;
    int rc = v3_split(entry, &name, &cfg, err, errcap);
    if (rc)
        return rc;
    const codec_spec *spec = find_spec(v3_specs, sizeof v3_specs / sizeof *v3_specs, name);
    if (!spec)
        return zf_codec_errf(err, errcap, ZF_ENOTFOUND,
                             "unknown bytes-to-bytes codec \"%.64s\"", name);
    return make_codec(spec, cfg, elem_size, out, err, errcap);
}

/* Parse a v2 "compressor" object (see codec.h). */
int zf_codec_from_v2(const cJSON *compressor, zf_codec **out, char *err, size_t errcap)
{
    *out = NULL;
    if (!compressor || cJSON_IsNull(compressor))
        return zf_codec_errf(err, errcap, ZF_EINVAL, "compressor is null");
    if (!cJSON_IsObject(compressor))
        return zf_codec_errf(err, errcap, ZF_ECORRUPT, "compressor must be an object");
    const cJSON *id = member(compressor, "id");
    if (!cJSON_IsString(id) || !id->valuestring)
        return zf_codec_errf(err, errcap, ZF_ECORRUPT, "compressor has no string \"id\"");
    const codec_spec *spec =
        find_spec(v2_specs, sizeof v2_specs / sizeof *v2_specs, id->valuestring);
    if (!spec)
        return zf_codec_errf(err, errcap, ZF_ENOTFOUND, "unknown bytes-to-bytes codec \"%.64s\"",
                             id->valuestring);
    return make_codec(spec, compressor, 4, out, err, errcap);
}

/* Free a codec; NULL is allowed. */
void zf_codec_free(zf_codec *c)
{
    free(c);
}

/* Name of the codec as written in metadata. */
const char *zf_codec_name(const zf_codec *c)
{
    return c->name;
}

/* Decode n bytes at in into out (capacity cap); see codec.h. */
int zf_codec_decode(const zf_codec *c, const uint8_t *in, size_t n, uint8_t *out,
                    size_t cap, size_t *outn, char *err, size_t errcap)
{
    if (outn)
        *outn = 0;
    if (!c || !outn || (!in && n) || (!out && cap))
        return zf_codec_errf(err, errcap, ZF_EINVAL, "codec: bad arguments");
    decoder_input += n;
    return c->decode(&c->par, in, n, out, cap, outn, err, errcap);
}

/* The largest encoding of `decoded` bytes under c (saturating); see codec.h. */
size_t zf_codec_max_encoded(const zf_codec *c, size_t decoded)
{
    size_t extra = (c->grow.per ? decoded / c->grow.per : 0) + c->grow.add;
    return decoded > SIZE_MAX - extra ? SIZE_MAX : decoded + extra;
}

