/* util_hash_avx2.c: XXH3 compiled for AVX2, called by util_hash.c only on CPUs that have it. */
#pragma GCC target("avx2")
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "util.h"

uint64_t hog_hash64_avx2(const void *data, size_t len, uint64_t seed);

uint64_t hog_hash64_avx2(const void *data, size_t len, uint64_t seed)
{
    return XXH3_64bits_withSeed(data, len, seed);
}
