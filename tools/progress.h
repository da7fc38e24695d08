/* progress.h - a one-line progress report on a terminal, for zarrfs-cat. */
#ifndef ZARRFS_PROGRESS_H
#define ZARRFS_PROGRESS_H

#include <stdint.h>

typedef struct zf_progress {
    int fd;          /* the terminal; -1: report nothing */
    uint64_t total;  /* bytes to write */
    double start;    /* CLOCK_MONOTONIC seconds when started */
    double drawn;    /* when the line was last drawn */
    int width;       /* columns of the line drawn, to clear it */
} zf_progress;

/* Report on fd the writing of total bytes if fd is a terminal and total is
 * at least min (the line is drawn at once); otherwise p reports nothing. */
void zf_progress_start(zf_progress *p, int fd, uint64_t total, uint64_t min);

/* done bytes of the total are written: redraw the line, at most 4 times a second. */
void zf_progress_update(zf_progress *p, uint64_t done);

/* Clear the line (if one was drawn). */
void zf_progress_end(zf_progress *p);

#endif
