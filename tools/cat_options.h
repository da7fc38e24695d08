/* cat_options.h - the one table of zarrfs-cat's options and exit statuses.
 *
 * zarrfs-cat.c prints --help from it and doc/mangen.c writes the OPTIONS
 * and EXIT STATUS sections of zarrfs-cat(1) from it, so the two cannot
 * drift.  Plain macros; descriptions are one sentence without a final
 * period, roff-neutral (no backslashes, no line starting with a dot). */
#ifndef ZARRFS_CAT_OPTIONS_H
#define ZARRFS_CAT_OPTIONS_H

/* X(SPELLING, DEFAULT, DESCRIPTION) */
#define ZF_CAT_OPTIONS(X)                                                                        \
    X("--csv", "", "write the array's .csv file (its label columns, then its value) instead "   \
                   "of its .txt")                                                                \
    X("--info", "", "write the array's .info file (a description) instead of its .txt")          \
    X("-o format=FORMAT", "pandas",                                                              \
      "text of each duration or time stamp: pandas, iso, numpy, seconds or raw")                 \
    X("-o nat=TEXT", "NaT", "text shown for NaT, CSV-quoted in .csv when needed")                \
    X("--no-progress", "", "never show the progress line")                                       \
    X("-o connections=N", "16", "remote stores: most requests in flight at once")                \
    X("-o retries=N", "8",                                                                       \
      "remote stores: attempts in all for a request that fails for a passing reason (a "        \
      "timeout, a dropped connection, HTTP 429 or 5xx), with random exponential backoff")        \
    X("-o timeout_ms=MS", "10000",                                                               \
      "remote stores: an attempt fails after this long without progress, and a request "         \
      "with all its retries gives up after 6 times this")                                        \
    X("-o cafile=FILE", "the system's",                                                          \
      "remote stores: PEM file of the certificate authorities that https servers are "          \
      "verified against (servers are always verified)")                                         \
    X("-o endpoint=URL", "AWS, or storage.googleapis.com",                                        \
      "s3:// and gs:// stores: the server requests go to (an S3-compatible server, an "           \
      "emulator)")                                                                               \
    X("-o region=NAME", "AWS_REGION, else us-east-1", "s3:// stores: the region requests are signed for") \
    X("-o anonymous", "", "s3:// stores: send unsigned requests (public buckets)")             \
    X("-o requester_pays", "", "s3:// stores: the reader pays for the requests (Requester Pays)") \
    X("-o bearer_token_file=FILE", "none",                                                       \
      "https:// stores: send the token in FILE as a bearer token, to the store's host only")     \
    X("-o branch=NAME", "main", "Icechunk repositories: the branch whose snapshot is read")    \
    X("-o tag=NAME", "", "Icechunk repositories: read the snapshot of this tag instead")       \
    X("-o snapshot=ID", "", "Icechunk repositories: read this snapshot (its 20-character id) instead") \
    X("-o virtual=PREFIX", "none",                                                               \
      "Icechunk repositories: the locations virtual chunks may be read from, comma-separated "  \
      "prefixes (file:///DIR/, https://HOST/PATH/, s3://BUCKET/, gs://BUCKET/); others fail")   \
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
