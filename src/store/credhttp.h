/* credhttp.h - one exchange of a credential source over HTTP: a small
 * document (a token, a credentials answer) fetched with GET, PUT or POST
 * through a net engine, its body kept also when the server refuses (for
 * the caller to read the server's error code from).  Bodies may hold
 * secrets: they are wiped when freed. */
#ifndef ZF_CREDHTTP_H
#define ZF_CREDHTTP_H

#include <stddef.h>

#include "store/net.h"

/* Longest document a credential source may answer with. */
#define ZF_CREDHTTP_MAX (64u << 10)

/* One exchange; every field the caller's. */
typedef struct zf_credhttp_req {
    const char *url;
    const char *method;           /* "POST", "PUT", or NULL: GET */
    const char *const *headers;   /* "Name: value" lines, NULL-terminated, or NULL */
    const void *body;             /* of a POST or PUT */
    size_t body_len;
    const char *what;             /* the source, first word of every reason */
} zf_credhttp_req;

/* Run q on net.  ZF_OK: *doc holds the body (NUL-terminated).  Otherwise a
 * negative ZF_E* with "WHAT: REASON" in err (ZF_EIO for any refusal), *doc
 * the start of the error body when there was one (else NULL), *status the
 * HTTP status (0: no answer).  *doc is the caller's: zf_credhttp_free. */
int zf_credhttp_fetch(zf_net *net, const zf_credhttp_req *q, char **doc, long *status, char *err,
                      size_t errcap);

/* Wipe and free a document from zf_credhttp_fetch; NULL is allowed. */
void zf_credhttp_free(char *doc);

#endif
