/* main.c - zarrfs: command line, store validation, mount and session loop. */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "view/idxcache.h"
#include "zarrfs.h"

typedef struct cli {
    char *store;
    char *cache_size;
    char *read_ahead;
    char *format;
    char *nat;
    char *cf;
    int follow_symlinks;
    int no_index_cache;
    double timeout;
    int nonopts;
    int has_fsname;  /* -o fsname= given: the mount table shows it instead of STORE */
    int has_subtype; /* -o subtype= given */
} cli;

enum { KEY_FSNAME, KEY_SUBTYPE };

#define OPT(t, f, v) {t, offsetof(cli, f), v}
static const struct fuse_opt cli_spec[] = {
    OPT("cache_size=%s", cache_size, 0),
    OPT("read_ahead=%s", read_ahead, 0),
    OPT("format=%s", format, 0),
    OPT("nat=%s", nat, 0),
    OPT("cf=%s", cf, 0),
    OPT("follow_symlinks", follow_symlinks, 1),
    OPT("no_index_cache", no_index_cache, 1),
    OPT("timeout=%lf", timeout, 0),
    FUSE_OPT_KEY("fsname=", KEY_FSNAME),   /* noted, and kept for libfuse */
    FUSE_OPT_KEY("subtype=", KEY_SUBTYPE),
    FUSE_OPT_END
};

/* the first non-option is STORE, the second (kept for libfuse) MOUNTPOINT */
static int cli_proc(void *data, const char *arg, int key, struct fuse_args *out)
{
    cli *c = data;
    if (key == KEY_FSNAME)
        c->has_fsname = 1;
    if (key == KEY_SUBTYPE)
        c->has_subtype = 1;
    if (key != FUSE_OPT_KEY_NONOPT)
        return 1;
    if (c->nonopts++ == 0) {
        c->store = strdup(arg);
        return 0;
    }
    return 1;
}

static void usage(const char *prog)
{
    printf("usage: %s [options] STORE MOUNTPOINT\n\n"
           "Mount the Zarr store STORE (a directory, format v3 or v2) read-only at\n"
           "MOUNTPOINT, showing every numpy.timedelta64 array NAME as NAME.txt (one\n"
           "duration per line) and NAME.csv (indices and duration).\n\n"
           "zarrfs options:\n"
           "    -o cache_size=BYTES    bound on decoded chunk memory (K/M/G suffixes; default 256M)\n"
           "    -o read_ahead=BYTES    kernel read-ahead window of the mount (default 4M; 0 leaves\n"
           "                           the kernel's; needs root)\n"
           "    -o format=FORMAT       pandas (default), iso, numpy, seconds or raw\n"
           "    -o nat=TEXT            text shown for NaT (default NaT)\n"
           "    -o cf=WHICH            CF-encoded durations shown: all (default; a duration\n"
           "                           units attribute), dtype (also xarray's dtype attribute)\n"
           "                           or off (numpy.timedelta64 arrays only)\n"
           "    -o follow_symlinks     follow symlinks that leave the store\n"
           "    -o no_index_cache      do not keep offset indexes in $XDG_CACHE_HOME/zarrfs\n"
           "    -o timeout=SECONDS     how long the kernel caches names and sizes, and how\n"
           "                           often the store is re-checked for changes (default 1)\n\n", prog);
}

#define ZF_READ_AHEAD ((size_t)4 << 20)     /* see fs/readahead.c */
#define ZF_READ_AHEAD_MAX ((size_t)1 << 30)

/* parse "256M"-style sizes; 0 on error */
static size_t parse_size(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return 0;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if ((*end == 'B' || *end == 'b') && end[1] == '\0')
        end++;
    if (*end || v > (SIZE_MAX >> shift))
        return 0;
    return (size_t)v << shift;
}

static int fail(const char *msg, const char *arg)
{
    fprintf(stderr, "zarrfs: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    return 1;
}

/* as fail, with the reason err (an errno value) after arg */
static int fail_errno(const char *msg, const char *arg, int err)
{
    fprintf(stderr, "zarrfs: %s: %s: %s\n", msg, arg, strerror(err));
    return 1;
}

/* refuse a MOUNTPOINT that is not a directory (the view's root is one); a
 * /dev/fd/N given by a mount helper is libfuse's to check */
static int check_mountpoint(const char *mnt)
{
    unsigned fd;
    int end = 0;
    if (sscanf(mnt, "/dev/fd/%u%n", &fd, &end) == 1 && mnt[end] == '\0')
        return 0;
    struct stat st;
    if (stat(mnt, &st) != 0)
        return fail_errno("cannot use mountpoint", mnt, errno);
    if (!S_ISDIR(st.st_mode))
        return fail("mountpoint is not a directory", mnt);
    return 0;
}

/* "-oNAME=VALUE" with VALUE escaped for libfuse's option parser (a backslash
 * before every ',' and '\\'); NULL when out of memory */
static char *escaped_opt(const char *name, const char *value)
{
    char *s = malloc(strlen(name) + 2 * strlen(value) + 4);
    if (!s)
        return NULL;
    char *o = s + sprintf(s, "-o%s=", name);
    for (const char *p = value; *p; p++) {
        if (*p == ',' || *p == '\\')
            *o++ = '\\';
        *o++ = *p;
    }
    *o = '\0';
    return s;
}

/* our mount options: read-only, and the mount table shows the store's
 * resolved path as the source and type fuse.zarrfs, unless given otherwise */
static int add_mount_opts(struct fuse_args *args, const cli *c, const char *store_path)
{
    if (fuse_opt_add_arg(args, "-oro,default_permissions") != 0 ||
        (!c->has_subtype && fuse_opt_add_arg(args, "-osubtype=zarrfs") != 0))
        return -ENOMEM;
    if (c->has_fsname)
        return 0;
    char *fsname = escaped_opt("fsname", store_path);
    int rc = fsname && fuse_opt_add_arg(args, fsname) == 0 ? 0 : -ENOMEM;
    free(fsname);
    return rc;
}

/* background decoders for sequential readers: one per CPU, at most 4 */
static unsigned prefetch_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 4 ? 4 : (unsigned)n;
}

/* run the session until unmounted or signalled */
static int serve(struct fuse_args *args, struct fuse_cmdline_opts *o, zf_fs *fs)
{
    struct fuse_session *se = fuse_session_new(args, &zf_fs_ops, sizeof zf_fs_ops, fs);
    if (!se)
        return 1;
    fs->se = se;
    int rc = 1;
    if (fuse_set_signal_handlers(se) == 0) {
        if (fuse_session_mount(se, o->mountpoint) == 0) {
            fuse_daemonize(o->foreground);
            /* threads after the fork; the prefetch workers before the notifier,
             * whose re-checks free trees (zf_cache_cancel reads the workers) */
            if (zf_cache_start_prefetch(fs->cache, prefetch_threads()) != 0)
                fprintf(stderr, "zarrfs: cannot start a thread; sequential reads will not prefetch\n");
            if (zf_gen_start_notifier(fs) != 0)
                fprintf(stderr, "zarrfs: cannot start a thread; changes to the store will not be seen\n");
            if (o->singlethread) {
                rc = fuse_session_loop(se);
            } else {
                struct fuse_loop_config *cfg = fuse_loop_cfg_create();
                fuse_loop_cfg_set_clone_fd(cfg, (unsigned)o->clone_fd);
                fuse_loop_cfg_set_max_threads(cfg, o->max_threads);
                if (o->max_idle_threads != UINT_MAX)
                    fuse_loop_cfg_set_idle_threads(cfg, o->max_idle_threads);
                rc = fuse_session_loop_mt(se, cfg);
                fuse_loop_cfg_destroy(cfg);
            }
            zf_gen_stop_notifier(fs); /* no notification may outlive the session's fd */
            fuse_session_unmount(se);
            rc = rc < 0 ? 1 : 0; /* a signal ends the loop normally */
        }
        fuse_remove_signal_handlers(se);
    }
    fuse_session_destroy(se);
    return rc;
}

static int run(struct fuse_args *args, struct fuse_cmdline_opts *o, cli *c)
{
    size_t cache_bytes = c->cache_size ? parse_size(c->cache_size) : (size_t)256 << 20;
    zf_layout_opts lo = {.format = ZF_FORMAT_PANDAS, .nat = c->nat ? c->nat : "NaT"};
    char index_dir[4096];
    if (!c->no_index_cache && zf_idxcache_default_dir(index_dir, sizeof index_dir) == 0)
        lo.index_dir = index_dir;
    size_t read_ahead = c->read_ahead ? parse_size(c->read_ahead) : ZF_READ_AHEAD;
    if (!cache_bytes)
        return fail("invalid cache_size", c->cache_size);
    if (c->read_ahead && !read_ahead && strcmp(c->read_ahead, "0") != 0)
        return fail("invalid read_ahead", c->read_ahead);
    if (read_ahead > ZF_READ_AHEAD_MAX)
        return fail("read_ahead is larger than 1G", c->read_ahead);
    if (!(c->timeout >= 0 && c->timeout <= 1e9))
        return fail("invalid timeout", NULL);
    if (c->format && zf_format_parse(c->format, &lo.format))
        return fail("unknown format (pandas, iso, numpy, seconds, raw)", c->format);
    if (c->cf && zf_cf_mode_parse(c->cf, &lo.cf))
        return fail("unknown cf (all, dtype, off)", c->cf);
    if (strlen(lo.nat) > ZF_NAT_MAX)
        return fail("nat text is too long", NULL);
    if (check_mountpoint(o->mountpoint))
        return 1;
    zf_store *store = NULL;
    zf_tree *tree = NULL;
    int rc = zf_store_open_local(c->store, c->follow_symlinks, &store);
    if (rc)
        return fail(rc == ZF_ENOTFOUND ? "store not found or not a directory" : "cannot open store", c->store);
    struct stat st;
    if (fstatat(AT_FDCWD, c->store, &st, 0) != 0) {
        rc = fail_errno("cannot stat store", c->store, errno);
        zf_store_close(store);
        return rc;
    }
    zf_cache *cache = zf_cache_new(cache_bytes);
    if (!cache || (rc = zf_tree_build(store, cache, &lo, &tree))) {
        /* invalid root metadata was already reported on its own line */
        int r = rc == ZF_ECORRUPT || rc == ZF_EUNSUPPORTED ? 1
                : fail(rc == ZF_ENOTFOUND ? "not a Zarr store (no zarr.json, .zgroup or .zarray)"
                                          : "cannot read store", c->store);
        zf_store_close(store);
        zf_cache_free(cache);
        return r;
    }
    zf_fs fs = {.store = store, .cache = cache, .opts = &lo, .timeout = c->timeout,
                .uid = getuid(), .gid = getgid(), .mtime = st.st_mtim,
                .mountpoint = o->mountpoint, .read_ahead_kb = (unsigned)(read_ahead >> 10),
                .read_ahead_asked = c->read_ahead != NULL};
    if (add_mount_opts(args, c, zf_store_path(store)) != 0) {
        zf_tree_free(tree);
        rc = fail("out of memory", NULL);
    } else if (zf_gen_start(&fs, tree) != 0) {
        zf_tree_free(tree);
        rc = fail("out of memory", NULL);
    } else {
        rc = serve(args, o, &fs);
        zf_gen_stop(&fs);
    }
    zf_cache_free(cache);
    zf_store_close(store);
    return rc;
}

int main(int argc, char **argv)
{
    /* decoded chunks are megabytes: keep them out of the heap so that memory
     * freed by the cache goes back to the system (no dynamic threshold) */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    struct fuse_cmdline_opts o;
    cli c = {.timeout = 1.0};
    int rc = 1;
    memset(&o, 0, sizeof o);
    if (fuse_opt_parse(&args, &c, cli_spec, cli_proc) != 0 || fuse_parse_cmdline(&args, &o) != 0)
        goto out;
    if (o.show_help) {
        usage(argv[0]);
        fuse_cmdline_help();
        fuse_lowlevel_help();
        rc = 0;
    } else if (o.show_version) {
        printf("zarrfs version %s\n", ZF_VERSION);
        fuse_lowlevel_version();
        rc = 0;
    } else if (!c.store || !o.mountpoint) {
        fprintf(stderr, "usage: %s [options] STORE MOUNTPOINT (see --help)\n", argv[0]);
    } else {
        rc = run(&args, &o, &c);
    }
out:
    free(o.mountpoint);
    free(c.store);
    free(c.cache_size);
    free(c.read_ahead);
    free(c.format);
    free(c.nat);
    free(c.cf);
    fuse_opt_free_args(&args);
    return rc;
}
