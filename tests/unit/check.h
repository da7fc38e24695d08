/* check.h - the CHECK macro of the unit tests: count a check, and on failure
 * count it and print where and why (printf-style).  A test that can fail very
 * many checks at once defines CHECK_PRINT_MAX (how many failures are printed;
 * the rest are only counted) before including this; 0, the default, prints
 * them all.  Each test program ends with `return check_summary("NAME");`. */
#ifndef ZF_TEST_CHECK_H
#define ZF_TEST_CHECK_H

#include <stdio.h>

#ifndef CHECK_PRINT_MAX
#define CHECK_PRINT_MAX 0
#endif

static long checks, failures;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        checks++;                                                                 \
        if (!(cond)) {                                                            \
            failures++;                                                           \
            if (CHECK_PRINT_MAX == 0 || failures <= CHECK_PRINT_MAX) {            \
                fprintf(stderr, "%s:%d: FAIL (%s): ", __FILE__, __LINE__, #cond); \
                fprintf(stderr, __VA_ARGS__);                                     \
                fputc('\n', stderr);                                              \
            }                                                                     \
        }                                                                         \
    } while (0)

/* print "NAME: N checks, M failed" (and how many went unprinted); the exit
 * status: 1 if any check failed */
static inline int check_summary(const char *name)
{
    printf("%s: %ld checks, %ld failed", name, checks, failures);
    if (CHECK_PRINT_MAX != 0 && failures > CHECK_PRINT_MAX)
        printf(" (%ld not printed)", failures - (long)CHECK_PRINT_MAX);
    putchar('\n');
    return failures ? 1 : 0;
}

#endif
