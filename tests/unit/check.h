/* check.h - the CHECK macro of the unit tests: count a check, and on failure
 * count it and print where and why (printf-style).  Each test program prints
 * `checks` and `failures` at the end and exits nonzero if any failed. */
#ifndef ZF_TEST_CHECK_H
#define ZF_TEST_CHECK_H

#include <stdio.h>

static int checks, failures;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        checks++;                                                                 \
        if (!(cond)) {                                                            \
            failures++;                                                           \
            fprintf(stderr, "%s:%d: FAIL (%s): ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
        }                                                                         \
    } while (0)

#endif
