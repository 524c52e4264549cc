/* util_hash.c: the 64-bit checksum of binary datasets (XXH3), with an AVX2 build chosen at run time where the CPU has it. */
#include <stdatomic.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "util.h"

/* util_hash_avx2.c compiles the same function for AVX2. The choice is made
 * once; both give the same value for the same bytes (XXH3 is specified
 * independently of the vector width). */
uint64_t hog_hash64_avx2(const void *data, size_t len, uint64_t seed);

static uint64_t hash_portable(const void *data, size_t len, uint64_t seed)
{
    return XXH3_64bits_withSeed(data, len, seed);
}

uint64_t hog_hash64(const void *data, size_t len, uint64_t seed)
{
    static uint64_t (*_Atomic impl)(const void *, size_t, uint64_t);
    uint64_t (*f)(const void *, size_t, uint64_t) = atomic_load_explicit(&impl, memory_order_relaxed);
    if (HOG_UNLIKELY(!f)) {
        __builtin_cpu_init();
        f = __builtin_cpu_supports("avx2") ? hog_hash64_avx2 : hash_portable;
        atomic_store_explicit(&impl, f, memory_order_relaxed);
    }
    return f(data, len, seed);
}
