/* net_link_thread.c: the link thread: Dogwild!'s chunk exchange, heartbeats and failure detection, synchronous averaging rounds, and the final gather on rank 0. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "net_link.h"

/*
 * Dogwild! (Noel & Osindero, 2014), per chunk c of the synced arrays:
 *   - its master (hog_link_master) keeps sending its current values V with
 *     a rising sequence number;
 *   - a peer receiving them finds its own change since it last synced,
 *     d = w - base, adopts w = V + d, base = w, and sends d back;
 *   - the master folds the changes into its values before it sends the
 *     chunk again (fold_chunk).
 * Dogwild! adds every change, and so does hogtrain, but for the hot
 * elements (the bias, a feature in one row of a hundred: hog_link_span's
 * hot): where several ranks changed one since its master last sent it,
 * the master takes the mean of their changes (its own counting as one).
 * Each rank made hundreds of steps on such an element toward the same
 * optimum, and the sum overshoots by the number of ranks: with four ranks
 * it made logistic regression diverge. A rarely touched element (most of
 * a sparse model, a factorisation's rows) keeps every change whole. Inside
 * one machine the workers' private copies of hot features are averaged
 * the same way (hog_hot_sync's share).
 * A change is on its way while the master may send the chunk again
 * without it (a rank answers each CHUNK it receives, and the master sends
 * on): adopting those values would take the change out of the rank's own
 * view until they hold it, and its workers, seeing their steps undone,
 * would step the same way again, over and over (on the intercept, which
 * every row steps, four ranks on two busy cores swung it from -0.2 to -2
 * and the test logloss from 0.45 to 0.75). So each CHUNK tells its peer
 * the newest of that peer's DELTAs folded into it (ack), and a peer with
 * a change in flight keeps its values until a CHUNK acknowledges it.
 * The workers go on writing w meanwhile: an adoption races with their
 * writes exactly as HOGWILD!'s workers race with each other, and what a
 * lost message carries (a V, a d) is lost progress, never inconsistency.
 * Spans merged by maximum (feature scales) adopt max(V, w) and send w.
 */

/* The chunk at global index c: its span and its first element. */
static void chunk_where(const hog_link *l, uint32_t c, unsigned *span, uint64_t *off, uint32_t *count,
                        uint64_t *elem)
{
    unsigned i = 0;
    while (c >= l->span_chunk0[i + 1])
        i++;
    uint64_t e = 0;
    for (unsigned k = 0; k < i; k++)
        e += l->spans[k].count;
    *span = i;
    *off = (uint64_t)(c - l->span_chunk0[i]) * l->p.chunk;
    *count = (uint32_t)HOG_MIN((uint64_t)l->p.chunk, l->spans[i].count - *off);
    *elem = e + *off;
}

static int drop_hook(hog_link *l)
{
    return l->p.drop > 0 && (double)(hog_rng_next(&l->rng) >> 11) * 0x1p-53 < l->p.drop;
}

static uint32_t live_count(const hog_link *l)
{
    uint32_t k = 0;
    for (uint32_t r = 0; r < l->nodes; r++)
        k += atomic_load_explicit(&l->live[r], memory_order_relaxed) != 0;
    return k;
}

/* The master of chunk c among the ranks alive now. */
static uint32_t master_now(const hog_link *l, uint32_t c)
{
    unsigned char live[HOG_FRAME_MAX_NODES];
    hog_link_live_copy(l, live);
    return hog_link_master(l, live, c);
}

/* ===================================================================== *
 *  Chunks and changes
 * ===================================================================== */
/* A master folds the changes received for chunk c into its values: each
 * element moves by the sum of the changes made to it since the chunk was
 * last sent, its own (w - base) included, or for a hot element by their
 * mean. */
static void fold_chunk(hog_link *l, uint32_t c)
{
    unsigned si;
    uint64_t off, elem;
    uint32_t cnt;
    chunk_where(l, c, &si, &off, &cnt, &elem);
    if (l->spans[si].max) /* merged by maximum as they came */
        return;
    const hog_link_span *sp = &l->spans[si];
    _Atomic float *w = sp->w + off;
    const float *base = l->base + elem;
    float *sum = l->acc_sum + elem;
    uint16_t *n = l->acc_cnt + elem;
    for (uint32_t j = 0; j < cnt; j++) {
        if (!n[j])
            continue;
        float cur = atomic_load_explicit(&w[j], memory_order_relaxed), own = cur - base[j];
        int hot = sp->hot && sp->hot[(off + j) / sp->hot_stride];
        float k = hot ? (float)n[j] + (own != 0.0f) : 1.0f;
        atomic_store_explicit(&w[j], base[j] + (own + sum[j]) / k, memory_order_relaxed);
        sum[j] = 0.0f;
        n[j] = 0;
    }
}

/* The master sends its next chunk to every living peer while the rate's
 * budget allows. */
static void send_chunks(hog_link *l, double now)
{
    unsigned char live[HOG_FRAME_MAX_NODES];
    hog_link_live_copy(l, live);
    uint32_t peers = live_count(l) - 1;
    if (peers == 0 || l->nchunks == 0)
        return;
    double bytes = (HOG_FRAME_HEADER + 12.0 + 4.0 * l->p.chunk) * peers;
    l->tokens = HOG_MIN(l->tokens + l->p.rate * (now - l->last_refill), HOG_MAX(bytes, l->p.rate * 0.05));
    l->last_refill = now;
    for (uint32_t n = 0; n < l->nchunks && l->tokens >= bytes; n++) {
        uint32_t c = l->next_chunk;
        l->next_chunk = c + 1 < l->nchunks ? c + 1 : 0;
        if (hog_link_master(l, live, c) != l->rank)
            continue;
        fold_chunk(l, c);
        unsigned si;
        uint64_t off, elem;
        uint32_t cnt;
        chunk_where(l, c, &si, &off, &cnt, &elem);
        _Atomic float *w = l->spans[si].w + off;
        /* The base of a master is what it last sent: its own change is
         * what came after. */
        for (uint32_t j = 0; j < cnt; j++)
            l->base[elem + j] = l->buf[j] = atomic_load_explicit(&w[j], memory_order_relaxed);
        hog_frame f = hog_link_frame(l, HOG_FRAME_CHUNK, ++l->seq[c]);
        f.chunk = c;
        f.count = cnt;
        f.f32 = l->buf;
        for (uint32_t r = 0; r < l->nodes; r++) {
            if (!live[r] || r == l->rank)
                continue;
            f.ack = l->acked[(uint64_t)c * l->nodes + r];
            if (drop_hook(l))
                l->st.dropped++;
            else if (hog_link_send_data(l, r, &f) == 0)
                l->st.chunks_sent++;
        }
        l->tokens -= bytes;
    }
}

/* Where a CHUNK's or DELTA's chunk lies, as chunk_where; 0, or -1 (counted
 * bad) when the frame's count is not the chunk's. */
static int frame_chunk(hog_link *l, const hog_frame *f, unsigned *si, uint64_t *off, uint32_t *cnt, uint64_t *elem)
{
    chunk_where(l, f->chunk, si, off, cnt, elem);
    if (f->count == *cnt)
        return 0;
    l->st.bad++;
    return -1;
}

/* A peer adopts a master's chunk and answers with its change. */
static void on_chunk(hog_link *l, const hog_frame *f)
{
    uint32_t c = f->chunk;
    unsigned si;
    uint64_t off, elem;
    uint32_t cnt;
    if (frame_chunk(l, f, &si, &off, &cnt, &elem) < 0)
        return;
    if (l->phase >= LINK_QUIET) /* gathering: values are no longer adopted */
        return;
    if (l->seq_from[c] == f->rank && f->seq <= l->seq[c]) {
        l->st.stale++;
        return;
    }
    l->st.chunks_received++;
    atomic_fetch_add_explicit(&l->passes, 1, memory_order_release);
    /* Its last change to the chunk is still on its way to the master:
     * these values lack it, and adopting them would take it out of this
     * rank's view (see the top of this file). Kept as they are until the
     * master's values hold it, or for LINK_ACK_PATIENCE seconds (then the
     * change was lost with a connection, and is gone). */
    if (!l->spans[si].max && l->await[c] && l->seq_from[c] == f->rank && f->ack < l->await[c] &&
        hog_now() - l->await_since[c] < HOG_MIN(LINK_ACK_PATIENCE, l->p.timeout)) {
        l->seq[c] = (uint32_t)f->seq;
        return;
    }
    l->await[c] = 0;
    l->seq[c] = (uint32_t)f->seq;
    l->seq_from[c] = f->rank;
    _Atomic float *w = l->spans[si].w + off;
    float *base = l->base + elem;
    int any = 0;
    if (l->spans[si].max) {
        for (uint32_t j = 0; j < cnt; j++) {
            float v = hog_frame_f32(f->values, j), cur = atomic_load_explicit(&w[j], memory_order_relaxed);
            float nv = cur > v ? cur : v;
            any |= cur > v;
            atomic_store_explicit(&w[j], nv, memory_order_relaxed);
            base[j] = nv;
            l->buf[j] = cur;
        }
    } else {
        for (uint32_t j = 0; j < cnt; j++) {
            float v = hog_frame_f32(f->values, j), cur = atomic_load_explicit(&w[j], memory_order_relaxed);
            float d = cur - base[j], nv = v + d;
            any |= d != 0.0f;
            atomic_store_explicit(&w[j], nv, memory_order_relaxed);
            base[j] = nv;
            l->buf[j] = d;
        }
    }
    if (!any) /* nothing changed here since the last sync: nothing to say */
        return;
    hog_frame d = hog_link_frame(l, HOG_FRAME_DELTA, f->seq);
    d.chunk = c;
    d.count = cnt;
    d.f32 = l->buf;
    if (drop_hook(l)) { /* lost on the way, as a datagram may be: the change is gone */
        l->st.dropped++;
    } else if (hog_link_send_data(l, f->rank, &d) == 0) {
        l->st.deltas_sent++;
        if (!l->spans[si].max) {
            l->await[c] = (uint32_t)f->seq;
            l->await_since[c] = hog_now();
        }
    } else if (!l->spans[si].max) { /* never left: the change stays pending for the next sync */
        for (uint32_t j = 0; j < cnt; j++)
            base[j] -= l->buf[j];
    }
}

/* A master keeps a peer's change for the next fold (spans merged by
 * maximum take the larger values at once). A change for a chunk this rank
 * does not master (it came to a rank since declared dead... and dealt here)
 * is added to the values, and the base with it: the sender keeps the change
 * itself, so it is no part of this rank's own change and is never counted
 * twice. */
static void on_delta(hog_link *l, const hog_frame *f)
{
    uint32_t c = f->chunk;
    unsigned si;
    uint64_t off, elem;
    uint32_t cnt;
    if (frame_chunk(l, f, &si, &off, &cnt, &elem) < 0)
        return;
    _Atomic float *w = l->spans[si].w + off;
    if (l->spans[si].max) {
        for (uint32_t j = 0; j < cnt; j++) {
            float v = hog_frame_f32(f->values, j);
            if (v > atomic_load_explicit(&w[j], memory_order_relaxed))
                atomic_store_explicit(&w[j], v, memory_order_relaxed);
        }
    } else if (master_now(l, c) == l->rank) {
        uint32_t *ack = &l->acked[(uint64_t)c * l->nodes + f->rank];
        if (f->seq > *ack && f->seq <= l->seq[c]) /* folded into the next CHUNK */
            *ack = (uint32_t)f->seq;
        float *sum = l->acc_sum + elem;
        uint16_t *n = l->acc_cnt + elem;
        for (uint32_t j = 0; j < cnt; j++) {
            float d = hog_frame_f32(f->values, j);
            if (d != 0.0f && n[j] < UINT16_MAX) {
                sum[j] += d;
                n[j]++;
            }
        }
    } else {
        float *base = l->base + elem;
        for (uint32_t j = 0; j < cnt; j++) {
            float d = hog_frame_f32(f->values, j);
            atomic_store_explicit(&w[j], atomic_load_explicit(&w[j], memory_order_relaxed) + d,
                                  memory_order_relaxed);
            base[j] += d;
        }
    }
    l->st.deltas_received++;
    atomic_fetch_add_explicit(&l->passes, 1, memory_order_release);
    double stale = f->seq <= l->seq[c] ? (double)(l->seq[c] - f->seq) : 0.0;
    l->staleness_sum += stale;
    l->staleness_n++;
    if (stale > l->st.staleness_max)
        l->st.staleness_max = stale;
}

/* ===================================================================== *
 *  Liveness
 * ===================================================================== */
static void send_beats(hog_link *l)
{
    hog_frame b = hog_link_frame(l, HOG_FRAME_BEAT, l->st.chunks_sent);
    b.epoch = atomic_load_explicit(&l->epoch, memory_order_relaxed);
    b.examples = atomic_load_explicit(&l->examples, memory_order_relaxed);
    b.flags = (l->phase >= LINK_DONE ? HOG_BEAT_DONE : 0) |
              (l->phase >= LINK_QUIET && !l->flushing ? HOG_BEAT_FENCE : 0);
    for (uint32_t r = 0; r < l->nodes; r++)
        if (r != l->rank && atomic_load_explicit(&l->live[r], memory_order_relaxed))
            hog_link_send_data(l, r, &b);
}

/* Declares dead the peers silent for longer than the timeout. Returns 1
 * when the live set changed. */
static int check_peers(hog_link *l, double now)
{
    int changed = 0;
    for (uint32_t r = 0; r < l->nodes; r++) {
        if (r == l->rank || !atomic_load_explicit(&l->live[r], memory_order_relaxed) ||
            now - l->last_seen[r] <= l->p.timeout)
            continue;
        const char *ep = l->endpoints && l->endpoints[r] ? l->endpoints[r] : "?";
        if (r == 0) {
            hog_link_set_failed(l, "rank 0 (%s) sent nothing for %g s (hog_link_params.timeout): the run ends", ep,
                                l->p.timeout);
            continue;
        }
        atomic_store_explicit(&l->live[r], 0, memory_order_relaxed);
        if (l->dead_first == l->nodes)
            l->dead_first = r;
        changed = 1;
        hog_log(HOG_LOG_WARN, "rank %u: rank %u (%s) sent nothing for %g s: declared dead; the others take over its "
                "chunks and its data", l->rank, r, ep, l->p.timeout);
    }
    return changed;
}

/* ===================================================================== *
 *  The end of the run
 * ===================================================================== */
/* This rank's part of the final model: the values of the chunks it
 * masters in the gather's live set, every change received folded in (the
 * others' are zero: their masters send them). */
static void part_values(hog_link *l, const unsigned char *live, float *out)
{
    for (uint32_t c = 0; c < l->nchunks; c++) {
        unsigned si;
        uint64_t off, elem;
        uint32_t cnt;
        chunk_where(l, c, &si, &off, &cnt, &elem);
        int mine = hog_link_master(l, live, c) == l->rank;
        if (mine)
            fold_chunk(l, c);
        for (uint32_t j = 0; j < cnt; j++)
            out[elem + j] = mine ? atomic_load_explicit(&l->spans[si].w[off + j], memory_order_relaxed) : 0.0f;
    }
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void stats_final(hog_link *l)
{
    l->st.link_cpu = thread_cpu();
    l->st.live = live_count(l);
    l->st.dead_rank = l->dead_first;
    l->st.examples = atomic_load(&l->examples);
    pthread_mutex_lock(&l->lock);
    l->st.seconds = l->train_seconds;
    pthread_mutex_unlock(&l->lock);
    l->st.staleness_mean = l->staleness_n ? l->staleness_sum / (double)l->staleness_n : 0.0;
    l->st.refused_peers = l->zap ? hog_zap_refused(l->zap) : 0;
}

static void part_stats(const hog_link_stats *s, double *out)
{
    out[HOG_PART_EXAMPLES] = (double)s->examples;
    out[HOG_PART_SECONDS] = s->seconds;
    out[HOG_PART_CHUNKS_SENT] = (double)s->chunks_sent;
    out[HOG_PART_CHUNKS_RECEIVED] = (double)s->chunks_received;
    out[HOG_PART_DELTAS_SENT] = (double)s->deltas_sent;
    out[HOG_PART_DELTAS_RECEIVED] = (double)s->deltas_received;
    out[HOG_PART_DROPPED] = (double)s->dropped;
    out[HOG_PART_BAD] = (double)s->bad;
    out[HOG_PART_STALE] = (double)s->stale;
    out[HOG_PART_BYTES_SENT] = (double)s->bytes_sent;
    out[HOG_PART_BYTES_RECEIVED] = (double)s->bytes_received;
    out[HOG_PART_LINK_CPU] = s->link_cpu;
    out[HOG_PART_STALENESS_MEAN] = s->staleness_mean;
    out[HOG_PART_STALENESS_MAX] = s->staleness_max;
}

/* A count from a PART's f64: a peer's number is finite (decoded so) but
 * may be negative or past 2^64, which no conversion to uint64_t defines. */
static uint64_t part_count(double v)
{
    return v >= 0x1p64 ? UINT64_MAX : v > 0 ? (uint64_t)v : 0;
}

static hog_link_stats stats_of_part(uint32_t rank, uint32_t nodes, const double *in)
{
    hog_link_stats s = {.rank = rank, .nodes = nodes};
    s.examples = part_count(in[HOG_PART_EXAMPLES]);
    s.seconds = in[HOG_PART_SECONDS];
    s.chunks_sent = part_count(in[HOG_PART_CHUNKS_SENT]);
    s.chunks_received = part_count(in[HOG_PART_CHUNKS_RECEIVED]);
    s.deltas_sent = part_count(in[HOG_PART_DELTAS_SENT]);
    s.deltas_received = part_count(in[HOG_PART_DELTAS_RECEIVED]);
    s.dropped = part_count(in[HOG_PART_DROPPED]);
    s.bad = part_count(in[HOG_PART_BAD]);
    s.stale = part_count(in[HOG_PART_STALE]);
    s.bytes_sent = part_count(in[HOG_PART_BYTES_SENT]);
    s.bytes_received = part_count(in[HOG_PART_BYTES_RECEIVED]);
    s.link_cpu = in[HOG_PART_LINK_CPU];
    s.staleness_mean = in[HOG_PART_STALENESS_MEAN];
    s.staleness_max = in[HOG_PART_STALENESS_MAX];
    return s;
}

/* Rank 0, once every part is in: each chunk is its master's (a master
 * that died during the gather: rank 0's own view instead). */
static void gather_assemble(hog_link *l)
{
    const unsigned char *live = l->gather_live;
    for (uint32_t c = 0; c < l->nchunks; c++) {
        uint32_t m = hog_link_master(l, live, c);
        if (m == 0 || !l->parted[m]) {
            fold_chunk(l, c);
            continue;
        }
        unsigned si;
        uint64_t off, elem;
        uint32_t cnt;
        chunk_where(l, c, &si, &off, &cnt, &elem);
        for (uint32_t j = 0; j < cnt; j++)
            atomic_store_explicit(&l->spans[si].w[off + j], l->parts[m][elem + j], memory_order_relaxed);
    }
}

/* The gather's last round: with the live set settled, a rank stops
 * adopting and hands each master the change it has not sent yet, waiting
 * for room in the queue rather than dropping it (and taking in what
 * arrives meanwhile, so that two ranks flushing to each other never wait
 * on each other), then its fence beats follow on the same pipes: once a
 * master has every fence, it holds every change. */
static void drain(hog_link *l, void *s, int ctl);

static void flush_changes(hog_link *l)
{
    l->phase = LINK_QUIET;
    l->flushing = 1; /* beats carry no fence until every change is out */
    double until = hog_now() + l->p.timeout, next_beat = hog_now();
    for (uint32_t c = 0; c < l->nchunks; c++) {
        uint32_t m = hog_link_master(l, l->gather_live, c);
        if (m == l->rank || !atomic_load_explicit(&l->live[m], memory_order_relaxed))
            continue;
        unsigned si;
        uint64_t off, elem;
        uint32_t cnt;
        chunk_where(l, c, &si, &off, &cnt, &elem);
        int any = 0;
        for (uint32_t j = 0; j < cnt; j++) {
            float cur = atomic_load_explicit(&l->spans[si].w[off + j], memory_order_relaxed);
            l->buf[j] = l->spans[si].max ? cur : cur - l->base[elem + j];
            any |= l->spans[si].max ? cur > l->base[elem + j] : l->buf[j] != 0.0f;
        }
        if (!any)
            continue;
        hog_frame d = hog_link_frame(l, HOG_FRAME_DELTA, l->seq[c]);
        d.chunk = c;
        d.count = cnt;
        d.f32 = l->buf;
        int sent;
        while ((sent = hog_link_try_data(l, m, &d)) < 0 && hog_now() < until && !atomic_load(&l->stop) &&
               atomic_load_explicit(&l->live[m], memory_order_relaxed)) {
            zmq_pollitem_t it = {l->out[m], 0, ZMQ_POLLOUT, 0};
            zmq_poll(&it, 1, 1);
            drain(l, l->inbox, 0);
            double now = hog_now();
            if (now >= next_beat) { /* alive, still without a fence */
                send_beats(l);
                next_beat = now + HOG_MIN(1.0, l->p.timeout / LINK_BEAT_FRACTION);
                check_peers(l, now);
            }
        }
        if (sent < 0) { /* its master is gone: the change goes with it */
            l->st.dropped++;
            continue;
        }
        l->st.deltas_sent++;
        if (!l->spans[si].max)
            for (uint32_t j = 0; j < cnt; j++)
                l->base[elem + j] += l->buf[j];
    }
    l->flushing = 0;
    send_beats(l); /* the fence, at once */
}

/* Rank 0: when every living rank is done, asks for the parts. */
static void gather_begin(hog_link *l, double now)
{
    hog_link_live_copy(l, l->gather_live);
    hog_frame g = hog_link_frame(l, HOG_FRAME_GATHER, 0);
    g.nodes = l->nodes;
    g.live = l->gather_live;
    for (uint32_t r = 1; r < l->nodes; r++)
        if (l->gather_live[r])
            hog_link_send_ctl(l, r, &g);
    l->gather_deadline = now + l->p.timeout + l->p.join_timeout;
}

/* Rank 0: whether every part that can come has come. */
static int gather_complete(hog_link *l)
{
    for (uint32_t r = 1; r < l->nodes; r++)
        if (l->gather_live[r] && !l->parted[r] && atomic_load_explicit(&l->live[r], memory_order_relaxed))
            return 0;
    return 1;
}

static void send_end(hog_link *l, int32_t status, const char *text)
{
    hog_frame e = hog_link_frame(l, HOG_FRAME_END, 0);
    e.status = status;
    e.text = text;
    e.text_len = (uint32_t)strlen(text);
    for (uint32_t r = 1; r < l->nodes; r++)
        if (atomic_load_explicit(&l->live[r], memory_order_relaxed))
            hog_link_send_ctl(l, r, &e);
}

static void send_abort(hog_link *l, const char *why)
{
    hog_frame a = hog_link_frame(l, HOG_FRAME_ABORT, 0);
    a.text = why;
    a.text_len = (uint32_t)HOG_MIN(strlen(why), HOG_FRAME_TEXT_MAX);
    if (l->rank != 0) {
        hog_link_send_ctl(l, 0, &a);
        return;
    }
    for (uint32_t r = 1; r < l->nodes; r++)
        if (atomic_load_explicit(&l->live[r], memory_order_relaxed))
            hog_link_send_ctl(l, r, &a);
}

/* ===================================================================== *
 *  Receiving
 * ===================================================================== */
/* Decodes a frame of this run from a known rank, or counts it bad. On
 * rank 0's control socket (id: the routing id ZeroMQ gave the message)
 * the frame must come over the connection its rank joined with. */
static int frame_ok(hog_link *l, const zmq_msg_t *id, const zmq_msg_t *msg, hog_frame *f)
{
    const char *why;
    if (hog_frame_decode(zmq_msg_data((zmq_msg_t *)msg), zmq_msg_size((zmq_msg_t *)msg), f, &why) < 0 ||
        f->version != HOG_NET_VERSION || f->run != l->run || f->rank >= l->nodes || f->rank == l->rank) {
        l->st.bad++;
        return 0;
    }
    if ((f->type == HOG_FRAME_CHUNK || f->type == HOG_FRAME_DELTA) && (f->chunk >= l->nchunks || l->nchunks == 0)) {
        l->st.bad++;
        return 0;
    }
    if ((f->type == HOG_FRAME_PART || f->type == HOG_FRAME_SUM || f->type == HOG_FRAME_MEAN) &&
        f->count != l->nelems) {
        l->st.bad++;
        return 0;
    }
    if (id) {
        const link_id *li = &l->ids[f->rank];
        if (zmq_msg_size((zmq_msg_t *)id) != li->len || memcmp(zmq_msg_data((zmq_msg_t *)id), li->b, li->len)) {
            l->st.bad++;
            return 0;
        }
    }
    if (!atomic_load_explicit(&l->live[f->rank], memory_order_relaxed))
        return 0; /* a rank declared dead stays dead */
    l->last_seen[f->rank] = hog_now();
    return 1;
}

/* The control frames each side takes: rank 0 the ranks' DONE, PART and
 * SUM; the others rank 0's TICK, MEAN, GATHER and END; ABORT both. */
static int control_type_ok(const hog_link *l, hog_frame_type t)
{
    switch (t) {
    case HOG_FRAME_ABORT:
        return 1;
    case HOG_FRAME_DONE:
    case HOG_FRAME_PART:
    case HOG_FRAME_SUM:
        return l->rank == 0;
    case HOG_FRAME_TICK:
    case HOG_FRAME_MEAN:
    case HOG_FRAME_GATHER:
    case HOG_FRAME_END:
        return l->rank != 0;
    default:
        return 0;
    }
}

/* A round rank 0 may have started: an epoch's end (keys 1 to 2^32) or
 * one of the ticks it sent (2^32 + 1 on). */
static int round_key_ok(const hog_link *l, uint64_t key)
{
    return (key >= 1 && key <= (1ull << 32)) || (key > (1ull << 32) && key - (1ull << 32) <= l->ticks);
}

static void on_data(hog_link *l, const zmq_msg_t *msg)
{
    hog_frame f;
    if (!frame_ok(l, NULL, msg, &f))
        return;
    if (f.type == HOG_FRAME_CHUNK)
        on_chunk(l, &f);
    else if (f.type == HOG_FRAME_DELTA)
        on_delta(l, &f);
    else if (f.type == HOG_FRAME_BEAT)
        l->fenced[f.rank] |= (f.flags & HOG_BEAT_FENCE) != 0;
    else
        l->st.bad++;
}

static void on_control(hog_link *l, const zmq_msg_t *id, const zmq_msg_t *msg)
{
    hog_frame f;
    if (!frame_ok(l, l->rank == 0 ? id : NULL, msg, &f))
        return;
    if ((l->rank != 0 && f.rank != 0) || !control_type_ok(l, f.type) ||
        (f.type == HOG_FRAME_SUM && !round_key_ok(l, f.seq))) {
        l->st.bad++;
        return;
    }
    switch (f.type) {
    case HOG_FRAME_ABORT:
        if (l->rank == 0) {
            char why[HOG_FRAME_TEXT_MAX + 64];
            snprintf(why, sizeof(why), "rank %u ended the run: %.*s", f.rank, (int)f.text_len, f.text);
            send_abort(l, why);
        }
        hog_link_set_failed(l, "rank %u ended the run: %.*s", f.rank, (int)f.text_len, f.text);
        break;
    case HOG_FRAME_DONE:
        l->done[f.rank] = 1;
        break;
    case HOG_FRAME_PART:
        if (l->phase >= LINK_QUIET && !l->parted[f.rank]) {
            float *v = hog_malloc(HOG_MAX(f.count, 1) * sizeof(float));
            if (!v) {
                hog_link_set_failed(l, "rank 0: out of memory gathering the model");
                break;
            }
            for (uint64_t k = 0; k < f.count; k++)
                v[k] = hog_frame_f32(f.values, k);
            l->parts[f.rank] = v;
            l->parted[f.rank] = 1;
            l->all[f.rank] = stats_of_part(f.rank, l->nodes, f.stats);
        }
        break;
    case HOG_FRAME_SUM:
        hog_link_round_add(l, f.seq, f.rank, f.values, NULL);
        hog_link_rounds_check(l);
        break;
    case HOG_FRAME_MEAN:
        hog_link_round_mean(l, f.seq, f.values, NULL);
        break;
    case HOG_FRAME_TICK:
        if (l->phase < LINK_QUIET)
            hog_link_round_contribute(l, f.seq, 1);
        break;
    case HOG_FRAME_GATHER:
        if (l->phase == LINK_DONE && f.nodes == l->nodes) {
            memcpy(l->gather_live, f.live, l->nodes);
            flush_changes(l);
        }
        break;
    case HOG_FRAME_END:
        if (f.status != 0)
            hog_link_set_failed(l, "rank 0 ended the run: %.*s", (int)f.text_len, f.text);
        else if (l->phase < LINK_DONE)
            hog_link_set_failed(l, "rank 0 ended the run before rank %u had finished its epochs", l->rank);
        else if (hog_link_request_open(l, LINK_REQ_FINISH, 0))
            hog_link_answer(l, 0);
        l->phase = LINK_OVER;
        break;
    default:
        l->st.bad++;
    }
}

static void drain(hog_link *l, void *s, int ctl)
{
    for (int n = 0; n < 4096; n++) {
        zmq_msg_t id, msg;
        zmq_msg_init(&id);
        zmq_msg_init(&msg);
        int ok = 1;
        if (ctl && l->rank == 0 && zmq_msg_recv(&id, s, ZMQ_DONTWAIT) < 0)
            ok = 0;
        if (ok && zmq_msg_recv(&msg, s, ZMQ_DONTWAIT) < 0)
            ok = 0;
        if (ok) {
            int more = 0;
            size_t ml = sizeof(more);
            zmq_getsockopt(s, ZMQ_RCVMORE, &more, &ml);
            l->st.bytes_received += zmq_msg_size(&msg);
            if (more) { /* more parts than a frame of ours has */
                l->st.bad++;
                while (more) {
                    zmq_msg_t junk;
                    zmq_msg_init(&junk);
                    zmq_msg_recv(&junk, s, 0);
                    zmq_msg_close(&junk);
                    zmq_getsockopt(s, ZMQ_RCVMORE, &more, &ml);
                }
            } else if (ctl) {
                on_control(l, &id, &msg);
            } else {
                on_data(l, &msg);
            }
        }
        zmq_msg_close(&id);
        zmq_msg_close(&msg);
        if (!ok)
            return;
    }
}

/* ===================================================================== *
 *  The thread
 * ===================================================================== */
/* Takes up the trainer's request, once. */
static void take_request(hog_link *l, uint64_t *taken)
{
    pthread_mutex_lock(&l->lock);
    link_request req = l->req_done ? LINK_REQ_NONE : l->req;
    uint64_t key = l->req_key;
    pthread_mutex_unlock(&l->lock);
    if (req == LINK_REQ_NONE || (req == LINK_REQ_ROUND && *taken == key + 1) ||
        (req == LINK_REQ_FINISH && l->phase != LINK_TRAINING))
        return;
    if (req == LINK_REQ_ROUND) {
        *taken = key + 1;
        hog_link_round_contribute(l, key, 0);
        return;
    }
    l->phase = LINK_DONE;
    if (l->rank == 0) {
        l->done[0] = 1;
        return;
    }
    hog_frame d = hog_link_frame(l, HOG_FRAME_DONE, 0);
    d.epoch = atomic_load(&l->epoch);
    d.examples = atomic_load(&l->examples);
    d.flags = HOG_BEAT_DONE;
    int rc = hog_link_send_ctl(l, 0, &d);
    if (rc < 0)
        hog_link_set_failed(l, "rank %u: cannot tell rank 0 it is done: %s", l->rank, zmq_strerror(-rc));
}

/* Whether every living peer's fence has come: no change of theirs is
 * still on its way here. */
static int fences_in(const hog_link *l)
{
    for (uint32_t r = 0; r < l->nodes; r++)
        if (r != l->rank && !l->fenced[r] && atomic_load_explicit(&l->live[r], memory_order_relaxed))
            return 0;
    return 1;
}

/* A rank other than 0, quiet and fenced: its part of the final model. */
static void send_part(hog_link *l)
{
    float *v = hog_malloc(HOG_MAX(l->nelems, 1) * sizeof(float));
    if (!v) {
        hog_link_set_failed(l, "rank %u: out of memory for its part of the model", l->rank);
        return;
    }
    part_values(l, l->gather_live, v);
    stats_final(l);
    hog_frame p = hog_link_frame(l, HOG_FRAME_PART, 0);
    part_stats(&l->st, p.stats);
    p.count = l->nelems;
    p.f32 = v;
    int rc = hog_link_send_ctl(l, 0, &p);
    if (rc < 0)
        hog_link_set_failed(l, "rank %u: cannot send its part of the model to rank 0: %s", l->rank,
                            zmq_strerror(-rc));
    hog_free(v);
    l->phase = LINK_PARTED;
    /* Rank 0 sends END by its gather's deadline (timeout + join_timeout
     * after GATHER, which came before this part) plus the assembly, which
     * takes less than a timeout or this rank declares rank 0 gone. A rank
     * 0 that keeps beating but never ends the run is not waited on longer. */
    l->end_deadline = hog_now() + 2.0 * l->p.timeout + l->p.join_timeout;
}

/* Rank 0 at the end: the gather once all are done, END once it is in. */
static void coordinator_end(hog_link *l, double now)
{
    if (l->phase == LINK_DONE) {
        for (uint32_t r = 0; r < l->nodes; r++)
            if (atomic_load_explicit(&l->live[r], memory_order_relaxed) && !l->done[r])
                return;
        gather_begin(l, now);
        flush_changes(l);
    }
    if (l->phase != LINK_QUIET || ((!fences_in(l) || !gather_complete(l)) && now < l->gather_deadline))
        return;
    uint32_t lost = 0;
    for (uint32_t r = 1; r < l->nodes; r++)
        if (l->gather_live[r] && !l->parted[r]) {
            lost++;
            hog_log(HOG_LOG_WARN, "rank 0: rank %u sent no part of the final model: its chunks are rank 0's view",
                    r);
        }
    gather_assemble(l);
    stats_final(l);
    l->all[0] = l->st;
    l->parted[0] = 1;
    send_end(l, 0, lost ? "the model is gathered, without some ranks' parts" : "the model is gathered");
    l->phase = LINK_OVER;
    hog_link_answer(l, 0);
}

static void *link_thread(void *arg)
{
    hog_link *l = arg;
    uint64_t taken = 0;
    double beat_every = HOG_MIN(1.0, l->p.timeout / LINK_BEAT_FRACTION), next_beat = 0;
    zmq_pollitem_t items[2] = {{l->inbox, 0, ZMQ_POLLIN, 0}, {l->ctl, 0, ZMQ_POLLIN, 0}};
    atomic_store_explicit(&l->serving, 1, memory_order_release);
    while (!atomic_load(&l->quit) && !atomic_load(&l->stop) && l->phase != LINK_OVER) {
        if (atomic_load(&l->interrupted)) {
            send_abort(l, "interrupted");
            hog_link_set_failed(l, "rank %u was interrupted", l->rank);
            break;
        }
        /* Chunks to send: wake each millisecond, so that a small model
         * cycles often; otherwise each 5 ms (heartbeats, deadlines). */
        zmq_poll(items, 2, l->p.sync == HOG_SYNC_ASYNC && l->phase < LINK_QUIET ? 1 : 5);
        drain(l, l->inbox, 0);
        drain(l, l->ctl, 1);
        take_request(l, &taken);
        double now = hog_now();
        if (now >= next_beat) {
            send_beats(l);
            next_beat = now + beat_every;
            if (check_peers(l, now) && l->rank == 0)
                hog_link_rounds_check(l);
        }
        if (l->p.sync == HOG_SYNC_ASYNC && l->phase < LINK_QUIET)
            send_chunks(l, now);
        /* One tick round at a time: a newer tick's snapshot replaces the
         * older one, whose mean no rank could adopt any more, and ticks
         * faster than rounds complete would fill every round's room. */
        if (l->rank == 0 && l->p.sync == HOG_SYNC_AVERAGE && l->p.sync_seconds > 0 && l->phase == LINK_TRAINING &&
            now >= l->next_tick && !l->snap_key) {
            uint64_t key = (1ull << 32) + ++l->ticks;
            hog_frame t = hog_link_frame(l, HOG_FRAME_TICK, key);
            for (uint32_t r = 1; r < l->nodes; r++)
                if (atomic_load_explicit(&l->live[r], memory_order_relaxed))
                    hog_link_send_ctl(l, r, &t);
            hog_link_round_contribute(l, key, 1);
            l->next_tick = now + l->p.sync_seconds;
        }
        if (l->rank == 0)
            coordinator_end(l, now);
        else if (l->phase == LINK_QUIET && fences_in(l))
            send_part(l);
        else if (l->phase == LINK_PARTED && now > l->end_deadline)
            hog_link_set_failed(l, "rank 0 sent no END within %g s of rank %u's part of the model", 2.0 * l->p.timeout +
                                l->p.join_timeout, l->rank);
    }
    atomic_store_explicit(&l->serving, 0, memory_order_release);
    if (l->phase != LINK_OVER)
        stats_final(l);
    pthread_mutex_lock(&l->lock);
    l->exited = 1;
    if (l->req != LINK_REQ_NONE && !l->req_done) {
        l->req_done = 1;
        l->req_rc = -1;
    }
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
    return NULL;
}

int hog_link_start(hog_link *l)
{
    if (l->nodes < 2)
        return 0;
    l->next_tick = hog_now() + l->p.sync_seconds;
    l->last_refill = hog_now();
    int rc = pthread_create(&l->thread, NULL, link_thread, l);
    if (rc != 0)
        return -rc;
    l->running = 1;
    return 0;
}
