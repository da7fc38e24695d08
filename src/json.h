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

#endif
