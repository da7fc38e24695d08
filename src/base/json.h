/* json.h - typed, range-checked access to cJSON values, and exact integers.
 *
 * cJSON keeps numbers as doubles, which cannot hold every int64; values that
 * must be exact (fill values) are read from the raw JSON text with
 * zf_json_raw_int64(). */
#ifndef ZF_JSON_H
#define ZF_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* Largest integer a double holds exactly (2^53); larger JSON integers are
 * accepted only through zf_json_raw_int64. */
#define ZF_JSON_MAX_EXACT 9007199254740992.0

/* Parse text[0..n) as Python's json module does: JSON, plus the bare
 * literals NaN, Infinity and -Infinity as numbers (which zarr-python and
 * xarray write, e.g. "valid_max": NaN).  NULL if it is not JSON (or out of
 * memory); the caller frees the result with cJSON_Delete. */
cJSON *zf_json_parse(const char *text, size_t n);

/* Is item a JSON number with an integral value in [lo, hi]?  Stores it in *out. */
int zf_json_int(const cJSON *item, int64_t lo, int64_t hi, int64_t *out);

/* Split a v3 extension entry (bare string, or object with "name" and optional
 * "configuration" and "must_understand") into its name and configuration
 * (NULL when absent).  Returns 0, or ZF_ECORRUPT with a reason in err. */
int zf_json_entry(const cJSON *entry, const char **name, const cJSON **config, char *err,
                  size_t errcap);

/* Check that every key of object config is one of the NULL-terminated list
 * allowed; ZF_ECORRUPT naming the first other key. */
int zf_json_only_keys(const cJSON *config, const char *const *allowed, const char *what,
                      char *err, size_t errcap);

/* Find the value of top-level key in the JSON object text and, if it is an
 * integer literal within int64, store it exactly in *out.  Returns 0, or
 * ZF_ENOTFOUND if the key is absent or not an integer literal, or ZF_ECORRUPT
 * if it is an integer out of range. */
int zf_json_raw_int64(const char *text, size_t n, const char *key, int64_t *out);

/* Read the JSON array text of integer literals ("[1, 2, 3]") exactly into
 * out (room for cap), their number into *count.  ZF_ECORRUPT if text is
 * anything else (another value in it, more than cap, out of int64). */
int zf_json_raw_int_array(const char *text, size_t n, int64_t *out, unsigned cap, unsigned *count);

/* Longest object key (unescaped, with its NUL) the raw member reader accepts. */
#define ZF_JSON_KEY_MAX 4096

/* Called with each member of an object: the key (unescaped, NUL-terminated,
 * valid during the call) and the value's raw text span.  Nonzero stops. */
typedef int (*zf_json_member_fn)(void *arg, const char *key, const char *val, size_t vlen);

/* Call fn for every member of the JSON object text, in order, without
 * parsing the values (spans point into text).  Returns 0, fn's first nonzero
 * value, or ZF_ECORRUPT if text is not an object or is cut short.  Values are
 * only delimited, not validated: parse a span before trusting it. */
int zf_json_raw_members(const char *text, size_t n, zf_json_member_fn fn, void *arg);

/* The raw text span of top-level key's value in the JSON object text;
 * ZF_ENOTFOUND if absent, ZF_ECORRUPT if text is not an object. */
int zf_json_raw_member(const char *text, size_t n, const char *key, const char **val,
                       size_t *vlen);

/* Call fn(arg, NULL, span, len) for every item of the JSON array text, in
 * order, without parsing them (as zf_json_raw_members).  Returns 0, fn's
 * first nonzero value, or ZF_ECORRUPT if text is not an array or cut short. */
int zf_json_raw_items(const char *text, size_t n, zf_json_member_fn fn, void *arg);

/* The integer literal that is all of text (whitespace around it allowed),
 * exactly, into *out: ZF_OK; ZF_ENOTFOUND if text is anything else (a
 * fraction, an exponent, another value); ZF_ECORRUPT beyond int64. */
int zf_json_raw_int(const char *text, size_t n, int64_t *out);

/* Decode the JSON string literal lit (n bytes, quotes included) into out,
 * which has room for n bytes (a decoded string is never longer); *len gets
 * its length.  Exact: a \u0000 is a NUL byte, \uXXXX (and surrogate pairs)
 * become UTF-8.  ZF_ECORRUPT for a malformed literal (a bad escape, a lone
 * surrogate, a raw control byte). */
int zf_json_unescape(const char *lit, size_t n, char *out, size_t *len);

#endif
