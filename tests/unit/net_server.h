/* net_server.h - start and stop tests/unit/net_server.py (an HTTP server on
 * 127.0.0.1, port chosen by the OS) from a C unit test.  The server stops
 * when its standard input closes: when the test stops it, or dies. */
#ifndef ZF_TEST_NET_SERVER_H
#define ZF_TEST_NET_SERVER_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct net_server {
    pid_t pid;
    int in;        /* the server's stdin: closing it stops the server */
    unsigned port;
} net_server;

/* start the server: argv[0] is the script (a path relative to the test's
 * directory, tests/), the rest its arguments (NULL-terminated) */
static inline int net_server_start_argv(net_server *s, char *const argv[])
{
    int to[2], from[2];
    if (pipe(to) || pipe(from))
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        close(to[1]);
        close(from[0]);
        char *args[32] = {"python3"};
        for (int i = 0; argv[i] && i < 30; i++)
            args[i + 1] = argv[i];
        execvp("python3", args);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    FILE *f = fdopen(from[0], "r");
    unsigned port = 0;
    int ok = f && fscanf(f, "%u", &port) == 1 && port > 0;
    if (f)
        fclose(f);
    s->pid = pid;
    s->in = to[1];
    s->port = port;
    return ok ? 0 : -1;
}

/* start the server script (relative to tests/) without arguments */
static inline int net_server_start(net_server *s, const char *script)
{
    char *const argv[] = {(char *)script, NULL};
    return net_server_start_argv(s, argv);
}

/* stop it and wait for it (killed if it has not stopped within 5 s) */
static inline void net_server_stop(net_server *s)
{
    close(s->in);
    int st;
    for (int i = 0; i < 500; i++) {
        if (waitpid(s->pid, &st, WNOHANG) == s->pid)
            return;
        usleep(10000);
    }
    kill(s->pid, SIGKILL);
    waitpid(s->pid, &st, 0);
}

#endif
