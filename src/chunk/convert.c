/* convert.c - CF-encoded durations (and time stamps: epoch.h) to int64 ticks,
 * element by element.
 *
 * Each step copies what numpy does inside xarray, in the same types:
 *   mask    CFMaskCoder._apply_mask: integers compared as int64 (uint64 wraps),
 *           floats and packed data as float64 (np.float64 mask values);
 *   pack    _scale_offset_decoding: astype(float64), *= scale, += offset (two
 *           roundings, never fused: built with -ffp-contract=off), or int64;
 *   decode  decode_cf_timedelta / _numbers_to_timedelta: D, h, m scaled to
 *           seconds (int64 exactly; float64; uint64 through float64); floats
 *           multiplied by 1000 in their own precision until whole or at ns,
 *           then truncated (astype(int64)); then exactly to cf->unit.
 * Where numpy would overflow (xarray raises OutOfBoundsTimedelta, or
 * silently wraps), the element is an error instead.  Chunks of int64 or
 * float64 counts, neither packed nor with more than two mask values, take the
 * fast loops of convert_fast.c (the same arithmetic, vectorised); these
 * element rules do every other chunk, and the rest the loops leave when a
 * value is beyond int64 ticks (to name the element). */
#include "chunk/convert.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/half.h"
#include "chunk/convert_impl.h"
#include "chunk/epoch.h"

/* what one element's decoding needs, worked out once per chunk */
typedef struct rule {
    const zf_cf *cf;
    int coarse;       /* the source unit is D, h or m */
    int64_t factor;   /* seconds per source unit when coarse */
    int level;        /* resolution after that: 0 s, 1 ms, 2 us, 3 ns */
    int ulevel;       /* resolution of cf->unit, the same scale */
    int steps;        /* floats: times every value of the chunk is multiplied by 1000 */
} rule;

static const int64_t pow1000[4] = {1, 1000, 1000000, 1000000000};

/* the level of a unit of s..ns (coarser units count as s) */
static int unit_level(zf_unit u)
{
    return u <= ZF_UNIT_s ? 0 : u == ZF_UNIT_ms ? 1 : u == ZF_UNIT_us ? 2 : 3;
}

static rule make_rule(const zf_cf *cf)
{
    rule r = {cf, 0, 1, unit_level(cf->src), unit_level(cf->unit), 0};
    if (cf->src < ZF_UNIT_s) {
        r.coarse = 1;
        r.factor = zf_units[cf->src].secs;
    }
    return r;
}

/* one stored element in every form the steps read it as */
typedef struct ev {
    int64_t i;  /* as int64 (numpy astype: uint64 wraps) */
    uint64_t u; /* as uint64 */
    double d;   /* as float64 */
    float f;    /* as float32 (float32 data only) */
    int is_float;
} ev;

/* uint64 -> int64 as numpy casts it (two's complement wrap), without UB */
static inline int64_t wrap_i64(uint64_t u)
{
    return u <= INT64_MAX ? (int64_t)u : -(int64_t)(UINT64_MAX - u) - 1;
}

/* ticks of an int64 count of source units; INT64_MIN is NaT. -1: overflow */
static inline int from_int(const rule *r, int64_t v, int64_t *t)
{
    if (v == INT64_MIN) {
        *t = ZF_NAT;
        return 0;
    }
    if (r->coarse && __builtin_mul_overflow(v, r->factor, &v))
        return -1;
    return __builtin_mul_overflow(v, pow1000[r->ulevel - r->level], t) ? -1 : 0;
}

/* ticks of a uint64 count (not masked, not packed: numpy keeps uint64) */
static inline int from_u64(const rule *r, uint64_t u, int64_t *t)
{
    if (u > INT64_MAX)
        return -1;
    int64_t v = (int64_t)u;
    if (r->coarse) {
        if (v > INT64_MAX / r->factor) /* pandas' range check, exact */
            return -1;
        double y = (double)u * (double)r->factor; /* uint64 * int64 is float64 */
        if (y >= 0x1p63)
            return -1;
        v = (int64_t)y;
    }
    return __builtin_mul_overflow(v, pow1000[r->ulevel - r->level], t) ? -1 : 0;
}

/* a float count about to be scaled: in float64, or (float32 and float16
 * data in s..ns) in their own precision; kind 0 for NaN (NaT), -1 for an
 * infinity */
typedef struct fnum {
    int kind; /* 1 float64, 2 float32, 3 float16 (held in f) */
    double d;
    float f;
} fnum;

/* a float-path element as float64 after unpacking */
static inline double unpacked(const zf_cf *cf, const ev *e)
{
    double d = e->d;
    if (cf->pack == ZF_CF_PACK_F64) { /* astype(float64); *= scale; += offset */
        if (cf->has_scale)
            d *= cf->scale;
        if (cf->has_offset)
            d += cf->offset;
    }
    return d;
}

/* the float count of a float-path element, after D/h/m are made seconds
 * (float32 * np.int64 is float64) */
static inline fnum float_count(const rule *r, const ev *e)
{
    const zf_cf *cf = r->cf;
    if (cf->pack == ZF_CF_PACK_NONE && (cf->path == ZF_CF_PATH_F32 || cf->path == ZF_CF_PATH_F16) &&
        !r->coarse)
        return (fnum){isnan(e->f) ? 0 : isinf(e->f) ? -1 : cf->path == ZF_CF_PATH_F16 ? 3 : 2, 0.0,
                      e->f};
    double d = unpacked(cf, e);
    if (isnan(d) || isinf(d))
        return (fnum){isnan(d) ? 0 : -1, 0.0, 0.0f};
    if (r->coarse)
        d *= (double)r->factor;
    return (fnum){1, d, 0.0f};
}

/* how many times x1000 make this count whole (_check_higher_resolution), at most max */
static inline int steps_needed(fnum v, int max)
{
    int k = 0;
    if (v.kind == 3)
        for (; k < max && v.f != truncf(v.f); k++)
            v.f = zf_half_round(v.f * 1000.0f);
    else if (v.kind == 2)
        for (; k < max && v.f != truncf(v.f); k++)
            v.f *= 1000.0f;
    else if (v.kind == 1)
        for (; k < max && v.d != trunc(v.d); k++)
            v.d *= 1000.0;
    return k;
}

/* scale a float count by 1000 r->steps times in its own precision, truncate
 * (astype(int64)) and make it ticks; -1 beyond int64 ticks, -2 where the
 * truncation itself overflows int64 (numpy's cast then gives NaT) */
static inline int from_float(const rule *r, fnum v, int64_t *t)
{
    if (v.kind <= 0) {
        *t = ZF_NAT;
        return v.kind; /* NaN: NaT; an infinity: beyond range */
    }
    double y;
    if (v.kind == 3) {
        for (int k = 0; k < r->steps; k++)
            v.f = zf_half_round(v.f * 1000.0f);
        y = truncf(v.f);
    } else if (v.kind == 2) {
        for (int k = 0; k < r->steps; k++)
            v.f *= 1000.0f;
        y = truncf(v.f);
    } else {
        for (int k = 0; k < r->steps; k++)
            v.d *= 1000.0;
        y = trunc(v.d);
    }
    if (!(y >= -0x1p63 && y < 0x1p63))
        return -2;
    int64_t n = (int64_t)y;
    if (n == INT64_MIN) { /* -2^63 itself: numpy's NaT */
        *t = ZF_NAT;
        return 0;
    }
    return __builtin_mul_overflow(n, pow1000[r->ulevel - r->level - r->steps], t) ? -1 : 0;
}

/* is the element one of the mask values? */
static inline int masked(const zf_cf *cf, const ev *e)
{
    if (!cf->nmask_i && !cf->nmask_f)
        return 0;
    if (cf->mask_int)
        for (unsigned k = 0; k < cf->nmask_i; k++)
            if (e->i == cf->mask_i[k])
                return 1;
    double xd = cf->mask_int ? (double)e->i : e->d;
    for (unsigned k = 0; k < cf->nmask_f; k++)
        if (xd == cf->mask_f[k])
            return 1;
    return 0;
}

/* int64 packing: astype(int64) then *= scale_factor (NaN: NaT) */
static inline int from_i64_pack(const rule *r, const ev *e, int64_t *t)
{
    int64_t v = e->i;
    if (e->is_float) {
        if (isnan(e->d)) {
            *t = ZF_NAT;
            return 0;
        }
        double y = trunc(e->d);
        if (!(y >= -0x1p63 && y < 0x1p63))
            return -1;
        v = (int64_t)y;
    }
    if (__builtin_mul_overflow(v, r->cf->iscale, &v))
        return -1;
    return from_int(r, v, t);
}

/* does the element decode through floats (scaled by 1000 chunk-wide)? */
static inline int float_path(const zf_cf *cf)
{
    return cf->pack == ZF_CF_PACK_F64 ||
           (cf->pack == ZF_CF_PACK_NONE && (cf->path == ZF_CF_PATH_F16 || cf->path == ZF_CF_PATH_F32 ||
                                            cf->path == ZF_CF_PATH_F64));
}

/* the ticks of a time stamp xarray decodes with cftime: the count made
 * float64 (astype(float)) after unpacking; 1 outside the ns range (epoch.h) */
static inline int cftime_count(const zf_cf *cf, const ev *e, int64_t *t)
{
    if (cf->pack == ZF_CF_PACK_I64) { /* astype(int64) * scale_factor, then as an integer */
        int64_t v = e->i;
        if (e->is_float) {
            double y = trunc(e->d);
            if (isnan(e->d)) {
                *t = ZF_NAT;
                return 0;
            }
            if (!(y >= -0x1p63 && y < 0x1p63))
                return -1;
            v = (int64_t)y;
        }
        if (__builtin_mul_overflow(v, cf->iscale, &v))
            return -1;
        return zf_epoch_cftime(cf, 1, v, 0.0, t);
    }
    if (float_path(cf))
        return zf_epoch_cftime(cf, 0, 0, unpacked(cf, e), t);
    if (cf->path == ZF_CF_PATH_U64)
        return e->u <= INT64_MAX ? zf_epoch_cftime(cf, 1, (int64_t)e->u, 0.0, t)
                                 : zf_epoch_cftime(cf, 0, 0, (double)e->u, t);
    return zf_epoch_cftime(cf, 1, e->i, 0.0, t);
}

/* the ticks of one element: mask, pack, decode */
static inline int convert(const rule *r, ev e, int64_t *t)
{
    const zf_cf *cf = r->cf;
    if (masked(cf, &e)) {
        *t = ZF_NAT;
        return 0;
    }
    if (cf->how == ZF_CF_SINCE && cf->decoding != ZF_CF_DEC_PANDAS)
        return cftime_count(cf, &e, t);
    if (cf->pack == ZF_CF_PACK_I64)
        return from_i64_pack(r, &e, t);
    if (float_path(cf)) /* time stamps: in one multiplication (epoch.h) */
        return cf->how == ZF_CF_SINCE ? zf_epoch_count(cf, unpacked(cf, &e), t)
                                      : from_float(r, float_count(r, &e), t);
    return cf->path == ZF_CF_PATH_U64 ? from_u64(r, e.u, t) : from_int(r, e.i, t);
}

#define EV_SIGNED(x) ((ev){(int64_t)(x), (uint64_t)(int64_t)(x), (double)(x), 0.0f, 0})
#define EV_UNSIGNED(x) ((ev){wrap_i64(x), (uint64_t)(x), (double)(x), 0.0f, 0})
#define EV_F16(x) ((ev){0, 0, (double)zf_half_to_float(x), zf_half_to_float(x), 1})
#define EV_F32(x) ((ev){0, 0, (double)(x), (x), 1})
#define EV_F64(x) ((ev){0, 0, (x), 0.0f, 1})

/* One pair of loops per stored type.  STEPS: the most x1000 steps any
 * element of the chunk needs (xarray decodes a chunk at one resolution: the
 * finest its values need).  CONVERT: from the last element down, so that an
 * element of s bytes at s*k is read before tick k (8 bytes at 8*k) is
 * written and no write reaches an element not yet read; *bad: the failing
 * element. */
#define CONVERT_LOOPS(NAME, T, MAKE)                                                 \
    static int NAME##_steps(const rule *r, const uint8_t *buf, uint64_t n)           \
    {                                                                                \
        int most = 0, max = 3 - r->level;                                            \
        for (uint64_t k = 0; k < n && most < max; k++) {                             \
            T x;                                                                     \
            memcpy(&x, buf + k * sizeof x, sizeof x);                                \
            ev e = MAKE(x);                                                          \
            if (!masked(r->cf, &e)) {                                                \
                int s = steps_needed(float_count(r, &e), max);                       \
                most = s > most ? s : most;                                          \
            }                                                                        \
        }                                                                            \
        return most;                                                                 \
    }                                                                                \
    static int NAME(const rule *r, uint8_t *buf, uint64_t n, uint64_t *bad)          \
    {                                                                                \
        for (uint64_t k = n; k-- > 0;) {                                             \
            T x;                                                                     \
            int64_t t;                                                               \
            memcpy(&x, buf + k * sizeof x, sizeof x);                                \
            if (convert(r, MAKE(x), &t)) {                                           \
                *bad = k;                                                            \
                return ZF_ECORRUPT;                                                  \
            }                                                                        \
            memcpy(buf + k * sizeof t, &t, sizeof t);                                \
        }                                                                            \
        return ZF_OK;                                                                \
    }

CONVERT_LOOPS(loop_i8, int8_t, EV_SIGNED)
CONVERT_LOOPS(loop_i16, int16_t, EV_SIGNED)
CONVERT_LOOPS(loop_i32, int32_t, EV_SIGNED)
CONVERT_LOOPS(loop_i64, int64_t, EV_SIGNED)
CONVERT_LOOPS(loop_u8, uint8_t, EV_UNSIGNED)
CONVERT_LOOPS(loop_u16, uint16_t, EV_UNSIGNED)
CONVERT_LOOPS(loop_u32, uint32_t, EV_UNSIGNED)
CONVERT_LOOPS(loop_u64, uint64_t, EV_UNSIGNED)
CONVERT_LOOPS(loop_f16, uint16_t, EV_F16)
CONVERT_LOOPS(loop_f32, float, EV_F32)
CONVERT_LOOPS(loop_f64, double, EV_F64)

typedef int (*loop_fn)(const rule *, uint8_t *, uint64_t, uint64_t *);
typedef int (*steps_fn)(const rule *, const uint8_t *, uint64_t);

/* the loops for a stored element type */
static void pick_loops(zf_elem e, loop_fn *loop, steps_fn *steps)
{
    static const loop_fn loops[3][4] = {
        {loop_i8, loop_i16, loop_i32, loop_i64},
        {loop_u8, loop_u16, loop_u32, loop_u64},
        {NULL, loop_f16, loop_f32, loop_f64}};
    static const steps_fn stepss[3][4] = {
        {loop_i8_steps, loop_i16_steps, loop_i32_steps, loop_i64_steps},
        {loop_u8_steps, loop_u16_steps, loop_u32_steps, loop_u64_steps},
        {NULL, loop_f16_steps, loop_f32_steps, loop_f64_steps}};
    unsigned w = e.size == 1 ? 0 : e.size == 2 ? 1 : e.size == 4 ? 2 : 3;
    unsigned k = e.kind == ZF_ELEM_INT ? 0 : e.kind == ZF_ELEM_UINT ? 1 : 2;
    *loop = loops[k][w];
    *steps = stepss[k][w];
}

/* set the elements outside the box valid[] of a chunk of the given shape
 * to zero: edge chunks' padding is never shown and must not count (xarray's
 * blocks end at the array's edge) */
static void zero_padding(uint8_t *buf, unsigned esize, unsigned ndim, const uint64_t *shape,
                         const uint64_t *valid)
{
    uint64_t row = ndim ? shape[ndim - 1] : 1, rows = 1, idx[ZF_MAX_DIMS] = {0};
    for (unsigned d = 0; d + 1 < ndim; d++)
        rows *= shape[d];
    for (uint64_t r = 0; r < rows; r++) {
        int inside = 1;
        for (unsigned d = 0; d + 1 < ndim; d++)
            inside &= idx[d] < valid[d];
        uint64_t keep = !inside ? 0 : ndim ? valid[ndim - 1] : 1;
        if (keep < row)
            memset(buf + (r * row + keep) * esize, 0, (size_t)(row - keep) * esize);
        for (unsigned d = ndim - 1; d-- > 0;) {
            if (++idx[d] < shape[d])
                break;
            idx[d] = 0;
        }
    }
}

/* does valid[] leave out any element of the chunk? */
static int has_padding(unsigned ndim, const uint64_t *shape, const uint64_t *valid)
{
    for (unsigned d = 0; valid && d < ndim; d++)
        if (valid[d] < shape[d])
            return 1;
    return 0;
}

/* the stored element at p in every form the steps read it as */
static ev elem_at(zf_elem e, const uint8_t *p)
{
    union { int8_t i1; int16_t i2; int32_t i4; int64_t i8; uint8_t u1; uint16_t u2;
            uint32_t u4; uint64_t u8; float f4; double f8; } v;
    memcpy(&v, p, e.size);
    if (e.kind == ZF_ELEM_FLOAT)
        return e.size == 2 ? EV_F16(v.u2) : e.size == 4 ? EV_F32(v.f4) : EV_F64(v.f8);
    if (e.kind == ZF_ELEM_INT)
        return EV_SIGNED(e.size == 1 ? v.i1 : e.size == 2 ? v.i2 : e.size == 4 ? v.i4 : v.i8);
    return EV_UNSIGNED(e.size == 1 ? v.u1 : e.size == 2 ? v.u2 : e.size == 4 ? v.u4 : v.u8);
}

/* why element p cannot be converted under rule r, into err: its stored
 * value, and what xarray does with it */
static void overflow_reason(const rule *r, const uint8_t *p, const char *at, char *err,
                            size_t errcap)
{
    const zf_cf *cf = r->cf;
    ev e = elem_at(cf->elem, p);
    char v[32];
    if (e.is_float)
        snprintf(v, sizeof v, "%.17g", e.d);
    else if (cf->elem.kind == ZF_ELEM_INT)
        snprintf(v, sizeof v, "%lld", (long long)e.i);
    else
        snprintf(v, sizeof v, "%llu", (unsigned long long)e.u);
    if (cf->how == ZF_CF_SINCE && cf->decoding != ZF_CF_DEC_PANDAS) { /* cftime's count */
        snprintf(err, errcap, "%sstored value %s is beyond int64 %s ticks (xarray cannot "
                 "decode it either)", at, v, zf_unit_name(cf->unit));
        return;
    }
    double d = e.is_float || cf->pack == ZF_CF_PACK_F64 ? unpacked(cf, &e) : 0.0;
    static const char *const level_unit[4] = {"s", "ms", "us", "ns"};
    int half = cf->path == ZF_CF_PATH_F16 && cf->pack == ZF_CF_PACK_NONE && !r->coarse;
    int64_t t;
    /* xarray checks the counts' extremes first and raises beyond int64, but
     * float16 ones compare with int64's bounds made float16 (infinite), and
     * every float16 count fits ns: theirs only overflow in the cast */
    int f16 = cf->path == ZF_CF_PATH_F16 && cf->pack == ZF_CF_PACK_NONE;
    if (f16 || (fabs(d) < 0x1p63 && convert(r, e, &t) == -2))
        snprintf(err, errcap, "%sstored value %s is beyond %s once made %s (x 1000^%d, as the "
                 "chunk's finest value needs): not shown, as xarray's cast to int64 overflows "
                 "there and gives NaT instead of the stored duration", at, v,
                 half ? "float16 (multiplied in float16)" : "int64", level_unit[r->level + r->steps],
                 r->steps);
    else
        snprintf(err, errcap, "%sstored value %s is beyond int64 %s ticks: not shown, as "
                 "xarray raises OutOfBoundsTimedelta for it", at, v, level_unit[r->ulevel]);
}

/* the fast loops' constants (convert_impl.h) for a chunk under rule r, if
 * they apply: int64 or float64 data, neither packed nor uint64, at most two
 * mask values that can match (a NaN mask value matches nothing) */
static int fast_rule(const rule *r, zf_fast *f)
{
    const zf_cf *cf = r->cf;
    *f = (zf_fast){1, {INT64_MIN, INT64_MIN}, {NAN, NAN}, 1.0, 0};
    if (cf->pack != ZF_CF_PACK_NONE || cf->elem.size != 8 || cf->elem.kind == ZF_ELEM_UINT ||
        (cf->how == ZF_CF_SINCE && cf->decoding != ZF_CF_DEC_PANDAS))
        return 0; /* cftime's arithmetic: epoch.c */
    if (cf->elem.kind == ZF_ELEM_INT) {
        if (cf->path != ZF_CF_PATH_INT || cf->nmask_f || cf->nmask_i > 2)
            return 0;
        for (unsigned k = 0; k < cf->nmask_i; k++)
            f->mask_i[k] = cf->mask_i[k];
        f->mult = r->factor * pow1000[r->ulevel - r->level]; /* <= 86400 * 10^9 */
        return 1;
    }
    unsigned used = 0;
    for (unsigned k = 0; k < cf->nmask_f; k++)
        if (!isnan(cf->mask_f[k])) {
            if (used == 2)
                return 0;
            f->mask_f[used++] = cf->mask_f[k];
        }
    if (cf->path != ZF_CF_PATH_F64 || cf->nmask_i || cf->how == ZF_CF_SINCE)
        return 0; /* time stamps: epoch.c's own float step */
    f->factor = (double)r->factor;
    return 1;
}

/* convert the elements at buf with the fast loops (constants f, the float
 * steps go into r->steps too); how many elements are done */
static uint64_t convert_fast(rule *r, zf_fast *f, void *buf, uint64_t n)
{
    if (r->cf->elem.kind == ZF_ELEM_INT)
        return zf_fast_i64(buf, n, f);
    r->steps = f->steps = zf_fast_f64_steps(buf, n, f, 3 - r->level);
    f->mult = pow1000[r->ulevel - r->level - r->steps];
    return zf_fast_f64(buf, n, f);
}

/* convert n elements at buf in place; on failure the reason goes to err,
 * after "element K: " (K counted from first) when first >= 0.  coarser
 * (NULL: never) lets float durations whose ticks would overflow ns be
 * decoded at xarray's unit for the chunk (the dtype attribute's, or the
 * finest its values need) instead: *coarser is how many factors of 1000
 * coarser than ns that is. */
static int convert_n(const zf_cf *cf, void *buf, uint64_t n, int64_t first, unsigned *coarser,
                     char *err, size_t errcap)
{
    rule r = make_rule(cf);
    loop_fn loop;
    steps_fn steps;
    pick_loops(cf->elem, &loop, &steps);
    zf_fast f;
    size_t bytes = (size_t)n * cf->elem.size;
    uint8_t *copy = NULL; /* the stored elements, for a second try at a coarser unit */
    if (coarser && zf_convert_may_coarsen(cf) && !(copy = malloc(bytes ? bytes : 1)))
        return snprintf(err, errcap, "out of memory"), ZF_ENOMEM;
    if (copy)
        memcpy(copy, buf, bytes);
    int fast = fast_rule(&r, &f);
    uint64_t done = fast ? convert_fast(&r, &f, buf, n) : 0, bad = 0;
    if (!fast && float_path(cf) && cf->how != ZF_CF_SINCE)
        r.steps = steps(&r, buf, n);
    int rc = ZF_OK;
    if (done < n) { /* not a fast case, or the block the fast loops left (an error) */
        rc = loop(&r, (uint8_t *)buf + done * cf->elem.size, n - done, &bad);
        bad += done;
    }
    int level = r.level + r.steps > unit_level(cf->target) ? r.level + r.steps
                                                           : unit_level(cf->target);
    if (rc && copy && level < 3) { /* xarray's unit for the chunk, coarser than ns */
        memcpy(buf, copy, bytes);
        r.ulevel = level;
        if ((rc = loop(&r, buf, n, &bad)) == ZF_OK)
            *coarser = (unsigned)(3 - level);
    }
    free(copy);
    int added = rc == ZF_OK && cf->how == ZF_CF_SINCE && cf->decoding == ZF_CF_DEC_PANDAS;
    if (added) /* counts since DATE -> time stamps (the reason in err if one is outside) */
        rc = zf_epoch_add(cf, buf, n, first >= 0, err, errcap);
    if (rc && cf->how == ZF_CF_SINCE && cf->may_cftime) { /* xarray: cftime objects then */
        snprintf(err, errcap, "a time stamp outside 1677-09-21..2262-04-11");
        return ZF_ERANGE;
    }
    if (rc && !added) {
        char at[40] = "";
        if (first >= 0)
            snprintf(at, sizeof at, "element %llu: ", (unsigned long long)(bad + (uint64_t)first));
        overflow_reason(&r, (const uint8_t *)buf + bad * cf->elem.size, at, err, errcap);
    }
    return rc;
}

/* convert an edge chunk row by row, the padding left out (cftime's counts
 * are checked one by one: a zero there could be a date outside the ns
 * range); from the last row up, each row's elements moved to where its
 * ticks go, then converted in place; the padding's ticks are zero */
static int convert_rows(const zf_cf *cf, uint8_t *buf, unsigned ndim, const uint64_t *shape,
                        const uint64_t *valid, char *err, size_t errcap)
{
    uint64_t row = ndim ? shape[ndim - 1] : 1, rows = 1, idx[ZF_MAX_DIMS];
    for (unsigned d = 0; d + 1 < ndim; d++)
        rows *= shape[d];
    for (uint64_t r = rows; r-- > 0;) {
        uint64_t rem = r, keep = ndim ? valid[ndim - 1] : 1;
        for (unsigned d = ndim - 1; d-- > 0;) {
            idx[d] = rem % shape[d];
            rem /= shape[d];
            keep = idx[d] < valid[d] ? keep : 0;
        }
        uint8_t *out = buf + r * row * 8;
        memmove(out, buf + r * row * cf->elem.size, (size_t)keep * cf->elem.size);
        memset(out + keep * 8, 0, (size_t)(row - keep) * 8);
        int rc = keep ? convert_n(cf, out, keep, (int64_t)(r * row), NULL, err, errcap) : ZF_OK;
        if (rc)
            return rc;
    }
    return ZF_OK;
}

int zf_convert_may_coarsen(const zf_cf *cf)
{
    return float_path(cf) && cf->how != ZF_CF_SINCE && cf->how != ZF_CF_NATIVE &&
           unit_level(cf->target) < 3;
}

int zf_convert_chunk(const zf_cf *cf, void *buf, unsigned ndim, const uint64_t *shape,
                     const uint64_t *valid, unsigned *coarser, char *err, size_t errcap)
{
    if (coarser)
        *coarser = 0;
    if (cf->how == ZF_CF_NATIVE)
        return ZF_OK;
    uint64_t n = 1;
    for (unsigned d = 0; d < ndim; d++)
        n *= shape[d];
    if (!has_padding(ndim, shape, valid))
        return convert_n(cf, buf, n, 0, coarser, err, errcap);
    if (cf->how == ZF_CF_SINCE && cf->decoding != ZF_CF_DEC_PANDAS)
        return convert_rows(cf, buf, ndim, shape, valid, err, errcap);
    zero_padding(buf, cf->elem.size, ndim, shape, valid);
    return convert_n(cf, buf, n, 0, coarser, err, errcap);
}

int zf_convert_one(const zf_cf *cf, const void *elem, int64_t *out, char *err, size_t errcap)
{
    uint8_t buf[8] = {0};
    if (cf->how == ZF_CF_NATIVE) {
        memcpy(out, elem, 8);
        return ZF_OK;
    }
    memcpy(buf, elem, cf->elem.size);
    int rc = convert_n(cf, buf, 1, -1, NULL, err, errcap);
    if (rc == ZF_OK)
        memcpy(out, buf, 8);
    return rc;
}
