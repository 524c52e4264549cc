/* net_link.c: a multi-node link's set-up: its sockets, the rendezvous at rank 0 where the ranks agree on one model, and the calls the trainer makes. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "net_link.h"

/* ===================================================================== *
 *  The link object
 * ===================================================================== */
uint64_t hog_link_params_fingerprint(const hog_train_params *p)
{
    /* What changes a step or the model, field by field (never the struct's
     * bytes, whose padding is not ours to hash). l2_rows makes l2 a share of
     * the run's rows, which the rendezvous settles (a rank's own file, with
     * shards, has rows of its own): its l2 is not compared. */
    double d[] = {p->step, p->decay, p->power, p->l2_rows > 0 ? 0.0 : p->l2, p->holdout, p->l1, p->quantile,
                  p->factor_init, p->l2_rows};
    uint64_t u[] = {p->loss, p->epochs, p->schedule, p->seed, (uint64_t)p->bias, p->kernel, p->batch,
                    (uint64_t)p->normalized, p->early_stop, p->average, p->replicas, p->factors, p->field_aware};
    return hog_hash64(u, sizeof(u), hog_hash64(d, sizeof(d), 0x11c0ffeeull));
}

int hog_link_create(const hog_link_params *p, hog_link **out, char *err, size_t err_len)
{
    *out = NULL;
    if (hog_cpu_check(err, err_len) < 0)
        return HOG_ECPU;
    const char *field;
    if (hog_link_params_check(p, &field) < 0)
        return hog_fail(HOG_EPARAM, err, err_len, "invalid link parameter: hog_link_params.%s", field);
    hog_link *l = hog_calloc(1, sizeof(*l));
    if (!l)
        return -ENOMEM;
    l->p = *p;
    l->rank = (uint32_t)p->rank;
    l->nodes = (uint32_t)p->nodes;
    l->dead_first = l->nodes;
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->cond, NULL);
    const char *src[] = {p->coordinator, p->secret, p->bind_host, p->run_id};
    char **dst[] = {&l->coordinator, &l->secret_path, &l->bind_host, &l->run_id};
    for (unsigned i = 0; i < HOG_ARRAY_LEN(src); i++)
        if (src[i] && !(*dst[i] = hog_strdup(src[i]))) {
            hog_link_free(l);
            return -ENOMEM;
        }
    l->p.coordinator = l->coordinator;
    l->p.secret = l->secret_path;
    l->p.bind_host = l->bind_host;
    l->p.run_id = l->run_id;
    l->run = l->run_id ? hog_hash64(l->run_id, strlen(l->run_id), 0x72756eull) : 0;
    l->rng.state = hog_mix64(0xd509ull + l->rank);
    l->live = hog_calloc(l->nodes, sizeof(*l->live));
    l->last_seen = hog_calloc(l->nodes, sizeof(double));
    l->done = hog_calloc(l->nodes, 1);
    l->fenced = hog_calloc(l->nodes, 1);
    l->gather_live = hog_calloc(l->nodes, 1);
    l->parted = hog_calloc(l->nodes, 1);
    l->parts = hog_calloc(l->nodes, sizeof(float *));
    l->all = hog_calloc(l->nodes, sizeof(hog_link_stats));
    if (!l->live || !l->last_seen || !l->done || !l->fenced || !l->gather_live || !l->parted || !l->parts || !l->all) {
        hog_link_free(l);
        return -ENOMEM;
    }
    for (uint32_t r = 0; r < l->nodes; r++)
        atomic_init(&l->live[r], 1);
    l->st.rank = l->rank;
    l->st.nodes = l->nodes;
    if (l->nodes > 1) {
        int rc = hog_secret_load(l->secret_path, &l->key, err, err_len);
        if (rc < 0) {
            hog_link_free(l);
            return rc;
        }
    }
    *out = l;
    return 0;
}

static void close_sockets(hog_link *l)
{
    if (l->out)
        for (uint32_t r = 0; r < l->nodes; r++)
            if (l->out[r])
                zmq_close(l->out[r]);
    hog_free(l->out);
    l->out = NULL;
    if (l->watch.mon)
        zmq_close(l->watch.mon);
    l->watch.mon = NULL;
    if (l->inbox)
        zmq_close(l->inbox);
    if (l->ctl)
        zmq_close(l->ctl);
    l->inbox = l->ctl = NULL;
    hog_zap_stop(l->zap);
    l->zap = NULL;
    if (l->ctx)
        zmq_ctx_term(l->ctx);
    l->ctx = NULL;
}

void hog_link_halt(hog_link *l)
{
    if (!l->running)
        return;
    atomic_store(&l->quit, 1);
    pthread_join(l->thread, NULL);
    l->running = 0;
}

/* Closes and frees what a failed join opened: the link is as
 * hog_link_create made it (the coordinator's port free again, no ZAP
 * thread), and hog_link_join may try again. */
static void join_undo(hog_link *l)
{
    close_sockets(l);
    if (l->endpoints)
        for (uint32_t r = 0; r < l->nodes; r++)
            hog_free(l->endpoints[r]);
    hog_free(l->endpoints);
    hog_free(l->ids);
    l->endpoints = NULL;
    l->ids = NULL;
}

void hog_link_free(hog_link *l)
{
    if (!l)
        return;
    hog_link_halt(l);
    join_undo(l);
    hog_wire_free(&l->wire);
    hog_free(l->classes);
    hog_free(l->spans);
    hog_free(l->span_chunk0);
    hog_free(l->base);
    hog_free(l->acc_sum);
    hog_free(l->acc_cnt);
    hog_free(l->seq);
    hog_free(l->seq_from);
    hog_free(l->await);
    hog_free(l->await_since);
    hog_free(l->acked);
    hog_free(l->buf);
    hog_free((void *)l->live);
    hog_free(l->last_seen);
    hog_free(l->done);
    hog_free(l->fenced);
    hog_free(l->gather_live);
    hog_free(l->parted);
    if (l->parts)
        for (uint32_t r = 0; r < l->nodes; r++)
            hog_free(l->parts[r]);
    hog_free(l->parts);
    hog_free(l->all);
    for (unsigned i = 0; i < LINK_ROUNDS; i++) {
        hog_free(l->rounds[i].sum);
        hog_free(l->rounds[i].from);
    }
    hog_free(l->snap);
    hog_free(l->coordinator);
    hog_free(l->secret_path);
    hog_free(l->bind_host);
    hog_free(l->run_id);
    pthread_mutex_destroy(&l->lock);
    pthread_cond_destroy(&l->cond);
    memset(&l->key, 0, sizeof(l->key));
    hog_free(l);
}

/* ===================================================================== *
 *  Frames and sockets
 * ===================================================================== */
hog_frame hog_link_frame(const hog_link *l, hog_frame_type type, uint64_t seq)
{
    hog_frame f;
    memset(&f, 0, sizeof(f));
    f.type = type;
    f.version = HOG_NET_VERSION;
    f.rank = l->rank;
    f.run = l->run;
    f.seq = seq;
    return f;
}

int hog_link_try_data(hog_link *l, uint32_t to, const hog_frame *f)
{
    if (hog_frame_encode(f, &l->wire) < 0 || zmq_send(l->out[to], l->wire.buf, l->wire.len, ZMQ_DONTWAIT) < 0)
        return -1;
    l->st.bytes_sent += l->wire.len;
    return 0;
}

int hog_link_send_data(hog_link *l, uint32_t to, const hog_frame *f)
{
    if (hog_link_try_data(l, to, f) == 0)
        return 0;
    l->st.dropped++;
    return -1;
}

int hog_link_send_ctl(hog_link *l, uint32_t to, const hog_frame *f)
{
    int rc = hog_frame_encode(f, &l->wire);
    if (rc < 0)
        return rc;
    if (l->rank == 0 && zmq_send(l->ctl, l->ids[to].b, l->ids[to].len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
        return -errno;
    if (zmq_send(l->ctl, l->wire.buf, l->wire.len, ZMQ_DONTWAIT) < 0)
        return -errno;
    l->st.bytes_sent += l->wire.len;
    return 0;
}

void hog_link_set_failed(hog_link *l, const char *fmt, ...)
{
    if (atomic_load(&l->stop))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->fail, sizeof(l->fail), fmt, ap);
    va_end(ap);
    atomic_store(&l->stop, 1);
}

void hog_link_live_copy(const hog_link *l, unsigned char *out)
{
    for (uint32_t r = 0; r < l->nodes; r++)
        out[r] = atomic_load_explicit(&l->live[r], memory_order_relaxed);
}

/* Rank r masters the contiguous range of chunks c with c * nodes / nchunks
 * == r. A dead rank's chunks are dealt among the living (chunk c to the
 * (c mod living)-th), and only those change hands: a change on its way to
 * a master that changes hands may be lost, never counted twice. */
uint32_t hog_link_master(const hog_link *l, const unsigned char *live, uint32_t c)
{
    uint32_t first = (uint32_t)((uint64_t)c * l->nodes / HOG_MAX(l->nchunks, 1));
    if (live[first])
        return first;
    uint32_t k = 0;
    for (uint32_t r = 0; r < l->nodes; r++)
        k += live[r] != 0;
    uint32_t want = c % HOG_MAX(k, 1), seen = 0;
    for (uint32_t r = 0; r < l->nodes; r++)
        if (live[r] && seen++ == want)
            return r;
    return 0;
}

/* Options every socket of the link gets: no waiting at close for data,
 * ZeroMQ's own heartbeats on the connection. */
static int socket_options(hog_link *l, void *s, int linger_ms)
{
    /* Milliseconds, as ints: a timeout of weeks saturates. ZeroMQ keeps
     * the TTL in tenths of a second in 16 bits (6553.5 s at most) and
     * refuses a longer one. */
    int hb = (int)HOG_MIN((double)INT_MAX, HOG_MAX(100.0, 1000.0 * l->p.timeout / LINK_BEAT_FRACTION));
    int hbt = (int)HOG_MIN((double)INT_MAX, HOG_MAX(200.0, 1000.0 * l->p.timeout));
    int ttl = HOG_MIN(hbt, 6553500);
    int hwm = LINK_HWM;
    if (zmq_setsockopt(s, ZMQ_LINGER, &linger_ms, sizeof(int)) < 0 ||
        zmq_setsockopt(s, ZMQ_HEARTBEAT_IVL, &hb, sizeof(int)) < 0 ||
        zmq_setsockopt(s, ZMQ_HEARTBEAT_TIMEOUT, &hbt, sizeof(int)) < 0 ||
        zmq_setsockopt(s, ZMQ_HEARTBEAT_TTL, &ttl, sizeof(int)) < 0 ||
        zmq_setsockopt(s, ZMQ_SNDHWM, &hwm, sizeof(int)) < 0 || zmq_setsockopt(s, ZMQ_RCVHWM, &hwm, sizeof(int)) < 0)
        return -errno;
    return 0;
}

/* Splits "HOST:PORT" (HOST may be "[v6]") into host and port. */
static int split_hostport(const char *s, char *host, size_t hlen, char *port, size_t plen)
{
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s || !colon[1])
        return -1;
    size_t n = (size_t)(colon - s);
    if (s[0] == '[' && n >= 2 && s[n - 1] == ']') {
        s++;
        n -= 2;
    }
    if (n >= hlen || strlen(colon + 1) >= plen)
        return -1;
    memcpy(host, s, n);
    host[n] = 0;
    snprintf(port, plen, "%s", colon + 1);
    return 0;
}

/* The address this machine uses to reach host:port (a UDP socket is
 * "connected", which only picks the route; nothing is sent). */
static int route_address(const char *host, const char *port, char *out, size_t len, char *err, size_t err_len)
{
    struct addrinfo hints = {.ai_socktype = SOCK_DGRAM}, *ai;
    int g = getaddrinfo(host, port, &hints, &ai);
    if (g != 0)
        return hog_fail(HOG_ENET, err, err_len, "cannot resolve the coordinator's host %s: %s", host, gai_strerror(g));
    int rc = HOG_ENET;
    for (struct addrinfo *a = ai; a && rc < 0; a = a->ai_next) {
        int fd = socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
            getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
            char ip[INET6_ADDRSTRLEN];
            const void *src = ss.ss_family == AF_INET6 ? (const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr
                                                       : (const void *)&((struct sockaddr_in *)&ss)->sin_addr;
            if (inet_ntop(ss.ss_family, src, ip, sizeof(ip)))
                rc = snprintf(out, len, ss.ss_family == AF_INET6 ? "[%s]" : "%s", ip) < (int)len ? 0 : HOG_ENET;
        }
        if (fd >= 0)
            close(fd);
    }
    freeaddrinfo(ai);
    if (rc < 0)
        return hog_fail(rc, err, err_len, "no route to the coordinator %s:%s", host, port);
    return 0;
}

/* The inbox: bound on this rank's address, an ephemeral port; its endpoint
 * as the peers will reach it into ep. */
static int open_inbox(hog_link *l, const char *chost, const char *cport, char *ep, size_t eplen, char *err,
                      size_t err_len)
{
    char addr[300];
    int rc = 0;
    if (l->bind_host)
        snprintf(addr, sizeof(addr), "%s", l->bind_host);
    else if ((rc = route_address(chost, cport, addr, sizeof(addr), err, err_len)) < 0)
        return rc;
    l->inbox = zmq_socket(l->ctx, ZMQ_PULL);
    if (!l->inbox || socket_options(l, l->inbox, 0) < 0 || hog_secret_server(l->inbox, &l->key) < 0)
        return hog_fail(HOG_ENET, err, err_len, "cannot make the inbox socket: %s", zmq_strerror(errno));
    char bind_ep[320];
    snprintf(bind_ep, sizeof(bind_ep), "tcp://%s:*", addr);
    if (zmq_bind(l->inbox, bind_ep) < 0)
        return hog_fail(HOG_ENET, err, err_len, "rank %u cannot listen on %s: %s", l->rank, bind_ep,
                        zmq_strerror(errno));
    size_t n = eplen;
    if (zmq_getsockopt(l->inbox, ZMQ_LAST_ENDPOINT, ep, &n) < 0)
        return hog_fail(HOG_ENET, err, err_len, "cannot read the inbox's endpoint: %s", zmq_strerror(errno));
    return 0;
}

/* ===================================================================== *
 *  The rendezvous
 * ===================================================================== */
static char *dup_n(const char *s, size_t n)
{
    char *d = hog_malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

/* The classes of a HELLO, into the union u[0..*n). */
static int classes_merge(double *u, uint32_t *n, const hog_frame *f)
{
    for (uint32_t i = 0; i < f->nclasses; i++)
        if (hog_set_insert_f64(u, n, HOG_FRAME_MAX_CLASSES, hog_frame_f64(f->classes, i)) < 0)
            return -1;
    return 0;
}

/* A kind of model in words, for a refusal: "a linear model", "a
 * factorisation machine of 4 factors", "a field-aware factorisation
 * machine of 4 factors". */
static const char *kind_words(uint32_t factors, uint32_t fields, char *buf, size_t len)
{
    if (!factors)
        return "a linear model";
    snprintf(buf, len, "a %sfactorisation machine of %u factors", fields ? "field-aware " : "", factors);
    return buf;
}

/* Whether a HELLO from rank f->rank may join rank 0's run; why not into why. */
static int hello_admit(const hog_link *l, const hog_link_shape *mine, const hog_frame *f, const unsigned char *joined,
                       char *why, size_t len)
{
    if (f->version != HOG_NET_VERSION)
        snprintf(why, len, "protocol version %u, rank 0 speaks %u: run the same hogtrain on every node",
                 (unsigned)f->version, HOG_NET_VERSION);
    else if (f->run != l->run)
        snprintf(why, len, "run id differs from rank 0's (%s): a rank of another run",
                 l->run_id ? l->run_id : "none");
    else if (f->nodes != l->nodes)
        snprintf(why, len, "it expects %u ranks, rank 0 has %u", f->nodes, l->nodes);
    else if (f->rank == 0 || f->rank >= l->nodes)
        snprintf(why, len, "rank %u is outside 1..%u", f->rank, l->nodes - 1);
    else if (joined[f->rank])
        snprintf(why, len, "rank %u has already joined from another process", f->rank);
    else if (f->dim > LINK_MAX_DIM)
        snprintf(why, len, "%llu features: more than a data set can have (2^32, feature indices are 32-bit)",
                 (unsigned long long)f->dim);
    else if (f->factors != mine->factors || (f->fields > 0) != (mine->fields > 0)) {
        char a[80], b[80];
        snprintf(why, len, "it trains %s, rank 0 %s: every rank must train the same kind of model",
                 kind_words(f->factors, f->fields, a, sizeof(a)),
                 kind_words(mine->factors, mine->fields, b, sizeof(b)));
    } else if (f->params_fp != mine->params_fp)
        snprintf(why, len, "training parameters differ from rank 0's (fingerprint %016llx, rank 0 %016llx): every "
                 "rank must train with the same settings", (unsigned long long)f->params_fp,
                 (unsigned long long)mine->params_fp);
    else if (!l->p.shards && f->dim != mine->dim)
        snprintf(why, len, "model shape differs: %llu features, rank 0 has %llu (another training file?)",
                 (unsigned long long)f->dim, (unsigned long long)mine->dim);
    else if (!l->p.shards && f->fields != mine->fields)
        snprintf(why, len, "its training data has %u fields, rank 0's %u (another training file?)", f->fields,
                 mine->fields);
    else if (!l->p.shards && f->data_fp != mine->data_fp)
        snprintf(why, len, "training data differs from rank 0's (fingerprint %016llx, rank 0 %016llx): without "
                 "shards every rank reads the same file", (unsigned long long)f->data_fp,
                 (unsigned long long)mine->data_fp);
    else if (((f->flags & HOG_HELLO_SHARDS) != 0) != (l->p.shards != 0))
        snprintf(why, len, "%s shards, rank 0 %s", f->flags & HOG_HELLO_SHARDS ? "it uses" : "it does not use",
                 l->p.shards ? "does" : "does not");
    else
        return 1;
    return 0;
}

/* ---- The handshakes, watched while the ranks join ----
 *
 * A rank whose secret is not rank 0's never gets a frame through: CURVE
 * fails the handshake, and ZeroMQ reconnects every 100 ms, silently. Without
 * a look at the handshakes both sides would wait out the join timeout (two
 * minutes by default) and could only guess why. A socket monitor reports
 * each handshake as it ends, so a rank knows at once, and rank 0 can name
 * the address that tried.
 *
 * What each side sees of another key (libzmq 4.3): rank 0 cannot decrypt
 * the greeting, reports HANDSHAKE_FAILED_PROTOCOL (the event carries the
 * error, not the connection), then DISCONNECTED with the connection's
 * descriptor, whose peer it learned at ACCEPTED; the rank only sees the
 * connection closed mid-handshake (HANDSHAKE_FAILED_NO_DETAIL), again at
 * each reconnection. A ZAP refusal would be HANDSHAKE_FAILED_AUTH on both
 * sides. The monitor runs only while the ranks join: later connections
 * are the data sockets', whose keys the join has proved. */
#define LINK_MONITOR "inproc://hogtrain-control-monitor" /* one per context: the link's own */

static int watch_start(hog_link *l)
{
    link_watch *w = &l->watch;
    memset(w, 0, sizeof(*w));
    for (unsigned i = 0; i < LINK_WATCH_CONNECTIONS; i++)
        w->fd[i] = -1;
    const int failures =
        ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
    const int events = failures | (l->rank == 0 ? ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED
                                                : ZMQ_EVENT_HANDSHAKE_SUCCEEDED);
    const int linger = 0;
    if (zmq_socket_monitor(l->ctl, LINK_MONITOR, events) < 0 || !(w->mon = zmq_socket(l->ctx, ZMQ_PAIR)) ||
        zmq_setsockopt(w->mon, ZMQ_LINGER, &linger, sizeof(linger)) < 0 || zmq_connect(w->mon, LINK_MONITOR) < 0)
        return -1;
    return 0;
}

static void watch_stop(hog_link *l)
{
    if (!l->watch.mon)
        return;
    (void)zmq_socket_monitor(l->ctl, NULL, 0);
    zmq_close(l->watch.mon);
    l->watch.mon = NULL;
}

/* Rank 0: what the peer of an accepted connection is, while it is open. */
static void watch_accepted(link_watch *w, int fd)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char ip[INET6_ADDRSTRLEN];
    unsigned i = w->next++ % LINK_WATCH_CONNECTIONS;
    w->fd[i] = -1;
    /* On loopback the connection may be gone already, or its descriptor
     * reused: the address is a hint, and is left out when not known. */
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0 || (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
        return;
    const int v6 = ss.ss_family == AF_INET6;
    const void *a = v6 ? (const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr
                       : (const void *)&((struct sockaddr_in *)&ss)->sin_addr;
    unsigned port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
    if (!inet_ntop(ss.ss_family, a, ip, sizeof(ip)))
        return;
    snprintf(w->addr[i], sizeof(w->addr[i]), v6 ? "[%s]:%u" : "%s:%u", ip, port);
    w->fd[i] = fd;
}

/* Rank 0: a connection closed; the one whose handshake failed, if one did. */
static void watch_closed(hog_link *l, int fd)
{
    link_watch *w = &l->watch;
    const char *addr = NULL;
    for (unsigned i = 0; i < LINK_WATCH_CONNECTIONS; i++)
        if (w->fd[i] == fd) {
            w->fd[i] = -1;
            addr = w->addr[i];
        }
    if (!w->pending)
        return;
    w->pending = 0;
    if (addr && !w->first[0])
        snprintf(w->first, sizeof(w->first), "%s", addr);
    /* Once: a rank with another key tries ten times a second. The peer is
     * known when this thread saw the connection before it closed, which a
     * loaded machine can deny one attempt; the rank tries a few times
     * before it gives up, so the warning waits for one that names it. */
    if (!w->warned && (addr || w->failed >= LINK_HANDSHAKE_CLOSES)) {
        w->warned = 1;
        hog_log(HOG_LOG_WARN, "rank 0: a connection%s%s failed the CURVE handshake: is that rank's "
                "hog_link_params.secret the same as rank 0's? Still waiting for the ranks to join",
                addr ? " from " : "", addr ? addr : "");
    }
}

/* Takes the monitor's events. Returns -1 when this rank (not rank 0) is
 * to give up: its handshakes with the coordinator fail. */
static int watch_read(hog_link *l)
{
    link_watch *w = &l->watch;
    for (;;) {
        zmq_msg_t ev, ep;
        zmq_msg_init(&ev);
        zmq_msg_init(&ep);
        if (zmq_msg_recv(&ev, w->mon, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&ev);
            return 0;
        }
        /* An event is two frames: 16 bits of event and 32 of value, in
         * this machine's order, then the endpoint. */
        int whole = zmq_msg_more(&ev) && zmq_msg_recv(&ep, w->mon, 0) >= 0 && zmq_msg_size(&ev) >= 6;
        uint16_t event = 0;
        uint32_t value = 0;
        if (whole) {
            memcpy(&event, zmq_msg_data(&ev), 2);
            memcpy(&value, (const char *)zmq_msg_data(&ev) + 2, 4);
        }
        zmq_msg_close(&ev);
        zmq_msg_close(&ep);
        if (!whole)
            continue;
        if (l->rank == 0) {
            if (event == ZMQ_EVENT_ACCEPTED)
                watch_accepted(w, (int)value);
            else if (event == ZMQ_EVENT_DISCONNECTED)
                watch_closed(l, (int)value);
            else {
                w->failed++;
                w->pending = 1;
            }
        } else if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
            w->failed = 0;
        } else if (++w->failed >= LINK_HANDSHAKE_CLOSES || event != ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) {
            return -1;
        }
    }
}

/* Receives one frame from s within the deadline into msg (multi-part: the
 * routing id first on a ROUTER), taking the handshakes' events meanwhile.
 * Returns 1, 0 on timeout, -1 when the link must stop, or -2 when this
 * rank's handshakes with the coordinator fail (watch_read). */
static int recv_until(hog_link *l, void *s, zmq_msg_t *id, zmq_msg_t *msg, double deadline)
{
    for (;;) {
        double left = deadline - hog_now();
        if (left <= 0 || atomic_load(&l->interrupted))
            return left <= 0 ? 0 : -1;
        zmq_pollitem_t it[2] = {{s, 0, ZMQ_POLLIN, 0}, {l->watch.mon, 0, ZMQ_POLLIN, 0}};
        if (zmq_poll(it, l->watch.mon ? 2 : 1, (long)HOG_MIN(left * 1000.0 + 1.0, 200.0)) < 0 && errno != EINTR)
            return -1;
        if (l->watch.mon && (it[1].revents & ZMQ_POLLIN) && watch_read(l) < 0)
            return -2;
        if (!(it[0].revents & ZMQ_POLLIN))
            continue;
        if (id && zmq_msg_recv(id, s, 0) < 0)
            continue;
        int more = 1;
        if (id) {
            size_t ml = sizeof(more);
            zmq_getsockopt(s, ZMQ_RCVMORE, &more, &ml);
            if (!more)
                continue;
        }
        if (zmq_msg_recv(msg, s, 0) < 0)
            continue;
        int extra = 0;
        size_t el = sizeof(extra);
        zmq_getsockopt(s, ZMQ_RCVMORE, &extra, &el);
        while (extra) { /* a frame of more parts than ours: drain and ignore it */
            zmq_msg_t junk;
            zmq_msg_init(&junk);
            zmq_msg_recv(&junk, s, 0);
            zmq_msg_close(&junk);
            zmq_getsockopt(s, ZMQ_RCVMORE, &extra, &el);
            l->st.bad++;
        }
        l->st.bytes_received += zmq_msg_size(msg);
        return 1;
    }
}

static int send_text(hog_link *l, zmq_msg_t *id, hog_frame_type type, const char *text)
{
    hog_frame f = hog_link_frame(l, type, 0);
    f.text = text;
    f.text_len = (uint32_t)HOG_MIN(strlen(text), HOG_FRAME_TEXT_MAX);
    if (hog_frame_encode(&f, &l->wire) < 0)
        return -1;
    zmq_send(l->ctl, zmq_msg_data(id), zmq_msg_size(id), ZMQ_SNDMORE | ZMQ_DONTWAIT);
    return zmq_send(l->ctl, l->wire.buf, l->wire.len, ZMQ_DONTWAIT) < 0 ? -1 : 0;
}

/* Rank 0: admits the others, then welcomes each with the agreed shape. */
static int join_coordinator(hog_link *l, hog_link_shape *shape, const char *my_ep, char *err, size_t err_len)
{
    const uint32_t nodes = l->nodes;
    unsigned char *joined = hog_calloc(nodes, 1);
    double *u = hog_malloc(HOG_FRAME_MAX_CLASSES * sizeof(double));
    l->ids = hog_calloc(nodes, sizeof(link_id));
    l->endpoints = hog_calloc(nodes, sizeof(char *));
    if (!joined || !u || !l->ids || !l->endpoints || !(l->endpoints[0] = hog_strdup(my_ep))) {
        hog_free(joined);
        hog_free(u);
        return -ENOMEM;
    }
    memcpy(u, shape->classes, shape->nclasses * sizeof(double));
    uint32_t nu = shape->nclasses, waiting = nodes - 1, fields = shape->fields;
    uint64_t dim = shape->dim, rows = shape->rows;
    double deadline = hog_now() + l->p.join_timeout;
    int rc = 0;
    zmq_msg_t id, msg;
    zmq_msg_init(&id);
    zmq_msg_init(&msg);
    while (waiting && rc == 0) {
        int got = recv_until(l, l->ctl, &id, &msg, deadline);
        if (got <= 0) {
            char missing[200] = "";
            for (uint32_t r = 1, k = 0; r < nodes && k < sizeof(missing) - 12; r++)
                if (!joined[r])
                    k += (uint32_t)snprintf(missing + k, sizeof(missing) - k, "%s%u", k ? ", " : "", r);
            const link_watch *w = &l->watch;
            char from[96] = "";
            if (w->first[0] && w->failed > 1)
                snprintf(from, sizeof(from), " (the first from %s)", w->first);
            else if (w->first[0])
                snprintf(from, sizeof(from), " from %s", w->first);
            if (got < 0)
                rc = hog_fail(HOG_ENET, err, err_len, "interrupted while the ranks joined");
            else if (w->failed)
                rc = hog_fail(HOG_ENET, err, err_len,
                              "rank%s %s did not join within %g s (hog_link_params.join_timeout), and %u "
                              "connection%s%s failed the CURVE handshake: is every rank's hog_link_params.secret "
                              "the same as rank 0's?", waiting > 1 ? "s" : "", missing, l->p.join_timeout, w->failed,
                              w->failed > 1 ? "s" : "", from);
            else
                rc = hog_fail(HOG_ENET, err, err_len,
                              "rank%s %s did not join within %g s (hog_link_params.join_timeout): are they "
                              "running, with the same secret and coordinator %s?", waiting > 1 ? "s" : "",
                              missing, l->p.join_timeout, l->coordinator);
            break;
        }
        hog_frame f;
        const char *why;
        int dec = hog_frame_decode(zmq_msg_data(&msg), zmq_msg_size(&msg), &f, &why);
        if (dec < 0 || f.type != HOG_FRAME_HELLO) { /* f and why: only what the decoding set */
            l->st.bad++;
            hog_log(HOG_LOG_WARN, "rank 0: a malformed greeting (%s) ignored",
                    dec < 0 ? why : "a well-formed frame, but not a HELLO");
            continue;
        }
        char reason[300];
        if (!hello_admit(l, shape, &f, joined, reason, sizeof(reason))) {
            char text[400];
            snprintf(text, sizeof(text), "refused by rank 0: %s", reason);
            hog_log(HOG_LOG_WARN, "rank 0: refused a rank claiming %u: %s", f.rank, reason);
            send_text(l, &id, HOG_FRAME_REFUSE, text);
            continue;
        }
        if (l->p.shards) { /* files of their own: the most features and fields, every file's rows */
            dim = HOG_MAX(dim, f.dim);
            fields = HOG_MAX(fields, f.fields);
            rows += f.rows;
        }
        if (classes_merge(u, &nu, &f) < 0) {
            rc = hog_fail(HOG_ELABEL, err, err_len, "the ranks have more than %u distinct labels together",
                          HOG_FRAME_MAX_CLASSES);
            break;
        }
        link_id *li = &l->ids[f.rank];
        li->len = HOG_MIN(zmq_msg_size(&id), sizeof(li->b));
        memcpy(li->b, zmq_msg_data(&id), li->len);
        if (!(l->endpoints[f.rank] = dup_n(f.endpoint, f.endpoint_len)))
            rc = -ENOMEM;
        joined[f.rank] = 1;
        waiting--;
        hog_log(HOG_LOG_INFO, "rank 0: rank %u joined from %s (%u to go)", f.rank, l->endpoints[f.rank], waiting);
    }
    zmq_msg_close(&id);
    zmq_msg_close(&msg);
    if (rc == 0) {
        hog_frame w = hog_link_frame(l, HOG_FRAME_WELCOME, 0);
        w.nodes = nodes;
        w.nclasses = nu;
        w.dim = dim;
        w.fields = fields;
        w.rows = rows;
        w.classes_f64 = u;
        w.endpoints_str = (const char *const *)l->endpoints;
        for (uint32_t r = 1; r < nodes && rc == 0; r++)
            if ((rc = hog_link_send_ctl(l, r, &w)) < 0)
                rc = hog_fail(HOG_ENET, err, err_len, "cannot welcome rank %u: %s", r, zmq_strerror(-rc));
    } else {
        for (uint32_t r = 1; r < nodes; r++)
            if (joined[r]) {
                hog_frame a = hog_link_frame(l, HOG_FRAME_ABORT, 0);
                a.text = "rank 0 gave up waiting for the other ranks";
                a.text_len = (uint32_t)strlen(a.text);
                hog_link_send_ctl(l, r, &a);
            }
    }
    if (rc == 0) {
        l->classes = shape->classes = u;
        shape->nclasses = nu;
        shape->dim = dim;
        shape->fields = fields;
        shape->rows = rows;
        u = NULL;
    }
    hog_free(u);
    hog_free(joined);
    return rc;
}

/* Ranks 1..: greets rank 0 and waits for its answer. */
static int join_peer(hog_link *l, hog_link_shape *shape, const char *my_ep, char *err, size_t err_len)
{
    hog_frame h = hog_link_frame(l, HOG_FRAME_HELLO, 0);
    h.nodes = l->nodes;
    h.nclasses = shape->nclasses;
    h.dim = shape->dim;
    h.params_fp = shape->params_fp;
    h.data_fp = shape->data_fp;
    h.factors = shape->factors;
    h.fields = shape->fields;
    h.rows = shape->rows;
    h.flags = l->p.shards ? HOG_HELLO_SHARDS : 0;
    h.classes_f64 = shape->classes;
    h.endpoint = my_ep;
    h.endpoint_len = (uint16_t)strlen(my_ep);
    int rc = hog_link_send_ctl(l, 0, &h);
    if (rc < 0 && rc != -EAGAIN)
        return hog_fail(HOG_ENET, err, err_len, "cannot greet the coordinator %s: %s", l->coordinator,
                        zmq_strerror(-rc));
    double deadline = hog_now() + l->p.join_timeout;
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    for (;;) {
        if (rc == -EAGAIN) /* not connected yet: ZeroMQ keeps trying; so do we */
            rc = hog_link_send_ctl(l, 0, &h);
        int got = recv_until(l, l->ctl, NULL, &msg, HOG_MIN(deadline, hog_now() + 0.2));
        if (got == -2) {
            /* The greeting queued on the socket can never be delivered:
             * closing it must not wait the linger out. */
            const int linger = 0;
            (void)zmq_setsockopt(l->ctl, ZMQ_LINGER, &linger, sizeof(linger));
            rc = hog_fail(HOG_ENET, err, err_len,
                          "rank %u failed authentication with the coordinator %s: is its hog_link_params.secret the "
                          "same as rank 0's?", l->rank, l->coordinator);
            break;
        }
        if (got < 0) {
            rc = hog_fail(HOG_ENET, err, err_len, "interrupted while joining");
            break;
        }
        if (got == 0) {
            if (hog_now() < deadline)
                continue;
            rc = hog_fail(HOG_ENET, err, err_len,
                          "no answer from the coordinator %s within %g s (hog_link_params.join_timeout): is rank 0 "
                          "running there, with the same secret?", l->coordinator, l->p.join_timeout);
            break;
        }
        hog_frame f;
        const char *why;
        if (hog_frame_decode(zmq_msg_data(&msg), zmq_msg_size(&msg), &f, &why) < 0 || f.rank != 0) {
            l->st.bad++;
            continue;
        }
        if (f.type == HOG_FRAME_REFUSE || f.type == HOG_FRAME_ABORT) {
            rc = hog_fail(HOG_ENET, err, err_len, "rank %u: %.*s", l->rank, (int)f.text_len, f.text);
            break;
        }
        if (f.type != HOG_FRAME_WELCOME || f.version != HOG_NET_VERSION || f.run != l->run || f.nodes != l->nodes ||
            f.dim > LINK_MAX_DIM) {
            l->st.bad++;
            continue;
        }
        double *u = hog_malloc(HOG_MAX(f.nclasses, 1) * sizeof(double));
        l->endpoints = hog_calloc(l->nodes, sizeof(char *));
        if (!u || !l->endpoints) {
            hog_free(u);
            rc = -ENOMEM;
            break;
        }
        for (uint32_t i = 0; i < f.nclasses; i++)
            u[i] = hog_frame_f64(f.classes, i);
        for (uint32_t r = 0; r < l->nodes; r++) {
            uint16_t n;
            const char *e = hog_frame_endpoint(&f, r, &n);
            if (!(l->endpoints[r] = dup_n(e, n)))
                rc = -ENOMEM;
        }
        if (rc < 0) {
            hog_free(u);
            break;
        }
        l->classes = shape->classes = u;
        shape->nclasses = f.nclasses;
        shape->dim = f.dim;
        shape->fields = f.fields;
        shape->rows = f.rows;
        break;
    }
    zmq_msg_close(&msg);
    return rc;
}

/* Opens the sockets and meets the others (hog_link_join). */
static int join_open(hog_link *l, hog_link_shape *shape, char *err, size_t err_len)
{
    char chost[256], cport[16];
    if (split_hostport(l->coordinator, chost, sizeof(chost), cport, sizeof(cport)) < 0)
        return hog_fail(HOG_EPARAM, err, err_len, "hog_link_params.coordinator %s is not HOST:PORT", l->coordinator);
    if (!(l->ctx = zmq_ctx_new()) || !(l->out = hog_calloc(l->nodes, sizeof(void *))))
        return -ENOMEM;
    int rc = hog_zap_start(l->ctx, &l->key, &l->zap, err, err_len);
    if (rc < 0)
        return rc;
    char ep[HOG_FRAME_ENDPOINT_MAX + 1];
    if ((rc = open_inbox(l, strcmp(chost, "*") ? chost : "127.0.0.1", cport, ep, sizeof(ep), err, err_len)) < 0)
        return rc;
    l->ctl = zmq_socket(l->ctx, l->rank == 0 ? ZMQ_ROUTER : ZMQ_DEALER);
    if (!l->ctl || socket_options(l, l->ctl, 2000) < 0 ||
        (l->rank == 0 ? hog_secret_server(l->ctl, &l->key) : hog_secret_client(l->ctl, &l->key)) < 0)
        return hog_fail(HOG_ENET, err, err_len, "cannot make the control socket: %s", zmq_strerror(errno));
    if (watch_start(l) < 0)
        return hog_fail(HOG_ENET, err, err_len, "cannot watch the control socket: %s", zmq_strerror(errno));
    char cep[300];
    if (l->rank == 0) {
        snprintf(cep, sizeof(cep), "tcp://%s:%s", l->bind_host ? l->bind_host : "*", cport);
        if (zmq_bind(l->ctl, cep) < 0)
            return hog_fail(HOG_ENET, err, err_len, "rank 0 cannot listen at the coordinator's address %s (%s): %s",
                            l->coordinator, cep, zmq_strerror(errno));
        rc = join_coordinator(l, shape, ep, err, err_len);
    } else {
        snprintf(cep, sizeof(cep), "tcp://%s", l->coordinator);
        if (zmq_connect(l->ctl, cep) < 0)
            return hog_fail(HOG_ENET, err, err_len, "cannot connect to the coordinator %s: %s", l->coordinator,
                            zmq_strerror(errno));
        rc = join_peer(l, shape, ep, err, err_len);
    }
    watch_stop(l);
    if (rc < 0)
        return rc;
    for (uint32_t r = 0; r < l->nodes; r++) {
        if (r == l->rank)
            continue;
        int one = 1;
        l->out[r] = zmq_socket(l->ctx, ZMQ_PUSH);
        if (!l->out[r] || socket_options(l, l->out[r], 0) < 0 || hog_secret_client(l->out[r], &l->key) < 0 ||
            zmq_setsockopt(l->out[r], ZMQ_IMMEDIATE, &one, sizeof(one)) < 0 || zmq_connect(l->out[r], l->endpoints[r]) < 0)
            return hog_fail(HOG_ENET, err, err_len, "cannot connect to rank %u at %s: %s", r, l->endpoints[r],
                            zmq_strerror(errno));
    }
    double now = hog_now();
    for (uint32_t r = 0; r < l->nodes; r++)
        l->last_seen[r] = now;
    hog_log(HOG_LOG_INFO, "rank %u of %u: inbox %s, coordinator %s%s", l->rank, l->nodes, ep, l->coordinator,
            l->rank == 0 ? " (here)" : "");
    return 0;
}


int hog_link_join(hog_link *l, hog_link_shape *shape, char *err, size_t err_len)
{
    if (l->nodes < 2)
        return 0;
    if (l->ctx)
        return hog_fail(HOG_EPARAM, err, err_len, "rank %u has joined its run already: a link serves one run",
                        l->rank);
    if (shape->nclasses > HOG_FRAME_MAX_CLASSES)
        return hog_fail(HOG_ELABEL, err, err_len, "rank %u has more than %u distinct labels", l->rank,
                        HOG_FRAME_MAX_CLASSES);
    int rc = join_open(l, shape, err, err_len);
    if (rc < 0)
        join_undo(l);
    return rc;
}

/* ===================================================================== *
 *  Spans and the thread
 * ===================================================================== */
int hog_link_spans(hog_link *l, const hog_link_span *spans, unsigned n)
{
    l->spans = hog_malloc(n * sizeof(*spans));
    l->span_chunk0 = hog_malloc((n + 1) * sizeof(uint32_t));
    if (!l->spans || !l->span_chunk0)
        return -ENOMEM;
    memcpy(l->spans, spans, n * sizeof(*spans));
    l->nspans = n;
    uint64_t chunks = 0, elems = 0;
    for (unsigned i = 0; i < n; i++) {
        l->span_chunk0[i] = (uint32_t)chunks;
        chunks += (spans[i].count + l->p.chunk - 1) / l->p.chunk;
        elems += spans[i].count;
    }
    if (chunks >= UINT32_MAX)
        return -ENOMEM;
    l->span_chunk0[n] = (uint32_t)chunks;
    l->nchunks = (uint32_t)chunks;
    l->nelems = elems;
    l->base = hog_malloc(HOG_MAX(elems, 1) * sizeof(float));
    l->seq = hog_calloc(HOG_MAX(chunks, 1), sizeof(uint32_t));
    l->seq_from = hog_calloc(HOG_MAX(chunks, 1), sizeof(uint32_t));
    l->await = hog_calloc(HOG_MAX(chunks, 1), sizeof(uint32_t));
    l->await_since = hog_calloc(HOG_MAX(chunks, 1), sizeof(double));
    l->acked = hog_calloc(HOG_MAX(chunks, 1) * (uint64_t)l->nodes, sizeof(uint32_t));
    l->buf = hog_malloc(l->p.chunk * sizeof(float));
    l->acc_sum = hog_calloc(HOG_MAX(elems, 1), sizeof(float));
    l->acc_cnt = hog_calloc(HOG_MAX(elems, 1), sizeof(uint16_t));
    if (!l->base || !l->seq || !l->seq_from || !l->await || !l->await_since || !l->acked || !l->buf || !l->acc_sum || !l->acc_cnt)
        return -ENOMEM;
    uint64_t k = 0; /* every rank starts from the same model: the base is it */
    for (unsigned i = 0; i < n; i++)
        for (uint64_t j = 0; j < spans[i].count; j++)
            l->base[k++] = atomic_load_explicit(&spans[i].w[j], memory_order_relaxed);
    return 0;
}

/* ===================================================================== *
 *  What the trainer asks
 * ===================================================================== */
int hog_link_owns_block(const hog_link *l, uint32_t b)
{
    if (l->nodes < 2 || l->p.shards)
        return 1;
    uint32_t owner = b % l->nodes;
    if (atomic_load_explicit(&l->live[owner], memory_order_relaxed))
        return owner == l->rank;
    uint32_t k = 0;
    for (uint32_t r = 0; r < l->nodes; r++)
        k += atomic_load_explicit(&l->live[r], memory_order_relaxed) != 0;
    uint32_t want = (b / l->nodes) % HOG_MAX(k, 1), seen = 0;
    for (uint32_t r = 0; r < l->nodes; r++)
        if (atomic_load_explicit(&l->live[r], memory_order_relaxed) && seen++ == want)
            return r == l->rank;
    return 0;
}

void hog_link_progress(hog_link *l, unsigned epoch, uint64_t examples, double seconds)
{
    atomic_store_explicit(&l->epoch, epoch, memory_order_relaxed);
    atomic_store_explicit(&l->examples, examples, memory_order_relaxed);
    pthread_mutex_lock(&l->lock);
    l->train_seconds = seconds;
    pthread_mutex_unlock(&l->lock);
}

const atomic_int *hog_link_stop_flag(const hog_link *l)
{
    return &l->stop;
}

/* Hands a request to the link thread and waits for its answer. */
static int link_ask(hog_link *l, link_request req, uint64_t key, char *err, size_t err_len)
{
    if (l->nodes < 2)
        return 0;
    pthread_mutex_lock(&l->lock);
    l->req = req;
    l->req_key = key;
    l->req_done = 0;
    l->req_rc = -1;
    while (!l->req_done && !l->exited)
        pthread_cond_wait(&l->cond, &l->lock);
    int rc = l->req_done ? l->req_rc : -1;
    l->req = LINK_REQ_NONE;
    pthread_mutex_unlock(&l->lock);
    if (rc < 0)
        return hog_fail(HOG_ENET, err, err_len, "%s", l->fail[0] ? l->fail : "the link failed");
    return 0;
}

int hog_link_epoch_end(hog_link *l, unsigned epoch, char *err, size_t err_len)
{
    if (l->p.sync != HOG_SYNC_AVERAGE)
        return hog_link_failed(l, err, err_len);
    return link_ask(l, LINK_REQ_ROUND, epoch + 1, err, err_len);
}

int hog_link_finish(hog_link *l, char *err, size_t err_len)
{
    int rc = link_ask(l, LINK_REQ_FINISH, 0, err, err_len);
    hog_link_halt(l);
    if (rc == 0 && l->nodes > 1)
        hog_log(HOG_LOG_INFO, "rank %u: the run is over: %u of %u ranks alive", l->rank, l->st.live, l->nodes);
    return rc;
}

int hog_link_failed(const hog_link *l, char *err, size_t err_len)
{
    if (!atomic_load(&l->stop))
        return 0;
    return hog_fail(HOG_ENET, err, err_len, "%s", l->fail[0] ? l->fail : "the link failed");
}

void hog_link_interrupt(hog_link *l)
{
    atomic_store(&l->interrupted, 1);
}

uint32_t hog_link_rank(const hog_link *l)
{
    return l->rank;
}

uint32_t hog_link_nodes(const hog_link *l)
{
    return l->nodes;
}

int hog_link_stats_get(const hog_link *l, uint32_t rank, hog_link_stats *out)
{
    if (rank == l->rank) {
        *out = l->st;
        return 0;
    }
    if (l->rank != 0 || rank >= l->nodes || l->running || !l->parted[rank])
        return HOG_EPARAM;
    *out = l->all[rank];
    return 0;
}

int hog_link_shards(const hog_link *l)
{
    return l->p.shards;
}

uint64_t hog_link_passes(const hog_link *l)
{
    return atomic_load_explicit(&l->passes, memory_order_acquire);
}

void hog_link_wait_pass(const hog_link *l, uint64_t seen)
{
    const struct timespec pause = {0, 100000}; /* a tenth of the link thread's millisecond */
    uint32_t peers = 0;
    for (uint32_t r = 0; r < l->nodes; r++)
        peers += r != l->rank && atomic_load_explicit(&l->live[r], memory_order_relaxed);
    double until = hog_now() + HOG_MIN(1.0, l->p.timeout / 10.0);
    while (peers && atomic_load_explicit(&l->passes, memory_order_acquire) == seen &&
           atomic_load_explicit(&l->serving, memory_order_acquire) && !atomic_load(&l->stop) && hog_now() < until)
        nanosleep(&pause, NULL);
}

void hog_link_pace(const hog_link *l, uint64_t *pass, unsigned *ahead)
{
    uint64_t now = hog_link_passes(l);
    if (now != *pass) {
        *pass = now;
        *ahead = 0;
    } else if (++*ahead >= HOG_LINK_AHEAD) {
        hog_link_wait_pass(l, now);
        *pass = hog_link_passes(l);
        *ahead = 0;
    }
}

int hog_link_paced(const hog_link *l)
{
    return l->nodes > 1 && l->p.sync == HOG_SYNC_ASYNC;
}
