/* optcheck.h - the values of the options of options.h, read and checked
 * the same way by zarrfs and zarrfs-cat (no FUSE: both link optcheck.c). */
#ifndef ZARRFS_OPTCHECK_H
#define ZARRFS_OPTCHECK_H

#include <stddef.h>

#include "options.h"
#include "store/open.h"
#include "view/layout.h"

/* The number of the option called name (ZF_OPT_...), or -1. */
int zf_opt_find(const char *name);

/* How option id (0 <= id < ZF_OPT_COUNT) is written (options.h's KIND):
 * -o ID=ARG, -o ID, or either. */
enum zf_opt_kind { ZF_OPT_KIND_VAL, ZF_OPT_KIND_FLAG, ZF_OPT_KIND_OPT };
enum zf_opt_kind zf_opt_kind(int id);

/* The option name name is likely a typo of (a letter wrong, missing, added
 * or two swapped, two such for longer names, or the beginning of one name
 * only), or NULL: among ZF_OPTIONS (zarrfs-cat's only, unless mount) and,
 * for the mount, libfuse's common options. */
const char *zf_opt_nearest(const char *name, int mount);

/* The value v of an option whose values are keywords (format, labels, cf,
 * log_level, timeout's never), as they are spelled in options.h: in lower
 * case ("ISO": "iso"), "warning" as "warn"; into buf (capacity cap,
 * truncated), which is returned. */
const char *zf_opt_keyword(const char *v, char *buf, size_t cap);

/* A size such as "256M" (K, M, G: powers of 1024; an optional B) in bytes;
 * 0 for a malformed one. */
size_t zf_opt_size(const char *s);

/* The settings both zarrfs and zarrfs-cat read, from the option values val
 * (indexed by ZF_OPT_...; NULL: not given; a flag given: any non-NULL; an
 * OPT given without a value: ""), the
 * defaults of options.h for those not given: format, nat, labels and cf into
 * lo (lo->nat borrows val's string or the default), cache_size into
 * *cache_bytes, and every store option (store/open.h) into so (owned:
 * zf_store_opts_free).  0, or -1 with a one-line reason in err. */
int zf_opt_settings(const char *const val[ZF_OPT_COUNT], zf_layout_opts *lo, size_t *cache_bytes,
                    zf_store_opts *so, char *err, size_t errcap);

#endif
