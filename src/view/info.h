/* info.h - the NAME.info text: a human-first description of one array. */
#ifndef ZF_INFO_H
#define ZF_INFO_H

#include "chunk/array.h"
#include "text/text.h"
#include "base/sbuf.h"

/* Append the info text of array a (shown as name, its values as decoded
 * now written in format, NaT as nat) to out as "key: value" lines.  Counts
 * the chunks present from what is known without waiting on a remote store
 * (a local store's directories, a remote store's listing taken when the
 * array was sized); decodes nothing.  *final is 1 when the text is final, 0
 * when a part of it is not known yet (a remote array not sized yet): build
 * it again later.  ZF_OK, ZF_EINVAL (no formatter for format), or ZF_EIO
 * (logged) when the store could not tell which chunks are stored (a listing
 * failed: no count is made of part of them). */
int zf_info_text(zf_array *a, const char *name, zf_format format, const char *nat, zf_sbuf *out,
                 int *final);

#endif
