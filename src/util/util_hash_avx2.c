/* util_hash_avx2.c: XXH3 compiled for AVX2, called by util_hash.c only on CPUs that have it. */
/* SPDX-License-Identifier: BSD-2-Clause */
#pragma GCC target("avx2")

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "util.h"

uint64_t hog_hash64_avx2(const void *data, size_t len, uint64_t seed);

/* GCC 12 leaves the 256-bit registers' upper halves in use when the long
 * input path (a separate, cloned function) returns: no vzeroupper. Every
 * legacy-SSE instruction run afterwards on this thread, or on a thread it
 * creates (clone copies the register state), then carries a false
 * dependency on those halves: the scalar SGD loop, built for plain x86-64,
 * ran at 0.57x its speed after a dataset's checksums were verified
 * (bench/bench-rcv1.sh: 179M against 310M non-zeros/s). So the upper
 * halves are cleared here, on the way out: in asm, because clang (the
 * fuzzing build) ignores the GCC pragma and would refuse the intrinsic; the
 * function only runs on CPUs with AVX2. */
uint64_t hog_hash64_avx2(const void *data, size_t len, uint64_t seed)
{
    uint64_t h = XXH3_64bits_withSeed(data, len, seed);
    __asm__ volatile("vzeroupper");
    return h;
}
