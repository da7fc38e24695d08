/* info.h - the NAME.info text: a human-first description of one array. */
#ifndef ZF_INFO_H
#define ZF_INFO_H

#include "chunk/array.h"
#include "text/text.h"
#include "base/sbuf.h"

/* Append the info text of array a (shown as name, values written by text)
 * to out as "key: value" lines.  Looks up which chunks exist; decodes nothing. */
void zf_info_text(const zf_array *a, const char *name, const zf_text *text, zf_sbuf *out);

#endif
