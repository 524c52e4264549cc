/* test_etl_arrays.c: data sets made from CSR and dense arrays: the same blocks as a file's, fields and all, borrowed or copied, and every malformed array refused by name and row. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "etl/etl.h"

#include "test_train_data.h"

static void setup(void)
{
    scratch_make("arrays");
}

TestSuite(etl_arrays, .init = setup, .fini = scratch_remove);

/* A data set's rows as CSR arrays, the caller's to free. */
typedef struct csr_arrays {
    uint64_t rows, nnz;
    int64_t *indptr64;
    int32_t *indptr32;
    uint32_t *indices;
    float *values, *labels, *weights;
    uint16_t *fields; /* NULL when ds has no fields */
} csr_arrays;

/* Row i's fields in ds, or NULL when it has none. */
static const uint16_t *row_fields(const hog_dataset *ds, uint64_t i)
{
    const uint32_t rpb = ds->info.rows_per_block;
    return hog_block_fields(&ds->blocks[i / rpb], (uint32_t)(i % rpb));
}

static csr_arrays arrays_of(const hog_dataset *ds)
{
    hog_dataset_info info;
    hog_dataset_get_info(ds, &info);
    csr_arrays a = {info.rows, info.nnz, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    a.indptr64 = malloc((a.rows + 1) * sizeof(int64_t));
    a.indptr32 = malloc((a.rows + 1) * sizeof(int32_t));
    a.indices = malloc((a.nnz + 1) * sizeof(uint32_t));
    a.values = malloc((a.nnz + 1) * sizeof(float));
    a.labels = malloc(a.rows * sizeof(float));
    a.weights = malloc(a.rows * sizeof(float));
    cr_assert(a.indptr64 && a.indptr32 && a.indices && a.values && a.labels && a.weights);
    if (hog_dataset_fields(ds)) {
        a.fields = malloc((a.nnz + 1) * sizeof(uint16_t));
        cr_assert(a.fields);
    }
    uint64_t k = 0;
    for (uint64_t i = 0; i < a.rows; i++) {
        hog_row r = hog_dataset_row(ds, i);
        a.indptr64[i] = (int64_t)k;
        a.indptr32[i] = (int32_t)k;
        memcpy(a.indices + k, r.index, r.nnz * sizeof(uint32_t));
        memcpy(a.values + k, r.value, r.nnz * sizeof(float));
        if (a.fields)
            memcpy(a.fields + k, row_fields(ds, i), r.nnz * sizeof(uint16_t));
        k += r.nnz;
        a.labels[i] = r.label;
        a.weights[i] = (float)(i % 3) + 0.5f;
    }
    a.indptr64[a.rows] = (int64_t)k;
    a.indptr32[a.rows] = (int32_t)k;
    return a;
}

static void arrays_free(csr_arrays *a)
{
    free(a->indptr64);
    free(a->indptr32);
    free(a->indices);
    free(a->values);
    free(a->labels);
    free(a->weights);
    free(a->fields);
}

static hog_csr csr_of(const csr_arrays *a, uint64_t cols, int wide)
{
    hog_csr c;
    memset(&c, 0, sizeof(c));
    c.rows = a->rows;
    c.cols = cols;
    c.indptr = wide ? (const void *)a->indptr64 : (const void *)a->indptr32;
    c.indptr_bytes = wide ? 8 : 4;
    c.indices = a->indices;
    c.values = a->values;
    c.labels = a->labels;
    c.fields = a->fields;
    return c;
}

static int same_rows(const hog_dataset *a, const hog_dataset *b)
{
    if (a->info.rows != b->info.rows)
        return 0;
    for (uint64_t i = 0; i < a->info.rows; i++) {
        hog_row x = hog_dataset_row(a, i), y = hog_dataset_row(b, i);
        if (x.nnz != y.nnz || x.label != y.label || x.weight != y.weight ||
            memcmp(x.index, y.index, x.nnz * sizeof(uint32_t)) != 0 ||
            memcmp(x.value, y.value, x.nnz * sizeof(float)) != 0)
            return 0;
        const uint16_t *fx = row_fields(a, i), *fy = row_fields(b, i);
        if (!fx != !fy || (fx && memcmp(fx, fy, x.nnz * sizeof(uint16_t)) != 0))
            return 0;
    }
    return 1;
}

Test(etl_arrays, csr_makes_the_blocks_and_fingerprint_of_the_same_rows_read_from_text)
{
    hog_dataset *text = make_data("a.svm", 10000, 300, 12, 'b', 7);
    csr_arrays a = arrays_of(text);
    char err[256] = "";
    for (int wide = 0; wide < 2; wide++)
        for (int flags = 0; flags <= HOG_ARRAYS_BORROW; flags++) {
            hog_csr c = csr_of(&a, text->info.features, wide);
            hog_dataset *ds;
            cr_assert_eq(hog_dataset_from_csr(&c, flags, &ds, err, sizeof(err)), 0, "%s", err);
            hog_dataset_info info;
            hog_dataset_get_info(ds, &info);
            cr_assert_eq(info.rows, 10000);
            cr_assert_eq(info.nnz, text->info.nnz);
            cr_assert_eq(info.features, text->info.features);
            cr_assert_eq(info.blocks, 3, "4096-row blocks, as the reader makes");
            cr_assert_eq(info.format, HOG_FORMAT_AUTO);
            cr_assert_eq(info.weighted, 0);
            cr_assert_eq(info.fingerprint, text->info.fingerprint, "wide %d flags %d", wide, flags);
            cr_assert(same_rows(ds, text));
            hog_dataset_close(ds);
        }
    arrays_free(&a);
    hog_dataset_close(text);
}

Test(etl_arrays, borrowing_reads_the_callers_arrays_and_copying_does_not)
{
    hog_dataset *text = make_data("b.svm", 5000, 200, 10, 'b', 3);
    csr_arrays a = arrays_of(text);
    hog_csr c = csr_of(&a, text->info.features, 0);
    c.weights = a.weights;
    hog_dataset *borrowed, *copied;
    char err[256] = "";
    cr_assert_eq(hog_dataset_from_csr(&c, HOG_ARRAYS_BORROW, &borrowed, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_dataset_from_csr(&c, 0, &copied, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(borrowed->info.weighted, 1);
    cr_assert(same_rows(borrowed, copied));
    hog_row r = hog_dataset_row(borrowed, 4500);
    cr_assert_eq(r.index, a.indices + a.indptr64[4500], "a view into the caller's indices");
    cr_assert_eq(r.value, a.values + a.indptr64[4500]);
    cr_assert_eq(r.weight, a.weights[4500]);
    hog_row q = hog_dataset_row(copied, 4500);
    cr_assert_neq(q.index, r.index, "a copy of its own");
    /* The caller's change shows in the borrowed data set only. */
    a.values[a.indptr64[4500]] = 42.0f;
    a.labels[4500] = 7.0f;
    cr_assert_eq(hog_dataset_row(borrowed, 4500).value[0], 42.0f);
    cr_assert_eq(hog_dataset_row(borrowed, 4500).label, 7.0f);
    cr_assert_neq(hog_dataset_row(copied, 4500).value[0], 42.0f);
    cr_assert_neq(hog_dataset_row(copied, 4500).label, 7.0f);
    hog_dataset_close(borrowed);
    hog_dataset_close(copied);
    arrays_free(&a);
    hog_dataset_close(text);
}

Test(etl_arrays, blocks_of_any_size_and_no_labels)
{
    hog_dataset *text = make_data("c.svm", 1000, 50, 5, 'r', 5);
    csr_arrays a = arrays_of(text);
    hog_csr c = csr_of(&a, 60, 1);
    c.labels = NULL;
    c.rows_per_block = 7;
    char err[256] = "";
    for (int flags = 0; flags <= HOG_ARRAYS_BORROW; flags++) {
        hog_dataset *ds;
        cr_assert_eq(hog_dataset_from_csr(&c, flags, &ds, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(ds->info.blocks, 143);
        cr_assert_eq(ds->info.rows_per_block, 7);
        cr_assert_eq(ds->info.features, 60, "the columns, not the largest index + 1");
        for (uint64_t i = 0; i < 1000; i++) {
            hog_row x = hog_dataset_row(ds, i), y = hog_dataset_row(text, i);
            cr_assert_eq(x.label, 0.0f);
            cr_assert_eq(x.nnz, y.nnz);
            cr_assert_eq(memcmp(x.index, y.index, x.nnz * sizeof(uint32_t)), 0);
        }
        float labels[1000];
        hog_dataset_labels(ds, labels);
        for (int i = 0; i < 1000; i++)
            cr_assert_eq(labels[i], 0.0f);
        hog_dataset_close(ds);
    }
    float labels[1000];
    hog_dataset_labels(text, labels);
    for (int i = 0; i < 1000; i++)
        cr_assert_eq(labels[i], a.labels[i]);
    arrays_free(&a);
    hog_dataset_close(text);
}

Test(etl_arrays, a_data_set_from_arrays_saves_and_opens_as_the_same_rows)
{
    hog_dataset *text = make_data("d.svm", 3000, 100, 8, 'c', 9);
    csr_arrays a = arrays_of(text);
    hog_csr c = csr_of(&a, text->info.features, 0);
    c.weights = a.weights;
    hog_dataset *ds, *back;
    char err[256] = "", path[160];
    snprintf(path, sizeof(path), "%s/d.hgd", dir);
    cr_assert_eq(hog_dataset_from_csr(&c, HOG_ARRAYS_BORROW, &ds, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_dataset_save(ds, path), 0);
    cr_assert_eq(hog_dataset_open(path, NULL, &back, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(back->info.fingerprint, ds->info.fingerprint);
    cr_assert_eq(back->info.weighted, 1);
    cr_assert(same_rows(back, ds));
    hog_dataset_close(back);
    hog_dataset_close(ds);
    arrays_free(&a);
    hog_dataset_close(text);
}

/* LIBFFM text of 9,000 rows: three to five of 12 fields a row, in field
 * order, field f's features from 40 f + 1 on, so that fields 0 to 11 are
 * all used but a row has only some of them. */
static hog_dataset *fielded_text(const char *name)
{
    char path[160];
    FILE *f = create(name, path);
    hog_rng r = {5};
    for (int i = 0; i < 9000; i++) {
        fprintf(f, "%d", i % 3 == 0);
        for (uint32_t field = (uint32_t)hog_rng_below(&r, 3); field < 12; field += 2 + (uint32_t)hog_rng_below(&r, 2))
            fprintf(f, " %u:%u:%.3f", field, 40 * field + 1 + (uint32_t)hog_rng_below(&r, 40),
                    (double)hog_rng_below(&r, 1000) / 500.0);
        fprintf(f, "\n");
    }
    fclose(f);
    return open_written(path);
}

Test(etl_arrays, a_csr_matrix_with_fields_makes_the_blocks_fields_and_count_of_the_same_rows_read_from_text)
{
    hog_dataset *text = fielded_text("f.ffm");
    cr_assert_eq(hog_dataset_fields(text), 12);
    csr_arrays a = arrays_of(text);
    cr_assert_not_null(a.fields);
    char err[256] = "";
    for (int flags = 0; flags <= HOG_ARRAYS_BORROW; flags++) {
        hog_csr c = csr_of(&a, text->info.features, flags);
        c.rows_per_block = 1000; /* blocks other than the text's: only the rows must agree */
        hog_dataset *ds;
        cr_assert_eq(hog_dataset_from_csr(&c, flags, &ds, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(hog_dataset_fields(ds), 12, "the largest field + 1");
        cr_assert(same_rows(ds, text), "flags %d: the same values and fields", flags);
        hog_dataset_close(ds);
        /* In the text's blocks, the same blocks: the same fingerprint, the
         * field arrays counted in each block's checksum. */
        c.rows_per_block = 0;
        cr_assert_eq(hog_dataset_from_csr(&c, flags, &ds, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(ds->info.fingerprint, text->info.fingerprint, "flags %d", flags);
        hog_dataset_close(ds);
        /* A count of its own: batches of a matrix's rows agree on it. */
        c.field_count = 40;
        cr_assert_eq(hog_dataset_from_csr(&c, flags, &ds, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(hog_dataset_fields(ds), 40);
        cr_assert_eq(ds->info.fingerprint, text->info.fingerprint, "the count is not in the blocks");
        hog_dataset_close(ds);
    }
    /* Without fields, the same rows have none. */
    hog_csr c = csr_of(&a, text->info.features, 0);
    c.fields = NULL;
    hog_dataset *plain;
    cr_assert_eq(hog_dataset_from_csr(&c, 0, &plain, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_dataset_fields(plain), 0);
    cr_assert_null(row_fields(plain, 0));
    cr_assert_neq(plain->info.fingerprint, text->info.fingerprint);
    hog_dataset_close(plain);
    arrays_free(&a);
    hog_dataset_close(text);
}

Test(etl_arrays, fields_are_borrowed_or_copied_as_values_are_and_saved_with_the_data_set)
{
    hog_dataset *text = fielded_text("g.ffm");
    csr_arrays a = arrays_of(text);
    hog_csr c = csr_of(&a, text->info.features, 1);
    c.weights = a.weights;
    c.field_count = 20;
    hog_dataset *borrowed, *copied, *back;
    char err[256] = "", path[160];
    cr_assert_eq(hog_dataset_from_csr(&c, HOG_ARRAYS_BORROW, &borrowed, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_dataset_from_csr(&c, 0, &copied, err, sizeof(err)), 0, "%s", err);
    cr_assert(same_rows(borrowed, copied));
    cr_assert_eq(row_fields(borrowed, 4500), a.fields + a.indptr64[4500], "a view into the caller's fields");
    cr_assert_neq(row_fields(copied, 4500), row_fields(borrowed, 4500), "a copy of its own");
    /* Saved and opened again: the same fields, and their count. */
    snprintf(path, sizeof(path), "%s/g.hgd", dir);
    cr_assert_eq(hog_dataset_save(copied, path), 0);
    cr_assert_eq(hog_dataset_open(path, NULL, &back, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_dataset_fields(back), 20);
    cr_assert_eq(back->info.fingerprint, copied->info.fingerprint);
    cr_assert(same_rows(back, copied));
    hog_dataset_close(back);
    /* The caller's change shows in the borrowed data set only. */
    const uint16_t was = a.fields[a.indptr64[4500]];
    a.fields[a.indptr64[4500]] = 19;
    cr_assert_eq(row_fields(borrowed, 4500)[0], 19);
    cr_assert_eq(row_fields(copied, 4500)[0], was);
    cr_assert_neq(was, 19);
    hog_dataset_close(borrowed);
    hog_dataset_close(copied);
    arrays_free(&a);
    hog_dataset_close(text);
}

Test(etl_arrays, a_dense_matrix_keeps_its_non_zeros_as_the_same_csr)
{
    enum { R = 300, C = 9 };
    static float x[R * C];
    float labels[R], weights[R];
    hog_rng rng = {11};
    for (int i = 0; i < R * C; i++)
        x[i] = hog_rng_below(&rng, 3) == 0 ? 0.0f : (float)hog_rng_below(&rng, 1000) / 100.0f - 5.0f;
    for (int i = 0; i < R; i++) {
        labels[i] = (float)(i % 4);
        weights[i] = 1.0f + (float)(i % 2);
    }
    /* The same matrix as CSR, by hand. */
    static int32_t indptr[R + 1];
    static uint32_t indices[R * C];
    static float values[R * C];
    int k = 0;
    for (int i = 0; i < R; i++) {
        indptr[i] = k;
        for (int j = 0; j < C; j++)
            if (x[i * C + j] != 0.0f) {
                indices[k] = (uint32_t)j;
                values[k++] = x[i * C + j];
            }
    }
    indptr[R] = k;
    hog_csr c = {0};
    c.rows = R;
    c.cols = C;
    c.indptr = indptr;
    c.indptr_bytes = 4;
    c.indices = indices;
    c.values = values;
    c.labels = labels;
    c.weights = weights;
    c.rows_per_block = 64;
    hog_dataset *dense, *sparse;
    char err[256] = "";
    cr_assert_eq(hog_dataset_from_dense(x, R, C, labels, weights, 64, &dense, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_dataset_from_csr(&c, 0, &sparse, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(dense->info.nnz, (uint64_t)k);
    cr_assert_lt(dense->info.nnz, (uint64_t)R * C, "zeros are not stored");
    cr_assert_eq(dense->info.features, C);
    cr_assert_eq(dense->info.fingerprint, sparse->info.fingerprint);
    cr_assert(same_rows(dense, sparse));
    hog_dataset_close(dense);
    hog_dataset_close(sparse);
}

/* from_csr must fail with rc and a message holding want. */
static void refused(const hog_csr *c, int rc, const char *want)
{
    hog_dataset *ds = (hog_dataset *)1;
    char err[512] = "";
    cr_assert_eq(hog_dataset_from_csr(c, HOG_ARRAYS_BORROW, &ds, err, sizeof(err)), rc, "%s", err);
    cr_assert_null(ds);
    cr_assert(strstr(err, want), "'%s' lacks '%s'", err, want);
}

Test(etl_arrays, every_malformed_array_is_refused_with_its_row_and_what_was_expected)
{
    /* Three rows: {0:1, 2:2}, {}, {1:3} */
    int32_t indptr[4] = {0, 2, 2, 3};
    uint32_t indices[3] = {0, 2, 1};
    float values[3] = {1, 2, 3}, labels[3] = {1, -1, 1}, weights[3] = {1, 1, 1};
    hog_csr good = {0};
    good.rows = 3;
    good.cols = 3;
    good.indptr = indptr;
    good.indptr_bytes = 4;
    good.indices = indices;
    good.values = values;
    good.labels = labels;
    good.weights = weights;
    hog_dataset *ds;
    cr_assert_eq(hog_dataset_from_csr(&good, HOG_ARRAYS_BORROW, &ds, NULL, 0), 0);
    hog_dataset_close(ds);

    hog_csr c = good;
    c.rows = 0;
    refused(&c, HOG_EEMPTY, "hog_csr.rows is 0");
    c = good;
    c.cols = 2;
    refused(&c, HOG_EPARAM, "hog_csr.indices: row 0: index 2 is not below hog_csr.cols = 2");
    c = good;
    c.cols = 0;
    refused(&c, HOG_EPARAM, "hog_csr.cols is 0: expected 1 to 2^32 columns");
    c = good;
    c.indptr_bytes = 2;
    refused(&c, HOG_EPARAM, "hog_csr.indptr_bytes is 2: expected 4 (int32_t) or 8 (int64_t)");
    c = good;
    c.reserved[1] = 1;
    refused(&c, HOG_EPARAM, "hog_csr.reserved[1] is not zero");
    c = good;
    c.reserved32 = 1;
    refused(&c, HOG_EPARAM, "hog_csr.reserved32 is not zero");
    c = good;
    c.rows_per_block = (1u << 24) + 1;
    refused(&c, HOG_EPARAM, "hog_csr.rows_per_block is 16777217: at most 16777216");
    c = good;
    c.indptr = NULL;
    refused(&c, HOG_EPARAM, "hog_csr.indptr is NULL");
    c = good;
    c.values = NULL;
    refused(&c, HOG_EPARAM, "hog_csr.values is NULL: expected indptr[rows] = 3 of them");

    int32_t first[4] = {1, 2, 2, 3};
    c = good;
    c.indptr = first;
    refused(&c, HOG_EPARAM, "hog_csr.indptr[0] is 1: expected 0");
    int32_t down[4] = {0, 2, 1, 3};
    c = good;
    c.indptr = down;
    refused(&c, HOG_EPARAM, "hog_csr.indptr: row 1: indptr[2] = 1 is below indptr[1] = 2: expected non-decreasing");

    uint32_t unsorted[3] = {2, 0, 1};
    c = good;
    c.indices = unsorted;
    refused(&c, HOG_EPARAM, "hog_csr.indices: row 0: index 0 after 2: expected strictly increasing indices");
    uint32_t twice[3] = {1, 1, 1};
    c = good;
    c.indices = twice;
    refused(&c, HOG_EPARAM, "row 0: index 1 after 1: expected strictly increasing indices within a row (sorted, "
                            "no duplicates)");

    float nan_value[3] = {1, 2, NAN};
    c = good;
    c.values = nan_value;
    refused(&c, HOG_EPARAM, "hog_csr.values: row 2, index 1: nan: expected a finite number");
    float inf_label[3] = {1, INFINITY, 1};
    c = good;
    c.labels = inf_label;
    refused(&c, HOG_EPARAM, "hog_csr.labels[1] is inf: expected a finite number");
    float negative[3] = {1, 1, -0.5f};
    c = good;
    c.weights = negative;
    refused(&c, HOG_EPARAM, "hog_csr.weights[2] is -0.5: expected a finite number, not negative");

    /* Fields: any uint16_t, or each below a count given. */
    uint16_t fields[3] = {0, 3, 65535};
    c = good;
    c.fields = fields;
    cr_assert_eq(hog_dataset_from_csr(&c, HOG_ARRAYS_BORROW, &ds, NULL, 0), 0);
    cr_assert_eq(hog_dataset_fields(ds), 65536, "the largest field + 1");
    hog_dataset_close(ds);
    c.field_count = 65535;
    refused(&c, HOG_EPARAM, "hog_csr.fields: row 2, index 1: field 65535 is not below hog_csr.field_count = 65535");
    uint16_t three[3] = {0, 1, 2};
    c.fields = three;
    c.field_count = 2;
    refused(&c, HOG_EPARAM, "hog_csr.fields: row 2, index 1: field 2 is not below hog_csr.field_count = 2");
    c.field_count = 65537;
    refused(&c, HOG_EPARAM, "hog_csr.field_count is 65537: at most 65536 (a field is a uint16_t)");
    c.field_count = 3;
    cr_assert_eq(hog_dataset_from_csr(&c, 0, &ds, NULL, 0), 0);
    cr_assert_eq(hog_dataset_fields(ds), 3);
    hog_dataset_close(ds);
    c.fields = NULL;
    refused(&c, HOG_EPARAM, "hog_csr.field_count is 3 and hog_csr.fields is NULL: a count of fields needs the fields");

    cr_assert_eq(hog_dataset_from_csr(&good, 4, &ds, NULL, 0), HOG_EPARAM, "an unknown flag");
    cr_assert_eq(hog_dataset_from_csr(NULL, 0, &ds, NULL, 0), HOG_EPARAM);
}

Test(etl_arrays, a_dense_matrix_with_a_value_that_is_not_finite_is_refused_by_row_and_column)
{
    float x[6] = {1, 0, 2, 3, NAN, 0}, labels[2] = {0, 1}, weights[2] = {1, -1};
    hog_dataset *ds = (hog_dataset *)1;
    char err[256] = "";
    cr_assert_eq(hog_dataset_from_dense(x, 2, 3, labels, NULL, 0, &ds, err, sizeof(err)), HOG_EPARAM);
    cr_assert_null(ds);
    cr_assert_str_eq(err, "x: row 1, column 1: nan: expected a finite number");
    x[4] = 4;
    cr_assert_eq(hog_dataset_from_dense(x, 2, 3, labels, weights, 0, &ds, err, sizeof(err)), HOG_EPARAM);
    cr_assert_str_eq(err, "weights[1] is -1: expected a finite number, not negative");
    cr_assert_eq(hog_dataset_from_dense(x, 0, 3, labels, NULL, 0, &ds, err, sizeof(err)), HOG_EEMPTY);
    cr_assert_eq(hog_dataset_from_dense(x, 2, 0, labels, NULL, 0, &ds, err, sizeof(err)), HOG_EPARAM);
    cr_assert_str_eq(err, "cols is 0: expected 1 to 2^32 columns");
    cr_assert_eq(hog_dataset_from_dense(x, 2, 3, NULL, NULL, 0, &ds, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ds->info.nnz, 4);
    cr_assert_eq(hog_dataset_row(ds, 1).label, 0.0f);
    hog_dataset_close(ds);
}
