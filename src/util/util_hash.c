/* util_hash.c: the checksums of the file formats: CRC-32 (zlib's) and XXH3, with an AVX2 build of XXH3 chosen at run time where the CPU has it, and the vector register state that AVX code leaves behind. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdatomic.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#define XXH_INLINE_ALL
#include <xxhash.h>
#include <zlib.h>

#include "util.h"

uint32_t hog_crc32(uint32_t crc, const void *data, size_t len)
{
    const unsigned char *p = data;
    /* zlib takes a uInt length; feed it in pieces that fit. */
    while (len > 0) {
        uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;
        crc = (uint32_t)crc32(crc, p, n);
        p += n;
        len -= n;
    }
    return crc;
}

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

#if defined(__x86_64__)
void hog_vector_state_clear(void)
{
    if (__builtin_cpu_supports("avx"))
        __asm__ volatile("vzeroupper");
}

/* XINUSE (XGETBV with ECX=1): bit 2 is the upper halves of YMM0-15 and
 * bit 6 the upper halves of ZMM0-15, the state that slows legacy SSE.
 * Bit 7, ZMM16-31, is left out: glibc's string functions use those
 * registers precisely because they cause no such penalty, and vzeroupper
 * does not clear them. */
int hog_vector_state_dirty(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
        return -1;
    if (!__get_cpuid_count(0xd, 1, &a, &b, &c, &d) || !(a & (1u << 2)))
        return -1;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1u));
    (void)hi;
    return (lo & ((1u << 2) | (1u << 6))) != 0;
}
#else
void hog_vector_state_clear(void)
{
}

int hog_vector_state_dirty(void)
{
    return -1;
}
#endif
