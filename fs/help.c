/* help.c - zarrfs --help: the views and options of options.h, then libfuse's. */
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "zarrfs.h"

#define HELP_WIDTH 79  /* no line is longer */
#define HELP_INDENT 26 /* where descriptions start */

/* print text from column col on, wrapped at HELP_WIDTH with continuation
 * lines indented to HELP_INDENT; ends the line */
static void wrap(const char *text, int col)
{
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t word = strcspn(p, " ");
        if (col > HELP_INDENT && col + 1 + (int)word > HELP_WIDTH) {
            printf("\n%*s", HELP_INDENT, "");
            col = HELP_INDENT;
        } else if (col > HELP_INDENT) {
            putchar(' ');
            col++;
        }
        printf("%.*s", (int)word, p);
        col += (int)word;
        p += word;
    }
    putchar('\n');
}

/* one row: "    SPELLING   DESCRIPTION (default: DEFAULT)"; the description
 * starts at HELP_INDENT, on the next line if the spelling is too long */
static void row(const char *spelling, const char *desc, const char *def)
{
    char text[512];
    if (def && *def)
        snprintf(text, sizeof text, "%s (default: %s)", desc, def);
    else
        snprintf(text, sizeof text, "%s", desc);
    int col = printf("    %s", spelling);
    if (col > HELP_INDENT - 2)
        printf("\n%*s", HELP_INDENT, "");
    else
        printf("%*s", HELP_INDENT - col, "");
    wrap(text, HELP_INDENT);
}

/* the spelling of a VAL option (-o ID=ARG) or FLAG option (-o ID) */
#define SPELL_VAL(id, arg) "-o " #id "=" arg
#define SPELL_FLAG(id, arg) "-o " #id

void zf_help_print(const char *prog)
{
    printf("usage: %s [options] STORE MOUNTPOINT\n\n"
           "Mount the Zarr store STORE (a directory, Zarr format v3 or v2) read-only at\n"
           "MOUNTPOINT (a directory), showing every numpy.timedelta64 array NAME of the\n"
           "store as text files, and every group as a directory.\n\n"
           "Files of each array NAME:\n", prog);
#define X(ext, desc) row("NAME" ext, desc, NULL);
    ZF_VIEWS(X)
#undef X
    printf("\nzarrfs options:\n");
#define X(id, kind, arg, def, desc) row(SPELL_##kind(id, arg), desc, def);
    ZF_OPTIONS(X)
#undef X
    printf("\ngeneral options:\n");
#define X(spelling, def, desc) row(spelling, desc, def);
    ZF_FUSE_OPTIONS(X)
#undef X
    printf("\nmount(8) and fstab(5): mount -t fuse.zarrfs STORE MOUNTPOINT -o ro[,OPTIONS]; the\n"
           "options auto, noauto, nofail, user, nouser, users, _netdev, defaults, x-* and\n"
           "comment=* are accepted and ignored.  See zarrfs(1).\n\n"
           "FUSE options:\n");
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
