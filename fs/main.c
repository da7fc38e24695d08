/* main.c - zarrfs: command line, store validation, mount and session loop. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/deadline.h"
#include "base/err.h"
#include "base/log.h"
#include "owner.h"
#include "precheck.h"
#include "optcheck.h"
#include "options.h"
#include "store/net.h"
#include "store/open.h"
#include "store/url.h"
#include "view/idxcache.h"
#include "zarr/cf.h"
#include "zarrfs.h"

/* the command line: a field per option of options.h (a string for VAL, a
 * flag for FLAG), STORE, and what the parser noted on the way */
typedef struct cli {
#define FIELD_VAL(id) char *id;
#define FIELD_FLAG(id) int id;
#define FIELD_OPT(id) char *id; int id##_flag;
#define X(id, kind, arg, def, desc) FIELD_##kind(id)
    ZF_OPTIONS(X)
#undef X
    char *store;
    int nonopts;
    int has_fsname;  /* -o fsname= given: the mount table shows it instead of STORE */
    int has_subtype; /* -o subtype= given */
    int allow_other; /* -o allow_other given: other users see the mount */
    int log_fd;      /* -o log=FILE, once opened; -1 otherwise */
} cli;

/* the default of each VAL option, from options.h */
static const char *const opt_default[] = {
#define X(id, kind, arg, def, desc) [ZF_OPT_##id] = def,
    ZF_OPTIONS(X)
#undef X
};
#define DEFAULT(c, id) ((c)->id ? (c)->id : opt_default[ZF_OPT_##id])

enum { KEY_FSNAME, KEY_SUBTYPE, KEY_IGNORE, KEY_WRITE, KEY_ALLOW_OTHER };

#define SPEC_VAL(id) {#id "=%s", offsetof(cli, id), 0}
#define SPEC_FLAG(id) {#id, offsetof(cli, id), 1}
#define SPEC_OPT(id) {#id "=%s", offsetof(cli, id), 0}, {#id, offsetof(cli, id##_flag), 1}
#define SPEC_KEY(name, key) FUSE_OPT_KEY(name, key),
static const struct fuse_opt cli_spec[] = {
#define X(id, kind, arg, def, desc) SPEC_##kind(id),
    ZF_OPTIONS(X)
#undef X
    FUSE_OPT_KEY("fsname=", KEY_FSNAME),   /* noted, and kept for libfuse */
    FUSE_OPT_KEY("subtype=", KEY_SUBTYPE),
    FUSE_OPT_KEY("allow_other", KEY_ALLOW_OTHER), /* noted, and kept for libfuse */
#define X(name) SPEC_KEY(name, KEY_IGNORE)
    ZF_IGNORED_MOUNT_OPTIONS(X)
#undef X
    FUSE_OPT_KEY("comment=", KEY_IGNORE),
#define X(name) SPEC_KEY(name, KEY_WRITE)
    ZF_WRITE_OPTIONS(X)
#undef X
    FUSE_OPT_END
};

/* a start-up error: one line "zarrfs: MSG[: ARG]" on stderr; exit status 1 */
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

/* the first non-option is STORE, the second (kept for libfuse) MOUNTPOINT;
 * mount(8)'s own options are dropped, write options refused */
static int cli_proc(void *data, const char *arg, int key, struct fuse_args *out)
{
    cli *c = data;
    switch (key) {
    case KEY_FSNAME: c->has_fsname = 1; return 1;
    case KEY_SUBTYPE: c->has_subtype = 1; return 1;
    case KEY_ALLOW_OTHER: c->allow_other = 1; return 1;
    case KEY_IGNORE: return 0;
    case KEY_WRITE:
        fprintf(stderr, "zarrfs: -o %s: zarrfs is read-only (mount with -o ro)\n", arg);
        return -1;
    case FUSE_OPT_KEY_OPT:
        return strncmp(arg, "x-", 2) == 0 ? 0 : 1; /* fstab's x-* options are userspace's */
    case FUSE_OPT_KEY_NONOPT:
        if (c->nonopts++ == 0) {
            c->store = strdup(arg);
            return c->store ? 0 : -1;
        }
        return 1;
    default:
        return 1;
    }
}

#define ZF_READ_AHEAD_MAX ((size_t)1 << 30)

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

/* the loop of a mounted session, multi-threaded unless -s; <0 on error */
static int loop(struct fuse_session *se, const struct fuse_cmdline_opts *o)
{
    if (o->singlethread)
        return fuse_session_loop(se);
    struct fuse_loop_config *cfg = fuse_loop_cfg_create();
    if (!cfg)
        return -ENOMEM;
    fuse_loop_cfg_set_clone_fd(cfg, (unsigned)o->clone_fd);
    fuse_loop_cfg_set_max_threads(cfg, o->max_threads);
    if (o->max_idle_threads != UINT_MAX)
        fuse_loop_cfg_set_idle_threads(cfg, o->max_idle_threads);
    int rc = fuse_session_loop_mt(se, cfg);
    fuse_loop_cfg_destroy(cfg);
    return rc;
}

/* serve a mounted session: daemonize unless -f, start the threads, loop */
static int serve_mounted(struct fuse_session *se, const struct fuse_cmdline_opts *o, zf_fs *fs)
{
    if (fuse_daemonize(o->foreground) != 0) {
        zf_log_error("cannot become a daemon; unmounting");
        return -1;
    }
    zf_log_copy_stderr(0); /* from now on, the log's own sink only */
    zf_log_info("%s mounted at %s (read-only)", zf_store_path(fs->store), o->mountpoint);
    /* threads after the fork; the prefetch workers before the notifier,
     * whose re-checks free trees (zf_cache_cancel reads the workers) */
    if (zf_cache_start_prefetch(fs->cache, prefetch_threads()) != 0)
        zf_log_warn("cannot start a thread; sequential reads will not prefetch");
    if (zf_gen_start_notifier(fs) != 0)
        zf_log_warn("cannot start a thread; changes to the store will not be seen");
    if (!(fs->presize = zf_presize_start(fs, fs->presize_bytes)))
        zf_log_warn("out of memory; arrays will not be sized ahead");
    int rc = loop(se, o);
    zf_presize_stop(fs->presize); /* (its passes hold generations and the cache) */
    fs->presize = NULL;
    zf_gen_stop_notifier(fs); /* no notification may outlive the session's fd */
    return rc;
}

/* The signals that stop the daemon: libfuse's handlers end the session
 * loop, which then waits for the requests in flight; ours first abandons
 * every wait for the store (base/deadline.h), so that they end at once and
 * the daemon unmounts within moments, whatever the servers do. */
static const int stop_signals[] = {SIGHUP, SIGINT, SIGTERM};
static struct sigaction fuse_stop_action[3];

static void on_stop_signal(int sig)
{
    zf_deadline_cancel_all();
    for (unsigned i = 0; i < 3; i++)
        if (stop_signals[i] == sig && fuse_stop_action[i].sa_handler != SIG_DFL &&
            fuse_stop_action[i].sa_handler != SIG_IGN)
            fuse_stop_action[i].sa_handler(sig);
}

/* put on_stop_signal in front of libfuse's handlers (after
 * fuse_set_signal_handlers); restore (before fuse_remove_signal_handlers) */
static void chain_stop_signals(int restore)
{
    for (unsigned i = 0; i < 3; i++) {
        if (restore) {
            sigaction(stop_signals[i], &fuse_stop_action[i], NULL);
            continue;
        }
        struct sigaction sa = {.sa_handler = on_stop_signal};
        sigemptyset(&sa.sa_mask);
        sigaction(stop_signals[i], &sa, &fuse_stop_action[i]);
    }
}

/* run the session until unmounted or signalled; the exit status */
static int serve(struct fuse_args *args, struct fuse_cmdline_opts *o, zf_fs *fs)
{
    struct fuse_session *se = fuse_session_new(args, &zf_fs_ops, sizeof zf_fs_ops, fs);
    if (!se)
        return 1;
    fs->se = se;
    int rc = 1;
    if (fuse_set_signal_handlers(se) == 0) {
        chain_stop_signals(0);
        if (fuse_session_mount(se, o->mountpoint) == 0) {
            rc = serve_mounted(se, o, fs) < 0 ? 1 : 0; /* a signal ends the loop normally */
            fuse_session_unmount(se);
            zf_log_info("%s unmounted", o->mountpoint);
        }
        chain_stop_signals(1);
        fuse_remove_signal_handlers(se);
    }
    fuse_session_destroy(se);
    return rc;
}

/* the settings of a valid command line */
typedef struct settings {
    size_t cache_bytes;
    size_t read_ahead;
    size_t presize;     /* -o presize (bytes of values), 0: none */
    double timeout;     /* ZF_TIMEOUT_NEVER: a static view */
    zf_log_level log_level;
    zf_layout_opts lo;
    zf_store_opts so;   /* how to open the store (owned: zf_store_opts_free) */
    zf_owner owner;     /* -o uid=, gid=, umask= (owner.h) */
    char ignored[256];  /* options for remote stores only, ignored for a local one */
    char index_dir[4096];
} settings;

/* a remote store's credential refreshes and their failures, into the log */
static void cred_note(zf_log_level level, const char *line)
{
    zf_log_msg(level, "%s", line);
}

/* "1.5"-style seconds, 0 to 1e9, or never; 0 or -1 */
static int parse_seconds(const char *s, double *out)
{
    char kw[8];
    if (!strcmp(zf_opt_keyword(s, kw, sizeof kw), "never")) {
        *out = ZF_TIMEOUT_NEVER;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0 || v > 1e9)
        return -1;
    *out = v;
    return 0;
}

/* the options of options.h as cli holds them, by number (flags given: "") */
static void cli_values(const cli *c, const char *val[ZF_OPT_COUNT])
{
#define VAL_VAL(id) val[ZF_OPT_##id] = c->id;
#define VAL_FLAG(id) val[ZF_OPT_##id] = c->id ? "" : NULL;
#define VAL_OPT(id) val[ZF_OPT_##id] = c->id ? c->id : c->id##_flag ? "" : NULL;
#define X(id, kind, arg, def, desc) VAL_##kind(id)
    ZF_OPTIONS(X)
#undef X
#undef VAL_VAL
#undef VAL_FLAG
#undef VAL_OPT
}

/* check the mount's own options (those zarrfs-cat has not) into st; the
 * exit status (1 after a line on stderr) */
static int check_mount_options(const cli *c, const struct fuse_cmdline_opts *o, settings *st)
{
    char kw[16], err[256];
    st->read_ahead = zf_opt_size(DEFAULT(c, read_ahead));
    if (!st->read_ahead && strcmp(DEFAULT(c, read_ahead), "0") != 0)
        return fail("invalid read_ahead", c->read_ahead);
    if (st->read_ahead > ZF_READ_AHEAD_MAX)
        return fail("read_ahead is larger than 1G", c->read_ahead);
    st->presize = zf_opt_size(DEFAULT(c, presize));
    if (!st->presize && strcmp(DEFAULT(c, presize), "0") != 0)
        return fail("invalid presize", c->presize);
    /* a remote store is re-checked less often: every check costs requests */
    const char *timeout = c->timeout ? c->timeout : zf_store_spec_remote(c->store) ? "60" : "1";
    if (parse_seconds(timeout, &st->timeout))
        return fail("invalid timeout (seconds from 0 to 1e9, or never)", c->timeout);
    if (zf_log_level_parse(zf_opt_keyword(DEFAULT(c, log_level), kw, sizeof kw), &st->log_level))
        return fail("unknown log_level (error, warn, info, debug)", c->log_level);
    if (o->debug && !c->log_level)
        st->log_level = ZF_LOG_DEBUG;
    if (zf_owner_parse(c->uid, c->gid, c->umask, &st->owner, err, sizeof err))
        return fail(err, NULL);
    if (!c->no_index_cache && zf_idxcache_default_dir(st->index_dir, sizeof st->index_dir) == 0)
        st->lo.index_dir = st->index_dir;
    if (!(st->lo.index_max = zf_opt_size(DEFAULT(c, index_cache_size))))
        return fail("invalid index_cache_size", c->index_cache_size);
    return 0;
}

/* check every option's value and fill st; the exit status (1 after a line on stderr) */
static int check_options(const cli *c, const struct fuse_cmdline_opts *o, settings *st)
{
    const char *val[ZF_OPT_COUNT];
    char err[256];
    cli_values(c, val);
    st->so.note = cred_note;
    if (zf_opt_settings(val, &st->lo, &st->cache_bytes, &st->so, err, sizeof err))
        return fail(err, NULL);
    st->so.cache_bytes = st->cache_bytes; /* a repository's manifests take a share of it */
    if (!zf_store_spec_remote(c->store)) /* one fstab template serves both */
        zf_store_opts_drop_remote(&st->so, st->ignored, sizeof st->ignored);
    return check_mount_options(c, o, st);
}

/* open path for appending log lines: a regular file (created 0640), never a
 * symlink, FIFO, device or directory, so that a write cannot block the
 * daemon nor land elsewhere: opened once, without following a symlink or
 * blocking, and that descriptor checked; it is above 2 (daemonizing replaces
 * 0-2) and close-on-exec.  The descriptor or a negative errno (-EINVAL: not
 * a regular file; -ELOOP: a symlink). */
static int open_log(const char *path)
{
    struct stat st;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW,
                  0640);
    if (fd < 0)
        return errno == ENXIO || errno == EISDIR ? -EINVAL : -errno; /* ELOOP: a symlink */
    int rc = fstat(fd, &st) != 0 ? -errno : !S_ISREG(st.st_mode) ? -EINVAL : 0;
    if (rc == 0 && fd <= STDERR_FILENO) {
        int high = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
        rc = high < 0 ? -errno : 0;
        close(fd);
        fd = high;
    }
    if (rc != 0) {
        if (fd >= 0)
            close(fd);
        return rc;
    }
    return fd;
}

/* where log lines go: -o log=FILE, else stderr with -f, else syslog; until
 * the mount is up they are copied to stderr too.  The exit status. */
static int setup_log(cli *c, const struct fuse_cmdline_opts *o, const settings *st)
{
    zf_log_set_level(st->log_level);
    if (c->log) {
        int fd = open_log(c->log);
        if (fd == -EINVAL)
            return fail("log file is not a regular file", c->log);
        if (fd == -ELOOP)
            return fail("log file is a symlink (not followed)", c->log);
        if (fd < 0)
            return fail_errno("cannot open log file", c->log, -fd);
        c->log_fd = fd;
        zf_log_to_fd(fd);
        zf_log_copy_stderr(1);
    } else if (!o->foreground) {
        zf_log_to_syslog();
        zf_log_copy_stderr(1);
    }
    return 0;
}

/* libfuse's messages, as log lines at the matching level.  libfuse may
 * write a line in pieces: they are gathered per thread up to the newline. */
static void fuse_message(enum fuse_log_level level, const char *fmt, va_list ap)
{
    static _Thread_local char line[1024];
    static _Thread_local size_t len;
    int n = vsnprintf(line + len, sizeof line - len, fmt, ap);
    len = n < 0 ? len : len + (size_t)n < sizeof line ? len + (size_t)n : sizeof line - 1;
    if (len < sizeof line - 1 && (len == 0 || line[len - 1] != '\n'))
        return; /* the rest of the line is still to come */
    while (len && line[len - 1] == '\n')
        len--;
    zf_log_level l = level <= FUSE_LOG_ERR ? ZF_LOG_ERROR : level == FUSE_LOG_WARNING ? ZF_LOG_WARN
                     : level == FUSE_LOG_DEBUG ? ZF_LOG_DEBUG : ZF_LOG_INFO;
    zf_log_msg(l, "%.*s", (int)len, line);
    len = 0;
}

/* open STORE; for a local one, *mtime gets its root's; *attrs what every
 * node shows (owner.h); the exit status */
static int open_store(const cli *c, const settings *st, zf_store **store, struct timespec *mtime,
                      zf_owner_attrs *attrs)
{
    char err[512];
    int remote = zf_store_spec_remote(c->store);
    int rc = zf_store_open_spec(c->store, &st->so, store, err, sizeof err);
    if (rc && (remote || err[0])) {
        char shown[1024];
        zf_url_redact(c->store, shown, sizeof shown);
        fprintf(stderr, "zarrfs: cannot open store %s: %s\n", shown, err[0] ? err : zf_strerror(rc));
        return 1;
    }
    if (rc)
        return fail(rc == ZF_ENOTFOUND ? "store not found or not a directory" : "cannot open store", c->store);
    if (remote) { /* no root to stat: the mount's time */
        clock_gettime(CLOCK_REALTIME, mtime);
        *attrs = zf_owner_resolve(&st->owner, c->allow_other, NULL);
        return 0;
    }
    if (*st->ignored)
        zf_log_warn("-o %s: for remote stores only; ignored for the local store %s", st->ignored,
                    c->store);
    struct stat sst;
    if (fstatat(AT_FDCWD, c->store, &sst, 0) != 0) {
        rc = fail_errno("cannot stat store", c->store, errno);
        zf_store_close(*store);
        *store = NULL;
        return rc;
    }
    *mtime = sst.st_mtim;
    *attrs = zf_owner_resolve(&st->owner, c->allow_other, &sst);
    return 0;
}

/* mount STORE with valid settings; the exit status */
static int run_with(struct fuse_args *args, struct fuse_cmdline_opts *o, cli *c, const settings *st)
{
    zf_store *store = NULL;
    zf_tree *tree = NULL;
    struct timespec mtime;
    zf_owner_attrs attrs;
    int rc = open_store(c, st, &store, &mtime, &attrs);
    if (rc)
        return rc;
    zf_cache *cache = zf_cache_new(st->cache_bytes);
    if (!cache || (rc = zf_tree_build(store, cache, &st->lo, &tree))) {
        /* invalid or unreadable root metadata was already reported on its own line */
        int r = rc == ZF_ECORRUPT || rc == ZF_EUNSUPPORTED || rc == ZF_EIO ? 1
                : fail(rc == ZF_ENOTFOUND ? "not a Zarr store (no zarr.json, .zgroup or .zarray)"
                                          : "cannot read store", c->store);
        zf_store_close(store);
        zf_cache_free(cache);
        return r;
    }
    if (!zf_store_spec_remote(c->store) && zf_tree_root_is_array(tree) && !st->lo.labels_index)
        zf_precheck_root_array(c->store);
    zf_precheck_warn_not_empty(o->mountpoint);
    zf_fs fs = {.store = store, .cache = cache, .opts = &st->lo, .timeout = st->timeout,
                .uid = attrs.uid, .gid = attrs.gid, .file_mode = attrs.file_mode,
                .dir_mode = attrs.dir_mode, .mtime = mtime,
                .mountpoint = o->mountpoint, .read_ahead_kb = (unsigned)(st->read_ahead >> 10),
                .read_ahead_asked = c->read_ahead != NULL, .presize_bytes = st->presize};
    if (add_mount_opts(args, c, zf_store_path(store)) != 0) {
        zf_tree_free(tree);
        rc = fail("out of memory", NULL);
    } else if (zf_gen_start(&fs, tree) != 0) {
        zf_tree_free(tree);
        rc = fail("out of memory", NULL);
    } else {
        rc = serve(args, o, &fs);
        zf_fs_close_files(&fs);
        zf_gen_stop(&fs);
    }
    zf_cache_free(cache);
    zf_store_close(store);
    return rc;
}

/* mount STORE with valid options; the exit status */
static int run(struct fuse_args *args, struct fuse_cmdline_opts *o, cli *c)
{
    settings st = {0};
    int rc = 1;
    if (!check_options(c, o, &st) && !zf_precheck_fuse_options(args, fuse_message) &&
        !zf_precheck_mountpoint(o->mountpoint) && !setup_log(c, o, &st))
        rc = run_with(args, o, c, &st);
    zf_store_opts_free(&st.so);
    return rc;
}

/* free what the command line parser allocated */
static void cli_free(cli *c)
{
#define FREE_VAL(id) free(c->id);
#define FREE_FLAG(id)
#define FREE_OPT(id) free(c->id);
#define X(id, kind, arg, def, desc) FREE_##kind(id)
    ZF_OPTIONS(X)
#undef X
    free(c->store);
}

int main(int argc, char **argv)
{
    /* decoded chunks are megabytes: keep them out of the heap so that memory
     * freed by the cache goes back to the system (no dynamic threshold) */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    fuse_set_log_func(fuse_message);
    sigset_t usr1; /* asks for a re-check (gen.c's thread waits for it), never ends us */
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL);
    char err[256];
    if (zf_net_global_init(err, sizeof err) != ZF_OK) /* before any thread */
        return fail(err, NULL);
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    struct fuse_cmdline_opts o;
    cli c = {.log_fd = -1};
    int rc = 1;
    memset(&o, 0, sizeof o);
    if (fuse_opt_parse(&args, &c, cli_spec, cli_proc) != 0 || fuse_parse_cmdline(&args, &o) != 0)
        goto out;
    if (o.show_help) {
        zf_help_print(argv[0]);
        rc = 0;
    } else if (o.show_version) {
        zf_version_print();
        rc = 0;
    } else if (!c.store || !o.mountpoint) {
        fprintf(stderr, "usage: %s [options] STORE MOUNTPOINT (see --help)\n", argv[0]);
    } else {
        rc = run(&args, &o, &c);
    }
out:
    zf_log_to_stderr();
    if (c.log_fd >= 0)
        close(c.log_fd);
    free(o.mountpoint);
    cli_free(&c);
    fuse_opt_free_args(&args);
    zf_net_global_cleanup();
    return rc;
}
