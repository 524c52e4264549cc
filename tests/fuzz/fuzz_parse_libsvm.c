/* fuzz_parse_libsvm.c: libFuzzer target for the libsvm chunk parser and for hog_parse_double against strtod. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdio.h>

#include "fuzz_parse_common.h"

/* The first token of the text is checked against strtod, bit for bit,
 * whenever hog_parse_double takes some of it. */
static void check_first_number(const uint8_t *data, size_t size)
{
    char num[64];
    size_t n = 0;
    while (n < size && n < sizeof(num) - 1 && data[n] != ' ' && data[n] != '\n' && data[n] != '\0')
        n++;
    memcpy(num, data, n);
    num[n] = '\0';
    double got;
    const char *end = hog_parse_double(num, num + n, &got);
    if (end) {
        /* strtod on just what was taken (strtod alone would go on into
         * hex, "infinity" and the like, which the grammar refuses) */
        num[end - num] = '\0';
        char *e;
        double want = strtod(num, &e);
        FUZZ_CHECK(e == end && memcmp(&want, &got, sizeof(double)) == 0);
    }
}

/* The first byte picks the options (fuzz_pick_indexed's bits), the second
 * where the input is cut in two chunks. */
static void pick(hog_read_params *p, const uint8_t *o)
{
    fuzz_pick_indexed(p, o[0], HOG_FORMAT_LIBSVM);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 2)
        check_first_number(data + 2, size - 2);
    return fuzz_text_target(data, size, 2, pick);
}
