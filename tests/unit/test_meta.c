/* test_meta.c - metadata parsing against golden summaries.
 *
 * Every file in golden/meta/ (v3 *.json; v2 *.zarray with an optional *.zattrs
 * beside it) is parsed and summarised in one line ("td" durations, "dt" time
 * stamps, "cft" cftime time stamps); the summaries must equal
 * the hand-written lines of golden/meta/expected.txt ("FILE: SUMMARY").  A
 * rejected input summarises as "error CLASS: REASON", the parser's one-line
 * reason, compared whole (as jq's %%FAIL tests compare the message): an input
 * rejected for another reason, or with no reason, fails. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "zarr/meta.h"

#include "check.h"

#define DIR_PATH "golden/meta/"

/* the file at path (its first 1 MiB), NUL-terminated; NULL if unreadable */
static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    if (!buf) {
        fclose(f);
        return NULL;
    }
    *n = fread(buf, 1, (1 << 20) - 1, f);
    buf[*n] = '\0';
    fclose(f);
    return buf;
}

/* "[a,b,...]" of n dimensions */
static void dims(char *out, size_t cap, unsigned n, const uint64_t *v)
{
    size_t len = (size_t)snprintf(out, cap, "[");
    for (unsigned i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%llu", i ? "," : "", (unsigned long long)v[i]);
    snprintf(out + len, cap - len, "]");
}

/* the one-line summary of a parse: its result, or "error CLASS: REASON" */
static void summarise(int rc, const char *why, zf_node_kind kind, const zf_meta *m, char *out,
                      size_t cap)
{
    if (rc) {
        snprintf(out, cap, "error %s: %s", zf_strerror(rc), *why ? why : "(no reason given)");
        return;
    }
    if (kind != ZF_KIND_TIMEDELTA) {
        snprintf(out, cap, "%s", kind == ZF_KIND_GROUP ? "group" : "other");
        return;
    }
    char shape[128], chunks[128], read[128], key[128], codecs[256], names[128] = "";
    uint64_t ones[ZF_MAX_DIMS];
    for (unsigned i = 0; i < ZF_MAX_DIMS; i++)
        ones[i] = 1;
    dims(shape, sizeof shape, m->ndim, m->shape);
    dims(chunks, sizeof chunks, m->ndim, m->chunks);
    dims(read, sizeof read, m->ndim, m->read_chunks);
    zf_meta_chunk_key(m, ones, key, sizeof key);
    zf_pipeline_describe(m->pipeline, codecs, sizeof codecs);
    for (unsigned i = 0; i < m->ndim; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? "," : "",
                 m->dim_names[i] ? m->dim_names[i] : "-");
    snprintf(out, cap, "%s v%d shape=%s chunks=%s read=%s unit=%s scale=%u fill=%lld key=%s codecs=%s dims=%s",
             m->values == ZF_VALUES_DATETIME ? "dt" : m->values == ZF_VALUES_CFTIME ? "cft" : "td", m->zarr_format, shape, chunks, read,
             zf_unit_name(m->unit), m->scale, (long long)m->fill, key, codecs, names);
}

/* summary line for one golden file */
static void run_one(const char *name, char *out, size_t cap)
{
    char path[512];
    size_t n = 0, an = 0;
    snprintf(path, sizeof path, DIR_PATH "%s", name);
    char *doc = slurp(path, &n), *attrs = NULL;
    if (!doc) {
        snprintf(out, cap, "cannot read %s", path);
        return;
    }
    zf_node_kind kind = ZF_KIND_OTHER_ARRAY;
    zf_meta m;
    char err[256] = "";
    int rc;
    if (strstr(name, ".zarray")) {
        snprintf(path + strlen(path) - 7, 8, ".zattrs");
        attrs = slurp(path, &an);
        rc = zf_meta_parse_v2(doc, n, attrs, an, &kind, &m, err, sizeof err);
    } else {
        rc = zf_meta_parse_v3(doc, n, &kind, &m, err, sizeof err);
    }
    summarise(rc, err, kind, &m, out, cap);
    if (rc == ZF_OK)
        zf_meta_clear(&m);
    free(doc);
    free(attrs);
}

/* is name a golden input (not expected.txt, not a .zattrs beside a .zarray)? */
static int is_input(const char *name)
{
    return strstr(name, ".json") || strstr(name, ".zarray");
}

/* does text hold a line "name: ..."? */
static int has_line(const char *text, const char *name)
{
    size_t len = strlen(name);
    for (const char *l = text; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
        if (!strncmp(l, name, len) && !strncmp(l + len, ": ", 2))
            return 1;
    return 0;
}

int main(void)
{
    size_t n;
    char *expected = slurp(DIR_PATH "expected.txt", &n);
    CHECK(expected, "cannot read " DIR_PATH "expected.txt");
    if (!expected)
        return check_summary("test_meta");
    char *lines = strdup(expected);
    CHECK(lines, "out of memory");
    if (!lines) {
        free(expected);
        return check_summary("test_meta");
    }
    int cases = 0;
    for (char *save = NULL, *line = strtok_r(lines, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (*line == '#')
            continue;
        char *sep = strstr(line, ": ");
        CHECK(sep, "malformed line \"%s\" (not \"FILE: SUMMARY\")", line);
        if (!sep)
            continue;
        *sep = '\0';
        char got[1024];
        run_one(line, got, sizeof got);
        cases++;
        CHECK(!strcmp(got, sep + 2), "%s\n  expected: %s\n  got:      %s", line, sep + 2, got);
    }
    DIR *d = opendir(DIR_PATH);
    CHECK(d, "cannot list " DIR_PATH);
    for (struct dirent *e; d && (e = readdir(d));)
        if (is_input(e->d_name))
            CHECK(has_line(expected, e->d_name), "golden input %s has no expected line", e->d_name);
    if (d)
        closedir(d);
    free(lines);
    free(expected);
    printf("test_meta: %d cases\n", cases);
    return check_summary("test_meta");
}
