/* race_net_link.c: a plain-C stress run of a multi-node training in one process (ranks as threads over loopback, asynchronous and averaged) for ThreadSanitizer: the link thread against the HOGWILD! workers and the trainer's requests. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <hogtrain.h>

#define RANKS 3

/* ZeroMQ is not built with ThreadSanitizer: its I/O threads hand messages
 * over through lock-free queues whose atomics TSan cannot see, so the
 * memcpy and malloc they call (intercepted) would read as races inside
 * libzmq. TSan is told to ignore what uninstrumented libraries do through
 * its interceptors; every access of hogtrain's own code is still checked.
 * The environment's TSAN_OPTIONS come after these. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "ignore_noninstrumented_modules=1";
}

static int passed, failed;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (cond) {                                                            \
            passed++;                                                          \
        } else {                                                               \
            failed++;                                                          \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);               \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
        }                                                                      \
    } while (0)

/* Seeded data: the label from a fixed linear rule over 8 of 64 features. */
static void write_data(const char *path, int rows, unsigned seed)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    srand(seed);
    for (int i = 0; i < rows; i++) {
        int idx[8];
        double val[8], s = 0;
        for (int k = 0; k < 8; k++) {
            idx[k] = 1 + 8 * k + rand() % 8;
            val[k] = rand() / (double)RAND_MAX * 2 - 1;
            s += sin(idx[k]) * val[k];
        }
        fprintf(f, "%d", s > 0 ? 1 : -1);
        for (int k = 0; k < 8; k++)
            fprintf(f, " %d:%.4f", idx[k], val[k]);
        fputc('\n', f);
    }
    fclose(f);
}

/* A TCP port on loopback for the coordinator, held by *fd until the run
 * is over: the socket is bound with SO_REUSEADDR and never listens, so
 * rank 0 can bind the port (ZeroMQ sets SO_REUSEADDR too), while no
 * ephemeral port (another rank's inbox) can be given it meanwhile. */
static int reserve_port(int *fd)
{
    int one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t n = sizeof(a);
    *fd = socket(AF_INET, SOCK_STREAM, 0);
    if (*fd < 0 || setsockopt(*fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(*fd, (struct sockaddr *)&a, sizeof(a)) < 0 || getsockname(*fd, (struct sockaddr *)&a, &n) < 0) {
        perror("a port for the coordinator");
        exit(1);
    }
    return ntohs(a.sin_port);
}

/* One rank: its own trainer and link over the shared data set. */
typedef struct rank_run {
    int rank;
    hog_sync sync;
    const char *coordinator, *secret, *model_path;
    const hog_dataset *ds;
    unsigned interrupt_at; /* non-zero: this rank interrupts the run after this epoch */
    hog_link *l;
    int rc;
    char err[512];
    hog_model *m;
    hog_link_stats st;
} rank_run;

static void on_epoch(void *ctx, const hog_epoch_stats *st, int done)
{
    rank_run *r = ctx;
    if (done && st->epoch == r->interrupt_at)
        hog_link_interrupt(r->l);
}

static void *rank_main(void *arg)
{
    rank_run *r = arg;
    hog_link_params lp = hog_link_params_default();
    lp.rank = r->rank;
    lp.nodes = RANKS;
    lp.coordinator = r->coordinator;
    lp.secret = r->secret;
    lp.bind_host = "127.0.0.1";
    lp.chunk = 16; /* several chunks per rank, so that every rank masters some */
    lp.join_timeout = 60.0;
    lp.sync = r->sync;
    lp.sync_seconds = r->sync == HOG_SYNC_AVERAGE ? 0.01 : 0.0;
    hog_train_params p = hog_train_params_default();
    p.threads = 2;
    p.bind = 0;
    p.epochs = 8;
    p.step = 0.3;
    p.normalized = 0;
    p.holdout = 0.1;
    p.progress = on_epoch;
    p.progress_ctx = r;
    hog_link *l = NULL;
    hog_trainer *t = NULL;
    r->rc = hog_link_create(&lp, &l, r->err, sizeof(r->err));
    r->l = l;
    if (r->rc == 0)
        r->rc = hog_trainer_create(&p, &t, r->err, sizeof(r->err));
    if (r->rc == 0)
        r->rc = hog_trainer_set_link(t, l);
    if (r->rc == 0)
        r->rc = hog_trainer_run(t, r->ds, NULL, &r->m, r->err, sizeof(r->err));
    if (r->rc == 0)
        hog_link_stats_get(l, (uint32_t)r->rank, &r->st);
    hog_trainer_free(t);
    hog_link_free(l);
    return NULL;
}

/* A run of RANKS ranks; with interrupt, rank 1 interrupts it after its
 * second epoch and every rank must end with HOG_ENET. */
static void run(const char *dir, const hog_dataset *ds, hog_sync sync, int interrupt)
{
    char key[128], coordinator[64], model[128];
    snprintf(key, sizeof(key), "%s/key", dir);
    snprintf(model, sizeof(model), "%s/m.hog", dir);
    char err[512] = "";
    int rc = hog_secret_keygen(key, err, sizeof(err));
    CHECK(rc == 0, "keygen %s: %s", key, err);
    if (rc < 0)
        return;
    int port_fd;
    snprintf(coordinator, sizeof(coordinator), "127.0.0.1:%d", reserve_port(&port_fd));
    const char *mode = interrupt ? "interrupted" : sync == HOG_SYNC_AVERAGE ? "average" : "async";
    rank_run r[RANKS];
    pthread_t th[RANKS];
    for (int i = 0; i < RANKS; i++) {
        r[i] = (rank_run){.rank = i, .sync = sync, .coordinator = coordinator, .secret = key, .ds = ds,
                          .interrupt_at = interrupt && i == 1 ? 2 : 0};
        if (pthread_create(&th[i], NULL, rank_main, &r[i]) != 0) {
            perror("pthread_create");
            exit(1);
        }
    }
    for (int i = 0; i < RANKS; i++)
        pthread_join(th[i], NULL);
    close(port_fd);
    uint64_t adopted = 0;
    for (int i = 0; i < RANKS; i++) {
        adopted += r[i].st.chunks_received;
        if (interrupt) {
            CHECK(r[i].rc == HOG_ENET && !r[i].m && strstr(r[i].err, "interrupted"), "%s, rank %d: %d %s", mode, i,
                  r[i].rc, r[i].err);
            hog_model_free(r[i].m);
            continue;
        }
        CHECK(r[i].rc == 0 && r[i].m, "%s, rank %d: %s", mode, i, r[i].err);
        if (!r[i].m)
            continue;
        hog_model_info in;
        hog_model_get_info(r[i].m, &in);
        CHECK(isfinite(in.train.loss), "%s, rank %d: training loss %g", mode, i, in.train.loss);
        /* The model is written only when every weight is finite. */
        CHECK(hog_model_save(r[i].m, model) == 0, "%s, rank %d: a model with a weight that is not finite", mode, i);
        if (i == 0)
            CHECK(in.test.accuracy > 0.8, "%s: rank 0's holdout accuracy %g", mode, in.test.accuracy);
        CHECK(r[i].st.live == RANKS, "%s, rank %d: %u of %d ranks alive at the end", mode, i, r[i].st.live, RANKS);
        printf("%s, rank %d: %llu examples, chunks %llu sent %llu received, changes %llu sent %llu received\n", mode,
               i, (unsigned long long)r[i].st.examples, (unsigned long long)r[i].st.chunks_sent,
               (unsigned long long)r[i].st.chunks_received, (unsigned long long)r[i].st.deltas_sent,
               (unsigned long long)r[i].st.deltas_received);
        hog_model_free(r[i].m);
    }
    if (sync == HOG_SYNC_ASYNC && !interrupt)
        CHECK(adopted > 0, "async: no rank adopted a chunk while the workers ran");
    unlink(model);
    unlink(key);
}

int main(void)
{
    char dir[] = "/tmp/hog-race-link-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char data[128], err[512] = "";
    snprintf(data, sizeof(data), "%s/d.svm", dir);
    write_data(data, 30000, 1);
    hog_read_params rp = hog_read_params_default();
    rp.rows_per_block = 1024; /* thirty blocks: ten for each rank */
    rp.threads = 1;
    hog_dataset *ds;
    int rc = hog_dataset_open(data, &rp, &ds, err, sizeof(err));
    CHECK(rc == 0, "open %s: %s", data, err);
    if (rc == 0) {
        run(dir, ds, HOG_SYNC_ASYNC, 0);
        run(dir, ds, HOG_SYNC_AVERAGE, 0);
        run(dir, ds, HOG_SYNC_ASYNC, 1);
        hog_dataset_close(ds);
    }
    unlink(data);
    rmdir(dir);
    printf("race_net_link: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
