/* train_ffm_avx2.c: a field-aware factorisation machine's AdaGrad step on two pairs at once, in 256-bit registers, called by update_ffm only on CPUs with AVX2. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "train_run.h"

#ifndef HOG_W_C11
#include <immintrin.h>

/* Four shared weights (16-byte aligned) in a register and back, one VEX
 * move each: indivisible per float, as hog_w_load_row's (train.h). */
__attribute__((target("avx2"))) static inline __m128 load4(const hog_weight *p)
{
    __m128 v;
    __asm__ volatile("vmovaps %1, %0" : "=x"(v) : "m"(*(const __m128 *)(const void *)p));
    return v;
}

__attribute__((target("avx2"))) static inline void store4(hog_weight *p, __m128 v)
{
    __asm__ volatile("vmovaps %1, %0" : "=m"(*(__m128 *)(void *)p) : "x"(v));
}

__attribute__((target("avx2"))) static inline __m256 load8(const hog_weight *lo, const hog_weight *hi)
{
    return _mm256_set_m128(load4(hi), load4(lo));
}

__attribute__((target("avx2"))) static inline void store8(hog_weight *lo, hog_weight *hi, __m256 v)
{
    store4(lo, _mm256_castps256_ps128(v));
    store4(hi, _mm256_extractf128_ps(v, 1));
}

/* ffm_pair4's AdaGrad step (train_rows.c) on the pairs (a, b) and (a, c),
 * one in each half: the same operations in the same order on each lane,
 * no multiply and add fused, so the same results. pa* and qa* are the
 * weights and sums of v_a,fb and v_a,fc, pb/qb v_b,fa, pc/qc v_c,fa. */
__attribute__((target("avx2"))) static inline void pair8(hog_weight *pab, hog_weight *qab, hog_weight *pac,
                                                         hog_weight *qac, hog_weight *pb, hog_weight *qb,
                                                         hog_weight *pc, hog_weight *qc, __m256 t, __m256 l2a,
                                                         __m256 l2bc, __m256 step, __m256 eps)
{
    __m256 va = load8(pab, pac), vb = load8(pb, pc);
    __m256 ga = _mm256_mul_ps(t, vb), gb = _mm256_mul_ps(t, va);
    ga = _mm256_add_ps(ga, _mm256_mul_ps(l2a, va));
    gb = _mm256_add_ps(gb, _mm256_mul_ps(l2bc, vb));
    const __m256 ua = _mm256_add_ps(load8(qab, qac), _mm256_mul_ps(ga, ga));
    const __m256 ub = _mm256_add_ps(load8(qb, qc), _mm256_mul_ps(gb, gb));
    store8(qab, qac, ua);
    store8(qb, qc, ub);
    va = _mm256_sub_ps(va, _mm256_mul_ps(_mm256_mul_ps(step, _mm256_rsqrt_ps(_mm256_add_ps(ua, eps))), ga));
    vb = _mm256_sub_ps(vb, _mm256_mul_ps(_mm256_mul_ps(step, _mm256_rsqrt_ps(_mm256_add_ps(ub, eps))), gb));
    store8(pab, pac, va);
    store8(pb, pc, vb);
}

/* One pair in the lower half alone: ffm_pair4's AdaGrad step. */
__attribute__((target("avx2"))) static inline void pair4(hog_weight *pa, hog_weight *qa, hog_weight *pb,
                                                         hog_weight *qb, __m128 t, __m128 l2a, __m128 l2b,
                                                         __m128 step, __m128 eps)
{
    __m128 va = load4(pa), vb = load4(pb);
    __m128 ga = _mm_mul_ps(t, vb), gb = _mm_mul_ps(t, va);
    ga = _mm_add_ps(ga, _mm_mul_ps(l2a, va));
    gb = _mm_add_ps(gb, _mm_mul_ps(l2b, vb));
    const __m128 ua = _mm_add_ps(load4(qa), _mm_mul_ps(ga, ga)), ub = _mm_add_ps(load4(qb), _mm_mul_ps(gb, gb));
    store4(qa, ua);
    store4(qb, ub);
    va = _mm_sub_ps(va, _mm_mul_ps(_mm_mul_ps(step, _mm_rsqrt_ps(_mm_add_ps(ua, eps))), ga));
    vb = _mm_sub_ps(vb, _mm_mul_ps(_mm_mul_ps(step, _mm_rsqrt_ps(_mm_add_ps(ub, eps))), gb));
    store4(pa, va);
    store4(pb, vb);
}

__attribute__((target("avx2"))) void hog_ffm_step_avx2(const ffm_step_row *r, uint32_t a)
{
    const uint32_t F = r->F, n = r->n, fa = r->field[a];
    hog_weight *const wa = r->w[a], *const aa = r->acc[a];
    const float ta = r->rg * r->val[a];
    const __m256 step = _mm256_set1_ps(r->step), eps = _mm256_set1_ps(r->eps), l2a = _mm256_set1_ps(r->l2c[a]);
    uint32_t b = a + 1;
    /* Two pairs a step where their four factor vectors are apart: a row
     * with a field twice, or a feature twice, steps those pairs one by one,
     * as the sequence of single pairs would. */
    for (; b + 1 < n; b += 2) {
        const uint32_t c = b + 1;
        const size_t ob = (size_t)r->field[b] * F, oc = (size_t)r->field[c] * F, of = (size_t)fa * F;
        hog_weight *const wb = r->w[b], *const wc = r->w[c];
        if (ob == oc || wb == wc || wb == wa || wc == wa)
            break;
        const __m256 t = _mm256_set_m128(_mm_set1_ps(ta * r->val[c]), _mm_set1_ps(ta * r->val[b]));
        const __m256 l2bc = _mm256_set_m128(_mm_set1_ps(r->l2c[c]), _mm_set1_ps(r->l2c[b]));
        for (uint32_t f = 0; f < F; f += 4)
            pair8(wa + ob + f, aa + ob + f, wa + oc + f, aa + oc + f, wb + of + f, r->acc[b] + of + f, wc + of + f,
                  r->acc[c] + of + f, t, l2a, l2bc, step, eps);
    }
    const __m128 step4 = _mm256_castps256_ps128(step), eps4 = _mm256_castps256_ps128(eps);
    const __m128 l2a4 = _mm256_castps256_ps128(l2a);
    for (; b < n; b++) {
        const size_t ob = (size_t)r->field[b] * F, of = (size_t)fa * F;
        const __m128 t = _mm_set1_ps(ta * r->val[b]), l2b = _mm_set1_ps(r->l2c[b]);
        for (uint32_t f = 0; f < F; f += 4)
            pair4(wa + ob + f, aa + ob + f, r->w[b] + of + f, r->acc[b] + of + f, t, l2a4, l2b, step4, eps4);
    }
    /* The caller's code is SSE: no false dependency on the upper halves
     * (see util_hash_avx2.c). */
    _mm256_zeroupper();
}
#else
/* The sanitizer builds keep every weight access a C11 atomic: update_ffm
 * never calls this there. */
void hog_ffm_step_avx2(const ffm_step_row *r, uint32_t a)
{
    (void)r;
    (void)a;
}
#endif
