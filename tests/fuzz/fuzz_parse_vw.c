/* fuzz_parse_vw.c: libFuzzer target for the Vowpal Wabbit chunk parser. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "fuzz_parse_common.h"

/* The first byte picks the options. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    uint8_t o = data[0], cut = data[1];
    data += 2;
    size -= 2;
    static const unsigned bits[4] = {0, 1, 4, 24};
    hog_read_params p = fuzz_params();
    p.format = (o & 8) ? HOG_FORMAT_AUTO : HOG_FORMAT_VW;
    p.hash_bits = bits[o & 3];
    p.on_error = (o >> 2) & 1 ? HOG_ON_ERROR_SKIP : HOG_ON_ERROR_STOP;
    p.max_line = fuzz_max_line(o >> 4);
    p.fields = (o >> 6) & 1; /* each value's namespace kept */
    fuzz_plan_and_parse(&p, data, size, cut);
    return 0;
}
