/* test_pdcsv.c - time values as pandas' to_csv writes a column of them:
 * the golden file golden/pdcsv.txt (gen_pdcsv.py: pandas itself), each
 * column's format chosen from its values, every text's length against
 * zf_pdcsv_base_len + zf_pdcsv_extra, and no write past the text;
 * zf_pdcsv_measure (per unit, fast loops) against those per-value functions
 * on random runs of every unit, kind and a few scales.
 *
 *   test_pdcsv        (cwd tests/) */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "text/pdcsv.h"

#include "check.h"

#define MAXV 16

/* one golden column: "KIND UNIT SCALE V1,V2,...\tT1|T2|..." */
typedef struct column {
    zf_values values;
    zf_unit unit;
    uint32_t scale;
    int64_t v[MAXV];
    char *text[MAXV];
    size_t n;
} column;

static int parse(char *line, column *c)
{
    char kind[4], unit[8];
    unsigned scale;
    char *tab = strchr(line, '\t');
    if (!tab || sscanf(line, "%3s %7s %u", kind, unit, &scale) != 3 ||
        zf_unit_parse(unit, &c->unit))
        return -1;
    *tab = '\0';
    c->values = kind[0] == 'm' ? ZF_VALUES_DURATION : ZF_VALUES_DATETIME;
    c->scale = scale;
    char *vals = strrchr(line, ' ') + 1, *texts = tab + 1, *save = NULL;
    texts[strcspn(texts, "\r\n")] = '\0';
    c->n = 0;
    for (char *t = strtok_r(vals, ",", &save); t && c->n < MAXV; t = strtok_r(NULL, ",", &save))
        c->v[c->n++] = strcmp(t, "NaT") ? strtoll(t, NULL, 10) : ZF_NAT;
    for (size_t i = 0; i < c->n; i++) {
        c->text[i] = texts;
        char *bar = strchr(texts, '|');
        if (bar)
            *bar = '\0';
        texts = bar ? bar + 1 : texts + strlen(texts);
    }
    return 0;
}

static void check_column(const column *c, int lineno)
{
    zf_pdcsv pd;
    CHECK(zf_pdcsv_init(&pd, c->values, c->unit, c->scale) == ZF_OK, "line %d: init", lineno);
    zf_pdmode mode = zf_pdcsv_mode(&pd, zf_pdcsv_parts_of(&pd, c->v, c->n));
    for (size_t i = 0; i < c->n; i++) {
        if (c->v[i] == ZF_NAT) {
            CHECK(!*c->text[i], "line %d: NaT is an empty field", lineno);
            continue;
        }
        char buf[ZF_VALUE_MAX + 64];
        memset(buf, 0x5a, sizeof buf);
        size_t n = zf_pdcsv_text(&pd, mode, c->v[i], buf);
        size_t len = zf_pdcsv_base_len(&pd, c->v[i]) + zf_pdcsv_extra(mode) +
                     (c->values == ZF_VALUES_DURATION && c->v[i] < 0 && mode != ZF_PD_DAYS);
        CHECK(n == strlen(c->text[i]) && !memcmp(buf, c->text[i], n),
              "line %d value %lld: got %.*s, pandas %s", lineno, (long long)c->v[i], (int)n, buf,
              c->text[i]);
        CHECK(len == n, "line %d value %lld: length %zu, text %zu", lineno, (long long)c->v[i],
              len, n);
        CHECK((unsigned char)buf[n] == 0x5a, "line %d: writes past its text", lineno);
    }
}

/* a random value: small, near a day's multiple, huge, negative, or NaT */
static int64_t random_value(uint64_t *st)
{
    *st = *st * 6364136223846793005u + 1442695040888963407u;
    uint64_t x = *st >> 11;
    switch (x % 6) {
    case 0: return ZF_NAT;
    case 1: return (int64_t)(x >> 8) - (int64_t)(x >> 9); /* anything of 45 bits */
    case 2: return (int64_t)(x >> 30) * 86400 * ((x & 1) ? 1 : -1);
    case 3: return (int64_t)(*st ^ (x << 21)); /* anything at all */
    case 4: return (int64_t)(x % 1000) - 500;
    default: return (int64_t)((x >> 4) % 100000) * 3600;
    }
}

#define NS INT64_C(1000000000)

/* 10^k (k < 19) */
static int64_t pow10(int64_t k)
{
    int64_t p = 1;
    while (k-- > 0)
        p *= 10;
    return p;
}

/* zf_pdcsv_measure of runs of values against the per-value functions */
static void check_measure(void)
{
    static const zf_unit units[] = {ZF_UNIT_W, ZF_UNIT_D, ZF_UNIT_h, ZF_UNIT_m, ZF_UNIT_s,
                                    ZF_UNIT_ms, ZF_UNIT_us, ZF_UNIT_ns};
    static const uint32_t scales[] = {1, 7, 10, 1000};
    uint64_t st = 42;
    int64_t v[257];
    for (int kind = 0; kind < 2; kind++)
        for (size_t u = 0; u < sizeof units / sizeof *units; u++)
            for (size_t k = 0; k < sizeof scales / sizeof *scales; k++)
                for (int run = 0; run < 40; run++) {
                    zf_pdcsv pd;
                    zf_values values = kind ? ZF_VALUES_DATETIME : ZF_VALUES_DURATION;
                    if (zf_pdcsv_init(&pd, values, units[u], scales[k]) != ZF_OK)
                        continue;
                    size_t n = (size_t)(random_value(&st) & 255) + 1;
                    int64_t only = run % 4 == 0 ? random_value(&st) % 5000 * 86400 : 0;
                    for (size_t i = 0; i < n; i++) /* some runs of whole days only */
                        v[i] = only && i % 3 ? only : random_value(&st);
                    if (run == 1) /* where day counts gain a digit: +-10^k days (k <= 18), +-1 */
                        for (size_t i = 0; i < 18 * 6; i++) {
                            int64_t day = pd.ns_per_tick && 86400 * NS % pd.ns_per_tick == 0
                                              ? 86400 * NS / pd.ns_per_tick : 1, t;
                            int64_t sign = i % 2 ? -1 : 1, e = (int64_t)(i / 6) + 1;
                            if (__builtin_mul_overflow(pow10(e) * sign, day, &t))
                                t = sign > 0 ? INT64_MAX - 1 : INT64_MIN + 2; /* (+-1: no NaT) */
                            v[i] = t + ((int64_t)(i / 2 % 3) - 1);
                            if (i < 6 && !__builtin_mul_overflow(i % 2 ? -719162 : 2932897, day, &t))
                                v[i] = t + ((int64_t)(i / 2 % 3) - 1); /* years 1 and 10000 */
                            n = i + 1;
                        }
                    zf_pdsum got = {0, 0, 0, 0}, want = {0, 0, 0, 0};
                    size_t half = n / 2; /* in two calls: the second starts from the first's sum */
                    zf_pdcsv_measure(&pd, v, half, &got);
                    zf_pdcsv_measure(&pd, v + half, n - half, &got);
                    for (size_t i = 0; i < n; i++) {
                        if (v[i] == ZF_NAT)
                            continue;
                        want.base += zf_pdcsv_base_len(&pd, v[i]);
                        want.nn++;
                        want.neg += values == ZF_VALUES_DURATION && v[i] < 0;
                    }
                    want.parts = zf_pdcsv_parts_of(&pd, v, n);
                    CHECK(got.base == want.base && got.nn == want.nn && got.neg == want.neg &&
                              got.parts == want.parts,
                          "measure: kind %d unit %d scale %u run %d: base %llu/%llu nn %llu/%llu "
                          "neg %llu/%llu parts %u/%u", kind, (int)units[u], scales[k], run,
                          (unsigned long long)got.base, (unsigned long long)want.base,
                          (unsigned long long)got.nn, (unsigned long long)want.nn,
                          (unsigned long long)got.neg, (unsigned long long)want.neg, got.parts,
                          want.parts);
                }
}

int main(void)
{
    check_measure();
    FILE *f = fopen("golden/pdcsv.txt", "r");
    CHECK(f != NULL, "golden/pdcsv.txt (run from tests/)");
    char line[4096];
    int lineno = 0, columns = 0;
    while (f && fgets(line, sizeof line, f)) {
        column c;
        lineno++;
        CHECK(parse(line, &c) == 0, "line %d: malformed", lineno);
        check_column(&c, lineno);
        columns++;
    }
    if (f)
        fclose(f);
    CHECK(columns >= 20, "only %d golden columns", columns);
    zf_pdcsv pd; /* units pandas cannot hold */
    CHECK(zf_pdcsv_init(&pd, ZF_VALUES_DURATION, ZF_UNIT_M, 1) == ZF_EUNSUPPORTED, "months");
    CHECK(zf_pdcsv_init(&pd, ZF_VALUES_DATETIME, ZF_UNIT_ps, 1) == ZF_EUNSUPPORTED, "ps");
    CHECK(zf_pdcsv_init(&pd, ZF_VALUES_DURATION, ZF_UNIT_W, 1u << 31) == ZF_EUNSUPPORTED,
          "2^31 weeks per tick");
    return check_summary("test_pdcsv");
}
