/* awssts.c - temporary credentials from AWS STS: AssumeRole (signed with
 * the credentials of the role's source) and AssumeRoleWithWebIdentity
 * (unsigned; the token read from its file at every fetch), POSTed as the
 * SDKs do; the XML answer read with expat (no DTD). */
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/err.h"
#include "base/sbuf.h"
#include "store/aws_impl.h"
#include "store/s3cred.h"
#include "store/sigv4.h"

#define ERR(code, ...) ((err && errcap ? (void)snprintf(err, errcap, __VA_ARGS__) : (void)0), (code))

/* A web identity token longer than this is refused. */
#define TOKEN_MAX (64u << 10)
/* Longest text of one XML element kept. */
#define LEAF_MAX (16u << 10)

enum { L_ID, L_SECRET, L_TOKEN, L_EXPIRES, L_CODE, L_MESSAGE, L_N };
static const char *const leaf_names[L_N] = {"AccessKeyId", "SecretAccessKey", "SessionToken",
                                             "Expiration", "Code", "Message"};

/* the texts of the elements named in leaf_names (the first of each) */
typedef struct xml_leaves {
    XML_Parser xp;
    int cur;          /* index of the leaf being read, or -1 */
    zf_sbuf val[L_N];
    int bad;
} xml_leaves;

static const char *local_name(const char *n)
{
    const char *c = strrchr(n, ' '); /* expat without namespaces: the whole name */
    c = c ? c + 1 : n;
    const char *colon = strrchr(c, ':');
    return colon ? colon + 1 : c;
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    xml_leaves *x = ud;
    x->cur = -1;
    for (int i = 0; i < L_N; i++)
        if (!strcmp(local_name(name), leaf_names[i]) && !x->val[i].data)
            x->cur = i;
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    xml_leaves *x = ud;
    if (x->cur >= 0 && !x->val[x->cur].data)
        zf_sbuf_add(&x->val[x->cur], "", 0); /* an empty element: "" */
    x->cur = -1;
}

static void XMLCALL on_text(void *ud, const XML_Char *t, int len)
{
    xml_leaves *x = ud;
    if (x->cur < 0)
        return;
    zf_sbuf *b = &x->val[x->cur];
    if (b->len + (size_t)len > LEAF_MAX) {
        x->bad = 1;
        XML_StopParser(x->xp, XML_FALSE);
        return;
    }
    zf_sbuf_add(b, t, (size_t)len);
}

static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
                               const XML_Char *pubid, int internal)
{
    xml_leaves *x = ud;
    x->bad = 1;
    XML_StopParser(x->xp, XML_FALSE);
}

static void leaves_free(xml_leaves *x)
{
    for (int i = 0; i < L_N; i++) {
        if (x->val[i].data)
            explicit_bzero(x->val[i].data, x->val[i].len);
        free(x->val[i].data);
    }
}

static int leaves_parse(xml_leaves *x, const char *xml, size_t n)
{
    memset(x, 0, sizeof *x);
    x->cur = -1;
    x->xp = XML_ParserCreate("UTF-8");
    if (!x->xp)
        return ZF_ENOMEM;
    XML_SetUserData(x->xp, x);
    XML_SetElementHandler(x->xp, on_start, on_end);
    XML_SetCharacterDataHandler(x->xp, on_text);
    XML_SetStartDoctypeDeclHandler(x->xp, on_doctype);
    int ok = n <= ZF_AWS_DOC_MAX && XML_Parse(x->xp, xml, (int)n, XML_TRUE) == XML_STATUS_OK &&
             !x->bad;
    XML_ParserFree(x->xp);
    for (int i = 0; i < L_N; i++)
        ok &= !x->val[i].failed;
    return ok ? ZF_OK : ZF_ECORRUPT;
}

/* a leaf's text cut to fit a message, control characters as '?' */
static const char *clean(xml_leaves *x, int i)
{
    char *s = x->val[i].data;
    if (!s)
        return "";
    for (char *p = s; *p; p++)
        if ((unsigned char)*p < ' ' || *p == 0x7f)
            *p = '?';
    if (strlen(s) > 200)
        s[200] = '\0';
    return s;
}

int zf_aws_sts_parse(const char *xml, size_t n, const char *action, zf_cred_value *v, char *err,
                     size_t errcap)
{
    xml_leaves x;
    int rc = leaves_parse(&x, xml, n);
    if (rc == ZF_ENOMEM) {
        leaves_free(&x);
        return rc;
    }
    if (rc != ZF_OK || !x.val[L_ID].data || !x.val[L_SECRET].data || !x.val[L_EXPIRES].data) {
        rc = ERR(ZF_EIO, "STS %s: the answer holds no credentials", action);
    } else if (zf_aws_time(x.val[L_EXPIRES].data, &v->expires) != ZF_OK) {
        rc = ERR(ZF_EIO, "STS %s: an Expiration that is no time: %.40s", action, clean(&x, L_EXPIRES));
    } else {
        v->id = x.val[L_ID].data;
        v->secret = x.val[L_SECRET].data;
        v->token = x.val[L_TOKEN].data;
        x.val[L_ID] = x.val[L_SECRET] = x.val[L_TOKEN] = (zf_sbuf){0};
    }
    leaves_free(&x);
    return rc;
}

/* the credentials of an STS answer (status 200) or the reason of its error */
static int read_answer(const zf_net_req *r, const char *body, const char *action,
                       zf_cred_value *v, char *err, size_t errcap)
{
    if (r->rc == ZF_OK)
        return zf_aws_sts_parse(body, r->n, action, v, err, errcap);
    xml_leaves x;
    int prc = leaves_parse(&x, body, r->n);
    int rc = ERR(ZF_EIO, "STS %s: %s%s%s%s%s", action, r->err,
                 prc == ZF_OK && x.val[L_CODE].data ? " " : "", prc == ZF_OK ? clean(&x, L_CODE) : "",
                 prc == ZF_OK && x.val[L_MESSAGE].data ? ": " : "",
                 prc == ZF_OK ? clean(&x, L_MESSAGE) : "");
    leaves_free(&x);
    return rc;
}

/* append "&name=value" form-encoded */
static void form(zf_sbuf *b, const char *name, const char *value)
{
    zf_sbuf_printf(b, "&%s=", name);
    zf_sigv4_encode(b, value, 0);
}

/* the credentials a role is assumed with (its inner source's, fetched now
 * unless they are static keys) */
static int inner_creds(zf_aws_src *s, zf_cred_value *in, char *err, size_t errcap)
{
    char desc[160] = "the role's source";
    int rc = zf_aws_fetch(s->inner, in, desc, sizeof desc, err, errcap);
    return rc;
}

/* the signed headers of an AssumeRole POST of body to s->endpoint */
static int sign(zf_aws_src *s, const zf_cred_value *in, const zf_sbuf *body, char ***lines)
{
    const char *auth = strstr(s->endpoint, "://") + 3;
    size_t alen = strcspn(auth, "/");
    char host[512], path[1024];
    snprintf(host, sizeof host, "%.*s", (int)alen, auth);
    snprintf(path, sizeof path, "%s/", auth[alen] ? auth + alen : "");
    char hash[65];
    if (zf_sigv4_sha256_hex(body->data, body->len, hash) != ZF_OK)
        return ZF_EIO;
    zf_sigv4_param h[1] = {{"content-type", "application/x-www-form-urlencoded; charset=utf-8"}};
    zf_sigv4_cred c = {in->id, in->secret, in->token, s->region, "sts"};
    zf_sigv4_req r = {.method = "POST", .host = host, .path = path, .headers = h, .nheaders = 1,
                      .payload_hash = hash, .time = (int64_t)time(NULL)};
    return zf_sigv4_sign(&c, &r, lines);
}

int zf_aws_sts_fetch(zf_aws_src *s, zf_cred_value *v, char *err, size_t errcap)
{
    int web = s->kind == ZF_AWS_WEBID;
    const char *action = web ? "AssumeRoleWithWebIdentity" : "AssumeRole";
    zf_sbuf body = {0};
    zf_cred_value in = {0};
    char *token = NULL, **sig = NULL;
    int rc = ZF_OK;
    zf_sbuf_printf(&body, "Action=%s&Version=2011-06-15", action);
    form(&body, "RoleArn", s->role_arn);
    form(&body, "RoleSessionName", s->session_name);
    if (s->external_id)
        form(&body, "ExternalId", s->external_id);
    if (web) {
        rc = zf_aws_read_file(s->token_file, TOKEN_MAX, &token, err, errcap);
        if (rc == ZF_ENOTFOUND)
            rc = ERR(ZF_EIO, "the web identity token file %s does not exist", s->token_file);
        size_t tl = token ? strlen(token) : 0;
        while (tl && (token[tl - 1] == '\n' || token[tl - 1] == '\r' || token[tl - 1] == ' '))
            token[--tl] = '\0';
        if (rc == ZF_OK)
            form(&body, "WebIdentityToken", token);
    } else {
        rc = inner_creds(s, &in, err, errcap);
        if (rc == ZF_OK)
            rc = sign(s, &in, &body, &sig);
    }
    if (rc == ZF_OK && body.failed)
        rc = ZF_ENOMEM;
    const char *hdrs[8] = {"Content-Type: application/x-www-form-urlencoded; charset=utf-8",
                           "Accept: application/xml"};
    for (size_t i = 0, k = 2; sig && sig[i] && k < 7; i++)
        hdrs[k++] = sig[i];
    zf_store_buf buf = {0};
    char url[1100], nerr[160] = "";
    snprintf(url, sizeof url, "%s/", s->endpoint);
    zf_net_req r = {.url = url, .method = "POST", .body = body.data, .body_len = body.len,
                    .headers = hdrs, .grow = &buf, .max = ZF_AWS_DOC_MAX, .err = nerr,
                    .errcap = sizeof nerr};
    if (rc == ZF_OK) {
        zf_net_run(s->net, &r, 1);
        if (r.rc == ZF_ENOMEM)
            rc = ZF_ENOMEM;
        else if (!buf.p && r.rc != ZF_OK)
            rc = ERR(ZF_EIO, "STS %s: %s", action, nerr);
        else
            rc = read_answer(&r, (const char *)buf.p, action, v, err, errcap);
    }
    if (buf.p)
        explicit_bzero(buf.p, buf.cap);
    free(buf.p);
    if (body.data)
        explicit_bzero(body.data, body.len);
    free(body.data);
    if (token)
        explicit_bzero(token, strlen(token));
    free(token);
    zf_sigv4_free(sig);
    zf_cred_value_clear(&in);
    return rc;
}
