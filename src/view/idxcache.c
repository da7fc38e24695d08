/* idxcache.c - fingerprints and index files under the cache directory. */
#include "view/idxcache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "ZFIDX\001\000\000"
#define MAGIC_EXTRA "ZFIDX\002\000\000" /* the offsets, then a length and the extra bytes */

int zf_idxcache_default_dir(char *buf, size_t cap)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(buf, cap, "%s/zarrfs", xdg);
    else if (home && *home)
        snprintf(buf, cap, "%s/.cache/zarrfs", home);
    else
        return -1;
    return 0;
}

static void file_name(const char *dir, const zf_fp *fp, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%016llx%016llx.idx", dir, (unsigned long long)fp->a,
             (unsigned long long)fp->b);
}

static int read_full(int fd, void *buf, size_t n)
{
    for (size_t done = 0; done < n;) {
        ssize_t r = read(fd, (char *)buf + done, n - done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        done += (size_t)r;
    }
    return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
    for (size_t done = 0; done < n;) {
        ssize_t w = write(fd, (const char *)buf + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        done += (size_t)w;
    }
    return 0;
}

/* header: magic, fingerprint, entry count */
typedef struct header {
    char magic[8];
    uint64_t a, b, n;
} header;

int zf_idxcache_load(const char *dir, const zf_fp *fp, uint64_t n, uint64_t *off0, uint64_t *off1,
                     size_t max_extra, void **extra, size_t *extra_len)
{
    char path[4096];
    file_name(dir, fp, path, sizeof path);
    /* whatever is there, never block on it (a FIFO) nor follow it */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    header h;
    struct stat st;
    uint64_t offsets = sizeof h + 2 * n * sizeof *off0, xlen = 0;
    void *x = NULL;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size >= offsets &&
             read_full(fd, &h, sizeof h) == 0 &&
             !memcmp(h.magic, extra ? MAGIC_EXTRA : MAGIC, 8) && h.a == fp->a &&
             h.b == fp->b && h.n == n && read_full(fd, off0, n * sizeof *off0) == 0 &&
             read_full(fd, off1, n * sizeof *off1) == 0;
    if (ok && extra) /* the extra bytes: exactly as many as the file holds, within the bound */
        ok = read_full(fd, &xlen, sizeof xlen) == 0 && xlen <= max_extra &&
             (uint64_t)st.st_size - offsets - sizeof xlen == xlen &&
             (x = malloc(xlen ? (size_t)xlen : 1)) && read_full(fd, x, (size_t)xlen) == 0;
    else
        ok = ok && (uint64_t)st.st_size == offsets;
    close(fd);
    if (ok && extra) {
        *extra = x; /* the caller's */
        *extra_len = (size_t)xlen;
    } else {
        free(x);
    }
    for (uint64_t i = 1; ok && i < n; i++) /* offsets never decrease */
        ok = off0[i] >= off0[i - 1] && off1[i] >= off1[i - 1];
    return ok ? 0 : -1;
}

/* create dir and its missing parents */
static void mkdir_p(const char *dir)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0700);
            *p = '/';
        }
    }
    mkdir(buf, 0700);
}

void zf_idxcache_save(const char *dir, const zf_fp *fp, uint64_t n, const uint64_t *off0,
                      const uint64_t *off1, const void *extra, size_t extra_len)
{
    char path[4096], tmp[4200];
    mkdir_p(dir);
    file_name(dir, fp, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    unlink(tmp); /* a leftover (or a FIFO) there: O_EXCL makes a fresh file or fails */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    header h = {.a = fp->a, .b = fp->b, .n = n};
    memcpy(h.magic, extra ? MAGIC_EXTRA : MAGIC, 8);
    uint64_t xlen = extra_len;
    int ok = write_full(fd, &h, sizeof h) == 0 && write_full(fd, off0, n * sizeof *off0) == 0 &&
             write_full(fd, off1, n * sizeof *off1) == 0 &&
             (!extra || (write_full(fd, &xlen, sizeof xlen) == 0 &&
                         write_full(fd, extra, extra_len) == 0));
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0)
        unlink(tmp);
}

void zf_idxcache_drop(const char *dir, const zf_fp *fp)
{
    char path[4096];
    file_name(dir, fp, path, sizeof path);
    unlink(path);
}
