/* help.c - zarrfs --help: the views and options of options.h, then libfuse's. */
#include <stdio.h>
#include <string.h>

#include "helpfmt.h"
#include "options.h"
#include "zarrfs.h"

void zf_help_print(const char *prog)
{
    printf("usage: %s [options] STORE MOUNTPOINT\n\n"
           "Mount the Zarr store STORE (Zarr format v3 or v2: a directory, or an http://,\n"
           "https://, s3://BUCKET/PREFIX, gs://BUCKET/PREFIX or az://CONTAINER/PREFIX URL)\n"
           "read-only at\n"
           "MOUNTPOINT (a directory), showing every duration and time-stamp array NAME\n"
           "(numpy.timedelta64, numpy.datetime64, and integer or float arrays with CF time\n"
           "units, as xarray writes them) as text files, and every group as a directory.\n"
           "An Icechunk repository shows as the Zarr store of one of its snapshots\n"
           "(-o branch=, tag=, snapshot=).  SIGINT, SIGTERM and SIGHUP unmount;\n"
           "SIGUSR1 re-checks the store now.\n\n"
           "Files of each array NAME:\n", prog);
#define X(ext, desc) zf_help_row("NAME" ext, desc, NULL);
    ZF_VIEWS(X)
#undef X
    printf("\nzarrfs options:\n");
#define X(id, kind, arg, def, desc) zf_help_row(ZF_SPELL_##kind(id, arg), desc, def);
    ZF_OPTIONS(X)
#undef X
    printf("\ngeneral options:\n");
#define X(spelling, def, desc) zf_help_row(spelling, desc, def);
    ZF_FUSE_OPTIONS(X)
#undef X
    printf("\nmount(8) and fstab(5), see zarrfs(1):\n"
           "    mount -t fuse.zarrfs STORE MOUNTPOINT -o ro[,OPTIONS]\n"
           "    fstab line: STORE MOUNTPOINT fuse.zarrfs ro[,OPTIONS] 0 0\n");
    char ignored[512] = "";
#define X(name) strcat(ignored, name ", ");
    ZF_IGNORED_MOUNT_OPTIONS(X)
#undef X
    strcat(ignored, "x-* and comment=*");
    zf_help_row("ignored options", ignored, NULL);
    printf("\nFUSE options:\n");
    fflush(stdout);
    fuse_lowlevel_help();
}

void zf_version_print(void)
{
    printf("zarrfs version %s\n", ZF_VERSION);
    /* libfuse prints with a child process (fusermount3) too: ours goes first */
    fflush(stdout);
    fuse_lowlevel_version();
}
