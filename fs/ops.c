/* ops.c - FUSE low-level operations over the core tree; the only place where
 * core error codes become errno values. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/deadline.h"
#include "base/err.h"
#include "base/log.h"
#include "zarrfs.h"

#define READ_MAX (1u << 20)

static zf_fs *fs_of(fuse_req_t req)
{
    return fuse_req_userdata(req);
}

/* a node's times: when its content last changed (tree.h), else the mount's */
static void node_times(const zf_fs *fs, const zf_node *n, struct stat *st)
{
    int64_t t = zf_tree_node_time(n);
    struct timespec ts = {(time_t)(t / 1000000000), (long)(t % 1000000000)};
    st->st_atim = st->st_mtim = st->st_ctim = t > 0 ? ts : fs->mtime;
}

/* would the size of node n (a file) run the size pass, or read the
 * coordinates of its labelled .csv? */
static int needs_pass(const zf_node *n)
{
    return !zf_layout_view_ready(n->layout, n->view);
}

/* is the size of node n (a file) for good?  Not while a size pass is still
 * to run, and never for .info, which tells the state at each open (each
 * GETATTR tells the size of its latest text) */
static int size_final(const zf_node *n)
{
    return n->view != ZF_VIEW_INFO && !needs_pass(n);
}

/* attributes of a node; a file's size may run the size pass (unless
 * !size_now: then an unsized file shows size 0, for a LOOKUP, answered with
 * an attribute timeout of 0 so that the kernel asks GETATTR for the size),
 * before its times (they include its chunks') */
static int node_attr(const zf_fs *fs, const zf_node *n, struct stat *st, int size_now)
{
    memset(st, 0, sizeof *st);
    st->st_ino = n->ino;
    st->st_uid = fs->uid;
    st->st_gid = fs->gid;
    st->st_blksize = 4096;
    if (n->is_dir) {
        st->st_mode = S_IFDIR | fs->dir_mode;
        st->st_nlink = 2;
        node_times(fs, n, st);
        return 0;
    }
    uint64_t size = 0;
    int rc = size_now || !needs_pass(n) ? zf_layout_size(n->layout, n->view, &size) : ZF_OK;
    if (rc)
        return zf_err_errno(rc);
    node_times(fs, n, st);
    st->st_mode = S_IFREG | fs->file_mode;
    st->st_nlink = 1;
    st->st_size = (off_t)size;
    st->st_blocks = (blkcnt_t)((size + 511) / 512);
    return 0;
}

/* a request's cancellation (base/deadline.h): the kernel's INTERRUPT of it
 * (its caller got a signal, or was killed) abandons its waits for the store */
static void on_interrupt(fuse_req_t req, void *ticket)
{
    (void)req;
    zf_deadline_cancel((uint64_t)(uintptr_t)ticket);
}

/* serve req on this thread until req_end, within deadline abs_ms
 * (ZF_DEADLINE_NONE: none), abandoned when the kernel interrupts it */
static void req_begin(fuse_req_t req, uint64_t abs_ms)
{
    uint64_t ticket = zf_deadline_begin(abs_ms);
    fuse_req_interrupt_func(req, on_interrupt, (void *)(uintptr_t)ticket);
}

/* the request served since req_begin ended with errno err (0: success);
 * the errno to reply: EINTR for one that was abandoned */
static int req_end(int err)
{
    if (err && zf_deadline_cancelled())
        err = EINTR;
    zf_deadline_end();
    return err;
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
    if (conn->capable & FUSE_CAP_ASYNC_READ)
        conn->want |= FUSE_CAP_ASYNC_READ;
    /* a lookup must not hold up the directory's listing (libfuse 3.14 does
     * not pass this on; op_lookup never waits for a size pass either) */
    if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
        conn->want |= FUSE_CAP_PARALLEL_DIROPS;
    /* O_DIRECT reads as requests of their caller, which the kernel
     * interrupts when the caller gets a signal (asynchronous ones it never
     * does: the caller could not be released before the store answered) */
    conn->want &= ~(unsigned)FUSE_CAP_ASYNC_DIO;
    conn->want &= ~(unsigned)FUSE_CAP_READDIRPLUS;
    conn->want &= ~(unsigned)FUSE_CAP_AUTO_INVAL_DATA;
}

/* LOOKUP: the child answers from its parent's generation, and the kernel's
 * new reference to it is counted (see zf_gen_remember).  It never waits for
 * a size pass: the kernel holds the directory while a LOOKUP runs (libfuse
 * 3.14 cannot ask for parallel directory operations), so a lookup waiting
 * for a stalled server would hold up every lookup and listing of that
 * directory.  An unsized file's size comes with GETATTR instead. */
static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    zf_fs *fs = fs_of(req);
    zf_gen *g;
    const zf_node *p = zf_gen_node(fs, parent, &g);
    const zf_node *n = p ? zf_tree_lookup(g->tree, parent, name) : NULL;
    struct fuse_entry_param e;
    memset(&e, 0, sizeof e);
    e.entry_timeout = fs->timeout;
    e.attr_timeout = fs->timeout;
    int err = n ? node_attr(fs, n, &e.attr, 0) : p && p->incomplete ? EIO : 0;
    if (!n && err) /* the store could not tell whether name is there: not "no such" */
        zf_gen_recheck_soon(fs);
    if (n && !n->is_dir && !size_final(n))
        e.attr_timeout = 0; /* the size is not known yet: GETATTR runs the pass */
    if (n && !err) {
        e.ino = n->ino;
        e.generation = 1;
        err = -zf_gen_remember(fs, g, n->ino);
    }
    zf_gen_put(fs, g);
    if (err)
        fuse_reply_err(req, err);
    else if (fuse_reply_entry(req, &e) != 0 && n) /* without a node: a cached negative answer */
        zf_gen_forget(fs, n->ino, 1);              /* the kernel never got the reference */
}

/* FORGET: the kernel dropped nlookup references to ino */
static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
    zf_gen_forget(fs_of(req), ino, nlookup);
    fuse_reply_none(req);
}

/* FORGET of many numbers at once */
static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
    for (size_t i = 0; i < count; i++)
        zf_gen_forget(fs_of(req), forgets[i].ino, forgets[i].nlookup);
    fuse_reply_none(req);
}

/* GETATTR of any number the kernel holds, from the generation it came from */
static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    zf_fs *fs = fs_of(req);
    zf_gen *g;
    const zf_node *n = zf_gen_node(fs, ino, &g);
    struct stat st;
    req_begin(req, ZF_DEADLINE_NONE); /* a size pass waits as long as it takes, unless interrupted */
    if (n && n->view != ZF_VIEW_INFO) /* (.info is never sized by a pass) */
        zf_presize_dir(fs->presize, g, n);
    int err = req_end(n ? node_attr(fs, n, &st, 1) : ENOENT);
    double timeout = err || n->is_dir || size_final(n) ? fs->timeout : 0;
    zf_gen_put(fs, g); /* n may go with it */
    if (err)
        fuse_reply_err(req, err);
    else
        fuse_reply_attr(req, &st, timeout);
}

/* how long a failed read is remembered on its open file: the kernel asks
 * again at once for the bytes of a read-ahead that failed (ms) */
#define FAILED_READ_MS 1000

/* an open file or directory: its generation, where its last read ended, its
 * last failed read (under mu) and (NAME.info) the text of its open */
typedef struct handle {
    zf_open_link link; /* first: fs->open lists every handle */
    zf_gen *gen;
    pthread_mutex_t mu;
    zf_cursor cursor;
    uint64_t failed_lo, failed_hi; /* the bytes it asked for */
    uint64_t failed_until;         /* monotonic ms; 0: none */
    int failed_err;                /* its errno */
    char *info;        /* NAME.info as it was at the open, or NULL */
    size_t info_len;
} handle;

/* free a handle (its generation reference is the caller's) */
static void handle_free(handle *h)
{
    pthread_mutex_destroy(&h->mu);
    free(h->info);
    free(h);
}


static handle *handle_of(struct fuse_file_info *fi)
{
    return (handle *)(uintptr_t)fi->fh;
}

/* once, on the first open (INIT has been answered by then): widen the
 * kernel's read-ahead window of the mount */
static void apply_read_ahead(zf_fs *fs)
{
    if (!fs->read_ahead_kb || __atomic_load_n(&fs->read_ahead_tried, __ATOMIC_ACQUIRE) ||
        __atomic_exchange_n(&fs->read_ahead_tried, 1, __ATOMIC_ACQ_REL))
        return;
    int rc = zf_readahead_set(fs->mountpoint, fs->read_ahead_kb);
    if (rc && fs->read_ahead_asked)
        zf_log_warn("cannot set read_ahead (needs root): %s", strerror(-rc));
    else if (rc)
        zf_log_debug("the kernel's read-ahead window is left as it is: %s", strerror(-rc));
    else
        zf_log_debug("read-ahead window of %s set to %u KiB", fs->mountpoint, fs->read_ahead_kb);
}

/* link h into fs->open */
static void track(zf_fs *fs, handle *h)
{
    pthread_mutex_lock(&fs->mu);
    h->link.prev = NULL;
    h->link.next = fs->open;
    if (fs->open)
        fs->open->prev = &h->link;
    fs->open = &h->link;
    pthread_mutex_unlock(&fs->mu);
}

/* take h out of fs->open */
static void untrack(zf_fs *fs, handle *h)
{
    pthread_mutex_lock(&fs->mu);
    if (h->link.prev)
        h->link.prev->next = h->link.next;
    else
        fs->open = h->link.next;
    if (h->link.next)
        h->link.next->prev = h->link.prev;
    pthread_mutex_unlock(&fs->mu);
}

void zf_fs_close_files(zf_fs *fs)
{
    zf_open_link *l = fs->open; /* no request runs any more: no lock needed */
    fs->open = NULL;
    while (l) {
        handle *h = (handle *)l; /* the link is the handle's first member */
        l = l->next;
        handle_free(h); /* its generation goes with zf_gen_stop */
    }
}

/* open a node (of the generation ino resolves to); the handle keeps it alive */
static void open_node(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, int dir)
{
    zf_fs *fs = fs_of(req);
    apply_read_ahead(fs);
    zf_gen *g;
    const zf_node *n = zf_gen_node(fs, ino, &g);
    int err = !n ? ENOENT : dir && !n->is_dir ? ENOTDIR : !dir && n->is_dir ? EISDIR : 0;
    if (!err && !dir && ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)))
        err = EROFS;
    handle *h = err ? NULL : calloc(1, sizeof *h);
    int info = !err && !dir && n->view == ZF_VIEW_INFO;
    if (!err && !h)
        err = ENOMEM;
    else if (info) /* the state now: this open's size and bytes */
        err = zf_err_errno(zf_layout_info_now(n->layout, &h->info, &h->info_len));
    if (err) {
        free(h);
        zf_gen_put(fs, g);
        fuse_reply_err(req, err);
        return;
    }
    h->gen = g;
    h->cursor.elem = UINT64_MAX;
    pthread_mutex_init(&h->mu, NULL);
    track(fs, h);
    fi->fh = (uint64_t)(uintptr_t)h;
    fi->keep_cache = !info; /* unchanged while this generation lives */
    if (!dir && (info || zf_layout_damaged(n->layout)))
        fi->direct_io = 1; /* .info: its own text, whose size may change from one open to
                            * the next; damaged: only reads of a bad chunk fail */
    fi->cache_readdir = dir && !n->incomplete; /* (its listing ends in EIO: op_readdir) */
    if (fuse_reply_open(req, fi) != 0) {
        untrack(fs, h);
        handle_free(h);
        zf_gen_put(fs, g);
    }
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    handle *h = handle_of(fi);
    untrack(fs_of(req), h);
    zf_gen_put(fs_of(req), h->gen);
    handle_free(h);
    fuse_reply_err(req, 0);
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    open_node(req, ino, fi, 1);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi)
{
    const zf_tree *t = handle_of(fi)->gen->tree;
    const zf_node *d = zf_tree_node(t, ino);
    if (!d || !d->is_dir) {
        fuse_reply_err(req, ENOTDIR);
        return;
    }
    char *buf = malloc(size);
    if (!buf) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    size_t used = 0;
    for (uint64_t i = (uint64_t)off; i < d->nchildren + 2; i++) {
        const zf_node *c = i < 2 ? NULL : zf_tree_child(t, d, i - 2);
        struct stat st = {.st_ino = i == 0 ? d->ino : i == 1 ? d->parent : c->ino};
        st.st_mode = (i < 2 || c->is_dir) ? S_IFDIR : S_IFREG;
        const char *name = i == 0 ? "." : i == 1 ? ".." : c->name;
        size_t need = fuse_add_direntry(req, buf + used, size - used, name, &st, (off_t)(i + 1));
        if (need > size - used)
            break;
        used += need;
    }
    if (!used && d->incomplete) { /* the entries shown, then the store's silence: EIO */
        zf_gen_recheck_soon(fs_of(req));
        fuse_reply_err(req, EIO);
    } else {
        fuse_reply_buf(req, buf, used);
    }
    free(buf);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    open_node(req, ino, fi, 0);
}

static pthread_key_t read_buf_key;
static pthread_once_t read_buf_once = PTHREAD_ONCE_INIT;

static void make_read_buf_key(void)
{
    pthread_key_create(&read_buf_key, free);
}

/* this worker thread's read buffer (READ_MAX bytes, freed at thread exit) */
static char *read_buf(void)
{
    pthread_once(&read_buf_once, make_read_buf_key);
    char *buf = pthread_getspecific(read_buf_key);
    if (!buf && (buf = malloc(READ_MAX)))
        pthread_setspecific(read_buf_key, buf);
    return buf;
}

/* read from a node's view within one deadline: every store call and every
 * wait for another thread's load ends at the store's retry budget from now
 * (a remote store; a local one has no budget), however many chunks and
 * shards the read needs.  The size pass, when the read must run it first,
 * is not bounded: it measures the whole array for every reader, like the
 * first stat, which runs it too.  Both end when the request is interrupted
 * (req_begin). */
static int read_within_budget(const zf_fs *fs, zf_gen *g, const zf_node *n, uint64_t off,
                              char *buf, size_t size, size_t *got, zf_cursor *cursor)
{
    uint64_t total;
    int rc = ZF_OK;
    if (!zf_layout_view_ready(n->layout, n->view)) {
        zf_presize_dir(fs->presize, g, n);
        rc = zf_layout_size(n->layout, n->view, &total);
    }
    if (rc)
        return rc;
    if (fs->store->budget_ms)
        zf_deadline_set(zf_deadline_after(fs->store->budget_ms));
    return zf_layout_read_from(n->layout, n->view, off, buf, size, got, cursor);
}

/* the errno of a read of [off, off + size) that failed on h within the
 * last FAILED_READ_MS, or 0: the kernel's second READ of a page whose
 * read-ahead failed gets the answer at once, not after another budget */
static int failed_before(handle *h, uint64_t off, size_t size)
{
    pthread_mutex_lock(&h->mu);
    int err = h->failed_until > zf_deadline_now_ms() && off < h->failed_hi &&
              off + size > h->failed_lo ? h->failed_err : 0;
    pthread_mutex_unlock(&h->mu);
    return err;
}

/* remember a failed read of [off, off + size) on h (not an abandoned one:
 * its failure says nothing about the store) */
static void remember_failure(handle *h, uint64_t off, size_t size, int err)
{
    if (err == EINTR)
        return;
    pthread_mutex_lock(&h->mu);
    h->failed_lo = off;
    h->failed_hi = off + size;
    h->failed_err = err;
    h->failed_until = zf_deadline_now_ms() + FAILED_READ_MS;
    pthread_mutex_unlock(&h->mu);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
    char *buf;
    handle *h = handle_of(fi);
    const zf_node *n = zf_tree_node(h->gen->tree, ino);
    if (!n || n->is_dir || off < 0) {
        fuse_reply_err(req, n && n->is_dir ? EISDIR : EINVAL);
        return;
    }
    if (size > READ_MAX)
        size = READ_MAX;
    if (!(buf = read_buf())) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    if (h->info) { /* NAME.info as it was at the open; copied: the reply may still be
                    * going out when the reader, having it, closes the file */
        size_t left = (uint64_t)off < h->info_len ? h->info_len - (size_t)off : 0;
        left = left < size ? left : size;
        memcpy(buf, h->info + (left ? off : 0), left);
        fuse_reply_buf(req, buf, left);
        return;
    }
    int err = failed_before(h, (uint64_t)off, size);
    if (err) {
        fuse_reply_err(req, err);
        return;
    }
    size_t got = 0;
    pthread_mutex_lock(&h->mu);
    zf_cursor cursor = h->cursor;
    pthread_mutex_unlock(&h->mu);
    req_begin(req, ZF_DEADLINE_NONE);
    int rc = read_within_budget(fs_of(req), h->gen, n, (uint64_t)off, buf, size, &got, &cursor);
    err = req_end(rc ? zf_err_errno(rc) : 0);
    pthread_mutex_lock(&h->mu);
    h->cursor = cursor;
    pthread_mutex_unlock(&h->mu);
    if (rc == ZF_ESTALE) /* a chunk changed since sizing: the next open sees the new version */
        zf_gen_recheck_soon(fs_of(req));
    if (err) {
        remember_failure(h, (uint64_t)off, size, err);
        fuse_reply_err(req, err);
    } else {
        fuse_reply_buf(req, buf, got);
    }
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
    zf_gen *g = zf_gen_get(fs_of(req));
    struct statvfs sv = {.f_bsize = 4096, .f_frsize = 4096, .f_namemax = 255,
                         .f_files = zf_tree_count(g->tree), .f_flag = ST_RDONLY};
    zf_gen_put(fs_of(req), g);
    fuse_reply_statfs(req, &sv);
}

static void op_rofs(fuse_req_t req)
{
    fuse_reply_err(req, EROFS);
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                       struct fuse_file_info *fi) { op_rofs(req); }
static void op_mknod(fuse_req_t req, fuse_ino_t p, const char *name, mode_t mode, dev_t rdev) { op_rofs(req); }
static void op_mkdir(fuse_req_t req, fuse_ino_t p, const char *name, mode_t mode) { op_rofs(req); }
static void op_unlink(fuse_req_t req, fuse_ino_t p, const char *name) { op_rofs(req); }
static void op_rename(fuse_req_t req, fuse_ino_t p, const char *name, fuse_ino_t np,
                      const char *nn, unsigned int flags) { op_rofs(req); }
static void op_create(fuse_req_t req, fuse_ino_t p, const char *name, mode_t mode,
                      struct fuse_file_info *fi) { op_rofs(req); }
static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t p, const char *name) { op_rofs(req); }
static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t np, const char *nn) { op_rofs(req); }

const struct fuse_lowlevel_ops zf_fs_ops = {
    .init = op_init,
    .lookup = op_lookup,
    .forget = op_forget,
    .forget_multi = op_forget_multi,
    .getattr = op_getattr,
    .opendir = op_opendir,
    .readdir = op_readdir,
    .releasedir = op_release,
    .open = op_open,
    .release = op_release,
    .read = op_read,
    .statfs = op_statfs,
    .setattr = op_setattr,
    .mknod = op_mknod,
    .mkdir = op_mkdir,
    .unlink = op_unlink,
    .rmdir = op_unlink,
    .rename = op_rename,
    .create = op_create,
    .symlink = op_symlink,
    .link = op_link,
};
