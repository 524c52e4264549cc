/* etl_parse.h: what the text parsers share, and only they: the inline number scanners of their hot loops and the state of a chunk being parsed. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_ETL_PARSE_H
#define HOG_ETL_PARSE_H

#include <float.h>
#include <math.h>
#include <string.h>

#include "etl.h"

/*
 * The parsers, one file per part, around this header:
 *
 *   etl_parse_number.c   the exact number parser (the rare forms; the usual
 *                        ones are read by the inline scanners below)
 *   etl_parse_rows.c     the rows a chunk becomes, located errors, and the
 *                        sort and merge of a row's indices
 *   etl_parse_libsvm.c   libsvm lines, and the index base of a libsvm head
 *   etl_parse_csv.c      CSV lines and the CSV plan (delimiter, header,
 *                        label, ignored and categorical columns)
 *   etl_parse_vw.c       Vowpal Wabbit lines
 *   etl_parse_ffm.c      LIBFFM lines (field:index:value)
 *   etl_parse.c          chunks (each line to its format's parser),
 *                        whether a head is text, the format detection and
 *                        the plan
 *
 * Calls go one way: etl_parse.c calls the format parsers, they call the
 * rows and numbers, which call neither.
 */

/* The per-value helpers must be inlined into the line loops: a call per
 * number costs as much as the number. */
#define HOG_ALWAYS_INLINE inline __attribute__((always_inline))

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
#define HOG_FLOAT_TIE_MIN (5ULL << 24)

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


/* The general scanner, for every number the inline ones do not take
 * (etl_parse_number.c): [+-] digits [. digits] [(e|E) [+-] digits] at s,
 * not past end, as strtod reads it; returns where it ends, or NULL if no
 * number starts at s. */
const char *hog_scan_number_general(const char *s, const char *end, double *out);

/* Digits eight at a time in a 64-bit word (SWAR): eight bytes are read at
 * p whatever end says (the caller knows they are readable), tested at once,
 * and combined with three multiplies, so a run of digits of any length up
 * to 8 costs no branch per digit. */
/* The 8 bytes at p less '0' each; *n: how many of them lead as digits (a
 * digit becomes 0..9; any other byte fails (x | x + 0x76) & 0x80; a borrow
 * or carry crosses only into bytes after a non-digit, which are not used). */
static HOG_ALWAYS_INLINE uint64_t swar_digits(const char *p, unsigned *n)
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
static HOG_ALWAYS_INLINE uint64_t swar_combine(uint64_t x)
{
    x = (x * 10 + (x >> 8)) & 0x00ff00ff00ff00ffULL;
    x = (x * 100 + (x >> 16)) & 0x0000ffff0000ffffULL;
    return (x * 10000 + (x >> 32)) & 0xffffffffULL;
}

/* The value of the n (1..8) leading digits of x from swar_digits: they are
 * moved to the top, then pairs, quads and octets combined. */
static HOG_ALWAYS_INLINE uint64_t swar_value(uint64_t x, unsigned n)
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

static HOG_ALWAYS_INLINE unsigned digits8(const char *p, const char *end, uint64_t *val)
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
 * else (the caller then takes hog_scan_number_general), with the number as
 * (-1)^neg * m / 10^nf: at most 14 digits, so m is exact below 2^53 and
 * far from float overflow. 32 bytes must be readable at p; the caller
 * checks that the end is inside its field. */
static HOG_ALWAYS_INLINE const char *decimal_parts(const char *p, uint64_t *m_out, unsigned *nf_out, int *neg_out)
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
 * can be a midpoint only from HOG_FLOAT_TIE_MIN up; there the divide,
 * correctly rounded, keeps it exact and the float rounds it to even, as
 * (float)strtod does. */
static HOG_ALWAYS_INLINE float decimal_float(uint64_t m, unsigned nf)
{
    double d = (double)(int64_t)m;
    d = HOG_LIKELY(m < HOG_FLOAT_TIE_MIN) ? d * pow10_neg[nf] : d / pow10_exact[nf];
    return (float)d;
}

/* hog_scan_number_general for the usual forms ([-] up to 7 digits [. up to 7
 * digits], no exponent: at most 14 digits, exact below 2^53, so one divide
 * by an exact power of ten is correctly rounded). lim is how far bytes may
 * be read (the chunk's end), end where the number must stop. */
static HOG_ALWAYS_INLINE const char *
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
    return hog_scan_number_general(s, end, out);
}

/* ===================================================================== *
 *  The state of a chunk being parsed (etl_parse.c sets it up)
 * ===================================================================== */

#define HOG_NO_STOP (-1)

typedef struct hog_parse_ctx {
    const hog_text_plan *plan;
    hog_rows *out;
    uint32_t mask;       /* hash_bits (or 18 for strings) as a mask */
    /* the line being parsed, [line, le) without its end of line */
    const char *line;
    const char *le;
    const char *first;   /* the chunk's start: reads may not go before it */
    const char *lim;     /* the chunk's end: how far bytes may be read */
    uint64_t line_no;
    int stop;            /* the separator a snippet stops at, or HOG_NO_STOP */
    hog_text_error e;    /* the error of the current line */
    int bound;           /* e is a bound passed (the feature ceiling), which on_error skip does not skip */
    /* sorting scratch (rows that may hold an index twice) */
    uint64_t *keys;
    float *vals;
    uint16_t *flds;      /* with fields */
    size_t scratch_cap;
    /* CSV tables (the plan's, or made for a plan made by hand) */
    const uint8_t *kind;
    const uint32_t *feature;
    uint32_t cat_offset; /* where categorical hashes start when hash_bits is 0 */
    int csv_merge;       /* rows may hold an index twice or out of order */
    uint8_t *own_kind;
    uint32_t *own_feature;
} hog_parse_ctx;

/* ---- rows (etl_parse_rows.c) ---- */

/* Grows r for one more row and `more` values (see hog_rows_reserve).
 * Returns 0 or -ENOMEM. */
int hog_rows_grow(hog_rows *r, uint64_t more);

/* Makes room for one more row and `more` values, so the per-value loop of
 * a line needs no capacity checks. Offsets are 32-bit: a chunk whose values
 * pass 2^32 cannot be held (a chunk is megabytes; that is gigabytes of
 * values), reported as -ENOMEM. */
static inline int hog_rows_reserve(hog_rows *r, uint64_t more)
{
    if (HOG_LIKELY(r->rows + 1 <= r->cap_rows && r->nnz + more <= r->cap_nnz && r->ptr &&
                   (r->weight || !r->weighted) && (r->field || !r->fielded)))
        return 0;
    return hog_rows_grow(r, more);
}

/* Ends the row whose values were appended (index, value up to r->nnz). */
static inline void hog_rows_push(hog_rows *r, float label)
{
    r->label[r->rows] = label;
    r->ptr[++r->rows] = (uint32_t)r->nnz;
}

/* Records "expected X, found Y" at `at` in c->e (found == NULL: a snippet of
 * the text there) and returns HOG_EFORMAT. */
int hog_parse_fail(hog_parse_ctx *c, const char *at, const char *expected, const char *found);

/* Records in c->e that the index written at [at, end) is past the ceiling
 * on features (plan->max_features), naming the ceiling and the hash_bits
 * that would fit it, and marks it a bound (c->bound), which on_error skip
 * does not skip. Returns HOG_EFORMAT. */
int hog_parse_ceiling_fail(hog_parse_ctx *c, const char *at, const char *end);

/* A number that must fill [s, e) (e: its end as found by the caller) as a finite float. */
static inline int finite_value(hog_parse_ctx *c, const char *s, double d, float *out)
{
    float f = (float)d; /* beyond FLT_MAX this is inf, refused here */
    if (HOG_UNLIKELY(!isfinite(f)))
        return hog_parse_fail(c, s, "a finite number", NULL);
    *out = f;
    return 0;
}

/* Makes the row's pairs from `start` strictly increasing: sorted by index
 * (stable: ties keep their order, so sums are reproducible) and equal
 * indices summed; zero sums are dropped. Returns 0, HOG_EFORMAT (a sum
 * that overflows) or -ENOMEM. */
int hog_row_sort_merge(hog_parse_ctx *c, uint64_t start);

/* ---- one line of each format: [line, le) without its end of line ----
 * Each returns 1 with a row added, 0 for a line with no row (blank, a
 * comment), HOG_EFORMAT (c->e says where and what) or -ENOMEM. */
int hog_parse_libsvm_line(hog_parse_ctx *c, const char *line, const char *le); /* etl_parse_libsvm.c */
int hog_parse_csv_line(hog_parse_ctx *c, const char *line, const char *le);    /* etl_parse_csv.c */
int hog_parse_vw_line(hog_parse_ctx *c, const char *line, const char *le);     /* etl_parse_vw.c */
int hog_parse_ffm_line(hog_parse_ctx *c, const char *line, const char *le);    /* etl_parse_ffm.c */
/* Adds the feature names of a VW line hog_parse_vw_line took to
 * c->out->fnames, as Vowpal Wabbit's --invert_hash writes them:
 * "namespace^feature", or "feature" in the default namespace (a feature
 * whose value is 0 makes no name). A pass of its own, so that the
 * parser's loop stays as it is without names: holding a namespace's name
 * across that loop slowed it by a tenth. Returns 0 or -ENOMEM. */
int hog_parse_vw_names(const hog_parse_ctx *c, const char *line, const char *le);

/* The CSV tables of c for its plan: the plan's own, or for a plan made by
 * hand the label column and numeric columns numbered by position (or
 * hashed by their number as text). Returns 0 or -ENOMEM. */
int hog_parse_csv_tables(hog_parse_ctx *c);

/* ---- plans ---- */

/* One line of a plan's head: [s, e) without its end of line; next: the next line. */
typedef struct hog_head_line {
    const char *s, *e, *next;
} hog_head_line;

/* The head's line at *p (not past end) into l, *p moved past it; 0 at the end. */
static inline int hog_head_next(const char **p, const char *end, hog_head_line *l)
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

/* The CSV part of a plan (etl_parse_csv.c): delimiter, header, fields and
 * their kinds, from p and the head. Errors as hog_text_plan_make's. */
int hog_text_plan_csv(const char *path, const hog_read_params *p, const char *head, size_t head_len,
                      hog_text_plan *plan, char *err, size_t err_len);

/* The index base of a libsvm head (etl_parse_libsvm.c): what a comment
 * line of scikit-learn's says ("# Column indices are zero-based"), else 0
 * if an index 0 appears in it, else 1; *lines gets the lines looked at,
 * *why the reason, for the log. */
unsigned hog_text_plan_index_base(const char *head, size_t len, uint64_t *lines, const char **why);

#endif /* HOG_ETL_PARSE_H */
