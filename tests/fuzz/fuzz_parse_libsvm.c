/* fuzz_parse_libsvm.c: libFuzzer target for the libsvm chunk parser and for hog_parse_double against strtod. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdio.h>

#include "fuzz_parse_common.h"

/* The first byte picks the options, the second where the input is cut in
 * two chunks; the first token is also checked against strtod, bit for bit,
 * whenever hog_parse_double takes some of it. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    uint8_t o = data[0], cut = data[1];
    data += 2;
    size -= 2;

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

    hog_read_params p = fuzz_params();
    p.format = (o & 16) ? HOG_FORMAT_AUTO : HOG_FORMAT_LIBSVM;
    static const unsigned bits[4] = {0, 1, 18, 31};
    p.hash_bits = bits[o & 3];
    p.index_base = (o >> 2) & 1;
    p.on_error = (o >> 3) & 1 ? HOG_ON_ERROR_SKIP : HOG_ON_ERROR_STOP;
    p.max_line = fuzz_max_line(o >> 5);
    fuzz_plan_and_parse(&p, data, size, cut);
    return 0;
}
