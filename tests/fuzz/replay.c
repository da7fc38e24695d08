/* replay.c - run a libFuzzer target over its committed corpus without libFuzzer.
 *
 * Linked with one tests/fuzz/fuzz_*.c by any compiler (no -fsanitize=fuzzer),
 * as zstd's regression driver does: every seed and every kept crash input
 * (tests/fuzz/corpus/TARGET) is replayed on every build, and a target's own
 * CHECK aborts the run.  Usage: replay_TARGET DIR_OR_FILE...  Exit 0 when
 * every input ran; 1 if an input could not be read or none was found. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

/* Read and run one input file; 0 or -1. */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, n = 0, got;
    uint8_t *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *grown = realloc(buf, cap * 2);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    int bad = ferror(f) || !buf;
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(buf);
        return -1;
    }
    /* an exact-size copy, so reads past the input trip the sanitizers */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Run every regular file of dir, in name order; the count run, or -1. */
static long replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **grown = realloc(names, cap * sizeof *names);
            if (!grown)
                break;
            names = grown;
        }
        names[n] = strdup(e->d_name);
        if (names[n])
            n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    long ran = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (replay_file(path) < 0)
                ran = -1;
            else if (ran >= 0)
                ran++;
        }
        free(names[i]);
    }
    free(names);
    return ran;
}

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    long total = 0;
    int failed = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        long ran = stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode) ? replay_dir(argv[i])
                                                                   : replay_file(argv[i]) == 0;
        if (ran < 0)
            failed = 1;
        else
            total += ran;
    }
    printf("replayed %ld inputs\n", total);
    return failed || total == 0;
}
