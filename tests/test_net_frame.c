/* test_net_frame.c: the link's wire format: every frame type round-trips bit for bit, the bytes sit at the documented offsets, and every malformed frame is refused with its reason. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"

/* ===================================================================== *
 *  Helpers: the test's own little-endian writer (independent of the
 *  codec's), one frame buffer per test, and the sample frames
 * ===================================================================== */
static void le16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t bits32(float v)
{
    uint32_t b;
    memcpy(&b, &v, sizeof(b));
    return b;
}

static uint64_t bits64(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof(b));
    return b;
}

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float float_of(uint32_t b)
{
    float v;
    memcpy(&v, &b, sizeof(v));
    return v;
}

/* The frame under test: fb[0..fl), with room to append. */
static unsigned char fb[1 << 20];
static size_t fl;

#define PAY (fb + HOG_FRAME_HEADER)

static void make(const hog_frame *f)
{
    hog_wire w = {0};
    cr_assert_eq(hog_frame_encode(f, &w), 0, "encoding a valid %s frame", hog_frame_type_name(f->type));
    cr_assert_leq(w.len, sizeof(fb));
    memcpy(fb, w.buf, w.len);
    fl = w.len;
    hog_wire_free(&w);
}

/* Appends n bytes of value c to the payload and says so in the header. */
static void append(size_t n, unsigned char c)
{
    memset(fb + fl, c, n);
    fl += n;
    le32(fb + 12, (uint32_t)(fl - HOG_FRAME_HEADER));
}

/* Cuts the payload to n bytes and says so in the header. */
static void cut_payload(size_t n)
{
    fl = HOG_FRAME_HEADER + n;
    le32(fb + 12, (uint32_t)n);
}

static void refused(const unsigned char *b, size_t len, const char *reason)
{
    hog_frame f;
    memset(&f, 0x5a, sizeof(f));
    hog_frame before = f;
    const char *why = NULL;
    cr_assert_eq(hog_frame_decode(b, len, &f, &why), -EBADMSG, "expected a refusal: %s", reason);
    cr_assert_not_null(why);
    cr_assert_str_eq(why, reason);
    cr_assert_eq(memcmp(&f, &before, sizeof(f)), 0, "a refused frame changed *f");
}

static void refused_fb(const char *reason)
{
    refused(fb, fl, reason);
}

static void decoded(const unsigned char *b, size_t len, hog_frame *f)
{
    const char *why = "(none)";
    int rc = hog_frame_decode(b, len, f, &why);
    cr_assert_eq(rc, 0, "decoding failed: %s", why);
}

static const double classes5[] = {-3.5, -0.0, 1.0, 2.0, 2.5e300};
static const char *const endpoints3[] = {"tcp://node07:5555", "tcp://10.0.0.2:6000", "ipc:///tmp/x"};
static const unsigned char live4[] = {1, 0, 1, 1};
static const char hello_ep[] = "tcp://gpu-12.cluster:40001";
static const char why_text[] = "rank 3: params fingerprint differs (d\xc3\xa9j\xc3\xa0 vu)";
/* Every kind of float a chunk may carry, NaN payloads included: a quiet
 * NaN with a payload, a signalling NaN, the negative NaN, both zeros, the
 * infinities, the smallest subnormal and the extremes. */
static const uint32_t value_bits[] = {
    0x3f800000u, 0x7fc12345u, 0x7f800001u, 0xffffffffu, 0x80000000u, 0x00000000u,
    0x7f800000u, 0xff800000u, 0x00000001u, 0x7f7fffffu, 0xff7fffffu, 0xbe99999au,
};
static float values[1024];

/* A valid frame of each type, every field that the type carries distinct. */
static hog_frame sample(hog_frame_type type)
{
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
        values[i] = i < sizeof(value_bits) / 4 ? float_of(value_bits[i]) : (float)i * 0.25f - 7.0f;
    hog_frame f;
    memset(&f, 0, sizeof(f));
    f.type = type;
    f.version = HOG_NET_VERSION;
    f.rank = 3;
    f.run = 0x0123456789abcdefull;
    f.seq = 0xfedcba9876543210ull;
    switch (type) {
    case HOG_FRAME_HELLO:
        f.nodes = 4;
        f.nclasses = 5;
        f.classes_f64 = classes5;
        f.dim = 1ull << 33;
        f.params_fp = 0x1111222233334444ull;
        f.data_fp = 0x5555666677778888ull;
        f.flags = HOG_HELLO_SHARDS;
        f.factors = 8;
        f.fields = 39;
        f.rows = 0x0000009988776655ull;
        f.endpoint = hello_ep;
        f.endpoint_len = (uint16_t)strlen(hello_ep);
        break;
    case HOG_FRAME_WELCOME:
        f.nodes = 3;
        f.nclasses = 5;
        f.classes_f64 = classes5;
        f.dim = 1000003;
        f.fields = 20;
        f.rows = 3000000017ull;
        f.endpoints_str = endpoints3;
        break;
    case HOG_FRAME_REFUSE:
    case HOG_FRAME_ABORT:
        f.text = why_text;
        f.text_len = (uint32_t)strlen(why_text);
        break;
    case HOG_FRAME_END:
        f.status = -10007;
        f.text = why_text;
        f.text_len = (uint32_t)strlen(why_text);
        break;
    case HOG_FRAME_CHUNK:
        f.ack = 0x0badf00du;
        /* fall through */
    case HOG_FRAME_DELTA:
        f.chunk = 0xdeadbeefu;
        f.count = 1024;
        f.f32 = values;
        break;
    case HOG_FRAME_BEAT:
    case HOG_FRAME_DONE:
        f.epoch = 7;
        f.flags = HOG_BEAT_DONE;
        f.examples = 0x0000123456789abcull;
        break;
    case HOG_FRAME_GATHER:
        f.nodes = 4;
        f.live = live4;
        break;
    case HOG_FRAME_PART:
        for (unsigned i = 0; i < HOG_PART_STATS; i++)
            f.stats[i] = i == 1 ? -0.0 : (double)i * 1.5e10 + 0.125;
        f.count = 1000;
        f.f32 = values;
        break;
    case HOG_FRAME_SUM:
    case HOG_FRAME_MEAN:
        f.count = 777;
        f.f32 = values;
        break;
    case HOG_FRAME_TICK:
        break;
    }
    return f;
}

/* That got (decoded) carries every field of want (encoded), bit for bit,
 * and nothing its type does not carry. */
static void same(const hog_frame *want, const hog_frame *got)
{
    cr_assert_eq(got->type, want->type);
    cr_assert_eq(got->version, want->version);
    cr_assert_eq(got->rank, want->rank);
    cr_assert_eq(got->run, want->run);
    cr_assert_eq(got->seq, want->seq);
    cr_assert_eq(got->nodes, want->nodes);
    cr_assert_eq(got->nclasses, want->nclasses);
    cr_assert_eq(got->dim, want->dim);
    cr_assert_eq(got->params_fp, want->params_fp);
    cr_assert_eq(got->data_fp, want->data_fp);
    cr_assert_eq(got->flags, want->flags);
    cr_assert_eq(got->factors, want->factors);
    cr_assert_eq(got->fields, want->fields);
    cr_assert_eq(got->rows, want->rows);
    for (uint32_t i = 0; i < want->nclasses; i++)
        cr_assert_eq(bits64(hog_frame_f64(got->classes, i)), bits64(want->classes_f64[i]), "class %u", i);
    cr_assert_eq(got->endpoint_len, want->endpoint_len);
    if (want->endpoint_len)
        cr_assert_eq(memcmp(got->endpoint, want->endpoint, want->endpoint_len), 0);
    else
        cr_assert_null(got->endpoint);
    if (want->type == HOG_FRAME_WELCOME) {
        for (uint32_t i = 0; i < want->nodes; i++) {
            uint16_t len;
            const char *e = hog_frame_endpoint(got, i, &len);
            cr_assert_eq(len, strlen(want->endpoints_str[i]));
            cr_assert_eq(memcmp(e, want->endpoints_str[i], len), 0, "endpoint %u", i);
        }
    } else {
        cr_assert_null(got->endpoints);
    }
    if (want->live)
        cr_assert_eq(memcmp(got->live, want->live, want->nodes), 0);
    else
        cr_assert_null(got->live);
    cr_assert_eq(got->chunk, want->chunk);
    cr_assert_eq(got->ack, want->ack);
    cr_assert_eq(got->count, want->count);
    for (uint64_t i = 0; i < want->count; i++)
        cr_assert_eq(bits32(hog_frame_f32(got->values, i)), bits32(want->f32[i]), "value %llu",
                     (unsigned long long)i);
    int counted = want->type == HOG_FRAME_CHUNK || want->type == HOG_FRAME_DELTA ||
                  want->type == HOG_FRAME_PART || want->type == HOG_FRAME_SUM || want->type == HOG_FRAME_MEAN;
    if (!counted)
        cr_assert_null(got->values);
    for (unsigned i = 0; i < HOG_PART_STATS; i++)
        cr_assert_eq(bits64(got->stats[i]), bits64(want->stats[i]), "stat %u", i);
    cr_assert_eq(got->epoch, want->epoch);
    cr_assert_eq(got->examples, want->examples);
    cr_assert_eq(got->status, want->status);
    cr_assert_eq(got->text_len, want->text_len);
    if (want->text)
        cr_assert_eq(memcmp(got->text, want->text, want->text_len), 0);
    else
        cr_assert_null(got->text);
    /* the host arrays are the encoder's; a decoded frame never has them */
    cr_assert_null(got->classes_f64);
    cr_assert_null(got->endpoints_str);
    cr_assert_null(got->f32);
}

/* ===================================================================== *
 *  Round trips
 * ===================================================================== */
Test(net_frame, every_type_round_trips_bit_for_bit)
{
    for (int t = HOG_FRAME_HELLO; t <= HOG_FRAME_TICK; t++) {
        hog_frame f = sample((hog_frame_type)t);
        make(&f);
        cr_assert_eq(fl, HOG_FRAME_HEADER + (size_t)rd32(fb + 12), "%s: the payload length field",
                     hog_frame_type_name((uint32_t)t));
        hog_frame d;
        decoded(fb, fl, &d);
        same(&f, &d);
        /* the decoded pointers point into the buffer decoded */
        if (d.values)
            cr_assert(d.values > fb && d.values < fb + fl);
    }
}

Test(net_frame, values_keep_nan_payloads_and_signed_zeros_on_the_wire)
{
    hog_frame f = sample(HOG_FRAME_CHUNK);
    make(&f);
    for (size_t i = 0; i < sizeof(value_bits) / sizeof(value_bits[0]); i++) {
        cr_assert_eq(rd32(PAY + 12 + 4 * i), value_bits[i], "value %zu on the wire", i);
    }
    hog_frame d;
    decoded(fb, fl, &d);
    for (size_t i = 0; i < sizeof(value_bits) / sizeof(value_bits[0]); i++)
        cr_assert_eq(bits32(hog_frame_f32(d.values, i)), value_bits[i], "value %zu decoded", i);
}

Test(net_frame, empty_arrays_and_texts_round_trip)
{
    hog_frame f = sample(HOG_FRAME_HELLO);
    f.nclasses = 0;
    f.classes_f64 = NULL;
    make(&f);
    cr_assert_eq(fl, HOG_FRAME_HEADER + 52 + 2 + strlen(hello_ep));
    hog_frame d;
    decoded(fb, fl, &d);
    same(&f, &d);

    static const hog_frame_type counted[] = {HOG_FRAME_CHUNK, HOG_FRAME_PART, HOG_FRAME_SUM};
    for (size_t i = 0; i < 3; i++) {
        f = sample(counted[i]);
        f.count = 0;
        f.f32 = NULL;
        make(&f);
        decoded(fb, fl, &d);
        same(&f, &d);
    }
    f = sample(HOG_FRAME_END);
    f.text = NULL;
    f.text_len = 0;
    make(&f);
    cr_assert_eq(fl, HOG_FRAME_HEADER + 4);
    decoded(fb, fl, &d);
    cr_assert_eq(d.status, -10007);
    cr_assert_eq(d.text_len, 0);
}

Test(net_frame, largest_texts_endpoints_and_node_counts_round_trip)
{
    static char text[HOG_FRAME_TEXT_MAX], ep[HOG_FRAME_ENDPOINT_MAX + 1];
    memset(text, 'x', sizeof(text));
    memset(ep, 'e', HOG_FRAME_ENDPOINT_MAX);
    hog_frame f = sample(HOG_FRAME_ABORT);
    f.text = text;
    f.text_len = HOG_FRAME_TEXT_MAX;
    make(&f);
    hog_frame d;
    decoded(fb, fl, &d);
    same(&f, &d);

    static const char *eps[HOG_FRAME_MAX_NODES];
    for (unsigned i = 0; i < HOG_FRAME_MAX_NODES; i++)
        eps[i] = i % 2 ? ep : "tcp://a:1";
    f = sample(HOG_FRAME_WELCOME);
    f.nodes = HOG_FRAME_MAX_NODES;
    f.endpoints_str = eps;
    make(&f);
    decoded(fb, fl, &d);
    same(&f, &d);

    f = sample(HOG_FRAME_HELLO);
    f.endpoint = ep;
    f.endpoint_len = HOG_FRAME_ENDPOINT_MAX;
    f.nodes = HOG_FRAME_MAX_NODES;
    make(&f);
    decoded(fb, fl, &d);
    same(&f, &d);
}

Test(net_frame, encoding_reuses_the_wire_buffer)
{
    hog_wire w = {0};
    hog_frame f = sample(HOG_FRAME_CHUNK);
    cr_assert_eq(hog_frame_encode(&f, &w), 0);
    cr_assert_eq(w.len, 32 + 12 + 4096);
    unsigned char *buf = w.buf;
    size_t cap = w.cap;
    hog_frame t = sample(HOG_FRAME_TICK);
    cr_assert_eq(hog_frame_encode(&t, &w), 0);
    cr_assert_eq(w.len, 32);
    for (int i = 0; i < 100; i++) {
        f.chunk = (uint32_t)i;
        cr_assert_eq(hog_frame_encode(&f, &w), 0);
    }
    cr_assert_eq(w.buf, buf, "a frame that fits moved the buffer");
    cr_assert_eq(w.cap, cap);
    hog_frame d;
    decoded(w.buf, w.len, &d);
    cr_assert_eq(d.chunk, 99);
    hog_wire_free(&w);
    cr_assert_null(w.buf);
    cr_assert_eq(w.len, 0);
    cr_assert_eq(w.cap, 0);
    hog_wire_free(&w);
    hog_wire_free(NULL);
}

Test(net_frame, type_names)
{
    static const char *const names[] = {"HELLO", "WELCOME", "REFUSE", "CHUNK", "DELTA", "BEAT", "DONE",
                                        "GATHER", "PART",  "END",    "ABORT", "SUM",   "MEAN", "TICK"};
    for (uint32_t t = HOG_FRAME_HELLO; t <= HOG_FRAME_TICK; t++)
        cr_assert_str_eq(hog_frame_type_name(t), names[t - 1]);
    cr_assert_str_eq(hog_frame_type_name(0), "unknown");
    cr_assert_str_eq(hog_frame_type_name(15), "unknown");
    cr_assert_str_eq(hog_frame_type_name(UINT32_MAX), "unknown");
}

/* ===================================================================== *
 *  The documented layout, byte for byte
 * ===================================================================== */
Test(net_frame, hello_bytes_are_at_the_documented_offsets)
{
    static const double classes[] = {-1.0, 1.0};
    hog_frame f;
    memset(&f, 0, sizeof(f));
    f.type = HOG_FRAME_HELLO;
    f.version = 0x0201;
    f.rank = 0x0a0b0c0d;
    f.run = 0xa1a2a3a4a5a6a7a8ull;
    f.seq = 0xb1b2b3b4b5b6b7b8ull;
    f.nodes = 2;
    f.nclasses = 2;
    f.classes_f64 = classes;
    f.dim = 0x0102030405060708ull;
    f.params_fp = 0x1112131415161718ull;
    f.data_fp = 0x2122232425262728ull;
    f.flags = HOG_HELLO_SHARDS;
    f.factors = 0x31323334;
    f.fields = 0x41424344;
    f.rows = 0x5152535455565758ull;
    f.endpoint = "tcp://h:5";
    f.endpoint_len = 9;
    static const unsigned char want[] = {
        /* header */
        'H', 'O', 'G', 'L',                             /*  0 magic */
        0x01, 0x02,                                     /*  4 version */
        1,                                              /*  6 type: HELLO */
        0,                                              /*  7 zero */
        0x0d, 0x0c, 0x0b, 0x0a,                         /*  8 rank */
        79, 0, 0, 0,                                    /* 12 payload length: 52 + 16 + 2 + 9 */
        0xa8, 0xa7, 0xa6, 0xa5, 0xa4, 0xa3, 0xa2, 0xa1, /* 16 run id */
        0xb8, 0xb7, 0xb6, 0xb5, 0xb4, 0xb3, 0xb2, 0xb1, /* 24 seq */
        /* payload */
        2, 0, 0, 0,                                     /*  0 nodes */
        2, 0, 0, 0,                                     /*  4 nclasses */
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /*  8 dim */
        0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, /* 16 params fingerprint */
        0x28, 0x27, 0x26, 0x25, 0x24, 0x23, 0x22, 0x21, /* 24 data fingerprint */
        1, 0, 0, 0,                                     /* 32 flags */
        0x34, 0x33, 0x32, 0x31,                         /* 36 factors */
        0x44, 0x43, 0x42, 0x41,                         /* 40 fields */
        0x58, 0x57, 0x56, 0x55, 0x54, 0x53, 0x52, 0x51, /* 44 rows */
        0, 0, 0, 0, 0, 0, 0xf0, 0xbf,                   /* 52 classes[0] = -1.0 */
        0, 0, 0, 0, 0, 0, 0xf0, 0x3f,                   /* 60 classes[1] = 1.0 */
        9, 0,                                           /* 68 endpoint length */
        't', 'c', 'p', ':', '/', '/', 'h', ':', '5',    /* 70 endpoint */
    };
    make(&f);
    cr_assert_eq(fl, sizeof(want));
    cr_assert_eq(memcmp(fb, want, sizeof(want)), 0, "HELLO's bytes differ from the documented layout");
    hog_frame d;
    decoded(want, sizeof(want), &d);
    same(&f, &d);
}

Test(net_frame, chunk_bytes_are_at_the_documented_offsets)
{
    const float v[3] = {1.0f, -2.0f, float_of(0x7fc00001u)};
    hog_frame f;
    memset(&f, 0, sizeof(f));
    f.type = HOG_FRAME_CHUNK;
    f.version = 2;
    f.rank = 1;
    f.run = 2;
    f.seq = 0x0102030405060708ull;
    f.chunk = 0x00c0ffee;
    f.ack = 0x01020304;
    f.count = 3;
    f.f32 = v;
    static const unsigned char want[] = {
        'H', 'O', 'G', 'L', 2, 0, 4, 0,   /* magic, version 2, type CHUNK, zero */
        1, 0, 0, 0,                       /*  8 rank */
        24, 0, 0, 0,                      /* 12 payload length: 12 + 3 * 4 */
        2, 0, 0, 0, 0, 0, 0, 0,           /* 16 run id */
        8, 7, 6, 5, 4, 3, 2, 1,           /* 24 seq */
        0xee, 0xff, 0xc0, 0x00,           /* payload 0: chunk id */
        3, 0, 0, 0,                       /* 4: count */
        4, 3, 2, 1,                       /* 8: ack */
        0x00, 0x00, 0x80, 0x3f,           /* 12: 1.0f */
        0x00, 0x00, 0x00, 0xc0,           /* 16: -2.0f */
        0x01, 0x00, 0xc0, 0x7f,           /* 20: a NaN with payload 1 */
    };
    make(&f);
    cr_assert_eq(fl, sizeof(want));
    cr_assert_eq(memcmp(fb, want, sizeof(want)), 0, "CHUNK's bytes differ from the documented layout");
    hog_frame d;
    decoded(want, sizeof(want), &d);
    same(&f, &d);
    /* a DELTA has no ack: its values follow the count */
    f.type = HOG_FRAME_DELTA;
    f.ack = 0;
    make(&f);
    cr_assert_eq(fl, sizeof(want) - 4);
    cr_assert_eq(fb[6], 5);
    cr_assert_eq(rd32(PAY + 8), 0x3f800000u);
    decoded(fb, fl, &d);
    same(&f, &d);
}

Test(net_frame, other_payloads_are_at_the_documented_offsets)
{
    hog_frame f = sample(HOG_FRAME_WELCOME), d;
    make(&f);
    cr_assert_eq(PAY[0], 3);                                  /* nodes */
    cr_assert_eq(PAY[4], 5);                                  /* nclasses */
    cr_assert_eq(PAY[8] | PAY[9] << 8 | PAY[10] << 16, 1000003); /* dim */
    cr_assert_eq(rd32(PAY + 16), 20u);                        /* fields */
    cr_assert_eq(rd32(PAY + 20), 3000000017u);                /* rows, low word first */
    cr_assert_eq(rd32(PAY + 24), 0u);
    cr_assert_eq(PAY[28 + 7], 0xc0);                          /* classes[0] = -3.5: sign and exponent */
    cr_assert_eq(PAY[28 + 8 + 7], 0x80);                      /* classes[1] = -0.0 */
    const unsigned char *e = PAY + 28 + 5 * 8;                /* nodes strings */
    cr_assert_eq(e[0], strlen(endpoints3[0]));
    cr_assert_eq(memcmp(e + 2, endpoints3[0], e[0]), 0);

    f = sample(HOG_FRAME_BEAT);
    make(&f);
    cr_assert_eq(fl, 32 + 16);
    cr_assert_eq(PAY[0], 7);                   /* epoch */
    cr_assert_eq(PAY[4], HOG_BEAT_DONE);       /* flags */
    cr_assert_eq(PAY[8], 0xbc);                /* examples, low byte first */
    cr_assert_eq(PAY[13], 0x12);

    f = sample(HOG_FRAME_GATHER);
    make(&f);
    cr_assert_eq(fl, 32 + 4 + 4);
    cr_assert_eq(PAY[0], 4);
    cr_assert_eq(memcmp(PAY + 4, live4, 4), 0);

    f = sample(HOG_FRAME_PART);
    make(&f);
    cr_assert_eq(fl, 32 + HOG_PART_STATS * 8 + 8 + 4000);
    cr_assert_eq(PAY[8 + 7], 0x80);            /* stats[1] = -0.0 */
    cr_assert_eq(PAY[HOG_PART_STATS * 8], 1000 & 0xff); /* count */
    cr_assert_eq(PAY[HOG_PART_STATS * 8 + 1], 1000 >> 8);
    cr_assert_eq(PAY[HOG_PART_STATS * 8 + 8 + 3], 0x3f); /* values[0] = 1.0f */

    f = sample(HOG_FRAME_END);
    make(&f);
    cr_assert_eq(rd32(PAY), (uint32_t)-10007);
    cr_assert_eq(memcmp(PAY + 4, why_text, strlen(why_text)), 0);

    f = sample(HOG_FRAME_SUM);
    make(&f);
    cr_assert_eq(fl, 32 + 8 + 777 * 4);
    cr_assert_eq(PAY[0] | PAY[1] << 8, 777);

    f = sample(HOG_FRAME_TICK);
    make(&f);
    cr_assert_eq(fl, 32);
    cr_assert_eq(fb[6], HOG_FRAME_TICK);
    decoded(fb, fl, &d);
    same(&f, &d);
}

/* ===================================================================== *
 *  Refusals: the header
 * ===================================================================== */
Test(net_frame, every_truncation_of_every_type_is_refused)
{
    for (int t = HOG_FRAME_HELLO; t <= HOG_FRAME_TICK; t++) {
        hog_frame f = sample((hog_frame_type)t);
        make(&f);
        /* Each prefix in a buffer of its own size, so that ASan sees any
         * read past it. */
        for (size_t n = 0; n < fl; n++) {
            unsigned char *b = malloc(n ? n : 1);
            cr_assert_not_null(b);
            memcpy(b, fb, n);
            refused(b, n, n < HOG_FRAME_HEADER ? "truncated header (fewer than 32 bytes)"
                                               : "payload length in the header differs from the bytes after the header");
            free(b);
        }
    }
    refused(NULL, 0, "truncated header (fewer than 32 bytes)");
}

/* The same cuts, with the header saying the shorter length: each payload's
 * own checks see every short payload. A text is still a text when cut. */
Test(net_frame, every_shortened_payload_is_refused)
{
    for (int t = HOG_FRAME_HELLO; t <= HOG_FRAME_TICK; t++) {
        hog_frame f = sample((hog_frame_type)t);
        make(&f);
        size_t full = fl - HOG_FRAME_HEADER;
        for (size_t n = 0; n < full; n++) {
            unsigned char *b = malloc(HOG_FRAME_HEADER + n);
            cr_assert_not_null(b);
            memcpy(b, fb, HOG_FRAME_HEADER + n);
            le32(b + 12, (uint32_t)n);
            hog_frame d;
            const char *why = NULL;
            int rc = hog_frame_decode(b, HOG_FRAME_HEADER + n, &d, &why);
            if (t == HOG_FRAME_REFUSE || t == HOG_FRAME_ABORT) {
                cr_assert_eq(rc, 0);
                cr_assert_eq(d.text_len, n);
            } else if (t == HOG_FRAME_END && n >= 4) {
                cr_assert_eq(rc, 0);
                cr_assert_eq(d.text_len, n - 4);
            } else {
                cr_assert_eq(rc, -EBADMSG, "%s cut to %zu payload bytes", hog_frame_type_name((uint32_t)t), n);
                cr_assert_not_null(why);
            }
            free(b);
        }
    }
}

Test(net_frame, one_trailing_byte_is_refused)
{
    for (int t = HOG_FRAME_HELLO; t <= HOG_FRAME_TICK; t++) {
        hog_frame f = sample((hog_frame_type)t);
        make(&f);
        fb[fl] = 0;
        refused(fb, fl + 1, "payload length in the header differs from the bytes after the header");
    }
}

Test(net_frame, header_refusals)
{
    hog_frame f = sample(HOG_FRAME_BEAT);
    make(&f);
    fb[3] = 'M';
    refused_fb("wrong magic (not \"HOGL\")");

    make(&f);
    memcpy(fb, "LGOH", 4);
    refused_fb("wrong magic (not \"HOGL\")");

    static const unsigned char types[] = {0, 15, 99, 255};
    for (size_t i = 0; i < sizeof(types); i++) {
        make(&f);
        fb[6] = types[i];
        refused_fb("unknown type (not 1 to 14)");
    }

    make(&f);
    fb[7] = 1;
    refused_fb("header byte 7 (reserved) is not zero");

    make(&f);
    le32(fb + 12, 15);
    refused_fb("payload length in the header differs from the bytes after the header");
    le32(fb + 12, 17);
    refused_fb("payload length in the header differs from the bytes after the header");
    le32(fb + 12, UINT32_MAX);
    refused_fb("payload length in the header differs from the bytes after the header");

    /* the version and the run id are the caller's to check */
    make(&f);
    le16(fb + 4, 0xbeef);
    le64(fb + 16, 42);
    hog_frame d;
    decoded(fb, fl, &d);
    cr_assert_eq(d.version, 0xbeef);
    cr_assert_eq(d.run, 42);
}

Test(net_frame, a_null_why_is_accepted)
{
    hog_frame d;
    cr_assert_eq(hog_frame_decode("HOG", 3, &d, NULL), -EBADMSG);
}

/* ===================================================================== *
 *  Refusals: HELLO and WELCOME
 * ===================================================================== */
Test(net_frame, hello_refusals)
{
    hog_frame f = sample(HOG_FRAME_HELLO);
    const size_t ep_off = 52 + 5 * 8; /* the endpoint's length */

    make(&f);
    cut_payload(51);
    refused_fb("HELLO: payload shorter than its 52 fixed bytes");

    make(&f);
    le32(PAY, 0);
    refused_fb("nodes is 0");
    le32(PAY, HOG_FRAME_MAX_NODES + 1);
    refused_fb("nodes over HOG_FRAME_MAX_NODES (4096)");
    le32(PAY, UINT32_MAX);
    refused_fb("nodes over HOG_FRAME_MAX_NODES (4096)");

    make(&f);
    le32(PAY + 4, HOG_FRAME_MAX_CLASSES + 1);
    refused_fb("nclasses over HOG_FRAME_MAX_CLASSES (65536)");
    le32(PAY + 4, 100);
    refused_fb("class labels run past the payload");
    le32(PAY + 4, HOG_FRAME_MAX_CLASSES);
    refused_fb("class labels run past the payload");

    make(&f);
    le64(PAY + 52 + 8, bits64(-3.5)); /* classes[1] == classes[0] */
    refused_fb("class labels not strictly ascending");
    le64(PAY + 52 + 8, bits64(-4.0));
    refused_fb("class labels not strictly ascending");
    le64(PAY + 52 + 8, bits64(NAN));
    refused_fb("a class label is not finite");
    le64(PAY + 52, bits64(-INFINITY));
    refused_fb("a class label is not finite");

    make(&f);
    le64(PAY + 52 + 8, bits64(0.0)); /* -0.0 and 0.0 compare equal */
    le64(PAY + 52, bits64(-0.0));
    refused_fb("class labels not strictly ascending");

    make(&f);
    cut_payload(ep_off);
    refused_fb("endpoint length runs past the payload");
    make(&f);
    cut_payload(ep_off + 1);
    refused_fb("endpoint length runs past the payload");

    make(&f);
    le16(PAY + ep_off, 0);
    refused_fb("endpoint is empty");
    make(&f);
    cut_payload(ep_off + 2);
    le16(PAY + ep_off, 0);
    refused_fb("endpoint is empty");

    make(&f);
    le16(PAY + ep_off, HOG_FRAME_ENDPOINT_MAX + 1);
    append(HOG_FRAME_ENDPOINT_MAX + 1 - f.endpoint_len, 'x');
    refused_fb("endpoint longer than HOG_FRAME_ENDPOINT_MAX (255) bytes");

    make(&f);
    le16(PAY + ep_off, (uint16_t)(f.endpoint_len + 1));
    refused_fb("endpoint runs past the payload");

    make(&f);
    PAY[ep_off + 2 + 5] = 0;
    refused_fb("endpoint contains a NUL byte");
    make(&f);
    PAY[ep_off + 2 + f.endpoint_len - 1] = 0;
    refused_fb("endpoint contains a NUL byte");

    make(&f);
    append(1, 'x');
    refused_fb("HELLO: bytes after the endpoint");
    make(&f);
    le16(PAY + ep_off, (uint16_t)(f.endpoint_len - 1));
    refused_fb("HELLO: bytes after the endpoint");
}

Test(net_frame, welcome_refusals)
{
    hog_frame f = sample(HOG_FRAME_WELCOME);
    const size_t ep_off = 28 + 5 * 8;

    make(&f);
    cut_payload(27);
    refused_fb("WELCOME: payload shorter than its 28 fixed bytes");

    make(&f);
    le32(PAY, 0);
    refused_fb("nodes is 0");
    le32(PAY, HOG_FRAME_MAX_NODES + 1);
    refused_fb("nodes over HOG_FRAME_MAX_NODES (4096)");

    make(&f);
    le32(PAY + 4, HOG_FRAME_MAX_CLASSES + 1);
    refused_fb("nclasses over HOG_FRAME_MAX_CLASSES (65536)");
    le32(PAY + 4, 1000);
    refused_fb("class labels run past the payload");
    make(&f);
    le64(PAY + 28 + 32, bits64(2.0)); /* classes[4] == classes[3] */
    refused_fb("class labels not strictly ascending");
    le64(PAY + 28 + 32, bits64(INFINITY));
    refused_fb("a class label is not finite");

    /* nodes strings that do not fill the rest exactly */
    make(&f);
    le32(PAY, 4);
    refused_fb("WELCOME: fewer endpoints than nodes");
    le32(PAY, 2);
    refused_fb("WELCOME: bytes after the nodes endpoints");
    make(&f);
    append(1, 0);
    refused_fb("WELCOME: bytes after the nodes endpoints");
    make(&f);
    append(2, 0);
    refused_fb("WELCOME: bytes after the nodes endpoints");
    make(&f);
    cut_payload(fl - HOG_FRAME_HEADER - 1);
    refused_fb("endpoint runs past the payload");
    make(&f);
    cut_payload(ep_off);
    refused_fb("WELCOME: fewer endpoints than nodes");

    make(&f);
    le16(PAY + ep_off, 0);
    refused_fb("endpoint is empty");
    make(&f);
    PAY[ep_off + 2 + 3] = 0;
    refused_fb("endpoint contains a NUL byte");
    /* the last endpoint's NUL */
    make(&f);
    fb[fl - 1] = 0;
    refused_fb("endpoint contains a NUL byte");
    /* the second endpoint's length, one too many */
    make(&f);
    size_t second = ep_off + 2 + strlen(endpoints3[0]);
    le16(PAY + second, (uint16_t)(strlen(endpoints3[1]) + 2));
    refused_fb("endpoint contains a NUL byte"); /* it takes the third's length, whose high byte is 0 */
    le16(PAY + second, HOG_FRAME_ENDPOINT_MAX + 1);
    refused_fb("endpoint longer than HOG_FRAME_ENDPOINT_MAX (255) bytes");
}

/* ===================================================================== *
 *  Refusals: the other types
 * ===================================================================== */
Test(net_frame, text_refusals)
{
    static const hog_frame_type texts[] = {HOG_FRAME_REFUSE, HOG_FRAME_ABORT};
    for (size_t i = 0; i < 2; i++) {
        hog_frame f = sample(texts[i]);
        make(&f);
        PAY[4] = 0;
        refused_fb("text contains a NUL byte");
        make(&f);
        append(HOG_FRAME_TEXT_MAX - f.text_len, 'a');
        hog_frame d;
        decoded(fb, fl, &d);
        cr_assert_eq(d.text_len, HOG_FRAME_TEXT_MAX);
        append(1, 'a');
        refused_fb("text longer than HOG_FRAME_TEXT_MAX (1024) bytes");
    }
    hog_frame f = sample(HOG_FRAME_END);
    make(&f);
    cut_payload(3);
    refused_fb("END: payload shorter than its 4-byte status");
    make(&f);
    fb[fl - 1] = 0;
    refused_fb("text contains a NUL byte");
    make(&f);
    append(HOG_FRAME_TEXT_MAX + 1 - f.text_len, 'a');
    refused_fb("text longer than HOG_FRAME_TEXT_MAX (1024) bytes");
}

Test(net_frame, chunk_and_delta_refusals)
{
    hog_frame f = sample(HOG_FRAME_CHUNK);
    make(&f);
    cut_payload(11);
    refused_fb("CHUNK: payload shorter than its 12 fixed bytes");
    make(&f);
    le32(PAY + 4, 1025);
    refused_fb("CHUNK: count does not match the payload length (12 + 4 * count)");
    le32(PAY + 4, 1023);
    refused_fb("CHUNK: count does not match the payload length (12 + 4 * count)");
    le32(PAY + 4, UINT32_MAX);
    refused_fb("CHUNK: count does not match the payload length (12 + 4 * count)");
    /* 2^30 floats would be 2^32 bytes: a count that wraps to 0 bytes in
     * 32-bit arithmetic must not match an empty chunk */
    make(&f);
    cut_payload(12);
    le32(PAY + 4, 1u << 30);
    refused_fb("CHUNK: count does not match the payload length (12 + 4 * count)");
    make(&f);
    append(1, 0);
    refused_fb("CHUNK: count does not match the payload length (12 + 4 * count)");
    make(&f);
    append(3, 0);
    refused_fb("CHUNK: count does not match the payload length (12 + 4 * count)");
    make(&f);
    append(4, 0);
    refused_fb("CHUNK: count does not match the payload length (12 + 4 * count)");

    f = sample(HOG_FRAME_DELTA);
    make(&f);
    cut_payload(0);
    refused_fb("DELTA: payload shorter than its 8 fixed bytes");
    make(&f);
    le32(PAY + 4, 0);
    refused_fb("DELTA: count does not match the payload length (8 + 4 * count)");
}

Test(net_frame, beat_done_and_tick_refusals)
{
    static const hog_frame_type beats[] = {HOG_FRAME_BEAT, HOG_FRAME_DONE};
    static const char *const reasons[] = {"BEAT: payload length is not 16", "DONE: payload length is not 16"};
    for (size_t i = 0; i < 2; i++) {
        hog_frame f = sample(beats[i]);
        make(&f);
        cut_payload(15);
        refused_fb(reasons[i]);
        make(&f);
        append(1, 0);
        refused_fb(reasons[i]);
        make(&f);
        cut_payload(0);
        refused_fb(reasons[i]);
    }
    hog_frame f = sample(HOG_FRAME_TICK);
    make(&f);
    append(1, 0);
    refused_fb("TICK: has a payload (it takes none)");
}

Test(net_frame, gather_refusals)
{
    hog_frame f = sample(HOG_FRAME_GATHER);
    make(&f);
    cut_payload(3);
    refused_fb("GATHER: payload shorter than its 4-byte nodes");
    make(&f);
    le32(PAY, 0);
    refused_fb("nodes is 0");
    le32(PAY, HOG_FRAME_MAX_NODES + 1);
    refused_fb("nodes over HOG_FRAME_MAX_NODES (4096)");
    le32(PAY, 5);
    refused_fb("GATHER: nodes does not match the payload length (4 + nodes)");
    le32(PAY, 3);
    refused_fb("GATHER: nodes does not match the payload length (4 + nodes)");
    make(&f);
    PAY[4 + 3] = 2;
    refused_fb("GATHER: a live byte is neither 0 nor 1");
    PAY[4 + 3] = 0xff;
    refused_fb("GATHER: a live byte is neither 0 nor 1");
}

Test(net_frame, part_refusals)
{
    const size_t count_off = HOG_PART_STATS * 8;
    hog_frame f = sample(HOG_FRAME_PART);
    make(&f);
    cut_payload(count_off + 7);
    refused_fb("PART: payload shorter than its stats and count (120 bytes)");
    make(&f);
    le64(PAY + 3 * 8, bits64(NAN));
    refused_fb("PART: a statistic is not finite");
    le64(PAY + 3 * 8, bits64(-INFINITY));
    refused_fb("PART: a statistic is not finite");
    make(&f);
    le64(PAY + (HOG_PART_STATS - 1) * 8, bits64(INFINITY));
    refused_fb("PART: a statistic is not finite");

    make(&f);
    le64(PAY + count_off, HOG_FRAME_MAX_VALUES + 1);
    refused_fb("PART: count over HOG_FRAME_MAX_VALUES (2^32)");
    le64(PAY + count_off, UINT64_MAX);
    refused_fb("PART: count over HOG_FRAME_MAX_VALUES (2^32)");
    /* counts whose byte size wraps 32- and 64-bit arithmetic */
    le64(PAY + count_off, (1ull << 62) + 1000);
    refused_fb("PART: count over HOG_FRAME_MAX_VALUES (2^32)");
    le64(PAY + count_off, HOG_FRAME_MAX_VALUES);
    refused_fb("PART: count does not match the payload length (120 + 4 * count)");
    le64(PAY + count_off, (1ull << 30) + 1000);
    refused_fb("PART: count does not match the payload length (120 + 4 * count)");
    le64(PAY + count_off, 999);
    refused_fb("PART: count does not match the payload length (120 + 4 * count)");
    make(&f);
    append(2, 0);
    refused_fb("PART: count does not match the payload length (120 + 4 * count)");
}

Test(net_frame, sum_and_mean_refusals)
{
    static const hog_frame_type types[] = {HOG_FRAME_SUM, HOG_FRAME_MEAN};
    static const char *const shorter[] = {"SUM: payload shorter than its 8-byte count",
                                          "MEAN: payload shorter than its 8-byte count"};
    static const char *const over[] = {"SUM: count over HOG_FRAME_MAX_VALUES (2^32)",
                                       "MEAN: count over HOG_FRAME_MAX_VALUES (2^32)"};
    static const char *const mismatch[] = {"SUM: count does not match the payload length (8 + 4 * count)",
                                           "MEAN: count does not match the payload length (8 + 4 * count)"};
    for (size_t i = 0; i < 2; i++) {
        hog_frame f = sample(types[i]);
        make(&f);
        cut_payload(7);
        refused_fb(shorter[i]);
        make(&f);
        le64(PAY, HOG_FRAME_MAX_VALUES + 1);
        refused_fb(over[i]);
        le64(PAY, (1ull << 62) + 777);
        refused_fb(over[i]);
        le64(PAY, 778);
        refused_fb(mismatch[i]);
        make(&f);
        append(4, 0);
        refused_fb(mismatch[i]);
        make(&f);
        cut_payload(8 + 776 * 4 + 2);
        refused_fb(mismatch[i]);
    }
}

/* ===================================================================== *
 *  Encoding limits
 * ===================================================================== */
static void encode_refused(const hog_frame *f, const char *what)
{
    hog_wire w = {0};
    hog_frame ok = sample(HOG_FRAME_TICK);
    cr_assert_eq(hog_frame_encode(&ok, &w), 0);
    unsigned char *buf = w.buf;
    cr_assert_eq(hog_frame_encode(f, &w), -EINVAL, "encoding %s", what);
    cr_assert_eq(w.buf, buf, "a refused encoding changed the wire (%s)", what);
    cr_assert_eq(w.len, HOG_FRAME_HEADER, "a refused encoding changed the wire (%s)", what);
    hog_wire_free(&w);
}

Test(net_frame, encoding_refuses_what_breaks_the_limits)
{
    static char big[HOG_FRAME_TEXT_MAX + 2];
    memset(big, 'a', sizeof(big) - 1);
    hog_frame f;

    f = sample(HOG_FRAME_TICK);
    f.type = (hog_frame_type)0;
    encode_refused(&f, "type 0");
    f.type = (hog_frame_type)15;
    encode_refused(&f, "type 15");

    f = sample(HOG_FRAME_HELLO);
    f.nodes = 0;
    encode_refused(&f, "HELLO with 0 nodes");
    f.nodes = HOG_FRAME_MAX_NODES + 1;
    encode_refused(&f, "HELLO with too many nodes");
    f = sample(HOG_FRAME_HELLO);
    f.nclasses = HOG_FRAME_MAX_CLASSES + 1;
    encode_refused(&f, "HELLO with too many classes");
    f = sample(HOG_FRAME_HELLO);
    f.classes_f64 = NULL;
    encode_refused(&f, "HELLO with no class array");
    static const double unordered[] = {1, 0}, nan2[] = {0, NAN}, equal[] = {-0.0, 0.0};
    f.nclasses = 2;
    f.classes_f64 = unordered;
    encode_refused(&f, "HELLO with classes out of order");
    f.classes_f64 = nan2;
    encode_refused(&f, "HELLO with a NaN class");
    f.classes_f64 = equal;
    encode_refused(&f, "HELLO with equal classes");
    f = sample(HOG_FRAME_HELLO);
    f.endpoint_len = 0;
    encode_refused(&f, "HELLO with an empty endpoint");
    f.endpoint = NULL;
    f.endpoint_len = 5;
    encode_refused(&f, "HELLO with no endpoint");
    f.endpoint = big;
    f.endpoint_len = HOG_FRAME_ENDPOINT_MAX + 1;
    encode_refused(&f, "HELLO with a 256-byte endpoint");
    f.endpoint = "tcp\0//h:1";
    f.endpoint_len = 9;
    encode_refused(&f, "HELLO with a NUL in its endpoint");

    static const char *const long_ep[] = {"tcp://a:1", big};
    static const char *const empty_ep[] = {"tcp://a:1", ""};
    static const char *const null_ep[] = {"tcp://a:1", NULL};
    f = sample(HOG_FRAME_WELCOME);
    f.nodes = 2;
    f.endpoints_str = long_ep;
    encode_refused(&f, "WELCOME with a long endpoint");
    f.endpoints_str = empty_ep;
    encode_refused(&f, "WELCOME with an empty endpoint");
    f.endpoints_str = null_ep;
    encode_refused(&f, "WELCOME with a NULL endpoint");
    f.endpoints_str = NULL;
    encode_refused(&f, "WELCOME with no endpoints");
    f = sample(HOG_FRAME_WELCOME);
    f.nodes = 0;
    encode_refused(&f, "WELCOME with 0 nodes");
    f = sample(HOG_FRAME_WELCOME);
    f.nclasses = 2;
    f.classes_f64 = unordered;
    encode_refused(&f, "WELCOME with classes out of order");

    static const hog_frame_type texts[] = {HOG_FRAME_REFUSE, HOG_FRAME_END, HOG_FRAME_ABORT};
    for (size_t i = 0; i < 3; i++) {
        f = sample(texts[i]);
        f.text = big;
        f.text_len = HOG_FRAME_TEXT_MAX + 1;
        encode_refused(&f, "a 1025-byte text");
        f.text = "a\0b";
        f.text_len = 3;
        encode_refused(&f, "a text with a NUL");
        f.text = NULL;
        encode_refused(&f, "a text of 3 bytes at NULL");
    }

    f = sample(HOG_FRAME_CHUNK);
    f.count = (uint64_t)UINT32_MAX + 1;
    encode_refused(&f, "a CHUNK of 2^32 floats");
    f.count = 1u << 30;
    encode_refused(&f, "a CHUNK whose payload passes 4 GiB");
    f.count = 3;
    f.f32 = NULL;
    encode_refused(&f, "a CHUNK of 3 floats at NULL");

    f = sample(HOG_FRAME_GATHER);
    static const unsigned char live2[] = {1, 2, 0, 1};
    f.live = live2;
    encode_refused(&f, "a GATHER live byte of 2");
    f.live = NULL;
    encode_refused(&f, "a GATHER without live bytes");
    f.live = live4;
    f.nodes = 0;
    encode_refused(&f, "a GATHER of 0 nodes");

    f = sample(HOG_FRAME_PART);
    f.stats[HOG_PART_STALENESS_MAX] = INFINITY;
    encode_refused(&f, "a PART with an infinite statistic");
    f = sample(HOG_FRAME_PART);
    f.stats[0] = NAN;
    encode_refused(&f, "a PART with a NaN statistic");
    f = sample(HOG_FRAME_PART);
    f.count = HOG_FRAME_MAX_VALUES + 1;
    encode_refused(&f, "a PART over HOG_FRAME_MAX_VALUES");
    f.count = HOG_FRAME_MAX_VALUES;
    encode_refused(&f, "a PART whose payload passes 4 GiB");

    f = sample(HOG_FRAME_MEAN);
    f.count = UINT64_MAX / 2;
    encode_refused(&f, "a MEAN whose byte size wraps");
    f.count = (1ull << 30) - 1; /* 8 + 4 * count = 2^32 + 4 */
    encode_refused(&f, "a MEAN whose payload passes 4 GiB");
}
