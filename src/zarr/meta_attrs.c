/* meta_attrs.c - an array's other attributes (long_name, standard_name,
 * description, ...), kept as the lines NAME.info shows them. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/sbuf.h"
#include "meta_impl.h"

#define ATTRS_SHOWN 64     /* attributes listed at most; the rest counted */
#define ATTR_NAME_MAX 64   /* bytes of a name shown, then "..." */
#define ATTR_VALUE_MAX 256 /* bytes of a value shown, then "..." */

/* is attribute name one NAME.info lists among the others?  Not xarray's own
 * (a leading underscore: _ARRAY_DIMENSIONS, _FillValue, _Unsigned), not
 * coordinates (the .csv's labels), and for a CF array not the attributes
 * it is decoded by (the cf_attributes line shows those) */
static int listed(const char *name, int cf)
{
    static const char *const cf_names[] = {"units",        "calendar",   "dtype",
                                           "scale_factor", "add_offset", "missing_value"};
    if (name[0] == '_' || !strcmp(name, "coordinates"))
        return 0;
    for (size_t i = 0; cf && i < sizeof cf_names / sizeof *cf_names; i++)
        if (!strcmp(name, cf_names[i]))
            return 0;
    return 1;
}

/* s on one line, cut to max bytes (then "...") */
static void cut_line(zf_sbuf *out, const char *s, size_t max)
{
    size_t n = strlen(s);
    zf_sbuf_one_line(out, s, n < max ? n : max);
    if (n > max)
        zf_sbuf_add(out, "...", 3);
}

/* "attribute NAME: VALUE": a string as it is, any other value as compact JSON */
static void attr_line(zf_sbuf *out, const cJSON *a)
{
    zf_sbuf_add(out, "attribute ", 10);
    cut_line(out, a->string, ATTR_NAME_MAX);
    zf_sbuf_add(out, ": ", 2);
    if (cJSON_IsString(a)) {
        cut_line(out, a->valuestring, ATTR_VALUE_MAX);
    } else {
        char *json = cJSON_PrintUnformatted(a);
        cut_line(out, json ? json : "(out of memory)", ATTR_VALUE_MAX);
        free(json);
    }
    zf_sbuf_add(out, "\n", 1);
}

int zf_meta_keep_attributes(const cJSON *attrs, zf_meta *m)
{
    if (!cJSON_IsObject(attrs))
        return ZF_OK;
    zf_sbuf out = {0};
    unsigned shown = 0, more = 0;
    for (const cJSON *a = attrs->child; a; a = a->next) {
        if (!a->string || !listed(a->string, m->cf.how != ZF_CF_NATIVE))
            continue;
        if (shown < ATTRS_SHOWN) {
            attr_line(&out, a);
            shown++;
        } else {
            more++;
        }
    }
    if (more)
        zf_sbuf_printf(&out, "attributes_not_shown: %u more\n", more);
    if (out.failed) {
        free(out.data);
        return ZF_ENOMEM;
    }
    m->attributes = out.data; /* NULL if none */
    return ZF_OK;
}
