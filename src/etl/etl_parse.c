/* etl_parse.c: chunk parsers for libsvm, CSV and Vowpal Wabbit text that scan the raw buffer in place, for many threads at once. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl.h"

#if defined(__SSSE3__)
#include <tmmintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

/*
 * A chunk is a run of whole lines that is never copied or NUL-terminated:
 * every scan below is bounded by the end of its line, and lines are found
 * with memchr. Numbers take Clinger's exact fast path (no strtod) when they
 * can; rows go straight into the caller's growable CSR arrays, reserved once
 * per line, so the per-value loop has no capacity checks.
 *
 * The rules and the error wording are those of the first, line-by-line
 * reader that these parsers replaced, plus:
 *
 *  - Lines end at '\n'; trailing '\r's are dropped (CRLF files). A quoted CSV
 *    field cannot span lines: chunks are cut at line ends without looking at
 *    quotes, so a quote left open at the end of a line is an error.
 *  - Values equal to zero are not stored (a sparse row has no explicit zeros).
 *  - Empty CSV fields (policy): an empty numeric field is a missing value and
 *    stores nothing, as a zero would; an empty label is an error ("expected a
 *    number"); an empty categorical field stores nothing; an empty ignored
 *    field is ignored. "" (an empty quoted field) counts as empty.
 *  - A quoted CSV field holding a number is that number; a quoted field in a
 *    categorical column is its text with "" read as one quote.
 *  - CSV feature indices: numeric columns are numbered by their position
 *    among numeric columns. Categorical columns hash
 *    "name=value" into 2^bits (bits: hash_bits, or 18 if 0). With hash_bits
 *    0 those hashes are placed after the numeric columns (index = numeric
 *    column count + hash), so they never collide with a numeric column; with
 *    hash_bits > 0 numeric columns are hashed by name too, into the same
 *    2^bits space.
 *  - libsvm with hash_bits > 0: the index (after index_base) is hashed as
 *    its 4 little-endian bytes. The order check applies to the indices as
 *    written; hashed indices that collide are summed.
 *  - Vowpal Wabbit: features are hashed with the namespace's hash as seed
 *    (the default namespace seeds 0), every feature string is hashed (plain
 *    integers too), a namespace scale multiplies its values.
 *  - Rows that can hold one index twice (hashing, VW) are sorted by index
 *    and equal indices summed; a sum that is zero is dropped.
 */

/* The per-value helpers must be inlined into the line loops: a call per
 * number costs as much as the number. */
#define ALWAYS_INLINE inline __attribute__((always_inline))

#define SNIPPET_MAX 20
#define DEFAULT_STRING_BITS 18u
#define NO_STOP (-1)

_Static_assert(FLT_EVAL_METHOD == 0, "the exact number fast path needs IEEE double arithmetic");

static inline int is_blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

static inline int is_digit(char ch)
{
    return (unsigned)(ch - '0') < 10u;
}

static inline const char *skip_blanks(const char *p, const char *end)
{
    while (p < end && is_blank(*p))
        p++;
    return p;
}

/* ===================================================================== *
 *  Numbers
 * ===================================================================== */

static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* 10^-k rounded to double, for decimal_float. */
static const double pow10_neg[] = {1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8};

/* Below 5 * 2^24, m / 10^k is never exactly halfway between two floats
 * (that needs m = M * 5^k, k >= 1, with M odd and of 25 bits). */
#define FLOAT_TIE_MIN (5ULL << 24)

static const uint64_t pow10_int[] = {1ULL,
                                     10ULL,
                                     100ULL,
                                     1000ULL,
                                     10000ULL,
                                     100000ULL,
                                     1000000ULL,
                                     10000000ULL,
                                     100000000ULL,
                                     1000000000ULL,
                                     10000000000ULL,
                                     100000000000ULL,
                                     1000000000000ULL,
                                     10000000000000ULL,
                                     100000000000000ULL,
                                     1000000000000000ULL,
                                     10000000000000000ULL};

/* strtod_l needs a C locale so '.' is the decimal point whatever the
 * program's locale; it is made once for the process. If it cannot be made,
 * strtod under the process locale is the fallback (the C locale unless the
 * program called setlocale). */
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale;

static void c_locale_make(void)
{
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* The rare forms: many digits, large exponents, subnormals. [s, p) has
 * already been checked against the grammar, so strtod must take all of it. */
static const char *number_slow(const char *s, const char *p, double *out)
{
    size_t n = (size_t)(p - s);
    char small[128];
    char *buf = n < sizeof(small) ? small : hog_malloc(n + 1);
    if (!buf)
        return NULL;
    memcpy(buf, s, n);
    buf[n] = '\0';
    pthread_once(&c_locale_once, c_locale_make);
    char *e;
    double d = c_locale != (locale_t)0 ? strtod_l(buf, &e, c_locale) : strtod(buf, &e);
    const char *r = e == buf + n ? p : NULL;
    if (buf != small)
        hog_free(buf);
    *out = d;
    return r;
}

/* Parses [+-] digits [. digits] [(e|E) [+-] digits], with digits on at least
 * one side of the point, at s and not past end; returns where it ends, or
 * NULL if no number starts at s. Hex floats, "inf" and "nan", which strtod
 * would take and no data file means, are refused by this grammar.
 *
 * Most numbers in data files have few digits and a small exponent: with at
 * most 19 significant digits the mantissa m is exact in a uint64; if also
 * m <= 2^53 and |exponent| <= 22, both m and 10^|exponent| are exact
 * doubles, and one IEEE multiply or divide rounds their product correctly:
 * the double strtod returns (Clinger's fast path). Larger exponents whose
 * excess over 22 fits in m's headroom are shifted into m first. Everything
 * else goes to strtod_l. */
static __attribute__((noinline)) const char *scan_number_general(const char *s, const char *end,
                                                                  double *out)
{
    const char *p = s;
    int neg = 0;
    if (p < end && (*p == '-' || *p == '+')) {
        neg = *p == '-';
        p++;
    }
    const char *digits = p;
    while (p < end && *p == '0')
        p++;
    uint64_t m = 0;
    const char *sig = p;
    while (p < end && is_digit(*p))
        m = m * 10 + (uint64_t)(*p++ - '0');
    size_t nsig = (size_t)(p - sig);
    int any = p > digits;
    int64_t exp10 = 0;
    if (p < end && *p == '.') {
        const char *frac = ++p;
        if (nsig == 0) /* 0.000123: zeros before the first significant digit */
            while (p < end && *p == '0')
                p++;
        const char *fsig = p;
        while (p < end && is_digit(*p))
            m = m * 10 + (uint64_t)(*p++ - '0');
        nsig += (size_t)(p - fsig);
        exp10 = -(int64_t)(p - frac);
        any |= p > frac;
    }
    if (!any)
        return NULL;
    if (p < end && (*p == 'e' || *p == 'E')) {
        const char *q = p + 1;
        int eneg = 0;
        if (q < end && (*q == '-' || *q == '+')) {
            eneg = *q == '-';
            q++;
        }
        if (q < end && is_digit(*q)) { /* else the 'e' is not part of the number */
            int64_t e = 0;
            for (; q < end && is_digit(*q); q++)
                if (e < 100000)
                    e = e * 10 + (*q - '0');
            exp10 += eneg ? -e : e;
            p = q;
        }
    }
    if (HOG_LIKELY(nsig <= 19)) {
        if (m == 0) {
            *out = neg ? -0.0 : 0.0;
            return p;
        }
        if (HOG_LIKELY(m <= (1ULL << 53))) {
            double d;
            if (exp10 >= -22 && exp10 <= 22) {
                d = exp10 < 0 ? (double)m / pow10_exact[-exp10] : (double)m * pow10_exact[exp10];
                *out = neg ? -d : d;
                return p;
            }
            if (exp10 > 22 && exp10 <= 22 + 16 && m <= (1ULL << 53) / pow10_int[exp10 - 22]) {
                d = (double)(m * pow10_int[exp10 - 22]) * 1e22;
                *out = neg ? -d : d;
                return p;
            }
        }
    }
    return number_slow(s, p, out);
}

/* Digits eight at a time in a 64-bit word (SWAR): eight bytes are read at
 * p whatever end says (the caller knows they are readable), tested at once,
 * and combined with three multiplies, so a run of digits of any length up
 * to 8 costs no branch per digit. */
/* The 8 bytes at p less '0' each; *n: how many of them lead as digits (a
 * digit becomes 0..9; any other byte fails (x | x + 0x76) & 0x80; a borrow
 * or carry crosses only into bytes after a non-digit, which are not used). */
static ALWAYS_INLINE uint64_t swar_digits(const char *p, unsigned *n)
{
    uint64_t v;
    memcpy(&v, p, 8);
    uint64_t x = v - 0x3030303030303030ULL;
    uint64_t bad = (x | (x + 0x7676767676767676ULL)) & 0x8080808080808080ULL;
    *n = bad ? (unsigned)__builtin_ctzll(bad) >> 3 : 8;
    return x;
}

/* The number in the 8 bytes of x (each 0..9, the most significant at the
 * lowest address; leading bytes may be 0), by three multiplies. */
static ALWAYS_INLINE uint64_t swar_combine(uint64_t x)
{
    x = (x * 10 + (x >> 8)) & 0x00ff00ff00ff00ffULL;
    x = (x * 100 + (x >> 16)) & 0x0000ffff0000ffffULL;
    return (x * 10000 + (x >> 32)) & 0xffffffffULL;
}

/* The value of the n (1..8) leading digits of x from swar_digits: they are
 * moved to the top, then pairs, quads and octets combined. */
static ALWAYS_INLINE uint64_t swar_value(uint64_t x, unsigned n)
{
    if (n == 1) /* "0.xxx", labels: one digit is common enough to skip the rest */
        return x & 0xff;
    if (n <= 4) { /* the low half is enough */
        uint32_t y = (uint32_t)x << (8 * (4 - n));
        y = (y * 10 + (y >> 8)) & 0x00ff00ffu;
        return (y * 100 + (y >> 16)) & 0xffffu;
    }
    return swar_combine(x << 8 * (8 - n));
}

static ALWAYS_INLINE unsigned digits8(const char *p, const char *end, uint64_t *val)
{
    unsigned n;
    uint64_t x = swar_digits(p, &n);
    if (HOG_UNLIKELY((size_t)(end - p) < n))
        n = (unsigned)(end - p);
    *val = n ? swar_value(x, n) : 0;
    return n;
}

/* The usual number, [-] up to 7 digits [. up to 7 digits] without an
 * exponent, in a few word operations: returns its end, or NULL for anything
 * else (the caller then takes scan_number_general), with the number as
 * (-1)^neg * m / 10^nf: at most 14 digits, so m is exact below 2^53 and
 * far from float overflow. 32 bytes must be readable at p; the caller
 * checks that the end is inside its field. */
static ALWAYS_INLINE const char *decimal_parts(const char *p, uint64_t *m_out, unsigned *nf_out, int *neg_out)
{
    unsigned n1, nf = 0;
    int neg = *p == '-';
    p += neg;
    uint64_t x = swar_digits(p, &n1);
    if (HOG_UNLIKELY(n1 == 8))
        return NULL;
    uint64_t m = n1 ? swar_value(x, n1) : 0;
    p += n1;
    if (*p == '.') {
        x = swar_digits(++p, &nf);
        if (HOG_UNLIKELY(nf == 8))
            return NULL;
        if (nf)
            m = m * pow10_int[nf] + swar_value(x, nf);
        p += nf;
    }
    if (HOG_UNLIKELY((n1 | nf) == 0 || *p == 'e' || *p == 'E'))
        return NULL;
    *m_out = m;
    *nf_out = nf;
    *neg_out = neg;
    return p;
}

/* m / 10^nf (m below 10^14, nf <= 8 with m below 10^8, else nf <= 7) as
 * the float (float)strtod gives, mostly without a divide (the longest step
 * of a libsvm pair: 15% of its time). m times 10^-nf in double is within
 * about 2^-52 of q = m / 10^nf, which is at least 3e-15 (relative; 3e-16
 * for nf = 8 with 8 digits) away from any point where rounding to float
 * changes its mind, unless it is that point: a float midpoint M 2^e has an
 * odd 25-bit M, and |q - M 2^e| / M 2^e >= 1 / (10^nf M) when not zero. q
 * can be a midpoint only from FLOAT_TIE_MIN up; there the divide,
 * correctly rounded, keeps it exact and the float rounds it to even, as
 * (float)strtod does. */
static ALWAYS_INLINE float decimal_float(uint64_t m, unsigned nf)
{
    double d = (double)(int64_t)m;
    d = HOG_LIKELY(m < FLOAT_TIE_MIN) ? d * pow10_neg[nf] : d / pow10_exact[nf];
    return (float)d;
}

/* scan_number_general for the usual forms ([-] up to 7 digits [. up to 7
 * digits], no exponent: at most 14 digits, exact below 2^53, so one divide
 * by an exact power of ten is correctly rounded). lim is how far bytes may
 * be read (the chunk's end), end where the number must stop. */
static ALWAYS_INLINE const char *
scan_number(const char *s, const char *end, const char *lim, double *out)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const char *p = s;
    int neg = p < end && *p == '-';
    p += neg;
    if (HOG_LIKELY(lim - p >= 16)) {
        uint64_t m, f;
        unsigned ni = digits8(p, end, &m), nf = 0;
        if (HOG_LIKELY(ni < 8)) {
            const char *q = p + ni;
            if (q < end && *q == '.') {
                q++;
                nf = digits8(q, end, &f);
                m = m * pow10_int[nf] + f;
                q += nf;
            }
            if (HOG_LIKELY((ni | nf) != 0 && nf < 8 && !(q < end && (*q == 'e' || *q == 'E')))) {
                double d = (double)m / pow10_exact[nf];
                *out = neg ? -d : d;
                return q;
            }
        }
    }
#else
    (void)lim;
#endif
    return scan_number_general(s, end, out);
}

const char *hog_parse_double(const char *s, const char *end, double *out)
{
    return scan_number(s, end, end, out);
}

/* ===================================================================== *
 *  Feature hashing: MurmurHash3 x86_32 (Austin Appleby, public domain),
 *  written from its description: 4-byte little-endian blocks, then the
 *  tail, then the length and the final avalanche.
 * ===================================================================== */

#define MURMUR_C1 0xcc9e2d51u
#define MURMUR_C2 0x1b873593u

static inline uint32_t rotl32(uint32_t x, int r)
{
    return (x << r) | (x >> (32 - r));
}

static inline uint32_t murmur_k(uint32_t k)
{
    k *= MURMUR_C1;
    k = rotl32(k, 15);
    return k * MURMUR_C2;
}

static inline uint32_t murmur_block(uint32_t h, uint32_t k)
{
    h ^= murmur_k(k);
    h = rotl32(h, 13);
    return h * 5 + 0xe6546b64u;
}

static inline uint32_t murmur_final(uint32_t h, uint32_t len)
{
    h ^= len;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

static uint32_t murmur3_32(const char *s, size_t len, uint32_t seed)
{
    const unsigned char *b = (const unsigned char *)s;
    uint32_t h = seed;
    size_t n4 = len / 4;
    for (size_t i = 0; i < n4; i++, b += 4)
        h = murmur_block(h, (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
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
        h ^= murmur_k(k);
        break;
    default:
        break;
    }
    return murmur_final(h, (uint32_t)len);
}

/* The same hash fed piece by piece: "name=value" for a categorical field
 * without building the string, quotes unescaped on the way. */
typedef struct murmur_stream {
    uint32_t h, carry, len;
    unsigned n;
} murmur_stream;

static void murmur_feed(murmur_stream *m, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        m->carry |= (uint32_t)(unsigned char)s[i] << (8 * m->n);
        if (++m->n == 4) {
            m->h = murmur_block(m->h, m->carry);
            m->carry = 0;
            m->n = 0;
        }
    }
    m->len += (uint32_t)len;
}

static uint32_t murmur_end(const murmur_stream *m)
{
    uint32_t h = m->h;
    if (m->n)
        h ^= murmur_k(m->carry);
    return murmur_final(h, m->len);
}

static inline uint32_t bits_mask(unsigned bits)
{
    return bits == 0 || bits >= 32 ? UINT32_MAX : (1u << bits) - 1;
}

/* bits 0 (or 32 and more) keeps the whole 32-bit hash. */
uint32_t hog_hash_feature(const char *s, size_t len, uint32_t seed, unsigned bits)
{
    return murmur3_32(s, len, seed) & bits_mask(bits);
}

/* ===================================================================== *
 *  Rows
 * ===================================================================== */

void hog_rows_clear(hog_rows *r)
{
    r->rows = 0;
    r->nnz = 0;
    r->lines = 0;
    r->skipped = 0;
    r->kept = 0;
    if (r->ptr)
        r->ptr[0] = 0;
}

void hog_rows_free(hog_rows *r)
{
    if (!r)
        return;
    hog_free(r->ptr);
    hog_free(r->index);
    hog_free(r->value);
    hog_free(r->label);
    hog_free(r->weight);
    memset(r, 0, sizeof(*r));
}

/* Makes room for one more row and `more` values, growing geometrically so
 * a chunk costs O(log n) reallocations. ptr holds cap_rows + 1 entries.
 * Offsets are 32-bit: a chunk whose values pass 2^32 cannot be held (a
 * chunk is megabytes; that is gigabytes of values), reported as -ENOMEM. */
static int rows_reserve(hog_rows *r, uint64_t more)
{
    if (HOG_UNLIKELY(r->rows + 1 > r->cap_rows || !r->ptr || (r->weighted && !r->weight))) {
        uint64_t cap = HOG_MAX(HOG_MAX(r->cap_rows * 2, r->rows + 1), 1024);
        uint32_t *ptr = hog_realloc(r->ptr, (cap + 1) * sizeof(uint32_t));
        if (!ptr)
            return -ENOMEM;
        if (!r->ptr)
            ptr[0] = 0;
        r->ptr = ptr;
        float *label = hog_realloc(r->label, cap * sizeof(float));
        if (!label)
            return -ENOMEM;
        r->label = label;
        if (r->weighted) {
            float *weight = hog_realloc(r->weight, cap * sizeof(float));
            if (!weight)
                return -ENOMEM;
            r->weight = weight;
        }
        r->cap_rows = cap;
    }
    if (HOG_UNLIKELY(r->nnz + more > r->cap_nnz)) {
        if (r->nnz + more > UINT32_MAX)
            return -ENOMEM;
        uint64_t cap = HOG_MAX(HOG_MAX(r->cap_nnz * 2, r->nnz + more), 4096);
        cap = HOG_MIN(cap, (uint64_t)UINT32_MAX);
        uint32_t *index = hog_realloc(r->index, cap * sizeof(uint32_t));
        if (!index)
            return -ENOMEM;
        r->index = index;
        float *value = hog_realloc(r->value, cap * sizeof(float));
        if (!value)
            return -ENOMEM;
        r->value = value;
        r->cap_nnz = cap;
    }
    return 0;
}

static inline void rows_push(hog_rows *r, float label)
{
    r->label[r->rows] = label;
    r->ptr[++r->rows] = (uint32_t)r->nnz;
}

/* ===================================================================== *
 *  Parser state and located errors
 * ===================================================================== */

typedef struct parse_ctx {
    const hog_text_plan *plan;
    hog_rows *out;
    uint32_t mask;       /* hash_bits (or 18 for strings) as a mask */
    /* the line being parsed, [line, le) without its end of line */
    const char *line;
    const char *le;
    const char *first;   /* the chunk's start: reads may not go before it */
    const char *lim;     /* the chunk's end: how far bytes may be read */
    uint64_t line_no;
    int stop;            /* the separator a snippet stops at, or NO_STOP */
    hog_text_error e;    /* the error of the current line */
    /* sorting scratch (rows that may hold an index twice) */
    uint64_t *keys;
    float *vals;
    size_t scratch_cap;
    /* CSV tables (the plan's, or made for a plan made by hand) */
    const uint8_t *kind;
    const uint32_t *feature;
    uint32_t cat_offset; /* where categorical hashes start when hash_bits is 0 */
    int csv_merge;       /* rows may hold an index twice or out of order */
    uint8_t *own_kind;
    uint32_t *own_feature;
} parse_ctx;

/* Writes the text at `at` as the message's "found" part: up to SNIPPET_MAX
 * characters of the token (up to a blank or the separator), quoted; a lone
 * separator when the token is empty; "end of line" at the end. */
static void snippet(const char *at, const char *le, int stop, char *out, size_t len)
{
    if (at >= le) {
        snprintf(out, len, "end of line");
        return;
    }
    char tok[SNIPPET_MAX + 4];
    size_t n = 0;
    const char *p = at;
    size_t max = is_blank(*p) || *p == stop ? 1 : SNIPPET_MAX;
    do {
        unsigned char ch = (unsigned char)*p++;
        tok[n++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    } while (n < max && p < le && !is_blank(*p) && *p != stop);
    if (n == SNIPPET_MAX && p < le && !is_blank(*p) && *p != stop) {
        memcpy(tok + n, "...", 3);
        n += 3;
    }
    tok[n] = '\0';
    snprintf(out, len, "'%s'", tok);
}

/* Records "expected X, found Y" at `at` (found == NULL: a snippet of the
 * text there) and returns HOG_EFORMAT. */
static int fail(parse_ctx *c, const char *at, const char *expected, const char *found)
{
    char buf[SNIPPET_MAX + 16];
    if (!found) {
        snippet(at, c->le, c->stop, buf, sizeof(buf));
        found = buf;
    }
    size_t col = (size_t)(at - c->line) + 1;
    c->e.line = c->line_no;
    c->e.column = col > UINT32_MAX ? UINT32_MAX : (uint32_t)col;
    snprintf(c->e.what, sizeof(c->e.what), "expected %s, found %s", expected, found);
    return HOG_EFORMAT;
}

/* A number that must fill [s, e) (e: its end as found by the caller) as a finite float. */
static int finite_value(parse_ctx *c, const char *s, double d, float *out)
{
    float f = (float)d; /* beyond FLT_MAX this is inf, refused here */
    if (HOG_UNLIKELY(!isfinite(f)))
        return fail(c, s, "a finite number", NULL);
    *out = f;
    return 0;
}

/* ---- sorting a row's (index, value) pairs ---- */

static int scratch_reserve(parse_ctx *c, size_t n)
{
    if (n <= c->scratch_cap)
        return 0;
    size_t cap = HOG_MAX(n, c->scratch_cap * 2);
    uint64_t *k = hog_realloc(c->keys, cap * sizeof(uint64_t));
    if (!k)
        return -ENOMEM;
    c->keys = k;
    float *v = hog_realloc(c->vals, cap * sizeof(float));
    if (!v)
        return -ENOMEM;
    c->vals = v;
    c->scratch_cap = cap;
    return 0;
}

static void sift_down(uint64_t *a, size_t i, size_t n)
{
    for (;;) {
        size_t m = i, l = 2 * i + 1, r = l + 1;
        if (l < n && a[l] > a[m])
            m = l;
        if (r < n && a[r] > a[m])
            m = r;
        if (m == i)
            return;
        uint64_t t = a[i];
        a[i] = a[m];
        a[m] = t;
        i = m;
    }
}

/* Introsort on distinct keys: quicksort with a median of three, insertion
 * sort for short runs, heapsort when the recursion gets too deep (so an
 * adversarial row cannot make it quadratic). */
static void sort_u64(uint64_t *a, size_t n, int depth)
{
    while (n > 24) {
        if (depth-- == 0) {
            for (size_t i = n / 2; i-- > 0;)
                sift_down(a, i, n);
            for (size_t i = n - 1; i > 0; i--) {
                uint64_t t = a[0];
                a[0] = a[i];
                a[i] = t;
                sift_down(a, 0, i);
            }
            return;
        }
        uint64_t x = a[0], y = a[n / 2], z = a[n - 1];
        uint64_t piv = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        size_t i = 0, j = n - 1;
        for (;;) {
            while (a[i] < piv)
                i++;
            while (a[j] > piv)
                j--;
            if (i >= j)
                break;
            uint64_t t = a[i];
            a[i] = a[j];
            a[j] = t;
            i++;
            j--;
        }
        /* [0, j] <= piv <= [j+1, n): recurse on the smaller side */
        size_t left = j + 1;
        if (left < n - left) {
            sort_u64(a, left, depth);
            a += left;
            n -= left;
        } else {
            sort_u64(a + left, n - left, depth);
            n = left;
        }
    }
    for (size_t i = 1; i < n; i++) {
        uint64_t v = a[i];
        size_t k = i;
        for (; k > 0 && a[k - 1] > v; k--)
            a[k] = a[k - 1];
        a[k] = v;
    }
}

/* Makes the row's pairs from `start` strictly increasing: sorted by index
 * (stable: ties keep their order, so sums are reproducible) and equal
 * indices summed; zero sums are dropped. */
static int row_sort_merge(parse_ctx *c, uint64_t start)
{
    hog_rows *o = c->out;
    uint32_t *ix = o->index + start;
    float *val = o->value + start;
    size_t n = (size_t)(o->nnz - start);
    size_t i = 1;
    while (i < n && ix[i] > ix[i - 1])
        i++;
    if (i >= n)
        return 0;
    int rc = scratch_reserve(c, n);
    if (rc < 0)
        return rc;
    for (i = 0; i < n; i++) {
        c->keys[i] = (uint64_t)ix[i] << 32 | i;
        c->vals[i] = val[i];
    }
    int depth = 2;
    for (size_t m = n; m > 1; m >>= 1)
        depth += 2;
    sort_u64(c->keys, n, depth);
    size_t w = 0;
    for (i = 0; i < n;) {
        uint32_t idx = (uint32_t)(c->keys[i] >> 32);
        double sum = 0;
        for (; i < n && (uint32_t)(c->keys[i] >> 32) == idx; i++)
            sum += (double)c->vals[(uint32_t)c->keys[i]];
        float f = (float)sum;
        if (!isfinite(f))
            return fail(c, c->line, "features whose merged values are finite", "an overflow");
        if (f != 0.0f) {
            ix[w] = idx;
            val[w] = f;
            w++;
        }
    }
    o->nnz = start + w;
    return 0;
}

/* ===================================================================== *
 *  libsvm / svmlight:  label [qid:N] idx:val idx:val ... [# comment]
 * ===================================================================== */

/* The decimal digits at p (not past end) as an index; an index past
 * UINT32_MAX comes back as UINT32_MAX + 1. Returns the end of the digits. */
static ALWAYS_INLINE const char *scan_index(const char *p, const char *end, const char *lim,
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

static ALWAYS_INLINE void masks16(const char *p, pair_masks *m)
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
static ALWAYS_INLINE uint64_t pair_index(const char *p, unsigned c)
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

static ALWAYS_INLINE __m128i load16(const void *p)
{
    return _mm_loadu_si128((const __m128i *)p);
}

/* For a value of nv bytes ending a pair of len with more than 8 digits:
 * zeros that lead it add nothing ("0.00392157"), so if the bytes of the
 * digits past 8 are all '0' (and so before any dot), *nv drops them and
 * the last 8 digits are read. */
static ALWAYS_INLINE int drop_zeros(const char *p, unsigned len, unsigned hasdot, unsigned *nv)
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
static ALWAYS_INLINE unsigned pair_fast(const char *p, const char *le, uint64_t *idx, float *v)
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

/* Returns 1 with a row added, 0 for a line with no row, or an error. */
static int svm_line(parse_ctx *c, const char *line, const char *le)
{
    if (le <= line)
        return 0;
    /* A '#' starts a comment: found where a token or the gap after a number
     * begins, rather than by a search of every line beforehand. */
    const char *p = skip_blanks(line, le);
    if (p == le || *p == '#')
        return 0;
    hog_rows *o = c->out;
    int rc = rows_reserve(o, (uint64_t)(le - p) / 4 + 1);
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
        return fail(c, p, "a number", NULL);
    float label = 0;
    if ((rc = finite_value(c, p, d, &label)) < 0)
        return rc;

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
                if (hashed) {
                    unsigned char b[4] = {(unsigned char)ix, (unsigned char)(ix >> 8),
                                          (unsigned char)(ix >> 16), (unsigned char)(ix >> 24)};
                    ix = murmur3_32((const char *)b, 4, 0) & c->mask;
                }
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
                    return fail(c, s, "a query id", NULL);
                e = q;
                continue;
            }
            return fail(c, p, "index:value", NULL);
        }
        if (HOG_UNLIKELY(idx > UINT32_MAX))
            return fail(c, p, "an index below 4294967296", NULL);
        if (HOG_UNLIKELY(idx < base)) {
            char what[136];
            if (c->plan->base_lines)
                snprintf(what, sizeof(what),
                         "an index of at least 1 (none is 0 in the first %llu lines: read as "
                         "1-based; --index-base 0 reads as written)",
                         (unsigned long long)c->plan->base_lines);
            return fail(c, p, c->plan->base_lines ? what : "an index of at least 1 (indices are 1-based)", "0");
        }
        /* Order is checked on every pair, stored or not (zeros are dropped). */
        if (HOG_UNLIKELY((int64_t)idx <= prev)) {
            char exp[48], found[16];
            snprintf(exp, sizeof(exp), "an index greater than %u", (unsigned)prev);
            snprintf(found, sizeof(found), "%u", (unsigned)idx);
            return fail(c, p, exp, found);
        }
        prev = (int64_t)idx;
        const char *vs = q + 1;
        e = scan_number(vs, le, c->lim, &d); /* stops at a '#' that ends the number */
        if (HOG_UNLIKELY(!e || (e < le && !is_blank(*e) && *e != '#')))
            return fail(c, vs, "a number", NULL);
        float v = (float)d;
        if (HOG_UNLIKELY(!isfinite(v)))
            return fail(c, vs, "a finite number", NULL);
        if (v != 0.0f) {
            uint32_t ix = (uint32_t)idx - base;
            if (hashed) {
                unsigned char b[4] = {(unsigned char)ix, (unsigned char)(ix >> 8),
                                      (unsigned char)(ix >> 16), (unsigned char)(ix >> 24)};
                ix = murmur3_32((const char *)b, 4, 0) & c->mask;
            }
            index[nnz] = ix;
            value[nnz] = v;
            nnz++;
        }
    }
    o->nnz = nnz;
    if (hashed && (rc = row_sort_merge(c, start)) < 0)
        return rc;
    rows_push(o, label);
    return 1;
}

/* ===================================================================== *
 *  CSV: RFC 4180 fields, one of them the label
 * ===================================================================== */

/* The closing quote of the quoted field opened at `at`, or NULL if the line
 * ends first; *escaped is set when the field holds "" (one quote). */
static const char *quote_end(const char *at, const char *le, int *escaped)
{
    const char *q = at + 1;
    for (;;) {
        q = memchr(q, '"', (size_t)(le - q));
        if (!q)
            return NULL;
        if (q + 1 < le && q[1] == '"') {
            *escaped = 1;
            q += 2;
            continue;
        }
        return q;
    }
}

/* Whether p is at the end of a field: the line end, the delimiter, or (with
 * ' ' as the delimiter) any blank. */
static inline int field_end(const char *p, const char *le, char delim)
{
    return p == le || *p == delim || (delim == ' ' && is_blank(*p));
}

/* Past the blanks before a field (with ' ', blanks are the separator). */
static inline const char *skip_pad(const char *p, const char *le, char delim)
{
    if (delim == ' ')
        return p;
    while (p < le && is_blank(*p) && *p != delim)
        p++;
    return p;
}

/* Past the field starting at p (quoted or not): to its delimiter or the line end. */
static const char *csv_skip_field(const char *p, const char *le, char delim)
{
    if (p < le && *p == '"') {
        int escaped = 0;
        const char *q = quote_end(p, le, &escaped);
        if (!q)
            return le;
        p = q + 1;
    }
    while (!field_end(p, le, delim))
        p++;
    return p;
}

/* Counts the fields from p (the start of one) to the line end. */
static uint32_t csv_count_fields(const char *p, const char *le, char delim)
{
    uint32_t n = 0;
    for (;;) {
        p = csv_skip_field(skip_pad(p, le, delim), le, delim);
        if (n < UINT32_MAX)
            n++;
        if (delim == ' ') {
            p = skip_blanks(p, le);
            if (p == le)
                return n;
        } else {
            if (p == le)
                return n;
            p++; /* the delimiter: a field follows, perhaps empty */
        }
    }
}

static int fields_error(parse_ctx *c, const char *at, uint32_t found)
{
    char exp[32], fnd[16];
    snprintf(exp, sizeof(exp), "%u fields", c->plan->fields);
    snprintf(fnd, sizeof(fnd), "%u", found);
    return fail(c, at, exp, fnd);
}

/* The hash of "name=value" for categorical column j; [vs, ve) is the value,
 * with "" read as one quote when escaped. */
static uint32_t csv_category(const parse_ctx *c, uint32_t j, const char *vs, const char *ve,
                             int escaped)
{
    murmur_stream m = {0, 0, 0, 0};
    const char *name = c->plan->column_name ? c->plan->column_name[j] : NULL;
    char num[16];
    if (!name) {
        snprintf(num, sizeof(num), "%u", j);
        name = num;
    }
    murmur_feed(&m, name, strlen(name));
    murmur_feed(&m, "=", 1);
    if (!escaped) {
        murmur_feed(&m, vs, (size_t)(ve - vs));
    } else {
        for (const char *p = vs; p < ve; p++) {
            murmur_feed(&m, p, 1);
            p += *p == '"'; /* the second quote of "" */
        }
    }
    return (murmur_end(&m) & c->mask) + c->cat_offset;
}

static int csv_line(parse_ctx *c, const char *line, const char *le)
{
    const hog_text_plan *pl = c->plan;
    const char delim = pl->delimiter;
    const char *p = skip_blanks(line, le);
    if (p == le)
        return 0;
    if (delim != ' ')
        p = line;
    hog_rows *o = c->out;
    int rc = rows_reserve(o, pl->fields);
    if (rc < 0)
        return rc;
    const uint64_t start = o->nnz;
    uint64_t nnz = start;
    const uint8_t *kind = c->kind;
    const uint32_t *feature = c->feature;
    float label = 0;
    uint32_t j = 0;
    for (;; j++) {
        p = skip_pad(p, le, delim);
        const char *fs = p;
        if (HOG_UNLIKELY(j == pl->fields))
            return fields_error(c, fs, j + csv_count_fields(p, le, delim));
        const unsigned k = kind[j];
        if (HOG_LIKELY(k == HOG_COL_NUMBER && c->lim - p >= 32)) {
            uint64_t m;
            unsigned nf;
            int neg;
            const char *r = decimal_parts(p, &m, &nf, &neg);
            if (HOG_LIKELY(r && r <= le && field_end(r, le, delim))) {
                float v = decimal_float(m, nf);
                v = neg ? -v : v;
                if (v != 0.0f) {
                    o->index[nnz] = feature[j];
                    o->value[nnz] = v;
                    nnz++;
                }
                p = r;
                goto next;
            }
        }
        const char *vs = p, *ve;
        int quoted = p < le && *p == '"', escaped = 0;
        if (HOG_UNLIKELY(quoted)) {
            const char *q = quote_end(p, le, &escaped);
            if (!q)
                return fail(c, fs, "a closing quote", "end of line");
            vs = p + 1;
            ve = q;
            p = skip_pad(q + 1, le, delim);
            if (!field_end(p, le, delim))
                return fail(c, p, "a delimiter after the closing quote", NULL);
        } else if (k <= HOG_COL_LABEL) {
            double d;
            const char *e = scan_number(p, le, c->lim, &d);
            if (HOG_LIKELY(e != NULL)) {
                p = skip_pad(e, le, delim);
                if (HOG_UNLIKELY(!field_end(p, le, delim)))
                    return fail(c, fs, "a number", NULL);
                float v = 0;
                if ((rc = finite_value(c, fs, d, &v)) < 0)
                    return rc;
                if (k == HOG_COL_LABEL) {
                    label = v;
                } else if (v != 0.0f) {
                    o->index[nnz] = feature[j];
                    o->value[nnz] = v;
                    nnz++;
                }
                goto next;
            }
            if (!field_end(p, le, delim))
                return fail(c, fs, "a number", NULL);
            ve = p; /* empty */
        } else {
            if (delim == ' ') {
                while (p < le && !is_blank(*p))
                    p++;
            } else {
                const char *d = memchr(p, delim, (size_t)(le - p));
                p = d ? d : le;
            }
            ve = p;
            while (ve > vs && is_blank(ve[-1]))
                ve--;
        }
        /* the slow cases: quoted fields, empty fields, ignored and categorical ones */
        if (k == HOG_COL_CATEGORICAL) {
            if (ve > vs) {
                o->index[nnz] = csv_category(c, j, vs, ve, escaped);
                o->value[nnz] = 1.0f;
                nnz++;
            }
        } else if (k <= HOG_COL_LABEL) {
            if (ve == vs) {
                if (k == HOG_COL_LABEL)
                    return fail(c, fs, "a number", NULL);
            } else {
                double d;
                const char *e = escaped ? NULL : scan_number(vs, ve, c->lim, &d);
                if (e != ve)
                    return fail(c, fs, "a number", NULL);
                float v = 0;
                if ((rc = finite_value(c, fs, d, &v)) < 0)
                    return rc;
                if (k == HOG_COL_LABEL) {
                    label = v;
                } else if (v != 0.0f) {
                    o->index[nnz] = feature[j];
                    o->value[nnz] = v;
                    nnz++;
                }
            }
        }
    next:
        /* p is at the delimiter or the line end */
        if (delim == ' ') {
            p = skip_blanks(p, le);
            if (p == le)
                break;
        } else {
            if (p == le)
                break;
            p++;
        }
    }
    if (HOG_UNLIKELY(j + 1 < pl->fields))
        return fields_error(c, le, j + 1);
    o->nnz = nnz;
    if (c->csv_merge && (rc = row_sort_merge(c, start)) < 0)
        return rc;
    rows_push(o, label);
    return 1;
}

/* ===================================================================== *
 *  Vowpal Wabbit: label [importance] ['tag]|namespace[:scale] f[:v] ... |...
 * ===================================================================== */

static int vw_line(parse_ctx *c, const char *line, const char *le)
{
    const char *p = skip_blanks(line, le);
    if (p == le)
        return 0;
    const char *bar = memchr(p, '|', (size_t)(le - p));
    if (!bar)
        return fail(c, le, "'|' and features", "end of line");
    if (p == bar)
        return fail(c, p, "a label", NULL);
    hog_rows *o = c->out;
    int rc = rows_reserve(o, (uint64_t)(le - p) / 2 + 1);
    if (rc < 0)
        return rc;
    const uint64_t start = o->nnz;

    double d;
    const char *e = scan_number(p, bar, c->lim, &d);
    if (!e || (e < bar && !is_blank(*e)))
        return fail(c, p, "a number", NULL);
    float label = 0;
    if ((rc = finite_value(c, p, d, &label)) < 0)
        return rc;
    /* After the label: an importance weight, and a tag that starts with '
     * or touches the bar. */
    int seen_weight = 0, seen_tag = 0;
    float weight = 1.0f;
    for (const char *q = skip_blanks(e, bar); q < bar; q = skip_blanks(q, bar)) {
        const char *t = q;
        while (q < bar && !is_blank(*q))
            q++;
        if (!seen_tag && (*t == '\'' || q == bar)) {
            seen_tag = 1;
            continue;
        }
        double w;
        if (!seen_weight && !seen_tag && scan_number(t, q, c->lim, &w) == q) {
            if (!(w >= 0) || (rc = finite_value(c, t, w, &weight)) < 0)
                return rc < 0 ? rc : fail(c, t, "a non-negative importance weight", NULL);
            seen_weight = 1;
            continue;
        }
        return fail(c, t, seen_weight || seen_tag ? "'|'" : "an importance weight or a 'tag", NULL);
    }

    uint64_t nnz = start;
    for (const char *s = bar; s < le;) { /* s is at a '|' */
        const char *n = s + 1, *ne = n;
        while (ne < le && !is_blank(*ne) && *ne != '|' && *ne != ':')
            ne++;
        uint32_t seed = ne > n ? murmur3_32(n, (size_t)(ne - n), 0) : 0;
        double scale = 1;
        const char *q = ne;
        if (q < le && *q == ':') {
            const char *vs = q + 1;
            e = scan_number(vs, le, c->lim, &scale);
            if (!e || !(e == le || is_blank(*e) || *e == '|'))
                return fail(c, vs, "a number", NULL);
            if (!isfinite(scale))
                return fail(c, vs, "a finite number", NULL);
            q = e;
        }
        for (;;) {
            q = skip_blanks(q, le);
            if (q == le || *q == '|')
                break;
            const char *t = q, *colon = NULL;
            for (; q < le && !is_blank(*q) && *q != '|'; q++)
                if (*q == ':' && !colon)
                    colon = q;
            const char *name_end = colon ? colon : q;
            if (name_end == t)
                return fail(c, t, "a feature name", NULL);
            double v = 1;
            if (colon && scan_number(colon + 1, q, c->lim, &v) != q)
                return fail(c, colon + 1, "a number", NULL);
            float f = 0;
            if ((rc = finite_value(c, colon ? colon + 1 : t, v * scale, &f)) < 0)
                return rc;
            if (f != 0.0f) {
                o->index[nnz] = murmur3_32(t, (size_t)(name_end - t), seed) & c->mask;
                o->value[nnz] = f;
                nnz++;
            }
        }
        s = q;
    }
    o->nnz = nnz;
    if ((rc = row_sort_merge(c, start)) < 0)
        return rc;
    o->weight[o->rows] = weight;
    rows_push(o, label);
    return 1;
}

/* ===================================================================== *
 *  Chunks
 * ===================================================================== */

/* The CSV tables of a plan made by hand: the label column, numeric columns
 * numbered by position (or hashed by their number as text). */
static int csv_tables(parse_ctx *c)
{
    const hog_text_plan *pl = c->plan;
    uint32_t n = pl->fields;
    c->kind = pl->column_kind;
    c->feature = pl->column_feature;
    if (!c->kind) {
        c->own_kind = hog_calloc(n ? n : 1, 1);
        if (!c->own_kind)
            return -ENOMEM;
        if (pl->label_col < n)
            c->own_kind[pl->label_col] = HOG_COL_LABEL;
        c->kind = c->own_kind;
    }
    uint32_t numeric = 0;
    int cat = 0;
    for (uint32_t j = 0; j < n; j++) {
        numeric += c->kind[j] == HOG_COL_NUMBER;
        cat |= c->kind[j] == HOG_COL_CATEGORICAL;
    }
    c->cat_offset = pl->hash_bits ? 0 : numeric;
    c->csv_merge = pl->hash_bits > 0 || cat;
    if (!c->feature) {
        c->own_feature = hog_calloc(n ? n : 1, sizeof(uint32_t));
        if (!c->own_feature)
            return -ENOMEM;
        uint32_t k = 0;
        for (uint32_t j = 0; j < n; j++) {
            if (c->kind[j] != HOG_COL_NUMBER)
                continue;
            char num[16];
            const char *name = pl->column_name ? pl->column_name[j] : num;
            snprintf(num, sizeof(num), "%u", j);
            c->own_feature[j] = pl->hash_bits ? hog_hash_feature(name, strlen(name), 0, pl->hash_bits)
                                              : k;
            k++;
        }
        c->feature = c->own_feature;
    }
    return 0;
}

int hog_parse_chunk(const hog_text_plan *plan, const char *buf, size_t len, hog_rows *out,
                    hog_text_error *err)
{
    parse_ctx c;
    memset(&c, 0, sizeof(c));
    c.plan = plan;
    c.out = out;
    c.line_no = out->lines; /* line numbers count from what out already holds */
    c.first = buf;
    c.lim = buf + len;
    unsigned bits = plan->hash_bits;
    if (bits == 0 && plan->format != HOG_FORMAT_LIBSVM)
        bits = DEFAULT_STRING_BITS;
    c.mask = bits_mask(bits);
    c.stop = plan->format == HOG_FORMAT_CSV ? plan->delimiter
             : plan->format == HOG_FORMAT_VW ? '|'
                                             : NO_STOP;
    out->weighted = plan->format == HOG_FORMAT_VW;
    int rc = rows_reserve(out, 0); /* ptr[0] exists even for a chunk without rows */
    if (rc == 0 && plan->format == HOG_FORMAT_CSV)
        rc = csv_tables(&c);
    if (rc == 0 && plan->format != HOG_FORMAT_LIBSVM && plan->format != HOG_FORMAT_CSV &&
        plan->format != HOG_FORMAT_VW)
        rc = -EINVAL; /* a plan not made by hog_text_plan_make: a programmer error */

    const char *p = buf, *end = buf + len;
    while (rc == 0 && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *next = nl ? nl + 1 : end;
        while (le > p && le[-1] == '\r')
            le--;
        c.line_no++;
        c.line = p;
        c.le = le;
        const uint64_t row_nnz = out->nnz;
        switch (plan->format) {
        case HOG_FORMAT_LIBSVM:
            rc = svm_line(&c, p, le);
            break;
        case HOG_FORMAT_CSV:
            rc = csv_line(&c, p, le);
            break;
        default:
            rc = vw_line(&c, p, le);
            break;
        }
        if (HOG_UNLIKELY(rc < 0)) {
            out->nnz = row_nnz;
            if (rc == HOG_EFORMAT && plan->skip_errors) {
                out->skipped++;
                if (out->kept < HOG_TEXT_ERRORS_KEPT)
                    out->errors[out->kept++] = c.e;
                rc = 0;
            } else if (rc == HOG_EFORMAT && err) {
                *err = c.e;
            }
        } else {
            rc = 0;
        }
        p = next;
    }
    out->lines = c.line_no;
    hog_free(c.keys);
    hog_free(c.vals);
    hog_free(c.own_kind);
    hog_free(c.own_feature);
    return rc;
}

/* ===================================================================== *
 *  Plans: the format, and for CSV the delimiter, header and columns
 * ===================================================================== */

/* One line of the head: [s, e) without its end of line; next: the next line. */
typedef struct head_line {
    const char *s, *e, *next;
} head_line;

static int head_next(const char **p, const char *end, head_line *l)
{
    if (*p >= end)
        return 0;
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    l->s = *p;
    l->e = nl ? nl : end;
    l->next = nl ? nl + 1 : end;
    while (l->e > l->s && l->e[-1] == '\r')
        l->e--;
    *p = l->next;
    return 1;
}

/* Whether [s, e) reads "digits:number-ish": a libsvm pair. */
static int is_pair(const char *s, const char *e)
{
    const char *p = s;
    while (p < e && is_digit(*p))
        p++;
    if (p == s || p == e || *p != ':' || ++p == e)
        return 0;
    for (; p < e; p++)
        if (!is_digit(*p) && !strchr(".eE+-", *p))
            return 0;
    return 1;
}

/* 2: VW, 1: libsvm, 0: CSV, -1: cannot tell from this line (blank, comment,
 * or a lone token). */
static int classify_line(const char *s, const char *e)
{
    const char *p = skip_blanks(s, e);
    if (p == e || *p == '#')
        return -1;
    if (memchr(p, '|', (size_t)(e - p)))
        return 2;
    const char *hash = memchr(p, '#', (size_t)(e - p));
    if (hash)
        e = hash;
    const char *te = p;
    while (te < e && !is_blank(*te))
        te++;
    int tokens = 1;
    for (p = skip_blanks(te, e); p < e; p = skip_blanks(te, e), tokens++) {
        for (te = p; te < e && !is_blank(*te);)
            te++;
        if (is_pair(p, te) || (tokens == 1 && te - p >= 4 && memcmp(p, "qid:", 4) == 0))
            return 1;
    }
    if (tokens == 1 && !memchr(s, ',', (size_t)(e - s)) && !memchr(s, ';', (size_t)(e - s)))
        return -1;
    return 0;
}

static hog_format detect_format(const char *head, size_t len)
{
    const char *p = head, *end = head + len;
    head_line l;
    while (head_next(&p, end, &l)) {
        int k = classify_line(l.s, l.e);
        if (k >= 0)
            return k == 2 ? HOG_FORMAT_VW : k == 1 ? HOG_FORMAT_LIBSVM : HOG_FORMAT_CSV;
    }
    return HOG_FORMAT_CSV; /* also for a head with no data: reading it reports that */
}

/* The delimiter of a first line: the most frequent of ',', ';', '\t' outside
 * quotes, else ' ' if the line has inner blanks, else ','. */
static char csv_detect_delim(const char *s, const char *e)
{
    static const char cand[] = {',', ';', '\t'};
    size_t count[3] = {0, 0, 0};
    int quoted = 0;
    for (const char *p = s; p < e; p++) {
        if (*p == '"')
            quoted = !quoted;
        for (size_t k = 0; k < 3 && !quoted; k++)
            count[k] += *p == cand[k];
    }
    size_t best = 0;
    for (size_t k = 1; k < 3; k++)
        if (count[k] > count[best])
            best = k;
    if (count[best] > 0)
        return cand[best];
    s = skip_blanks(s, e);
    while (e > s && is_blank(e[-1]))
        e--;
    return memchr(s, ' ', (size_t)(e - s)) || memchr(s, '\t', (size_t)(e - s)) ? ' ' : ',';
}

/* The fields of the first line as unescaped strings. */
typedef struct name_list {
    char **name;
    uint32_t n, cap;
    uint8_t *number; /* 1: the field reads as a number; 2: it is empty */
} name_list;

static void names_free(name_list *l)
{
    for (uint32_t i = 0; i < l->n; i++)
        hog_free(l->name[i]);
    hog_free(l->name);
    hog_free(l->number);
    memset(l, 0, sizeof(*l));
}

static int names_add(name_list *l, const char *s, const char *e, int escaped)
{
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 16;
        char **nm = hog_realloc(l->name, cap * sizeof(char *));
        if (!nm)
            return -ENOMEM;
        l->name = nm;
        uint8_t *num = hog_realloc(l->number, cap);
        if (!num)
            return -ENOMEM;
        l->number = num;
        l->cap = cap;
    }
    char *d = hog_malloc((size_t)(e - s) + 1), *w = d;
    if (!d)
        return -ENOMEM;
    for (const char *p = s; p < e; p++) {
        *w++ = *p;
        p += escaped && *p == '"';
    }
    *w = '\0';
    double v;
    const char *ne = escaped ? NULL : scan_number(s, e, e, &v);
    l->number[l->n] = s == e ? 2 : ne == e;
    l->name[l->n++] = d;
    return 0;
}

/* Splits the first line into fields (quote rules as for data lines). */
static int csv_split(parse_ctx *c, const char *line, const char *le, char delim, name_list *l)
{
    const char *p = delim == ' ' ? skip_blanks(line, le) : line;
    for (;;) {
        if (l->n == UINT32_MAX - 1)
            return fail(c, p, "fewer than 2^32 fields", NULL);
        p = skip_pad(p, le, delim);
        const char *fs = p, *vs = p, *ve;
        int escaped = 0;
        if (p < le && *p == '"') {
            const char *q = quote_end(p, le, &escaped);
            if (!q)
                return fail(c, fs, "a closing quote", "end of line");
            vs = p + 1;
            ve = q;
            p = skip_pad(q + 1, le, delim);
            if (!field_end(p, le, delim))
                return fail(c, p, "a delimiter after the closing quote", NULL);
        } else {
            while (!field_end(p, le, delim))
                p++;
            ve = p;
            while (ve > vs && is_blank(ve[-1]))
                ve--;
        }
        int rc = names_add(l, vs, ve, escaped);
        if (rc < 0)
            return rc;
        if (delim == ' ') {
            p = skip_blanks(p, le);
            if (p == le)
                return 0;
        } else {
            if (p == le)
                return 0;
            p++;
        }
    }
}

/* "a, b, c" (shortened) for "no column named" messages. */
static void names_join(const name_list *l, char *out, size_t len)
{
    size_t w = 0;
    out[0] = '\0';
    for (uint32_t i = 0; i < l->n; i++) {
        const char *sep = i ? ", " : "";
        size_t need = strlen(sep) + strlen(l->name[i]);
        if (w + need + 6 >= len) {
            snprintf(out + w, len - w, "%s...", sep);
            return;
        }
        w += (size_t)snprintf(out + w, len - w, "%s%s", sep, l->name[i]);
    }
}

/* Column j for a name or a 0-based number; -1 if there is none (HOG_EPARAM
 * written to err). */
static long find_column(const char *path, const name_list *l, int header, const char *what,
                        const char *tok, size_t len, char *err, size_t err_len)
{
    if (header)
        for (uint32_t i = 0; i < l->n; i++)
            if (strlen(l->name[i]) == len && memcmp(l->name[i], tok, len) == 0)
                return (long)i;
    int digits = len > 0 && len < 10;
    for (size_t i = 0; i < len && digits; i++)
        digits = is_digit(tok[i]);
    if (digits) {
        long j = strtol(tok, NULL, 10);
        if ((uint64_t)j < l->n)
            return j;
        hog_fail(HOG_EPARAM, err, err_len,
                 "%s: %s: column %ld is out of range: the first line has %u fields", path, what, j,
                 l->n);
        return -1;
    }
    if (!header) {
        hog_fail(HOG_EPARAM, err, err_len, "%s: no column named '%.*s' (the file has no header)",
                 path, (int)HOG_MIN(len, 100), tok);
        return -1;
    }
    char cols[200];
    names_join(l, cols, sizeof(cols));
    hog_fail(HOG_EPARAM, err, err_len, "%s: no column named '%.*s' (columns: %s)", path,
             (int)HOG_MIN(len, 100), tok, cols);
    return -1;
}

/* Whether a comma-separated column list names a column (not only numbers). */
static int list_has_name(const char *list)
{
    if (!list)
        return 0;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        const char *s = skip_blanks(p, p + n), *e = p + n;
        while (e > s && is_blank(e[-1]))
            e--;
        for (const char *q = s; q < e; q++)
            if (!is_digit(*q))
                return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}

/* Marks the columns of a list as `kind`. */
static int mark_columns(const char *path, const name_list *l, int header, const char *what,
                        const char *list, uint8_t kind, uint8_t *kinds, char *err, size_t err_len)
{
    if (!list)
        return 0;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        const char *s = skip_blanks(p, p + n), *e = p + n;
        while (e > s && is_blank(e[-1]))
            e--;
        p += n + (p[n] == ',');
        if (s == e)
            continue;
        long j = find_column(path, l, header, what, s, (size_t)(e - s), err, err_len);
        if (j < 0)
            return HOG_EPARAM;
        if (kinds[j] == HOG_COL_LABEL)
            return hog_fail(HOG_EPARAM, err, err_len, "%s: %s: column '%s' is the label", path,
                            what, l->name[j]);
        if (kinds[j] != HOG_COL_NUMBER && kinds[j] != kind)
            return hog_fail(HOG_EPARAM, err, err_len,
                            "%s: %s: column '%s' is both ignored and categorical", path, what,
                            l->name[j]);
        kinds[j] = kind;
    }
    return 0;
}

static int check_params(const hog_read_params *p, char *err, size_t len)
{
    if (p->format < HOG_FORMAT_AUTO || p->format > HOG_FORMAT_VW)
        return hog_fail(HOG_EPARAM, err, len, "format: %d is not a hog_format", (int)p->format);
    if (p->format == HOG_FORMAT_BINARY)
        return hog_fail(HOG_EPARAM, err, len, "format: a binary dataset is not text");
    if (p->hash_bits > 31)
        return hog_fail(HOG_EPARAM, err, len, "hash_bits: %u is not between 0 and 31",
                        p->hash_bits);
    if (p->index_base < -1 || p->index_base > 1)
        return hog_fail(HOG_EPARAM, err, len, "index_base: %d is not -1 (detect), 0 or 1",
                        p->index_base);
    if (p->on_error != HOG_ON_ERROR_STOP && p->on_error != HOG_ON_ERROR_SKIP)
        return hog_fail(HOG_EPARAM, err, len, "on_error: %d is not stop or skip",
                        (int)p->on_error);
    char d = p->delimiter;
    if (d != 0 && (d == '\n' || d == '\r' || d == '"' || d == '.' || d == '+' || d == '-' ||
                   d == 'e' || d == 'E' || is_digit(d)))
        return hog_fail(HOG_EPARAM, err, len, "delimiter: '%c' cannot separate numbers", d);
    if (p->header < -1 || p->header > 1)
        return hog_fail(HOG_EPARAM, err, len, "header: %d is not 1, 0 or -1", p->header);
    if (p->label_name && p->header == 0)
        return hog_fail(HOG_EPARAM, err, len, "label_name: needs a header, but header is 0");
    if (!p->label_name && p->label_index < 0)
        return hog_fail(HOG_EPARAM, err, len, "label_index: %ld is negative", p->label_index);
    return 0;
}

/* The CSV part of a plan: delimiter, header, fields and their kinds. */
static int plan_csv(const char *path, const hog_read_params *p, const char *head, size_t head_len,
                    hog_text_plan *plan, char *err, size_t err_len)
{
    const char *q = head, *end = head + head_len;
    head_line l;
    uint64_t lines = 0;
    int found = 0;
    while (head_next(&q, end, &l)) {
        lines++;
        if (skip_blanks(l.s, l.e) < l.e) {
            found = 1;
            break;
        }
    }
    plan->delimiter = p->delimiter;
    if (!found) { /* no data at all: the pipeline reports an empty file */
        if (!plan->delimiter)
            plan->delimiter = ',';
        return 0;
    }
    if (!plan->delimiter)
        plan->delimiter = csv_detect_delim(l.s, l.e);

    parse_ctx c;
    memset(&c, 0, sizeof(c));
    c.line = l.s;
    c.le = l.e;
    c.line_no = lines;
    c.stop = plan->delimiter;
    name_list names;
    memset(&names, 0, sizeof(names));
    int rc = csv_split(&c, l.s, l.e, plan->delimiter, &names);
    if (rc < 0) {
        names_free(&names);
        if (rc == HOG_EFORMAT)
            return hog_fail(rc, err, err_len, "%s:%llu:%u: %s", path,
                            (unsigned long long)c.e.line, c.e.column, c.e.what);
        return hog_fail(rc, err, err_len, "%s: out of memory", path);
    }

    int has_names = p->label_name || list_has_name(p->ignore) || list_has_name(p->categorical);
    int header = p->header;
    if (has_names && header == 0) {
        rc = hog_fail(HOG_EPARAM, err, err_len, "%s: columns are named, but header is 0", path);
        goto out;
    }
    uint8_t *kinds = hog_calloc(names.n, 1);
    plan->column_kind = kinds;
    if (!kinds) {
        rc = -ENOMEM;
        goto out;
    }
    /* ignored and categorical columns given by number take no part in the
     * header's detection: a category is not a number */
    if (!has_names && header == -1) {
        rc = mark_columns(path, &names, 0, "ignore", p->ignore, HOG_COL_IGNORE, kinds, err,
                          err_len);
        if (rc == 0)
            rc = mark_columns(path, &names, 0, "categorical", p->categorical,
                              HOG_COL_CATEGORICAL, kinds, err, err_len);
        if (rc < 0)
            goto out;
        header = 0;
        for (uint32_t j = 0; j < names.n; j++)
            header |= kinds[j] == HOG_COL_NUMBER && names.number[j] == 0;
        memset(kinds, 0, names.n);
    }
    if (has_names)
        header = 1;

    plan->fields = names.n;
    if (p->label_name) { /* a name, never a number: only the header's names match */
        uint32_t i;
        for (i = 0; i < names.n && strcmp(names.name[i], p->label_name) != 0; i++)
            ;
        if (i == names.n) {
            char cols[200];
            names_join(&names, cols, sizeof(cols));
            rc = hog_fail(HOG_EPARAM, err, err_len, "%s: no column named '%s' (columns: %s)",
                          path, p->label_name, cols);
            goto out;
        }
        plan->label_col = i;
    } else {
        if ((uint64_t)p->label_index >= names.n) {
            rc = hog_fail(HOG_EPARAM, err, err_len,
                          "%s: label column %ld is out of range: the first line has %u fields",
                          path, p->label_index, names.n);
            goto out;
        }
        plan->label_col = (uint32_t)p->label_index;
    }
    kinds[plan->label_col] = HOG_COL_LABEL;
    rc = mark_columns(path, &names, header, "ignore", p->ignore, HOG_COL_IGNORE, kinds, err,
                      err_len);
    if (rc == 0)
        rc = mark_columns(path, &names, header, "categorical", p->categorical,
                          HOG_COL_CATEGORICAL, kinds, err, err_len);
    if (rc < 0)
        goto out;

    /* names: the header's, or the field numbers */
    plan->column_name = hog_calloc(names.n, sizeof(char *));
    plan->column_feature = hog_calloc(names.n, sizeof(uint32_t));
    if (!plan->column_name || !plan->column_feature) {
        rc = -ENOMEM;
        goto out;
    }
    for (uint32_t j = 0; j < names.n; j++) {
        if (header) {
            plan->column_name[j] = names.name[j];
            names.name[j] = NULL;
        } else {
            char num[16];
            snprintf(num, sizeof(num), "%u", j);
            if (!(plan->column_name[j] = hog_strdup(num))) {
                rc = -ENOMEM;
                goto out;
            }
        }
    }
    uint32_t k = 0;
    for (uint32_t j = 0; j < names.n; j++) {
        if (kinds[j] != HOG_COL_NUMBER)
            continue;
        const char *nm = plan->column_name[j];
        plan->column_feature[j] = p->hash_bits ? hog_hash_feature(nm, strlen(nm), 0, p->hash_bits)
                                               : k;
        k++;
    }
    if (header) {
        plan->header_bytes = (uint64_t)(l.next - head);
        plan->header_lines = lines;
    }
    rc = 0;
out:
    names_free(&names);
    if (rc == -ENOMEM)
        hog_fail(rc, err, err_len, "%s: out of memory", path);
    return rc;
}

/* libsvm files are 1-based by the format's definition (LIBLINEAR, svmlight),
 * but many writers (scikit-learn's dump_svmlight_file among them) start at 0.
 * An index 0 anywhere in the head settles it as 0-based; a head without one
 * is taken as 1-based, and an index 0 met later is then an error that says
 * so (see svm_line), never a silent shift. *lines gets the lines looked at. */
static unsigned detect_index_base(const char *head, size_t len, uint64_t *lines)
{
    const char *p = head, *end = head + len;
    *lines = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *hash = memchr(p, '#', (size_t)(le - p));
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
                if (d > t && d < p && *d == ':')
                    return 0;
            }
            first = 0;
        }
        p = nl ? nl + 1 : end;
    }
    return 1;
}

int hog_text_plan_make(const char *path, const hog_read_params *p, const char *head, size_t head_len,
                       hog_text_plan *plan, char *err, size_t err_len)
{
    memset(plan, 0, sizeof(*plan));
    int rc = check_params(p, err, err_len);
    if (rc < 0)
        return rc;
    plan->format = p->format == HOG_FORMAT_AUTO ? detect_format(head, head_len) : p->format;
    plan->hash_bits = p->hash_bits;
    if (plan->format == HOG_FORMAT_LIBSVM && p->index_base < 0)
        plan->index_base = detect_index_base(head, head_len, &plan->base_lines);
    else
        plan->index_base = p->index_base < 0 ? 0 : (unsigned)p->index_base;
    plan->skip_errors = p->on_error == HOG_ON_ERROR_SKIP;
    if (plan->format == HOG_FORMAT_CSV) {
        rc = plan_csv(path, p, head, head_len, plan, err, err_len);
        if (rc < 0)
            hog_text_plan_free(plan);
    }
    return rc;
}

void hog_text_plan_free(hog_text_plan *plan)
{
    if (!plan)
        return;
    if (plan->column_name)
        for (uint32_t j = 0; j < plan->fields; j++)
            hog_free(plan->column_name[j]);
    hog_free(plan->column_name);
    hog_free(plan->column_feature);
    hog_free(plan->column_kind);
    plan->column_name = NULL;
    plan->column_feature = NULL;
    plan->column_kind = NULL;
}
