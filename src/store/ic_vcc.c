/* ic_vcc.c - spec 2's virtual chunk containers: read from the repo file's
 * configuration (FlexBuffers: a map whose "virtual_chunk_containers" member
 * maps keys to {"name", "url_prefix", "store"}), and vcc://NAME/PATH
 * locations expanded with them (ic_impl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/flexbuf.h"
#include "store/ic_impl.h"

#define ERR(code, ...) zf_errf(err, errcap, code, __VA_ARGS__)

#define VCC_MAX 1024   /* containers read (a configuration lists a handful) */

/* add container name -> prefix to v */
static int vcc_add(ic_vcc *v, const char *name, size_t nlen, const char *prefix, size_t plen)
{
    char **names = realloc(v->names, (v->n + 1) * sizeof *names);
    if (names)
        v->names = names;
    char **prefixes = names ? realloc(v->prefixes, (v->n + 1) * sizeof *prefixes) : NULL;
    if (!prefixes)
        return ZF_ENOMEM;
    v->prefixes = prefixes;
    char *n = strndup(name, nlen), *p = strndup(prefix, plen);
    if (!n || !p) {
        free(n);
        free(p);
        return ZF_ENOMEM;
    }
    v->names[v->n] = n;
    v->prefixes[v->n++] = p;
    return ZF_OK;
}

/* one container {"name": ..., "url_prefix": ...}: kept if it has both */
static int vcc_entry(ic_vcc *v, const zf_flex *c)
{
    zf_flex name, prefix;
    const char *n, *p;
    size_t nlen, plen;
    if (zf_flex_map_get(c, "name", &name) != ZF_OK || name.type == ZF_FLEX_NULL)
        return ZF_OK; /* unnamed: no vcc:// location can name it */
    if (zf_flex_string(&name, &n, &nlen) != ZF_OK ||
        zf_flex_map_get(c, "url_prefix", &prefix) != ZF_OK ||
        zf_flex_string(&prefix, &p, &plen) != ZF_OK || !nlen || memchr(n, '/', nlen) ||
        memchr(n, 0, nlen) || memchr(p, 0, plen))
        return ZF_ECORRUPT;
    return vcc_add(v, n, nlen, p, plen);
}

int ic_vcc_load(const ic_file *repo, ic_vcc *out, char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    zf_fb_vec cfg;
    int rc = zf_fb_vector(&repo->root, FB_REPO_CONFIG, 1, &cfg);
    if (rc == ZF_ENOTFOUND)
        return ZF_OK; /* the default configuration: no containers */
    zf_flex root, conts;
    size_t count = 0;
    if (rc == ZF_OK && (rc = zf_flex_root(zf_fb_vec_at(&cfg, 0), cfg.count, &root)) == ZF_OK) {
        rc = zf_flex_map_get(&root, "virtual_chunk_containers", &conts);
        if (rc == ZF_ENOTFOUND || (rc == ZF_OK && conts.type == ZF_FLEX_NULL))
            return ZF_OK;
    }
    if (rc == ZF_OK)
        rc = zf_flex_map_size(&conts, &count);
    for (size_t i = 0; rc == ZF_OK && i < count && i < VCC_MAX; i++) {
        const char *key;
        size_t klen;
        zf_flex c;
        rc = zf_flex_map_at(&conts, i, &key, &klen, &c);
        if (rc == ZF_OK)
            rc = vcc_entry(out, &c);
    }
    if (rc != ZF_OK) {
        ic_vcc_free(out);
        return rc == ZF_ENOMEM ? rc : ERR(ZF_ECORRUPT, "the repository's configuration is damaged");
    }
    return ZF_OK;
}

void ic_vcc_free(ic_vcc *v)
{
    for (size_t i = 0; i < v->n; i++) {
        free(v->names[i]);
        free(v->prefixes[i]);
    }
    free(v->names);
    free(v->prefixes);
    memset(v, 0, sizeof *v);
}

int ic_vcc_expand(const ic_vcc *v, const char *loc, size_t n, char *out, size_t cap)
{
    static const char scheme[] = "vcc://";
    size_t sl = sizeof scheme - 1;
    if (n < sl || strncmp(loc, scheme, sl) != 0) { /* an absolute URL: as it is */
        if (n >= cap)
            return ZF_ECORRUPT;
        memcpy(out, loc, n);
        out[n] = '\0';
        return ZF_OK;
    }
    const char *name = loc + sl, *slash = memchr(name, '/', n - sl);
    if (!slash)
        return ZF_ENOTFOUND;
    size_t nlen = (size_t)(slash - name), rest = n - sl - nlen - 1;
    for (size_t i = 0; i < v->n; i++) {
        if (strlen(v->names[i]) != nlen || memcmp(v->names[i], name, nlen) != 0)
            continue;
        size_t plen = strlen(v->prefixes[i]);
        if (plen + rest >= cap)
            return ZF_ECORRUPT;
        memcpy(out, v->prefixes[i], plen);
        memcpy(out + plen, slash + 1, rest);
        out[plen + rest] = '\0';
        return ZF_OK;
    }
    return ZF_ENOTFOUND;
}
