/* fuzz_util.h - what the fuzz targets that write stores share: failing with
 * a message (die, CHECK), writing files, removing a temp tree, reading the
 * input.  Define FUZZ_NAME (the target's name, the messages' prefix) before
 * including. */
#ifndef ZF_FUZZ_UTIL_H
#define ZF_FUZZ_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int err_fd = 2; /* a stderr that survives -close_fd_mask=2 (dup it at start) */

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n > 0) {
        ssize_t w = write(err_fd, FUZZ_NAME ": ", strlen(FUZZ_NAME ": "));
        w = write(err_fd, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
        w = write(err_fd, "\n", 1);
        (void)w;
    }
    abort();
}

#define CHECK(cond, ...)                                                             \
    do {                                                                             \
        if (!(cond))                                                                 \
            die("%s:%d: check failed: %s", __FILE__, __LINE__, #cond);               \
    } while (0)

/* write n bytes to path (created or truncated, 0644) */
static void write_file(const char *path, const void *data, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        die("cannot create %s: %s", path, strerror(errno));
    const char *p = data;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            die("cannot write %s: %s", path, strerror(errno));
        p += w;
        n -= (size_t)w;
    }
    close(fd);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

/* remove the tree at dir ("" : nothing) */
static void rm_tree(const char *dir)
{
    if (dir[0])
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* the input, read from the front (zeros once it is used up) */
typedef struct input {
    const uint8_t *p;
    size_t n, pos;
} input;

static inline uint8_t in_byte(input *in)
{
    return in->pos < in->n ? in->p[in->pos++] : 0;
}

/* the next `bytes` bytes (at most 8), little-endian */
static inline uint64_t in_uint(input *in, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)in_byte(in) << (8 * i);
    return v;
}

#endif
