/* info.c - NAME.info: shape, chunking, data type, fill value, codecs, chunks. */
#include "view/info.h"

#include <string.h>

#include "base/err.h"

#define ZF_INFO_MAX_LOOKUPS 1000000

static void dims_line(zf_sbuf *out, const char *key, unsigned ndim, const uint64_t *v)
{
    zf_sbuf_printf(out, "%s: [", key);
    for (unsigned d = 0; d < ndim; d++)
        zf_sbuf_printf(out, "%s%llu", d ? ", " : "", (unsigned long long)v[d]);
    zf_sbuf_add(out, "]\n", 2);
}

/* the fill value (fill: in ticks): native, as written and as shown;
 * CF-encoded, the stored number and what it decodes to, each on its own line */
static void fill_lines(zf_sbuf *out, const zf_meta *m, const zf_text *text, int64_t fill)
{
    char buf[ZF_VALUE_MAX + ZF_NAT_MAX + 1];
    size_t n = zf_text_value(text, fill, buf);
    if (m->cf.how == ZF_CF_NATIVE) {
        zf_sbuf_printf(out, "fill_value: %s (%.*s)\n", m->fill_text, (int)n, buf);
        return;
    }
    zf_sbuf_printf(out, "fill_value: %s (as stored: what the elements of chunks never written "
                   "hold)\n", m->fill_text);
    zf_sbuf_printf(out, "fill_value_decoded: %.*s (what those elements show, after the CF "
                   "attributes%s)\n", (int)n, buf, fill == ZF_NAT ? ": a missing value" : "");
}

/* the chunks_present line, from what is known without waiting on a remote
 * store: a local store's chunk directories (their entries' types only), a
 * remote store's listing taken when the array was first sized (no request
 * is made for .info: it never waits on a stalled server).  *final 0 if the
 * count is not known yet (the text is built again later, layout.h).  ZF_OK,
 * or ZF_EIO / ZF_ENOMEM when the store could not tell (logged) */
static int chunks_line(zf_array *a, zf_sbuf *out, int *final)
{
    uint64_t present, expected;
    int remote = zf_array_store(a)->remote;
    int rc = remote ? zf_array_count_listed(a, &present, &expected)
                    : zf_array_count_stored(a, ZF_INFO_MAX_LOOKUPS, &present, &expected);
    *final = rc == ZF_OK || !remote;
    if (rc == ZF_EIO || rc == ZF_ENOMEM) /* the store could not tell: no count (logged) */
        return rc;
    if (rc == ZF_OK)
        zf_sbuf_printf(out, "chunks_present: %llu of %llu\n", (unsigned long long)present,
                       (unsigned long long)expected);
    else if (remote) /* not sized yet, or a store that cannot be listed: no chunk is fetched to count */
        zf_sbuf_printf(out, "chunks_present: unknown (%llu expected; counted once the array is sized)\n",
                       (unsigned long long)expected);
    else if (rc == ZF_ENOTFOUND)
        zf_sbuf_printf(out, "chunks_present: unknown (%llu expected)\n", (unsigned long long)expected);
    else
        zf_sbuf_printf(out, "chunks_present: not counted (%llu expected)\n", (unsigned long long)expected);
    return ZF_OK;
}

int zf_info_text(zf_array *a, const char *name, zf_format format, const char *nat, zf_sbuf *out,
                 int *final)
{
    const zf_meta *m = zf_array_meta(a);
    zf_ticks t = zf_array_ticks(a); /* as decoded now: a switch to cftime objects changes them */
    zf_text_room text;
    if (zf_text_init(&text, t.values, format, t.unit, t.scale, t.cal, nat))
        return ZF_EINVAL;
    zf_sbuf_printf(out, "name: %s\n", name);
    zf_sbuf_printf(out, "store_path: %s\n", *zf_array_path(a) ? zf_array_path(a) : "/");
    zf_sbuf_printf(out, "zarr_format: %d\n", m->zarr_format);
    dims_line(out, "shape", m->ndim, m->shape);
    zf_sbuf_printf(out, "elements: %llu\n", (unsigned long long)m->nelems);
    const uint64_t *inner;
    if (zf_pipeline_inner(m->pipeline, &inner)) {
        dims_line(out, "shard_shape", m->ndim, m->chunks);
        dims_line(out, "chunk_shape", m->ndim, inner);
    } else {
        dims_line(out, "chunk_shape", m->ndim, m->chunks);
    }
    zf_sbuf_printf(out, "data_type: %s\n", m->dtype_text);
    zf_sbuf_printf(out, "unit: %s\n", zf_unit_name(t.unit));
    zf_sbuf_printf(out, "scale_factor: %u\n", t.scale);
    fill_lines(out, m, &text.text, t.fill);
    zf_cf_describe(&m->cf, m->values != ZF_VALUES_DURATION, out);
    zf_sbuf_add(out, "dimension_names: ", 17);
    for (unsigned d = 0; d < m->ndim; d++) {
        if (m->dim_names[d])
            zf_sbuf_printf(out, "%s%s", d ? ", " : "", m->dim_names[d]);
        else
            zf_sbuf_printf(out, "%sdim_%u (unnamed)", d ? ", " : "", d);
    }
    zf_sbuf_add(out, "\n", 1);
    if (m->attributes)
        zf_sbuf_add(out, m->attributes, strlen(m->attributes));
    char codecs[1024];
    zf_pipeline_describe(m->pipeline, codecs, sizeof codecs);
    zf_sbuf_printf(out, "codecs: %s\n", codecs);
    int rc = chunks_line(a, out, final);
    if (rc)
        return rc;
    zf_sbuf_printf(out, "text_format: %s\n", zf_format_name(format));
    char cred[200];
    zf_store_credentials(zf_array_store(a), cred, sizeof cred);
    if (*cred)
        zf_sbuf_printf(out, "credentials: %s\n", cred);
    zf_store_describe(zf_array_store(a), zf_array_path(a), out); /* a repository's own lines */
    return ZF_OK;
}
