/* ic_snap.c - a snapshot: its file read and checked, its nodes indexed by
 * path (ic_impl.h).  The nodes must be sorted by path (the spec's MUST): a
 * snapshot whose nodes are not, or whose node tables or paths are damaged,
 * is refused as a whole (a listing could not be trusted); an array whose
 * own data is damaged keeps its zarr.json and fails its chunk reads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/err.h"
#include "store/ic_impl.h"

#define ERR(code, ...) zf_errf(err, errcap, code, __VA_ARGS__)

/* is p (n bytes) a node path: "/" or "/a/b", no empty, "." or ".." segment, no NUL? */
static int valid_path(const char *p, size_t n)
{
    if (n == 0 || p[0] != '/' || memchr(p, 0, n))
        return 0;
    if (n == 1)
        return 1;
    for (size_t i = 1; i <= n;) {
        size_t j = i;
        while (j < n && p[j] != '/')
            j++;
        size_t seg = j - i;
        if (seg == 0 || (seg == 1 && p[i] == '.') || (seg == 2 && p[i] == '.' && p[i + 1] == '.'))
            return 0;
        i = j + 1;
    }
    return 1;
}

/* the chunk key encoding and rank an array's zarr.json gives */
static void parse_keys(ic_node *nd)
{
    cJSON *j = cJSON_ParseWithLength((const char *)nd->meta, nd->mlen);
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(j, "shape");
    const cJSON *cke = cJSON_GetObjectItemCaseSensitive(j, "chunk_key_encoding");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(cke, "name");
    const cJSON *conf = cJSON_GetObjectItemCaseSensitive(cke, "configuration");
    const cJSON *sep = cJSON_GetObjectItemCaseSensitive(conf, "separator");
    int n = cJSON_IsArray(shape) ? cJSON_GetArraySize(shape) : -1;
    nd->v2_keys = cJSON_IsString(name) && strcmp(name->valuestring, "v2") == 0;
    nd->sep = nd->v2_keys ? '.' : '/';
    if (cJSON_IsString(sep) && (!strcmp(sep->valuestring, "/") || !strcmp(sep->valuestring, ".")))
        nd->sep = sep->valuestring[0];
    nd->keys_ok = n >= 0 && n <= IC_MAX_DIMS && (!cke || (cJSON_IsString(name) &&
                  (nd->v2_keys || !strcmp(name->valuestring, "default")) && (!sep || cJSON_IsString(sep))));
    nd->ndim = n > 0 ? (unsigned)n : 0;
    if (!nd->keys_ok)
        nd->damage = "its zarr.json gives no shape or chunk key encoding zarrfs knows";
    cJSON_Delete(j);
}

/* the array data of node nd (table t): manifests and a rank that agrees */
static void index_array(ic_node *nd, const zf_fb_table *t)
{
    zf_fb_table data;
    zf_fb_vec shape;
    if (zf_fb_table_field(t, FB_NODE_DATA, &data) != ZF_OK ||
        zf_fb_vector(&data, FB_ARRAY_MANIFESTS, 4, &nd->manifests) != ZF_OK) {
        nd->damage = "the snapshot's entry for this array is damaged";
        return;
    }
    parse_keys(nd);
    /* spec 1 keeps the shape in `shape` (16 bytes a dimension), spec 2 in `shape_v2` */
    int rc = zf_fb_vector(&data, FB_ARRAY_SHAPE_V2, 4, &shape);
    if (rc == ZF_ENOTFOUND)
        rc = zf_fb_vector(&data, FB_ARRAY_SHAPE, 16, &shape);
    if (rc != ZF_OK)
        nd->damage = "the snapshot's shape of this array is damaged";
    else if (nd->keys_ok && shape.count != nd->ndim)
        nd->damage = "the snapshot and the array's zarr.json disagree on its rank";
}

/* index node i (table t) into nd */
static int index_node(const zf_fb_table *t, ic_node *nd, char *err, size_t errcap, uint32_t i)
{
    const char *path;
    size_t plen;
    uint8_t type;
    zf_fb_vec meta;
    if (zf_fb_struct(t, FB_NODE_ID, IC_NODE_ID_LEN, &nd->id) != ZF_OK ||
        zf_fb_string(t, FB_NODE_PATH, &path, &plen) != ZF_OK || !valid_path(path, plen))
        return ERR(ZF_ECORRUPT, "node %u has no valid id or path", i);
    if (zf_fb_u8(t, FB_NODE_DATA_TYPE, 0, &type) != ZF_OK ||
        (type != FB_NODE_ARRAY && type != FB_NODE_GROUP))
        return ERR(ZF_ECORRUPT, "node %.*s is neither an array nor a group", (int)plen, path);
    nd->path = path + 1;
    nd->plen = plen - 1;
    if (zf_fb_vector(t, FB_NODE_USER_DATA, 1, &meta) == ZF_OK) {
        nd->meta = zf_fb_vec_at(&meta, 0);
        nd->mlen = meta.count;
    }
    nd->is_array = type == FB_NODE_ARRAY;
    if (nd->is_array && !nd->meta)
        nd->damage = "the snapshot's entry for this array is damaged";
    else if (nd->is_array)
        index_array(nd, t);
    return ZF_OK;
}

/* byte order of two node paths (without their leading '/') */
static int path_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : (an > bn) - (an < bn);
}

/* index every node, checking their order */
static int index_nodes(ic_snap *s, const zf_fb_vec *nodes, char *err, size_t errcap)
{
    if (!(s->nodes = calloc(nodes->count ? nodes->count : 1, sizeof *s->nodes)))
        return ZF_ENOMEM;
    for (uint32_t i = 0; i < nodes->count; i++) {
        zf_fb_table t;
        ic_node *nd = &s->nodes[i];
        int rc = zf_fb_vec_table(nodes, i, &t);
        if (rc != ZF_OK)
            return ERR(ZF_ECORRUPT, "node %u is damaged", i);
        if ((rc = index_node(&t, nd, err, errcap, i)) != ZF_OK)
            return rc;
        /* without the common leading '/': the same order */
        if (i && path_cmp(nd[-1].path, nd[-1].plen, nd->path, nd->plen) >= 0)
            return ERR(ZF_ECORRUPT, "its nodes are not sorted by path (/%.*s after /%.*s)",
                       (int)nd->plen, nd->path, (int)nd[-1].plen, nd[-1].path);
        s->nnodes++;
    }
    return ZF_OK;
}

int ic_snap_load(ic_repo *r, const uint8_t id[IC_ID_LEN], ic_snap *out, char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    memcpy(out->id, id, IC_ID_LEN);
    char text[IC_ID_TEXT], key[32], why[256] = "";
    ic_id_text(id, IC_ID_LEN, text);
    snprintf(key, sizeof key, "snapshots/%s", text);
    int rc = ic_file_fetch(r->raw, key, IC_SNAPSHOT, r->max_file, &out->file, NULL, why, sizeof why);
    if (rc == ZF_ENOTFOUND)
        return ERR(rc, "snapshot %s does not exist (%s)", text, key);
    if (rc != ZF_OK)
        return ERR(rc, "%s: %s", key, *why ? why : zf_strerror(rc));
    const zf_fb_table *t = &out->file.root;
    const uint8_t *own;
    zf_fb_vec nodes;
    if (zf_fb_struct(t, FB_SNAP_ID, IC_ID_LEN, &own) != ZF_OK || memcmp(own, id, IC_ID_LEN) != 0)
        rc = ERR(ZF_ECORRUPT, "%s: the file holds another snapshot's id", key);
    else if (zf_fb_vector(t, FB_SNAP_NODES, 4, &nodes) != ZF_OK ||
             zf_fb_u64(t, FB_SNAP_FLUSHED, 0, &out->flushed_at) == ZF_ECORRUPT ||
             zf_fb_string(t, FB_SNAP_MESSAGE, &out->message, &out->message_len) != ZF_OK)
        rc = ERR(ZF_ECORRUPT, "%s: the snapshot table is damaged", key);
    else if ((rc = index_nodes(out, &nodes, why, sizeof why)) != ZF_OK)
        (void)ERR(rc, "%s: %s", key, rc == ZF_ENOMEM ? "out of memory" : why);
    if (rc != ZF_OK)
        ic_snap_free(out);
    return rc;
}

void ic_snap_free(ic_snap *s)
{
    ic_file_free(&s->file);
    free(s->nodes);
    ic_vcc_free(&s->vcc);
    memset(s, 0, sizeof *s);
}

/* index of the first node whose path is >= path (n bytes) */
static size_t lower_bound(const ic_snap *s, const char *path, size_t n)
{
    size_t lo = 0, hi = s->nnodes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (path_cmp(s->nodes[mid].path, s->nodes[mid].plen, path, n) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const ic_node *ic_snap_find(const ic_snap *s, const char *path, size_t plen)
{
    size_t i = lower_bound(s, path, plen);
    return i < s->nnodes && path_cmp(s->nodes[i].path, s->nodes[i].plen, path, plen) == 0
               ? &s->nodes[i] : NULL;
}

void ic_snap_below(const ic_snap *s, const char *path, size_t plen, size_t *first, size_t *end)
{
    if (plen == 0) { /* the root: every node but itself */
        *first = s->nnodes && s->nodes[0].plen == 0 ? 1 : 0;
        *end = s->nnodes;
        return;
    }
    /* "path/" ... "path0" ('0' follows '/'): the nodes below path, contiguous */
    char lo[ZF_KEY_MAX + 1];
    if (plen >= sizeof lo - 1) {
        *first = *end = 0;
        return;
    }
    memcpy(lo, path, plen);
    lo[plen] = '/';
    *first = lower_bound(s, lo, plen + 1);
    lo[plen] = '/' + 1;
    *end = lower_bound(s, lo, plen + 1);
}
