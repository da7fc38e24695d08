/* test_store.c - the store interface on the local backend: whole reads,
 * ranges, many ranges, stamps, listings, and what is refused (symlinks that
 * dangle or leave the store, FIFOs, sockets, devices) without blocking. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/err.h"
#include "check.h"
#include "store/store.h"

static char root[256];

/* write text to root/rel */
static void put(const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    FILE *f = fopen(p, "wb");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        perror(p);
        exit(1);
    }
}

static void path(char *buf, size_t cap, const char *rel)
{
    if ((size_t)snprintf(buf, cap, "%s/%s", root, rel) >= cap) {
        fprintf(stderr, "test_store: path too long: %s/%s\n", root, rel);
        exit(1);
    }
}

/* a store with files, a directory, symlinks inside, dangling and leaving */
static void make_store(void)
{
    char p[512];
    snprintf(root, sizeof root, "%s/zf-test-store.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        exit(1);
    }
    put("a", "0123456789");
    path(p, sizeof p, "d");
    mkdir(p, 0755);
    put("d/b", "bee");
    path(p, sizeof p, "in");
    CHECK(symlink("a", p) == 0, "symlink: %s", strerror(errno));
    path(p, sizeof p, "out");
    CHECK(symlink("/etc/hostname", p) == 0, "symlink: %s", strerror(errno));
    path(p, sizeof p, "dangling");
    CHECK(symlink("nothing-here", p) == 0, "symlink: %s", strerror(errno));
    path(p, sizeof p, "fifo");
    CHECK(mkfifo(p, 0644) == 0, "mkfifo: %s", strerror(errno));
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    path(sa.sun_path, sizeof sa.sun_path, "sock");
    CHECK(s >= 0 && bind(s, (struct sockaddr *)&sa, sizeof sa) == 0, "bind: %s", strerror(errno));
    close(s);
    path(p, sizeof p, "null");
    CHECK(symlink("/dev/null", p) == 0, "symlink: %s", strerror(errno));
    path(p, sizeof p, "up");
    CHECK(symlink("/", p) == 0, "symlink: %s", strerror(errno));
}

static void remove_store(void)
{
    static const char *const names[] = {"a", "d/b", "d", "in", "out", "dangling", "fifo", "sock", "null", "up"};
    char p[512];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        path(p, sizeof p, names[i]);
        if (remove(p) != 0)
            perror(p);
    }
    rmdir(root);
}

static void test_read(zf_store *s)
{
    zf_store_buf b = {NULL, 0};
    size_t n = 0;
    char err[128];
    zf_stamp st;
    CHECK(zf_store_read(s, "a", 100, &b, &n, &st, err, sizeof err) == ZF_OK, "read a: %s", err);
    CHECK(n == 10 && !memcmp(b.p, "0123456789", 10), "read a: %zu bytes", n);
    CHECK(st.kind == ZF_STORE_FILE && st.size == 10 && st.ino && st.ctime, "stamp of the read");
    CHECK(zf_store_read(s, "d/b", 100, &b, &n, NULL, err, sizeof err) == ZF_OK && n == 3, "d/b");
    CHECK(zf_store_read(s, "in", 100, &b, &n, NULL, err, sizeof err) == ZF_OK && n == 10,
          "a symlink inside the store is followed");
    CHECK(zf_store_read(s, "a", 9, &b, &n, NULL, err, sizeof err) == ZF_ECORRUPT &&
              strstr(err, "10 bytes (0.0 MiB), more than the 9 (0.0 MiB) allowed"), "max: %s", err);
    CHECK(zf_store_read(s, "nope", 9, &b, &n, &st, err, sizeof err) == ZF_ENOTFOUND &&
              st.kind == ZF_STORE_ABSENT, "absent");
    CHECK(zf_store_read(s, "d", 9, &b, &n, NULL, err, sizeof err) == ZF_ECORRUPT &&
              strstr(err, "a directory"), "dir: %s", err);
    CHECK(zf_store_read(s, "out", 100, &b, &n, NULL, err, sizeof err) == ZF_ECORRUPT &&
              strstr(err, "out of the store"), "out: %s", err);
    CHECK(zf_store_read(s, "dangling", 100, &b, &n, NULL, err, sizeof err) == ZF_ECORRUPT &&
              strstr(err, "to nothing"), "dangling: %s", err);
    free(b.p);
}

/* FIFOs, sockets and devices are refused at once (a blocking open would hang here) */
static void test_special(zf_store *s, zf_store *follow)
{
    zf_store_buf b = {NULL, 0};
    size_t n;
    char err[128];
    zf_stamp st;
    alarm(10); /* a regression hangs: fail instead */
    CHECK(zf_store_read(s, "fifo", 100, &b, &n, NULL, err, sizeof err) == ZF_ECORRUPT &&
              strstr(err, "a FIFO, not a regular file"), "fifo: %s", err);
    uint8_t buf[4];
    CHECK(zf_store_read_range(s, "fifo", 0, 4, buf, err, sizeof err) == ZF_ECORRUPT &&
              strstr(err, "FIFO"), "fifo range: %s", err);
    CHECK(zf_store_read(s, "sock", 100, &b, &n, NULL, err, sizeof err) == ZF_ECORRUPT &&
              strstr(err, "a socket"), "socket: %s", err);
    CHECK(zf_store_read(follow, "null", 100, &b, &n, NULL, err, sizeof err) == ZF_ECORRUPT &&
              strstr(err, "a character device"), "/dev/null via a symlink: %s", err);
    CHECK(zf_store_stamp(s, "fifo", &st) == ZF_OK && st.kind == ZF_STORE_OTHER, "fifo stamp");
    alarm(0);
    free(b.p);
}

static void test_ranges(zf_store *s)
{
    uint8_t x[4], y[3], z[2], w[2];
    char e0[64], e1[64], e2[64], e3[64];
    zf_store_req r[4] = {
        {.key = "a", .off = 2, .len = 4, .buf = x, .err = e0, .errcap = sizeof e0},
        {.key = "a", .off = 7, .len = 3, .buf = y, .err = e1, .errcap = sizeof e1},
        {.key = "nope", .off = 0, .len = 2, .buf = z, .err = e2, .errcap = sizeof e2},
        {.key = "d/b", .off = 2, .len = 2, .buf = w, .err = e3, .errcap = sizeof e3},
    };
    CHECK(zf_store_read_many(s, r, 4) == ZF_ENOTFOUND, "the first failure is returned");
    CHECK(r[0].rc == ZF_OK && !memcmp(x, "2345", 4), "range 0");
    CHECK(r[1].rc == ZF_OK && !memcmp(y, "789", 3), "range 1");
    CHECK(r[2].rc == ZF_ENOTFOUND, "range 2: %d", r[2].rc);
    CHECK(r[3].rc == ZF_ECORRUPT && strstr(e3, "ends at byte 3"), "range 3: %s", e3);
    char err[64];
    CHECK(zf_store_read_range(s, "a", UINT64_MAX - 1, 2, x, err, sizeof err) == ZF_ECORRUPT,
          "a range past any file is refused, not wrapped");
}

typedef struct seen {
    int files, dirs, others, links, aliases;
} seen;

static int count_entry(void *ctx, const zf_store_entry *e)
{
    seen *c = ctx;
    c->files += e->stamp.kind == ZF_STORE_FILE;
    c->dirs += e->stamp.kind == ZF_STORE_DIR;
    c->others += e->stamp.kind == ZF_STORE_OTHER;
    c->links += e->stamp.kind == ZF_STORE_LINK;
    c->aliases += e->alias;
    if (!strcmp(e->name, "a"))
        CHECK(e->stamp.size == 10 && !e->alias, "a's stamp in the listing");
    return 0;
}

/* as count_entry, for a kinds-only listing: a plain file or directory
 * entry carries its kind and nothing else (no stat was made for it) */
static int count_kind(void *ctx, const zf_store_entry *e)
{
    seen *c = ctx;
    c->files += e->stamp.kind == ZF_STORE_FILE;
    c->dirs += e->stamp.kind == ZF_STORE_DIR;
    c->others += e->stamp.kind == ZF_STORE_OTHER;
    c->links += e->stamp.kind == ZF_STORE_LINK;
    c->aliases += e->alias;
    if (!strcmp(e->name, "a") || !strcmp(e->name, "d"))
        CHECK(e->stamp.size == 0 && e->stamp.ino == 0 && !e->alias, "%s: kind only", e->name);
    return 0;
}

static int stop_at_first(void *ctx, const zf_store_entry *e)
{
    (*(int *)ctx)++;
    return 42;
}

static void test_list(zf_store *s)
{
    seen c = {0};
    CHECK(zf_store_list(s, "", 0, count_entry, &c, NULL, 0) == ZF_OK, "list root");
    /* a, in (-> a); d; fifo, sock; out, dangling, null (-> /dev/null), up (-> /) */
    CHECK(c.files == 2 && c.dirs == 1 && c.others == 2 && c.links == 4 && c.aliases == 5,
          "kinds: %d files, %d dirs, %d others, %d links, %d aliases", c.files, c.dirs, c.others,
          c.links, c.aliases);
    /* kinds only: the same kinds (symlinks still resolved), no other stamp fields */
    seen k = {0};
    CHECK(zf_store_list(s, "", ZF_LIST_KINDS, count_kind, &k, NULL, 0) == ZF_OK, "list root, kinds only");
    CHECK(k.files == c.files && k.dirs == c.dirs && k.others == c.others && k.links == c.links &&
              k.aliases == c.aliases,
          "kinds only: %d files, %d dirs, %d others, %d links, %d aliases", k.files, k.dirs,
          k.others, k.links, k.aliases);
    int calls = 0;
    CHECK(zf_store_list(s, "d", 0, stop_at_first, &calls, NULL, 0) == 42 && calls == 1, "fn stops the listing");
    CHECK(zf_store_list(s, "nope", 0, stop_at_first, &calls, NULL, 0) == ZF_ENOTFOUND, "absent prefix");
    CHECK(zf_store_list(s, "fifo", 0, stop_at_first, &calls, NULL, 0) < 0, "a FIFO is not listed as a directory");
}

/* rewriting a file with the same size and restoring its mtime changes its stamp */
static void test_stamp_identity(zf_store *s)
{
    zf_stamp before, after;
    char p[512];
    path(p, sizeof p, "a");
    CHECK(zf_store_stamp(s, "a", &before) == ZF_OK, "stamp");
    struct timespec times[2] = {{0, UTIME_OMIT}, {0, 0}};
    times[1].tv_sec = before.mtime / 1000000000;
    times[1].tv_nsec = before.mtime % 1000000000;
    usleep(20000);
    put("a", "9876543210");
    CHECK(utimensat(AT_FDCWD, p, times, 0) == 0, "utimensat: %s", strerror(errno));
    CHECK(zf_store_stamp(s, "a", &after) == ZF_OK && after.size == before.size &&
              after.mtime == before.mtime, "same size and mtime");
    zf_fp d0 = zf_stamp_digest(&before), d1 = zf_stamp_digest(&after);
    CHECK(d0.a != d1.a || d0.b != d1.b, "the digests differ (ctime)");
    CHECK(zf_store_stamp(s, "nope", &after) == ZF_ENOTFOUND && after.kind == ZF_STORE_ABSENT,
          "absent key");
    CHECK(zf_store_stamp(s, "out", &after) == ZF_OK && after.kind == ZF_STORE_LINK,
          "a symlink leaving the store is stamped as a link");
    CHECK(zf_store_stamp(s, "up/etc", &after) == ZF_OK && after.kind == ZF_STORE_LINK,
          "a key beneath a symlink leaving the store is stamped as a link, not what is outside");
}

int main(void)
{
    make_store();
    zf_store *s = NULL, *follow = NULL;
    CHECK(zf_store_open_local(root, 0, &s) == ZF_OK, "open");
    CHECK(zf_store_open_local(root, 1, &follow) == ZF_OK, "open with follow_symlinks");
    char fifo[512];
    path(fifo, sizeof fifo, "fifo");
    zf_store *bad = NULL;
    CHECK(zf_store_open_local(fifo, 0, &bad) == ZF_ENOTFOUND, "a FIFO is not a store root");
    if (s && follow) {
        CHECK(!strcmp(zf_store_path(s), root) || strstr(zf_store_path(s), "zf-test-store."),
              "name: %s", zf_store_path(s));
        test_read(s);
        test_special(s, follow);
        test_ranges(s);
        test_list(s);
        test_stamp_identity(s);
    }
    zf_store_close(s);
    zf_store_close(follow);
    zf_store_close(NULL);
    remove_store();
    return check_summary("test_store");
}
