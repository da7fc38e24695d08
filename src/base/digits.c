/* digits.c - the digit tables and the out-of-line digit writers. */
#include "base/digits.h"

const char zf_dig2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

const uint64_t zf_p10[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
    100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
    10000000000000ull, 100000000000000ull, 1000000000000000ull,
    10000000000000000ull, 100000000000000000ull, 1000000000000000000ull, ZF_P19,
};

/* The digits of x >= 2^64 at p (19 digits at a time); returns the end. */
char *zf_put_u128_big(char *p, zf_u128 x)
{
    zf_u128 hi = x / ZF_P19;
    p = zf_put_u128(p, hi);
    zf_put_fixed(p, (uint64_t)(x - hi * ZF_P19), 19);
    return p + 19;
}

size_t zf_u64_text(uint64_t v, char *out)
{
    return (size_t)(zf_put_u64(out, v) - out);
}
