/* err.h - the one error enum of the zarrfs core.
 *
 * Core functions return ZF_OK (0) or a negative zf_err.  Only the FUSE layer
 * (fs/) turns these into errno values, through zf_err_errno(). */
#ifndef ZF_ERR_H
#define ZF_ERR_H

#include <stddef.h>

typedef enum zf_err {
    ZF_OK = 0,
    ZF_ENOTFOUND = -1,    /* key / node does not exist */
    ZF_EIO = -2,          /* the store could not be read */
    ZF_ECORRUPT = -3,     /* data or metadata is damaged (bad JSON, bad chunk) */
    ZF_EUNSUPPORTED = -4, /* valid, but uses something zarrfs does not read */
    ZF_ENOMEM = -5,       /* allocation failed or a size bound was exceeded */
    ZF_EINVAL = -6,       /* bad argument from the caller (options, offsets) */
    ZF_ESTALE = -7,       /* the store changed since the view was computed */
    ZF_ETIMEDOUT = -8,    /* the request's time budget was spent (base/deadline.h) */
    ZF_ERANGE = -9,       /* a time stamp outside what its decoding holds (chunk/convert.h) */
} zf_err;

/* Short static description of an error code. */
const char *zf_strerror(int err);

/* errno value for an error code (for the FUSE boundary only). */
int zf_err_errno(int err);

/* Format a one-line reason into err (if err and errcap are non-zero);
 * returns code, so callers can `return zf_errf(err, errcap, ZF_EINVAL, ...)`. */
int zf_errf(char *err, size_t errcap, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
