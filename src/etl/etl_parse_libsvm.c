/* etl_parse_libsvm.c: the libsvm / svmlight line parser, with a vector path for the usual pair, and the index base of a libsvm head. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "etl_parse.h"

#if defined(__SSSE3__)
#include <tmmintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ===================================================================== *
 *  libsvm / svmlight:  label [qid:N] idx:val idx:val ... [# comment]
 *
 *  With hash_bits > 0 the index (after index_base) is hashed as its 4
 *  little-endian bytes. The order check applies to the indices as written;
 *  hashed indices that collide are summed.
 * ===================================================================== */

/* The decimal digits at p (not past end) as an index; an index past
 * UINT32_MAX comes back as UINT32_MAX + 1. Returns the end of the digits. */
static HOG_ALWAYS_INLINE const char *scan_index(const char *p, const char *end, const char *lim,
                                                uint64_t *out)
{
    if (HOG_LIKELY(lim - p >= 8)) {
        unsigned n = digits8(p, end, out);
        if (HOG_LIKELY(n < 8))
            return p + n;
    }
    uint64_t v = 0;
    for (; p < end && is_digit(*p); p++)
        if (v <= UINT32_MAX)
            v = v * 10 + (uint64_t)(*p - '0');
    *out = v > UINT32_MAX ? (uint64_t)UINT32_MAX + 1 : v;
    return p;
}

/* ===================================================================== *
 *  The usual libsvm pair, "digits:[-]digits[.digits]", from one 16-byte
 *  load: masks of its spaces, colons, minus signs, dots and digits give
 *  the pair's end first, so the next pair's start hangs only on that (a
 *  load, a compare, a count) and consecutive pairs overlap in the CPU;
 *  the checks and the digits come from the same masks. With SSSE3 the
 *  digits of both numbers are gathered by one shuffle each and combined by
 *  multiply-adds (bench_parse, one pinned core: 1.17x reading the three runs
 *  of digits one after another, word at a time).
 * ===================================================================== */

/* Bit k of each: byte p[k] is a space, a colon, ... */
typedef struct pair_masks {
    unsigned space, colon, minus, dot, digit;
} pair_masks;

static HOG_ALWAYS_INLINE void masks16(const char *p, pair_masks *m)
{
#if defined(__SSE2__)
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    m->space = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')));
    m->colon = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(':')));
    m->minus = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('-')));
    m->dot = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('.')));
    /* byte - '0' below 10 unsigned: a signed compare once the top bit is flipped */
    __m128i d = _mm_xor_si128(_mm_sub_epi8(v, _mm_set1_epi8('0')), _mm_set1_epi8((char)0x80));
    m->digit = (unsigned)_mm_movemask_epi8(_mm_cmplt_epi8(d, _mm_set1_epi8((char)(0x80 + 10))));
#else
    memset(m, 0, sizeof(*m));
    for (unsigned k = 0; k < 16; k++) {
        m->space |= (unsigned)(p[k] == ' ') << k;
        m->colon |= (unsigned)(p[k] == ':') << k;
        m->minus |= (unsigned)(p[k] == '-') << k;
        m->dot |= (unsigned)(p[k] == '.') << k;
        m->digit |= (unsigned)is_digit(p[k]) << k;
    }
#endif
}

/* 1 << 8 * (8 - k): multiplying by it moves the k low bytes of a word to
 * its top (a multiply is one instruction, a shift by a count three). */
static const uint64_t to_top[9] = {0,           1ULL << 56, 1ULL << 48, 1ULL << 40, 1ULL << 32,
                                   1ULL << 24, 1ULL << 16, 1ULL << 8,  1};

/* The index of a pair whose colon is at p[c] (c in 1..8, the bytes before
 * it digits), for the paths that do not gather digits with pshufb. */
static HOG_ALWAYS_INLINE uint64_t pair_index(const char *p, unsigned c)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return swar_combine((w & 0x0f0f0f0f0f0f0f0fULL) * to_top[c]);
}

#if defined(__SSSE3__)
/* pshufb controls: index_shuffle[c] moves the c index digits that start a
 * pair to bytes 0..7, right-aligned; value_shuffle[f][n], for a vector
 * whose byte 15 is the pair's last, moves the value's n digits to bytes
 * 8..15, right-aligned, stepping over the dot f digits from the end (f = 9:
 * no dot). 0x80 writes a zero. */
#define IX_(k, c) ((k) < 8 && (k) >= 8 - (c) ? (k) + (c) - 8 : 0x80)
#define IX(c)                                                                                      \
    {IX_(0, c), IX_(1, c), IX_(2, c),  IX_(3, c),  IX_(4, c),  IX_(5, c),  IX_(6, c),  IX_(7, c),  \
     IX_(8, c), IX_(9, c), IX_(10, c), IX_(11, c), IX_(12, c), IX_(13, c), IX_(14, c), IX_(15, c)}
#define VX_(k, f, n) ((k) < 16 - (n) ? 0x80 : (k) - ((f) < 9 && (k) < 16 - (f)))
#define VX(f, n)                                                                                   \
    {VX_(0, f, n),  VX_(1, f, n),  VX_(2, f, n),  VX_(3, f, n),  VX_(4, f, n),  VX_(5, f, n),      \
     VX_(6, f, n),  VX_(7, f, n),  VX_(8, f, n),  VX_(9, f, n),  VX_(10, f, n), VX_(11, f, n),     \
     VX_(12, f, n), VX_(13, f, n), VX_(14, f, n), VX_(15, f, n)}
#define VXS(f) {VX(f, 0), VX(f, 1), VX(f, 2), VX(f, 3), VX(f, 4), VX(f, 5), VX(f, 6), VX(f, 7), VX(f, 8)}
static const uint8_t index_shuffle[9][16] = {IX(0), IX(1), IX(2), IX(3), IX(4), IX(5), IX(6), IX(7), IX(8)};
static const uint8_t value_shuffle[10][9][16] = {VXS(0), VXS(1), VXS(2), VXS(3), VXS(4),
                                                 VXS(5), VXS(6), VXS(7), VXS(8), VXS(9)};
#undef IX_
#undef IX
#undef VX_
#undef VX
#undef VXS

static HOG_ALWAYS_INLINE __m128i load16(const void *p)
{
    return _mm_loadu_si128((const __m128i *)p);
}

/* For a value of nv bytes ending a pair of len with more than 8 digits:
 * zeros that lead it add nothing ("0.00392157"), so if the bytes of the
 * digits past 8 are all '0' (and so before any dot), *nv drops them and
 * the last 8 digits are read. */
static HOG_ALWAYS_INLINE int drop_zeros(const char *p, unsigned len, unsigned hasdot, unsigned *nv)
{
    unsigned k = *nv - hasdot - 8, lead = (1u << k) - 1;
    if (((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(load16(p), _mm_set1_epi8('0'))) >> (len - *nv) & lead) != lead)
        return 0;
    *nv -= k;
    return 1;
}
#else
/* low_bytes[k]: the k low bytes of a word */
static const uint64_t low_bytes[9] = {0,          0xffULL,          0xffffULL,
                                      0xffffffULL, 0xffffffffULL,    0xffffffffffULL,
                                      0xffffffffffffULL, 0xffffffffffffffULL, ~0ULL};
#endif

/* Reads the pair at p (p < le; 32 bytes readable at p and 16 before it):
 * returns its length, up to the blank or the line end that follows it,
 * with *idx and *v set; or 0 for anything else (a tab, an exponent, a
 * comment, more than 8 index digits, a pair longer than 15 bytes), for
 * the general path to read or to report. */
static HOG_ALWAYS_INLINE unsigned pair_fast(const char *p, const char *le, uint64_t *idx, float *v)
{
    pair_masks m;
    masks16(p, &m);
    unsigned len = (unsigned)__builtin_ctz(m.space | 0x10000u);
    if ((size_t)(le - p) < len)
        len = (unsigned)(le - p);
    /* The bytes that are not digits must be, in order: a colon after 1 to
     * 8 digits, perhaps a minus right after it, perhaps one dot. */
    unsigned nd = ~m.digit & 0xffffu >> (16 - len);
    unsigned cm = nd & -nd; /* the first non-digit */
    unsigned rest = nd ^ cm;
    unsigned mm = rest & m.minus & cm << 1;
    rest ^= mm;
    if (HOG_UNLIKELY(!(cm & m.colon & 0x1feu) || (rest & ~m.dot) || (rest & (rest - 1)) || len > 15))
        return 0;
    unsigned c = (unsigned)__builtin_ctz(cm), neg = mm != 0, hasdot = rest != 0;
    unsigned nv = len - (c + 1 + neg);                           /* the value's bytes */
    unsigned nf = hasdot ? len - 1 - (unsigned)__builtin_ctz(rest) : 0; /* its decimals */
    if (HOG_UNLIKELY(nv == hasdot || nf > 8)) /* no digit; 10^-nf not in pow10_neg */
        return 0;

    uint64_t mant;
#if defined(__SSSE3__)
    if (HOG_LIKELY(nv - hasdot <= 8) || drop_zeros(p, len, hasdot, &nv)) {
        __m128i dig = _mm_or_si128(_mm_shuffle_epi8(load16(p), load16(index_shuffle[c])),
                                   _mm_shuffle_epi8(load16(p + len - 16),
                                                    load16(value_shuffle[hasdot ? nf : 9][nv - hasdot])));
        dig = _mm_and_si128(dig, _mm_set1_epi8(0x0f));
        dig = _mm_maddubs_epi16(dig, _mm_set1_epi16(0x010a));  /* 10 a + b */
        dig = _mm_madd_epi16(dig, _mm_set1_epi32(0x00010064)); /* 100 ab + cd */
        dig = _mm_packs_epi32(dig, dig);                        /* each below 10^4 */
        dig = _mm_madd_epi16(dig, _mm_set1_epi32(0x00012710)); /* 10^4 abcd + efgh */
        uint64_t two = (uint64_t)_mm_cvtsi128_si64(dig);
        *idx = (uint32_t)two;
        mant = two >> 32;
    } else
#else
    if (HOG_LIKELY(nv <= 8)) {
        /* the 8 bytes that end the pair as 0..9, the dot squeezed out (the
         * bytes below it move up one) and what precedes the value cleared */
        *idx = pair_index(p, c);
        uint64_t w;
        memcpy(&w, p + len - 8, 8);
        w &= 0x0f0f0f0f0f0f0f0fULL;
        unsigned jw = hasdot ? 7 - nf : 0; /* the dot's byte in w */
        uint64_t below = w & low_bytes[jw], above = w & ~low_bytes[jw + hasdot];
        mant = swar_combine((below << 8 | above) & ~low_bytes[8 - (nv - hasdot)]);
    } else
#endif
    {
        *idx = pair_index(p, c);
        int n;
        const char *r = decimal_parts(p + c + 1, &mant, &nf, &n);
        if (!r || r != p + len)
            return 0;
    }
    float f = decimal_float(mant, nf);
    *v = neg ? -f : f;
    return len;
}

/* The line's last index, every pair read, is past the ceiling on features
 * (its indices increase, so the last is the largest): the first pair past
 * it is found again from the first pair, at p, for its column. A bound,
 * which on_error skip does not skip. Checked once a line rather than once
 * a pair: a compare in the pair loop cost 6% of its instructions. */
static int ceiling_fail(hog_parse_ctx *c, const char *p, uint64_t cap)
{
    const char *le = c->le, *q = p;
    uint64_t idx = 0;
    for (; p < le; p = skip_blanks(q, le)) {
        q = scan_index(p, le, c->lim, &idx);
        if (q > p && q < le && *q == ':' && idx >= cap)
            break;
        while (q < le && !is_blank(*q))
            q++;
    }
    return hog_parse_ceiling_fail(c, p, q);
}

/* Returns 1 with a row added, 0 for a line with no row, or an error. */
int hog_parse_libsvm_line(hog_parse_ctx *c, const char *line, const char *le)
{
    if (le <= line)
        return 0;
    /* A '#' starts a comment: found where a token or the gap after a number
     * begins, rather than by a search of every line beforehand. */
    const char *p = skip_blanks(line, le);
    if (p == le || *p == '#')
        return 0;
    hog_rows *o = c->out;
    int rc = hog_rows_reserve(o, (uint64_t)(le - p) / 4 + 1);
    if (rc < 0)
        return rc;
    const uint64_t start = o->nnz;
    const unsigned base = c->plan->index_base;
    const int hashed = c->plan->hash_bits > 0;
    uint32_t *const index = o->index;
    float *const value = o->value;
    uint64_t nnz = start;

    double d;
    const char *e = scan_number(p, le, c->lim, &d);
    if (!e || (e < le && !is_blank(*e) && *e != '#'))
        return hog_parse_fail(c, p, "a number", NULL);
    float label = 0;
    if ((rc = finite_value(c, p, d, &label)) < 0)
        return rc;
    const char *const pairs = e;

    int first = 1;
    int64_t prev = (int64_t)base - 1; /* an index must be above it, so at least base */
    /* the fast path's pairs start at least 16 bytes into the chunk and 32 before its end */
    const char *fast_end = c->lim - c->first >= 48 ? c->lim - 32 : c->first;
    for (p = skip_blanks(e, le); p < le; p = skip_blanks(e, le), first = 0) {
        if (HOG_UNLIKELY(*p == '#')) { /* the rest of the line is a comment */
            le = c->le = p;
            break;
        }
        /* The usual pairs, one pair_fast each, until one is not usual. */
        for (const char *f = p; HOG_LIKELY(f <= fast_end) && f - c->first >= 16;) {
            uint64_t idx;
            float v;
            unsigned n = pair_fast(f, le, &idx, &v);
            if (HOG_UNLIKELY(!n || (int64_t)idx <= prev))
                break;
            prev = (int64_t)idx;
            if (v != 0.0f) {
                uint32_t ix = (uint32_t)idx - base;
                if (hashed)
                    ix = hog_murmur3_u32(ix, 0) & c->mask;
                index[nnz] = ix;
                value[nnz] = v;
                nnz++;
            }
            e = f + n;
            if (e == le) /* else a space ends the pair: the next one may start after it */
                break;
            f = e + 1;
        }
        if (e > p) /* the fast path read pairs from here: the loop goes on after them */
            continue;
        uint64_t idx;
        const char *q = scan_index(p, le, c->lim, &idx);
        if (HOG_UNLIKELY(q == p || q == le || *q != ':')) {
            if (first && le - p >= 4 && memcmp(p, "qid:", 4) == 0) {
                const char *s = p + 4;
                for (q = s; q < le && is_digit(*q); q++)
                    ;
                uint64_t qid = 0;
                for (const char *t = s; t < q && qid <= UINT32_MAX; t++)
                    qid = qid * 10 + (uint64_t)(*t - '0');
                if (q == s || (q < le && !is_blank(*q)) || qid > UINT32_MAX)
                    return hog_parse_fail(c, s, "a query id", NULL);
                e = q;
                continue;
            }
            return hog_parse_fail(c, p, "index:value", NULL);
        }
        if (HOG_UNLIKELY(idx > UINT32_MAX))
            return hog_parse_fail(c, p, "an index below 4294967296", NULL);
        if (HOG_UNLIKELY(idx < base)) {
            char what[sizeof(c->e.what)];
            if (c->plan->base_lines)
                snprintf(what, sizeof(what),
                         "an index of at least 1 (none is 0 in the first %llu lines: read as "
                         "1-based; hog_read_params.index_base 0 reads as written)",
                         (unsigned long long)c->plan->base_lines);
            return hog_parse_fail(c, p, c->plan->base_lines ? what : "an index of at least 1 (indices are 1-based)", "0");
        }
        /* Order is checked on every pair, stored or not (zeros are dropped). */
        if (HOG_UNLIKELY((int64_t)idx <= prev)) {
            char exp[48], found[16];
            snprintf(exp, sizeof(exp), "an index greater than %u", (unsigned)prev);
            snprintf(found, sizeof(found), "%u", (unsigned)idx);
            return hog_parse_fail(c, p, exp, found);
        }
        prev = (int64_t)idx;
        const char *vs = q + 1;
        e = scan_number(vs, le, c->lim, &d); /* stops at a '#' that ends the number */
        if (HOG_UNLIKELY(!e || (e < le && !is_blank(*e) && *e != '#')))
            return hog_parse_fail(c, vs, "a number", NULL);
        float v = (float)d;
        if (HOG_UNLIKELY(!isfinite(v)))
            return hog_parse_fail(c, vs, "a finite number", NULL);
        if (v != 0.0f) {
            uint32_t ix = (uint32_t)idx - base;
            if (hashed)
                ix = hog_murmur3_u32(ix, 0) & c->mask;
            index[nnz] = ix;
            value[nnz] = v;
            nnz++;
        }
    }
    /* An index as written must stay below the ceiling (hashed ones are
     * within the plan's 2^bits, checked against it once). */
    const uint64_t cap = c->plan->max_features + base;
    if (HOG_UNLIKELY(c->plan->max_features && !hashed && prev >= 0 && (uint64_t)prev >= cap))
        return ceiling_fail(c, skip_blanks(pairs, le), cap);
    o->nnz = nnz;
    if (hashed && (rc = hog_row_sort_merge(c, start)) < 0)
        return rc;
    hog_rows_push(o, label);
    return 1;
}

/* ===================================================================== *
 *  The index base of a libsvm head
 * ===================================================================== */

/* libsvm files are 1-based by the format's definition (LIBLINEAR, svmlight),
 * but many writers (scikit-learn's dump_svmlight_file among them) start at 0.
 * An index 0 anywhere in the head settles it as 0-based; a head without one
 * is taken as 1-based, and an index 0 met later is then an error that says
 * so (see hog_parse_libsvm_line), never a silent shift. *lines gets the
 * lines looked at. */
unsigned hog_text_plan_index_base(const char *head, size_t len, uint64_t *lines, const char **why)
{
    const char *p = head, *end = head + len;
    *lines = 0;
    *why = "no index 0 in the first MiB";
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *hash = memchr(p, '#', (size_t)(le - p));
        /* scikit-learn's dump_svmlight_file, given a comment, says which
         * (its files with column 0 always zero have no index 0 to show it) */
        if (hash == p && memmem(p, (size_t)(le - p), "indices are zero-based", 22)) {
            *why = "the file's header says its column indices are zero-based";
            return 0;
        }
        if (hash == p && memmem(p, (size_t)(le - p), "indices are one-based", 21)) {
            *why = "the file's header says its column indices are one-based";
            return 1;
        }
        const char *q = hash ? hash : le;
        (*lines)++;
        int first = 1;
        while (q > p) { /* tokens of [p, q), the label first */
            p = skip_blanks(p, q);
            const char *t = p;
            while (p < q && !is_blank(*p))
                p++;
            if (t == p)
                break;
            if (!first) {
                const char *d = t;
                while (d < p && *d == '0')
                    d++;
                if (d > t && d < p && *d == ':') {
                    *why = "an index 0 in the first MiB";
                    return 0;
                }
            }
            first = 0;
        }
        p = nl ? nl + 1 : end;
    }
    return 1;
}
