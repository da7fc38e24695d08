/* credhttp.c - one small document from a credential source (credhttp.h). */
#include "store/credhttp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

void zf_credhttp_free(char *doc)
{
    if (doc) {
        explicit_bzero(doc, strlen(doc));
        free(doc);
    }
}

int zf_credhttp_fetch(zf_net *net, const zf_credhttp_req *q, char **doc, long *status, char *err,
                      size_t errcap)
{
    *doc = NULL;
    zf_store_buf buf = {0};
    char nerr[160] = "";
    zf_net_req r = {.url = q->url, .headers = q->headers, .method = q->method, .body = q->body,
                    .body_len = q->body_len, .grow = &buf, .max = ZF_CREDHTTP_MAX, .err = nerr,
                    .errcap = sizeof nerr};
    zf_net_run(net, &r, 1);
    if (status)
        *status = r.status;
    int rc = r.rc;
    if ((rc == ZF_OK || (r.n && r.status >= 300)) && zf_store_buf_reserve(&buf, r.n + 1) != ZF_OK)
        rc = ZF_ENOMEM;
    else if (buf.p && (rc == ZF_OK || r.status >= 300)) {
        buf.p[r.n] = '\0';
        *doc = (char *)buf.p;
        buf.p = NULL;
    }
    if (buf.p)
        explicit_bzero(buf.p, buf.cap);
    free(buf.p);
    if (rc == ZF_OK || rc == ZF_ENOMEM)
        return rc;
    if (err && errcap)
        snprintf(err, errcap, "%s: %s", q->what, nerr);
    return ZF_EIO;
}
