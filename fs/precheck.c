/* precheck.c - the mount point and libfuse's options, checked before
 * mounting (precheck.h). */
#include "precheck.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "base/log.h"
#include "optcheck.h"

/* a mountinfo field with the kernel's octal escapes (\040 for a space) undone, in place */
static void unescape(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
            p[3] >= '0' && p[3] <= '7') {
            *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
            p += 3;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
}

/* is the directory at the absolute path dir a zarrfs mount (type
 * fuse.zarrfs in the mount table)? */
static int zarrfs_mounted_at(const char *dir)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return 0;
    char *line = NULL;
    size_t cap = 0;
    int found = 0;
    while (!found && getline(&line, &cap, f) > 0) {
        /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - TYPE SOURCE ... */
        char *save = NULL, *field = strtok_r(line, " ", &save);
        for (int i = 1; field && i < 5; i++)
            field = strtok_r(NULL, " ", &save);
        const char *sep = field ? strstr(save, " - ") : NULL;
        if (!field || !sep)
            continue;
        unescape(field);
        found = !strcmp(field, dir) && !strncmp(sep + 3, "fuse.zarrfs ", 12);
    }
    free(line);
    fclose(f);
    return found;
}

/* does directory dir hold anything? */
static int not_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d));)
        found = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return found;
}

int zf_precheck_mountpoint(const char *mnt)
{
    unsigned fd;
    int end = 0;
    if (sscanf(mnt, "/dev/fd/%u%n", &fd, &end) == 1 && mnt[end] == '\0')
        return 0;
    struct stat st;
    struct statfs sf; /* asks the file system each time: stat may answer from the kernel's cache */
    if (statfs(mnt, &sf) != 0 && errno == ENOTCONN) {
        fprintf(stderr, "zarrfs: cannot use mountpoint %s: a previous mount died here; run "
                "`fusermount3 -u %s`, then mount again\n", mnt, mnt);
        return 1;
    }
    if (stat(mnt, &st) != 0) {
        fprintf(stderr, "zarrfs: cannot use mountpoint: %s: %s\n", mnt, strerror(errno));
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "zarrfs: mountpoint is not a directory: %s\n", mnt);
        return 1;
    }
    char abs[PATH_MAX];
    if (realpath(mnt, abs) && zarrfs_mounted_at(abs)) {
        fprintf(stderr, "zarrfs: %s is a zarrfs mount already; unmount it first (`fusermount3 "
                "-u %s`) rather than mount another on top\n", mnt, mnt);
        return 1;
    }
    return 0;
}

void zf_precheck_warn_not_empty(const char *mnt)
{
    if (not_empty(mnt))
        zf_log_warn("mountpoint %s is not empty; what it holds is hidden while zarrfs is "
                    "mounted there", mnt);
}

/* libfuse's messages while it is asked about an option: none */
static void quiet(enum fuse_log_level level, const char *fmt, va_list ap)
{
    (void)level, (void)fmt, (void)ap;
}

/* would fuse_session_new take the one option opt ("name" or "name=value")? */
static int fuse_knows(const char *opt)
{
    char *argv[] = {"zarrfs", "-o", (char *)opt, NULL};
    struct fuse_args a = FUSE_ARGS_INIT(3, argv);
    struct fuse_lowlevel_ops ops;
    memset(&ops, 0, sizeof ops);
    struct fuse_session *se = fuse_session_new(&a, &ops, sizeof ops, NULL);
    if (se)
        fuse_session_destroy(se);
    fuse_opt_free_args(&a);
    return se != NULL;
}

/* the first option of the comma-separated list s (backslash escapes) that
 * libfuse does not know into bad (capacity cap); 1 if there is one */
static int unknown_in(const char *s, char *bad, size_t cap)
{
    while (*s) {
        size_t n = 0;
        for (; *s && *s != ','; s++) {
            if (*s == '\\' && s[1])
                s++;
            if (n + 1 < cap)
                bad[n++] = *s;
        }
        bad[n] = '\0';
        if (*s == ',')
            s++;
        if (n && !fuse_knows(bad))
            return 1;
    }
    return 0;
}

int zf_precheck_fuse_options(const struct fuse_args *args, fuse_log_func_t log_func)
{
    char bad[512] = "";
    int found = 0;
    fuse_set_log_func(quiet);
    for (int i = 1; !found && i < args->argc; i++) {
        const char *a = args->argv[i];
        if (!strcmp(a, "-o") && i + 1 < args->argc)
            found = unknown_in(args->argv[++i], bad, sizeof bad);
        else if (!strncmp(a, "-o", 2))
            found = unknown_in(a + 2, bad, sizeof bad);
    }
    fuse_set_log_func(log_func);
    if (!found)
        return 0;
    char name[512];
    snprintf(name, sizeof name, "%s", bad);
    name[strcspn(name, "=")] = '\0';
    const char *near = zf_opt_nearest(name, 1);
    if (near && !strcmp(near, name)) /* a known name, a bad value: libfuse says which */
        return 0;
    if (near)
        fprintf(stderr, "zarrfs: unknown option: %s (did you mean %s?)\n", bad, near);
    else
        fprintf(stderr, "zarrfs: unknown option: %s (zarrfs --help lists them)\n", bad);
    return 1;
}

void zf_precheck_root_array(const char *store)
{
    char abs[PATH_MAX], doc[PATH_MAX + 16];
    if (!realpath(store, abs))
        return;
    char *slash = strrchr(abs, '/');
    if (!slash || slash == abs)
        return;
    *slash = '\0'; /* the parent directory */
    static const char *const group_docs[] = {"zarr.json", ".zgroup", ".zmetadata"};
    for (size_t i = 0; i < sizeof group_docs / sizeof *group_docs; i++) {
        struct stat st;
        snprintf(doc, sizeof doc, "%s/%s", abs, group_docs[i]);
        if (stat(doc, &st) == 0 && S_ISREG(st.st_mode)) {
            zf_log_warn("%s is an array of the Zarr group %s: the coordinates of its dimensions "
                        "live in that group, which this mount does not read, so its .csv has "
                        "index columns; mount %s to see them as labels", store, abs, abs);
            return;
        }
    }
}
