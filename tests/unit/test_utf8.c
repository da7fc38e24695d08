/* test_utf8.c - control characters (base/utf8.h) and how the log shows them:
 * C0, DEL, C1 (U+0080-U+009F) and bidi overrides and isolates (U+202A-U+202E,
 * U+2066-U+2069) are control characters, written in log lines as \xNN per
 * byte (issue 24), as invalid UTF-8 is; other characters pass unchanged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/utf8.h"
#include "check.h"

static void test_chars(void)
{
    struct {
        const char *s;
        size_t len;
        int control;
    } cases[] = {
        {"a", 1, 0},           {"\t", 1, 1},           {"\x7f", 1, 1},
        {"\xc2\x80", 2, 1},    {"\xc2\x85", 2, 1},     {"\xc2\x9b", 2, 1},
        {"\xc2\x9f", 2, 1},    {"\xc2\xa0", 2, 0},     {"\xc3\xa9", 2, 0},
        {"\xe2\x80\xa9", 3, 0},{"\xe2\x80\xaa", 3, 1}, {"\xe2\x80\xae", 3, 1},
        {"\xe2\x80\xaf", 3, 0},{"\xe2\x81\xa5", 3, 0}, {"\xe2\x81\xa6", 3, 1},
        {"\xe2\x81\xa9", 3, 1},{"\xe2\x81\xaa", 3, 0}, {"\xf0\x9f\x98\x80", 4, 0},
        /* not characters: length 0 */
        {"\x85", 0, 0},        {"\xc0\x80", 0, 0},     {"\xc1\xbf", 0, 0},
        {"\xe0\x80\x80", 0, 0},{"\xed\xa0\x80", 0, 0}, {"\xf4\x90\x80\x80", 0, 0},
        {"\xf5\x80\x80\x80", 0, 0}, {"\xe2\x80", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *s = cases[i].s;
        size_t n = strlen(s) ? strlen(s) : 1, k = zf_utf8_len(s, s + n);
        CHECK(k == cases[i].len, "case %zu: length %zu, want %zu", i, k, cases[i].len);
        if (k)
            CHECK(zf_utf8_is_control(s, k) == cases[i].control, "case %zu: control", i);
    }
    CHECK(zf_utf8_has_control("a\xc2\x85" "b") && zf_utf8_has_control("x\n") &&
              zf_utf8_has_control("\xe2\x81\xa8") && !zf_utf8_has_control("NaT \xc3\xa9\x85"),
          "has_control");
    char out[16];
    CHECK(zf_utf8_clean_copy(out, sizeof out, "a\xc2\x85" "b\x01\xe2\x80\xae" "c", 9, '?') == 9 &&
              !strcmp(out, "a?b??c"), "clean copy: %s", out);
    CHECK(zf_utf8_clean_copy(out, 4, "abcdef", 6, '?') == 3 && !strcmp(out, "abc"), "cut: %s", out);
    CHECK(zf_utf8_clean_copy(out, 3, "a\xc3\xa9", 3, '?') == 1 && !strcmp(out, "a"),
          "cut at a character: %s", out);
}

/* the log line of fmt's text, read back from a file */
static void logged(const char *text, char *line, size_t cap)
{
    char path[] = "/tmp/zf-test-utf8.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "temp file");
    zf_log_to_fd(fd);
    zf_log("%s", text);
    zf_log_to_stderr();
    ssize_t n = pread(fd, line, cap - 1, 0);
    line[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
}

static void test_log(void)
{
    char line[1024];
    logged("name ok\xc2\x85\xc2\x9b; \xe2\x80\xae" "evil \xe2\x81\xa6x\xe2\x81\xa9 caf\xc3\xa9 \x1b[2J \xff", line,
           sizeof line);
    const char *want = "name ok\\xc2\\x85\\xc2\\x9b; \\xe2\\x80\\xaeevil \\xe2\\x81\\xa6x\\xe2\\x81\\xa9 "
                       "caf\xc3\xa9 \\x1b[2J \\xff\n";
    const char *msg = strstr(line, "warning: ");
    CHECK(msg && !strcmp(msg + 9, want), "log line: %s", line);
}

int main(void)
{
    test_chars();
    test_log();
    return check_summary("test_utf8");
}
