/* test_idxcache.c - the persisted offset indexes' directory (view/idxcache.h)
 * made by several savers at once: arrays sized at the same time (and other
 * daemons) create the missing directories concurrently, and a directory
 * another one made first is used, not refused ("File exists"). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/fp.h"
#include "view/idxcache.h"
#include "check.h"

enum { SAVERS = 8, ROUNDS = 40 };

typedef struct saver {
    pthread_barrier_t *start;
    const char *dir;
    zf_fp fp;
} saver;

static void *save_one(void *arg)
{
    saver *s = arg;
    uint64_t off0[2] = {0, 10}, off1[2] = {5, 20};
    pthread_barrier_wait(s->start);
    zf_idxcache_save(s->dir, 0, &s->fp, 2, off0, off1, NULL, 0);
    return NULL;
}

/* SAVERS threads save at once into a directory three levels of which are
 * missing; every index is then there */
static void test_concurrent_mkdir(const char *base)
{
    for (int r = 0; r < ROUNDS; r++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/r%d/zarrfs/idx", base, r);
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, SAVERS);
        saver s[SAVERS];
        pthread_t t[SAVERS];
        for (int i = 0; i < SAVERS; i++) {
            s[i] = (saver){&start, dir, {0, 0}};
            zf_fp_init(&s[i].fp);
            zf_fp_add(&s[i].fp, &i, sizeof i);
            pthread_create(&t[i], NULL, save_one, &s[i]);
        }
        for (int i = 0; i < SAVERS; i++)
            pthread_join(t[i], NULL);
        pthread_barrier_destroy(&start);
        for (int i = 0; i < SAVERS; i++) {
            uint64_t off0[2], off1[2];
            char why[300] = "";
            int rc = zf_idxcache_load(dir, &s[i].fp, 2, off0, off1, 0, NULL, NULL, why, sizeof why);
            CHECK(rc == ZF_OK && off0[1] == 10 && off1[1] == 20,
                  "round %d saver %d: rc %d (%s)", r, i, rc, why);
        }
    }
}

int main(void)
{
    char base[] = "/tmp/zf-test-idxcache.XXXXXX";
    if (!mkdtemp(base)) {
        perror("mkdtemp");
        return 1;
    }
    test_concurrent_mkdir(base);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0)
        fprintf(stderr, "test_idxcache: could not remove %s\n", base);
    return check_summary("test_idxcache");
}
