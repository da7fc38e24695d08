/* helpfmt.c - option rows of --help, wrapped to the terminal's usual width. */
#include "helpfmt.h"

#include <stdio.h>
#include <string.h>

/* print text at column col (>= ZF_HELP_INDENT) on, wrapped at ZF_HELP_WIDTH
 * with continuation lines indented to ZF_HELP_INDENT; ends the line */
static void wrap(const char *text, int col)
{
    for (const char *p = text; *p;) {
        while (*p == ' ')
            p++;
        int word = (int)strcspn(p, " ");
        if (!word)
            break;
        if (col > ZF_HELP_INDENT && col + 1 + word > ZF_HELP_WIDTH) {
            printf("\n%*s", ZF_HELP_INDENT, "");
            col = ZF_HELP_INDENT;
        } else if (col > ZF_HELP_INDENT) {
            putchar(' ');
            col++;
        }
        printf("%.*s", word, p);
        col += word;
        p += word;
    }
    putchar('\n');
}

void zf_help_row(const char *spelling, const char *desc, const char *def)
{
    char text[1024];
    if (def && *def)
        snprintf(text, sizeof text, "%s (default: %s)", desc, def);
    else
        snprintf(text, sizeof text, "%s", desc);
    int col = printf("    %s", spelling);
    if (col > ZF_HELP_INDENT - 2)
        printf("\n%*s", ZF_HELP_INDENT, "");
    else
        printf("%*s", ZF_HELP_INDENT - col, "");
    wrap(text, ZF_HELP_INDENT);
}
