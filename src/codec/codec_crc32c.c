/* codec_crc32c.c - CRC32C (Castagnoli): a slicing-by-8 table implementation,
 * and SSE4.2 crc32 instructions when the CPU has them (checked at run time).
 * The "crc32c" codec itself is in codec_checksum32.c. */
#include <pthread.h>
#include <string.h>

#include "codec/codec.h"
#include "codec_impl.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ZF_CRC_SSE42 1
#include <nmmintrin.h>
#endif

#define CRC32C_POLY 0x82F63B78u /* reflected Castagnoli polynomial */

static uint32_t table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;
static uint32_t (*crc_impl)(uint32_t, const uint8_t *, size_t);

static uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void table_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        table[0][i] = c;
    }
    for (int t = 1; t < 8; t++)
        for (int i = 0; i < 256; i++)
            table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
}

/* Slicing-by-8 over the pre-inverted register c. */
static uint32_t crc_slice8(uint32_t c, const uint8_t *p, size_t n)
{
    for (; n >= 8; p += 8, n -= 8) {
        uint32_t lo = load_le32(p) ^ c, hi = load_le32(p + 4);
        c = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
            table[4][lo >> 24] ^ table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
            table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
    }
    for (; n; p++, n--)
        c = table[0][(c ^ *p) & 0xff] ^ (c >> 8);
    return c;
}

#ifdef ZF_CRC_SSE42
__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t c, const uint8_t *p,
                                                             size_t n)
{
    uint64_t c64 = c;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t v;
        memcpy(&v, p, sizeof v); /* x86 is little-endian */
        c64 = _mm_crc32_u64(c64, v);
    }
    c = (uint32_t)c64;
    for (; n; p++, n--)
        c = _mm_crc32_u8(c, *p);
    return c;
}
#endif

static void crc_init(void)
{
    table_init();
    crc_impl = crc_slice8;
#ifdef ZF_CRC_SSE42
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2"))
        crc_impl = crc_sse42;
#endif
}

/* Portable CRC32C (same contract as zf_crc32c). */
uint32_t zf_crc32c_sw(uint32_t crc, const void *buf, size_t n)
{
    pthread_once(&crc_once, crc_init);
    return ~crc_slice8(~crc, buf, n);
}

/* CRC32C of n bytes continuing from crc (see codec.h). */
uint32_t zf_crc32c(uint32_t crc, const void *buf, size_t n)
{
    pthread_once(&crc_once, crc_init);
    return ~crc_impl(~crc, buf, n);
}
