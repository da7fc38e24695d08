/* faultfs.c - an LD_PRELOAD shim that makes chosen local paths fail, for the
 * tests of the presence invariant (store.h): a directory that cannot be
 * opened or read to its end, an entry or a chunk that cannot be stat'ed,
 * opened or read, with the errno a real file system gives (EACCES, EIO).
 *
 * ZF_FAULTFS_CONF names a file of rules, one a line, re-read whenever its
 * modification time changes (so a test turns faults on and off while the
 * daemon runs); an absent or empty file means no fault:
 *
 *     OP ERRNO GLOB
 *
 *   OP     open     openat2 / openat of the path (zarrfs opens directories
 *                   to list them and files to read them this way)
 *          stat     fstat / fstatat of the path (a listing's entries, an
 *                   opened key)
 *          readdir  readdir of a directory at the path: the first call
 *                   fails; readdir:N fails after N entries were returned
 *          read     pread of a file at the path
 *   ERRNO  EACCES, EIO, ENOENT, ENOMEM or a number
 *   GLOB   fnmatch(3) pattern (no flags: '*' matches '/') on the absolute
 *          path, e.g. "* /g3.zarr/v3_plain/c" without the space
 *
 * Paths are made absolute from the directory descriptor through
 * /proc/self/fd.  Everything else passes through untouched.  Built without
 * sanitizers; with an ASan daemon set ASAN_OPTIONS=verify_asan_link_order=0. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum op { OP_OPEN, OP_STAT, OP_READDIR, OP_READ };

typedef struct rule {
    enum op op;
    int err;
    long after;        /* readdir: entries returned before it fails */
    char glob[1024];
} rule;

#define RULES_MAX 32
#define DIRS_MAX 256

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static rule rules[RULES_MAX];
static int nrules;
static struct timespec conf_mtime;
static __thread int inside; /* a call made by the shim itself passes through */

/* readdir calls so far per open directory stream */
static struct {
    DIR *d;
    long n;
} dirs[DIRS_MAX];

static void *real(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

static int parse_errno(const char *s)
{
    static const struct {
        const char *name;
        int e;
    } names[] = {{"EACCES", EACCES}, {"EIO", EIO}, {"ENOENT", ENOENT}, {"ENOMEM", ENOMEM},
                 {"EPERM", EPERM}, {"ENOTDIR", ENOTDIR}, {"ESTALE", ESTALE}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(s, names[i].name))
            return names[i].e;
    return atoi(s) > 0 ? atoi(s) : EIO;
}

/* read the rules again if the file changed (mu held) */
static void load_rules(void)
{
    const char *conf = getenv("ZF_FAULTFS_CONF");
    struct stat st;
    int (*fstatat_fn)(int, const char *, struct stat *, int) = real("fstatat");
    if (!conf || !fstatat_fn || fstatat_fn(AT_FDCWD, conf, &st, 0) != 0) {
        nrules = 0;
        return;
    }
    if (st.st_mtim.tv_sec == conf_mtime.tv_sec && st.st_mtim.tv_nsec == conf_mtime.tv_nsec)
        return;
    conf_mtime = st.st_mtim;
    nrules = 0;
    FILE *f = fopen(conf, "r");
    char line[1200], op[32], err[32], glob[1024];
    while (f && nrules < RULES_MAX && fgets(line, sizeof line, f)) {
        if (sscanf(line, "%31s %31s %1023s", op, err, glob) != 3 || op[0] == '#')
            continue;
        rule *r = &rules[nrules];
        r->after = 0;
        if (!strcmp(op, "open"))
            r->op = OP_OPEN;
        else if (!strcmp(op, "stat"))
            r->op = OP_STAT;
        else if (!strncmp(op, "readdir", 7)) {
            r->op = OP_READDIR;
            r->after = op[7] == ':' ? atol(op + 8) : 0;
        } else if (!strcmp(op, "read"))
            r->op = OP_READ;
        else
            continue;
        r->err = parse_errno(err);
        snprintf(r->glob, sizeof r->glob, "%s", glob);
        nrules++;
    }
    if (f)
        fclose(f);
}

/* the absolute path of name relative to directory fd (name NULL: fd itself) */
static int path_of(int fd, const char *name, char *out, size_t cap)
{
    if (name && name[0] == '/')
        return snprintf(out, cap, "%s", name) < (int)cap ? 0 : -1;
    char link[64], dir[4096];
    ssize_t n;
    if (fd == AT_FDCWD) {
        if (!getcwd(dir, sizeof dir))
            return -1;
        n = (ssize_t)strlen(dir);
    } else {
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t (*readlink_fn)(const char *, char *, size_t) = real("readlink");
        n = readlink_fn ? readlink_fn(link, dir, sizeof dir - 1) : -1;
        if (n < 0)
            return -1;
        dir[n] = '\0';
    }
    if (!name || !*name || !strcmp(name, "."))
        return snprintf(out, cap, "%s", dir) < (int)cap ? 0 : -1;
    return snprintf(out, cap, "%s/%s", dir, name) < (int)cap ? 0 : -1;
}

/* the errno a call of kind op on (fd, name) must fail with, or 0; for
 * readdir, `count` entries were returned by the stream so far */
static int fault(enum op op, int fd, const char *name, long count)
{
    if (inside)
        return 0;
    inside = 1;
    char path[8192];
    int e = 0;
    pthread_mutex_lock(&mu);
    load_rules();
    int any = 0;
    for (int i = 0; i < nrules; i++)
        any |= rules[i].op == op;
    if (any && path_of(fd, name, path, sizeof path) == 0)
        for (int i = 0; i < nrules && !e; i++)
            if (rules[i].op == op && count >= rules[i].after && !fnmatch(rules[i].glob, path, 0))
                e = rules[i].err;
    pthread_mutex_unlock(&mu);
    inside = 0;
    return e;
}

long syscall(long number, ...)
{
    va_list ap;
    va_start(ap, number);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (number == SYS_openat2) {
        int e = fault(OP_OPEN, (int)a[0], (const char *)a[1], 0);
        if (e) {
            errno = e;
            return -1;
        }
    }
    long (*fn)(long, ...) = real("syscall");
    return fn(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

int openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (mode_t)va_arg(ap, int);
    va_end(ap);
    int e = fault(OP_OPEN, dirfd, path, 0);
    if (e) {
        errno = e;
        return -1;
    }
    int (*fn)(int, const char *, int, ...) = real("openat");
    return fn(dirfd, path, flags, mode);
}

int fstat(int fd, struct stat *st)
{
    int e = fault(OP_STAT, fd, NULL, 0);
    if (e) {
        errno = e;
        return -1;
    }
    int (*fn)(int, struct stat *) = real("fstat");
    return fn(fd, st);
}

int fstatat(int fd, const char *name, struct stat *st, int flags)
{
    int e = fault(OP_STAT, fd, name, 0);
    if (e) {
        errno = e;
        return -1;
    }
    int (*fn)(int, const char *, struct stat *, int) = real("fstatat");
    return fn(fd, name, st, flags);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    int e = fault(OP_READ, fd, NULL, 0);
    if (e) {
        errno = e;
        return -1;
    }
    ssize_t (*fn)(int, void *, size_t, off_t) = real("pread");
    return fn(fd, buf, n, off);
}

/* the slot counting stream d's entries (mu held); NULL if the table is full */
static long *dir_count(DIR *d, int reset)
{
    int free_slot = -1;
    for (int i = 0; i < DIRS_MAX; i++) {
        if (dirs[i].d == d) {
            if (reset)
                dirs[i].n = 0;
            return &dirs[i].n;
        }
        if (!dirs[i].d && free_slot < 0)
            free_slot = i;
    }
    if (free_slot < 0)
        return NULL;
    dirs[free_slot].d = d;
    dirs[free_slot].n = 0;
    return &dirs[free_slot].n;
}

struct dirent *readdir(DIR *d)
{
    pthread_mutex_lock(&mu);
    long *count = dir_count(d, 0), n = count ? *count : 0;
    pthread_mutex_unlock(&mu);
    int e = fault(OP_READDIR, dirfd(d), NULL, n);
    if (e) {
        errno = e;
        return NULL;
    }
    struct dirent *(*fn)(DIR *) = real("readdir");
    struct dirent *de = fn(d);
    pthread_mutex_lock(&mu);
    if (de && (count = dir_count(d, 0)))
        ++*count;
    pthread_mutex_unlock(&mu);
    return de;
}

int closedir(DIR *d)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < DIRS_MAX; i++)
        if (dirs[i].d == d)
            dirs[i].d = NULL;
    pthread_mutex_unlock(&mu);
    int (*fn)(DIR *) = real("closedir");
    return fn(d);
}
