/* minifuse - the benchmark's reference file system: the smallest useful
 * libfuse low-level daemon, serving one file's bytes from memory.
 *
 *   minifuse [fuse options] FILE MOUNTPOINT
 *
 * FILE is mapped into memory (MAP_POPULATE, so every page is resident before
 * the mount appears) and shown read-only as MOUNTPOINT/BASENAME(FILE).  It uses
 * the same libfuse settings as zarrfs (fs/main.c, fs/ops.c): async reads, no
 * readdirplus, no auto_inval_data, a day of entry/attr timeout, keep_cache on
 * open, the same -s / multi-threaded session loop, and -oro,default_permissions.
 * A read is one fuse_reply_buf straight from the mapping: whatever zarrfs
 * spends beyond this is the cost of decoding and formatting.
 *
 * Built by scripts/bench (gcc + pkg-config fuse3), not by the project's CMake. */
#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_INO 2
#define TIMEOUT 86400.0

static const char *data;   /* the file's bytes */
static size_t data_len;
static char name[256];     /* its name in the mount */
static struct timespec mtime;

static void fill_attr(fuse_ino_t ino, struct stat *st)
{
    memset(st, 0, sizeof *st);
    st->st_ino = ino;
    st->st_uid = getuid();
    st->st_gid = getgid();
    st->st_atim = st->st_mtim = st->st_ctim = mtime;
    st->st_blksize = 4096;
    if (ino == FUSE_ROOT_ID) {
        st->st_mode = S_IFDIR | 0555;
        st->st_nlink = 2;
    } else {
        st->st_mode = S_IFREG | 0444;
        st->st_nlink = 1;
        st->st_size = (off_t)data_len;
        st->st_blocks = (blkcnt_t)((data_len + 511) / 512);
    }
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
    if (conn->capable & FUSE_CAP_ASYNC_READ)
        conn->want |= FUSE_CAP_ASYNC_READ;
    conn->want &= ~(unsigned)FUSE_CAP_READDIRPLUS;
    conn->want &= ~(unsigned)FUSE_CAP_AUTO_INVAL_DATA;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *n)
{
    struct fuse_entry_param e;
    memset(&e, 0, sizeof e);
    e.entry_timeout = e.attr_timeout = TIMEOUT;
    if (parent == FUSE_ROOT_ID && strcmp(n, name) == 0) {
        e.ino = FILE_INO;
        e.generation = 1;
        fill_attr(FILE_INO, &e.attr);
    }
    fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    struct stat st;
    if (ino != FUSE_ROOT_ID && ino != FILE_INO) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    fill_attr(ino, &st);
    fuse_reply_attr(req, &st, TIMEOUT);
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    if (ino != FUSE_ROOT_ID) {
        fuse_reply_err(req, ENOTDIR);
        return;
    }
    fi->cache_readdir = 1;
    fi->keep_cache = 1;
    fuse_reply_open(req, fi);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi)
{
    char buf[1024];
    size_t used = 0;
    if (size > sizeof buf)
        size = sizeof buf;
    for (off_t i = off; i < 3; i++) {
        struct stat st = {.st_ino = i == 2 ? FILE_INO : FUSE_ROOT_ID,
                          .st_mode = i == 2 ? S_IFREG : S_IFDIR};
        const char *n = i == 0 ? "." : i == 1 ? ".." : name;
        size_t need = fuse_add_direntry(req, buf + used, size - used, n, &st, i + 1);
        if (need > size - used)
            break;
        used += need;
    }
    fuse_reply_buf(req, buf, used);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    if (ino != FILE_INO)
        fuse_reply_err(req, ino == FUSE_ROOT_ID ? EISDIR : ENOENT);
    else if ((fi->flags & O_ACCMODE) != O_RDONLY)
        fuse_reply_err(req, EROFS);
    else {
        fi->keep_cache = 1;
        fuse_reply_open(req, fi);
    }
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
    if (off < 0 || (size_t)off >= data_len) {
        fuse_reply_buf(req, NULL, 0);
        return;
    }
    size_t n = data_len - (size_t)off < size ? data_len - (size_t)off : size;
    fuse_reply_buf(req, data + off, n);
}

static const struct fuse_lowlevel_ops ops = {
    .init = op_init,
    .lookup = op_lookup,
    .getattr = op_getattr,
    .opendir = op_opendir,
    .readdir = op_readdir,
    .open = op_open,
    .read = op_read,
};

static char *file_arg;

static int opt_proc(void *d, const char *arg, int key, struct fuse_args *out)
{
    if (key == FUSE_OPT_KEY_NONOPT && !file_arg) {
        file_arg = strdup(arg);
        return 0;
    }
    return 1;
}

static int load(const char *path)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(path);
        return -1;
    }
    data_len = (size_t)st.st_size;
    mtime = st.st_mtim;
    if (data_len) {
        void *p = mmap(NULL, data_len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (p == MAP_FAILED) {
            perror("mmap");
            close(fd);
            return -1;
        }
        data = p;
    }
    close(fd);
    const char *base = strrchr(path, '/');
    snprintf(name, sizeof name, "%s", base ? base + 1 : path);
    return 0;
}

int main(int argc, char **argv)
{
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    struct fuse_cmdline_opts o;
    int rc = 1;
    memset(&o, 0, sizeof o);
    if (fuse_opt_parse(&args, NULL, NULL, opt_proc) != 0 || fuse_parse_cmdline(&args, &o) != 0)
        return 1;
    if (!file_arg || !o.mountpoint) {
        fprintf(stderr, "usage: %s [fuse options] FILE MOUNTPOINT\n", argv[0]);
        return 1;
    }
    if (load(file_arg) != 0)
        return 1;
    fuse_opt_add_arg(&args, "-oro,fsname=minifuse,subtype=minifuse,default_permissions");
    struct fuse_session *se = fuse_session_new(&args, &ops, sizeof ops, NULL);
    if (!se)
        return 1;
    if (fuse_set_signal_handlers(se) == 0) {
        if (fuse_session_mount(se, o.mountpoint) == 0) {
            fuse_daemonize(o.foreground);
            if (o.singlethread) {
                rc = fuse_session_loop(se);
            } else {
                struct fuse_loop_config *cfg = fuse_loop_cfg_create();
                fuse_loop_cfg_set_clone_fd(cfg, (unsigned)o.clone_fd);
                fuse_loop_cfg_set_max_threads(cfg, o.max_threads);
                if (o.max_idle_threads != UINT_MAX)
                    fuse_loop_cfg_set_idle_threads(cfg, o.max_idle_threads);
                rc = fuse_session_loop_mt(se, cfg);
                fuse_loop_cfg_destroy(cfg);
            }
            fuse_session_unmount(se);
            rc = rc < 0 ? 1 : 0;
        }
        fuse_remove_signal_handlers(se);
    }
    fuse_session_destroy(se);
    free(o.mountpoint);
    free(file_arg);
    fuse_opt_free_args(&args);
    return rc;
}
