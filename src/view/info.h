/* info.h - the NAME.info text: a human-first description of one array. */
#ifndef ZF_INFO_H
#define ZF_INFO_H

#include "chunk/array.h"
#include "text/text.h"
#include "base/sbuf.h"

/* Append the info text of array a (shown as name, values written by text)
 * to out as "key: value" lines.  Looks up which chunks exist; decodes
 * nothing.  ZF_OK, or ZF_EIO (logged) when the store could not tell which
 * chunks are stored (a listing failed: no count is made of part of them). */
int zf_info_text(zf_array *a, const char *name, const zf_text *text, zf_sbuf *out);

#endif
