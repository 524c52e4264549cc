/* net.h: the private interface of the link between machines: the wire format, its codec, the secret key, the launchers' environment and the link itself. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_NET_H
#define HOG_NET_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "hogtrain.h"

/*
 * The link in pieces:
 *   net_frame.c   the wire format: every frame's bytes, encoded and decoded
 *                 (decoding trusts nothing: a frame either decodes whole
 *                 and consistent or is refused with a reason)
 *   net_secret.c  the secret file (hogtrain keygen), the CURVE keys made
 *                 from it and the ZAP handler that admits only its holders
 *   net_launch.c  rank, size, coordinator and run id from the environment
 *                 of mpirun (Open MPI, MPICH/Hydra) and srun (Slurm)
 *   net_link.c    the sockets, the rendezvous at rank 0, the calls the
 *                 trainer makes (net_link.h: the state they share)
 *   net_link_thread.c  the link thread: chunks and changes, heartbeats and
 *                 failures, the gather
 *   net_link_rounds.c  synchronous averaging rounds
 *
 * The protocol version: a peer speaking another is refused at the
 * handshake. 3: HELLO and WELCOME carry the model's kind, the fields and
 * the rows, so that factorisation machines train across machines.
 */
#define HOG_NET_VERSION 3u

/* ===================================================================== *
 *  The wire format (net_frame.c)
 *
 *  Every message is one ZeroMQ frame: a 32-byte header, then a payload
 *  whose layout depends on the type. All integers are little-endian; a
 *  float is its IEEE-754 binary32 bits (f32) or binary64 bits (f64),
 *  little-endian; a "string" is a u16 length then that many bytes, no NUL.
 *
 *    offset size  header field
 *         0    4  magic: the bytes 'H' 'O' 'G' 'L'
 *         4    2  protocol version (HOG_NET_VERSION)
 *         6    1  type (HOG_FRAME_*)
 *         7    1  zero
 *         8    4  sender's rank
 *        12    4  payload length in bytes: the frame's length - 32
 *        16    8  run id (every rank of a run has the same)
 *        24    8  seq: a sequence number or a round key, per type
 *
 *  Payloads (offsets from the payload's start):
 *    HELLO    rank -> coordinator, control: asks to join.
 *               0 u32 nodes   4 u32 nclasses   8 u64 dim   16 u64 params
 *               fingerprint   24 u64 data fingerprint   32 u32 flags
 *               (HOG_HELLO_SHARDS)   36 u32 factors (a factorisation
 *               machine's; 0: linear)   40 u32 fields (a field-aware
 *               machine's, its data's; 0: not one)   44 u64 rows (its
 *               training data's)   52 f64 classes[nclasses], ascending
 *               then string endpoint (the rank's inbox, "tcp://HOST:PORT")
 *    WELCOME  coordinator -> rank: everyone has joined.
 *               0 u32 nodes   4 u32 nclasses   8 u64 dim (agreed)
 *               16 u32 fields (agreed)   20 u64 rows (the run's)
 *               28 f64 classes[nclasses] (the union, ascending)
 *               then nodes strings: every rank's endpoint, by rank
 *    REFUSE   coordinator -> rank: not admitted. text (the rest): why
 *    CHUNK    master -> peer, data: a chunk's current values; seq: the
 *               master's sequence number for the chunk
 *               0 u32 chunk id   4 u32 count   8 u32 ack: the seq of the
 *               newest DELTA from this peer folded into these values (0:
 *               none)   12 f32 values[count]
 *    DELTA    peer -> master, data: the peer's change to a chunk since it
 *               last synced it; seq: the CHUNK's it answers
 *               0 u32 chunk id   4 u32 count   8 f32 values[count]
 *    BEAT     any -> every peer, data: alive; seq: chunks it has sent so far
 *               0 u32 epoch (1-based, 0 before the first)   4 u32 flags
 *               (HOG_BEAT_DONE: this rank has finished its epochs;
 *               HOG_BEAT_FENCE: it sends no more chunks or changes, so
 *               every change it sent this peer has arrived before this
 *               beat: a ZeroMQ pipe keeps order)
 *               8 u64 examples trained so far
 *    DONE     rank -> coordinator, control: finished its epochs
 *               layout as BEAT
 *    GATHER   coordinator -> rank: send your part of the final model
 *               0 u32 nodes   4 u8 live[nodes] (1: alive; the mastering
 *               of chunks follows this set)
 *    PART     rank -> coordinator: its part of the final model
 *               0 f64 stats[HOG_PART_STATS] (see hog_frame_stats)
 *               then u64 count, then f32 values[count]: every element of
 *               the synced arrays: the values of the chunks it masters,
 *               every change folded in; zero for the others
 *    END      coordinator -> rank: the run is over.
 *               0 i32 status (0, or a hogtrain error code) then text
 *    ABORT    any -> any: stop now. text: why
 *    SUM      rank -> coordinator, synchronous averaging: seq: the round
 *               0 u64 count then f32 values[count]: the rank's model
 *    MEAN     coordinator -> rank: the round's average; layout as SUM
 *    TICK     coordinator -> rank: start averaging round seq; no payload
 *
 *  A text is the rest of the payload, with no length before it (not a
 *  "string"): at most HOG_FRAME_TEXT_MAX bytes of UTF-8, no NUL.
 * ===================================================================== */
#define HOG_FRAME_HEADER 32u
#define HOG_FRAME_MAGIC 0x4C474F48u /* "HOGL" read as a little-endian u32 */
#define HOG_FRAME_TEXT_MAX 1024u
#define HOG_FRAME_ENDPOINT_MAX 255u
#define HOG_FRAME_MAX_NODES 4096u
#define HOG_FRAME_MAX_CLASSES 65536u
#define HOG_FRAME_MAX_VALUES (1ull << 32) /* floats in one CHUNK, PART, SUM or MEAN */
#define HOG_HELLO_SHARDS 1u   /* HELLO flags: each rank trains on a file of its own */
#define HOG_BEAT_DONE 1u      /* BEAT and DONE flags: the rank has finished its epochs */
#define HOG_BEAT_FENCE 2u     /* BEAT flags: the rank has stopped sending chunks and changes */

typedef enum hog_frame_type {
    HOG_FRAME_HELLO = 1,
    HOG_FRAME_WELCOME = 2,
    HOG_FRAME_REFUSE = 3,
    HOG_FRAME_CHUNK = 4,
    HOG_FRAME_DELTA = 5,
    HOG_FRAME_BEAT = 6,
    HOG_FRAME_DONE = 7,
    HOG_FRAME_GATHER = 8,
    HOG_FRAME_PART = 9,
    HOG_FRAME_END = 10,
    HOG_FRAME_ABORT = 11,
    HOG_FRAME_SUM = 12,
    HOG_FRAME_MEAN = 13,
    HOG_FRAME_TICK = 14,
} hog_frame_type;

/* A PART's statistics, in this order (f64 each). */
typedef enum hog_part_stat {
    HOG_PART_EXAMPLES,        /* examples this rank trained */
    HOG_PART_SECONDS,         /* its training seconds */
    HOG_PART_CHUNKS_SENT,
    HOG_PART_CHUNKS_RECEIVED,
    HOG_PART_DELTAS_SENT,
    HOG_PART_DELTAS_RECEIVED,
    HOG_PART_DROPPED,         /* messages not sent: a full queue or the drop hook */
    HOG_PART_BAD,             /* frames received and refused */
    HOG_PART_STALE,           /* chunk values older than ones adopted, dropped */
    HOG_PART_BYTES_SENT,
    HOG_PART_BYTES_RECEIVED,
    HOG_PART_LINK_CPU,        /* the link thread's CPU seconds */
    HOG_PART_STALENESS_MEAN,  /* over changes taken in: master's seq - answered seq */
    HOG_PART_STALENESS_MAX,
    HOG_PART_STATS
} hog_part_stat;

/* A decoded frame. The pointers point into the buffer decoded, which must
 * outlive the frame; values and classes are little-endian bytes, read
 * with hog_frame_f32 and hog_frame_f64. For hog_frame_encode the caller
 * fills the same fields, with the host's floats in f32 and f64 instead. */
typedef struct hog_frame {
    hog_frame_type type;
    uint16_t version;
    uint32_t rank;
    uint64_t run;
    uint64_t seq;
    /* HELLO, WELCOME, GATHER */
    uint32_t nodes;
    uint32_t nclasses;
    uint64_t dim;
    uint64_t params_fp;
    uint64_t data_fp;
    uint32_t factors;                 /* HELLO */
    uint32_t fields;                  /* HELLO, WELCOME */
    uint64_t rows;                    /* HELLO, WELCOME */
    uint32_t flags;                   /* HELLO, BEAT, DONE */
    const unsigned char *classes;     /* decoded: nclasses f64 */
    const double *classes_f64;        /* to encode */
    const char *endpoint;             /* HELLO: not NUL-terminated */
    uint16_t endpoint_len;
    const unsigned char *endpoints;   /* WELCOME decoded: nodes strings, checked */
    const char *const *endpoints_str; /* WELCOME to encode: nodes NUL-terminated strings */
    const unsigned char *live;        /* GATHER: nodes bytes, each 0 or 1 */
    /* CHUNK, DELTA, PART, SUM, MEAN */
    uint32_t chunk;
    uint32_t ack;                     /* CHUNK */
    uint64_t count;
    const unsigned char *values;      /* decoded: count f32 */
    const float *f32;                 /* to encode */
    double stats[HOG_PART_STATS];     /* PART */
    /* BEAT, DONE */
    uint32_t epoch;
    uint64_t examples;
    /* END */
    int32_t status;
    /* REFUSE, END, ABORT */
    const char *text;                 /* not NUL-terminated */
    uint32_t text_len;
} hog_frame;

/* A growable byte buffer frames are encoded into. */
typedef struct hog_wire {
    unsigned char *buf;
    size_t len, cap;
} hog_wire;

/* Encodes f as one frame into w (replacing what w held). Returns 0, -ENOMEM,
 * or -EINVAL when f breaks the format's limits (too long a text or endpoint,
 * too many nodes, classes or values). */
int hog_frame_encode(const hog_frame *f, hog_wire *w);

void hog_wire_free(hog_wire *w);

/* Decodes the len bytes at buf into *f. Returns 0, or -EBADMSG with a
 * static reason in *why ("truncated header", "payload length 12 but the
 * frame has 8 bytes after the header", "unknown type 99", "class labels
 * not ascending"...): the magic, the type, every length and count, the
 * strings (no NUL, endpoints at most HOG_FRAME_ENDPOINT_MAX), the live
 * bytes (0 or 1) are checked; the version and the run id are left to the
 * caller, which knows what it expects. Never reads outside buf. */
int hog_frame_decode(const void *buf, size_t len, hog_frame *f, const char **why);

/* The i-th little-endian f32 or f64 at p. */
float hog_frame_f32(const unsigned char *p, uint64_t i);
double hog_frame_f64(const unsigned char *p, uint64_t i);

/* WELCOME: the i-th endpoint of a decoded frame (i < f->nodes), its length
 * in *len; not NUL-terminated. */
const char *hog_frame_endpoint(const hog_frame *f, uint32_t i, uint16_t *len);

/* A name for a frame type ("CHUNK"), or "unknown". */
const char *hog_frame_type_name(uint32_t type);

/* ===================================================================== *
 *  The secret (net_secret.c)
 *
 *  A secret file holds one line: "hogtrain-secret-v1 " and 40 Z85
 *  characters (a 32-byte CURVE secret key), then a newline. Every rank of
 *  a run reads the same key and derives the same key pair from it: every
 *  socket is a CURVE server or client with that pair, and the ZAP handler
 *  admits a client only when its public key is that pair's, so a peer
 *  without the file never completes a handshake and never has a byte
 *  delivered.
 * ===================================================================== */
typedef struct hog_secret {
    char secret[41]; /* Z85, NUL-terminated */
    char public_[41];
} hog_secret;

/* Loads the secret file at path. The file must be a regular file that only
 * its owner can read or write (no group or other permission bits):
 * otherwise HOG_EPARAM with a message naming the file and its mode. A file
 * that is not one well-formed line: HOG_EFORMAT naming the file and what
 * was expected. -errno when it cannot be opened. */
int hog_secret_load(const char *path, hog_secret *out, char *err, size_t err_len);

/* Sets a socket's CURVE options: as a server (accepting CURVE clients that
 * the ZAP handler admits) or as a client of a server holding s. Returns 0
 * or -errno from zmq_setsockopt. */
int hog_secret_server(void *sock, const hog_secret *s);
int hog_secret_client(void *sock, const hog_secret *s);

/* The ZAP handler of a ZeroMQ context: a thread answering the context's
 * authentication requests, admitting exactly the CURVE clients whose public
 * key is s's. Counts the refused ones. */
typedef struct hog_zap hog_zap;
int hog_zap_start(void *zctx, const hog_secret *s, hog_zap **out, char *err, size_t err_len);
uint64_t hog_zap_refused(const hog_zap *z);
/* Stops the thread; call before zmq_ctx_term. NULL is accepted. */
void hog_zap_stop(hog_zap *z);

/* ===================================================================== *
 *  The launchers' environment (net_launch.c): hog_link_params_from_env,
 *  over any environment
 * ===================================================================== */
/* As hog_link_params_from_env, reading names from env (NULL-terminated
 * "NAME=value" strings, like environ); a variable set empty counts as
 * unset. The launcher found first (Open MPI, MPICH/Hydra, Slurm) gives
 * rank and size, which it must both set, and the run id (Open MPI's or
 * Slurm's job, none from MPICH) unless HOGTRAIN_RUN_ID does. p is left as
 * it was on an error. The coordinator and run id it composes live in
 * static storage that the next call rewrites: not thread-safe. */
int hog_launch_detect(hog_link_params *p, char *const *env, char *err, size_t err_len);

/* The first host of a Slurm node list ("node[07-09,12],gpu1" -> "node07")
 * into buf. Returns 0, or HOG_EFORMAT for a list it cannot read (every item
 * is read) or a first host longer than len - 1 bytes. */
int hog_slurm_first_host(const char *list, char *buf, size_t len);

/* ===================================================================== *
 *  The link (net_link.c), used by the trainer
 * ===================================================================== */
/* A span of the arrays a run keeps in step across nodes: count floats at
 * w, merged by addition (weights, biases, sums of squared gradients, L1
 * state, factors) or by maximum (feature scales). Where several ranks
 * changed a hot element since its master last sent it, the master takes
 * the mean of their changes instead of the sum (see fold_chunk). */
typedef struct hog_link_span {
    _Atomic float *w;
    uint64_t count;
    int max;                  /* 1: merged by maximum */
    const unsigned char *hot; /* element e is hot when hot[e / hot_stride] is 1; NULL: none */
    uint64_t hot_stride;
} hog_link_span;

/* What a rank brings to the rendezvous, and what the run agrees on. */
typedef struct hog_link_shape {
    uint64_t dim;             /* features */
    uint64_t params_fp;       /* hog_link_params_fingerprint of the training parameters */
    uint64_t data_fp;         /* the training data's fingerprint */
    uint32_t factors;         /* a factorisation machine's factors a feature (0: a linear model) */
    uint32_t fields;          /* a field-aware machine's fields (its data's; 0: not one); agreed:
                                 the same on every rank, with shards the most any rank has */
    uint64_t rows;            /* the training data's rows; agreed: the run's, every rank's file
                                 counted once (with shards their sum, else the one file's) */
    double *classes;          /* ascending; the run's union after hog_link_join (owned by
                                 the link then: valid until hog_link_free) */
    uint32_t nclasses;
} hog_link_shape;

/* A fingerprint of the training parameters that every rank of a run must
 * share: those that change what a step does or what the model is (not
 * threads, binding or the progress callback). With l2_rows, l2 is left
 * out: it follows the rows, which the ranks agree on at the rendezvous. */
uint64_t hog_link_params_fingerprint(const hog_train_params *p);

/* Opens this rank's sockets and meets the others at the coordinator: every
 * rank sends its shape; rank 0 admits each rank whose version, run id,
 * kind of model, parameters and (unless shards) data fingerprint, features
 * and fields match its own, refuses the others with the reason (another
 * kind of model named as such: its factors, field-aware or not), and once
 * all have joined answers each with the agreed shape (the union of the
 * classes; with shards the most features and fields, and the sum of the
 * rows) and every rank's inbox; *shape becomes it.
 * Returns 0; HOG_ENET with the reason (refused, a peer gone, no answer
 * within hog_link_params.join_timeout); HOG_EPARAM once the link has
 * joined (a link serves one run). A failed join closes what it opened,
 * and may be tried again. */
int hog_link_join(hog_link *l, hog_link_shape *shape, char *err, size_t err_len);

/* The spans to keep in step: call once after joining and before
 * hog_link_start. Returns 0 or -ENOMEM. */
int hog_link_spans(hog_link *l, const hog_link_span *spans, unsigned n);

/* Starts the link thread (asynchronous: chunks and deltas; synchronous:
 * heartbeats, and averaging rounds on rank 0's ticks). Returns 0 or -errno. */
int hog_link_start(hog_link *l);

/* Whether block b of nblocks is this rank's to train in the coming epoch:
 * block b goes to rank b mod nodes while that rank lives, and a dead
 * rank's blocks are dealt among the living. With shards: every block. */
int hog_link_owns_block(const hog_link *l, uint32_t b);

/* Progress for the heartbeats and the statistics: epochs done, examples
 * trained, training seconds. Thread-safe. */
void hog_link_progress(hog_link *l, unsigned epoch, uint64_t examples, double seconds);

/* Set when the run must stop (hog_link_failed says why): the workers read
 * it once per segment. */
const atomic_int *hog_link_stop_flag(const hog_link *l);

/* After an epoch, synchronous averaging only: the models of all ranks are
 * averaged (a round through rank 0) and every span takes the mean.
 * Returns 0 or HOG_ENET. */
int hog_link_epoch_end(hog_link *l, unsigned epoch, char *err, size_t err_len);

/* This rank has finished its epochs: tells rank 0, keeps serving its chunks
 * until rank 0 gathers, then stops the link thread. On rank 0, once every
 * living rank is done, the spans hold the final model (each chunk from its
 * master plus every rank's unsynced change); the other ranks keep their
 * own view. Returns 0 or HOG_ENET (rank 0 gone, the run aborted). */
int hog_link_finish(hog_link *l, char *err, size_t err_len);

/* Bounded staleness. The link thread counts the chunks and changes it
 * takes in from the others. A worker that has trained HOG_LINK_AHEAD
 * segments while the count stood still waits for it to move
 * (hog_link_wait_pass), so that no rank runs far ahead of what it hears
 * from the others, and where training and the links share cores, the
 * links are not starved: summed changes made on stale views are what
 * makes asynchronous SGD diverge. */
#define HOG_LINK_AHEAD 4u
uint64_t hog_link_passes(const hog_link *l);
/* Whether the workers pace themselves on l: an asynchronous run of two
 * ranks or more (a synchronous one exchanges no chunks to hear). */
int hog_link_paced(const hog_link *l);
/* After a worker's segment (or block) of a paced run: waits for the link
 * thread's next pass (hog_link_wait_pass) once the worker has trained
 * HOG_LINK_AHEAD of them without one; *pass and *ahead are the worker's,
 * *pass from hog_link_passes and *ahead 0 at its start. */
void hog_link_pace(const hog_link *l, uint64_t *pass, unsigned *ahead);
/* Returns once the count has moved past seen, or after a beat interval
 * (hog_link_params.timeout / 10, at most 1 s) without it, or at once when
 * the run must stop, no peer is alive or the link thread is not running. */
void hog_link_wait_pass(const hog_link *l, uint64_t seen);

/* Whether each rank trains on a file of its own (hog_link_params.shards). */
int hog_link_shards(const hog_link *l);

/* Ends the link thread without finishing, for a run that fails: once it
 * returns, the spans are neither read nor written any more and may be
 * freed. Does nothing when the thread is not running. */
void hog_link_halt(hog_link *l);

/* Whether the run must stop (rank 0 gone or an ABORT received), and why. */
int hog_link_failed(const hog_link *l, char *err, size_t err_len);

#endif /* HOG_NET_H */
