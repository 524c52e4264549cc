/* net_link.h: the link's state, shared by its set-up and rendezvous (net_link.c) and its thread (net_link_thread.c, which hog_link_start starts). */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_NET_LINK_H
#define HOG_NET_LINK_H

#include <pthread.h>

#include "net.h"
#include "../util/util.h"

/* Seconds between heartbeats: a tenth of the timeout, at most a second. */
#define LINK_BEAT_FRACTION 10.0
/* Messages queued per peer before more are dropped (ZMQ_SNDHWM). */
#define LINK_HWM 16
/* Features a rank may bring: a feature index is a uint32_t (hog_row). */
#define LINK_MAX_DIM (1ull << 32)
/* Synchronous averaging rounds in flight at once on rank 0. */
#define LINK_ROUNDS 4
/* Seconds a peer waits (at most the timeout) for a master's values that
 * hold its change in flight; after that, it takes the change as lost (with
 * a connection: ZeroMQ loses nothing else) and adopts the values. A
 * change waits on a new connection's handshake, or on a master's full
 * queue, for milliseconds. */
#define LINK_ACK_PATIENCE 1.0

/* A ZeroMQ routing id of a rank's control socket, as rank 0's ROUTER saw it. */
typedef struct link_id {
    unsigned char b[256];
    size_t len;
} link_id;

/* Connections rank 0 remembers the address of while the ranks join (the
 * handshake failures name one; a failure comes with no address). */
#define LINK_WATCH_CONNECTIONS 16
/* Connections in a row that the coordinator closes during the CURVE
 * handshake before a rank takes its secret for another: a wrong key shows
 * on the client only so (rank 0 cannot decrypt its greeting, and closes),
 * and one close alone may be a coordinator that just ended. */
#define LINK_HANDSHAKE_CLOSES 3

/* The control socket's handshakes, watched while the ranks join. */
typedef struct link_watch {
    void *mon;              /* PAIR receiving the socket monitor's events, or NULL */
    uint32_t failed;        /* rank 0: handshakes failed; others: in a row, none succeeded */
    int pending;            /* rank 0: a failure waits for its DISCONNECTED to name the connection */
    int warned;             /* rank 0: the failed handshake was logged */
    int fd[LINK_WATCH_CONNECTIONS];   /* rank 0: accepted connections' descriptors (-1: free) */
    char addr[LINK_WATCH_CONNECTIONS][64]; /* and their peers' addresses */
    unsigned next;          /* the slot the next accepted connection takes */
    char first[64];         /* rank 0: the address of the first failed handshake ("": unknown) */
} link_watch;

/* An averaging round, on rank 0: the sums so far. */
typedef struct link_round {
    uint64_t key;           /* 0: free */
    double *sum;            /* nelems */
    unsigned char *from;    /* nodes: 1 when that rank has contributed */
} link_round;

/* Where a rank is in the end of the run. */
enum {
    LINK_TRAINING,  /* epochs running */
    LINK_DONE,      /* its epochs done (DONE sent), still serving its chunks */
    LINK_QUIET,     /* gathering: no chunks or changes sent or adopted; waiting
                       for every peer's fence, so no change is still on its way */
    LINK_PARTED,    /* its part sent to rank 0; waiting for END */
    LINK_OVER,
};

/* What the trainer's thread asks of the link thread, and its answer. */
typedef enum link_request {
    LINK_REQ_NONE,
    LINK_REQ_ROUND,   /* contribute to averaging round req_key and adopt its mean */
    LINK_REQ_FINISH,  /* this rank is done: DONE, then the gather, then END */
} link_request;

struct hog_link {
    hog_link_params p;      /* its strings point at the copies below */
    char *coordinator, *secret_path, *bind_host, *run_id;
    hog_secret key;
    uint64_t run;           /* the run id's hash: every frame carries it */
    uint32_t rank, nodes;

    /* sockets (the caller's thread until hog_link_start, then the link thread's) */
    void *ctx;
    hog_zap *zap;
    void *inbox;            /* PULL: chunks, changes and heartbeats from every peer */
    void **out;             /* nodes PUSH sockets to the peers' inboxes (NULL: self) */
    void *ctl;              /* rank 0: ROUTER at the coordinator; others: DEALER to it */
    link_id *ids;           /* rank 0: each rank's routing id */
    char **endpoints;       /* nodes inboxes */
    hog_wire wire;          /* encoding buffer of the thread using the sockets */
    link_watch watch;       /* ctl's handshakes while the ranks join */

    /* the agreed shape and the spans kept in step */
    double *classes;
    hog_link_span *spans;
    unsigned nspans;
    uint32_t *span_chunk0;  /* nspans + 1: each span's first chunk */
    uint32_t nchunks;
    uint64_t nelems;
    float *base;            /* per element: its value when this rank last synced it */
    float *acc_sum;         /* per element a master holds: the peers' changes received since
                               it last sent the chunk, and how many ranks made them */
    uint16_t *acc_cnt;
    uint32_t *seq;          /* per chunk: sent (a master) or adopted (a peer) sequence number */
    uint32_t *seq_from;     /* per chunk: the master whose seq was adopted */
    uint32_t *await;        /* a peer, per chunk: the seq of the CHUNK its change in flight
                               answered (0: none in flight) */
    double *await_since;    /* a peer, per chunk: when that change was sent */
    uint32_t *acked;        /* a master, per chunk and peer (c * nodes + r): the seq of the
                               newest DELTA received, so folded into what it sends next */
    float *buf;             /* a chunk's values, to send */
    uint32_t next_chunk;    /* the master's cycle */

    /* the peers */
    _Atomic unsigned char *live; /* nodes */
    double *last_seen;      /* nodes: when a message from it last arrived */
    uint32_t dead_first;    /* the first rank declared dead (nodes: none) */
    unsigned char *done;    /* rank 0: nodes, DONE received */
    unsigned char *fenced;  /* nodes: a FENCE beat received (the gather) */
    int phase;              /* the link thread's: LINK_TRAINING ... LINK_OVER */
    int flushing;           /* 1: handing in its last changes (flush_changes): no fence yet */

    /* the thread */
    pthread_t thread;
    int running;
    atomic_int stop;        /* the run failed: the trainer's workers stop when set */
    atomic_int quit;        /* the link thread is asked to end */
    atomic_ullong passes;   /* chunks and changes taken in (hog_link_passes) */
    atomic_int serving;     /* 1 while the link thread runs its loop */
    int exited;             /* under lock: the link thread has ended */
    atomic_int interrupted; /* hog_link_interrupt */
    atomic_uint epoch;
    atomic_ullong examples;
    double train_seconds;
    char fail[320];         /* why the run failed; written before stop is set */

    pthread_mutex_t lock;   /* the trainer's requests and their answers */
    pthread_cond_t cond;
    link_request req;
    uint64_t req_key;
    int req_done;           /* 1: answered */
    int req_rc;

    /* averaging rounds */
    link_round rounds[LINK_ROUNDS];
    float *snap;            /* a tick round's snapshot (nelems), or NULL */
    uint64_t snap_key;
    double next_tick;
    uint64_t ticks;

    /* the gather, on rank 0 */
    unsigned char *gather_live;
    unsigned char *parted;  /* nodes: PART received */
    float **parts;          /* nodes: their values */
    double gather_deadline;
    double end_deadline;    /* ranks 1..: END is due by then once the part is sent */

    hog_link_stats st;
    hog_link_stats *all;    /* rank 0: every rank's, from the PARTs */
    uint64_t staleness_n;
    double staleness_sum;
    hog_rng rng;            /* the drop hook */
    double tokens, last_refill;
};

/* ---- net_link.c, for the thread ---- */
/* Sends f to the peer's inbox without waiting: 0, or -1 counted as dropped. */
int hog_link_send_data(hog_link *l, uint32_t to, const hog_frame *f);
/* The same, counting nothing on failure (for a sender that tries again). */
int hog_link_try_data(hog_link *l, uint32_t to, const hog_frame *f);
/* Sends f over the control socket (rank 0: to rank `to`). Returns 0 or -errno. */
int hog_link_send_ctl(hog_link *l, uint32_t to, const hog_frame *f);
/* A frame of this link: header fields set, the rest zero. */
hog_frame hog_link_frame(const hog_link *l, hog_frame_type type, uint64_t seq);
/* Records why the run fails and sets stop (the first reason wins). */
void hog_link_set_failed(hog_link *l, const char *fmt, ...) HOG_PRINTF(2, 3);
/* The master of chunk c among the ranks live[] marks. */
uint32_t hog_link_master(const hog_link *l, const unsigned char *live, uint32_t c);
/* A snapshot of the live set. */
void hog_link_live_copy(const hog_link *l, unsigned char *out);


/* ---- net_link_rounds.c: synchronous averaging, and the trainer's requests ---- */
/* Whether the trainer waits on request req (a round: the one of key);
 * read under the lock. */
int hog_link_request_open(hog_link *l, link_request req, uint64_t key);
/* Answers the trainer's request with rc. */
void hog_link_answer(hog_link *l, int rc);
/* Rank 0 adds rank from's model (bytes of a SUM, or vals) to round key. */
void hog_link_round_add(hog_link *l, uint64_t key, uint32_t from, const unsigned char *bytes, const float *vals);
/* Rank 0: sends the mean of every round each living rank has joined. */
void hog_link_rounds_check(hog_link *l);
/* This rank's model into round key (tick: a snapshot kept, training goes on). */
void hog_link_round_contribute(hog_link *l, uint64_t key, int tick);
/* This rank takes round key's mean (bytes of a MEAN, or vals). */
void hog_link_round_mean(hog_link *l, uint64_t key, const unsigned char *bytes, const float *vals);

#endif /* HOG_NET_LINK_H */
