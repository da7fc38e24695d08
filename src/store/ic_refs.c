/* ic_refs.c - which snapshot a branch, tag or snapshot id names: spec 2's
 * repo file (branches, tags, deleted tags) or spec 1's refs/ folder
 * (refs/branch.NAME/ref.json, refs/tag.NAME/ref.json and its tombstone
 * ref.json.deleted) (ic_impl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/err.h"
#include "base/sbuf.h"
#include "base/vec.h"
#include "store/ic_impl.h"

#define ERR(code, ...) zf_errf(err, errcap, code, __VA_ARGS__)

#define REF_JSON_MAX 4096   /* a spec 1 ref.json: {"snapshot":"ID"} */
#define NAMES_SHOWN 20      /* names an "unknown ref" line lists */

static const char *kind_name(int kind)
{
    return kind == ZF_IC_BRANCH ? "branch" : kind == ZF_IC_TAG ? "tag" : "snapshot";
}

/* ------------------------------------------------------------- spec 2 */

/* the names of a vector of Ref tables, for an error line */
static void list_refs(zf_sbuf *b, const char *what, const zf_fb_vec *v)
{
    zf_sbuf_printf(b, "; %s: ", what);
    if (!v->count)
        zf_sbuf_add(b, "none", 4);
    for (uint32_t i = 0; i < v->count && i < NAMES_SHOWN; i++) {
        zf_fb_table t;
        const char *s;
        size_t n;
        if (zf_fb_vec_table(v, i, &t) == ZF_OK && zf_fb_string(&t, FB_REF_NAME, &s, &n) == ZF_OK)
            zf_sbuf_printf(b, "%s%.*s", i ? ", " : "", (int)(n > 100 ? 100 : n), s);
    }
    if (v->count > NAMES_SHOWN)
        zf_sbuf_printf(b, " and %u more", v->count - NAMES_SHOWN);
}

/* is name among the strings of v? */
static int in_strings(const zf_fb_vec *v, const char *name)
{
    size_t len = strlen(name);
    for (uint32_t i = 0; i < v->count; i++) {
        const char *s;
        size_t n;
        if (zf_fb_vec_string(v, i, &s, &n) == ZF_OK && n == len && memcmp(s, name, n) == 0)
            return 1;
    }
    return 0;
}

/* the snapshot id Ref named name in refs points to, through the snapshot list */
static int find_ref(const zf_fb_vec *refs, const zf_fb_vec *snaps, const char *name,
                    uint8_t id[IC_ID_LEN], char *err, size_t errcap)
{
    size_t len = strlen(name);
    for (uint32_t i = 0; i < refs->count; i++) {
        zf_fb_table t, info;
        const char *s;
        size_t n;
        uint32_t index;
        const uint8_t *p;
        if (zf_fb_vec_table(refs, i, &t) != ZF_OK || zf_fb_string(&t, FB_REF_NAME, &s, &n) != ZF_OK)
            return ERR(ZF_ECORRUPT, "the repo file's ref %u is damaged", i);
        if (n != len || memcmp(s, name, n) != 0)
            continue;
        if (zf_fb_u32(&t, FB_REF_INDEX, 0, &index) == ZF_ECORRUPT || index >= snaps->count ||
            zf_fb_vec_table(snaps, index, &info) != ZF_OK ||
            zf_fb_struct(&info, FB_SNAPINFO_ID, IC_ID_LEN, &p) != ZF_OK)
            return ERR(ZF_ECORRUPT, "the repo file's ref '%s' points to no snapshot it lists", name);
        memcpy(id, p, IC_ID_LEN);
        return ZF_OK;
    }
    return ZF_ENOTFOUND;
}

/* resolve a branch or tag in the repo file */
static int resolve_v2(const ic_repo *r, const ic_file *f, uint8_t id[IC_ID_LEN], char *err,
                      size_t errcap)
{
    zf_fb_vec tags, branches, deleted, snaps;
    if (zf_fb_vector(&f->root, FB_REPO_TAGS, 4, &tags) != ZF_OK ||
        zf_fb_vector(&f->root, FB_REPO_BRANCHES, 4, &branches) != ZF_OK ||
        zf_fb_vector(&f->root, FB_REPO_DELETED_TAGS, 4, &deleted) != ZF_OK ||
        zf_fb_vector(&f->root, FB_REPO_SNAPSHOTS, 4, &snaps) != ZF_OK)
        return ERR(ZF_ECORRUPT, "the repo file lacks its branches, tags or snapshots");
    if (r->sel_kind == ZF_IC_TAG && in_strings(&deleted, r->sel_name))
        return ERR(ZF_ENOTFOUND, "tag '%s' was deleted", r->sel_name);
    int rc = find_ref(r->sel_kind == ZF_IC_TAG ? &tags : &branches, &snaps, r->sel_name, id, err,
                      errcap);
    if (rc != ZF_ENOTFOUND)
        return rc;
    zf_sbuf b = {0};
    zf_sbuf_printf(&b, "no %s '%s'", kind_name(r->sel_kind), r->sel_name);
    list_refs(&b, "branches", &branches);
    list_refs(&b, "tags", &tags);
    snprintf(err, errcap, "%s", b.data && !b.failed ? b.data : "no such ref");
    free(b.data);
    return ZF_ENOTFOUND;
}

/* ------------------------------------------------------------- spec 1 */

/* the snapshot id in a ref.json document */
static int parse_ref_json(const char *doc, size_t n, uint8_t id[IC_ID_LEN])
{
    cJSON *j = cJSON_ParseWithLength(doc, n);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "snapshot");
    int rc = cJSON_IsString(v) && ic_id_parse(v->valuestring, id) == 0 ? ZF_OK : ZF_ECORRUPT;
    cJSON_Delete(j);
    return rc;
}

/* the names of refs/'s "branch.NAME" or "tag.NAME" entries (for an error
 * line: a name that could not be kept is left out) */
typedef struct ref_lists {
    zf_strv branches, tags;
} ref_lists;

static int collect_name(void *ctx, const zf_store_entry *e)
{
    ref_lists *c = ctx;
    if (!strncmp(e->name, "branch.", 7) && e->name[7])
        (void)zf_strv_add(&c->branches, e->name + 7, strlen(e->name + 7));
    else if (!strncmp(e->name, "tag.", 4) && e->name[4])
        (void)zf_strv_add(&c->tags, e->name + 4, strlen(e->name + 4));
    return 0;
}

/* "; WHAT: a, b, c" of ns (sorted; tags with a tombstone left out) */
static void put_names(const ic_repo *r, zf_sbuf *b, const char *what, zf_strv *ns, int tags)
{
    zf_strv_sort(ns);
    zf_sbuf_printf(b, "; %s: ", what);
    size_t shown = 0;
    for (size_t i = 0; i < ns->n; i++) {
        char key[ZF_KEY_MAX];
        zf_stamp st;
        snprintf(key, sizeof key, "refs/tag.%s/ref.json.deleted", ns->v[i]);
        int deleted = tags && zf_store_stamp(r->raw, key, &st) == ZF_OK;
        if (!deleted && shown++ < NAMES_SHOWN)
            zf_sbuf_printf(b, "%s%.100s", shown > 1 ? ", " : "", ns->v[i]);
    }
    if (!shown)
        zf_sbuf_add(b, "none", 4);
    if (shown > NAMES_SHOWN)
        zf_sbuf_printf(b, " and %zu more", shown - NAMES_SHOWN);
}

/* "no branch 'x'; branches: ...; tags: ..." from a listing of refs/ */
static void unknown_v1(const ic_repo *r, char *err, size_t errcap)
{
    ref_lists c = {{0}, {0}};
    zf_sbuf b = {0};
    zf_sbuf_printf(&b, "no %s '%s'", kind_name(r->sel_kind), r->sel_name);
    if (zf_store_list(r->raw, "refs", ZF_LIST_KINDS, collect_name, &c, NULL, 0) != ZF_OK) {
        zf_sbuf_printf(&b, " (this store cannot be listed to tell which exist)");
    } else {
        put_names(r, &b, "branches", &c.branches, 0);
        put_names(r, &b, "tags", &c.tags, 1);
    }
    zf_strv_free(&c.branches);
    zf_strv_free(&c.tags);
    snprintf(err, errcap, "%s", b.data && !b.failed ? b.data : "no such ref");
    free(b.data);
}

/* resolve a branch or tag from refs/ */
static int resolve_v1(const ic_repo *r, ic_target *out, char *err, size_t errcap)
{
    char key[ZF_KEY_MAX];
    const char *kind = r->sel_kind == ZF_IC_TAG ? "tag" : "branch";
    snprintf(key, sizeof key, "refs/%s.%s/ref.json.deleted", kind, r->sel_name);
    zf_stamp st;
    if (r->sel_kind == ZF_IC_TAG && zf_store_stamp(r->raw, key, &st) == ZF_OK)
        return ERR(ZF_ENOTFOUND, "tag '%s' was deleted", r->sel_name);
    snprintf(key, sizeof key, "refs/%s.%s/ref.json", kind, r->sel_name);
    zf_store_buf b = {NULL, 0};
    size_t n = 0;
    char why[256] = "";
    int rc = zf_store_read(r->raw, key, REF_JSON_MAX, &b, &n, &out->stamp, why, sizeof why);
    if (rc == ZF_ENOTFOUND)
        unknown_v1(r, err, errcap);
    else if (rc != ZF_OK)
        (void)ERR(rc, "%s: %s", key, *why ? why : zf_strerror(rc));
    else if ((rc = parse_ref_json((const char *)b.p, n, out->id)) != ZF_OK)
        (void)ERR(rc, "%s: not a ref ({\"snapshot\": ID})", key);
    free(b.p);
    return rc;
}

/* ------------------------------------------------------------- both */

int ic_refs_resolve(ic_repo *r, ic_target *out, ic_file *repo, char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    if (repo)
        memset(repo, 0, sizeof *repo);
    if (r->sel_kind == ZF_IC_SNAPSHOT && ic_id_parse(r->sel_name, out->id) != 0)
        return ERR(ZF_EINVAL, "not a snapshot id (20 base-32 characters): %s", r->sel_name);
    if (r->layout == 1) /* a snapshot id needs no ref (the snapshot file says if it exists) */
        return r->sel_kind == ZF_IC_SNAPSHOT ? ZF_OK : resolve_v1(r, out, err, errcap);
    ic_file f;
    char why[256] = "";
    int rc = ic_file_fetch(r->raw, "repo", IC_REPO_INFO, r->max_file, &f, &out->stamp, why, sizeof why);
    if (rc != ZF_OK)
        return ERR(rc == ZF_ENOTFOUND ? ZF_EIO : rc, "repo: %s", *why ? why : zf_strerror(rc));
    if (r->sel_kind != ZF_IC_SNAPSHOT)
        rc = resolve_v2(r, &f, out->id, err, errcap);
    if (rc == ZF_OK && repo)
        *repo = f;
    else
        ic_file_free(&f);
    return rc;
}

int ic_refs_stamp(ic_repo *r, zf_stamp *st, char *err, size_t errcap)
{
    char key[ZF_KEY_MAX];
    if (r->layout == 1)
        snprintf(key, sizeof key, "refs/%s.%s/ref.json", kind_name(r->sel_kind), r->sel_name);
    else
        snprintf(key, sizeof key, "repo");
    return zf_store_stamp_why(r->raw, key, st, err, errcap);
}
