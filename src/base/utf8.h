/* utf8.h - text from outside as UTF-8 characters, and which of them are
 * control characters.
 *
 * One definition for the log (shown as \xNN), the names the tree shows
 * (skipped), and texts from servers and metadata (replaced): a control
 * character is a C0 control (U+0000-U+001F), DEL (U+007F), a C1 control
 * (U+0080-U+009F: NEL, CSI...) or a bidirectional override or isolate
 * (U+202A-U+202E, U+2066-U+2069), which reorder what a terminal shows. */
#ifndef ZF_UTF8_H
#define ZF_UTF8_H

#include <stddef.h>

/* Length (1-4) of the valid UTF-8 character at p (end: one past the text's
 * last byte); 0 if the bytes there are not one (a stray continuation byte,
 * an overlong form, a surrogate, beyond U+10FFFF, cut short). */
size_t zf_utf8_len(const char *p, const char *end);

/* Is the valid character of n bytes at p a control character (above)? */
int zf_utf8_is_control(const char *p, size_t n);

/* Does the NUL-terminated s hold a control character (above)? */
int zf_utf8_has_control(const char *s);

/* Copy n bytes of text into out (capacity cap > 0, NUL-terminated, cut at a
 * character), each control character as the one byte repl; other bytes as
 * they are.  Returns how many bytes of text were copied (n unless cut). */
size_t zf_utf8_clean_copy(char *out, size_t cap, const char *text, size_t n, char repl);

#endif
