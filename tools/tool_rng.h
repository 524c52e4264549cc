/* tool_rng.h: the data generators' random numbers: splitmix64 to seed a stream from a key, xoshiro256** to draw, uniform and normal variates. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TOOL_RNG_H
#define HOG_TOOL_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct rng {
    uint64_t s[4];
} rng;

/* The splitmix64 finaliser: a bijection that scrambles every bit. */
static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static inline uint64_t splitmix64(uint64_t *x)
{
    *x += 0x9E3779B97F4A7C15u;
    return mix64(*x);
}

/* A stream per key. The key is scrambled first: nearby keys (row numbers)
 * must not give overlapping splitmix64 sequences. */
static inline void rng_seed(rng *r, uint64_t key)
{
    uint64_t x = mix64(key);
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(rng *r)
{
    uint64_t *s = r->s;
    const uint64_t out = rotl64(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl64(s[3], 45);
    return out;
}

/* Uniform in [0, 1). */
static inline double rng_uniform(rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* Standard normal (Box-Muller, one of the pair). */
static inline double rng_normal(rng *r)
{
    double u1 = 1.0 - rng_uniform(r); /* (0, 1]: log stays finite */
    double u2 = rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#endif /* HOG_TOOL_RNG_H */
