/* err.c - error descriptions and errno mapping. */
#include "base/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

const char *zf_strerror(int err)
{
    switch (err) {
    case ZF_OK: return "success";
    case ZF_ENOTFOUND: return "not found";
    case ZF_EIO: return "input/output error";
    case ZF_ECORRUPT: return "corrupt data";
    case ZF_EUNSUPPORTED: return "unsupported";
    case ZF_ENOMEM: return "out of memory";
    case ZF_EINVAL: return "invalid argument";
    case ZF_ESTALE: return "the store changed while mounted";
    case ZF_ETIMEDOUT: return "the request's time budget was spent";
    case ZF_ERANGE: return "a time stamp outside the ns range";
    default: return "unknown error";
    }
}

int zf_err_errno(int err)
{
    switch (err) {
    case ZF_OK: return 0;
    case ZF_ENOTFOUND: return ENOENT;
    case ZF_ENOMEM: return ENOMEM;
    case ZF_EINVAL: return EINVAL;
    default: return EIO;
    }
}

int zf_errf(char *err, size_t errcap, int code, const char *fmt, ...)
{
    if (err && errcap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errcap, fmt, ap);
        va_end(ap);
    }
    return code;
}
