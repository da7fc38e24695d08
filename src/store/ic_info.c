/* ic_info.c - an Icechunk repository's lines of .info: the repository, its
 * spec and writer, the ref shown, the snapshot, its commit time and message,
 * and for an array the kinds of its chunk references and the locations its
 * virtual chunks need (ic_impl.h). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "store/ic_impl.h"

#define CONTAINERS_SHOWN 8

/* s (n bytes) on one line: control characters and backslashes escaped */
static void one_line(zf_sbuf *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n')
            zf_sbuf_add(out, "\\n", 2);
        else if (c == '\\')
            zf_sbuf_add(out, "\\\\", 2);
        else if (c < 0x20 || c == 0x7f)
            zf_sbuf_printf(out, "\\x%02x", c);
        else
            zf_sbuf_add(out, (const char *)&s[i], 1);
    }
}

/* microseconds since the epoch as ISO 8601 UTC */
static void time_line(zf_sbuf *out, uint64_t us)
{
    time_t secs = (time_t)(us / 1000000);
    struct tm tm;
    char buf[64];
    if (us / 1000000 > (uint64_t)INT64_MAX / 2 || !gmtime_r(&secs, &tm) ||
        !strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm)) {
        zf_sbuf_printf(out, "committed: %llu us since the epoch\n", (unsigned long long)us);
        return;
    }
    zf_sbuf_printf(out, "committed: %s.%06lluZ\n", buf, (unsigned long long)(us % 1000000));
}

/* what an array's references are, and the containers its virtual chunks need */
typedef struct census {
    const ic_repo *r;
    uint64_t kinds[4];
    char cont[CONTAINERS_SHOWN][256];
    int allowed[CONTAINERS_SHOWN];
    size_t ncont, more;
} census;

static int count_ref(void *arg, const ic_coords *c, const ic_ref *ref)
{
    (void)c;
    census *x = arg;
    x->kinds[ref->kind & 3]++;
    if (ref->kind != IC_REF_VIRTUAL)
        return 0;
    char cont[256];
    int ok = zf_targets_allowed(x->r->targets, ref->url, cont, sizeof cont);
    if (ok < 0 || (ok == 1 && zf_consent_container(ref->url, cont, sizeof cont) != ZF_OK))
        snprintf(cont, sizeof cont, "%.200s", ref->url);
    for (size_t i = 0; i < x->ncont; i++)
        if (!strcmp(x->cont[i], cont))
            return 0;
    if (x->ncont == CONTAINERS_SHOWN) {
        x->more++;
        return 0;
    }
    snprintf(x->cont[x->ncont], sizeof x->cont[0], "%s", cont);
    x->allowed[x->ncont++] = ok == 1;
    return 0;
}

/* the chunk references of array a */
static void array_lines(ic_repo *r, const ic_snap *s, const ic_node *a, zf_sbuf *out)
{
    census x = {.r = r};
    ic_coords none = {.n = 0};
    char err[256] = "";
    int rc = a->damage ? ZF_ECORRUPT : ic_chunks_each(r, s, a, &none, 1, count_ref, &x, err, sizeof err);
    if (rc != ZF_OK) {
        zf_sbuf_printf(out, "chunk_refs: not counted (%s)\n", a->damage ? a->damage : *err ? err : zf_strerror(rc));
        return;
    }
    zf_sbuf_printf(out, "chunk_refs: %llu inline, %llu native, %llu virtual\n",
                   (unsigned long long)x.kinds[IC_REF_INLINE], (unsigned long long)x.kinds[IC_REF_NATIVE],
                   (unsigned long long)x.kinds[IC_REF_VIRTUAL]);
    if (!x.ncont)
        return;
    zf_sbuf_add(out, "virtual_locations: ", 19);
    for (size_t i = 0; i < x.ncont; i++) {
        zf_sbuf_printf(out, "%s", i ? ", " : "");
        one_line(out, x.cont[i], strlen(x.cont[i]));
        zf_sbuf_printf(out, x.allowed[i] ? " (authorised)" : " (not authorised: -o virtual=%s)", x.cont[i]);
    }
    if (x.more)
        zf_sbuf_printf(out, " and %zu more", x.more);
    zf_sbuf_add(out, "\n", 1);
}

void ic_describe(const zf_store *s, const char *path, zf_sbuf *out)
{
    const ic_snap *sn = ic_store_snap(s);
    ic_repo *r = ic_store_repo(s);
    char id[IC_ID_TEXT];
    ic_id_text(sn->id, IC_ID_LEN, id);
    zf_sbuf_printf(out, "repository: %s\n", zf_store_path(r->raw));
    zf_sbuf_printf(out, "icechunk_spec: %u (%s; written by ", sn->file.spec,
                   r->layout == 2 ? "repo file" : "refs/ folder");
    one_line(out, sn->file.writer, strlen(sn->file.writer));
    zf_sbuf_add(out, ")\nref: ", 7);
    zf_sbuf_printf(out, "%s ", r->sel_kind == ZF_IC_BRANCH ? "branch" : r->sel_kind == ZF_IC_TAG ? "tag"
                                                                                              : "snapshot");
    one_line(out, r->sel_name, strlen(r->sel_name));
    zf_sbuf_printf(out, "\nsnapshot: %s\n", id);
    time_line(out, sn->flushed_at);
    zf_sbuf_add(out, "message: ", 9);
    one_line(out, sn->message, sn->message_len);
    zf_sbuf_add(out, "\n", 1);
    const ic_node *a = path ? ic_snap_find(sn, path, strlen(path)) : NULL;
    if (a && a->is_array)
        array_lines(r, sn, a, out);
}
