/* fuzz_net_frame.c: libFuzzer target for the link's frame decoder: any bytes it accepts must encode back to themselves and decode to the same fields. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant is a crash, so libFuzzer keeps the input. */
#define FUZZ_CHECK(x)                                                                              \
    do {                                                                                           \
        if (!(x))                                                                                  \
            abort();                                                                               \
    } while (0)

static int same_bytes(const void *a, const void *b, size_t n)
{
    return n == 0 || memcmp(a, b, n) == 0;
}

/* Two decoded frames carry the same fields, bit for bit. */
static void check_same(const hog_frame *a, const hog_frame *b)
{
    FUZZ_CHECK(a->type == b->type && a->version == b->version && a->rank == b->rank);
    FUZZ_CHECK(a->run == b->run && a->seq == b->seq);
    FUZZ_CHECK(a->nodes == b->nodes && a->nclasses == b->nclasses && a->dim == b->dim);
    FUZZ_CHECK(a->params_fp == b->params_fp && a->data_fp == b->data_fp && a->flags == b->flags);
    FUZZ_CHECK(a->factors == b->factors && a->fields == b->fields && a->rows == b->rows);
    FUZZ_CHECK(same_bytes(a->classes, b->classes, (size_t)a->nclasses * 8));
    FUZZ_CHECK(a->endpoint_len == b->endpoint_len);
    FUZZ_CHECK(same_bytes(a->endpoint, b->endpoint, a->endpoint_len));
    FUZZ_CHECK((a->endpoints == NULL) == (b->endpoints == NULL));
    for (uint32_t i = 0; a->endpoints && i < a->nodes; i++) {
        uint16_t la, lb;
        const char *ea = hog_frame_endpoint(a, i, &la), *eb = hog_frame_endpoint(b, i, &lb);
        FUZZ_CHECK(la == lb && same_bytes(ea, eb, la));
    }
    FUZZ_CHECK((a->live == NULL) == (b->live == NULL));
    FUZZ_CHECK(!a->live || same_bytes(a->live, b->live, a->nodes));
    FUZZ_CHECK(a->chunk == b->chunk && a->ack == b->ack && a->count == b->count);
    FUZZ_CHECK(same_bytes(a->values, b->values, (size_t)a->count * 4));
    FUZZ_CHECK(memcmp(a->stats, b->stats, sizeof(a->stats)) == 0);
    FUZZ_CHECK(a->epoch == b->epoch && a->examples == b->examples && a->status == b->status);
    FUZZ_CHECK(a->text_len == b->text_len && same_bytes(a->text, b->text, a->text_len));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hog_frame f;
    const char *why = NULL;
    if (hog_frame_decode(data, size, &f, &why) != 0) {
        FUZZ_CHECK(why && *why);
        return 0;
    }

    /* The decoded fields as an encoder's caller holds them: host floats
     * and doubles, NUL-terminated endpoints. */
    hog_frame e = f;
    float *values = malloc((size_t)f.count * sizeof(float) + 1);
    double *classes = malloc((size_t)f.nclasses * sizeof(double) + 1);
    char **endpoints = NULL;
    FUZZ_CHECK(values && classes);
    for (uint64_t i = 0; i < f.count; i++)
        values[i] = hog_frame_f32(f.values, i);
    for (uint32_t i = 0; i < f.nclasses; i++)
        classes[i] = hog_frame_f64(f.classes, i);
    if (f.type == HOG_FRAME_WELCOME) {
        endpoints = calloc(f.nodes, sizeof(char *));
        FUZZ_CHECK(endpoints);
        for (uint32_t i = 0; i < f.nodes; i++) {
            uint16_t len;
            const char *s = hog_frame_endpoint(&f, i, &len);
            FUZZ_CHECK(len >= 1 && len <= HOG_FRAME_ENDPOINT_MAX);
            endpoints[i] = malloc((size_t)len + 1);
            FUZZ_CHECK(endpoints[i]);
            memcpy(endpoints[i], s, len);
            endpoints[i][len] = '\0';
        }
    }
    e.f32 = values;
    e.classes_f64 = classes;
    e.endpoints_str = (const char *const *)endpoints;

    /* The format is canonical: the fields say every byte. */
    hog_wire w = {0};
    FUZZ_CHECK(hog_frame_encode(&e, &w) == 0);
    FUZZ_CHECK(w.len == size && memcmp(w.buf, data, size) == 0);
    hog_frame g;
    FUZZ_CHECK(hog_frame_decode(w.buf, w.len, &g, &why) == 0);
    check_same(&f, &g);

    hog_wire_free(&w);
    for (uint32_t i = 0; endpoints && i < f.nodes; i++)
        free(endpoints[i]);
    free(endpoints);
    free(classes);
    free(values);
    return 0;
}
