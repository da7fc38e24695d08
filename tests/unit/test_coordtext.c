/* test_coordtext.c - coordinate label text: float repr (against values
 * pandas 3.1.1 wrote), CSV quoting, bytes repr, vlen-utf8 parsing (damaged
 * input is ZF_ECORRUPT), and zf_coordtext_load on hand-made stores. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/sbuf.h"
#include "check.h"
#include "codec/vlen.h"
#include "label/coordtext.h"
#include "store/store.h"
#include "zarr/meta.h"

/* generated with pandas 3.1.1: DataFrame.to_csv of a float64 / float32 column, NaN left out */
static const struct { uint64_t bits; const char *text; } f64_cases[] = {
    {0x3fb999999999999au, "0.1"},
    {0x3ee4f8b588e368f1u, "1e-05"},
    {0x7e41eb2d66005835u, "1.5e+300"},
    {0x4000000000000000u, "2.0"},
    {0x0000000000000000u, "0.0"},
    {0x8000000000000000u, "-0.0"},
    {0x4341c37937e08000u, "1e+16"},
    {0x430c6bf526340000u, "1000000000000000.0"},
    {0x4341c37937e07fffu, "9999999999999998.0"},
    {0x437b69b4ba630f35u, "1.2345678901234568e+17"},
    {0x0000000000000001u, "5e-324"},
    {0x7fefffffffffffffu, "1.7976931348623157e+308"},
    {0x3fd3333333333333u, "0.3"},
    {0x3fd5555555555555u, "0.3333333333333333"},
    {0x4340000000000000u, "9007199254740992.0"},
    {0x4480f0cf064dd592u, "1e+22"},
    {0x44b52d02c7e14af6u, "1e+23"},
    {0x3f1a36e2eb1c432du, "0.0001"},
    {0x3f202e4b6ce5dc68u, "0.00012345"},
    {0x3ee9e3abe16fc70du, "1.2345e-05"},
    {0xc004000000000000u, "-2.5"},
    {0x4059000000000000u, "100.0"},
    {0x40934a456d5cfaadu, "1234.5678"},
    {0x7ff0000000000000u, "inf"},
    {0xfff0000000000000u, "-inf"},
    {0x0010000000000000u, "2.2250738585072014e-308"},
    {0x0000000000000003u, "1.5e-323"},
    {0x0000000000000001u, "5e-324"},
    {0x0010000000000000u, "2.2250738585072014e-308"},
    {0x39b0000000000000u, "7.888609052210118e-31"},
    {0x3eb0000000000000u, "9.5367431640625e-07"},
    {0x3fa0000000000000u, "0.03125"},
    {0x3ff0000000000000u, "1.0"},
    {0x4020000000000000u, "8.0"},
    {0x4330000000000000u, "4503599627370496.0"},
    {0x4340000000000000u, "9007199254740992.0"},
    {0x43b0000000000000u, "1.152921504606847e+18"},
    {0x4630000000000000u, "1.2676506002282294e+30"},
    {0x7e70000000000000u, "1.0715086071862673e+301"},
    {0x7fe0000000000000u, "8.98846567431158e+307"},
    {0x44031168968636acu, "4.39678194249864e+19"},
    {0xbe651b742298892au, "-3.931529974863712e-08"},
    {0xc3cd32020b090f6eu, "-4.20749244471069e+18"},
    {0x40b006d9ceb48cb6u, "4102.850810322145"},
    {0x3b0f374d4b270beau, "3.227661144476608e-24"},
    {0x3cce1563183cbd2fu, "8.34986061259162e-16"},
    {0xc3549349d06b0be6u, "-2.3165779091140504e+16"},
    {0xc4f54a641d87f723u, "-1.608671508374251e+24"},
    {0x3d568e3ab0ad9f70u, "3.205341136067519e-13"},
    {0x428472f5079b1a91u, "2810496217955.321"},
    {0x3ee2ac3bb6cadf90u, "8.903878290097788e-06"},
    {0xc0f1b2bb7a3a6d33u, "-72491.71734087616"},
    {0xc47daabe92f13f02u, "-8.756144174951066e+21"},
    {0x3c2584a245f8e1b1u, "5.832492988603786e-19"},
    {0xc303d7d92cb700beu, "-698169039446039.8"},
    {0x440c7fb87f4caf17u, "6.571400998371635e+19"},
    {0x3c64fde8e60e4fccu, "9.103757245217376e-18"},
    {0xbb10575812bd1312u, "-3.379278400545813e-24"},
    {0x41fc7ec57582c8b9u, "7649122136.174005"},
    {0xbf1696635f0c801fu, "-8.61642981928594e-05"},
    {0xc6251c4873fc5d96u, "-8.362722917305148e+29"},
    {0x41faba4cd2cf971cu, "7174671660.974392"},
    {0x3b92c02c1bc1a5c2u, "9.926523655644462e-22"},
    {0x3f0325edd07b86a8u, "3.652221681506074e-05"},
    {0x45b44067f868e7ebu, "6.267562434981772e+27"},
    {0xbf35721a9f73a958u, "-0.0003272356984341993"},
    {0xba3440796a208d0cu, "-2.5561431688513036e-28"},
    {0x43719fff105502feu, "7.937587909703677e+16"},
    {0xbfd29b197f31fd30u, "-0.2907165281430535"},
    {0xc3c15ef77d8ad717u, "-2.5034197300558024e+18"},
    {0xbee4c153c41286b8u, "-9.896843155057927e-06"},
    {0xc0e97e55fb4d1858u, "-52210.68692641024"},
    {0xbcc49ea90460c3a0u, "-5.723134881646609e-16"},
    {0x3e371f47bf5008dcu, "5.383554037461313e-09"},
    {0xba85e198753c6c9du, "-8.837759454965539e-27"},
    {0x3c2523426e7462a7u, "5.729393851084213e-19"},
    {0x44a4f74b57775545u, "4.950455219134155e+22"},
    {0x40c5b2a496c42807u, "11109.285851020379"},
    {0x3d02178b46f3346du, "8.034448195917298e-15"},
    {0x45a47e7af21593ebu, "3.1713027220380826e+27"},
    {0xbbacbee5dc10f2bbu, "-3.043568831849248e-21"},
    {0xc5a5b43b68662b5du, "-3.3585361996124165e+27"},
    {0x43e9fda1d28a3918u, "1.4982647565521568e+19"},
    {0xb9a2736048843f4fu, "-4.5484457410705685e-31"},
    {0xbe434cec38736d4bu, "-8.987486101199772e-09"},
    {0xc37559e42049c2f1u, "-9.615697344070837e+16"},
    {0xc1f0f329452ded7eu, "-4549940306.8704815"},
    {0xbc3074c457bcb050u, "-8.920881043525864e-19"},
    {0xba72d671e520c815u, "-3.804238251138279e-27"},
    {0x42fc376d67d3fd64u, "496390148800470.25"},
    {0x39e4caa356f180aeu, "8.200822395817317e-30"},
    {0x406e43ab44617a78u, "242.11465662993191"},
    {0x3ecf3491416841deu, "3.7199665812242348e-06"},
    {0xc5d869df1c5dd3fau, "-3.0222524231069416e+28"},
    {0x41618a62539cae5eu, "9196306.612876114"},
    {0x3bf2ae1e5c6fa497u, "6.329081265862857e-20"},
    {0xbcfb69e02ef6eed4u, "-6.087036878556431e-15"},
    {0x42a0c4740e97fb7fu, "9217973373949.748"},
    {0xbc61f77e39126c3bu, "-7.791844322178199e-18"},
    {0xc0c191b8b48d783bu, "-8995.443010028559"},
    {0x670822a04e1c7a41u, "2.100289992909959e+188"},
    {0x75c8a5a1e3c44e83u, "2.3684835644576554e+259"},
    {0x67c7cae150c5238cu, "8.48061491146522e+191"},
    {0x0654256450eff308u, "3.551519309926024e-278"},
    {0x7685d3aa2954cac8u, "8.591254879774566e+262"},
    {0x0be09d8a6b436ce7u, "1.813026936582553e-251"},
    {0x62af019ab0fb0bafu, "2.2854782281268605e+167"},
    {0x6b62807a4fd46da3u, "1.9008267838021874e+209"},
    {0x54275dc1402373eeu, "2.4954982199722214e+97"},
    {0x33abdfcdff41dda5u, "8.673090140550968e-60"},
    {0x099a28c77af1f5a6u, "2.0768723556616318e-262"},
    {0x0ae64f0e8ac9b762u, "3.7144131931645415e-256"},
    {0x5178eba48b044225u, "3.025765016261181e+84"},
    {0x1ef02aa9fab3520fu, "1.1499064470449105e-159"},
    {0x4421d4a139956861u, "1.644581199871088e+20"},
    {0x21f2f653f539e15eu, "3.7963937298431405e-145"},
    {0x14ea96bd9373452au, "6.470118508876356e-208"},
    {0x25ca5ebacd26be66u, "1.2173699786843258e-126"},
    {0x5cc86f530c996e73u, "9.093224029893828e+138"},
    {0x3e4fe996e3405e87u, "1.4860396559164334e-08"},
    {0x324647d4961ec5f9u, "1.652865848454421e-66"},
    {0x3e450eabd30f0290u, "9.80557377124416e-09"},
    {0x46e8f16938f40afeu, "4.047235059455321e+33"},
    {0x42016606686b4c8fu, "9340767501.412382"},
    {0x38f7b127a0768bb8u, "2.851822078047935e-34"},
    {0x7bd34bab13d07a70u, "2.9381480965547613e+288"},
    {0x6038c29975985078u, "3.319793905413196e+155"},
    {0x1d51e02f37f83844u, "1.8946368285561146e-167"},
    {0x28bc3e587ba21704u, "1.8350196689106622e-112"},
    {0x182a948dd1d2a80du, "2.912946296003375e-192"},
    {0x2e9a9228f8421fc1u, "3.419385793848225e-84"},
    {0x03a1e3fc99210c63u, "3.585572053351266e-291"},
    {0x5f4be070f627c020u, "1.1406425674460843e+151"},
    {0x48b0962793f8d5a3u, "1.4448915381527422e+42"},
    {0x361a67b684fa49efu, "4.516780566855931e-48"},
    {0x725c20f30dbe6bc1u, "7.502505424912096e+242"},
    {0x2a145c01d51012f6u, "5.548129290436715e-106"},
    {0x4a0f0be7f6e0d40du, "5.671815329250671e+48"},
    {0x770247e02b4afd54u, "1.842046318865307e+265"},
    {0x47266970f6ef218fu, "5.81845669363777e+34"},
};
static const struct { uint32_t bits; const char *text; } f32_cases[] = {
    {0x3dcccccdu, "0.1"},
    {0x7f7fc99eu, "3.4e+38"},
    {0x00000001u, "1e-45"},
    {0x4b800000u, "1.6777216e+07"},
    {0x00800000u, "1.1754944e-38"},
    {0x38d1b717u, "1e-04"},
    {0x5a0e1bcau, "1e+16"},
    {0x58635fa9u, "1e+15"},
    {0x3e99999au, "0.3"},
    {0x3eaaaaabu, "0.33333334"},
    {0x3727c5acu, "1e-05"},
    {0x00000007u, "1e-44"},
    {0x7f7fffffu, "3.4028235e+38"},
    {0xc0e00000u, "-7.0"},
    {0x00000000u, "0.0"},
    {0x80000000u, "-0.0"},
    {0x7f800000u, "inf"},
    {0x00000001u, "1e-45"},
    {0x00800000u, "1.1754944e-38"},
    {0x35800000u, "9.536743e-07"},
    {0x3f800000u, "1.0"},
    {0x4b000000u, "8.388608e+06"},
    {0x4b800000u, "1.6777216e+07"},
    {0x4e800000u, "1.0737418e+09"},
    {0x7f000000u, "1.7014118e+38"},
    {0xae6c8712u, "-5.3780154e-11"},
    {0xdc6a8f94u, "-2.6409204e+17"},
    {0xba177c76u, "-0.0005778739"},
    {0xca305f56u, "-2.8896855e+06"},
    {0x977ba87cu, "-8.131513e-25"},
    {0x1f5c1f54u, "4.6612726e-20"},
    {0x6c36e46eu, "8.844129e+26"},
    {0x5cb5242eu, "4.07894e+17"},
    {0xbd839556u, "-0.06424968"},
    {0xc12e3716u, "-10.888449"},
    {0xc78dbbceu, "-72567.61"},
    {0x8b82309fu, "-5.0147335e-32"},
    {0x9f425665u, "-4.1152562e-20"},
    {0x6404386cu, "9.756143e+21"},
    {0x305cb2a3u, "8.028939e-10"},
    {0x22b9ed49u, "5.0395586e-18"},
    {0x978ab5e9u, "-8.963962e-25"},
    {0x544d3bbeu, "3.5258824e+12"},
    {0x993b82a0u, "-9.694053e-24"},
    {0xea3b315fu, "-5.657557e+25"},
    {0xa29287f6u, "-3.9717334e-18"},
    {0x17989ab7u, "9.861825e-25"},
    {0x6396ba44u, "5.560867e+21"},
    {0x0f08dd66u, "6.7479575e-30"},
    {0xe241972cu, "-8.927787e+20"},
    {0x246f24abu, "5.1855923e-17"},
    {0x0f150295u, "7.3467645e-30"},
    {0x6073360cu, "7.0100833e+19"},
    {0x926f1e12u, "-7.5452167e-28"},
    {0x12171056u, "4.7667334e-28"},
    {0xc5c2f338u, "-6238.4023"},
    {0xb1a351dbu, "-4.7532303e-09"},
    {0xc53edb90u, "-3053.7227"},
    {0x37885c47u, "1.6255433e-05"},
    {0x8c754245u, "-1.8894056e-31"},
    {0x2e628936u, "5.150832e-11"},
    {0xdb94e371u, "-8.381674e+16"},
    {0x10a79ee3u, "6.611469e-29"},
    {0x6805de97u, "2.5287232e+24"},
    {0xae3d4432u, "-4.3034194e-11"},
    {0x9ab8fbd7u, "-7.6507486e-23"},
    {0x24b0ff72u, "7.6760574e-17"},
    {0x63e5af3cu, "8.473863e+21"},
    {0x98a7a7ffu, "-4.333812e-24"},
    {0x93c225b2u, "-4.9009655e-27"},
    {0x2c7ea60au, "3.6187741e-12"},
    {0x3ebd4f38u, "0.36974502"},
    {0xa246611cu, "-2.6885413e-18"},
    {0x5d576c1du, "9.701759e+17"},
    {0x5f47ed05u, "1.4406176e+19"},
    {0xb9d83361u, "-0.0004123701"},
    {0xeaceb515u, "-1.2494693e+26"},
    {0xc35f1f39u, "-223.12196"},
    {0x6b2cc09au, "2.0884478e+26"},
    {0xc7871916u, "-69170.17"},
    {0xcada1ae3u, "-7.1468655e+06"},
    {0x2cf4d2fbu, "6.9583206e-12"},
    {0xe5e73972u, "-1.3649079e+23"},
    {0x6f7638d8u, "7.620203e+28"},
    {0xcd311c2bu, "-1.8571333e+08"},
    {0x1e3a8824u, "9.874911e-21"},
    {0x1595b129u, "6.046013e-26"},
    {0x737bbd3au, "1.9944832e+31"},
    {0x5b1669d3u, "4.23376e+16"},
    {0x13519758u, "2.6454127e-27"},
    {0x63963b47u, "5.542566e+21"},
    {0x1e291201u, "8.950509e-21"},
    {0x36a89f53u, "5.025338e-06"},
    {0x460ce5f5u, "9017.489"},
    {0x292d30d9u, "3.8456085e-14"},
    {0x452fdfe2u, "2813.9927"},
    {0x610864dbu, "1.5725154e+20"},
    {0x38ba94a9u, "8.896861e-05"},
    {0x600b71bbu, "4.019207e+19"},
    {0x403c7372u, "2.9445462"},
    {0x664fbf3bu, "2.4526436e+23"},
    {0x1072dfdau, "4.7898534e-29"},
    {0x24f358f7u, "1.05535163e-16"},
    {0x78267535u, "1.3504664e+34"},
    {0x1f0d91adu, "2.997841e-20"},
    {0x3f73f17eu, "0.9529036"},
    {0x20151e62u, "1.2630844e-19"},
    {0x404dc509u, "3.215151"},
    {0x1873576bu, "3.1451149e-24"},
    {0x2facb721u, "3.141674e-10"},
    {0x00e5ce9bu, "2.1104445e-38"},
    {0x51570748u, "5.772126e+10"},
    {0x0fab9f5du, "1.6923286e-29"},
    {0x2ae14a0eu, "4.0019415e-13"},
    {0x3f113bc2u, "0.5673181"},
    {0x09d67d02u, "5.1636183e-33"},
    {0x371c17feu, "9.303911e-06"},
    {0x0b14f239u, "2.868599e-32"},
    {0x71e1107du, "2.22893e+30"},
    {0x41f35f9eu, "30.421688"},
    {0x30696416u, "8.4907137e-10"},
    {0x1f34df14u, "3.830101e-20"},
    {0x15cd7cc0u, "8.299566e-26"},
    {0x0908f524u, "1.648567e-33"},
    {0x772679b9u, "3.376524e+33"},
};

static void test_floats(void)
{
    for (size_t i = 0; i < sizeof f64_cases / sizeof f64_cases[0]; i++) {
        double x;
        memcpy(&x, &f64_cases[i].bits, 8);
        zf_sbuf b = {0};
        zf_coordtext_f64(&b, x);
        CHECK(b.data && !strcmp(b.data, f64_cases[i].text), "f64 %016llx: %s, want %s",
              (unsigned long long)f64_cases[i].bits, b.data, f64_cases[i].text);
        free(b.data);
    }
    for (size_t i = 0; i < sizeof f32_cases / sizeof f32_cases[0]; i++) {
        float x;
        memcpy(&x, &f32_cases[i].bits, 4);
        zf_sbuf b = {0};
        zf_coordtext_f32(&b, x);
        CHECK(b.data && !strcmp(b.data, f32_cases[i].text), "f32 %08x: %s, want %s",
              (unsigned)f32_cases[i].bits, b.data, f32_cases[i].text);
        free(b.data);
    }
}

static void test_csv(void)
{
    static const struct { const char *in; size_t n; const char *want; } cases[] = {
        {"plain", 5, "plain"}, {"", 0, ""}, {"a,b", 3, "\"a,b\""}, {"q\"", 2, "\"q\"\"\""},
        {"x\ny", 3, "\"x\ny\""}, {"\"\"", 2, "\"\"\"\"\"\""},
        {"sp ace;tab\t'", 12, "sp ace;tab\t'"}, {"\xc3\xa9", 2, "\xc3\xa9"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        zf_sbuf b = {0}, s = {0};
        zf_coordtext_csv_field(&b, cases[i].in, cases[i].n);
        zf_sbuf_csv_field(&s, cases[i].in); /* base/sbuf.h applies the same rules */
        CHECK(!strcmp(b.data ? b.data : "", cases[i].want), "csv %zu: [%s]", i, b.data);
        CHECK(!strcmp(s.data ? s.data : "", cases[i].want), "sbuf csv %zu: [%s]", i, s.data);
        free(b.data);
        free(s.data);
    }
    zf_sbuf b = {0}; /* CR alone is not quoted (pandas); zf_sbuf_csv_field quotes it */
    zf_coordtext_csv_field(&b, "x\rz", 3);
    CHECK(b.data && !strcmp(b.data, "x\rz"), "CR: [%s]", b.data);
    b.len = 0; /* an embedded NUL is kept, not an end */
    zf_coordtext_csv_field(&b, "a\0,", 3);
    CHECK(b.len == 5 && !memcmp(b.data, "\"a\0,\"", 5), "NUL: %zu bytes", b.len);
    free(b.data);
}

static void test_bytes_repr(void)
{
    /* generated with Python: repr(bytes) */
    static const struct { const char *in; size_t n; const char *want; } cases[] = {
        {"", 0, "b''"},
        {"\x61\x62", 2, "b'ab'"},
        {"\x61\x27", 2, "b\"a'\""},
        {"\x61\x22", 2, "b'a\"'"},
        {"\x00\x0a\xff\x5c", 4, "b'\\x00\\n\\xff\\\\'"},
        {"\x61\x27\x22", 3, "b'a\\'\"'"},
        {"\x09\x0d\x7f\x80\x20\x7e", 6, "b'\\t\\r\\x7f\\x80 ~'"},
        {"\x27\x22", 2, "b'\\'\"'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        zf_sbuf b = {0};
        zf_coordtext_bytes_repr(&b, (const uint8_t *)cases[i].in, cases[i].n);
        CHECK(b.data && !strcmp(b.data, cases[i].want), "bytes %zu: %s, want %s", i, b.data,
              cases[i].want);
        free(b.data);
    }
}

/* read every item of buf[0..n) as count items; the first error */
static int vlen_all(const char *buf, size_t n, uint64_t count, char *got, size_t cap)
{
    zf_vlen_reader r;
    char err[200];
    int rc = zf_vlen_begin(&r, (const uint8_t *)buf, n, count, err, sizeof err);
    size_t used = 0;
    for (uint64_t i = 0; rc == ZF_OK && i < count; i++) {
        const uint8_t *item;
        size_t len;
        rc = zf_vlen_next(&r, &item, &len, err, sizeof err);
        if (rc == ZF_OK && used + len + 1 < cap) {
            memcpy(got + used, item, len);
            used += len;
            got[used++] = '|';
        }
    }
    got[used] = '\0';
    return rc;
}

static void test_vlen(void)
{
    char got[64];
    const char ok[] = "\x02\0\0\0" "\x01\0\0\0" "a" "\x03\0\0\0" "b,c";
    CHECK(vlen_all(ok, sizeof ok - 1, 2, got, sizeof got) == ZF_OK && !strcmp(got, "a|b,c|"), "%s", got);
    CHECK(vlen_all("\0\0\0\0", 4, 0, got, sizeof got) == ZF_OK, "empty chunk");
    CHECK(vlen_all(ok, sizeof ok - 1, 3, got, sizeof got) == ZF_ECORRUPT, "count 2 read as 3");
    CHECK(vlen_all(ok, 3, 2, got, sizeof got) == ZF_ECORRUPT, "no room for the count");
    CHECK(vlen_all(ok, sizeof ok - 2, 2, got, sizeof got) == ZF_ECORRUPT, "last item cut");
    CHECK(vlen_all(ok, 11, 2, got, sizeof got) == ZF_ECORRUPT, "second length cut");
    const char trail[] = "\x01\0\0\0" "\x01\0\0\0" "a" "x";
    CHECK(vlen_all(trail, sizeof trail - 1, 1, got, sizeof got) == ZF_ECORRUPT, "trailing byte");
    CHECK(vlen_all("\0\0\0\0x", 5, 0, got, sizeof got) == ZF_ECORRUPT, "trailing byte, no items");
    static const char *const not_utf8[] = {"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                           "\xe2\x82", "\xe0\x9f\xbf", "a\x80"};
    for (size_t i = 0; i < sizeof not_utf8 / sizeof not_utf8[0]; i++) {
        char buf[16] = "\x01\0\0\0";
        size_t l = strlen(not_utf8[i]);
        buf[4] = (char)l;
        memcpy(buf + 8, not_utf8[i], l);
        CHECK(vlen_all(buf, 8 + l, 1, got, sizeof got) == ZF_ECORRUPT, "not UTF-8: case %zu", i);
    }
    const char utf8[] = "\x01\0\0\0" "\x0a\0\0\0" "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" "z";
    CHECK(vlen_all(utf8, sizeof utf8 - 1, 1, got, sizeof got) == ZF_OK, "UTF-8 of 2, 3, 4 bytes");
    const char huge[] = "\x01\0\0\0" "\xff\xff\xff\xff" "a";
    CHECK(vlen_all(huge, sizeof huge - 1, 1, got, sizeof got) == ZF_ECORRUPT, "length 2^32-1");
}

static char root[64];

/* write n bytes to root/rel, making its directories */
static void put(const char *rel, const void *data, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        mkdir(path, 0700);
        *p = '/';
    }
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, n, f) == n, "write %s", path);
    if (f)
        fclose(f);
}

static void put_text(const char *rel, const char *text)
{
    put(rel, text, strlen(text));
}

/* load path; 0 and the texts joined by '|' in got, or the error */
static int load(const zf_store *st, const char *path, size_t max, char *got, size_t cap,
                char *err, size_t errcap)
{
    zf_coordtext c;
    int rc = zf_coordtext_load(st, path, max, &c, err, errcap);
    got[0] = '\0';
    if (rc)
        return rc;
    size_t used = 0;
    for (uint64_t i = 0; i < c.n; i++)
        used += (size_t)snprintf(got + used, used < cap ? cap - used : 0, "%s%.*s", i ? "|" : "",
                                 (int)(c.start[i + 1] - c.start[i]), c.text + c.start[i]);
    CHECK(c.start[0] == 0 && c.text[c.start[c.n]] == '\0', "offsets");
    zf_coordtext_clear(&c);
    return rc;
}

#define V3_HEAD "{\"zarr_format\":3,\"node_type\":\"array\",\"chunk_key_encoding\":{\"name\":\"default\"},"

static void test_load(void)
{
    snprintf(root, sizeof root, "/tmp/test_coordtext.XXXXXX");
    CHECK(mkdtemp(root) != NULL, "mkdtemp");
    put_text("s/zarr.json", V3_HEAD "\"shape\":[3],\"data_type\":\"string\",\"fill_value\":\"\","
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[2]}},"
             "\"codecs\":[{\"name\":\"vlen-utf8\",\"configuration\":{}}],\"dimension_names\":[\"x\"]}");
    const char c0[] = "\x02\0\0\0" "\x03\0\0\0" "a,b" "\x02\0\0\0" "q\"";
    put("s/c/0", c0, sizeof c0 - 1);
    put_text("i/zarr.json", V3_HEAD "\"shape\":[3],\"data_type\":\"int32\",\"fill_value\":0,"
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[3]}},"
             "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],"
             "\"attributes\":{\"_FillValue\":5}}");
    const uint8_t i0[] = {5, 0, 0, 0, 6, 0, 0, 0, 0xf9, 0xff, 0xff, 0xff};
    put("i/c/0", i0, sizeof i0);
    put_text("f/.zarray", "{\"zarr_format\":2,\"shape\":[2],\"chunks\":[2],\"dtype\":\"<f8\","
             "\"fill_value\":\"NaN\",\"order\":\"C\",\"compressor\":null,\"filters\":null}");
    put_text("f/.zattrs", "{\"_ARRAY_DIMENSIONS\":[\"lat\"]}");
    const double f0[] = {0.1, 1e16};
    put("f/0", f0, sizeof f0);
    put_text("t/zarr.json", V3_HEAD "\"shape\":[1],\"data_type\":{\"name\":\"numpy.timedelta64\","
             "\"configuration\":{\"unit\":\"s\",\"scale_factor\":1}},\"fill_value\":0,"
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[1]}},"
             "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]}");

    zf_store *st = NULL;
    CHECK(zf_store_open_local(root, 0, &st) == ZF_OK, "open %s", root);
    char got[256], err[256];
    int rc = load(st, "s", 1 << 20, got, sizeof got, err, sizeof err);
    CHECK(rc == ZF_OK && !strcmp(got, "\"a,b\"|\"q\"\"\"|"), "strings: %d %s %s", rc, got, err);
    rc = load(st, "i", 1 << 20, got, sizeof got, err, sizeof err);
    CHECK(rc == ZF_OK && !strcmp(got, "|6.0|-7.0"), "masked ints: %d %s %s", rc, got, err);
    rc = load(st, "f", 1 << 20, got, sizeof got, err, sizeof err);
    CHECK(rc == ZF_OK && !strcmp(got, "0.1|1e+16"), "v2 floats: %d %s %s", rc, got, err);
    rc = load(st, "t", 1 << 20, got, sizeof got, err, sizeof err);
    CHECK(rc == ZF_EUNSUPPORTED, "a time type: %d %s", rc, err);
    rc = load(st, "nothing", 1 << 20, got, sizeof got, err, sizeof err);
    CHECK(rc == ZF_ENOTFOUND, "no array: %d %s", rc, err);
    rc = load(st, "f", 30, got, sizeof got, err, sizeof err);
    CHECK(rc == ZF_ENOMEM, "over the bound: %d %s", rc, err);

    const char bad[] = "\x05\0\0\0" "\x03\0\0\0" "a,b";
    put("s/c/0", bad, sizeof bad - 1);
    rc = load(st, "s", 1 << 20, got, sizeof got, err, sizeof err);
    CHECK(rc == ZF_ECORRUPT && strstr(err, "\"s/c/0\""), "damaged vlen chunk: %d %s", rc, err);
    put("s/c/1", "\x01\0\0\0" "\x09\0\0\0" "x", 9);
    put("s/c/0", c0, sizeof c0 - 1);
    rc = load(st, "s", 1 << 20, got, sizeof got, err, sizeof err);
    CHECK(rc == ZF_ECORRUPT && strstr(err, "\"s/c/1\""), "item past the end: %d %s", rc, err);
    put("i/c/0", i0, sizeof i0 - 1);
    rc = load(st, "i", 1 << 20, got, sizeof got, err, sizeof err);
    CHECK(rc == ZF_ECORRUPT && strstr(err, "\"i/c/0\""), "short number chunk: %d %s", rc, err);
    zf_store_close(st);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0, "%s", cmd);
}

/* a v3 document of shape [2], chunks [2] with the given data type, fill
 * value, codecs and attributes */
static int parse_v3(const char *dtype, const char *fill, const char *codecs, const char *attrs)
{
    char doc[1024], err[256];
    snprintf(doc, sizeof doc, V3_HEAD "\"shape\":[2],\"data_type\":%s,\"fill_value\":%s,"
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[2]}},"
             "\"codecs\":%s,\"attributes\":%s}", dtype, fill, codecs, attrs);
    zf_plain_meta pm;
    int rc = zf_meta_parse_plain_v3(doc, strlen(doc), &pm, err, sizeof err);
    if (rc == ZF_OK)
        zf_plain_meta_clear(&pm);
    return rc;
}

static int parse_v2(const char *dtype, const char *fill, const char *filters, const char *attrs)
{
    char doc[1024], err[256];
    snprintf(doc, sizeof doc, "{\"zarr_format\":2,\"shape\":[2],\"chunks\":[2],\"dtype\":\"%s\","
             "\"fill_value\":%s,\"order\":\"C\",\"compressor\":null,\"filters\":%s}", dtype, fill,
             filters);
    zf_plain_meta pm;
    int rc = zf_meta_parse_plain_v2(doc, strlen(doc), attrs, attrs ? strlen(attrs) : 0, &pm, err,
                                    sizeof err);
    if (rc == ZF_OK)
        zf_plain_meta_clear(&pm);
    return rc;
}

static void test_meta(void)
{
    const char *le = "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]";
    const char *vlen = "[{\"name\":\"vlen-utf8\"},{\"name\":\"zstd\",\"configuration\":{\"level\":0,\"checksum\":false}}]";
    CHECK(parse_v3("\"float64\"", "\"NaN\"", le, "{}") == ZF_OK, "float64");
    CHECK(parse_v3("\"bool\"", "false", "[{\"name\":\"bytes\"}]", "{}") == ZF_OK, "bool");
    CHECK(parse_v3("\"string\"", "\"\"", vlen, "{}") == ZF_OK, "string");
    CHECK(parse_v3("{\"name\":\"fixed_length_utf32\",\"configuration\":{\"length_bytes\":8}}", "\"\"", le,
                   "{}") == ZF_OK, "fixed_length_utf32");
    CHECK(parse_v3("\"float16\"", "0", le, "{}") == ZF_EUNSUPPORTED, "float16");
    CHECK(parse_v3("\"string\"", "\"x\"", vlen, "{}") == ZF_EUNSUPPORTED, "string fill \"x\"");
    CHECK(parse_v3("\"string\"", "\"\"", le, "{}") == ZF_EUNSUPPORTED, "string through bytes");
    CHECK(parse_v3("\"int16\"", "0", le, "{\"units\":\"days since 2000-01-01\"}") == ZF_EUNSUPPORTED,
          "CF time units");
    CHECK(parse_v3("\"int16\"", "0", le, "{\"scale_factor\":2}") == ZF_EUNSUPPORTED,
          "integer scale_factor");
    CHECK(parse_v3("\"bool\"", "false", "[{\"name\":\"bytes\"}]", "{\"_FillValue\":false}") ==
          ZF_EUNSUPPORTED, "masked bool");
    CHECK(parse_v3("\"int16\"", "\"x\"", le, "{}") == ZF_ECORRUPT, "int fill \"x\"");
    CHECK(parse_v3("{\"name\":\"fixed_length_utf32\",\"configuration\":{}}", "\"\"", le, "{}") ==
          ZF_ECORRUPT, "no length_bytes");
    CHECK(parse_v3("\"int16\"", "0", "[]", "{}") == ZF_ECORRUPT, "no codecs");
    CHECK(parse_v2("<i4", "null", "null", "{\"_ARRAY_DIMENSIONS\":[\"x\"]}") == ZF_OK, "v2 int");
    CHECK(parse_v2("|O", "null", "[{\"id\":\"vlen-utf8\"}]", NULL) == ZF_OK, "v2 object");
    CHECK(parse_v2(">U3", "\"\"", "null", NULL) == ZF_OK, "v2 >U3");
    CHECK(parse_v2("|S4", "null", "null", NULL) == ZF_OK, "v2 |S4");
    CHECK(parse_v2("|O", "null", "null", NULL) == ZF_EUNSUPPORTED, "v2 object without vlen-utf8");
    CHECK(parse_v2("|O", "null", "[{\"id\":\"json2\"}]", NULL) == ZF_EUNSUPPORTED, "v2 json2");
    CHECK(parse_v2("<m8[s]", "null", "null", NULL) == ZF_EUNSUPPORTED, "v2 timedelta");
    CHECK(parse_v2("|U3", "null", "null", NULL) == ZF_EUNSUPPORTED, "v2 |U3");
    CHECK(parse_v2("<i4", "null", "null", "[1]") == ZF_ECORRUPT, "v2 .zattrs not an object");
    CHECK(parse_v2("|b1", "7", "null", NULL) == ZF_ECORRUPT, "v2 bool fill 7");
}

int main(void)
{
    test_meta();
    test_floats();
    test_csv();
    test_bytes_repr();
    test_vlen();
    test_load();
    return check_summary("test_coordtext");
}
