/* net_secret.c: the secret file (hogtrain keygen), the CURVE keys every rank derives from it, and the ZAP handler that admits only their holders. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "net.h"
#include "../util/util.h"

/* ===================================================================== *
 *  The file
 * ===================================================================== */
#define SECRET_PREFIX "hogtrain-secret-v1 "
#define SECRET_PREFIX_LEN (sizeof(SECRET_PREFIX) - 1)
#define SECRET_Z85_LEN 40u
#define SECRET_FILE_LEN (SECRET_PREFIX_LEN + SECRET_Z85_LEN + 1)

static const char z85_digits[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

int hog_secret_keygen(const char *path, char *err, size_t err_len)
{
    char public_[41], secret[41];
    if (zmq_curve_keypair(public_, secret) != 0) {
        int rc = -zmq_errno();
        return hog_fail(rc, err, err_len, "%s: cannot make a CURVE key pair: %s (a ZeroMQ built without CURVE?)",
                        path, zmq_strerror(-rc));
    }
    char line[SECRET_FILE_LEN];
    memcpy(line, SECRET_PREFIX, SECRET_PREFIX_LEN);
    memcpy(line + SECRET_PREFIX_LEN, secret, SECRET_Z85_LEN);
    line[SECRET_FILE_LEN - 1] = '\n';
    explicit_bzero(secret, sizeof(secret));

    hog_atomic_file f;
    int rc = hog_atomic_open_private(&f, path);
    if (rc == 0) {
        rc = hog_atomic_write(&f, line, sizeof(line));
        if (rc < 0)
            hog_atomic_abort(&f);
        else
            rc = hog_atomic_commit(&f);
    }
    explicit_bzero(line, sizeof(line));
    if (rc < 0)
        return hog_fail(rc, err, err_len, "%s: cannot write the secret: %s", path, hog_strerror(rc));
    return 0;
}

/* The first byte of buf[0..len) that breaks the format, with what was
 * expected there; SIZE_MAX when the line is well formed. The 40 characters
 * are Z85 digits, and each group of five a value below 2^32 (which
 * zmq_z85_decode tells). */
static size_t secret_check(const unsigned char *buf, size_t len, const char **expected)
{
    for (size_t i = 0; i < SECRET_PREFIX_LEN; i++)
        if (i >= len || buf[i] != (unsigned char)SECRET_PREFIX[i]) {
            *expected = "\"" SECRET_PREFIX "\" (the first line of a file that hogtrain keygen makes)";
            return i;
        }
    for (size_t i = SECRET_PREFIX_LEN; i < SECRET_PREFIX_LEN + SECRET_Z85_LEN; i++)
        if (i >= len || buf[i] == 0 || !strchr(z85_digits, buf[i])) {
            *expected = "a Z85 character (40 of them make the key)";
            return i;
        }
    for (size_t g = SECRET_PREFIX_LEN; g < SECRET_PREFIX_LEN + SECRET_Z85_LEN; g += 5) {
        char group[6];
        uint8_t word[4];
        memcpy(group, buf + g, 5);
        group[5] = '\0';
        int ok = zmq_z85_decode(word, group) != NULL;
        explicit_bzero(group, sizeof(group));
        explicit_bzero(word, sizeof(word));
        if (!ok) {
            *expected = "five Z85 characters worth less than 2^32";
            return g;
        }
    }
    if (len < SECRET_FILE_LEN || buf[SECRET_FILE_LEN - 1] != '\n') {
        *expected = "a newline after the key";
        return SECRET_FILE_LEN - 1;
    }
    if (len > SECRET_FILE_LEN) {
        *expected = "the end of the file after the key's line";
        return SECRET_FILE_LEN;
    }
    return SIZE_MAX;
}

int hog_secret_load(const char *path, hog_secret *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof(*out));
    /* O_NONBLOCK: a FIFO must not hang the open until a writer comes. A
     * symbolic link is followed: a link to a shared key is legitimate, and
     * what is checked is the file it leads to, through the open descriptor. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        int rc = -errno;
        return hog_fail(rc, err, err_len, "%s: cannot open the secret: %s", path, hog_strerror(rc));
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int rc = -errno;
        close(fd);
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return hog_fail(HOG_EPARAM, err, err_len, "%s: not a regular file: a secret is a file that hogtrain keygen makes",
                        path);
    }
    if (st.st_mode & 077) {
        close(fd);
        return hog_fail(HOG_EPARAM, err, err_len, "%s: mode %04o lets group or others %s the secret; chmod 600 %s", path,
                        (unsigned)(st.st_mode & 07777), st.st_mode & 044 ? "read" : "change", path);
    }
    /* One byte more than a well-formed file holds tells a longer one. */
    unsigned char buf[SECRET_FILE_LEN + 1];
    size_t len = 0;
    while (len < sizeof(buf)) {
        ssize_t r = read(fd, buf + len, sizeof(buf) - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int rc = -errno;
            close(fd);
            explicit_bzero(buf, sizeof(buf));
            return hog_fail(rc, err, err_len, "%s: cannot read the secret: %s", path, hog_strerror(rc));
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    const char *expected = NULL;
    size_t at = secret_check(buf, len, &expected);
    if (at != SIZE_MAX) {
        explicit_bzero(buf, sizeof(buf));
        return hog_fail(HOG_EFORMAT, err, err_len, "%s: byte %zu: expected %s%s", path, at, expected,
                        at >= len ? ", found the end of the file" : "");
    }
    memcpy(out->secret, buf + SECRET_PREFIX_LEN, SECRET_Z85_LEN);
    explicit_bzero(buf, sizeof(buf));
    if (zmq_curve_public(out->public_, out->secret) != 0) {
        int rc = -zmq_errno();
        explicit_bzero(out, sizeof(*out));
        return hog_fail(rc, err, err_len, "%s: cannot derive the public key: %s (a ZeroMQ built without CURVE?)",
                        path, zmq_strerror(-rc));
    }
    return 0;
}

/* ===================================================================== *
 *  The sockets' options
 * ===================================================================== */
#define ZAP_DOMAIN "hogtrain"

static int set_opt(void *sock, int opt, const void *val, size_t len)
{
    return zmq_setsockopt(sock, opt, val, len) == 0 ? 0 : -zmq_errno();
}

int hog_secret_server(void *sock, const hog_secret *s)
{
    const int on = 1;
    int rc = set_opt(sock, ZMQ_CURVE_SERVER, &on, sizeof(on));
    if (rc == 0)
        rc = set_opt(sock, ZMQ_CURVE_SECRETKEY, s->secret, SECRET_Z85_LEN);
    if (rc == 0)
        rc = set_opt(sock, ZMQ_ZAP_DOMAIN, ZAP_DOMAIN, sizeof(ZAP_DOMAIN) - 1);
    return rc;
}

/* Every rank holds the same pair, so a client presents the server's own
 * public key as its own, and that is the key the ZAP handler admits. */
int hog_secret_client(void *sock, const hog_secret *s)
{
    int rc = set_opt(sock, ZMQ_CURVE_SERVERKEY, s->public_, SECRET_Z85_LEN);
    if (rc == 0)
        rc = set_opt(sock, ZMQ_CURVE_PUBLICKEY, s->public_, SECRET_Z85_LEN);
    if (rc == 0)
        rc = set_opt(sock, ZMQ_CURVE_SECRETKEY, s->secret, SECRET_Z85_LEN);
    return rc;
}

/* ===================================================================== *
 *  The ZAP handler (ZeroMQ RFC 27)
 *
 *  A context asks for every CURVE handshake a server socket of it takes:
 *  it sends a request to whatever REP socket is bound at
 *  "inproc://zeromq.zap.01" and waits for the answer. A request is the
 *  frames version ("1.0"), request id, domain, address, routing id,
 *  mechanism, then the mechanism's credentials (CURVE: the client's
 *  32-byte long-term public key, which the handshake has proved the client
 *  holds the secret of). The answer is version, the request id, a status
 *  code ("200" admits, "400" refuses), a status text, a user id and
 *  metadata (both empty here).
 * ===================================================================== */
#define ZAP_ENDPOINT "inproc://zeromq.zap.01"
#define ZAP_FRAMES 7 /* a CURVE request's */

struct hog_zap {
    void *rep;         /* the handler's socket, used by the thread only */
    void *stop_rx;     /* a PAIR the thread polls beside rep */
    void *stop_tx;     /* its other end, for hog_zap_stop */
    pthread_t thread;
    uint8_t key[32];   /* the public key admitted */
    _Atomic uint64_t refused;
};

/* zmq_msg_recv, again when a signal interrupted it. */
static int zap_recv(zmq_msg_t *m, void *sock)
{
    int rc;
    do
        rc = zmq_msg_recv(m, sock, 0);
    while (rc < 0 && zmq_errno() == EINTR);
    return rc;
}

static int zap_send(void *sock, const void *buf, size_t len, int more)
{
    int rc;
    do
        rc = zmq_send(sock, buf, len, more ? ZMQ_SNDMORE : 0);
    while (rc < 0 && zmq_errno() == EINTR);
    return rc;
}

static int frame_is(zmq_msg_t *m, const char *s)
{
    size_t n = strlen(s);
    return zmq_msg_size(m) == n && memcmp(zmq_msg_data(m), s, n) == 0;
}

/* Whether the 32 bytes at a and b are equal, in a time that does not say
 * where they differ. */
static int key_equal(const uint8_t *a, const uint8_t *b)
{
    unsigned diff = 0;
    for (int i = 0; i < 32; i++)
        diff |= (unsigned)(a[i] ^ b[i]);
    return diff == 0;
}

/* Reads one request whole and answers it. Returns 0, or -1 with
 * zmq_errno() set when the socket failed (ETERM: the context is ending). */
static int zap_answer(hog_zap *z)
{
    zmq_msg_t frames[ZAP_FRAMES], extra;
    int n = 0, more = 1, rc = 0, excess = 0;
    while (more) {
        /* Frames past CURVE's seven are read and dropped: the request is refused. */
        zmq_msg_t *m = n < ZAP_FRAMES ? &frames[n] : &extra;
        zmq_msg_init(m);
        if (zap_recv(m, z->rep) < 0) {
            zmq_msg_close(m);
            rc = -1;
            break;
        }
        more = zmq_msg_more(m);
        if (m == &extra) {
            zmq_msg_close(m);
            excess = 1;
        } else {
            n++;
        }
    }
    if (rc == 0 && n >= 2) {
        int admit = n == ZAP_FRAMES && !excess && frame_is(&frames[0], "1.0") && frame_is(&frames[5], "CURVE") &&
                    zmq_msg_size(&frames[6]) == sizeof(z->key) && key_equal(zmq_msg_data(&frames[6]), z->key);
        if (!admit)
            atomic_fetch_add_explicit(&z->refused, 1, memory_order_relaxed);
        const char *code = admit ? "200" : "400";
        const char *text = admit ? "OK" : "not a holder of the run's secret";
        if (zap_send(z->rep, "1.0", 3, 1) < 0 ||
            zap_send(z->rep, zmq_msg_data(&frames[1]), zmq_msg_size(&frames[1]), 1) < 0 ||
            zap_send(z->rep, code, 3, 1) < 0 || zap_send(z->rep, text, strlen(text), 1) < 0 ||
            zap_send(z->rep, "", 0, 1) < 0 || zap_send(z->rep, "", 0, 0) < 0)
            rc = -1;
    } else if (rc == 0) {
        /* Too short to carry a request id: nothing to answer to. A REP
         * socket must still answer before it can take the next request. */
        atomic_fetch_add_explicit(&z->refused, 1, memory_order_relaxed);
        if (zap_send(z->rep, "", 0, 0) < 0)
            rc = -1;
    }
    for (int i = 0; i < n; i++)
        zmq_msg_close(&frames[i]);
    return rc;
}

static void *zap_main(void *arg)
{
    hog_zap *z = arg;
    zmq_pollitem_t items[2] = {
        {.socket = z->rep, .events = ZMQ_POLLIN},
        {.socket = z->stop_rx, .events = ZMQ_POLLIN},
    };
    for (;;) {
        if (zmq_poll(items, 2, -1) < 0) {
            if (zmq_errno() == EINTR)
                continue;
            break; /* ETERM: the context is ending */
        }
        if (items[1].revents & ZMQ_POLLIN)
            break;
        if ((items[0].revents & ZMQ_POLLIN) && zap_answer(z) < 0 && zmq_errno() == ETERM)
            break;
    }
    return NULL;
}

static void zap_close(hog_zap *z)
{
    /* Closing a socket frees its endpoints later, in ZeroMQ's own thread;
     * unbinding frees an inproc one now, so that a new handler can start
     * in this context at once. */
    if (z->rep) {
        (void)zmq_unbind(z->rep, ZAP_ENDPOINT);
        zmq_close(z->rep);
    }
    if (z->stop_rx)
        zmq_close(z->stop_rx);
    if (z->stop_tx)
        zmq_close(z->stop_tx);
    explicit_bzero(z->key, sizeof(z->key));
    hog_free(z);
}

/* A new socket of zctx that never holds zmq_ctx_term up. */
static void *zap_socket(void *zctx, int type)
{
    void *s = zmq_socket(zctx, type);
    const int linger = 0;
    if (s && zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger)) != 0) {
        zmq_close(s);
        s = NULL;
    }
    return s;
}

int hog_zap_start(void *zctx, const hog_secret *s, hog_zap **out, char *err, size_t err_len)
{
    *out = NULL;
    hog_zap *z = hog_calloc(1, sizeof(*z));
    if (!z)
        return hog_fail(-ENOMEM, err, err_len, "the ZAP handler: out of memory");
    if (!zmq_z85_decode(z->key, s->public_)) {
        hog_free(z);
        return hog_fail(-EINVAL, err, err_len, "the ZAP handler: the public key is not 40 Z85 characters");
    }
    /* The stop signal's endpoint: a name no other handler of the process
     * has had (one freed may still be bound in ZeroMQ's thread). */
    static _Atomic uint64_t handlers;
    char stop[64];
    snprintf(stop, sizeof(stop), "inproc://hogtrain-zap-stop-%llu",
             (unsigned long long)atomic_fetch_add_explicit(&handlers, 1, memory_order_relaxed));
    const char *step = "a socket";
    int rc = 0;
    if (!(z->rep = zap_socket(zctx, ZMQ_REP)) || !(z->stop_rx = zap_socket(zctx, ZMQ_PAIR)) ||
        !(z->stop_tx = zap_socket(zctx, ZMQ_PAIR)))
        rc = -zmq_errno();
    if (rc == 0 && zmq_bind(z->rep, ZAP_ENDPOINT) != 0) {
        rc = -zmq_errno();
        step = rc == -EADDRINUSE ? "binding " ZAP_ENDPOINT " (another handler serves this context)"
                                 : "binding " ZAP_ENDPOINT;
    }
    if (rc == 0 && (zmq_bind(z->stop_rx, stop) != 0 || zmq_connect(z->stop_tx, stop) != 0)) {
        step = "its stop signal";
        rc = -zmq_errno();
    }
    if (rc == 0 && (rc = -pthread_create(&z->thread, NULL, zap_main, z)) != 0)
        step = "its thread";
    if (rc < 0) {
        zap_close(z);
        return hog_fail(rc, err, err_len, "the ZAP handler: %s: %s", step, zmq_strerror(-rc));
    }
    *out = z;
    return 0;
}

uint64_t hog_zap_refused(const hog_zap *z)
{
    return atomic_load_explicit(&z->refused, memory_order_relaxed);
}

void hog_zap_stop(hog_zap *z)
{
    if (!z)
        return;
    /* One empty message wakes the thread's poll; the send cannot block, a
     * PAIR's queue being empty. The thread's sockets are closed here once
     * it is gone, which the join orders after its last use of them. */
    (void)zap_send(z->stop_tx, "", 0, 0);
    pthread_join(z->thread, NULL);
    zap_close(z);
}
