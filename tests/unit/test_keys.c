/* test_keys.c - chunk keys and their inverse (zf_meta_chunk_coords), which
 * the bulk chunk stamps rely on: every key written parses back to its
 * coordinates, and nothing else parses. */
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "check.h"
#include "zarr/meta.h"

/* a metadata stub with only what chunk keys depend on */
static zf_meta meta(int key_v2, char sep, unsigned ndim)
{
    zf_meta m;
    memset(&m, 0, sizeof m);
    m.key_v2 = key_v2;
    m.separator = sep;
    m.ndim = ndim;
    return m;
}

static void roundtrip(const zf_meta *m, const uint64_t *coords, const char *want)
{
    char key[128];
    uint64_t back[ZF_MAX_DIMS] = {0};
    CHECK(zf_meta_chunk_key(m, coords, key, sizeof key) == ZF_OK && !strcmp(key, want),
          "key %s, want %s", key, want);
    CHECK(zf_meta_chunk_coords(m, key, back) == ZF_OK &&
              !memcmp(back, coords, m->ndim * sizeof *coords), "%s parses back", key);
}

static void refused(const zf_meta *m, const char *key)
{
    uint64_t c[ZF_MAX_DIMS];
    CHECK(zf_meta_chunk_coords(m, key, c) == ZF_ENOTFOUND, "\"%s\" is not a chunk key", key);
}

int main(void)
{
    uint64_t c2[2] = {3, 17}, c1[1] = {18446744073709551615u}, c0[1] = {0};
    zf_meta v3s = meta(0, '/', 2), v3d = meta(0, '.', 2), v2d = meta(1, '.', 2), v2s = meta(1, '/', 2);
    roundtrip(&v3s, c2, "c/3/17");
    roundtrip(&v3d, c2, "c.3.17");
    roundtrip(&v2d, c2, "3.17");
    roundtrip(&v2s, c2, "3/17");
    zf_meta v3one = meta(0, '/', 1), v2one = meta(1, '.', 1), v3zero = meta(0, '/', 0),
            v2zero = meta(1, '.', 0);
    roundtrip(&v3one, c1, "c/18446744073709551615");
    roundtrip(&v2one, c0, "0");
    roundtrip(&v3zero, c0, "c");
    roundtrip(&v2zero, c0, "0");
    refused(&v3one, "c/18446744073709551616"); /* overflows */
    refused(&v3s, "c/03/17");
    refused(&v3s, "c/3/17/");
    refused(&v3s, "c/3");
    refused(&v3s, "c/3.17");
    refused(&v3s, "c/+3/17");
    refused(&v3s, "zarr.json");
    refused(&v2d, "3.17.0");
    refused(&v2d, ".zarray");
    refused(&v2d, "3.x");
    refused(&v2zero, "c");
    refused(&v3zero, "c/0");
    return check_summary("test_keys");
}
