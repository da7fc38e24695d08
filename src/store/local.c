/* store.c - local-directory store confined beneath its root. */
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/err.h"

struct zf_store {
    int dirfd;
    int follow_symlinks;
    char *path;
};

int zf_store_open(const char *path, int follow_symlinks, zf_store **out)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? ZF_ENOTFOUND : ZF_EIO;
    zf_store *s = calloc(1, sizeof *s);
    char *p = realpath(path, NULL);
    if (!s || !p) {
        free(s);
        free(p);
        close(fd);
        return ZF_ENOMEM;
    }
    s->dirfd = fd;
    s->follow_symlinks = follow_symlinks;
    s->path = p;
    *out = s;
    return ZF_OK;
}

void zf_store_close(zf_store *s)
{
    if (!s)
        return;
    close(s->dirfd);
    free(s->path);
    free(s);
}

const char *zf_store_path(const zf_store *s)
{
    return s->path;
}

/* without openat2: walk key one component at a time, refusing every symlink
 * and "..", which keeps the open beneath dirfd (stricter than RESOLVE_BENEATH,
 * which allows symlinks that stay inside) */
static int open_no_symlinks(int dirfd, const char *key, int flags)
{
    char buf[ZF_KEY_MAX];
    if (snprintf(buf, sizeof buf, "%s", key) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int dir = dirfd;
    char *save = NULL, *part = strtok_r(buf, "/", &save);
    for (;;) {
        char *next = part ? strtok_r(NULL, "/", &save) : NULL;
        int fd;
        if (part && !strcmp(part, "..")) {
            errno = EXDEV;
            fd = -1;
        } else if (!part || !next) { /* the last component */
            fd = openat(dir, part ? part : ".", flags | O_NOFOLLOW);
        } else {
            fd = openat(dir, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        int e = errno;
        if (dir != dirfd)
            close(dir);
        if (fd < 0 || !part || !next) {
            errno = fd < 0 && e == ELOOP ? EXDEV : e;
            return fd;
        }
        dir = fd;
        part = next;
    }
}

/* open key beneath the root; symlinks may not leave the store */
static int open_key(const zf_store *s, const char *key, int flags)
{
    if (!(flags & O_PATH))
        flags |= O_NOCTTY;
    struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC),
                           .resolve = RESOLVE_NO_MAGICLINKS};
    if (!s->follow_symlinks)
        how.resolve |= RESOLVE_BENEATH;
    if (*key == '\0')
        key = ".";
    long fd = syscall(SYS_openat2, s->dirfd, key, &how, sizeof how);
    if (fd < 0 && errno == ENOSYS) /* kernels before 5.6, valgrind */
        fd = s->follow_symlinks ? openat(s->dirfd, key, flags | O_CLOEXEC)
                                : open_no_symlinks(s->dirfd, key, flags | O_CLOEXEC);
    return (int)fd;
}

/* after a failed open of key: absent (ZF_ENOTFOUND), or there but unusable:
 * a dangling symlink or one that leaves the store (ZF_ECORRUPT) */
static int open_error(const zf_store *s, const char *key, int e)
{
    struct stat st;
    if (e == EXDEV || e == ELOOP)
        return ZF_ECORRUPT;
    if (e == ENOENT && *key && fstatat(s->dirfd, key, &st, AT_SYMLINK_NOFOLLOW) == 0)
        return ZF_ECORRUPT;
    if (e == ENOENT || e == ENOTDIR)
        return ZF_ENOTFOUND;
    return e == ENOMEM ? ZF_ENOMEM : ZF_EIO;
}

/* pread exactly len bytes; short file -> ZF_ECORRUPT */
static int pread_full(int fd, uint8_t *buf, size_t len, uint64_t off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t r = pread(fd, buf + done, len - done, (off_t)(off + done));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return ZF_EIO;
        }
        if (r == 0)
            return ZF_ECORRUPT;
        done += (size_t)r;
    }
    return ZF_OK;
}

int zf_store_buf_reserve(zf_store_buf *b, size_t n)
{
    if (n <= b->cap && b->p)
        return ZF_OK;
    size_t want = n ? n : 1; /* large buffers grow in place (mremap): no slack needed */
    uint8_t *p = realloc(b->p, want);
    if (!p)
        return ZF_ENOMEM;
    b->p = p;
    b->cap = want;
    return ZF_OK;
}

int zf_store_read_buf(const zf_store *s, const char *key, size_t max, zf_store_buf *b, size_t *n)
{
    int fd = open_key(s, key, O_RDONLY);
    if (fd < 0)
        return open_error(s, key, errno);
    struct stat st;
    int rc = ZF_OK;
    if (fstat(fd, &st) != 0)
        rc = ZF_EIO;
    else if (!S_ISREG(st.st_mode) || st.st_size < 0 || (uint64_t)st.st_size > max)
        rc = ZF_ECORRUPT;
    else if ((rc = zf_store_buf_reserve(b, (size_t)st.st_size)) == ZF_OK)
        rc = pread_full(fd, b->p, (size_t)st.st_size, 0);
    close(fd);
    if (rc == ZF_OK)
        *n = (size_t)st.st_size;
    return rc;
}

int zf_store_read(const zf_store *s, const char *key, size_t max, uint8_t **buf, size_t *n)
{
    zf_store_buf b = {NULL, 0};
    int rc = zf_store_read_buf(s, key, max, &b, n);
    if (rc != ZF_OK) {
        free(b.p);
        return rc;
    }
    *buf = b.p; /* ownership passes to the caller */
    return ZF_OK;
}

int zf_store_size(const zf_store *s, const char *key, uint64_t *size)
{
    int fd = open_key(s, key, O_RDONLY);
    if (fd < 0)
        return open_error(s, key, errno);
    struct stat st;
    int rc = fstat(fd, &st) == 0 ? ZF_OK : ZF_EIO;
    if (rc == ZF_OK && !S_ISREG(st.st_mode))
        rc = ZF_ECORRUPT;
    if (rc == ZF_OK)
        *size = (uint64_t)st.st_size;
    close(fd);
    return rc;
}

int zf_store_stamp(const zf_store *s, const char *key, zf_stamp *out)
{
    out->size = UINT64_MAX;
    out->mtime = 0;
    int fd = open_key(s, key, O_PATH);
    if (fd < 0)
        return open_error(s, key, errno);
    struct stat st;
    int rc = fstat(fd, &st) == 0 ? ZF_OK : ZF_EIO;
    close(fd);
    if (rc == ZF_OK) {
        out->size = (uint64_t)st.st_size;
        out->mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    }
    return rc;
}

int zf_store_read_range(const zf_store *s, const char *key, uint64_t off, size_t len, uint8_t *buf)
{
    int fd = open_key(s, key, O_RDONLY);
    if (fd < 0)
        return open_error(s, key, errno);
    int rc = pread_full(fd, buf, len, off);
    close(fd);
    return rc;
}

int zf_store_kind(const zf_store *s, const char *key)
{
    int fd = open_key(s, key, O_PATH);
    if (fd < 0)
        return 0;
    struct stat st;
    int kind = 0;
    if (fstat(fd, &st) == 0)
        kind = S_ISREG(st.st_mode) ? 1 : S_ISDIR(st.st_mode) ? 2 : 0;
    close(fd);
    return kind;
}

int zf_store_list(const zf_store *s, const char *key, zf_store_list_fn fn, void *ctx)
{
    int fd = open_key(s, key, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return open_error(s, key, errno);
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return ZF_EIO;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        int is_dir = e->d_type == DT_DIR;
        if (e->d_type == DT_UNKNOWN || e->d_type == DT_LNK) {
            struct stat st;
            is_dir = fstatat(fd, e->d_name, &st, 0) == 0 && S_ISDIR(st.st_mode);
        }
        rc = fn(ctx, e->d_name, is_dir);
    }
    closedir(d);
    return rc;
}
