/* test_fp.c - fingerprints (base/fp.h): the same bytes give the same
 * fingerprint; fields are separated; every length and every single bit of a
 * field counts, in both halves (block and tail alike). */
#include <stdint.h>
#include <string.h>

#include "base/fp.h"
#include "check.h"

static zf_fp of(const void *p, size_t n)
{
    zf_fp fp;
    zf_fp_init(&fp);
    zf_fp_add(&fp, p, n);
    return fp;
}

static int same(zf_fp x, zf_fp y)
{
    return x.a == y.a && x.b == y.b;
}

static void test_fields(void)
{
    zf_fp x, y;
    zf_fp_init(&x);
    zf_fp_add(&x, "ab", 2);
    zf_fp_add(&x, "c", 1);
    zf_fp_init(&y);
    zf_fp_add(&y, "a", 1);
    zf_fp_add(&y, "bc", 2);
    CHECK(!same(x, y), "(ab, c) and (a, bc) differ");
    zf_fp_init(&y);
    zf_fp_add(&y, "abc", 3);
    CHECK(!same(x, y), "(ab, c) and (abc) differ");
    CHECK(same(of("abc", 3), of("abc", 3)), "deterministic");
    CHECK(same(of(NULL, 0), of("", 0)), "an empty field may have no pointer (UBSan: no NULL + 0)");
}

static void test_lengths(void)
{
    static const uint8_t zeros[80];
    zf_fp seen[81];
    for (size_t n = 0; n <= 80; n++) { /* zeros of every length: block and tail boundaries */
        seen[n] = of(zeros, n);
        for (size_t m = 0; m < n; m++)
            CHECK(!same(seen[n], seen[m]) && seen[n].a != seen[m].a && seen[n].b != seen[m].b,
                  "%zu and %zu zero bytes", n, m);
    }
}

static void test_bits(void)
{
    uint8_t buf[100];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 37 + 11);
    zf_fp base = of(buf, sizeof buf);
    for (size_t bit = 0; bit < 8 * sizeof buf; bit++) {
        buf[bit / 8] ^= (uint8_t)(1u << bit % 8);
        zf_fp f = of(buf, sizeof buf);
        CHECK(f.a != base.a && f.b != base.b, "bit %zu flipped: both halves change", bit);
        buf[bit / 8] ^= (uint8_t)(1u << bit % 8);
    }
}

int main(void)
{
    test_fields();
    test_lengths();
    test_bits();
    return check_summary("test_fp");
}
