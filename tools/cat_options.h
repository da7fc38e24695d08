/* cat_options.h - the one table of zarrfs-cat's own options and exit statuses.
 *
 * zarrfs-cat.c prints --help from it and doc/mangen.c writes the OPTIONS
 * and EXIT STATUS sections of zarrfs-cat(1) from it, so the two cannot
 * drift.  Plain macros; descriptions are one sentence without a final
 * period, roff-neutral (no backslashes, no line starting with a dot). */
#ifndef ZARRFS_CAT_OPTIONS_H
#define ZARRFS_CAT_OPTIONS_H

/* X(SPELLING, DEFAULT, DESCRIPTION): zarrfs-cat's own; its -o options are
 * zarrfs's (fs/options.h), less ZF_MOUNT_ONLY_OPTIONS, listed after these */
#define ZF_CAT_OPTIONS(X)                                                                        \
    X("--csv", "", "write the array's .csv file (its label columns, then its value) instead "   \
                   "of its .txt")                                                                \
    X("--info", "", "write the array's .info file (a description) instead of its .txt, once "    \
                    "the array is sized (its text files' byte counts)")                          \
    X("--no-progress", "", "never show the progress line")                                       \
    X("--list", "", "list what a mount of STORE shows instead (no ARRAY_PATH): each array's "    \
                    "path, kind, shape and files, then the arrays not shown and why")            \
    X("-h, --help", "", "print this help and exit")                                              \
    X("-V, --version", "", "print the version and exit")

/* X(STATUS, MEANING) */
#define ZF_CAT_EXIT_STATUSES(X)                                                                  \
    X("0", "the whole file was written")                                                         \
    X("1", "the store could not be read, holds no such array, or a read or a write failed "      \
           "(one line on stderr says which; output may be incomplete)")                          \
    X("2", "the command line is wrong (unknown option, missing or extra argument)")

/* the progress line: shown on stderr when it is a terminal, standard output
 * is not, and the output is at least this large */
#define ZF_CAT_PROGRESS_MIN ((unsigned long long)4 << 20)

#endif
