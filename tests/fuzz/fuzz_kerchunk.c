/* fuzz_kerchunk.c - libFuzzer target: a kerchunk reference document as a
 * hostile writer might leave it.
 *
 * The input is the document (JSON, version 0 or 1), written as refs.json in
 * a temp dir (in $ZF_FUZZ_TMP or the working directory) beside a 64-byte
 * target file t.bin, and opened through zf_store_open_spec, as zarrfs opens
 * a STORE argument.  When it opens, the whole key space is listed (depth and
 * entries bounded), every value read whole and in a range and stamped,
 * .info's lines asked for every directory.  Errors must be documented codes
 * with a reason; a listing entry must be a name (no '/', not empty); a
 * read value must have the size its stamp says.  Targets outside the temp
 * dir are refused by consent, so nothing else is read.
 *
 * Seeds: tests/fuzz/corpus/fuzz_kerchunk (documents kerchunk writes, and
 * hand-made v1 ones with templates and gen).
 * Build: scripts/fuzz (or CMake with -DZF_FUZZ=ON, clang). */
#define FUZZ_NAME "fuzz_kerchunk"
#include "fuzz_util.h"

#include <limits.h>

#include "base/err.h"
#include "base/sbuf.h"
#include "store/open.h"
#include "store/store.h"

#define DEPTH_MAX 6
#define ENTRIES_MAX 64
#define VALUE_MAX ((size_t)1 << 20)

static char root[PATH_MAX];

static void cleanup(void)
{
    rm_tree(root);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    err_fd = dup(2);
    if (err_fd < 0)
        err_fd = 2;
    const char *tmp = getenv("ZF_FUZZ_TMP");
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/zf-fuzz-kerchunk.XXXXXX", tmp && *tmp ? tmp : ".");
    if (!mkdtemp(dir) || !realpath(dir, root))
        die("cannot make a temp dir in %s: %s", tmp && *tmp ? tmp : ".", strerror(errno));
    atexit(cleanup);
    char path[PATH_MAX + 16];
    uint8_t t[64];
    for (int i = 0; i < 64; i++)
        t[i] = (uint8_t)(i * 7);
    snprintf(path, sizeof path, "%s/t.bin", root);
    write_file(path, t, sizeof t);
    return 0;
}

static int known_error(int rc)
{
    return rc == ZF_ENOTFOUND || rc == ZF_ECORRUPT || rc == ZF_EIO || rc == ZF_EUNSUPPORTED ||
           rc == ZF_EINVAL || rc == ZF_ENOMEM;
}

static void walk(const zf_store *s, const char *prefix, int depth);

typedef struct seen {
    const zf_store *s;
    const char *prefix;
    int depth, count;
} seen;

/* one value: read whole and in a range, stamped */
static void visit_value(const zf_store *s, const char *key)
{
    zf_store_buf b = {0};
    size_t n = 0;
    zf_stamp st, st2;
    char err[256] = "";
    int rc = zf_store_read(s, key, VALUE_MAX, &b, &n, &st, err, sizeof err);
    CHECK(rc == ZF_OK || known_error(rc));
    CHECK(rc == ZF_OK || rc == ZF_ENOMEM || *err);
    if (rc == ZF_OK) {
        CHECK(st.size == n && st.kind == ZF_STORE_FILE);
        CHECK(zf_store_stamp(s, key, &st2) == ZF_OK && st2.size == n);
        if (n) {
            uint8_t one;
            CHECK(zf_store_read_range(s, key, n - 1, 1, &one, err, sizeof err) == ZF_OK &&
                  one == b.p[n - 1]);
        }
        uint8_t past[2];
        CHECK(zf_store_read_range(s, key, n, 1, past, err, sizeof err) != ZF_OK);
    }
    free(b.p);
}

static int on_entry(void *ctx, const zf_store_entry *e)
{
    seen *v = ctx;
    CHECK(*e->name && !strchr(e->name, '/'));
    if (++v->count > ENTRIES_MAX)
        return 1;
    char key[ZF_KEY_MAX + 8];
    snprintf(key, sizeof key, "%s%s%s", v->prefix, *v->prefix ? "/" : "", e->name);
    if (e->stamp.kind == ZF_STORE_DIR)
        walk(v->s, key, v->depth + 1);
    else
        visit_value(v->s, key);
    return 0;
}

static void walk(const zf_store *s, const char *prefix, int depth)
{
    if (depth > DEPTH_MAX)
        return;
    seen v = {s, prefix, depth, 0};
    char err[256] = "";
    int rc = zf_store_list(s, prefix, 0, on_entry, &v, err, sizeof err);
    CHECK(rc == ZF_OK || rc == 1 || known_error(rc));
    zf_sbuf info = {0};
    zf_store_describe(s, prefix, &info);
    free(info.data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/refs.json", root);
    write_file(path, data, size);
    zf_store_opts o = {0};
    zf_store *s = NULL;
    char err[512] = "";
    int rc = zf_store_open_spec(path, &o, &s, err, sizeof err);
    CHECK(rc == ZF_OK || known_error(rc));
    CHECK(rc == ZF_OK || rc == ZF_ENOMEM || *err);
    if (rc == ZF_OK)
        walk(s, "", 0);
    zf_store_close(s);
    return 0;
}
