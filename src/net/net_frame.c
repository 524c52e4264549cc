/* net_frame.c: the link's wire format: every frame encoded into its bytes, and decoded from bytes that are trusted for nothing. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../util/util.h"
#include "net.h"

/* The byte layout is the one in net.h's comment, offset for offset. Every
 * field is assembled byte by byte in little-endian order, so the frames are
 * the same on any host; on x86-64 the compiler merges each of these helpers
 * into one load or store. */

/* ===================================================================== *
 *  Little-endian fields
 * ===================================================================== */
static inline uint16_t get16(const unsigned char *p)
{
    return (uint16_t)(p[0] | (unsigned)p[1] << 8);
}

static inline uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get64(const unsigned char *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static inline void put16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static inline void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static inline void put64(unsigned char *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

float hog_frame_f32(const unsigned char *p, uint64_t i)
{
    uint32_t b = get32(p + i * 4);
    float v;
    memcpy(&v, &b, sizeof(v));
    return v;
}

double hog_frame_f64(const unsigned char *p, uint64_t i)
{
    uint64_t b = get64(p + i * 8);
    double v;
    memcpy(&v, &b, sizeof(v));
    return v;
}

static inline uint64_t f64_bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof(b));
    return b;
}

/* ===================================================================== *
 *  Names and sizes
 * ===================================================================== */
static const char *const type_names[] = {
    [HOG_FRAME_HELLO] = "HELLO",   [HOG_FRAME_WELCOME] = "WELCOME", [HOG_FRAME_REFUSE] = "REFUSE",
    [HOG_FRAME_CHUNK] = "CHUNK",   [HOG_FRAME_DELTA] = "DELTA",     [HOG_FRAME_BEAT] = "BEAT",
    [HOG_FRAME_DONE] = "DONE",     [HOG_FRAME_GATHER] = "GATHER",   [HOG_FRAME_PART] = "PART",
    [HOG_FRAME_END] = "END",       [HOG_FRAME_ABORT] = "ABORT",     [HOG_FRAME_SUM] = "SUM",
    [HOG_FRAME_MEAN] = "MEAN",     [HOG_FRAME_TICK] = "TICK",
};

const char *hog_frame_type_name(uint32_t type)
{
    if (type >= HOG_ARRAY_LEN(type_names) || !type_names[type])
        return "unknown";
    return type_names[type];
}

/* The fixed part of each payload that has one, before its variable part. */
#define HELLO_FIXED 52u   /* nodes, nclasses, dim, params and data fingerprints, flags, factors, fields, rows */
#define WELCOME_FIXED 28u /* nodes, nclasses, dim, fields, rows */
#define CHUNK_FIXED 12u   /* chunk id, count, ack (u32) */
#define DELTA_FIXED 8u    /* chunk id, count (u32) */
#define BEAT_SIZE 16u     /* epoch, flags, examples: the whole payload */
#define GATHER_FIXED 4u   /* nodes */
#define PART_FIXED (HOG_PART_STATS * 8u + 8u) /* stats, count (u64) */
#define END_FIXED 4u      /* status */
#define SUM_FIXED 8u      /* count (u64) */

/* ===================================================================== *
 *  Encoding
 * ===================================================================== */
/* The host floats v[0..n) as little-endian binary32 at p. A straight loop
 * the compiler turns into plain (vector) copies on a little-endian host:
 * a CHUNK of 1024 floats is encoded thousands of times a second. */
static void put_f32s(unsigned char *restrict p, const float *restrict v, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, &v[i], sizeof(b));
        put32(p + i * 4, b);
    }
}

/* Whether c[0..n) are finite and strictly ascending: what a decoder
 * demands of class labels, so that an encoder never sends what every peer
 * would refuse. */
static int classes_ok(const double *c, uint32_t n)
{
    if (n && !c)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        if (!isfinite(c[i]) || (i && !(c[i - 1] < c[i])))
            return 0;
    return 1;
}

static int endpoint_ok(const char *s, size_t len)
{
    return s && len > 0 && len <= HOG_FRAME_ENDPOINT_MAX && !memchr(s, '\0', len);
}

static int text_ok(const char *s, uint32_t len)
{
    return len <= HOG_FRAME_TEXT_MAX && (len == 0 || (s && !memchr(s, '\0', len)));
}

static int nodes_ok(uint32_t nodes)
{
    return nodes >= 1 && nodes <= HOG_FRAME_MAX_NODES;
}

/* The payload length of f, after checking it against the format's limits:
 * 0 and the length in *out, or -EINVAL. The sums stay far below 2^64
 * (every count is bounded first), and the caller checks them against the
 * u32 of the header. */
static int payload_size(const hog_frame *f, uint64_t *out)
{
    uint64_t n;
    switch (f->type) {
    case HOG_FRAME_HELLO:
        if (!nodes_ok(f->nodes) || f->nclasses > HOG_FRAME_MAX_CLASSES ||
            !classes_ok(f->classes_f64, f->nclasses) || !endpoint_ok(f->endpoint, f->endpoint_len))
            return -EINVAL;
        n = HELLO_FIXED + (uint64_t)f->nclasses * 8 + 2 + f->endpoint_len;
        break;
    case HOG_FRAME_WELCOME:
        if (!nodes_ok(f->nodes) || f->nclasses > HOG_FRAME_MAX_CLASSES ||
            !classes_ok(f->classes_f64, f->nclasses) || !f->endpoints_str)
            return -EINVAL;
        n = WELCOME_FIXED + (uint64_t)f->nclasses * 8;
        for (uint32_t i = 0; i < f->nodes; i++) {
            const char *e = f->endpoints_str[i];
            size_t len = e ? strnlen(e, HOG_FRAME_ENDPOINT_MAX + 1) : 0;
            if (!endpoint_ok(e, len))
                return -EINVAL;
            n += 2 + len;
        }
        break;
    case HOG_FRAME_REFUSE:
    case HOG_FRAME_ABORT:
        if (!text_ok(f->text, f->text_len))
            return -EINVAL;
        n = f->text_len;
        break;
    case HOG_FRAME_END:
        if (!text_ok(f->text, f->text_len))
            return -EINVAL;
        n = END_FIXED + f->text_len;
        break;
    case HOG_FRAME_CHUNK:
    case HOG_FRAME_DELTA:
        if (f->count > UINT32_MAX || (f->count && !f->f32))
            return -EINVAL;
        n = (f->type == HOG_FRAME_CHUNK ? CHUNK_FIXED : DELTA_FIXED) + f->count * 4;
        break;
    case HOG_FRAME_BEAT:
    case HOG_FRAME_DONE:
        n = BEAT_SIZE;
        break;
    case HOG_FRAME_GATHER:
        if (!nodes_ok(f->nodes) || !f->live)
            return -EINVAL;
        for (uint32_t i = 0; i < f->nodes; i++)
            if (f->live[i] > 1)
                return -EINVAL;
        n = GATHER_FIXED + (uint64_t)f->nodes;
        break;
    case HOG_FRAME_PART:
        for (unsigned i = 0; i < HOG_PART_STATS; i++)
            if (!isfinite(f->stats[i]))
                return -EINVAL;
        if (f->count > HOG_FRAME_MAX_VALUES || (f->count && !f->f32))
            return -EINVAL;
        n = PART_FIXED + f->count * 4;
        break;
    case HOG_FRAME_SUM:
    case HOG_FRAME_MEAN:
        if (f->count > HOG_FRAME_MAX_VALUES || (f->count && !f->f32))
            return -EINVAL;
        n = SUM_FIXED + f->count * 4;
        break;
    case HOG_FRAME_TICK:
        n = 0;
        break;
    default:
        return -EINVAL;
    }
    *out = n;
    return 0;
}

int hog_frame_encode(const hog_frame *f, hog_wire *w)
{
    uint64_t plen;
    int rc = payload_size(f, &plen);
    if (rc < 0)
        return rc;
    if (plen > UINT32_MAX || plen > SIZE_MAX - HOG_FRAME_HEADER)
        return -EINVAL;
    size_t total = (size_t)plen + HOG_FRAME_HEADER;
    void *buf = w->buf;
    rc = hog_array_grow(&buf, &w->cap, total, 1, 256);
    if (rc < 0)
        return rc;
    w->buf = buf;
    w->len = total;

    unsigned char *h = w->buf;
    put32(h, HOG_FRAME_MAGIC);
    put16(h + 4, f->version);
    h[6] = (unsigned char)f->type;
    h[7] = 0;
    put32(h + 8, f->rank);
    put32(h + 12, (uint32_t)plen);
    put64(h + 16, f->run);
    put64(h + 24, f->seq);

    unsigned char *p = h + HOG_FRAME_HEADER;
    switch (f->type) {
    case HOG_FRAME_HELLO:
        put32(p, f->nodes);
        put32(p + 4, f->nclasses);
        put64(p + 8, f->dim);
        put64(p + 16, f->params_fp);
        put64(p + 24, f->data_fp);
        put32(p + 32, f->flags);
        put32(p + 36, f->factors);
        put32(p + 40, f->fields);
        put64(p + 44, f->rows);
        p += HELLO_FIXED;
        for (uint32_t i = 0; i < f->nclasses; i++, p += 8)
            put64(p, f64_bits(f->classes_f64[i]));
        put16(p, f->endpoint_len);
        memcpy(p + 2, f->endpoint, f->endpoint_len);
        break;
    case HOG_FRAME_WELCOME:
        put32(p, f->nodes);
        put32(p + 4, f->nclasses);
        put64(p + 8, f->dim);
        put32(p + 16, f->fields);
        put64(p + 20, f->rows);
        p += WELCOME_FIXED;
        for (uint32_t i = 0; i < f->nclasses; i++, p += 8)
            put64(p, f64_bits(f->classes_f64[i]));
        for (uint32_t i = 0; i < f->nodes; i++) {
            size_t len = strlen(f->endpoints_str[i]);
            put16(p, (uint16_t)len);
            memcpy(p + 2, f->endpoints_str[i], len);
            p += 2 + len;
        }
        break;
    case HOG_FRAME_REFUSE:
    case HOG_FRAME_ABORT:
        if (f->text_len)
            memcpy(p, f->text, f->text_len);
        break;
    case HOG_FRAME_END:
        put32(p, (uint32_t)f->status);
        if (f->text_len)
            memcpy(p + END_FIXED, f->text, f->text_len);
        break;
    case HOG_FRAME_CHUNK:
    case HOG_FRAME_DELTA:
        put32(p, f->chunk);
        put32(p + 4, (uint32_t)f->count);
        if (f->type == HOG_FRAME_CHUNK)
            put32(p + 8, f->ack);
        put_f32s(p + (f->type == HOG_FRAME_CHUNK ? CHUNK_FIXED : DELTA_FIXED), f->f32, f->count);
        break;
    case HOG_FRAME_BEAT:
    case HOG_FRAME_DONE:
        put32(p, f->epoch);
        put32(p + 4, f->flags);
        put64(p + 8, f->examples);
        break;
    case HOG_FRAME_GATHER:
        put32(p, f->nodes);
        memcpy(p + GATHER_FIXED, f->live, f->nodes);
        break;
    case HOG_FRAME_PART:
        for (unsigned i = 0; i < HOG_PART_STATS; i++)
            put64(p + i * 8, f64_bits(f->stats[i]));
        put64(p + HOG_PART_STATS * 8, f->count);
        put_f32s(p + PART_FIXED, f->f32, f->count);
        break;
    case HOG_FRAME_SUM:
    case HOG_FRAME_MEAN:
        put64(p, f->count);
        put_f32s(p + SUM_FIXED, f->f32, f->count);
        break;
    case HOG_FRAME_TICK:
        break;
    }
    return 0;
}

void hog_wire_free(hog_wire *w)
{
    if (!w)
        return;
    hog_free(w->buf);
    w->buf = NULL;
    w->len = w->cap = 0;
}

/* ===================================================================== *
 *  Decoding
 *
 *  Every length is compared with what is left of the payload before
 *  anything is read under it, by subtraction from what is left (never by
 *  adding to an offset), and every count of floats is divided into the
 *  bytes left rather than multiplied: neither can wrap on a 32-bit or a
 *  64-bit host. A frame either decodes whole or is refused with a reason.
 * ===================================================================== */
static int bad(const char **why, const char *reason)
{
    if (why)
        *why = reason;
    return -EBADMSG;
}

/* nclasses f64 at p (all inside the payload): finite and strictly
 * ascending, or a reason. */
static const char *check_classes(const unsigned char *p, uint32_t nclasses)
{
    double prev = 0;
    for (uint32_t i = 0; i < nclasses; i++) {
        double c = hog_frame_f64(p, i);
        if (!isfinite(c))
            return "a class label is not finite";
        if (i && !(prev < c))
            return "class labels not strictly ascending";
        prev = c;
    }
    return NULL;
}

/* The string at p + *off (*off <= n): its u16 length and its bytes must
 * lie inside p[0..n), and it must be an endpoint (1 to
 * HOG_FRAME_ENDPOINT_MAX bytes, no NUL). Moves *off past it. */
static const char *take_endpoint(const unsigned char *p, size_t n, size_t *off, uint16_t *len)
{
    if (n - *off < 2)
        return "endpoint length runs past the payload";
    uint16_t l = get16(p + *off);
    if (l == 0)
        return "endpoint is empty";
    if (l > HOG_FRAME_ENDPOINT_MAX)
        return "endpoint longer than HOG_FRAME_ENDPOINT_MAX (255) bytes";
    if (n - *off - 2 < l)
        return "endpoint runs past the payload";
    if (memchr(p + *off + 2, '\0', l))
        return "endpoint contains a NUL byte";
    *len = l;
    *off += 2 + (size_t)l;
    return NULL;
}

/* A text of len bytes at p (inside the payload). */
static const char *check_text(const unsigned char *p, size_t len)
{
    if (len > HOG_FRAME_TEXT_MAX)
        return "text longer than HOG_FRAME_TEXT_MAX (1024) bytes";
    if (memchr(p, '\0', len))
        return "text contains a NUL byte";
    return NULL;
}

/* The nodes and class fields HELLO and WELCOME share: nodes at p, nclasses
 * at p + 4, the classes at p + fixed, inside n bytes. */
static const char *take_shape(const unsigned char *p, size_t n, size_t fixed, hog_frame *f)
{
    f->nodes = get32(p);
    f->nclasses = get32(p + 4);
    f->dim = get64(p + 8);
    if (f->nodes == 0)
        return "nodes is 0";
    if (f->nodes > HOG_FRAME_MAX_NODES)
        return "nodes over HOG_FRAME_MAX_NODES (4096)";
    if (f->nclasses > HOG_FRAME_MAX_CLASSES)
        return "nclasses over HOG_FRAME_MAX_CLASSES (65536)";
    if ((n - fixed) / 8 < f->nclasses)
        return "class labels run past the payload";
    f->classes = p + fixed;
    return check_classes(f->classes, f->nclasses);
}

/* count floats after fixed bytes of an n-byte payload: exactly, no byte
 * more or less. */
static int values_fit(size_t n, size_t fixed, uint64_t count)
{
    size_t rest = n - fixed;
    return rest % 4 == 0 && rest / 4 == count;
}

static int decode_payload(const unsigned char *p, size_t n, hog_frame *f, const char **why)
{
    const char *r;
    size_t off;
    switch (f->type) {
    case HOG_FRAME_HELLO:
        if (n < HELLO_FIXED)
            return bad(why, "HELLO: payload shorter than its 52 fixed bytes");
        if ((r = take_shape(p, n, HELLO_FIXED, f)))
            return bad(why, r);
        f->params_fp = get64(p + 16);
        f->data_fp = get64(p + 24);
        f->flags = get32(p + 32);
        f->factors = get32(p + 36);
        f->fields = get32(p + 40);
        f->rows = get64(p + 44);
        off = HELLO_FIXED + (size_t)f->nclasses * 8;
        if ((r = take_endpoint(p, n, &off, &f->endpoint_len)))
            return bad(why, r);
        if (off != n)
            return bad(why, "HELLO: bytes after the endpoint");
        f->endpoint = (const char *)p + off - f->endpoint_len;
        return 0;
    case HOG_FRAME_WELCOME:
        if (n < WELCOME_FIXED)
            return bad(why, "WELCOME: payload shorter than its 28 fixed bytes");
        if ((r = take_shape(p, n, WELCOME_FIXED, f)))
            return bad(why, r);
        f->fields = get32(p + 16);
        f->rows = get64(p + 20);
        off = WELCOME_FIXED + (size_t)f->nclasses * 8;
        f->endpoints = p + off;
        for (uint32_t i = 0; i < f->nodes; i++) {
            uint16_t len;
            if (off == n)
                return bad(why, "WELCOME: fewer endpoints than nodes");
            if ((r = take_endpoint(p, n, &off, &len)))
                return bad(why, r);
        }
        if (off != n)
            return bad(why, "WELCOME: bytes after the nodes endpoints");
        return 0;
    case HOG_FRAME_REFUSE:
    case HOG_FRAME_ABORT:
        if ((r = check_text(p, n)))
            return bad(why, r);
        f->text = (const char *)p;
        f->text_len = (uint32_t)n;
        return 0;
    case HOG_FRAME_END:
        if (n < END_FIXED)
            return bad(why, "END: payload shorter than its 4-byte status");
        if ((r = check_text(p + END_FIXED, n - END_FIXED)))
            return bad(why, r);
        f->status = (int32_t)get32(p);
        f->text = (const char *)p + END_FIXED;
        f->text_len = (uint32_t)(n - END_FIXED);
        return 0;
    case HOG_FRAME_CHUNK:
        if (n < CHUNK_FIXED)
            return bad(why, "CHUNK: payload shorter than its 12 fixed bytes");
        f->chunk = get32(p);
        f->count = get32(p + 4);
        f->ack = get32(p + 8);
        if (!values_fit(n, CHUNK_FIXED, f->count))
            return bad(why, "CHUNK: count does not match the payload length (12 + 4 * count)");
        f->values = p + CHUNK_FIXED;
        return 0;
    case HOG_FRAME_DELTA:
        if (n < DELTA_FIXED)
            return bad(why, "DELTA: payload shorter than its 8 fixed bytes");
        f->chunk = get32(p);
        f->count = get32(p + 4);
        if (!values_fit(n, DELTA_FIXED, f->count))
            return bad(why, "DELTA: count does not match the payload length (8 + 4 * count)");
        f->values = p + DELTA_FIXED;
        return 0;
    case HOG_FRAME_BEAT:
    case HOG_FRAME_DONE:
        if (n != BEAT_SIZE)
            return bad(why, f->type == HOG_FRAME_BEAT ? "BEAT: payload length is not 16"
                                                      : "DONE: payload length is not 16");
        f->epoch = get32(p);
        f->flags = get32(p + 4);
        f->examples = get64(p + 8);
        return 0;
    case HOG_FRAME_GATHER:
        if (n < GATHER_FIXED)
            return bad(why, "GATHER: payload shorter than its 4-byte nodes");
        f->nodes = get32(p);
        if (f->nodes == 0)
            return bad(why, "nodes is 0");
        if (f->nodes > HOG_FRAME_MAX_NODES)
            return bad(why, "nodes over HOG_FRAME_MAX_NODES (4096)");
        if (n - GATHER_FIXED != f->nodes)
            return bad(why, "GATHER: nodes does not match the payload length (4 + nodes)");
        f->live = p + GATHER_FIXED;
        for (uint32_t i = 0; i < f->nodes; i++)
            if (f->live[i] > 1)
                return bad(why, "GATHER: a live byte is neither 0 nor 1");
        return 0;
    case HOG_FRAME_PART:
        if (n < PART_FIXED)
            return bad(why, "PART: payload shorter than its stats and count (120 bytes)");
        for (unsigned i = 0; i < HOG_PART_STATS; i++) {
            f->stats[i] = hog_frame_f64(p, i);
            if (!isfinite(f->stats[i]))
                return bad(why, "PART: a statistic is not finite");
        }
        f->count = get64(p + HOG_PART_STATS * 8);
        if (f->count > HOG_FRAME_MAX_VALUES)
            return bad(why, "PART: count over HOG_FRAME_MAX_VALUES (2^32)");
        if (!values_fit(n, PART_FIXED, f->count))
            return bad(why, "PART: count does not match the payload length (120 + 4 * count)");
        f->values = p + PART_FIXED;
        return 0;
    case HOG_FRAME_SUM:
    case HOG_FRAME_MEAN:
        if (n < SUM_FIXED)
            return bad(why, f->type == HOG_FRAME_SUM ? "SUM: payload shorter than its 8-byte count"
                                                     : "MEAN: payload shorter than its 8-byte count");
        f->count = get64(p);
        if (f->count > HOG_FRAME_MAX_VALUES)
            return bad(why, f->type == HOG_FRAME_SUM ? "SUM: count over HOG_FRAME_MAX_VALUES (2^32)"
                                                     : "MEAN: count over HOG_FRAME_MAX_VALUES (2^32)");
        if (!values_fit(n, SUM_FIXED, f->count))
            return bad(why, f->type == HOG_FRAME_SUM
                                ? "SUM: count does not match the payload length (8 + 4 * count)"
                                : "MEAN: count does not match the payload length (8 + 4 * count)");
        f->values = p + SUM_FIXED;
        return 0;
    case HOG_FRAME_TICK:
        if (n != 0)
            return bad(why, "TICK: has a payload (it takes none)");
        return 0;
    default:
        return bad(why, "unknown type (not 1 to 14)");
    }
}

int hog_frame_decode(const void *buf, size_t len, hog_frame *f, const char **why)
{
    const unsigned char *b = buf;
    if (len < HOG_FRAME_HEADER)
        return bad(why, "truncated header (fewer than 32 bytes)");
    if (get32(b) != HOG_FRAME_MAGIC)
        return bad(why, "wrong magic (not \"HOGL\")");
    if (b[7] != 0)
        return bad(why, "header byte 7 (reserved) is not zero");
    uint32_t plen = get32(b + 12);
    if (plen != len - HOG_FRAME_HEADER)
        return bad(why, "payload length in the header differs from the bytes after the header");

    /* Decoded into a copy, so that *f is left as it was on a refusal. */
    hog_frame d;
    memset(&d, 0, sizeof(d));
    d.type = (hog_frame_type)b[6]; /* checked by decode_payload's switch */
    d.version = get16(b + 4);
    d.rank = get32(b + 8);
    d.run = get64(b + 16);
    d.seq = get64(b + 24);
    int rc = decode_payload(b + HOG_FRAME_HEADER, plen, &d, why);
    if (rc < 0)
        return rc;
    *f = d;
    return 0;
}

const char *hog_frame_endpoint(const hog_frame *f, uint32_t i, uint16_t *len)
{
    /* The endpoints were checked whole at decoding: walking them again
     * stays inside the frame. */
    const unsigned char *p = f->endpoints;
    for (uint32_t k = 0; k < i; k++)
        p += 2 + (size_t)get16(p);
    *len = get16(p);
    return (const char *)p + 2;
}
