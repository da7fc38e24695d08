/* test_s3cred.c - S3 credentials as the AWS CLI finds them: environment
 * variables over the profile in ~/.aws/credentials over ~/.aws/config,
 * region and endpoint precedence, -o anonymous/region/endpoint, and errors
 * that never hold a secret.  Uses temporary files and its own environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "check.h"
#include "store/s3cred.h"

static char dir[256], cred_path[300], conf_path[300];

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(2);
    }
    fputs(text, f);
    fclose(f);
}

/* a clean AWS environment pointing at the temporary files */
static void reset_env(void)
{
    const char *vars[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                          "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL",
                          "AWS_ENDPOINT_URL_S3", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_CA_BUNDLE"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
    setenv("AWS_SHARED_CREDENTIALS_FILE", cred_path, 1);
    setenv("AWS_CONFIG_FILE", conf_path, 1);
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1); /* on an EC2 machine too */
}

static const char *cred_text =
    "# shared credentials\r\n"
    "[default]\r\n"
    "aws_access_key_id = DEFAULTKEY\r\n"
    "aws_secret_access_key = defaultSECRET/xyz+1\r\n"
    "\n"
    "[ dev ]\n"
    "; a comment\n"
    "aws_access_key_id=DEVKEY\n"
    "aws_secret_access_key=   devSECRET==   \n"
    "aws_session_token = devTOKEN\n"
    "[half]\n"
    "aws_access_key_id = HALFKEY\n";

static const char *conf_text =
    "[default]\n"
    "region = eu-west-3\n"
    "[profile dev]\n"
    "region = us-west-2\n"
    "ca_bundle = /etc/dev-ca.pem\n"
    "endpoint_url = http://127.0.0.1:9/\n"
    "s3 =\n"
    "  endpoint_url = http://127.0.0.1:7070\n"
    "  addressing_style = path\n"
    "[profile sso]\n"
    "sso_session = corp\n"
    "sso_account_id = 123456789012\n"
    "[profile conf]\n"
    "aws_access_key_id = CONFKEY\n"
    "aws_secret_access_key = confSECRET\n"
    "[dev]\n"
    "region = not-a-config-profile\n";

static const char *secrets[] = {"defaultSECRET", "devSECRET", "devTOKEN", "confSECRET", "envSECRET",
                                "envTOKEN"};

/* the provider's current value (it keeps holding it) */
static const zf_cred_value *V(zf_s3cred *c)
{
    const zf_cred_value *v = NULL;
    if (zf_cred_get(c->cred, &v, NULL, 0) == ZF_OK)
        zf_cred_put(c->cred, v);
    return v;
}

/* the provider's source, as messages name it */
static const char *SRC(zf_s3cred *c)
{
    static char d[160];
    zf_cred_describe(c->cred, d, sizeof d);
    return d;
}

/* load with o; also checks that err holds no secret */
static int load(const zf_s3cred_opts *o, zf_s3cred **c, char *err, size_t errcap)
{
    *err = '\0';
    int rc = zf_s3cred_load(o, c, err, errcap);
    for (size_t i = 0; i < sizeof secrets / sizeof *secrets; i++)
        CHECK(!strstr(err, secrets[i]), "a secret in the error text: %s", err);
    return rc;
}

static void test_env_first(void)
{
    reset_env();
    setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "envSECRET", 1);
    setenv("AWS_SESSION_TOKEN", "envTOKEN", 1);
    setenv("AWS_PROFILE", "dev", 1);
    setenv("AWS_DEFAULT_REGION", "ap-south-1", 1);
    zf_s3cred_opts o = {0};
    zf_s3cred *c;
    char err[512];
    CHECK(load(&o, &c, err, sizeof err) == ZF_OK, "env: %s", err);
    CHECK(!strcmp(V(c)->id, "ENVKEY") && !strcmp(V(c)->secret, "envSECRET") &&
              !strcmp(V(c)->token, "envTOKEN") && !strcmp(SRC(c), "environment"),
          "environment variables win over AWS_PROFILE's file entries");
    CHECK(!strcmp(c->region, "ap-south-1"), "AWS_DEFAULT_REGION over the config file: %s", c->region);
    CHECK(c->endpoint && !strcmp(c->endpoint, "http://127.0.0.1:7070"),
          "the profile's s3 endpoint_url (nested) wins over its endpoint_url: %s", c->endpoint);
    zf_s3cred_free(c);
    setenv("AWS_REGION", "ca-central-1", 1);
    setenv("AWS_ENDPOINT_URL", "https://s3.example.test:8443///", 1);
    CHECK(load(&o, &c, err, sizeof err) == ZF_OK, "env: %s", err);
    CHECK(!strcmp(c->region, "ca-central-1"), "AWS_REGION over AWS_DEFAULT_REGION: %s", c->region);
    CHECK(!strcmp(c->endpoint, "https://s3.example.test:8443"), "AWS_ENDPOINT_URL, no trailing '/': %s",
          c->endpoint);
    zf_s3cred_free(c);
    setenv("AWS_ENDPOINT_URL_S3", "http://[::1]:9000", 1);
    o = (zf_s3cred_opts){.region = "opt-region", .endpoint = "http://localhost:1234/base/"};
    CHECK(load(&o, &c, err, sizeof err) == ZF_OK, "env: %s", err);
    CHECK(!strcmp(c->region, "opt-region") && !strcmp(c->endpoint, "http://localhost:1234/base"),
          "-o region= and -o endpoint= win: %s %s", c->region, c->endpoint);
    zf_s3cred_free(c);
    o = (zf_s3cred_opts){0};
    CHECK(load(&o, &c, err, sizeof err) == ZF_OK && !strcmp(c->endpoint, "http://[::1]:9000"),
          "AWS_ENDPOINT_URL_S3 over AWS_ENDPOINT_URL");
    zf_s3cred_free(c);
    unsetenv("AWS_SECRET_ACCESS_KEY");
    CHECK(load(&o, &c, err, sizeof err) == ZF_EINVAL && strstr(err, "AWS_SECRET_ACCESS_KEY"),
          "half a key pair in the environment: %s", err);
}

static void test_profiles(void)
{
    reset_env();
    zf_s3cred_opts o = {0};
    zf_s3cred *c;
    char err[512];
    CHECK(load(&o, &c, err, sizeof err) == ZF_OK, "default: %s", err);
    CHECK(!strcmp(V(c)->id, "DEFAULTKEY") && !strcmp(V(c)->secret, "defaultSECRET/xyz+1") &&
              !V(c)->token && !strcmp(SRC(c), "credentials file (profile default)"),
          "the default profile (CRLF lines): [%s]", V(c)->id);
    CHECK(!strcmp(c->region, "eu-west-3") && !c->endpoint && !c->ca_bundle,
          "[default] of the config file: %s", c->region);
    zf_s3cred_free(c);
    setenv("AWS_PROFILE", "dev", 1);
    CHECK(load(&o, &c, err, sizeof err) == ZF_OK, "dev: %s", err);
    CHECK(!strcmp(V(c)->id, "DEVKEY") && !strcmp(V(c)->secret, "devSECRET==") &&
              V(c)->token && !strcmp(V(c)->token, "devTOKEN"),
          "[ dev ], values trimmed, with a session token");
    CHECK(!strcmp(c->region, "us-west-2"), "[profile dev] region, not [dev] of the config: %s",
          c->region);
    CHECK(c->ca_bundle && !strcmp(c->ca_bundle, "/etc/dev-ca.pem"), "the profile's ca_bundle");
    zf_s3cred_free(c);
    setenv("AWS_CA_BUNDLE", "/env/ca.pem", 1);
    CHECK(load(&o, &c, err, sizeof err) == ZF_OK && !strcmp(c->ca_bundle, "/env/ca.pem"),
          "AWS_CA_BUNDLE over the profile's ca_bundle");
    zf_s3cred_free(c);
    unsetenv("AWS_CA_BUNDLE");
    setenv("AWS_PROFILE", "conf", 1);
    CHECK(load(&o, &c, err, sizeof err) == ZF_OK && !strcmp(V(c)->id, "CONFKEY") &&
              !strcmp(SRC(c), "config file (profile conf)") && !strcmp(c->region, "us-east-1"),
          "keys in the config file's [profile conf], default region: %s", err);
    zf_s3cred_free(c);
    setenv("AWS_PROFILE", "sso", 1);
    CHECK(load(&o, &c, err, sizeof err) == ZF_EINVAL && strstr(err, "[sso-session corp]"),
          "an SSO profile whose sso-session section is missing: %s", err);
    setenv("AWS_PROFILE", "nosuch", 1);
    CHECK(load(&o, &c, err, sizeof err) == ZF_EINVAL && strstr(err, "nosuch"), "missing profile: %s",
          err);
    setenv("AWS_PROFILE", "half", 1);
    CHECK(load(&o, &c, err, sizeof err) == ZF_EINVAL && strstr(err, "half"), "half a pair: %s", err);
    o.anonymous = 1;
    CHECK(load(&o, &c, err, sizeof err) == ZF_OK && !c->cred,
          "-o anonymous reads no keys: %s", err);
    zf_s3cred_free(c);
}

static void test_no_files(void)
{
    reset_env();
    char none[300];
    snprintf(none, sizeof none, "%s/absent", dir);
    setenv("AWS_SHARED_CREDENTIALS_FILE", none, 1);
    setenv("AWS_CONFIG_FILE", none, 1);
    zf_s3cred_opts o = {0};
    zf_s3cred *c;
    char err[512];
    CHECK(load(&o, &c, err, sizeof err) == ZF_ENOTFOUND && strstr(err, "anonymous"),
          "no credentials anywhere: %s", err);
    o.anonymous = 1;
    CHECK(load(&o, &c, err, sizeof err) == ZF_OK && !strcmp(c->region, "us-east-1") && !c->endpoint,
          "anonymous defaults");
    zf_s3cred_free(c);
    const char *bad[] = {"ftp://x", "http://", "http://u:p@host", "http://h/a b", "http://h/?q=1",
                         "ftp://u:hunter2@h", "http://u:hun/ter2@h", "gs://u:hunter2@b"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        o.endpoint = bad[i];
        CHECK(load(&o, &c, err, sizeof err) == ZF_EINVAL && !strstr(err, "ter2"),
              "endpoint %s refused without its password: %s", bad[i], err);
    }
    o.endpoint = NULL;
    setenv("AWS_ENDPOINT_URL", "ftp://user:hunter2@h", 1); /* the environment's, as -o endpoint= */
    CHECK(load(&o, &c, err, sizeof err) == ZF_EINVAL && !strstr(err, "hunter2"),
          "AWS_ENDPOINT_URL with a password refused without it: %s", err);
    unsetenv("AWS_ENDPOINT_URL");
    o.endpoint = NULL;
    o.region = "us-east-1/../x";
    CHECK(load(&o, &c, err, sizeof err) == ZF_EINVAL, "a region with '/' refused");
    setenv("AWS_CONFIG_FILE", "/dev/null", 1); /* empty, as the AWS CLI reads it */
    setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null", 1);
    o = (zf_s3cred_opts){0};
    CHECK(load(&o, &c, err, sizeof err) == ZF_ENOTFOUND && strstr(err, "anonymous"),
          "/dev/null as both files: no credentials, no error about them: %s", err);
    setenv("AWS_ACCESS_KEY_ID", "KEY", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "envSECRET", 1);
    CHECK(load(&o, &c, err, sizeof err) == ZF_OK, "/dev/null as both files, keys in the "
          "environment: %s", err);
    zf_s3cred_free(c);
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    setenv("AWS_CONFIG_FILE", none, 1);
    setenv("AWS_SHARED_CREDENTIALS_FILE", dir, 1); /* a directory */
    o = (zf_s3cred_opts){0};
    CHECK(load(&o, &c, err, sizeof err) == ZF_ECORRUPT, "a directory as credentials file: %s", err);
    reset_env();
    setenv("AWS_ACCESS_KEY_ID", "KEY WITH SPACE", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "envSECRET", 1);
    CHECK(load(&o, &c, err, sizeof err) == ZF_EINVAL, "a key id that would break the header: %s", err);
    setenv("AWS_ACCESS_KEY_ID", "KEY", 1);
    setenv("AWS_SESSION_TOKEN", "envTOKEN\r\nX: y", 1);
    CHECK(load(&o, &c, err, sizeof err) == ZF_EINVAL, "a token with CR LF: %s", err);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/zf-test-s3cred.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    snprintf(cred_path, sizeof cred_path, "%s/credentials", dir);
    snprintf(conf_path, sizeof conf_path, "%s/config", dir);
    write_file(cred_path, cred_text);
    write_file(conf_path, conf_text);
    test_env_first();
    test_profiles();
    test_no_files();
    unlink(cred_path);
    unlink(conf_path);
    rmdir(dir);
    return check_summary("test_s3cred");
}
