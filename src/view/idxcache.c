/* idxcache.c - fingerprints and index files under the cache directory. */
#include "view/idxcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/log.h"

#define MAGIC "ZFIDX\001\000\000"
#define MAGIC_EXTRA "ZFIDX\002\000\000" /* the offsets, then a length and the extra bytes */
#define MAX_LINKS 40                    /* symlinks followed on the way, as the kernel's limit */

int zf_idxcache_default_dir(char *buf, size_t cap)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg == '/') /* a relative XDG_CACHE_HOME is invalid (XDG spec): ignored */
        snprintf(buf, cap, "%s/zarrfs", xdg);
    else if (home && *home)
        snprintf(buf, cap, "%s/.cache/zarrfs", home);
    else
        return -1;
    return 0;
}

/* ------------------------------------------------- the checked directory */

/* one walk to the cache directory: who we are, symlinks followed, why it failed */
typedef struct walk {
    uid_t uid;
    int create;        /* make missing directories (0700) */
    int absent;        /* a directory on the way does not exist (and was not made) */
    int links;
    char why[200];
} walk;

static int refuse(walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(walk *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->why, sizeof w->why, fmt, ap);
    va_end(ap);
    return -1;
}

/* may a directory on the way to the cache be trusted?  Owned by root or us,
 * and writable by nobody else unless sticky (/tmp: others cannot replace
 * what we own in it) */
static int trusted_on_way(const walk *w, const struct stat *st)
{
    return (st->st_uid == w->uid || st->st_uid == 0) &&
           (!(st->st_mode & (S_IWGRP | S_IWOTH)) || (st->st_mode & S_ISVTX));
}

static int walk_path(walk *w, int base, const char *path);

/* the directory name in at (an O_PATH descriptor of a trusted directory),
 * through a symlink only when root or we own it; an O_PATH descriptor or -1 */
static int step(walk *w, int at, const char *name)
{
    int fd = openat(at, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    /* made here, or by another saver meanwhile (EEXIST): checked below either way */
    if (fd < 0 && errno == ENOENT && w->create && (mkdirat(at, name, 0700) == 0 || errno == EEXIST))
        fd = openat(at, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        w->absent = errno == ENOENT;
        return refuse(w, "%s: %s", name, strerror(errno));
    }
    if (fstat(fd, &st) != 0) {
        close(fd);
        return refuse(w, "%s: %s", name, strerror(errno));
    }
    if (S_ISLNK(st.st_mode)) {
        char target[4096];
        int ours = st.st_uid == w->uid || st.st_uid == 0;
        ssize_t n = ours ? readlinkat(fd, "", target, sizeof target - 1) : -1;
        close(fd);
        if (!ours)
            return refuse(w, "%s is a symlink owned by another user (uid %u)", name,
                          (unsigned)st.st_uid);
        if (n <= 0 || ++w->links > MAX_LINKS)
            return refuse(w, "%s: a symlink that cannot be followed", name);
        target[n] = '\0';
        return walk_path(w, at, target);
    }
    if (!S_ISDIR(st.st_mode)) {
        close(fd);
        return refuse(w, "%s is not a directory", name);
    }
    if (!trusted_on_way(w, &st)) {
        close(fd);
        return refuse(w, "%s is owned by another user or writable by others (uid %u, mode %03o)",
                      name, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
    }
    return fd;
}

/* follow path from the trusted directory base (from "/" when absolute),
 * component by component; an O_PATH descriptor of where it ends, or -1 */
static int walk_path(walk *w, int base, const char *path)
{
    int cur = path[0] == '/' ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)
                             : fcntl(base, F_DUPFD_CLOEXEC, 0);
    struct stat st;
    if (cur < 0 || fstat(cur, &st) != 0 || !trusted_on_way(w, &st)) {
        if (cur >= 0)
            close(cur);
        return refuse(w, "%s: its start cannot be trusted", path);
    }
    char name[256];
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, "/");
        if (n >= sizeof name) {
            close(cur);
            return refuse(w, "a path component longer than 255 bytes");
        }
        memcpy(name, p, n);
        name[n] = '\0';
        p += n + (p[n] == '/');
        if (n == 0 || !strcmp(name, "."))
            continue;
        int next = step(w, cur, name);
        close(cur);
        if (next < 0)
            return -1;
        cur = next;
    }
    return cur;
}

/* the cache directory dir (absolute) as a directory descriptor, when every
 * directory on the way is root's or ours and writable by nobody else (or
 * sticky), and dir itself is ours and writable by nobody else; symlinks
 * only when root or we own them.  create: missing directories are made
 * (0700).  -1 when absent (and not made), or refused: one log line (the
 * process's first refusal only). */
static int open_dir(const char *dir, int create)
{
    walk w = {.uid = geteuid(), .create = create};
    int fd = dir[0] == '/' ? walk_path(&w, -1, dir) : refuse(&w, "not an absolute path");
    struct stat st = {0};
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == w.uid &&
        !(st.st_mode & (S_IWGRP | S_IWOTH))) {
        int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        close(fd);
        if (dfd >= 0)
            return dfd;
        refuse(&w, "%s", strerror(errno));
    } else if (fd >= 0) {
        refuse(&w, "owned by another user or writable by others (uid %u, mode %03o)",
               (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        close(fd);
    } else if (w.absent && !create) {
        return -1; /* not made yet: nothing to say */
    }
    static int said;
    if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        zf_log("the index cache directory %s is not used: %s", dir, w.why);
    return -1;
}

/* ----------------------------------------------------------- index files */

static void file_name(const zf_fp *fp, char *buf, size_t cap)
{
    snprintf(buf, cap, "%016llx%016llx.idx", (unsigned long long)fp->a, (unsigned long long)fp->b);
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

/* ------------------------------------------------------------ the bound */

#define PRUNE_SCAN_MAX 100000 /* index files considered at most per pruning */

typedef struct cached {
    char name[40];
    uint64_t size;
    struct timespec used; /* mtime: its last save or load */
} cached;

/* is name an index file's (32 hex digits, ".idx")? */
static int index_name(const char *name)
{
    if (strlen(name) != 36 || strcmp(name + 32, ".idx"))
        return 0;
    return strspn(name, "0123456789abcdef") == 32;
}

static int older_first(const void *pa, const void *pb)
{
    const cached *a = pa, *b = pb;
    if (a->used.tv_sec != b->used.tv_sec)
        return a->used.tv_sec < b->used.tv_sec ? -1 : 1;
    return a->used.tv_nsec < b->used.tv_nsec ? -1 : a->used.tv_nsec > b->used.tv_nsec;
}

/* the index files of the directory dfd (our regular files only) but keep
 * into a malloc'd array (*count), their total size in *total; NULL if none
 * or out of memory */
static cached *list_indexes(int dfd, const char *keep, size_t *count, uint64_t *total)
{
    int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    cached *all = NULL;
    size_t n = 0, cap = 0;
    *total = 0;
    if (!d && fd >= 0)
        close(fd);
    for (struct dirent *e; d && n < PRUNE_SCAN_MAX && (e = readdir(d));) {
        struct stat st;
        if (!index_name(e->d_name) || fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode) || st.st_uid != geteuid())
            continue;
        *total += (uint64_t)st.st_size;
        if (!strcmp(e->d_name, keep))
            continue;
        if (n == cap) {
            cached *more = realloc(all, (cap = cap ? 2 * cap : 64) * sizeof *all);
            if (!more)
                break;
            all = more;
        }
        snprintf(all[n].name, sizeof all[n].name, "%s", e->d_name);
        all[n].size = (uint64_t)st.st_size;
        all[n++].used = st.st_mtim;
    }
    if (d)
        closedir(d);
    *count = n;
    return all;
}

/* remove the least recently used index files of dfd but keep while they
 * hold more than max_bytes */
static void prune(int dfd, const char *keep, uint64_t max_bytes)
{
    size_t n;
    uint64_t total;
    cached *all = list_indexes(dfd, keep, &n, &total);
    if (all && total > max_bytes) {
        qsort(all, n, sizeof *all, older_first);
        for (size_t i = 0; i < n && total > max_bytes; i++)
            if (unlinkat(dfd, all[i].name, 0) == 0)
                total -= all[i].size;
    }
    free(all);
}

/* header: magic, fingerprint, entry count */
typedef struct header {
    char magic[8];
    uint64_t a, b, n;
} header;

/* read the open index file fd (st its status) as load describes */
static int read_index(int fd, const struct stat *st, const zf_fp *fp, uint64_t n, uint64_t *off0,
                      uint64_t *off1, size_t max_extra, void **extra, size_t *extra_len, char *why,
                      size_t cap)
{
    header h;
    uint64_t size = (uint64_t)st->st_size, xlen = 0;
    if (!S_ISREG(st->st_mode) || st->st_uid != geteuid())
        return zf_errf(why, cap, ZF_ECORRUPT, "not a regular file of the daemon's user");
    if (n > (UINT64_MAX - sizeof h) / 16 || size < sizeof h + 16 * n)
        return zf_errf(why, cap, ZF_ECORRUPT, "%llu bytes, too short for %llu entries",
                       (unsigned long long)size, (unsigned long long)n);
    if (read_full(fd, &h, sizeof h) || memcmp(h.magic, extra ? MAGIC_EXTRA : MAGIC, 8) ||
        h.a != fp->a || h.b != fp->b || h.n != n)
        return zf_errf(why, cap, ZF_ECORRUPT, "a header that is not this index's");
    if (read_full(fd, off0, n * sizeof *off0) || read_full(fd, off1, n * sizeof *off1))
        return zf_errf(why, cap, ZF_ECORRUPT, "cannot read the offsets");
    uint64_t rest = size - sizeof h - 16 * n;
    if (!extra)
        return rest ? zf_errf(why, cap, ZF_ECORRUPT, "%llu bytes past the offsets",
                              (unsigned long long)rest)
                    : ZF_OK;
    if (rest < sizeof xlen || read_full(fd, &xlen, sizeof xlen) || xlen > max_extra ||
        xlen != rest - sizeof xlen)
        return zf_errf(why, cap, ZF_ECORRUPT, "extra bytes of the wrong length");
    void *x = malloc(xlen ? (size_t)xlen : 1);
    if (!x)
        return ZF_ENOMEM;
    if (read_full(fd, x, (size_t)xlen)) {
        free(x);
        return zf_errf(why, cap, ZF_ECORRUPT, "cannot read the extra bytes");
    }
    *extra = x; /* the caller's */
    *extra_len = (size_t)xlen;
    return ZF_OK;
}

int zf_idxcache_load(const char *dir, const zf_fp *fp, uint64_t n, uint64_t *off0, uint64_t *off1,
                     size_t max_extra, void **extra, size_t *extra_len, char *why, size_t cap)
{
    char name[64];
    file_name(fp, name, sizeof name);
    int dfd = open_dir(dir, 0);
    if (dfd < 0)
        return ZF_ENOTFOUND;
    /* whatever is there, never block on it (a FIFO) nor follow it */
    int fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    int rc = fd < 0 && errno == ENOENT ? ZF_ENOTFOUND : ZF_OK;
    struct stat st;
    if (rc == ZF_OK && (fd < 0 || fstat(fd, &st) != 0))
        rc = zf_errf(why, cap, ZF_ECORRUPT, "%s", strerror(errno));
    if (rc == ZF_OK)
        rc = read_index(fd, &st, fp, n, off0, off1, max_extra, extra, extra_len, why, cap);
    if (rc == ZF_OK)
        futimens(fd, NULL); /* its mtime is its last use: pruning keeps it longest */
    if (fd >= 0)
        close(fd);
    close(dfd);
    return rc;
}

void zf_idxcache_drop(const char *dir, const zf_fp *fp)
{
    char name[64];
    file_name(fp, name, sizeof name);
    int dfd = open_dir(dir, 0);
    if (dfd < 0)
        return;
    unlinkat(dfd, name, 0);
    close(dfd);
}

void zf_idxcache_save(const char *dir, uint64_t max_bytes, const zf_fp *fp, uint64_t n,
                      const uint64_t *off0, const uint64_t *off1, const void *extra,
                      size_t extra_len)
{
    char name[64], tmp[96];
    int dfd = open_dir(dir, 1);
    if (dfd < 0)
        return;
    file_name(fp, name, sizeof name);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", name, (long)getpid());
    unlinkat(dfd, tmp, 0); /* a leftover (or a FIFO) there: O_EXCL makes a fresh file or fails */
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        close(dfd);
        return;
    }
    header h = {.a = fp->a, .b = fp->b, .n = n};
    memcpy(h.magic, extra ? MAGIC_EXTRA : MAGIC, 8);
    uint64_t xlen = extra_len;
    int ok = write_full(fd, &h, sizeof h) == 0 && write_full(fd, off0, n * sizeof *off0) == 0 &&
             write_full(fd, off1, n * sizeof *off1) == 0 &&
             (!extra || (write_full(fd, &xlen, sizeof xlen) == 0 &&
                         write_full(fd, extra, extra_len) == 0));
    ok = close(fd) == 0 && ok;
    if (!ok || renameat(dfd, tmp, dfd, name) != 0)
        unlinkat(dfd, tmp, 0);
    else if (max_bytes)
        prune(dfd, name, max_bytes);
    close(dfd);
}
