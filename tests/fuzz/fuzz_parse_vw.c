/* fuzz_parse_vw.c: libFuzzer target for the Vowpal Wabbit chunk parser. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "fuzz_parse_common.h"

/* The first byte picks the options, the second where the input is cut in
 * two chunks. */
static void pick(hog_read_params *p, const uint8_t *o)
{
    static const unsigned bits[4] = {0, 1, 4, 24};
    p->format = (o[0] & 8) ? HOG_FORMAT_AUTO : HOG_FORMAT_VW;
    p->hash_bits = bits[o[0] & 3];
    p->on_error = (o[0] >> 2) & 1 ? HOG_ON_ERROR_SKIP : HOG_ON_ERROR_STOP;
    p->max_line = fuzz_max_line(o[0] >> 4);
    p->fields = (o[0] >> 6) & 1; /* each value's namespace kept */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_text_target(data, size, 2, pick);
}
