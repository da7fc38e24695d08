/* optcheck.c - option values shared by zarrfs and zarrfs-cat (optcheck.h). */
#include "optcheck.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/utf8.h"
#include "text/text.h"
#include "zarr/cf.h"

static const char *const opt_name[ZF_OPT_COUNT] = {
#define X(id, kind, arg, def, desc) [ZF_OPT_##id] = #id,
    ZF_OPTIONS(X)
#undef X
};

static const char *const opt_default[ZF_OPT_COUNT] = {
#define X(id, kind, arg, def, desc) [ZF_OPT_##id] = def,
    ZF_OPTIONS(X)
#undef X
};

static const unsigned char opt_kind[ZF_OPT_COUNT] = {
#define X(id, kind, arg, def, desc) [ZF_OPT_##id] = ZF_OPT_KIND_##kind,
    ZF_OPTIONS(X)
#undef X
};

/* libfuse's options a mount user may mistype (fuse_session_new's and
 * fuse_parse_cmdline's, as README and libfuse document them) */
static const char *const fuse_names[] = {
    "allow_other", "allow_root", "auto_unmount", "default_permissions", "fsname", "subtype",
    "max_read", "max_threads", "max_idle_threads", "clone_fd", "blkdev", "blksize",
    "noatime", "nodev", "nosuid", "noexec", "debug",
};

int zf_opt_find(const char *name)
{
    for (int i = 0; i < ZF_OPT_COUNT; i++)
        if (!strcmp(name, opt_name[i]))
            return i;
    return -1;
}

enum zf_opt_kind zf_opt_kind(int id)
{
    return opt_kind[id];
}

/* the optimal string alignment distance of a and b (edits: a letter
 * changed, added, removed, or two neighbours swapped), at most 9 */
static unsigned distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 40 || m > 40)
        return 9;
    unsigned d[41][41];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (unsigned)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (unsigned)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            unsigned best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            best = d[i - 1][j] + 1 < best ? d[i - 1][j] + 1 : best;
            best = d[i][j - 1] + 1 < best ? d[i][j - 1] + 1 : best;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m] < 9 ? d[n][m] : 9;
}

/* is candidate c nearer to name than the best so far?  (*best, *dist,
 * *prefixes: how many candidates name begins) */
static void consider(const char *name, const char *c, const char **best, unsigned *dist,
                     unsigned *prefixes, const char **prefix_of)
{
    size_t n = strlen(name);
    if (n >= 3 && !strncmp(c, name, n)) {
        (*prefixes)++;
        *prefix_of = c;
    }
    unsigned d = distance(name, c);
    if (d < *dist) {
        *dist = d;
        *best = c;
    }
}

const char *zf_opt_nearest(const char *name, int mount)
{
    const char *best = NULL, *prefix_of = NULL;
    unsigned dist = 9, prefixes = 0;
    for (int i = 0; i < ZF_OPT_COUNT; i++)
        if (mount || !zf_opt_mount_only(i))
            consider(name, opt_name[i], &best, &dist, &prefixes, &prefix_of);
    for (size_t i = 0; mount && i < sizeof fuse_names / sizeof *fuse_names; i++)
        consider(name, fuse_names[i], &best, &dist, &prefixes, &prefix_of);
    unsigned most = strlen(name) <= 4 ? 1 : 2;
    if (best && dist <= most)
        return best;
    return prefixes == 1 ? prefix_of : NULL;
}

const char *zf_opt_keyword(const char *v, char *buf, size_t cap)
{
    size_t i = 0;
    for (; cap && v[i] && i + 1 < cap; i++)
        buf[i] = (char)tolower((unsigned char)v[i]);
    if (cap)
        buf[i] = '\0';
    if (cap > 4 && !strcmp(buf, "warning"))
        strcpy(buf, "warn");
    return buf;
}

size_t zf_opt_size(const char *s)
{
    char *end;
    if (*s < '0' || *s > '9') /* strtoull would take "-5" as 2^64 - 5 */
        return 0;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return 0;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if ((*end == 'B' || *end == 'b') && end[1] == '\0')
        end++;
    if (*end || v > (SIZE_MAX >> shift))
        return 0;
    return (size_t)v << shift;
}

/* one line into err; -1 */
static int bad(char *err, size_t errcap, const char *what, const char *value)
{
    snprintf(err, errcap, "%s%s%s", what, value ? ": " : "", value ? value : "");
    return -1;
}

/* format, nat, labels and cf into lo; 0 or -1 (err) */
static int view_settings(const char *const val[ZF_OPT_COUNT], zf_layout_opts *lo, char *err,
                         size_t errcap)
{
    char kw[32];
#define VALUE(id) (val[ZF_OPT_##id] ? val[ZF_OPT_##id] : opt_default[ZF_OPT_##id])
#define KEYWORD(id) zf_opt_keyword(VALUE(id), kw, sizeof kw)
    lo->nat = VALUE(nat);
    if (zf_format_parse(KEYWORD(format), &lo->format))
        return bad(err, errcap, "unknown format (pandas, iso, numpy, seconds, raw)", val[ZF_OPT_format]);
    const char *labels = KEYWORD(labels);
    if (strcmp(labels, "coords") && strcmp(labels, "index"))
        return bad(err, errcap, "unknown labels (coords, index)", val[ZF_OPT_labels]);
    lo->labels_index = !strcmp(labels, "index");
    if (zf_cf_mode_parse(KEYWORD(cf), &lo->cf))
        return bad(err, errcap, "unknown cf (all, dtype, off)", val[ZF_OPT_cf]);
    if (strlen(lo->nat) > ZF_NAT_MAX)
        return bad(err, errcap, "nat text is too long", NULL);
    if (zf_utf8_has_control(lo->nat)) /* a newline would split a line in two */
        return bad(err, errcap, "nat text holds a control character", NULL);
#undef KEYWORD
    return 0;
}

/* every store option given into so; 0 or -1 (err) */
static int store_settings(const char *const val[ZF_OPT_COUNT], zf_store_opts *so, char *err,
                          size_t errcap)
{
    for (int i = 0; i < ZF_OPT_COUNT; i++) {
        if (!val[i])
            continue;
        const char *v = opt_kind[i] == ZF_OPT_KIND_FLAG || !*val[i] ? NULL : val[i]; /* -o ID */
        if (opt_kind[i] == ZF_OPT_KIND_VAL)
            v = val[i];
        int rc = zf_store_opt_set(so, opt_name[i], v, err, errcap);
        if (rc == ZF_ENOMEM)
            return bad(err, errcap, "out of memory", NULL);
        if (rc != ZF_OK && rc != ZF_ENOTFOUND) /* (not a store option: the view's, the mount's) */
            return -1;
    }
    return 0;
}

int zf_opt_settings(const char *const val[ZF_OPT_COUNT], zf_layout_opts *lo, size_t *cache_bytes,
                    zf_store_opts *so, char *err, size_t errcap)
{
    if (view_settings(val, lo, err, errcap))
        return -1;
    *cache_bytes = zf_opt_size(VALUE(cache_size));
    if (!*cache_bytes)
        return bad(err, errcap, "invalid cache_size", val[ZF_OPT_cache_size]);
#undef VALUE
    return store_settings(val, so, err, errcap);
}
