/* test_net_secret.c: the secret file (made, loaded, refused when readable by others or malformed) and CURVE sockets that deliver only between holders of the same secret. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "net/net.h"
#include "test_scratch.h"

static void setup(void)
{
    scratch_make("secret");
}

TestSuite(net_secret, .init = setup, .fini = scratch_remove);

static char *in_dir(const char *name)
{
    static char path[4][128];
    static unsigned next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
    return p;
}

static mode_t mode_of(const char *path)
{
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "%s", path);
    return st.st_mode & 07777;
}

/* Writes text (len bytes) to path with mode 0600. */
static void write_secret(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(text, 1, len, f), len);
    fclose(f);
    cr_assert_eq(chmod(path, 0600), 0);
}

static void keygen(const char *path, hog_secret *s)
{
    char err[512] = "";
    cr_assert_eq(hog_secret_keygen(path, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_secret_load(path, s, err, sizeof(err)), 0, "%s", err);
}

/* ---- the file ---- */

Test(net_secret, keygen_writes_one_line_that_loads_back)
{
    const char *path = in_dir("key");
    char err[512] = "";
    cr_assert_eq(hog_secret_keygen(path, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(mode_of(path), 0600, "mode %o", mode_of(path));
    char text[128] = "";
    FILE *f = fopen(path, "r");
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    cr_assert_eq(n, 60u);
    cr_assert_eq(strncmp(text, "hogtrain-secret-v1 ", 19), 0, "%s", text);
    cr_assert_eq(text[59], '\n');

    hog_secret s;
    cr_assert_eq(hog_secret_load(path, &s, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(strlen(s.secret), 40u);
    cr_assert_eq(memcmp(s.secret, text + 19, 40), 0);
    char pub[41];
    cr_assert_eq(zmq_curve_public(pub, s.secret), 0);
    cr_assert_str_eq(s.public_, pub);

    /* A second key is another key. */
    hog_secret t;
    keygen(in_dir("key2"), &t);
    cr_assert_str_neq(t.secret, s.secret);
    cr_assert_str_neq(t.public_, s.public_);
}

Test(net_secret, keygen_is_0600_under_umask_0_and_over_a_0644_file)
{
    const char *path = in_dir("key");
    FILE *f = fopen(path, "w");
    fputs("old\n", f);
    fclose(f);
    cr_assert_eq(chmod(path, 0644), 0);
    umask(0); /* each test runs in its own process */
    hog_secret s;
    keygen(path, &s);
    cr_assert_eq(mode_of(path), 0600, "mode %o", mode_of(path));
    const char *fresh = in_dir("fresh");
    keygen(fresh, &s);
    cr_assert_eq(mode_of(fresh), 0600, "mode %o", mode_of(fresh));
}

Test(net_secret, keygen_refuses_a_fifo_and_names_a_missing_folder)
{
    char err[512] = "";
    const char *fifo = in_dir("fifo");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_eq(hog_secret_keygen(fifo, err, sizeof(err)), HOG_ENOTFILE);
    cr_assert(strstr(err, fifo), "%s", err);
    struct stat st;
    cr_assert_eq(lstat(fifo, &st), 0);
    cr_assert(S_ISFIFO(st.st_mode));

    const char *missing = in_dir("no/such/key");
    cr_assert_eq(hog_secret_keygen(missing, err, sizeof(err)), -ENOENT);
    cr_assert(strstr(err, missing), "%s", err);
}

Test(net_secret, a_file_others_may_read_is_refused)
{
    const char *path = in_dir("key");
    hog_secret s;
    keygen(path, &s);
    cr_assert_eq(chmod(path, 0644), 0);
    char err[512] = "", want[512];
    cr_assert_eq(hog_secret_load(path, &s, err, sizeof(err)), HOG_EPARAM);
    snprintf(want, sizeof(want), "%s: mode 0644 lets group or others read the secret; chmod 600 %s", path, path);
    cr_assert_str_eq(err, want);
    cr_assert_eq(s.secret[0], '\0', "a refused secret was handed out");

    cr_assert_eq(chmod(path, 0620), 0);
    cr_assert_eq(hog_secret_load(path, &s, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "mode 0620 lets group or others change the secret"), "%s", err);
}

Test(net_secret, a_symlink_to_a_private_file_is_followed)
{
    const char *path = in_dir("key"), *link = in_dir("link");
    hog_secret s, t;
    keygen(path, &s);
    cr_assert_eq(symlink("key", link), 0);
    char err[512] = "";
    cr_assert_eq(hog_secret_load(link, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(t.secret, s.secret);
}

Test(net_secret, what_is_not_a_regular_file_is_refused_without_waiting)
{
    char err[512] = "";
    hog_secret s;
    const char *fifo = in_dir("fifo");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_eq(hog_secret_load(fifo, &s, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "not a regular file"), "%s", err);
    cr_assert_eq(hog_secret_load(dir, &s, err, sizeof(err)), HOG_EPARAM);
    const char *missing = in_dir("missing");
    cr_assert_eq(hog_secret_load(missing, &s, err, sizeof(err)), -ENOENT);
    cr_assert(strstr(err, missing), "%s", err);
}

Test(net_secret, malformed_files_are_refused_at_their_byte)
{
    static const char good[] = "hogtrain-secret-v1 JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6\n";
    const char *path = in_dir("key");
    write_secret(path, good, 60);
    hog_secret s;
    char err[512] = "";
    cr_assert_eq(hog_secret_load(path, &s, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(s.secret, "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6");
    /* RFC 32's test key pair (the secret above and its public key). */
    cr_assert_str_eq(s.public_, "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7");

    char bad[80];
    const struct {
        const char *what;
        size_t len;        /* bytes of the good file kept */
        size_t at;         /* where patch goes */
        const char *patch; /* patch_len bytes */
        size_t patch_len;
        const char *want;
    } cases[] = {
        {"empty", 0, 0, "", 0, "byte 0: expected \"hogtrain-secret-v1 \""},
        {"short", 30, 0, "", 0, "byte 30: expected a Z85 character (40 of them make the key), found the end of the file"},
        {"bad prefix", 60, 9, "S", 1, "byte 9: expected \"hogtrain-secret-v1 \""},
        {"another version", 60, 17, "2", 1, "byte 17: expected \"hogtrain-secret-v1 \""},
        {"bad Z85 character", 60, 25, " ", 1, "byte 25: expected a Z85 character"},
        {"a NUL in the key", 60, 40, "", 1, "byte 40: expected a Z85 character"},
        /* "#" is a Z85 digit, but "#####" is 85^5 - 1 */
        {"a group above 2^32", 60, 24, "#####", 5, "byte 24: expected five Z85 characters worth less than 2^32"},
        {"missing newline", 59, 0, "", 0, "byte 59: expected a newline after the key, found the end of the file"},
        {"CRLF", 59, 59, "\r\n", 2, "byte 59: expected a newline after the key"},
        {"extra bytes", 60, 60, "x", 1, "byte 60: expected the end of the file after the key's line"},
        {"a second line", 60, 60, "\n", 1, "byte 60: expected the end of the file after the key's line"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memcpy(bad, good, cases[i].len);
        memcpy(bad + cases[i].at, cases[i].patch, cases[i].patch_len);
        size_t end = cases[i].at + cases[i].patch_len;
        write_secret(path, bad, end > cases[i].len ? end : cases[i].len);
        memset(&s, 'x', sizeof(s));
        err[0] = '\0';
        cr_assert_eq(hog_secret_load(path, &s, err, sizeof(err)), HOG_EFORMAT, "%s", cases[i].what);
        cr_assert(strstr(err, path) == err, "%s: %s", cases[i].what, err);
        cr_assert(strstr(err, cases[i].want), "%s: %s", cases[i].what, err);
        cr_assert_eq(s.secret[0], '\0', "%s", cases[i].what);
    }
}

/* ---- the sockets ---- */

/* A server: a PULL socket of its own context, with the ZAP handler, bound
 * to an ephemeral port of 127.0.0.1. */
typedef struct server {
    void *ctx, *pull;
    hog_zap *zap;
    char endpoint[256];
} server;

static void server_start(server *sv, const hog_secret *s)
{
    char err[512] = "";
    sv->ctx = zmq_ctx_new();
    cr_assert_not_null(sv->ctx);
    cr_assert_eq(hog_zap_start(sv->ctx, s, &sv->zap, err, sizeof(err)), 0, "%s", err);
    sv->pull = zmq_socket(sv->ctx, ZMQ_PULL);
    int linger = 0, timeout = 300;
    zmq_setsockopt(sv->pull, ZMQ_LINGER, &linger, sizeof(linger));
    zmq_setsockopt(sv->pull, ZMQ_RCVTIMEO, &timeout, sizeof(timeout));
    cr_assert_eq(hog_secret_server(sv->pull, s), 0);
    cr_assert_eq(zmq_bind(sv->pull, "tcp://127.0.0.1:*"), 0, "%s", zmq_strerror(zmq_errno()));
    size_t len = sizeof(sv->endpoint);
    cr_assert_eq(zmq_getsockopt(sv->pull, ZMQ_LAST_ENDPOINT, sv->endpoint, &len), 0);
}

static void server_stop(server *sv)
{
    zmq_close(sv->pull);
    hog_zap_stop(sv->zap);
    cr_assert_eq(zmq_ctx_term(sv->ctx), 0);
}

/* A PUSH socket of a context of its own, as another process would have. */
static void *client_new(void **ctx)
{
    *ctx = zmq_ctx_new();
    cr_assert_not_null(*ctx);
    void *push = zmq_socket(*ctx, ZMQ_PUSH);
    int linger = 0;
    zmq_setsockopt(push, ZMQ_LINGER, &linger, sizeof(linger));
    return push;
}

/* Connects and queues one message: it goes once a handshake succeeds. */
static void client_send(void *push, const char *endpoint)
{
    cr_assert_eq(zmq_connect(push, endpoint), 0);
    cr_assert_eq(zmq_send(push, "hello", 5, 0), 5);
}

static void client_end(void *ctx, void *push)
{
    zmq_close(push);
    cr_assert_eq(zmq_ctx_term(ctx), 0);
}

/* Receives on the server: the bytes, or -1 when nothing came in 300 ms. */
static int server_recv(server *sv, char *buf, size_t len)
{
    return zmq_recv(sv->pull, buf, len, 0);
}

Test(net_secret, a_holder_of_the_secret_delivers)
{
    hog_secret s;
    keygen(in_dir("key"), &s);
    server sv;
    server_start(&sv, &s);
    void *cctx, *push = client_new(&cctx);
    cr_assert_eq(hog_secret_client(push, &s), 0);
    client_send(push, sv.endpoint);
    int timeout = 10000;
    zmq_setsockopt(sv.pull, ZMQ_RCVTIMEO, &timeout, sizeof(timeout));
    char buf[16] = "";
    cr_assert_eq(server_recv(&sv, buf, sizeof(buf)), 5, "%s", zmq_strerror(zmq_errno()));
    cr_assert_eq(memcmp(buf, "hello", 5), 0);
    cr_assert_eq(hog_zap_refused(sv.zap), 0);
    client_end(cctx, push);
    server_stop(&sv);
}

/* A client holding another secret does not even know the server's public
 * key: its handshake fails and nothing is delivered. */
Test(net_secret, a_holder_of_another_secret_never_delivers)
{
    hog_secret s, other;
    keygen(in_dir("key"), &s);
    keygen(in_dir("other"), &other);
    server sv;
    server_start(&sv, &s);
    void *cctx, *push = client_new(&cctx);
    cr_assert_eq(hog_secret_client(push, &other), 0);
    client_send(push, sv.endpoint);
    char buf[16];
    cr_assert_eq(server_recv(&sv, buf, sizeof(buf)), -1);
    cr_assert_eq(zmq_errno(), EAGAIN);
    client_end(cctx, push);
    server_stop(&sv);
}

/* A client that knows the server's public key (which is no secret on the
 * wire) but holds a key pair of its own passes CURVE's handshake up to the
 * ZAP handler, which refuses it and counts it; nothing is delivered. */
Test(net_secret, a_client_with_its_own_key_pair_is_refused_by_zap_and_counted)
{
    hog_secret s, other;
    keygen(in_dir("key"), &s);
    keygen(in_dir("other"), &other);
    server sv;
    server_start(&sv, &s);
    /* The server's monitor tells when the handshake has failed: a bounded
     * wait on a socket, not a sleep. */
    cr_assert_eq(zmq_socket_monitor(sv.pull, "inproc://monitor", ZMQ_EVENT_HANDSHAKE_FAILED_AUTH), 0);
    void *mon = zmq_socket(sv.ctx, ZMQ_PAIR);
    int timeout = 10000, linger = 0;
    zmq_setsockopt(mon, ZMQ_RCVTIMEO, &timeout, sizeof(timeout));
    zmq_setsockopt(mon, ZMQ_LINGER, &linger, sizeof(linger));
    cr_assert_eq(zmq_connect(mon, "inproc://monitor"), 0);

    void *cctx, *push = client_new(&cctx);
    cr_assert_eq(zmq_setsockopt(push, ZMQ_CURVE_SERVERKEY, s.public_, 40), 0);
    cr_assert_eq(zmq_setsockopt(push, ZMQ_CURVE_PUBLICKEY, other.public_, 40), 0);
    cr_assert_eq(zmq_setsockopt(push, ZMQ_CURVE_SECRETKEY, other.secret, 40), 0);
    client_send(push, sv.endpoint);

    unsigned char event[6];
    cr_assert_eq(zmq_recv(mon, event, sizeof(event), 0), 6, "no handshake failure reported");
    uint16_t id;
    memcpy(&id, event, 2);
    cr_assert_eq(id, ZMQ_EVENT_HANDSHAKE_FAILED_AUTH);
    char addr[256];
    cr_assert_gt(zmq_recv(mon, addr, sizeof(addr), 0), 0);
    cr_assert_geq(hog_zap_refused(sv.zap), 1);
    char buf[16];
    cr_assert_eq(server_recv(&sv, buf, sizeof(buf)), -1);
    cr_assert_eq(zmq_errno(), EAGAIN);

    client_end(cctx, push);
    zmq_socket_monitor(sv.pull, NULL, 0);
    zmq_close(mon);
    server_stop(&sv);
}

Test(net_secret, a_plain_client_never_delivers)
{
    hog_secret s;
    keygen(in_dir("key"), &s);
    server sv;
    server_start(&sv, &s);
    void *cctx, *push = client_new(&cctx);
    client_send(push, sv.endpoint);
    char buf[16];
    cr_assert_eq(server_recv(&sv, buf, sizeof(buf)), -1);
    cr_assert_eq(zmq_errno(), EAGAIN);
    client_end(cctx, push);
    server_stop(&sv);
}

Test(net_secret, zap_handler_stops_at_once_and_serves_one_context)
{
    hog_secret s;
    keygen(in_dir("key"), &s);
    void *ctx = zmq_ctx_new();
    hog_zap *z = NULL, *second = (hog_zap *)1;
    char err[512] = "";
    cr_assert_eq(hog_zap_start(ctx, &s, &z, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_zap_start(ctx, &s, &second, err, sizeof(err)), -EADDRINUSE);
    cr_assert_null(second);
    cr_assert(strstr(err, "inproc://zeromq.zap.01"), "%s", err);
    cr_assert_eq(hog_zap_refused(z), 0);
    hog_zap_stop(z);
    hog_zap_stop(NULL);
    /* Once stopped, the endpoint is free for a new handler. */
    cr_assert_eq(hog_zap_start(ctx, &s, &z, err, sizeof(err)), 0, "%s", err);
    hog_zap_stop(z);
    cr_assert_eq(zmq_ctx_term(ctx), 0);
}
