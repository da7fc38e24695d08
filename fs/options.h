/* options.h - the one table of zarrfs's views and options.
 *
 * X-macro lists: main.c builds the option parser, the defaults and --help
 * from them, and doc/mangen.c writes the VIEWS and OPTIONS sections of
 * zarrfs(1) from the same rows, so the help and the manual cannot drift.
 * Plain macros only (no FUSE): the generator is built without libfuse.
 * Descriptions are one sentence, without a final period; roff-neutral text
 * (no backslashes, no line starting with a dot). */
#ifndef ZARRFS_OPTIONS_H
#define ZARRFS_OPTIONS_H

/* X(EXTENSION, DESCRIPTION): the files shown for every timedelta64 or datetime64 array NAME */
#define ZF_VIEWS(X)                                                                              \
    X(".txt", "one duration or time stamp per line, in the row-major (C) order of the array")    \
    X(".csv", "a header line, then one line per element: its coordinates' values (as xarray's "  \
              "to_dataframe().to_csv() writes them; -o labels=), or its indices, then its value")  \
    X(".info", "a description of the array in key: value lines: shape, chunks, data type, "     \
               "unit, fill value, dimension names, other attributes, codecs, path, how many "       \
               "chunks are stored, and the line counts and sizes of the text files")

/* X(ID, KIND, ARG, DEFAULT, DESCRIPTION): the -o options zarrfs itself reads.
 * KIND is VAL (-o ID=ARG, kept as a string), FLAG (-o ID) or OPT (-o ID, or
 * -o ID=ARG: a flag that may take a value).  DEFAULT is
 * what --help and the manual show, and for VAL options (but log, timeout and
 * the store's options of store/open.h, the repository's included) the value
 * used when the option is absent. */
#define ZF_OPTIONS(X)                                                                            \
    X(format, VAL, "FORMAT", "pandas",                                                           \
      "text of each duration or time stamp, time labels of .csv included: pandas, iso, numpy, "  \
      "seconds or raw")                                                                          \
    X(nat, VAL, "TEXT", "NaT",                                                                   \
      "text shown for NaT, CSV-quoted in .csv when needed; no control characters")              \
    X(labels, VAL, "WHICH", "coords",                                                            \
      ".csv label columns: coords (the coordinates xarray gives the array: each dimension's, "   \
      "then the others, as xarray's to_dataframe().to_csv() writes them, where the array has "   \
      "coordinates) or index (the indices of each dimension)")                                   \
    X(cf, VAL, "WHICH", "all",                                                                   \
      "CF-encoded durations shown: all (integer and float arrays with a duration units "         \
      "attribute), dtype (only those with xarray's dtype attribute too) or off (native "        \
      "timedelta64 and datetime64 arrays only); CF time stamps are shown unless off")           \
    X(cache_size, VAL, "BYTES", "256M",                                                          \
      "bound on the memory of decoded chunks; K, M and G suffixes")                              \
    X(read_ahead, VAL, "BYTES", "4M",                                                            \
      "the kernel's read-ahead window of the mount, set on the first open; 0 leaves the "        \
      "kernel's; needs root")                                                                    \
    X(presize, VAL, "BYTES", "1G",                                                               \
      "when a file's array is first sized, the other arrays of its directory are sized too, in " \
      "the background, in name order, those whose values (8 bytes each) fit in this many "      \
      "bytes; 0: each array only when asked")                                                   \
    X(timeout, VAL, "SECONDS", "1, 60 for a remote store",                                      \
      "how long the kernel caches names and sizes, and how often the store's metadata is "       \
      "re-checked for changes (the chunks of arrays being read too; of the others, less "        \
      "often as they are larger); never: a static view, re-checked only on SIGUSR1")             \
    X(follow_symlinks, FLAG, "", "off", "follow symlinks that lead outside the store")           \
    X(connections, VAL, "N", "16",                                                               \
      "remote stores: most requests in flight at once, and connections kept open")              \
    X(retries, VAL, "N", "8",                                                                    \
      "remote stores: attempts in all for a request that fails for a passing reason (a "        \
      "timeout, a dropped connection, HTTP 429 or 5xx), with random exponential backoff")        \
    X(timeout_ms, VAL, "MS", "10000",                                                            \
      "remote stores: an attempt fails after this long without progress, and a request "         \
      "with all its retries, or a read with all the requests it needs, gives up after 6 "       \
      "times this; the read then fails with EIO")                                               \
    X(cafile, VAL, "FILE", "the system's",                                                       \
      "remote stores: PEM file of the certificate authorities that https servers are "          \
      "verified against (servers are always verified)")                                         \
    X(endpoint, VAL, "URL", "AWS, storage.googleapis.com, or ACCOUNT.blob.core.windows.net",     \
      "s3://, gs:// and az:// stores: the server requests go to (an S3-compatible server, an "   \
      "emulator), as http://HOST:PORT[/PATH] or https://HOST[/PATH]")                            \
    X(account, VAL, "NAME", "AZURE_STORAGE_ACCOUNT_NAME",                                        \
      "az:// stores: the storage account")                                                       \
    X(region, VAL, "NAME", "AWS_REGION, else us-east-1",                                         \
      "s3:// stores: the region requests are signed for")                                        \
    X(anonymous, FLAG, "", "off",                                                                \
      "s3://, gs:// and az:// stores: send unsigned requests (public buckets) and read no "      \
      "credentials")                                                                             \
    X(requester_pays, OPT, "PROJECT", "off",                                                     \
      "s3:// stores: the reader pays for the requests of a Requester Pays bucket "               \
      "(x-amz-request-payer: requester, signed); gs:// stores: -o requester_pays=PROJECT "       \
      "bills PROJECT (userProject)")                                                             \
    X(bearer_token_file, VAL, "FILE", "none",                                                    \
      "https:// stores: send the token in FILE (read again when it changes) as a bearer "       \
      "token, to the store's host only")                                                          \
    X(branch, VAL, "NAME", "main",                                                               \
      "Icechunk repositories: the branch shown; a branch that moves is followed at the "        \
      "re-checks")                                                                               \
    X(tag, VAL, "NAME", "none", "Icechunk repositories: show the snapshot of this tag instead") \
    X(snapshot, VAL, "ID", "none",                                                               \
      "Icechunk repositories: show this snapshot (its 20-character id) instead")               \
    X(virtual, VAL, "PREFIX[,PREFIX...]", "none",                                               \
      "Icechunk repositories and kerchunk reference sets: the locations virtual chunks and "    \
      "targets may be read from (file:///DIR/, https://HOST/PATH/, s3://BUCKET/, gs://BUCKET/; " \
      "a reference set's own directory, host or bucket always); reads of others fail with EIO") \
    X(no_index_cache, FLAG, "", "off",                                                           \
      "do not keep offset indexes in $XDG_CACHE_HOME/zarrfs, or ~/.cache/zarrfs")               \
    X(index_cache_size, VAL, "BYTES", "1G",                                                      \
      "the most that directory holds (K, M, G); beyond it the least recently used offset "       \
      "indexes are removed")                                                                     \
    X(log, VAL, "FILE", "stderr with -f, else syslog",                                           \
      "append log lines to FILE, a regular file (not a symlink), instead")                       \
    X(log_level, VAL, "LEVEL", "warn",                                                           \
      "lowest level logged: error, warn, info or debug; -d implies debug")                       \
    X(uid, VAL, "N", "the mounting user, or with allow_other a local store's owner",             \
      "the owner every file and directory shows")                                                \
    X(gid, VAL, "N", "the mounting group, or with allow_other a local store's group",            \
      "the group every file and directory shows")                                                \
    X(umask, VAL, "OCTAL", "none, or with allow_other a local store's missing read bits",        \
      "permission bits taken away from the 0444 of files and the 0555 of directories")

/* X(ID): the options of ZF_OPTIONS that only a mount has; zarrfs-cat takes
 * every other one (the same names, values and defaults) */
#define ZF_MOUNT_ONLY_OPTIONS(X)                                                                 \
    X(read_ahead) X(presize) X(timeout) X(no_index_cache) X(index_cache_size) X(log)           \
    X(log_level) X(uid) X(gid) X(umask)

/* the number of each option of ZF_OPTIONS: ZF_OPT_format, ZF_OPT_nat, ... */
enum zf_opt_id {
#define X(id, kind, arg, def, desc) ZF_OPT_##id,
    ZF_OPTIONS(X)
#undef X
    ZF_OPT_COUNT
};

/* 1 if option id is one of ZF_MOUNT_ONLY_OPTIONS (zarrfs-cat has not it), else 0 */
static inline int zf_opt_mount_only(int id)
{
#define X(oid) if (id == ZF_OPT_##oid) return 1;
    ZF_MOUNT_ONLY_OPTIONS(X)
#undef X
    return 0;
}

/* how an option of ZF_OPTIONS is written: -o ID=ARG (VAL) or -o ID (FLAG) */
#define ZF_SPELL_VAL(id, arg) "-o " #id "=" arg
#define ZF_SPELL_FLAG(id, arg) "-o " #id
#define ZF_SPELL_OPT(id, arg) "-o " #id "[=" arg "]"

/* X(SPELLING, DEFAULT, DESCRIPTION): options libfuse parses that zarrfs
 * documents (the rest are listed by libfuse after them in --help) */
#define ZF_FUSE_OPTIONS(X)                                                                       \
    X("-f", "off", "stay in the foreground and log to stderr (otherwise daemonize and log to "   \
                   "syslog)")                                                                    \
    X("-d", "off", "debug: log every request (implies -f)")                                      \
    X("-s", "off", "serve requests on one thread")                                               \
    X("-o max_threads=N", "10", "most threads serving requests at once")                         \
    X("-o ro", "on", "read-only: always; -o rw and other write options are refused")             \
    X("-h, --help", "", "print this help and exit")                                              \
    X("-V, --version", "", "print the version of zarrfs, then of libfuse, and exit")

/* Options of mount(8) and fstab(5) that zarrfs accepts and ignores, so that
 * they may reach it from any mount helper (mount.fuse3 drops most of them) */
#define ZF_IGNORED_MOUNT_OPTIONS(X)                                                              \
    X("auto") X("noauto") X("nofail") X("user") X("nouser") X("users") X("_netdev")            \
    X("defaults")

/* Options that would make the mount writable: refused */
#define ZF_WRITE_OPTIONS(X) X("rw") X("writeback_cache")

#endif
