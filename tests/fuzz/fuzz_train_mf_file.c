/* fuzz_train_mf_file.c: libFuzzer target for the matrix factorisation model's file: load, every user and item name looked up, predictions; its mutator resizes the sections with the header's counts and recomputes the CRC. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "train/train_mf.h"

#include "fuzz_sections.h"

/* The layout train_mf_file.c writes: a 48-byte header, the metadata, the
 * user and item name tables, the biases, the factors and a CRC-32. */
#define HEAD 48u

static const fuzz_field fields[] = {{8, 4}, {12, 4}, {16, 4}, {20, 4}, {24, 4}, {28, 4}, {32, 8}, {40, 8}};

static void layout(const uint8_t *d, fuzz_layout *l)
{
    uint64_t meta = hog_get_u32(d + 12), users = hog_get_u32(d + 16), items = hog_get_u32(d + 20);
    uint64_t rank = hog_get_u32(d + 24), ulen = hog_get_u64(d + 32), ilen = hog_get_u64(d + 40);
    fuzz_section(l, FUZZ_HEADER, HEAD, -1);
    fuzz_section(l, FUZZ_TEXT, meta, 1);
    fuzz_section(l, FUZZ_U32, 4 * (users + 1), -1);
    fuzz_section(l, FUZZ_NAMES, ulen, -1);
    fuzz_section(l, FUZZ_U32, 4 * (items + 1), -1);
    fuzz_section(l, FUZZ_NAMES, ilen, -1);
    fuzz_section(l, FUZZ_F32, 4 * users, -1);
    fuzz_section(l, FUZZ_F32, 4 * items, -1);
    fuzz_section(l, FUZZ_F32, 4 * users * rank, -1);
    fuzz_section(l, FUZZ_F32, 4 * items * rank, -1);
    fuzz_section(l, FUZZ_SUM, 4, -1);
}

static void reseal(uint8_t *d, size_t size)
{
    if (size >= HEAD + 4)
        hog_put_u32(d + size - 4, hog_crc32(0, d, size - 4));
}

static const fuzz_format format = {"HOGMFMOD", HEAD + 4, fields, HOG_ARRAY_LEN(fields), layout, reseal};

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    return fuzz_sectioned_mutate(&format, data, size, max_size, seed);
}

/* Every name of a map finds its own id, and a prediction by name is the one by id. */
static void check_names(const hog_mf_model *m, const hog_idmap *map, int users)
{
    for (uint32_t id = 0; id < map->n; id++) {
        const char *name = hog_idmap_name(map, id);
        FUZZ_CHECK(name != NULL);
        FUZZ_CHECK((users ? hog_mf_user_id(m, name) : hog_mf_item_id(m, name)) == id);
    }
    FUZZ_CHECK(hog_idmap_name(map, map->n) == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    hog_mf_model *m = NULL;
    char err[512] = "";
    int rc = hog_mf_load(path, &m, err, sizeof(err));
    if (rc < 0) {
        FUZZ_CHECK(m == NULL);
        FUZZ_CHECK(rc == HOG_EMAGIC || rc == HOG_EVERSION || rc == HOG_ETRUNCATED || rc == HOG_ECHECKSUM ||
                   rc == HOG_ECORRUPT || rc == -ENOMEM);
        fuzz_check_message(err, path);
        fuzz_check_fds();
        return 0;
    }
    hog_mf_info info;
    hog_mf_get_info(m, &info);
    FUZZ_CHECK(info.rank >= 1 && info.rank <= HOG_MF_MAX_RANK);
    FUZZ_CHECK(m->users.n == info.users && m->items.n == info.items);
    FUZZ_CHECK(4ull * ((uint64_t)info.users + info.items) * (1 + (uint64_t)info.rank) <= size);
    check_names(m, &m->users, 1);
    check_names(m, &m->items, 0);
    /* the corners of the factor matrices, and ids the model does not know */
    const int64_t u[4] = {0, (int64_t)info.users - 1, (int64_t)info.users, -1};
    const int64_t i[4] = {0, (int64_t)info.items - 1, -1, (int64_t)info.items};
    for (int k = 0; k < 4; k++) {
        double p = hog_mf_predict_id(m, u[k], i[k]);
        FUZZ_CHECK(!info.params.clamp || isnan(p) || (p >= (float)info.min && p <= (float)info.max));
    }
    if (info.users && info.items) {
        double by_name = hog_mf_predict(m, hog_idmap_name(&m->users, 0), hog_idmap_name(&m->items, 0));
        double by_id = hog_mf_predict_id(m, 0, 0);
        FUZZ_CHECK(memcmp(&by_name, &by_id, sizeof(double)) == 0);
    }
    hog_mf_free(m);
    fuzz_check_fds();
    return 0;
}
