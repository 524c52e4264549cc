/* etl_parse_detect.c: what the first bytes of an input say: whether they are text at all, and which text format, with the reason logged when its lines or its name disagree. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "etl_parse.h"

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

int hog_text_check(const char *path, const char *head, size_t len, char *err, size_t err_len)
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

enum { LINE_NONE = -1, LINE_CSV = 0, LINE_LIBSVM = 1, LINE_VW = 2 };

static const hog_format line_format[] = {HOG_FORMAT_CSV, HOG_FORMAT_LIBSVM, HOG_FORMAT_VW};

static const char *format_name(hog_format f)
{
    return f == HOG_FORMAT_LIBSVM ? "libsvm" : f == HOG_FORMAT_VW ? "VW" : "CSV";
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

/* LINE_VW, LINE_LIBSVM, LINE_CSV, or LINE_NONE when this line cannot tell
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
                 {".csv", HOG_FORMAT_CSV},    {".tsv", HOG_FORMAT_CSV},       {".vw", HOG_FORMAT_VW}};
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
    uint64_t rest[3];    /* the later lines of each kind */
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
 * gives, then to the first line's, then libsvm, VW, CSV. */
static int most_lines(const line_votes *v, hog_format named)
{
    static const int order[] = {LINE_LIBSVM, LINE_VW, LINE_CSV};
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

hog_format hog_text_detect(const char *path, const char *head, size_t len)
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
    hog_log(HOG_LOG_WARN, "%s: read as %s: line %llu reads as %s, and of the next %llu data line%s, %llu read as "
            "libsvm, %llu as CSV and %llu as VW; %s", path, format_name(f), at, format_name(first),
            (unsigned long long)v.nrest, v.nrest == 1 ? "" : "s", (unsigned long long)v.rest[LINE_LIBSVM],
            (unsigned long long)v.rest[LINE_CSV], (unsigned long long)v.rest[LINE_VW], why);
    return f;
}
