/* util_murmur.c: MurmurHash3 x86_32, the feature hash of the text formats, over a whole string or a string fed piece by piece. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "util.h"

uint32_t hog_murmur3_32(const char *s, size_t len, uint32_t seed)
{
    const unsigned char *b = (const unsigned char *)s;
    uint32_t h = seed;
    size_t n4 = len / 4;
    for (size_t i = 0; i < n4; i++, b += 4)
        h = hog_murmur_block(h, (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                                    (uint32_t)b[3] << 24);
    uint32_t k = 0;
    switch (len & 3) {
    case 3:
        k ^= (uint32_t)b[2] << 16;
        /* fall through */
    case 2:
        k ^= (uint32_t)b[1] << 8;
        /* fall through */
    case 1:
        k ^= (uint32_t)b[0];
        h ^= hog_murmur_k(k);
        break;
    default:
        break;
    }
    return hog_murmur_final(h, (uint32_t)len);
}

void hog_murmur_feed(hog_murmur_stream *m, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        m->carry |= (uint32_t)(unsigned char)s[i] << (8 * m->n);
        if (++m->n == 4) {
            m->h = hog_murmur_block(m->h, m->carry);
            m->carry = 0;
            m->n = 0;
        }
    }
    m->len += (uint32_t)len;
}

uint32_t hog_murmur_end(const hog_murmur_stream *m)
{
    uint32_t h = m->h;
    if (m->n)
        h ^= hog_murmur_k(m->carry);
    return hog_murmur_final(h, m->len);
}

uint32_t hog_hash_feature(const char *s, size_t len, uint32_t seed, unsigned bits)
{
    return hog_murmur3_32(s, len, seed) & hog_hash_mask(bits);
}
