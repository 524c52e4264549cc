/* fuzz_parse_csv.c: libFuzzer target for CSV plans (delimiter, header, label, ignored and categorical columns) and the CSV chunk parser. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "fuzz_parse_common.h"

/* The first two bytes pick the options, the third where the input is cut
 * in two chunks and, in its bits 0, 1, 6 and 7, some more. */
static void pick(hog_read_params *p, const uint8_t *o)
{
    static const char delims[8] = {0, ',', ';', '\t', ' ', '|', 0, ','};
    static const char *lists[8] = {NULL, "0", "1", "2", "a", "b,c", "1, x", NULL};
    static const unsigned bits[4] = {0, 0, 1, 18};
    const uint8_t o1 = o[0], o2 = o[1], cut = o[2];
    p->format = HOG_FORMAT_CSV;
    p->delimiter = delims[o1 & 7];
    p->header = (int)((o1 >> 3) % 3) - 1;
    p->label_index = (o1 >> 5) & 3;
    p->label_name = (o1 & 128) && p->header != 0 ? "y" : NULL;
    p->ignore = lists[o2 & 7];
    p->categorical = lists[(o2 >> 3) & 7];
    p->hash_bits = bits[(o2 >> 6) & 3];
    p->on_error = (cut & 1) ? HOG_ON_ERROR_SKIP : HOG_ON_ERROR_STOP;
    p->fields = (cut >> 1) & 1; /* each value's column kept */
    p->max_line = fuzz_max_line(cut >> 6);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_text_target(data, size, 3, pick);
}
