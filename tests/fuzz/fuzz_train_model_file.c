/* fuzz_train_model_file.c: libFuzzer target for the linear model's file (.hog): load, the model's information and one prediction; its mutator resizes the sections with the header's counts (the class names, feature names and feature scales of versions 2 and 3 too) and recomputes the CRC. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "train/train.h"

#include "fuzz_sections.h"

/* The layout train_model_file.c writes: a 32-byte header, the metadata,
 * the class labels, version 3's sections word, the class names (version
 * 2, or 3 with sections bit 0: their size, then the names), the feature
 * names (version 3 with sections bit 2: a u64 size, then the count and
 * the (index, name) entries), the feature scales (version 3 with sections
 * bit 1), the biases, the weights and a
 * CRC-32 of all before it. */
#define HEAD 32u

static const fuzz_field fields[] = {{8, 4}, {12, 4}, {16, 8}, {24, 4}, {28, 4}};

/* The room in the buffer being mutated: the words past the header that
 * the layout reads (the sections word, the names' size) are read only
 * inside it; past the file's end they hold whatever the buffer does, and
 * a layout from them is one more shape to try. */
static size_t capacity = HEAD;

/* The u32 where the next section of l starts, or 0 past the buffer. */
static uint32_t next_word(const uint8_t *d, const fuzz_layout *l)
{
    const uint64_t at = l->off[l->n - 1] + l->len[l->n - 1];
    return at >= l->off[l->n - 1] && at <= capacity && capacity - at >= 4 ? hog_get_u32(d + at) : 0;
}

static void layout(const uint8_t *d, fuzz_layout *l)
{
    uint64_t meta = hog_get_u32(d + 12), dim = hog_get_u64(d + 16);
    uint64_t outputs = hog_get_u32(d + 24), classes = hog_get_u32(d + 28);
    const uint32_t version = hog_get_u32(d + 8);
    fuzz_section(l, FUZZ_HEADER, HEAD, -1);
    fuzz_section(l, FUZZ_TEXT, meta, 1);
    fuzz_section(l, FUZZ_F64, 8 * classes, -1);
    uint32_t sections = version == 2 ? 1u : 0u;
    if (version == 3) {
        sections = next_word(d, l);
        fuzz_section(l, FUZZ_U32, 4, -1);
    }
    if (sections & 1u) {
        const uint32_t names_bytes = next_word(d, l);
        fuzz_section(l, FUZZ_U32, 4, -1);
        fuzz_section(l, FUZZ_NAMES, names_bytes, -1);
    }
    if (sections & 4u) { /* feature names: a u64 size (its low word read), then the count and the entries */
        const uint32_t fnames_bytes = next_word(d, l);
        fuzz_section(l, FUZZ_U32, 8, -1);
        fuzz_section(l, FUZZ_NAMES, fnames_bytes, -1);
    }
    if (sections & 2u)
        fuzz_section(l, FUZZ_F32, 4 * dim, -1);
    fuzz_section(l, FUZZ_F32, 4 * outputs, -1);
    fuzz_section(l, FUZZ_F32, 4 * dim * outputs, -1);
    fuzz_section(l, FUZZ_SUM, 4, -1);
}

static void reseal(uint8_t *d, size_t size)
{
    if (size >= HEAD + 4)
        hog_put_u32(d + size - 4, hog_crc32(0, d, size - 4));
}

static const fuzz_format format = {"HOGMODEL", HEAD + 4, fields, HOG_ARRAY_LEN(fields), layout, reseal};

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    capacity = HOG_MAX(max_size, size);
    return fuzz_sectioned_mutate(&format, data, size, max_size, seed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    hog_model *m = NULL;
    char err[512] = "";
    int rc = hog_model_load(path, &m, err, sizeof(err));
    if (rc < 0) {
        FUZZ_CHECK(m == NULL);
        FUZZ_CHECK(rc == HOG_EMAGIC || rc == HOG_EVERSION || rc == HOG_ETRUNCATED || rc == HOG_ECHECKSUM ||
                   rc == HOG_ECORRUPT || rc == -ENOMEM);
        fuzz_check_message(err, path);
        fuzz_check_fds();
        return 0;
    }
    /* what info and predict read: the sizes, the labels, a row's scores */
    hog_model_info info;
    hog_model_get_info(m, &info);
    FUZZ_CHECK(info.outputs >= 1 && (uint64_t)info.features * info.outputs * 4 <= size);
    FUZZ_CHECK(info.loss == HOG_LOSS_SOFTMAX ? info.classes == info.outputs : info.outputs == 1);
    for (uint32_t k = 0; k < info.classes; k++) {
        double y = hog_model_class_label(m, k);
        FUZZ_CHECK(isfinite(y) && (k == 0 || y > hog_model_class_label(m, k - 1)));
    }
    /* a row reaching the first and last weights, and one past them */
    uint32_t index[3] = {0, 0, 0};
    float value[3] = {1.0f, -2.0f, 0.5f};
    uint32_t n = 0;
    index[n++] = 0;
    if (info.features > 1)
        index[n++] = (uint32_t)HOG_MIN(info.features - 1, (uint64_t)UINT32_MAX - 1);
    if (info.features < UINT32_MAX)
        index[n++] = (uint32_t)info.features;
    hog_row row = {index, value, n, 1.0f, 1.0f};
    float *probs = malloc(sizeof(float) * info.outputs);
    FUZZ_CHECK(probs);
    uint32_t cls = UINT32_MAX;
    double p = hog_model_predict(m, &row, &cls, probs);
    FUZZ_CHECK(cls < HOG_MAX(info.outputs, 2u));
    FUZZ_CHECK(info.loss != HOG_LOSS_LOGISTIC || isnan(p) || (p >= 0 && p <= 1));
    free(probs);
    hog_model_free(m);
    fuzz_check_fds();
    return 0;
}
