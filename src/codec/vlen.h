/* vlen.h - reading the vlen-utf8 array->bytes codec (numcodecs VLenUTF8;
 * zarr v3 "vlen-utf8", v2 filter id "vlen-utf8").
 *
 * A decoded chunk (after its bytes->bytes codecs) is a little-endian uint32
 * item count, then per item a little-endian uint32 byte length and that many
 * bytes of UTF-8.  Every size is checked: the count must equal the chunk's
 * element count, each item must lie inside the buffer and be UTF-8 (as
 * Python decodes it: strictly), and nothing may follow the last item. */
#ifndef ZF_VLEN_H
#define ZF_VLEN_H

#include <stddef.h>
#include <stdint.h>

/* A cursor over one decoded chunk (plain data; the buffer is the caller's). */
typedef struct zf_vlen_reader {
    const uint8_t *buf;
    size_t n, pos;
    uint64_t left; /* items not yet read */
} zf_vlen_reader;

/* Start reading buf[0..n), which must hold exactly count items.  0, or
 * ZF_ECORRUPT with a reason in err. */
int zf_vlen_begin(zf_vlen_reader *r, const uint8_t *buf, size_t n, uint64_t count, char *err,
                  size_t errcap);

/* The next item: *item points into the buffer, *len is its length in bytes.
 * ZF_ECORRUPT (reason in err) if it runs past the end, is not UTF-8, if
 * bytes follow the last item, or if every item has been read. */
int zf_vlen_next(zf_vlen_reader *r, const uint8_t **item, size_t *len, char *err, size_t errcap);

#endif
