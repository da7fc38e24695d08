/* zarrfs-cat - write the bytes zarrfs would show for one array file to
 * standard output, using the core library alone (no FUSE). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/utf8.h"
#include "cat_options.h"
#include "helpfmt.h"
#include "list.h"
#include "optcheck.h"
#include "progress.h"
#include "store/net.h"
#include "store/open.h"
#include "store/url.h"
#include "tree/tree.h"

#define CHUNK (1u << 20)

#define USAGE "usage: zarrfs-cat [options] STORE ARRAY_PATH"

/* --help: usage, options and exit statuses (cat_options.h) on stdout */
static void help(void)
{
    printf(USAGE "\n       zarrfs-cat --list [options] STORE\n\n"
           "Write the bytes zarrfs shows for one array file to standard output, without\n"
           "mounting: NAME.txt unless --csv or --info.  ARRAY_PATH is the array's path in\n"
           "the store (group/array), or a file path as the mount shows it\n"
           "(group/array.csv).  STORE is a local directory or the URL of a remote store:\n"
           "http://, https://, s3://BUCKET/PREFIX or gs://BUCKET/PREFIX, or an Icechunk\n"
           "repository in any of them.  On a terminal, stderr shows progress for large\n"
           "outputs.\n\n"
           "options:\n");
#define X(spelling, def, desc) zf_help_row(spelling, desc, def);
    ZF_CAT_OPTIONS(X)
#undef X
#define X(id, kind, arg, def, desc)                                                              \
    if (!zf_opt_mount_only(ZF_OPT_##id))                                                         \
        zf_help_row(ZF_SPELL_##kind(id, arg), desc, def);
    ZF_OPTIONS(X)
#undef X
    printf("\nexit status:\n");
#define X(status, meaning) zf_help_row(status, meaning, NULL);
    ZF_CAT_EXIT_STATUSES(X)
#undef X
}

/* a wrong command line: one line on stderr, exit status 2 */
static int usage_error(void)
{
    fprintf(stderr, USAGE " (see --help)\n");
    return 2;
}

/* the next NAME[=VALUE] item of the -o list *s (backslash escapes a comma),
 * unescaped in place; *s moves past it.  NULL at the end. */
static char *next_item(char **s)
{
    if (!**s)
        return NULL;
    char *item = *s, *o = *s, *p = *s;
    for (; *p && *p != ','; p++) {
        if (*p == '\\' && p[1])
            p++;
        *o++ = *p;
    }
    *s = *p ? p + 1 : p;
    *o = '\0';
    return item;
}

/* the items of one -o list (modified in place: val points into it) into
 * val, indexed by ZF_OPT_... (options.h: zarrfs's, less those of a mount
 * only); 0, or -1 after a line on stderr */
static int parse_opts(char *s, const char *val[ZF_OPT_COUNT])
{
    for (char *item; (item = next_item(&s));) {
        if (!*item)
            continue;
        char *eq = strchr(item, '=');
        if (eq)
            *eq = '\0';
        int id = zf_opt_find(item);
        const char *near = zf_opt_nearest(item, 0);
        if (id >= 0 && zf_opt_mount_only(id))
            return fprintf(stderr, "zarrfs-cat: -o %s applies to a mount only\n", item), -1;
        if (id < 0 && near)
            return fprintf(stderr, "zarrfs-cat: unknown option: %s (did you mean %s?)\n", item,
                           near), -1;
        if (id < 0)
            return fprintf(stderr, "zarrfs-cat: unknown option: %s (see --help)\n", item), -1;
        enum zf_opt_kind kind = zf_opt_kind(id);
        if ((kind == ZF_OPT_KIND_FLAG && eq) || (kind == ZF_OPT_KIND_VAL && !eq))
            return fprintf(stderr, "zarrfs-cat: -o %s %s\n", item,
                           eq ? "takes no value" : "needs a value (-o NAME=VALUE)"), -1;
        val[id] = eq ? eq + 1 : "";
    }
    return 0;
}

/* the settings of the options val into opts, *cache_bytes and so (remote
 * ones dropped with a warning for a local store, as zarrfs does); 0, or -1
 * after a line on stderr */
static int settings(const char *const val[ZF_OPT_COUNT], const char *store, zf_layout_opts *opts,
                    size_t *cache_bytes, zf_store_opts *so)
{
    char err[256];
    if (zf_opt_settings(val, opts, cache_bytes, so, err, sizeof err))
        return fprintf(stderr, "zarrfs-cat: %s\n", err), -1;
    if (zf_store_spec_remote(store))
        return 0;
    zf_store_opts_drop_remote(so, err, sizeof err);
    if (*err)
        fprintf(stderr, "zarrfs-cat: warning: -o %s: for remote stores only; ignored for the "
                "local store %s\n", err, store);
    return 0;
}

/* find the file node for path (+ the extension implied by view if missing) */
static const zf_node *find_file(const zf_tree *t, const char *path, const char *ext)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    size_t len = strlen(buf);
    int has_ext = (len > 4 && (!strcmp(buf + len - 4, ".txt") || !strcmp(buf + len - 4, ".csv"))) ||
                  (len > 5 && !strcmp(buf + len - 5, ".info"));
    if (!has_ext)
        snprintf(buf + len, sizeof buf - len, "%s", ext);
    const zf_node *n = zf_tree_node(t, ZF_ROOT_INO);
    for (char *save = NULL, *part = strtok_r(buf, "/", &save); part && n;
         part = strtok_r(NULL, "/", &save))
        n = zf_tree_lookup(t, n->ino, part);
    return n && !n->is_dir ? n : NULL;
}

static int write_all(const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(STDOUT_FILENO, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* write the file of node n to stdout; progress on a terminal's stderr if asked */
static int cat_node(const zf_node *n, int progress)
{
    uint64_t sized;
    if (n->view == ZF_VIEW_INFO) /* its byte counts, as a mount whose files were read shows */
        (void)zf_layout_size(n->layout, ZF_VIEW_TXT, &sized); /* (a failure: "not known") */
    char *buf = malloc(CHUNK);
    uint64_t off = 0, total = 0;
    zf_cursor cursor = {0, UINT64_MAX};
    int rc = buf ? zf_layout_size(n->layout, n->view, &total) : ZF_ENOMEM;
    zf_progress bar;
    /* never draw over text written to the same terminal */
    zf_progress_start(&bar, progress && !isatty(STDOUT_FILENO) ? STDERR_FILENO : -1, total,
                      ZF_CAT_PROGRESS_MIN);
    for (size_t got = 1; rc == ZF_OK && got;) {
        rc = zf_layout_read_from(n->layout, n->view, off, buf, CHUNK, &got, &cursor);
        if (rc == ZF_OK && write_all(buf, got))
            rc = ZF_EIO;
        off += got;
        zf_progress_update(&bar, off);
    }
    zf_progress_end(&bar);
    free(buf);
    if (rc)
        fprintf(stderr, "zarrfs-cat: %s at byte %llu\n", zf_strerror(rc), (unsigned long long)off);
    return rc ? 1 : 0;
}

/* open STORE (pos) and build its tree; 0, or 1 after a line on stderr */
static int open_tree(const char *spec, const zf_store_opts *so, zf_cache *cache,
                     const zf_layout_opts *opts, zf_store **store, zf_tree **tree)
{
    char err[512] = "";
    int rc = cache ? zf_store_open_spec(spec, so, store, err, sizeof err) : ZF_ENOMEM;
    if (rc == ZF_OK)
        rc = zf_tree_build(*store, cache, opts, tree);
    if (rc == ZF_OK)
        return 0;
    if (rc == ZF_EIO && *store) /* zf_tree_build said why on its one line */
        return 1;
    char shown[1024];
    zf_url_redact(spec, shown, sizeof shown);
    fprintf(stderr, "zarrfs-cat: %s: %s\n", shown,
            err[0] ? err : rc == ZF_ENOTFOUND ? "not a Zarr store" : zf_strerror(rc));
    return 1;
}

/* parse the command line, then write the file; the exit status */
static int cat_main(int argc, char **argv, zf_store_opts *so)
{
    zf_layout_opts opts = {0};
    const char *val[ZF_OPT_COUNT] = {NULL};
    size_t cache_bytes;
    const char *pos[2] = {NULL, NULL}, *ext = ".txt";
    int npos = 0, progress = 1, list = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv"))
            ext = ".csv";
        else if (!strcmp(argv[i], "--info"))
            ext = ".info";
        else if (!strcmp(argv[i], "--no-progress"))
            progress = 0;
        else if (!strcmp(argv[i], "--list"))
            list = 1;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return help(), 0;
        else if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version"))
            return printf("zarrfs-cat version %s\n", ZF_VERSION), 0;
        else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            if (parse_opts(argv[++i], val))
                return 2;
        } else if (npos < 2 && argv[i][0] != '-')
            pos[npos++] = argv[i];
        else
            return usage_error();
    }
    if (npos != 2 - list)
        return usage_error();
    if (settings(val, pos[0], &opts, &cache_bytes, so))
        return 2;
    zf_store *store = NULL;
    zf_cache *cache = zf_cache_new(cache_bytes);
    if (cache)
        zf_cache_start_prefetch(cache, 1); /* decode ahead while formatting */
    zf_tree *tree = NULL;
    int status = 1;
    if (open_tree(pos[0], so, cache, &opts, &store, &tree) == 0) {
        const zf_node *n = list ? NULL : find_file(tree, pos[1], ext);
        if (list)
            zf_cat_list(tree, stdout);
        else if (!n)
            zf_cat_why_not(tree, pos[1]);
        else
            status = cat_node(n, progress);
        status = list && !ferror(stdout) ? 0 : status;
    }
    zf_tree_free(tree);
    zf_cache_free(cache);
    zf_store_close(store);
    return status;
}

int main(int argc, char **argv)
{
    char err[256];
    if (zf_net_global_init(err, sizeof err) != ZF_OK) { /* before any thread */
        fprintf(stderr, "zarrfs-cat: %s\n", err);
        return 1;
    }
    zf_store_opts so = {0};
    int status = cat_main(argc, argv, &so);
    zf_store_opts_free(&so);
    zf_net_global_cleanup();
    return status;
}
