/* fuzz_parse_ffm.c: libFuzzer target for the LIBFFM chunk parser (field:index:value). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "fuzz_parse_common.h"

/* The first byte picks the options (fuzz_pick_indexed's bits, and bit 7 a
 * ceiling of 1000 features, so that the bound is reached), the second
 * where the input is cut in two chunks. */
static void pick(hog_read_params *p, const uint8_t *o)
{
    fuzz_pick_indexed(p, o[0], HOG_FORMAT_FFM);
    p->max_features = (o[0] >> 7) & 1 ? 1000 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_text_target(data, size, 2, pick);
}
