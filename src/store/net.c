/* net.c - the HTTP engine's interface: opening and closing it, the queue of
 * requests from the callers of zf_net_run (checked, given their deadlines,
 * waited for), and its state across fork() (the bounds are stated in net.h;
 * the thread that runs the requests: net_engine.c). */
#include "store/net.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/deadline.h"
#include "base/err.h"
#include "store/net_impl.h"

#define BUDGET_TIMEOUTS 6        /* default B in T */


/* Every open engine, so that a fork (zarrfs daemonizing after it has read
 * the store's metadata) leaves the child usable: the handlers below hold
 * each engine's locks across fork(), so the child's copy of the multi handle
 * is not in the middle of a change, and the child, which has no engine
 * thread, starts one on its next zf_net_run. */
static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static zf_net *registry;

static void fork_prepare(void)
{
    pthread_mutex_lock(&registry_mu);
    for (zf_net *n = registry; n; n = n->reg_next) {
        pthread_mutex_lock(&n->curl_mu);
        pthread_mutex_lock(&n->mu);
    }
}

static void fork_parent(void)
{
    for (zf_net *n = registry; n; n = n->reg_next) {
        pthread_mutex_unlock(&n->mu);
        pthread_mutex_unlock(&n->curl_mu);
    }
    pthread_mutex_unlock(&registry_mu);
}

static void fork_child(void)
{
    for (zf_net *n = registry; n; n = n->reg_next) {
        n->thread_alive = 0; /* threads do not cross fork() */
        pthread_mutex_unlock(&n->mu);
        pthread_mutex_unlock(&n->curl_mu);
    }
    pthread_mutex_unlock(&registry_mu);
}

int zf_net_global_init(char *err, size_t errcap)
{
    CURLcode c = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (c == CURLE_OK && pthread_atfork(fork_prepare, fork_parent, fork_child) != 0) {
        curl_global_cleanup();
        c = CURLE_FAILED_INIT;
    }
    if (c != CURLE_OK) {
        if (err && errcap)
            snprintf(err, errcap, "libcurl: %s", curl_easy_strerror(c));
        return ZF_EIO;
    }
    return ZF_OK;
}

void zf_net_global_cleanup(void)
{
    curl_global_cleanup();
}

/* ---- the interface ------------------------------------------------------- */

/* fill the defaults of net.h into o */
static void defaults(zf_net_opts *o)
{
    if (!o->connections)
        o->connections = 16;
    if (!o->retries)
        o->retries = 8;
    if (!o->timeout_ms)
        o->timeout_ms = 10000;
    if (!o->connect_timeout_ms)
        o->connect_timeout_ms = o->timeout_ms;
    if (!o->budget_ms)
        o->budget_ms = o->timeout_ms > UINT32_MAX / BUDGET_TIMEOUTS ? UINT32_MAX
                                                                   : o->timeout_ms * BUDGET_TIMEOUTS;
}

void zf_net_close(zf_net *net)
{
    if (!net)
        return;
    pthread_mutex_lock(&registry_mu);
    for (zf_net **pp = &registry; *pp; pp = &(*pp)->reg_next)
        if (*pp == net) {
            *pp = net->reg_next;
            break;
        }
    pthread_mutex_unlock(&registry_mu);
    pthread_mutex_lock(&net->mu);
    net->stop = 1;
    int alive = net->thread_alive;
    pthread_mutex_unlock(&net->mu);
    if (alive) {
        curl_multi_wakeup(net->multi);
        pthread_join(net->thr, NULL);
    }
    for (unsigned i = 0; i < net->o.connections; i++)
        curl_easy_cleanup(net->slots[i].easy);
    curl_multi_cleanup(net->multi);
    pthread_mutex_destroy(&net->mu);
    pthread_mutex_destroy(&net->curl_mu);
    free(net->slots);
    free((char *)net->o.cafile);
    free(net);
}

/* the multi handle and the slots' easy handles */
static int setup_curl(zf_net *net)
{
    net->multi = curl_multi_init();
    net->slots = calloc(net->o.connections, sizeof *net->slots);
    if (!net->multi || !net->slots)
        return ZF_ENOMEM;
    curl_multi_setopt(net->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)net->o.connections);
    curl_multi_setopt(net->multi, CURLMOPT_MAXCONNECTS, (long)net->o.connections);
    curl_multi_setopt(net->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    for (unsigned i = 0; i < net->o.connections; i++)
        if (!(net->slots[i].easy = zf_net_new_easy(net, &net->slots[i])))
            return ZF_ENOMEM;
    return ZF_OK;
}

/* cafile, checked to be a regular file that can be read, as an absolute
 * path (the daemon leaves its directory when it daemonizes, and libcurl
 * opens the file at each connection) into *out (malloc'd) */
static int cafile_path(const char *cafile, char **out, char *err, size_t errcap)
{
    struct stat st;
    int fd = open(cafile, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), e = errno;
    int regular = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (fd >= 0)
        close(fd);
    if (!regular)
        return zf_errf(err, errcap, ZF_EINVAL, "cannot read cafile %s: %s", cafile,
                       fd < 0 ? strerror(e) : "not a regular file (a PEM file of CA certificates)");
    char cwd[PATH_MAX] = "";
    if (cafile[0] != '/' && !getcwd(cwd, sizeof cwd))
        return zf_errf(err, errcap, ZF_EINVAL, "cafile %s: a relative path, and the current "
                       "directory is unknown: %s", cafile, strerror(errno));
    size_t n = strlen(cwd) + strlen(cafile) + 2;
    if (!(*out = malloc(n)))
        return ZF_ENOMEM;
    snprintf(*out, n, "%s%s%s", cwd, *cwd ? "/" : "", cafile);
    return ZF_OK;
}

int zf_net_open(const zf_net_opts *o, zf_net **out, char *err, size_t errcap)
{
    *out = NULL;
    char *cafile = NULL;
    int rc = o->cafile ? cafile_path(o->cafile, &cafile, err, errcap) : ZF_OK;
    if (rc != ZF_OK)
        return rc;
    zf_net *net = calloc(1, sizeof *net);
    if (!net) {
        free(cafile);
        return ZF_ENOMEM;
    }
    net->o = *o;
    defaults(&net->o);
    net->o.cafile = cafile; /* owned */
    net->rng = ((uint64_t)zf_net_now_ms() << 20) ^ (uint64_t)(uintptr_t)net ^ 0x9e3779b97f4a7c15ull;
    pthread_mutex_init(&net->mu, NULL);
    pthread_mutex_init(&net->curl_mu, NULL);
    if ((rc = setup_curl(net)) == ZF_OK) {
        pthread_mutex_lock(&registry_mu);
        net->reg_next = registry;
        registry = net;
        pthread_mutex_unlock(&registry_mu);
        *out = net;
        return ZF_OK;
    }
    for (unsigned i = 0; net->slots && i < net->o.connections; i++)
        if (net->slots[i].easy)
            curl_easy_cleanup(net->slots[i].easy);
    if (net->multi)
        curl_multi_cleanup(net->multi);
    pthread_mutex_destroy(&net->mu);
    pthread_mutex_destroy(&net->curl_mu);
    free(net->slots);
    free((char *)net->o.cafile);
    free(net);
    if (err && errcap)
        snprintf(err, errcap, "cannot start the HTTP engine");
    return rc;
}

/* check a request's inputs and clear its outputs; ZF_EINVAL if unusable */
static int prepare(zf_net_req *r)
{
    r->rc = ZF_OK;
    r->status = 0;
    r->attempts = 0;
    r->n = 0;
    r->size = 0;
    r->size_known = 0;
    r->etag[0] = '\0';
    r->last_modified_ns = 0;
    if (r->err && r->errcap)
        r->err[0] = '\0';
    int ok = r->url && (r->head || (r->len ? r->buf && r->cap >= r->len && r->off <= UINT64_MAX - r->len
                                           : (r->grow || r->buf)));
    if (!ok) {
        r->rc = ZF_EINVAL;
        if (r->err && r->errcap)
            snprintf(r->err, r->errcap, "a malformed request (no URL, or no room for its body)");
    }
    return r->rc;
}

/* the engine thread runs from the first request on (and again in a forked child) */
static int start_thread(zf_net *net)
{
    int rc = ZF_OK;
    sigset_t all, old; /* signals are for the threads that serve requests */
    sigfillset(&all);
    pthread_mutex_lock(&net->mu);
    if (!net->thread_alive) {
        pthread_sigmask(SIG_SETMASK, &all, &old);
        if (pthread_create(&net->thr, NULL, zf_net_engine, net) == 0)
            net->thread_alive = 1;
        else
            rc = ZF_EIO;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    pthread_mutex_unlock(&net->mu);
    return rc;
}

int zf_net_run(zf_net *net, zf_net_req *reqs, size_t n)
{
    zf_net_xfer *xs = n ? calloc(n, sizeof *xs) : NULL;
    if (n && !xs) {
        for (size_t i = 0; i < n; i++)
            reqs[i].rc = ZF_ENOMEM;
        return ZF_ENOMEM;
    }
    zf_net_batch b = {.left = 0};
    pthread_cond_init(&b.cv, NULL);
    uint64_t own = (uint64_t)zf_net_now_ms() + net->o.budget_ms;
    uint64_t bound = zf_deadline_bound(own); /* the thread's request deadline, when earlier */
    int64_t deadline = (int64_t)bound;
    int by_request = bound < own;
    zf_net_xfer *head = NULL, *last = NULL;
    for (size_t i = 0; i < n; i++) {
        if (prepare(&reqs[i]) != ZF_OK)
            continue;
        xs[i] = (zf_net_xfer){.req = &reqs[i], .batch = &b, .deadline = deadline,
                              .by_request = by_request, .cancel = zf_deadline_flag()};
        if (last)
            last->next = &xs[i];
        else
            head = &xs[i];
        last = &xs[i];
        b.left++;
    }
    if (head && start_thread(net) != ZF_OK) {
        for (zf_net_xfer *x = head; x; x = x->next) {
            x->req->rc = ZF_EIO;
            if (x->req->err && x->req->errcap)
                snprintf(x->req->err, x->req->errcap, "cannot start the HTTP engine's thread");
        }
        head = NULL;
    }
    if (head) {
        pthread_mutex_lock(&net->mu);
        if (net->qtail)
            net->qtail->next = head;
        else
            net->qhead = head;
        net->qtail = last;
        pthread_mutex_unlock(&net->mu);
        curl_multi_wakeup(net->multi);
        pthread_mutex_lock(&net->mu);
        while (b.left)
            pthread_cond_wait(&b.cv, &net->mu);
        pthread_mutex_unlock(&net->mu);
    }
    pthread_cond_destroy(&b.cv);
    free(xs);
    for (size_t i = 0; i < n; i++)
        if (reqs[i].rc != ZF_OK)
            return reqs[i].rc;
    return ZF_OK;
}

unsigned zf_net_budget_ms(const zf_net *net)
{
    return net->o.budget_ms;
}

unsigned zf_net_connections(const zf_net *net)
{
    return net->o.connections;
}

void zf_net_get_stats(zf_net *net, zf_net_stats *st)
{
    pthread_mutex_lock(&net->mu);
    *st = net->stats;
    pthread_mutex_unlock(&net->mu);
}
