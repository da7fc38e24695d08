/* awsproc.c - credentials from a profile's credential_process: the command
 * run without a shell (its words split as s3cred.h says), standard input
 * from /dev/null, standard error discarded, at most PROC_TIME_S seconds
 * and ZF_AWS_DOC_MAX bytes of standard output, which must be the JSON the
 * AWS CLI documents ({"Version": 1, "AccessKeyId", "SecretAccessKey",
 * "SessionToken", "Expiration"}). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/deadline.h"
#include "base/err.h"
#include "base/json.h"
#include "store/aws_impl.h"

#define ERR(code, ...) ((err && errcap ? (void)snprintf(err, errcap, __VA_ARGS__) : (void)0), (code))

/* A credential_process that runs longer than this is killed. */
#define PROC_TIME_S 60

extern char **environ;

/* start argv with its standard output on a pipe; *fd gets the read end */
static int spawn(char *const argv[], pid_t *pid, int *fd)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC))
        return errno;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
    int e = posix_spawnp(pid, argv[0], &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(p[1]);
    if (e) {
        close(p[0]);
        return e;
    }
    *fd = p[0];
    return 0;
}

/* read fd to its end into out (at most max bytes) within the deadline
 * (monotonic ms); 0, ETIMEDOUT, EFBIG or an errno */
static int read_all(int fd, char *out, size_t max, size_t *n, uint64_t deadline)
{
    *n = 0;
    for (;;) {
        uint64_t now = zf_deadline_now_ms();
        if (now >= deadline)
            return ETIMEDOUT;
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int k = poll(&pf, 1, (int)(deadline - now > 1000 ? 1000 : deadline - now));
        if (k < 0 && errno != EINTR)
            return errno;
        if (k <= 0)
            continue;
        if (*n == max)
            return EFBIG;
        ssize_t r = read(fd, out + *n, max - *n);
        if (r == 0)
            return 0;
        if (r < 0 && errno != EINTR && errno != EAGAIN)
            return errno;
        if (r > 0)
            *n += (size_t)r;
    }
}

/* wait for pid (killed first when kill_it); its exit status or -1 */
static int reap(pid_t pid, int kill_it)
{
    if (kill_it)
        kill(pid, SIGKILL);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int zf_aws_process_fetch(zf_aws_src *s, zf_cred_value *v, char *err, size_t errcap)
{
    pid_t pid;
    int fd, e = spawn(s->argv, &pid, &fd);
    if (e)
        return ERR(ZF_EIO, "credential_process %s: cannot run: %s", s->argv[0], strerror(e));
    char *out = malloc(ZF_AWS_DOC_MAX + 1);
    size_t n = 0;
    uint64_t deadline = zf_deadline_now_ms() + PROC_TIME_S * 1000;
    e = out ? read_all(fd, out, ZF_AWS_DOC_MAX, &n, deadline) : ENOMEM;
    close(fd);
    int status = reap(pid, e != 0);
    int rc = ZF_OK;
    if (e == ETIMEDOUT)
        rc = ERR(ZF_EIO, "credential_process %s: no answer within %d s (killed)", s->argv[0],
                 PROC_TIME_S);
    else if (e == EFBIG)
        rc = ERR(ZF_EIO, "credential_process %s: more than %u bytes of output", s->argv[0],
                 ZF_AWS_DOC_MAX);
    else if (e)
        rc = ERR(ZF_EIO, "credential_process %s: %s", s->argv[0], strerror(e));
    else if (status != 0)
        rc = ERR(ZF_EIO, "credential_process %s: exit status %d", s->argv[0], status);
    if (rc == ZF_OK) {
        static const char *const names[4] = {"AccessKeyId", "SecretAccessKey", "SessionToken",
                                             "Expiration"};
        cJSON *j = cJSON_ParseWithLength(out, n);
        int64_t ver = 0;
        if (!zf_json_int(cJSON_GetObjectItemCaseSensitive(j, "Version"), 1, 1, &ver))
            rc = ERR(ZF_EIO, "credential_process %s: its output is not JSON with \"Version\": 1",
                     s->argv[0]);
        if (rc == ZF_OK)
            rc = zf_aws_json_creds(j, names, "credential_process", v, err, errcap);
        cJSON_Delete(j);
    }
    if (out) {
        explicit_bzero(out, ZF_AWS_DOC_MAX + 1);
        free(out);
    }
    return rc;
}
