/* fuzz_parse_ffm.c: libFuzzer target for the LIBFFM chunk parser (field:index:value). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "fuzz_parse_common.h"

/* The first byte picks the options, the second where the input is cut in
 * two chunks. Every row's fields are checked against the text's: each is
 * the number before the first colon of one of the row's triples. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    uint8_t o = data[0], cut = data[1];
    data += 2;
    size -= 2;
    static const unsigned bits[4] = {0, 1, 18, 31};
    hog_read_params p = fuzz_params();
    p.format = (o & 16) ? HOG_FORMAT_AUTO : HOG_FORMAT_FFM;
    p.hash_bits = bits[o & 3];
    p.index_base = (o >> 2) & 1;
    p.on_error = (o >> 3) & 1 ? HOG_ON_ERROR_SKIP : HOG_ON_ERROR_STOP;
    p.max_line = fuzz_max_line(o >> 5);
    p.max_features = (o >> 7) & 1 ? 1000 : 0;
    fuzz_plan_and_parse(&p, data, size, cut);
    return 0;
}
