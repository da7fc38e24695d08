/* s3list.h - the XML an S3 server answers with: ListObjectsV2 pages and
 * error documents, parsed with expat.
 *
 * Hostile input: documents with a DTD (and so any entity declaration) are
 * refused; a page holds at most ZF_S3LIST_ITEMS entries, a key at most
 * ZF_KEY_MAX - 1 bytes, any other text at most 4 KiB.  The caller bounds the
 * document's size (it is read into memory first). */
#ifndef ZF_S3LIST_H
#define ZF_S3LIST_H

#include <stddef.h>
#include <stdint.h>

/* Most entries one page may hold (S3 sends at most 1000). */
#define ZF_S3LIST_ITEMS 100000

/* One entry of a page: an object (Contents) or a common prefix. */
typedef struct zf_s3list_item {
    char *key;          /* the whole key; a common prefix ends with the delimiter */
    int prefix;         /* 1: a CommonPrefixes entry (the other fields are 0) */
    uint64_t size;      /* Size */
    int64_t mtime_ns;   /* LastModified, ns since the epoch (0 if absent) */
    char *etag;         /* ETag as given (quotes included), or NULL */
} zf_s3list_item;

/* One ListObjectsV2 page. */
typedef struct zf_s3list_page {
    zf_s3list_item *items;  /* in document order */
    size_t n;
    int truncated;          /* IsTruncated: another page follows */
    char *next_token;       /* NextContinuationToken, or NULL */
    long key_count;         /* KeyCount (-1 if absent) */
} zf_s3list_page;

/* Parse a ListBucketResult document into *page (the caller's:
 * zf_s3list_page_free, also after a failure).  ZF_ECORRUPT with the reason
 * in err for anything that is not a well-formed page within the bounds. */
int zf_s3list_parse(const char *xml, size_t len, zf_s3list_page *page, char *err, size_t errcap);

/* Free what a page holds (not the page itself). */
void zf_s3list_page_free(zf_s3list_page *page);

/* The Code and Message of an S3 <Error> document into code and msg
 * (NUL-terminated, cut to fit, control characters replaced by '?').
 * ZF_ECORRUPT (both "") if xml is not such a document. */
int zf_s3list_error(const char *xml, size_t len, char *code, size_t codecap, char *msg,
                    size_t msgcap);

/* LastModified text ("2009-10-12T17:50:30.000Z") as ns since the epoch;
 * ZF_ECORRUPT if it is not such a time. */
int zf_s3list_time(const char *s, int64_t *ns);

#endif
