/* coordtext_impl.h - private to label/: the text of one element, as the
 * loader (coordtext.c) asks for it, of a number (coordtext_num.c) and of a
 * fixed-length string (coordtext_str.c). */
#ifndef ZF_COORDTEXT_IMPL_H
#define ZF_COORDTEXT_IMPL_H

#include <stdint.h>

#include "base/sbuf.h"
#include "zarr/meta.h"

/* Append the text of the number element at e (type el, machine order) as
 * xarray decodes it with cf's mask and packing and pandas writes it: nothing
 * (an empty field) for NaN or a masked value. */
void zf_coordtext_number(zf_sbuf *out, const zf_cf *cf, zf_elem el, const uint8_t *e);

/* Append the CSV field of the fixed-length string element at e (p->type
 * ZF_PLAIN_UTF32 or ZF_PLAIN_BYTES, p->item_bytes bytes) to text, built in
 * field (scratch).  ZF_ECORRUPT (reason in err) for a UTF-32 code unit that
 * is not a Unicode character. */
int zf_coordtext_fixed(zf_sbuf *text, zf_sbuf *field, const zf_plain_meta *p, const uint8_t *e,
                       char *err, size_t errcap);

#endif
