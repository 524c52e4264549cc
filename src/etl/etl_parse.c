/* etl_parse.c: chunks of text parsed line by line by their format's parser, for many threads at once; whether input is text, the format detection and the plan that say how. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "etl_parse.h"

/*
 * A chunk is a run of whole lines that is never copied or NUL-terminated:
 * every scan is bounded by the end of its line, and lines are found with
 * memchr. Numbers take Clinger's exact fast path (no strtod) when they
 * can; rows go straight into the caller's growable CSR arrays, reserved once
 * per line, so the per-value loop has no capacity checks.
 *
 * The rules and the error wording are those of the first, line-by-line
 * reader that these parsers replaced, plus (each format's own rules are in
 * its file):
 *
 *  - Lines end at '\n'; trailing '\r's are dropped (CRLF files).
 *  - Values equal to zero are not stored (a sparse row has no explicit zeros).
 *  - Rows that can hold one index twice (hashing, VW, CSV categories) are
 *    sorted by index and equal indices summed; a sum that is zero is
 *    dropped.
 */

#define DEFAULT_STRING_BITS 18u
#define NUL_WINDOW (64u << 10) /* bytes searched for a NUL at a time: they stay in the cache for the parser */

/* ===================================================================== *
 *  Chunks
 * ===================================================================== */

int hog_parse_chunk(const hog_text_plan *plan, const char *buf, size_t len, hog_rows *out,
                    hog_text_error *err)
{
    hog_parse_ctx c;
    memset(&c, 0, sizeof(c));
    c.plan = plan;
    c.out = out;
    c.line_no = out->lines; /* line numbers count from what out already holds */
    c.first = buf;
    c.lim = buf + len;
    unsigned bits = plan->hash_bits;
    if (bits == 0 && plan->format != HOG_FORMAT_LIBSVM && plan->format != HOG_FORMAT_FFM)
        bits = DEFAULT_STRING_BITS;
    c.mask = hog_hash_mask(bits);
    c.stop = plan->format == HOG_FORMAT_CSV ? plan->delimiter
             : plan->format == HOG_FORMAT_VW ? '|'
                                             : HOG_NO_STOP;
    out->weighted = plan->format == HOG_FORMAT_VW;
    out->fielded = plan->fielded || plan->format == HOG_FORMAT_FFM;
    int rc = hog_rows_reserve(out, 0); /* ptr[0] exists even for a chunk without rows */
    if (rc == 0 && plan->format == HOG_FORMAT_CSV)
        rc = hog_parse_csv_tables(&c);
    if (rc == 0 && plan->format != HOG_FORMAT_LIBSVM && plan->format != HOG_FORMAT_CSV &&
        plan->format != HOG_FORMAT_VW && plan->format != HOG_FORMAT_FFM)
        rc = -EINVAL; /* a plan not made by hog_text_plan_make: a programmer error */

    const uint64_t max_line = plan->max_line ? plan->max_line : HOG_DEFAULT_MAX_LINE;
    const char *p = buf, *end = buf + len;
    const char *checked = buf, *nul = NULL; /* no NUL in [p, checked) but at nul */
    while (rc == 0 && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *next = nl ? nl + 1 : end;
        c.line_no++;
        if (HOG_UNLIKELY((uint64_t)(le - p) > max_line)) { /* not skipped: a bound, not a typo */
            rc = HOG_EFORMAT;
            if (err) {
                err->line = c.line_no;
                err->column = 0;
                snprintf(err->what, sizeof(err->what), "a line longer than %llu bytes (hog_read_params.max_line)",
                         (unsigned long long)max_line);
            }
            break;
        }
        while (le > p && le[-1] == '\r')
            le--;
        c.line = p;
        c.le = le;
        const uint64_t row_nnz = out->nnz;
        /* A NUL byte is no text: found here, at its column, rather than by
         * each parser where it fails to read it (or, in a comment or a
         * name, reads it). Searched a window at a time ahead of the lines,
         * not line by line: a call per short line cost more than the search. */
        while (!nul && checked < le) {
            const size_t n = HOG_MIN((size_t)(end - checked), (size_t)NUL_WINDOW);
            nul = memchr(checked, '\0', n);
            checked += n;
        }
        if (HOG_UNLIKELY(nul && nul < le)) {
            rc = hog_parse_fail(&c, nul, "text", "a NUL byte");
            nul = NULL; /* the search goes on from the next line */
            checked = next;
        } else if (plan->format == HOG_FORMAT_LIBSVM)
            rc = hog_parse_libsvm_line(&c, p, le);
        else if (plan->format == HOG_FORMAT_CSV)
            rc = hog_parse_csv_line(&c, p, le);
        else if (plan->format == HOG_FORMAT_FFM)
            rc = hog_parse_ffm_line(&c, p, le);
        else if ((rc = hog_parse_vw_line(&c, p, le)) == 1 && HOG_UNLIKELY(out->fnames != NULL))
            rc = hog_parse_vw_names(&c, p, le); /* a line taken: its names (not a skipped one's) */
        if (HOG_UNLIKELY(rc < 0)) {
            out->nnz = row_nnz;
            if (rc == HOG_EFORMAT && plan->skip_errors && !c.bound) {
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
    hog_free(c.flds);
    hog_free(c.own_kind);
    hog_free(c.own_feature);
    return rc;
}

/* ===================================================================== *
 *  Text or not
 *
 *  Text has no NUL byte and few control characters; the first bytes of
 *  anything else (a device read as a file, a disk image, a compressed or
 *  encrypted file, a spreadsheet, UTF-16) are full of them. The first
 *  SNIFF_BYTES of the head decide, so a file that is not text is refused
 *  before its first chunk is parsed, with what it looks like; a stray NUL
 *  byte in text is left to the parsers, which give its line and column.
 * ===================================================================== */

#define SNIFF_BYTES (64u << 10)

/* Known first bytes of files that are not text, and what to call them.
 * (A hex escape takes every hex digit after it, hence the split strings.) */
static const struct signature {
    const char *magic;
    size_t len;
    const char *what;
} signatures[] = {
    {"HOGDATA\0", 8, "a hogtrain dataset (.hgd), which hog_read_params.format = HOG_FORMAT_BINARY reads"},
    {"HOGRATE\0", 8, "a hogtrain ratings file (.hgr), which matrix factorisation reads"},
    {"HOGMODEL", 8, "a hogtrain model, not data"},
    {"HOGMFMOD", 8, "a hogtrain matrix factorisation model, not data"},
    {"HOGCHKPT", 8, "a hogtrain checkpoint (hog_trainer_set_checkpoint resumes it), not data"},
    {"HOGMFCKP", 8, "a hogtrain matrix factorisation checkpoint (hog_mf_control_set_checkpoint), not data"},
    {"\x7f" "ELF", 4, "an executable (ELF)"},
    {"PK\x03\x04", 4, "a zip archive (a spreadsheet? save it as CSV)"},
    {"BZh", 3, "bzip2-compressed data (decompress it first)"},
    {"\xfd" "7zXZ\0", 6, "xz-compressed data (decompress it first)"},
    {"7z\xbc\xaf\x27\x1c", 6, "a 7-Zip archive"},
    {"\x89PNG", 4, "a PNG image"},
    {"\xff\xd8\xff", 3, "a JPEG image"},
    {"%PDF", 4, "a PDF document"},
    {"PAR1", 4, "a Parquet file"},
    {"\x93NUMPY", 6, "a NumPy array"},
    {"\x89HDF\r\n\x1a\n", 8, "an HDF5 file"},
    {"SQLite format 3\0", 16, "an SQLite database"},
    {"\xff\xfe", 2, "UTF-16 text (convert it to UTF-8)"},
    {"\xfe\xff", 2, "UTF-16 text (convert it to UTF-8)"},
};

/* A byte text does not hold: NUL, and the control characters but the
 * blanks and line ends (tab, newline, vertical tab, form feed, return). */
static int binary_byte(unsigned char b)
{
    return (b < 0x20 && (b < '\t' || b > '\r')) || b == 0x7f;
}

static int text_check(const char *path, const char *head, size_t len, char *err, size_t err_len)
{
    const unsigned char *b = (const unsigned char *)head;
    const size_t n = HOG_MIN(len, (size_t)SNIFF_BYTES);
    size_t bad = 0, zero = 0, zero_odd = 0;
    for (size_t i = 0; i < n; i++) {
        bad += binary_byte(b[i]);
        zero += b[i] == 0;
        zero_odd += b[i] == 0 && (i & 1);
    }
    /* Eight such bytes, and one in sixteen: random bytes have one in nine,
     * binary formats far more; a few NULs in text are the parsers' to
     * locate. */
    if (bad < 8 || bad * 16 <= n)
        return 0;
    if (zero == n)
        return hog_fail(HOG_EFORMAT, err, err_len, "%s: not text: its first %zu bytes are all zero", path, n);
    for (size_t i = 0; i < HOG_ARRAY_LEN(signatures); i++)
        if (n >= signatures[i].len && memcmp(b, signatures[i].magic, signatures[i].len) == 0)
            return hog_fail(HOG_EFORMAT, err, err_len, "%s: not text but %s", path, signatures[i].what);
    /* ASCII in UTF-16 without a byte order mark: a NUL in every other byte. */
    if (zero * 4 >= n && (zero_odd * 10 >= zero * 9 || zero_odd * 10 <= zero))
        return hog_fail(HOG_EFORMAT, err, err_len, "%s: not text but UTF-16 text, it seems (convert it to UTF-8)",
                        path);
    return hog_fail(HOG_EFORMAT, err, err_len,
                    "%s: not text but binary data (%zu of its first %zu bytes are NUL or control characters)", path,
                    bad, n);
}

/* ===================================================================== *
 *  Which text format
 *
 *  Each line of the head is classified on its own; the first line alone
 *  settles nothing, since it may be a CSV header or a line with a typo.
 *  When the lines after it agree, they decide (a first line that is not
 *  theirs is their CSV header, or a line of theirs with an error that
 *  reading it reports at its column); when they do not, the format the
 *  file's name gives among theirs, else the most of them; when there are
 *  none, the first line, or if it reads as no format, the name or its
 *  pairs. The reason is logged whenever the lines or the name disagree.
 * ===================================================================== */

#define DETECT_LINES 1000u

enum { LINE_NONE = -1, LINE_CSV = 0, LINE_LIBSVM = 1, LINE_VW = 2, LINE_FFM = 3 };

static const hog_format line_format[] = {HOG_FORMAT_CSV, HOG_FORMAT_LIBSVM, HOG_FORMAT_VW, HOG_FORMAT_FFM};

static const char *format_name(hog_format f)
{
    return f == HOG_FORMAT_LIBSVM ? "libsvm" : f == HOG_FORMAT_VW ? "VW" : f == HOG_FORMAT_FFM ? "LIBFFM" : "CSV";
}

/* Whether [s, e) reads "digits:digits:number-ish": a LIBFFM triple. */
static int is_triple(const char *s, const char *e)
{
    const char *p = s;
    while (p < e && is_digit(*p))
        p++;
    if (p == s || p == e || *p != ':')
        return 0;
    const char *i = ++p;
    while (p < e && is_digit(*p))
        p++;
    if (p == i || p == e || *p != ':' || ++p == e)
        return 0;
    for (; p < e; p++)
        if (!is_digit(*p) && !strchr(".eE+-", *p))
            return 0;
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

/* Whether [s, e) starts "digits:": a libsvm pair, well formed or not. */
static int pair_like(const char *s, const char *e)
{
    const char *p = s;
    while (p < e && is_digit(*p))
        p++;
    return p > s && p < e && *p == ':';
}

/* LINE_VW, LINE_FFM, LINE_LIBSVM, LINE_CSV, or LINE_NONE when this line cannot tell
 * (blank, a comment, a lone token). *broken: a CSV line with a token after
 * the first that starts as a libsvm pair does ("1::0.5", "2:x"), which no
 * CSV reads as a number. */
static int classify_line(const char *s, const char *e, int *broken)
{
    *broken = 0;
    const char *p = skip_blanks(s, e);
    if (p == e || *p == '#')
        return LINE_NONE;
    if (memchr(p, '|', (size_t)(e - p)))
        return LINE_VW;
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
        if (is_triple(p, te)) /* a line whose pairs have two colons */
            return LINE_FFM;
        if (is_pair(p, te) || (tokens == 1 && te - p >= 4 && memcmp(p, "qid:", 4) == 0))
            return LINE_LIBSVM;
        *broken |= pair_like(p, te);
    }
    if (tokens == 1 && !memchr(s, ',', (size_t)(e - s)) && !memchr(s, ';', (size_t)(e - s)))
        return LINE_NONE;
    return LINE_CSV;
}

/* The format a file's name gives (after a .gz or .zst), or AUTO. .txt and
 * names without one say nothing. */
static hog_format named_format(const char *path)
{
    static const char *const packed[] = {".gz", ".zst", ".zstd"};
    static const struct {
        const char *ext;
        hog_format format;
    } names[] = {{".svm", HOG_FORMAT_LIBSVM}, {".libsvm", HOG_FORMAT_LIBSVM}, {".svmlight", HOG_FORMAT_LIBSVM},
                 {".csv", HOG_FORMAT_CSV},    {".tsv", HOG_FORMAT_CSV},       {".vw", HOG_FORMAT_VW},
                 {".ffm", HOG_FORMAT_FFM}};
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    for (size_t i = 0; i < HOG_ARRAY_LEN(packed); i++) {
        size_t k = strlen(packed[i]);
        if (n > k && strcasecmp(base + n - k, packed[i]) == 0) {
            n -= k;
            break;
        }
    }
    for (size_t i = 0; i < HOG_ARRAY_LEN(names); i++) {
        size_t k = strlen(names[i].ext);
        if (n > k && strncasecmp(base + n - k, names[i].ext, k) == 0)
            return names[i].format;
    }
    return HOG_FORMAT_AUTO;
}

/* The lines of the head after the first that tells: how many of each kind. */
typedef struct line_votes {
    uint64_t first_line; /* the first line that tells (1-based), 0: none */
    int first;           /* its kind */
    int broken;          /* it is CSV only for want of a well-formed pair */
    uint64_t rest[4];    /* the later lines of each kind */
    uint64_t nrest;
} line_votes;

static void count_lines(const char *head, size_t len, line_votes *v)
{
    memset(v, 0, sizeof(*v));
    v->first = LINE_NONE;
    const char *p = head, *end = head + len;
    hog_head_line l;
    for (uint64_t line = 1; v->nrest < DETECT_LINES && hog_head_next(&p, end, &l); line++) {
        int broken, k = classify_line(l.s, l.e, &broken);
        if (k == LINE_NONE)
            continue;
        if (v->first == LINE_NONE) {
            v->first = k;
            v->broken = broken;
            v->first_line = line;
        } else { /* a malformed pair is a libsvm line's, whatever else it reads as */
            v->rest[broken ? LINE_LIBSVM : k]++;
            v->nrest++;
        }
    }
}

/* The kind most of the later lines are; a tie goes to the one the name
 * gives, then to the first line's, then libsvm, LIBFFM, VW, CSV. */
static int most_lines(const line_votes *v, hog_format named)
{
    static const int order[] = {LINE_LIBSVM, LINE_FFM, LINE_VW, LINE_CSV};
    int top = LINE_NONE;
    for (size_t i = 0; i < HOG_ARRAY_LEN(order); i++) {
        int k = order[i];
        if (top == LINE_NONE || v->rest[k] > v->rest[top] ||
            (v->rest[k] == v->rest[top] &&
             (line_format[k] == named || (k == v->first && line_format[top] != named))))
            top = k;
    }
    return top;
}

static hog_format detect_format(const char *path, const char *head, size_t len)
{
    line_votes v;
    count_lines(head, len, &v);
    const hog_format named = named_format(path);
    if (v.first == LINE_NONE) /* no data: reading it says so */
        return named != HOG_FORMAT_AUTO ? named : HOG_FORMAT_CSV;
    const unsigned long long at = (unsigned long long)v.first_line;
    const hog_format first = line_format[v.first];
    if (v.nrest == 0 && v.broken) {
        /* One line, which reads as no format but a CSV header with no data
         * after it: the name says what it should have been, or its pairs do. */
        hog_format f = named != HOG_FORMAT_AUTO ? named : HOG_FORMAT_LIBSVM;
        hog_log(HOG_LOG_WARN, "%s: line %llu reads as no format (its index:value pairs are malformed), and no line "
                "follows it: read as %s, %s", path, at, format_name(f),
                named != HOG_FORMAT_AUTO ? "as the file's name says" : "as its pairs suggest");
        return f;
    }
    int top = v.nrest ? most_lines(&v, named) : v.first;
    const hog_format rest = line_format[top];
    const int unanimous = v.rest[top] == v.nrest;
    if (first == rest && unanimous) {
        if (named != HOG_FORMAT_AUTO && named != first)
            hog_log(HOG_LOG_WARN, "%s: read as %s, as its lines are, though its name says %s", path,
                    format_name(first), format_name(named));
        return first;
    }
    const int named_kind = named == HOG_FORMAT_LIBSVM ? LINE_LIBSVM
                           : named == HOG_FORMAT_VW   ? LINE_VW
                           : named == HOG_FORMAT_CSV  ? LINE_CSV
                           : named == HOG_FORMAT_FFM  ? LINE_FFM
                                                      : LINE_NONE;
    hog_format f;
    char why[96];
    if (unanimous) { /* the first line is their format's with an error, or a CSV header */
        f = rest;
        if (f == HOG_FORMAT_CSV)
            snprintf(why, sizeof(why), "line %llu is taken for its header", at);
        else
            snprintf(why, sizeof(why), "line %llu is no CSV header but a %s line with an error", at, format_name(f));
    } else if (named_kind != LINE_NONE && (named_kind == v.first || v.rest[named_kind])) {
        f = named;
        snprintf(why, sizeof(why), "as the file's name says");
    } else {
        f = rest;
        snprintf(why, sizeof(why), "as most of them are");
    }
    char ffm[48] = ""; /* LIBFFM lines are named where there are some */
    if (v.rest[LINE_FFM])
        snprintf(ffm, sizeof(ffm), " and %llu as LIBFFM", (unsigned long long)v.rest[LINE_FFM]);
    hog_log(HOG_LOG_WARN, "%s: read as %s: line %llu reads as %s, and of the next %llu data line%s, %llu read as "
            "libsvm, %llu as CSV%s %llu as VW%s; %s", path, format_name(f), at, format_name(first),
            (unsigned long long)v.nrest, v.nrest == 1 ? "" : "s", (unsigned long long)v.rest[LINE_LIBSVM],
            (unsigned long long)v.rest[LINE_CSV], ffm[0] ? "," : " and", (unsigned long long)v.rest[LINE_VW], ffm,
            why);
    return f;
}

/* ===================================================================== *
 *  Plans: the format, and (etl_parse_csv.c) for CSV the delimiter, header
 *  and columns
 * ===================================================================== */

static int check_params(const hog_read_params *p, char *err, size_t len)
{
    if (p->format < HOG_FORMAT_AUTO || p->format > HOG_FORMAT_FFM)
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.format: %d is not a hog_format", (int)p->format);
    if (p->format == HOG_FORMAT_BINARY)
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.format: a binary dataset is not text");
    if (p->rows_per_block > HOG_MAX_ROWS_PER_BLOCK)
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.rows_per_block: %u is more than %u",
                        p->rows_per_block, HOG_MAX_ROWS_PER_BLOCK);
    if (p->hash_bits > 31)
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.hash_bits: %u is not between 0 and 31",
                        p->hash_bits);
    if (p->fields < 0 || p->fields > 1)
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.fields: %d is not 0 or 1", p->fields);
    if (p->index_base < -1 || p->index_base > 1)
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.index_base: %d is not -1 (detect), 0 or 1",
                        p->index_base);
    if (p->on_error != HOG_ON_ERROR_STOP && p->on_error != HOG_ON_ERROR_SKIP)
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.on_error: %d is not stop or skip",
                        (int)p->on_error);
    char d = p->delimiter;
    if (d != 0 && (d == '\n' || d == '\r' || d == '"' || d == '.' || d == '+' || d == '-' ||
                   d == 'e' || d == 'E' || is_digit(d)))
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.delimiter: '%c' cannot separate numbers", d);
    if (p->header < -1 || p->header > 1)
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.header: %d is not 1, 0 or -1", p->header);
    if (p->label_name && p->header == 0)
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.label_name: needs a header, but header is 0");
    if (!p->label_name && p->label_index < 0)
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.label_index: %ld is negative", p->label_index);
    return 0;
}

/* A NUL byte in the header lines (which no parser reads) at its line and column. */
static int header_text(const char *path, const char *head, uint64_t len, char *err, size_t err_len)
{
    const char *nul = len ? memchr(head, '\0', (size_t)len) : NULL;
    if (!nul)
        return 0;
    unsigned long long line = 1;
    const char *start = head;
    for (const char *q = head; (q = memchr(q, '\n', (size_t)(nul - q))) != NULL; start = ++q)
        line++;
    return hog_fail(HOG_EFORMAT, err, err_len, "%s:%llu:%llu: expected text, found a NUL byte", path, line,
                    (unsigned long long)(nul - start) + 1);
}

/* A CSV plan's numeric columns, and whether it has a categorical one. */
static uint64_t csv_numeric(const hog_text_plan *plan, int *categorical)
{
    uint64_t numeric = 0;
    *categorical = 0;
    for (uint32_t j = 0; j < plan->fields; j++) {
        numeric += plan->column_kind[j] == HOG_COL_NUMBER;
        *categorical |= plan->column_kind[j] == HOG_COL_CATEGORICAL;
    }
    return numeric;
}

static unsigned plan_hash_bits(const hog_text_plan *plan)
{
    return plan->hash_bits ? plan->hash_bits : plan->format == HOG_FORMAT_VW ? DEFAULT_STRING_BITS : 0;
}

uint64_t hog_text_plan_index_bound(const hog_text_plan *plan)
{
    const unsigned bits = plan_hash_bits(plan);
    if (bits)
        return 1ull << bits;
    if (plan->format != HOG_FORMAT_CSV)
        return 0;
    int categorical;
    const uint64_t numeric = csv_numeric(plan, &categorical);
    return numeric + (categorical ? 1ull << DEFAULT_STRING_BITS : 0);
}

/* The features a plan can make without reading an index (hashed features,
 * CSV columns) within the ceiling; libsvm indices as written are checked
 * as they are read (etl_parse_libsvm.c). */
static int check_ceiling(const char *path, const hog_text_plan *plan, char *err, size_t err_len)
{
    const uint64_t cap = plan->max_features, bound = hog_text_plan_index_bound(plan);
    const unsigned bits = plan_hash_bits(plan);
    if (!cap || !bound || bound <= cap)
        return 0;
    if (bits)
        return hog_fail(HOG_EPARAM, err, err_len, "%s: hashing into 2^%u features is past the ceiling of %llu "
                        "features (hog_read_params.max_features, hog_train_params.mem_limit): hash into fewer "
                        "(hog_read_params.hash_bits = %u)", path, bits, (unsigned long long)cap, hog_bits_within(cap));
    int categorical;
    const uint64_t numeric = csv_numeric(plan, &categorical);
    return hog_fail(HOG_EFORMAT, err, err_len, "%s:%llu: %llu numeric columns%s are past the ceiling of %llu "
                    "features (hog_read_params.max_features, hog_train_params.mem_limit): hash them "
                    "(hog_read_params.hash_bits = %u)", path, (unsigned long long)HOG_MAX(plan->header_lines, 1),
                    (unsigned long long)numeric, categorical ? " and 2^18 categorical hashes" : "",
                    (unsigned long long)cap, hog_bits_within(cap));
}

int hog_text_plan_make(const char *path, const hog_read_params *p, const char *head, size_t head_len,
                       hog_text_plan *plan, char *err, size_t err_len)
{
    memset(plan, 0, sizeof(*plan));
    int rc = check_params(p, err, err_len);
    if (rc == 0)
        rc = text_check(path, head, head_len, err, err_len);
    if (rc < 0)
        return rc;
    plan->format = p->format == HOG_FORMAT_AUTO ? detect_format(path, head, head_len) : p->format;
    plan->hash_bits = p->hash_bits;
    plan->max_features = p->max_features;
    if (plan->format == HOG_FORMAT_LIBSVM && p->index_base < 0) {
        const char *why;
        plan->index_base = hog_text_plan_index_base(head, head_len, &plan->base_lines, &why);
        hog_log(HOG_LOG_INFO, "%s: libsvm indices taken as %u-based: %s (hog_read_params.index_base sets it)", path,
                plan->index_base, why);
    } else {
        plan->index_base = p->index_base < 0 ? 0 : (unsigned)p->index_base;
    }
    plan->skip_errors = p->on_error == HOG_ON_ERROR_SKIP;
    plan->fielded = plan->format == HOG_FORMAT_FFM || (p->fields && plan->format != HOG_FORMAT_LIBSVM);
    plan->max_line = p->max_line ? p->max_line : HOG_DEFAULT_MAX_LINE;
    if (plan->format == HOG_FORMAT_CSV)
        rc = hog_text_plan_csv(path, p, head, head_len, plan, err, err_len);
    if (rc == 0)
        rc = header_text(path, head, plan->header_bytes, err, err_len);
    if (rc == 0)
        rc = check_ceiling(path, plan, err, err_len);
    if (rc == 0 && plan->fielded && plan->format == HOG_FORMAT_CSV && plan->fields > HOG_MAX_FIELDS)
        rc = hog_fail(HOG_EPARAM, err, err_len, "%s: %u columns, each a field, are more than the %u fields a data set "
                      "may have (hog_read_params.fields)", path, plan->fields, HOG_MAX_FIELDS);
    if (rc < 0)
        hog_text_plan_free(plan);
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
