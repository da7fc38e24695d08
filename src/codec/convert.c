/* convert.c - numpy data types for the numcodecs filters: dtype strings,
 * promotion, byte swaps, and astype conversions between the ten element
 * types (int8..int64, uint8..uint64, float32, float64).
 *
 * Conversions are numpy's "unsafe" casts as x86-64 numpy computes them:
 * integers wrap, integers to floats round to nearest, floats to integers
 * truncate toward zero.  A NaN or out-of-range float has no defined integer
 * in C; numpy gives what the x86 conversion instructions give, which is what
 * the f2i_* functions below compute without undefined behaviour: to int64 /
 * int32 the "integer indefinite" (INT64_MIN / INT32_MIN; NaN to int64 is
 * NaT), to 8- and 16-bit integers the low bits of the int32 conversion, to
 * uint32 / uint64 the result of numpy's vector loop (two signed conversions,
 * around 2^31 / 2^63).  numpy's scalar tail loop differs from its vector loop
 * for out-of-range floats to uint32 (numpy warns "invalid value encountered
 * in cast"); zarrfs gives the vector loop's value for every element. */
#include <stdio.h>
#include <string.h>

#include "filter_impl.h"
#include "base/err.h"

/* ---- floats to integers, as x86-64 numpy ------------------------------------ */

/* cvttsd2si, 32-bit: in range truncates, else 0x80000000 */
static uint32_t cvt32(double x)
{
    return x > -2147483649.0 && x < 2147483648.0 ? (uint32_t)(int32_t)x : UINT32_C(0x80000000);
}

/* cvttsd2si, 64-bit: in range truncates, else 2^63 */
static uint64_t cvt64(double x)
{
    return x >= -9223372036854775808.0 && x < 9223372036854775808.0 ? (uint64_t)(int64_t)x
                                                                     : UINT64_C(1) << 63;
}

static uint32_t f2u32(double x)
{
    return x >= 2147483648.0 ? cvt32(x - 2147483648.0) ^ UINT32_C(0x80000000) : cvt32(x);
}

static uint64_t f2u64(double x)
{
    return x >= 9223372036854775808.0 ? cvt64(x - 9223372036854775808.0) ^ (UINT64_C(1) << 63)
                                      : cvt64(x);
}

/* ---- scalar casts per target type: from a signed, unsigned or float value -- */
/* (narrowing to a signed type wraps: GCC and Clang define it so) */

#define INT_TARGET(D, DT, F2I)                                                  \
    static inline DT D##_from_s(int64_t v) { return (DT)(uint64_t)v; }         \
    static inline DT D##_from_u(uint64_t v) { return (DT)v; }                  \
    static inline DT D##_from_f(double x) { return (DT)(F2I(x)); }
#define FLOAT_TARGET(D, DT)                                                     \
    static inline DT D##_from_s(int64_t v) { return (DT)v; }                   \
    static inline DT D##_from_u(uint64_t v) { return (DT)v; }                  \
    static inline DT D##_from_f(double x) { return (DT)x; }

INT_TARGET(i1, int8_t, cvt32)
INT_TARGET(i2, int16_t, cvt32)
INT_TARGET(i4, int32_t, cvt32)
INT_TARGET(i8, int64_t, cvt64)
INT_TARGET(u1, uint8_t, cvt32)
INT_TARGET(u2, uint16_t, cvt32)
INT_TARGET(u4, uint32_t, f2u32)
INT_TARGET(u8, uint64_t, f2u64)
FLOAT_TARGET(f4, float)
FLOAT_TARGET(f8, double)

/* ---- one loop per (source, target) pair ---------------------------------------- */

/* X(name, C type, class: s signed / u unsigned / f float) */
#define SOURCES(X, D, DT)                                                       \
    X(i1, int8_t, s, D, DT) X(i2, int16_t, s, D, DT) X(i4, int32_t, s, D, DT)  \
    X(i8, int64_t, s, D, DT) X(u1, uint8_t, u, D, DT) X(u2, uint16_t, u, D, DT) \
    X(u4, uint32_t, u, D, DT) X(u8, uint64_t, u, D, DT) X(f4, float, f, D, DT) \
    X(f8, double, f, D, DT)
#define TARGETS(Y)                                                              \
    Y(i1, int8_t) Y(i2, int16_t) Y(i4, int32_t) Y(i8, int64_t) Y(u1, uint8_t)  \
    Y(u2, uint16_t) Y(u4, uint32_t) Y(u8, uint64_t) Y(f4, float) Y(f8, double)

#define CONV_FN(S, ST, C, D, DT)                                                          \
    static void cv_##S##_##D(const void *restrict src, void *restrict dst, uint64_t n)    \
    {                                                                                     \
        const ST *s = src;                                                                \
        DT *d = dst;                                                                      \
        for (uint64_t i = 0; i < n; i++)                                                  \
            d[i] = D##_from_##C(s[i]);                                                    \
    }
#define CONV_FNS(D, DT) SOURCES(CONV_FN, D, DT)
TARGETS(CONV_FNS)

typedef void (*conv_fn)(const void *restrict, void *restrict, uint64_t);

#define CONV_ENTRY(S, ST, C, D, DT) cv_##S##_##D,
#define CONV_ROW(D, DT) {SOURCES(CONV_ENTRY, D, DT)},
/* conv_table[target][source], indexed by type_index */
static const conv_fn conv_table[10][10] = {TARGETS(CONV_ROW)};

/* 0..3 int8..int64, 4..7 uint8..uint64, 8 float32, 9 float64 */
static unsigned type_index(zf_elem e)
{
    unsigned lg = e.size == 1 ? 0 : e.size == 2 ? 1 : e.size == 4 ? 2 : 3;
    if (e.kind == ZF_ELEM_FLOAT)
        return e.size == 4 ? 8 : 9;
    return (e.kind == ZF_ELEM_UINT ? 4 : 0) + lg;
}

/* numpy astype of n elements (see filter_impl.h). */
void zf_elem_convert(const void *src, zf_elem from, void *dst, zf_elem to, uint64_t n)
{
    if (zf_elem_same_bits(from, to)) { /* wrapping integers: the same bits */
        if (n)
            memcpy(dst, src, (size_t)n * to.size);
        return;
    }
    conv_table[type_index(to)][type_index(from)](src, dst, n);
}

/* ---- types ----------------------------------------------------------------- */

const char *zf_elem_name(zf_elem e)
{
    static const char *const names[10] = {"int8", "int16", "int32", "int64", "uint8",
                                           "uint16", "uint32", "uint64", "float32", "float64"};
    return names[type_index(e)];
}

int zf_elem_same_bits(zf_elem a, zf_elem b)
{
    return a.size == b.size &&
           (a.kind == b.kind || (a.kind != ZF_ELEM_FLOAT && b.kind != ZF_ELEM_FLOAT));
}

/* numpy.promote_types for the ten types. */
zf_elem zf_elem_promote(zf_elem a, zf_elem b)
{
    const zf_elem f8 = {ZF_ELEM_FLOAT, 8};
    if (a.kind == ZF_ELEM_FLOAT && b.kind == ZF_ELEM_FLOAT)
        return a.size > b.size ? a : b;
    if (a.kind == ZF_ELEM_FLOAT || b.kind == ZF_ELEM_FLOAT) {
        zf_elem f = a.kind == ZF_ELEM_FLOAT ? a : b, i = a.kind == ZF_ELEM_FLOAT ? b : a;
        return f.size == 4 && i.size <= 2 ? f : f8;
    }
    if (a.kind == b.kind)
        return a.size > b.size ? a : b;
    zf_elem s = a.kind == ZF_ELEM_INT ? a : b, u = a.kind == ZF_ELEM_INT ? b : a;
    if (s.size > u.size)
        return s;
    return u.size < 8 ? (zf_elem){ZF_ELEM_INT, 2 * u.size} : f8;
}

/* Reverse the byte order of n elements of size bytes. */
void zf_elem_swap(void *v, uint64_t n, unsigned size)
{
    if (size == 8) {
        uint64_t *w = v;
        for (uint64_t i = 0; i < n; i++)
            w[i] = __builtin_bswap64(w[i]);
    } else if (size == 4) {
        uint32_t *w = v;
        for (uint64_t i = 0; i < n; i++)
            w[i] = __builtin_bswap32(w[i]);
    } else if (size == 2) {
        uint16_t *w = v;
        for (uint64_t i = 0; i < n; i++)
            w[i] = __builtin_bswap16(w[i]);
    }
}

/* ---- dtype strings ------------------------------------------------------------- */

/* "int64", "uint8", "float32"...: the numpy names str(dtype) gives. */
static int parse_name(const char *s, zf_elem *e)
{
    for (unsigned k = 0; k < 10; k++) {
        zf_elem c = {k < 4 ? ZF_ELEM_INT : k < 8 ? ZF_ELEM_UINT : ZF_ELEM_FLOAT,
                     k < 8 ? 1u << (k % 4) : k == 8 ? 4 : 8};
        if (strcmp(s, zf_elem_name(c)) == 0) {
            *e = c;
            return 1;
        }
    }
    return 0;
}

/* "<i8", ">f4", "|u1", "=i2", "i4": an optional byte order, kind, size. */
static int parse_typestr(const char *s, zf_dtype *out)
{
    out->big = ZF_HOST_BIG;
    if (*s == '<' || *s == '>' || *s == '|' || *s == '=') {
        if (*s == '<' || *s == '>')
            out->big = *s == '>';
        s++;
    }
    if (!s[0] || !s[1] || s[2])
        return 0;
    unsigned size = (unsigned)(s[1] - '0');
    if (size != 1 && size != 2 && size != 4 && size != 8)
        return 0;
    if (s[0] == 'i' || s[0] == 'u') {
        out->elem = (zf_elem){s[0] == 'i' ? ZF_ELEM_INT : ZF_ELEM_UINT, size};
        return 1;
    }
    if (s[0] == 'f' && size >= 4) {
        out->elem = (zf_elem){ZF_ELEM_FLOAT, size};
        return 1;
    }
    return 0;
}

/* Parse a numpy dtype string (see filter_impl.h). */
int zf_dtype_parse(const cJSON *v, const char *what, zf_dtype *out, char *err, size_t errcap)
{
    if (!cJSON_IsString(v) || !v->valuestring) {
        snprintf(err, errcap, "%s must be a dtype string", what);
        return ZF_ECORRUPT;
    }
    const char *s = v->valuestring;
    out->big = ZF_HOST_BIG;
    if (parse_name(s, &out->elem) || parse_typestr(s, out))
        return ZF_OK;
    snprintf(err, errcap,
             "%s \"%.40s\" is not supported (integers of 1, 2, 4 or 8 bytes, floats of 4 or 8)",
             what, s);
    return ZF_EUNSUPPORTED;
}
