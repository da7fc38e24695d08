/* test_awscred.c - the AWS CLI's credential chain against loopback servers
 * that check what the real ones check (tests/net/credserver.py: STS with
 * SigV4, IMDSv2 session tokens, the container authorization header, the SSO
 * bearer token; an S3 that accepts only the credentials they issued):
 * every source signs a read the server accepts; each pair of neighbouring
 * sources set at once picks the one the AWS CLI picks; temporary
 * credentials are refreshed before they expire, a failing refresh keeps the
 * last ones until they expire and then fails naming the source; an
 * ExpiredToken answer refreshes once and retries; no error holds a secret. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "check.h"
#include "net_server.h"
#include "store/s3.h"
#include "store/s3cred.h"

static char dir[256], url[64];
static net_server srv;

static void write_file(const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (!f) {
        perror(p);
        exit(2);
    }
    fputs(text, f);
    fclose(f);
}

static const char *const vars[] = {
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_EC2_METADATA_DISABLED", "AWS_CA_BUNDLE"};

/* The sources, in the AWS CLI's order. */
enum { ENV, ROLE, WEBID, SSO, CREDFILE, PROCESS, CONFFILE, CONTAINER, IMDS, NSRC };
static const char *const want_desc[NSRC] = {
    "environment", "assume role arn:aws:iam::123456789012:role/zf (from profile src)",
    "web identity (role arn:aws:iam::123456789012:role/web)",
    "SSO (account 123456789012, role zf-reader)", "credentials file (profile p)",
    "credential_process (profile p)", "config file (profile p)", "container credentials",
    "instance metadata (role zf-role)"};

/* the files and variables of the sources in mask, nothing else */
static void configure(unsigned mask)
{
    char v[512];
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
    snprintf(v, sizeof v, "%s/credentials", dir);
    setenv("AWS_SHARED_CREDENTIALS_FILE", v, 1);
    snprintf(v, sizeof v, "%s/config", dir);
    setenv("AWS_CONFIG_FILE", v, 1);
    snprintf(v, sizeof v, "%s/home", dir);
    setenv("HOME", v, 1);
    setenv("AWS_PROFILE", "p", 1);
    setenv("AWS_ENDPOINT_URL_STS", url, 1);
    setenv("AWS_ENDPOINT_URL_SSO", url, 1);
    char cred[1024] = "[src]\naws_access_key_id = AKSOURCE\naws_secret_access_key = source+Secret/1\n";
    char conf[2048] = "[profile p]\nregion = us-east-1\n";
    const char *keys = "aws_access_key_id = AKSOURCE\naws_secret_access_key = source+Secret/1\n";
    if (mask & 1u << ENV) {
        setenv("AWS_ACCESS_KEY_ID", "AKSOURCE", 1);
        setenv("AWS_SECRET_ACCESS_KEY", "source+Secret/1", 1);
    }
    if (mask & 1u << ROLE)
        strcat(conf, "role_arn = arn:aws:iam::123456789012:role/zf\nsource_profile = src\n");
    if (mask & 1u << WEBID) {
        snprintf(v, sizeof v, "%s/webtoken", dir);
        setenv("AWS_WEB_IDENTITY_TOKEN_FILE", v, 1);
        setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/web", 1);
    }
    if (mask & 1u << SSO)
        strcat(conf, "sso_session = zfsso\nsso_account_id = 123456789012\nsso_role_name = zf-reader\n");
    if (mask & 1u << CREDFILE)
        snprintf(cred + strlen(cred), sizeof cred - strlen(cred), "[p]\n%s", keys);
    if (mask & 1u << PROCESS)
        snprintf(conf + strlen(conf), sizeof conf - strlen(conf),
                 "credential_process = sh '%s/proc.sh' \"an arg\"\n", dir);
    if (mask & 1u << CONFFILE)
        strcat(conf, keys);
    strcat(conf, "[sso-session zfsso]\nsso_region = us-east-1\nsso_start_url = https://zf.test/start\n");
    if (mask & 1u << CONTAINER) {
        snprintf(v, sizeof v, "%s/container/creds", url);
        setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", v, 1);
        setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "container-auth", 1);
    }
    if (mask & 1u << IMDS)
        setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", url, 1);
    write_file("credentials", cred);
    write_file("config", conf);
}

static const char *const secrets[] = {"source+Secret", "web-identity-token", "sso-access-token",
                                      "container-auth", "tok-"};

static void no_secret(const char *text, const char *what)
{
    for (size_t i = 0; i < sizeof secrets / sizeof *secrets; i++)
        CHECK(!strstr(text, secrets[i]), "%s holds a secret: %s", what, text);
}

/* the source the chain picks now, its description into desc */
static int chain_desc(char *desc, size_t cap, char *err, size_t errcap)
{
    zf_s3cred_opts o = {0};
    zf_s3cred *c = NULL;
    *err = '\0';
    int rc = zf_s3cred_load(&o, &c, err, errcap);
    no_secret(err, "the error");
    if (rc == ZF_OK)
        zf_cred_describe(c->cred, desc, cap);
    zf_s3cred_free(c);
    return rc;
}

/* open s3://zarr/st at the server and read zarr.json with the chain's credentials */
static int read_through(zf_store **keep, char *err, size_t errcap)
{
    zf_s3_opts o = {.cred = {.endpoint = url}};
    zf_store *s = NULL;
    int rc = zf_store_open_s3("zarr", "st", &o, &s, err, errcap);
    zf_store_buf b = {0};
    size_t n = 0;
    if (rc == ZF_OK)
        rc = zf_store_read(s, "zarr.json", 1 << 20, &b, &n, NULL, err, errcap);
    if (rc == ZF_OK && (n != 9 || memcmp(b.p, "{\"a\": 1}\n", 9)))
        rc = ZF_ECORRUPT;
    free(b.p);
    if (keep && rc == ZF_OK)
        *keep = s;
    else
        zf_store_close(s);
    no_secret(err, "the error");
    return rc;
}

static void test_each_source(void)
{
    for (int i = 0; i < NSRC; i++) {
        configure(1u << i);
        char desc[160] = "", err[512];
        int rc = chain_desc(desc, sizeof desc, err, sizeof err);
        CHECK(rc == ZF_OK && !strcmp(desc, want_desc[i]), "source %d alone: %s (%s)", i, desc, err);
        rc = read_through(NULL, err, sizeof err);
        CHECK(rc == ZF_OK, "source %s signs a read the server accepts: %s", want_desc[i], err);
    }
}

static void test_precedence(void)
{
    for (int i = 0; i + 1 < NSRC; i++) {
        configure(1u << i | 1u << (i + 1));
        char desc[160] = "", err[512];
        int rc = chain_desc(desc, sizeof desc, err, sizeof err);
        CHECK(rc == ZF_OK && !strcmp(desc, want_desc[i]), "%s and %s set: %s picked (%s)",
              want_desc[i], want_desc[i + 1], desc, err);
    }
}

static void test_errors(void)
{
    char desc[160], err[512];
    configure(1u << WEBID);
    setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "/nonexistent/token", 1);
    CHECK(chain_desc(desc, sizeof desc, err, sizeof err) == ZF_EIO && strstr(err, "web identity") &&
              strstr(err, "/nonexistent/token"),
          "a missing token file: %s", err);
    configure(1u << CONTAINER);
    setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "wrong-auth", 1);
    CHECK(chain_desc(desc, sizeof desc, err, sizeof err) == ZF_EIO && strstr(err, "container") &&
              strstr(err, "401") && !strstr(err, "wrong-auth"),
          "a wrong container authorization: %s", err);
    setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://192.0.2.1/creds", 1);
    CHECK(chain_desc(desc, sizeof desc, err, sizeof err) == ZF_EINVAL && strstr(err, "FULL_URI"),
          "container credentials over http from a host that is no loopback: %s", err);
    configure(1u << SSO);
    write_file("home/.aws/sso/cache/c1bcd8f6f5eb1d3e0a3ff6b1d2c33a4b1cb6fe18.json", "x");
    unsetenv("HOME");
    setenv("HOME", "/nonexistent", 1);
    CHECK(chain_desc(desc, sizeof desc, err, sizeof err) == ZF_EIO && strstr(err, "aws sso login"),
          "no SSO token cached: %s", err);
    configure(1u << IMDS);
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
    CHECK(chain_desc(desc, sizeof desc, err, sizeof err) == ZF_ENOTFOUND,
          "AWS_EC2_METADATA_DISABLED: no source: %s", err);
    configure(1u << ROLE);
    write_file("config", "[profile p]\nrole_arn = arn:aws:iam::123456789012:role/zf\n"
                         "source_profile = q\n[profile q]\nrole_arn = arn:aws:iam::123456789012:role/zf\n"
                         "source_profile = p\n");
    CHECK(chain_desc(desc, sizeof desc, err, sizeof err) == ZF_EINVAL && strstr(err, "loop"),
          "roles sourcing each other: %s", err);
    configure(1u << PROCESS);
    write_file("config", "[profile p]\ncredential_process = /nonexistent/helper\n");
    CHECK(chain_desc(desc, sizeof desc, err, sizeof err) == ZF_EIO && strstr(err, "credential_process"),
          "a process that cannot run: %s", err);
}

/* an IMDS provider of the server at u; the thread starts with the first get */
static zf_cred *imds_provider(const char *u, char *err, size_t errcap)
{
    configure(1u << IMDS);
    setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", u, 1);
    zf_s3cred_opts o = {0};
    zf_s3cred *c = NULL;
    if (zf_s3cred_load(&o, &c, err, errcap) != ZF_OK)
        return NULL;
    zf_cred *p = c->cred;
    c->cred = NULL;
    zf_s3cred_free(c);
    return p;
}

static long ctl(const net_server *s, const char *what)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "curl -sf http://127.0.0.1:%u/_ctl/%s", s->port, what);
    FILE *f = popen(cmd, "r");
    long n = -1;
    if (f && fscanf(f, "%ld", &n) != 1)
        n = -1;
    if (f)
        pclose(f);
    return n;
}

static void test_refresh(void)
{
    net_server s4;
    char root[300], u[64], err[512] = "";
    snprintf(root, sizeof root, "%s/root", dir);
    char *const argv[] = {"net/credserver.py", root, "--ttl", "4", NULL};
    if (net_server_start_argv(&s4, argv)) {
        CHECK(0, "cannot start credserver.py --ttl 4");
        return;
    }
    snprintf(u, sizeof u, "http://127.0.0.1:%u", s4.port);
    zf_cred *p = imds_provider(u, err, sizeof err);
    CHECK(p, "an IMDS provider: %s", err);
    const zf_cred_value *v = NULL;
    if (p) {
        CHECK(zf_cred_get(p, &v, err, sizeof err) == ZF_OK && v->gen == 1, "the first value");
        zf_cred_put(p, v);
        sleep(4); /* refreshed ahead of the expiry, at 3 s (lead 1/4 of 4 s) */
        CHECK(ctl(&s4, "issued") == 2, "refreshed in the background: %ld issued", ctl(&s4, "issued"));
        CHECK(zf_cred_get(p, &v, err, sizeof err) == ZF_OK && v->gen == 2,
              "the refreshed value is used: %s", err);
        zf_cred_put(p, v);
        ctl(&s4, "fail/1");
        sleep(1);
        CHECK(zf_cred_get(p, &v, err, sizeof err) == ZF_OK && v->gen == 2,
              "a failing refresh keeps the last value while it is valid: %s", err);
        zf_cred_put(p, v);
        sleep(3); /* past the second value's expiry */
        CHECK(zf_cred_get(p, &v, err, sizeof err) == ZF_EIO && strstr(err, "instance metadata") &&
                  strstr(err, "HTTP 500"),
              "once expired, a failing refresh fails the request, naming the source: %s", err);
        no_secret(err, "the error");
        ctl(&s4, "fail/0");
        CHECK(zf_cred_get(p, &v, err, sizeof err) == ZF_OK && v->gen >= 3,
              "the next request refreshes once the source answers again: %s", err);
        zf_cred_put(p, v);
        zf_cred_free(p);
    }
    net_server_stop(&s4);
}

static void test_expired_token(void)
{
    net_server s5;
    char root[300], err[512] = "";
    snprintf(root, sizeof root, "%s/root", dir);
    char *const argv[] = {"net/credserver.py", root, "--enforce", "5.5", NULL};
    if (net_server_start_argv(&s5, argv)) {
        CHECK(0, "cannot start credserver.py --enforce");
        return;
    }
    char saved[64];
    snprintf(saved, sizeof saved, "%s", url);
    snprintf(url, sizeof url, "http://127.0.0.1:%u", s5.port);
    configure(1u << CONTAINER);
    zf_store *s = NULL;
    CHECK(read_through(&s, err, sizeof err) == ZF_OK, "container credentials: %s", err);
    sleep(6);
    zf_store_buf b = {0};
    size_t n;
    zf_stamp st;
    if (s) {
        CHECK(zf_store_read(s, "zarr.json", 1 << 20, &b, &n, &st, err, sizeof err) == ZF_OK,
              "a GET answered ExpiredToken refreshes and retries: %s", err);
        CHECK(ctl(&s5, "expired") == 1 && ctl(&s5, "issued") == 2, "one ExpiredToken, one refresh");
        CHECK(zf_store_stamp_why(s, "zarr.json", &st, err, sizeof err) == ZF_OK,
              "a HEAD with fresh credentials: %s", err);
    }
    free(b.p);
    zf_store_close(s);
    snprintf(url, sizeof url, "%s", saved);
    net_server_stop(&s5);
}

/* the SSO cache file of session "zfsso" (named by its SHA-1) */
static void write_sso_cache(void)
{
    unsigned char d[20];
    unsigned n = 0;
    EVP_Digest("zfsso", 5, d, &n, EVP_sha1(), NULL);
    char name[256] = "home/.aws/sso/cache/";
    for (unsigned i = 0; i < n; i++)
        snprintf(name + strlen(name), 3, "%02x", d[i]);
    strcat(name, ".json");
    write_file(name, "{\"startUrl\": \"https://zf.test/start\", \"region\": \"us-east-1\", "
                     "\"accessToken\": \"sso-access-token\", \"expiresAt\": \"2099-01-01T00:00:00Z\"}");
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/zf-awscred-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        return 2;
    char p[512];
    const char *sub[] = {"root", "root/st", "home", "home/.aws", "home/.aws/sso", "home/.aws/sso/cache"};
    for (size_t i = 0; i < sizeof sub / sizeof *sub; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, sub[i]);
        mkdir(p, 0700);
    }
    write_file("root/st/zarr.json", "{\"a\": 1}\n");
    write_file("webtoken", "web-identity-token\n");
    write_file("proc.sh", "[ \"$1\" = 'an arg' ] || exit 3\n"
                          "echo '{\"Version\": 1, \"AccessKeyId\": \"AKSOURCE\", \"SecretAccessKey\": "
                          "\"source+Secret/1\", \"Expiration\": \"2099-01-01T00:00:00Z\"}'\n");
    write_sso_cache();
    snprintf(p, sizeof p, "%s/root", dir);
    char *const argv[] = {"net/credserver.py", p, NULL};
    if (net_server_start_argv(&srv, argv)) {
        fprintf(stderr, "cannot start tests/net/credserver.py\n");
        return 2;
    }
    snprintf(url, sizeof url, "http://127.0.0.1:%u", srv.port);
    test_each_source();
    test_precedence();
    test_errors();
    test_refresh();
    test_expired_token();
    net_server_stop(&srv);
    snprintf(p, sizeof p, "rm -rf '%s'", dir);
    if (system(p)) {
    }
    return check_summary("test_awscred");
}
