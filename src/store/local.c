/* local.c - the local-directory backend: keys are files beneath a root
 * directory, every open confined beneath it.
 *
 * No open may block on what the store holds: a key is first opened with
 * O_PATH (which never opens the object itself) and fstat'ed; only a regular
 * file is then opened for reading (O_NONBLOCK, checked to be the same file),
 * so FIFOs, sockets and devices are refused without ever being opened. */
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

typedef struct local {
    int dirfd;
    int follow_symlinks;
} local;

#define ERR(code, ...) ((err && errcap ? (void)snprintf(err, errcap, __VA_ARGS__) : (void)0), (code))

static const local *impl(const zf_store *s)
{
    return s->impl;
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
static int open_key(const local *l, const char *key, int flags)
{
    if (!(flags & O_PATH))
        flags |= O_NOCTTY | O_NONBLOCK;
    struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC),
                           .resolve = RESOLVE_NO_MAGICLINKS};
    if (!l->follow_symlinks)
        how.resolve |= RESOLVE_BENEATH;
    if (*key == '\0')
        key = ".";
    long fd = syscall(SYS_openat2, l->dirfd, key, &how, sizeof how);
    if (fd < 0 && errno == ENOSYS) /* kernels before 5.6, valgrind */
        fd = l->follow_symlinks ? openat(l->dirfd, key, flags | O_CLOEXEC)
                                : open_no_symlinks(l->dirfd, key, flags | O_CLOEXEC);
    return (int)fd;
}

static int64_t ns(struct timespec t)
{
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* the stamp of what st describes */
static void stamp_of(const struct stat *st, zf_stamp *out)
{
    memset(out, 0, sizeof *out);
    out->kind = S_ISREG(st->st_mode) ? ZF_STORE_FILE : S_ISDIR(st->st_mode) ? ZF_STORE_DIR
              : S_ISLNK(st->st_mode) ? ZF_STORE_LINK : ZF_STORE_OTHER;
    out->size = S_ISREG(st->st_mode) && st->st_size > 0 ? (uint64_t)st->st_size : 0;
    out->mtime = ns(st->st_mtim);
    out->ctime = ns(st->st_ctim);
    out->dev = (uint64_t)st->st_dev;
    out->ino = (uint64_t)st->st_ino;
}

/* what a file of this mode is, for reasons ("a FIFO") */
static const char *mode_name(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket"
         : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
         : S_ISLNK(m) ? "a symlink that is not followed" : "not a file";
}

/* after a failed open of key (errno e): absent (ZF_ENOTFOUND), or there but
 * unusable: a dangling symlink or one that leaves the store (ZF_ECORRUPT) */
static int open_error(const local *l, const char *key, int e, char *err, size_t errcap)
{
    struct stat st;
    if (e == EXDEV)
        return ERR(ZF_ECORRUPT, "a symlink leading out of the store");
    if (e == ELOOP)
        return ERR(ZF_ECORRUPT, "a symlink loop, or a symlink that is not followed");
    if (e == ENOENT && *key && fstatat(l->dirfd, key, &st, AT_SYMLINK_NOFOLLOW) == 0)
        return ERR(ZF_ECORRUPT, "a symlink to nothing");
    if (e == ENOENT || e == ENOTDIR)
        return ERR(ZF_ENOTFOUND, "no such key");
    if (e == ENOMEM)
        return ZF_ENOMEM;
    return ERR(ZF_EIO, "cannot open: %s", strerror(e));
}

/* open the regular file at key for reading, never opening anything else
 * (see the top of the file); the fd (*st: its status), or a negative zf_err */
static int open_value(const local *l, const char *key, struct stat *st, char *err, size_t errcap)
{
    int pfd = open_key(l, key, O_PATH);
    if (pfd < 0)
        return open_error(l, key, errno, err, errcap);
    int rc = fstat(pfd, st) == 0 ? ZF_OK : ERR(ZF_EIO, "cannot stat: %s", strerror(errno));
    close(pfd);
    if (rc == ZF_OK && !S_ISREG(st->st_mode))
        rc = ERR(ZF_ECORRUPT, "%s, not a regular file", mode_name(st->st_mode));
    if (rc)
        return rc;
    int fd = open_key(l, key, O_RDONLY);
    if (fd < 0)
        return open_error(l, key, errno, err, errcap);
    struct stat now;
    if (fstat(fd, &now) != 0)
        rc = ERR(ZF_EIO, "cannot stat: %s", strerror(errno));
    else if (now.st_dev != st->st_dev || now.st_ino != st->st_ino || !S_ISREG(now.st_mode))
        rc = ERR(ZF_ECORRUPT, "replaced while it was being opened");
    if (rc) {
        close(fd);
        return rc;
    }
    *st = now;
    return fd;
}

/* pread exactly len bytes at off; a shorter file -> ZF_ECORRUPT */
static int pread_full(int fd, uint8_t *buf, size_t len, uint64_t off, char *err, size_t errcap)
{
    if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
        return ERR(ZF_ECORRUPT, "range beyond the largest file");
    size_t done = 0;
    while (done < len) {
        ssize_t r = pread(fd, buf + done, len - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return ERR(ZF_EIO, "read error: %s", strerror(errno));
        if (r == 0)
            return ERR(ZF_ECORRUPT, "ends at byte %llu, before the %zu bytes wanted at %llu",
                       (unsigned long long)(off + done), len, (unsigned long long)off);
        done += (size_t)r;
    }
    return ZF_OK;
}

static int local_read(const zf_store *s, const char *key, size_t max, zf_store_buf *b, size_t *n,
                      zf_stamp *stamp, char *err, size_t errcap)
{
    struct stat st;
    int fd = open_value(impl(s), key, &st, err, errcap);
    if (fd < 0)
        return fd;
    stamp_of(&st, stamp);
    uint64_t size = stamp->size;
    int rc = ZF_OK;
    if (size > max)
        rc = ERR(ZF_ECORRUPT, "%llu bytes (%.1f MiB), more than the %zu (%.1f MiB) allowed",
                 (unsigned long long)size, (double)size / (1 << 20), max, (double)max / (1 << 20));
    if (rc == ZF_OK)
        rc = zf_store_buf_reserve(b, (size_t)size);
    if (rc == ZF_OK)
        rc = pread_full(fd, b->p, (size_t)size, 0, err, errcap);
    close(fd);
    if (rc == ZF_OK)
        *n = (size_t)size;
    return rc;
}

/* one by one; consecutive requests for the same key share one open */
static int local_read_many(const zf_store *s, zf_store_req *reqs, size_t n)
{
    int fd = -1, first = ZF_OK;
    struct stat st;
    for (size_t i = 0; i < n; i++) {
        zf_store_req *r = &reqs[i];
        if (fd < 0 || strcmp(r->key, reqs[i - 1].key)) {
            if (fd >= 0)
                close(fd);
            fd = open_value(impl(s), r->key, &st, r->err, r->errcap);
        }
        r->rc = fd < 0 ? fd : pread_full(fd, r->buf, r->len, r->off, r->err, r->errcap);
        if (r->rc == ZF_OK && r->seen) /* the file the bytes came from */
            *r->seen = (zf_store_seen){.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 +
                                                   st.st_mtim.tv_nsec,
                                       .ino = (uint64_t)st.st_ino, .size = (uint64_t)st.st_size};
        if (r->rc && first == ZF_OK)
            first = r->rc;
    }
    if (fd >= 0)
        close(fd);
    return first;
}

static int local_stamp(const zf_store *s, const char *key, zf_stamp *stamp, char *err,
                       size_t errcap)
{
    const local *l = impl(s);
    struct stat st;
    int fd = open_key(l, key, O_PATH);
    if (fd < 0) {
        int rc = open_error(l, key, errno, err, errcap);
        if (rc == ZF_ECORRUPT) { /* a symlink not followed (here or above): stamp the link */
            memset(stamp, 0, sizeof *stamp);
            if (*key && fstatat(l->dirfd, key, &st, AT_SYMLINK_NOFOLLOW) == 0)
                stamp_of(&st, stamp);
            stamp->kind = ZF_STORE_LINK;
            stamp->size = 0;
            if (err && errcap)
                *err = '\0'; /* a link is a stamp, not an error */
            return ZF_OK;
        }
        return rc;
    }
    int rc = fstat(fd, &st) == 0 ? ZF_OK : ERR(ZF_EIO, "stat: %s", strerror(errno));
    close(fd);
    if (rc == ZF_OK)
        stamp_of(&st, stamp);
    return rc;
}

/* the entry name in directory fd (the store's prefix): its stamp, as
 * local_stamp gives for the whole key; ZF_OK, ZF_ENOTFOUND if it is gone
 * (removed since the directory was read), or why it cannot be stamped */
static int entry_stamp(const zf_store *s, int fd, const char *prefix, const char *name,
                       zf_store_entry *e, char *err, size_t errcap)
{
    struct stat st;
    if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? ZF_ENOTFOUND
             : errno == ENOMEM ? ZF_ENOMEM
                               : ERR(ZF_EIO, "%s: cannot stat: %s", name, strerror(errno));
    e->alias = S_ISLNK(st.st_mode);
    if (!e->alias) {
        stamp_of(&st, &e->stamp);
        return ZF_OK;
    }
    char key[ZF_KEY_MAX];
    int len = snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "/" : "", name);
    if (len < 0 || (size_t)len >= sizeof key) {
        stamp_of(&st, &e->stamp); /* a key no store call accepts: the link itself */
        return ZF_OK;
    }
    memset(&e->stamp, 0, sizeof e->stamp);
    char why[200] = "";
    int rc = local_stamp(s, key, &e->stamp, why, sizeof why);
    return rc == ZF_OK || rc == ZF_ENOTFOUND || rc == ZF_ENOMEM ? rc
                                                                : ERR(rc, "%s: %s", name, why);
}

/* the kind of a directory entry from its type alone, or -1 when only a stat
 * can tell (a symlink, or a file system that gives no type) */
static int kind_of_dtype(unsigned char type)
{
    switch (type) {
    case DT_REG: return ZF_STORE_FILE;
    case DT_DIR: return ZF_STORE_DIR;
    case DT_FIFO: case DT_SOCK: case DT_CHR: case DT_BLK: return ZF_STORE_OTHER;
    default: return -1;
    }
}

/* complete, or a failure: an entry that cannot be stamped, or a directory
 * that cannot be read to its end, fails the listing (store.h) */
static int local_list(const zf_store *s, const char *prefix, unsigned flags, zf_store_list_fn fn,
                      void *ctx, char *err, size_t errcap)
{
    int fd = open_key(impl(s), prefix, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return open_error(impl(s), prefix, errno, err, errcap);
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        return ERR(ZF_EIO, "cannot read the directory: %s", strerror(e));
    }
    int rc = ZF_OK;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (!de) {
            if (errno)
                rc = ERR(ZF_EIO, "readdir: %s", strerror(errno));
            break;
        }
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        zf_store_entry e = {.name = de->d_name};
        int kind = flags & ZF_LIST_KINDS ? kind_of_dtype(de->d_type) : -1;
        if (kind >= 0)
            e.stamp.kind = (uint32_t)kind; /* no stat: only the kind was asked for */
        else if ((rc = entry_stamp(s, fd, prefix, de->d_name, &e, err, errcap)) != ZF_OK) {
            if (rc != ZF_ENOTFOUND)
                break;
            rc = ZF_OK; /* removed since readdir saw it: absent now */
            continue;
        }
        if ((rc = fn(ctx, &e)) != 0)
            break;
    }
    closedir(d);
    return rc;
}

static void local_close(zf_store *s)
{
    local *l = s->impl;
    close(l->dirfd);
    free(l);
}

static const zf_store_ops local_ops = {
    .close = local_close,
    .read = local_read,
    .read_many = local_read_many,
    .stamp = local_stamp,
    .list = local_list,
};

int zf_store_open_local(const char *path, int follow_symlinks, zf_store **out)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? ZF_ENOTFOUND : ZF_EIO;
    zf_store *s = calloc(1, sizeof *s);
    local *l = calloc(1, sizeof *l);
    char *name = realpath(path, NULL);
    if (!s || !l || !name) {
        free(s);
        free(l);
        free(name);
        close(fd);
        return ZF_ENOMEM;
    }
    l->dirfd = fd;
    l->follow_symlinks = follow_symlinks;
    s->ops = &local_ops;
    s->impl = l;
    s->name = name;
    s->parallel = 1;
    s->remote = 0;
    *out = s;
    return ZF_OK;
}
