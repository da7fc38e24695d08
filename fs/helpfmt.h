/* helpfmt.h - the layout of --help text, shared by zarrfs and zarrfs-cat.
 * No FUSE: plain stdio. */
#ifndef ZARRFS_HELPFMT_H
#define ZARRFS_HELPFMT_H

#define ZF_HELP_WIDTH 79  /* no line is longer (but a spelling longer than this) */
#define ZF_HELP_INDENT 26 /* where descriptions start */

/* Print "    SPELLING   DESCRIPTION (default: DEFAULT)" to stdout: the
 * description starts at ZF_HELP_INDENT (on the next line if the spelling is
 * too long) and wraps at ZF_HELP_WIDTH.  def may be NULL or empty (none). */
void zf_help_row(const char *spelling, const char *desc, const char *def);

#endif
