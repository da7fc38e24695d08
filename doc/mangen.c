/* mangen.c - write a man page from its roff template and the option tables.
 *
 * usage: mangen PAGE TEMPLATE OUTPUT VERSION DATE
 *
 * PAGE is zarrfs or zarrfs-cat.  The template is copied with @VERSION@ and
 * @DATE@ replaced; a line that is only @NAME@ is replaced by the roff of one
 * table: for zarrfs @VIEWS@, @OPTIONS@, @FUSE_OPTIONS@, @IGNORED@ (of
 * fs/options.h), for zarrfs-cat @CAT_OPTIONS@ and @CAT_EXIT@ (of
 * tools/cat_options.h).  The same tables make --help, so the two agree.
 * Exit status 0, or 1 after a line on stderr. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cat_options.h"
#include "options.h"

/* text as roff: backslashes as \e, a hyphen that starts a word (an option)
 * as \-, and a leading dot or quote protected; all hyphens as \- if dashes */
static void roff(FILE *out, const char *text, int dashes)
{
    if (*text == '.' || *text == '\'')
        fputs("\\&", out);
    for (const char *p = text; *p; p++) {
        int word_start = p == text || strchr(" ([,/", p[-1]) != NULL;
        if (*p == '\\')
            fputs("\\e", out);
        else if (*p == '-' && (dashes || word_start))
            fputs("\\-", out);
        else
            fputc(*p, out);
    }
}

/* a description as a sentence (capital first letter, final period), and its default */
static void sentence(FILE *out, const char *desc, const char *def)
{
    char first[2] = {desc[0] >= 'a' && desc[0] <= 'z' ? (char)(desc[0] - 'a' + 'A') : desc[0], 0};
    roff(out, first, 0);
    if (desc[0])
        roff(out, desc + 1, 0);
    fputs(".\n", out);
    if (def && *def) {
        fputs("Default: ", out);
        roff(out, def, 0);
        fputs(".\n", out);
    }
}

/* one tagged paragraph: bold spelling (an italic argument after it, if any) */
static void item(FILE *out, const char *spelling, const char *arg, const char *desc, const char *def)
{
    fputs(".TP\n\\fB", out);
    roff(out, spelling, 1);
    fputs("\\fR", out);
    if (arg && *arg) {
        fputs("\\fI", out);
        roff(out, arg, 1);
        fputs("\\fR", out);
    }
    fputc('\n', out);
    sentence(out, desc, def);
}

#define SPELL_VAL(id) "-o " #id "="
#define SPELL_FLAG(id) "-o " #id
#define ARG_VAL(arg) arg
#define ARG_FLAG(arg) ""
#define SPELL_OPT(id) "-o " #id "[="
#define ARG_OPT(arg) arg "]"

/* the roff for table @name@ of page; 0, or -1 if the page has no such table */
static int table(FILE *out, const char *page, const char *name)
{
    int fs = strcmp(page, "zarrfs") == 0;
    if (fs && strcmp(name, "VIEWS") == 0) {
#define X(ext, desc) item(out, "NAME" ext, NULL, desc, NULL);
        ZF_VIEWS(X)
#undef X
    } else if (fs && strcmp(name, "OPTIONS") == 0) {
#define X(id, kind, arg, def, desc) item(out, SPELL_##kind(id), ARG_##kind(arg), desc, def);
        ZF_OPTIONS(X)
#undef X
    } else if (fs && strcmp(name, "FUSE_OPTIONS") == 0) {
#define X(spelling, def, desc) item(out, spelling, NULL, desc, def);
        ZF_FUSE_OPTIONS(X)
#undef X
    } else if (fs && strcmp(name, "IGNORED") == 0) {
        const char *sep = "";
#define X(name) fprintf(out, "%s\\fB", sep), roff(out, name, 1), fputs("\\fR", out), sep = ", ";
        ZF_IGNORED_MOUNT_OPTIONS(X)
#undef X
        fputc('\n', out);
    } else if (!fs && strcmp(name, "CAT_OPTIONS") == 0) {
#define X(spelling, def, desc) item(out, spelling, NULL, desc, def);
        ZF_CAT_OPTIONS(X)
#undef X
#define X(id, kind, arg, def, desc)                                                              \
    if (!zf_opt_mount_only(ZF_OPT_##id))                                                         \
        item(out, SPELL_##kind(id), ARG_##kind(arg), desc, def);
        ZF_OPTIONS(X)
#undef X
    } else if (!fs && strcmp(name, "CAT_EXIT") == 0) {
#define X(status, meaning) item(out, status, NULL, meaning, NULL);
        ZF_CAT_EXIT_STATUSES(X)
#undef X
    } else {
        return -1;
    }
    return 0;
}

/* the words replaced in every line of a template */
typedef struct words {
    const char *version, *date;
} words;

/* copy line to out with every @VERSION@ and @DATE@ replaced */
static void copy_line(FILE *out, const char *line, const words *w)
{
    for (const char *p = line; *p;) {
        const char *at = strchr(p, '@');
        if (!at) {
            fputs(p, out);
            return;
        }
        fwrite(p, 1, (size_t)(at - p), out);
        if (strncmp(at, "@VERSION@", 9) == 0)
            fputs(w->version, out), p = at + 9;
        else if (strncmp(at, "@DATE@", 6) == 0)
            fputs(w->date, out), p = at + 6;
        else
            fputc('@', out), p = at + 1;
    }
}

/* the template in to out; 0, or -1 after a line on stderr */
static int generate(FILE *in, FILE *out, const char *page, const words *w)
{
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    for (ssize_t n; rc == 0 && (n = getline(&line, &cap, in)) > 0;) {
        size_t len = (size_t)n;
        if (len >= 3 && line[0] == '@' && line[len - 1] == '\n' && line[len - 2] == '@') {
            line[len - 2] = '\0';
            if (table(out, page, line + 1) != 0) {
                fprintf(stderr, "mangen: %s has no table @%s@\n", page, line + 1);
                rc = -1;
            }
        } else {
            copy_line(out, line, w);
        }
    }
    free(line);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: mangen PAGE TEMPLATE OUTPUT VERSION DATE\n");
        return 1;
    }
    FILE *in = fopen(argv[2], "r");
    if (!in) {
        fprintf(stderr, "mangen: %s: %s\n", argv[2], strerror(errno));
        return 1;
    }
    FILE *out = fopen(argv[3], "w");
    if (!out) {
        fprintf(stderr, "mangen: %s: %s\n", argv[3], strerror(errno));
        fclose(in);
        return 1;
    }
    words w = {argv[4], argv[5]};
    int rc = generate(in, out, argv[1], &w);
    if (ferror(in) || fclose(out) != 0) {
        fprintf(stderr, "mangen: cannot write %s\n", argv[3]);
        rc = -1;
    }
    fclose(in);
    if (rc != 0)
        remove(argv[3]);
    return rc ? 1 : 0;
}
