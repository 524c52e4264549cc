/* etl_text.c: format detection and strict libsvm/CSV text parsing: per-line parsers fed by a buffered line reader. */
#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl.h"

/* The line parsers below see one NUL-terminated line (no newline) and
 * produce one row or a located error; the reader at the bottom only feeds
 * them lines. A parallel reader can reuse the parsers on its own chunks. */

#define READ_BUFFER (1u << 20)
#define SNIPPET_MAX 20
#define DETECT_LINES 1000

/* ===================================================================== *
 *  Parser state
 * ===================================================================== */

typedef struct text_ctx {
    const char *path;
    uint64_t line_no; /* 1-based */
    locale_t c_locale;
    char *err;
    size_t err_len;

    /* the row being parsed */
    float label;
    uint32_t *index;
    float *value;
    uint32_t nnz;
    size_t cap;

    /* CSV */
    char delim;          /* ' ' means runs of blanks */
    int header;          /* 1, 0 or -1 (detect) */
    const char *label_name;
    long label_index;
    int started;         /* the first non-blank line has been seen */
    uint32_t fields;     /* fields on every line */
    uint32_t label_col;
} text_ctx;

static inline int is_blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

static inline int is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

static char *skip_blanks(char *p)
{
    while (is_blank(*p))
        p++;
    return p;
}

static int push(text_ctx *c, uint32_t idx, float v)
{
    if (c->nnz == c->cap) {
        size_t n = c->cap ? c->cap * 2 : 256;
        uint32_t *ix = hog_realloc(c->index, n * sizeof(uint32_t));
        if (!ix)
            return -ENOMEM;
        c->index = ix;
        float *vv = hog_realloc(c->value, n * sizeof(float));
        if (!vv)
            return -ENOMEM;
        c->value = vv;
        c->cap = n;
    }
    c->index[c->nnz] = idx;
    c->value[c->nnz] = v;
    c->nnz++;
    return 0;
}

/* ===================================================================== *
 *  Located errors: "path:line:column: expected X, found Y"
 * ===================================================================== */

/* Writes the text at `at` as the message's "found" part: up to SNIPPET_MAX
 * characters of the token (up to a blank or `stop`), quoted; a lone
 * separator when the token is empty; "end of line" at the end. */
static void snippet(const char *at, char stop, char *out, size_t len)
{
    if (*at == '\0') {
        snprintf(out, len, "end of line");
        return;
    }
    char tok[SNIPPET_MAX + 4];
    size_t n = 0;
    const char *p = at;
    /* A lone separator is shown as itself; otherwise the token up to the next one. */
    size_t max = is_blank(*p) || *p == stop ? 1 : SNIPPET_MAX;
    do {
        unsigned char ch = (unsigned char)*p++;
        tok[n++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    } while (n < max && *p && !is_blank(*p) && *p != stop);
    if (n == SNIPPET_MAX && *p && !is_blank(*p) && *p != stop) {
        memcpy(tok + n, "...", 3);
        n += 3;
    }
    tok[n] = '\0';
    snprintf(out, len, "'%s'", tok);
}

/* Reports an error at `at` within `line`; found == NULL takes a snippet of the text there. */
static int bad(const text_ctx *c, const char *line, const char *at, const char *expected,
               const char *found)
{
    char buf[SNIPPET_MAX + 16];
    if (!found) {
        snippet(at, c->delim, buf, sizeof(buf));
        found = buf;
    }
    return hog_fail(HOG_EFORMAT, c->err, c->err_len, "%s:%llu:%zu: expected %s, found %s",
                    c->path, (unsigned long long)c->line_no, (size_t)(at - line) + 1, expected,
                    found);
}

/* ===================================================================== *
 *  Numbers
 * ===================================================================== */

/* Parses a decimal number at s ([+-] digits [. digits] [e [+-] digits], or
 * with the digits only after the point) and returns where it ends, or NULL
 * if none starts there. hex floats, "inf" and "nan", which strtod would take
 * and no data file means, are refused by this grammar.
 *
 * Most numbers in data files have few digits and a small exponent; those
 * are computed exactly with one IEEE multiply or divide (Clinger's fast
 * path: both operands are exact, so the result is correctly rounded, the
 * same double strtod returns). Everything else goes to strtod_l under the C
 * locale, so '.' is the decimal point whatever the program's locale is. */
static const char *parse_number(const text_ctx *c, const char *s, double *out)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char *p = s;
    int neg = *p == '-';
    p += *p == '+' || *p == '-';
    uint64_t m = 0;
    int nd = 0, exp10 = 0, any = 0, slow = 0;
    for (; is_digit(*p); p++, any = 1) {
        if (nd < 19) {
            m = m * 10 + (uint64_t)(*p - '0');
            nd += m != 0; /* leading zeros are not significant */
        } else {
            slow = 1;
        }
    }
    if (*p == '.') {
        for (p++; is_digit(*p); p++, any = 1) {
            if (nd < 19) {
                m = m * 10 + (uint64_t)(*p - '0');
                nd += m != 0;
                exp10--;
            } else {
                slow = 1;
            }
        }
    }
    if (!any)
        return NULL;
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1;
        int eneg = *q == '-';
        q += *q == '+' || *q == '-';
        if (is_digit(*q)) { /* else the 'e' is not part of the number */
            int e = 0;
            for (; is_digit(*q); q++)
                if (e < 100000)
                    e = e * 10 + (*q - '0');
            exp10 += eneg ? -e : e;
            p = q;
        }
    }
#if FLT_EVAL_METHOD == 0
    if (!slow && m <= (1ULL << 53) && exp10 >= -22 && exp10 <= 22) {
        double d = (double)m;
        d = exp10 < 0 ? d / pow10[-exp10] : d * pow10[exp10];
        *out = neg ? -d : d;
        return p;
    }
#else
    (void)pow10;
    (void)neg;
    (void)slow;
#endif
    char *end;
    double d = strtod_l(s, &end, c->c_locale);
    if (end != p)
        return NULL;
    *out = d;
    return p;
}

/* Parses the number that must fill [s, e) as a finite f32. */
static int field_number(const text_ctx *c, const char *line, const char *s, const char *e,
                        float *out)
{
    double d = 0;
    const char *end = s < e ? parse_number(c, s, &d) : NULL;
    if (end != e)
        return bad(c, line, s, "a number", NULL);
    float f = (float)d; /* beyond FLT_MAX this is inf and is refused below */
    if (!isfinite(f))
        return bad(c, line, s, "a finite number", NULL);
    *out = f;
    return 0;
}

/* Parses unsigned decimal digits at s; *over is set when the value exceeds UINT32_MAX. */
static const char *parse_index(const char *s, uint32_t *out, int *over)
{
    uint64_t v = 0;
    *over = 0;
    if (!is_digit(*s))
        return NULL;
    for (; is_digit(*s); s++) {
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > UINT32_MAX) {
            *over = 1;
            v = UINT32_MAX;
        }
    }
    *out = (uint32_t)v;
    return s;
}

/* ===================================================================== *
 *  libsvm / svmlight:  label [qid:N] idx:val idx:val ... [# comment]
 * ===================================================================== */

/* Returns 1 with a row in c, 0 for a line with no row, or an error. */
static int svm_line(text_ctx *c, char *line)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *p = skip_blanks(line);
    if (*p == '\0')
        return 0;

    c->nnz = 0;
    char *te = p + strcspn(p, " \t");
    int rc = field_number(c, line, p, te, &c->label);
    if (rc < 0)
        return rc;

    int first = 1, have_prev = 0;
    uint32_t prev = 0;
    for (p = skip_blanks(te); *p; p = skip_blanks(te), first = 0) {
        te = p + strcspn(p, " \t");
        if (first && strncmp(p, "qid:", 4) == 0) {
            uint32_t qid;
            int over;
            const char *q = parse_index(p + 4, &qid, &over);
            if (q != te || over)
                return bad(c, line, p + 4, "a query id", NULL);
            continue;
        }
        uint32_t idx;
        int over;
        const char *q = parse_index(p, &idx, &over);
        if (!q || *q != ':')
            return bad(c, line, p, "index:value", NULL);
        if (over)
            return bad(c, line, p, "an index below 4294967296", NULL);
        /* Order is checked on every pair, stored or not (zeros are dropped). */
        if (have_prev && idx <= prev) {
            char exp[48], found[16];
            snprintf(exp, sizeof(exp), "an index greater than %u", prev);
            snprintf(found, sizeof(found), "%u", idx);
            return bad(c, line, p, exp, found);
        }
        float v = 0;
        rc = field_number(c, line, q + 1, te, &v);
        if (rc < 0)
            return rc;
        if (v != 0.0f && (rc = push(c, idx, v)) < 0)
            return rc;
        prev = idx;
        have_prev = 1;
    }
    return 1;
}

/* ===================================================================== *
 *  CSV: numeric fields, one of them the label
 * ===================================================================== */

/* A cursor over the fields of a data line (no quoting). */
typedef struct csv_cursor {
    char *p;
    int done;
} csv_cursor;

/* Sets [*fs, *fe) to the next field, blanks trimmed; returns 0 when there is none.
 * With ' ' as the delimiter any run of blanks separates fields. */
static int csv_next(const text_ctx *c, csv_cursor *cur, char **fs, char **fe)
{
    if (cur->done)
        return 0;
    char *p = cur->p;
    if (c->delim == ' ') {
        p = skip_blanks(p);
        if (*p == '\0') {
            cur->done = 1;
            return 0;
        }
        *fs = p;
        *fe = cur->p = p + strcspn(p, " \t");
        return 1;
    }
    char *d = strchr(p, c->delim);
    char *e = d ? d : p + strlen(p);
    cur->done = d == NULL;
    cur->p = d ? d + 1 : e;
    while (p < e && is_blank(*p) && *p != c->delim)
        p++;
    while (e > p && is_blank(e[-1]) && e[-1] != c->delim)
        e--;
    *fs = p;
    *fe = e;
    return 1;
}

static int csv_data(text_ctx *c, char *line)
{
    csv_cursor cur = {line, 0};
    char *fs, *fe;
    uint32_t j = 0;
    c->nnz = 0;
    for (; csv_next(c, &cur, &fs, &fe); j++) {
        if (j == c->fields) {
            uint32_t n = j + 1;
            char *s2, *e2;
            while (csv_next(c, &cur, &s2, &e2))
                n++;
            char exp[32], found[32];
            snprintf(exp, sizeof(exp), "%u fields", c->fields);
            snprintf(found, sizeof(found), "%u", n);
            return bad(c, line, fs, exp, found);
        }
        float v = 0;
        int rc = field_number(c, line, fs, fe, &v);
        if (rc < 0)
            return rc;
        if (j == c->label_col)
            c->label = v;
        else if (v != 0.0f && (rc = push(c, j - (j > c->label_col), v)) < 0)
            return rc;
    }
    if (j < c->fields) {
        char exp[32], found[32];
        snprintf(exp, sizeof(exp), "%u fields", c->fields);
        snprintf(found, sizeof(found), "%u", j);
        return bad(c, line, line + strlen(line), exp, found);
    }
    return 1;
}

/* The delimiter of a first line: the most frequent of ',', ';', '\t' outside
 * quotes, else ' ' if the line has inner blanks, else ','. */
static char csv_detect_delim(const char *line)
{
    static const char cand[] = {',', ';', '\t'};
    size_t count[3] = {0, 0, 0};
    int quoted = 0;
    for (const char *p = line; *p; p++) {
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
    const char *s = line;
    while (is_blank(*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && is_blank(s[n - 1]))
        n--;
    return memchr(s, ' ', n) || memchr(s, '\t', n) ? ' ' : ',';
}

/* Reads the first line as names, RFC 4180 quotes allowed (in place: the
 * unquoted name is written over the quoted text). Sets c->fields and, when
 * a name is asked for, c->label_col; *numeric tells whether every field is
 * a plain number (then the line may be data). */
static int csv_names(text_ctx *c, char *line, int *numeric, int *found_name)
{
    const char stops[3] = {c->delim, c->delim == ' ' ? '\t' : '\0', '\0'};
    char *p = line;
    uint32_t n = 0;
    *numeric = 1;
    *found_name = 0;
    for (;;) {
        if (c->delim == ' ') {
            p = skip_blanks(p);
            if (*p == '\0')
                break;
        } else {
            while (is_blank(*p) && *p != c->delim)
                p++;
        }
        char *fs = p, *fe;
        int quoted = *p == '"';
        if (quoted) {
            char *w = p, *r = p + 1;
            for (;;) {
                if (*r == '\0')
                    return bad(c, line, fs, "a closing quote", "end of line");
                if (*r == '"') {
                    if (r[1] != '"')
                        break;
                    r++; /* "" is one quote */
                }
                *w++ = *r++;
            }
            fe = w;
            for (p = r + 1; is_blank(*p) && *p != c->delim && c->delim != ' '; p++)
                ;
            if (*p != '\0' && *p != c->delim && !(c->delim == ' ' && is_blank(*p)))
                return bad(c, line, p, "a delimiter after the closing quote", NULL);
        } else {
            p += strcspn(p, stops);
            fe = p;
            while (fe > fs && is_blank(fe[-1]) && fe[-1] != c->delim)
                fe--;
        }
        if (*numeric) {
            double d;
            *numeric = !quoted && fs < fe && parse_number(c, fs, &d) == fe;
        }
        size_t len = (size_t)(fe - fs);
        if (c->label_name && !*found_name && strlen(c->label_name) == len &&
            memcmp(c->label_name, fs, len) == 0) {
            c->label_col = n;
            *found_name = 1;
        }
        if (n == UINT32_MAX)
            return bad(c, line, fs, "fewer than 2^32 fields", NULL);
        n++;
        if (*p == '\0')
            break;
        p++; /* the delimiter */
    }
    c->fields = n;
    return 0;
}

/* The first non-blank line: delimiter, field count, header and label column. */
static int csv_first(text_ctx *c, char *line)
{
    c->started = 1;
    if (c->delim == 0)
        c->delim = csv_detect_delim(line);
    int header = c->label_name ? 1 : c->header;

    /* Names are parsed on a copy, so a line that turns out to be data is parsed intact. */
    char *copy = hog_strdup(line);
    if (!copy)
        return -ENOMEM;
    int numeric, found_name;
    int rc = csv_names(c, copy, &numeric, &found_name);
    hog_free(copy);
    if (rc < 0)
        return rc;
    if (header == -1)
        header = !numeric;
    if (c->label_name && !found_name)
        return hog_fail(HOG_EPARAM, c->err, c->err_len, "%s: no column named '%s' in the header",
                        c->path, c->label_name);
    if (!c->label_name) {
        if (c->label_index < 0 || (uint64_t)c->label_index >= c->fields)
            return hog_fail(HOG_EPARAM, c->err, c->err_len,
                            "%s: label column %ld is out of range: the first line has %u fields",
                            c->path, c->label_index, c->fields);
        c->label_col = (uint32_t)c->label_index;
    }
    return header ? 0 : csv_data(c, line);
}

static int csv_line(text_ctx *c, char *line)
{
    if (*skip_blanks(line) == '\0')
        return 0;
    if (!c->started)
        return csv_first(c, line);
    return csv_data(c, line);
}

/* ===================================================================== *
 *  Detection
 * ===================================================================== */

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

/* 1: libsvm, 0: CSV, -1: cannot tell from this line (blank, comment, or a lone token). */
static int classify_line(char *line)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *p = skip_blanks(line);
    if (*p == '\0')
        return -1;
    char *te = p + strcspn(p, " \t");
    int tokens = 1;
    for (p = skip_blanks(te); *p; p = skip_blanks(te), tokens++) {
        te = p + strcspn(p, " \t");
        if (is_pair(p, te) || (tokens == 1 && strncmp(p, "qid:", 4) == 0))
            return 1;
    }
    if (tokens == 1 && !strpbrk(line, ",;"))
        return -1;
    return 0;
}

static void strip_eol(char *line, ssize_t *n)
{
    while (*n > 0 && (line[*n - 1] == '\n' || line[*n - 1] == '\r'))
        line[--*n] = '\0';
}

int hog_detect_format(const char *path, hog_format *fmt)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    /* The magic, or a NUL byte early on (text has none), means binary: a
     * damaged .hgd then gets the binary reader's verdict, not a text error. */
    unsigned char head[4096];
    size_t got = fread(head, 1, sizeof(head), f);
    if (ferror(f)) {
        int rc = errno ? -errno : -EIO;
        fclose(f);
        return rc;
    }
    if ((got >= 8 && memcmp(head, HOG_HGD_MAGIC, 8) == 0) || memchr(head, '\0', got)) {
        fclose(f);
        *fmt = HOG_FORMAT_BINARY;
        return 0;
    }
    rewind(f);
    *fmt = HOG_FORMAT_CSV; /* also for a file with no data: reading it reports that */
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    for (int seen = 0; seen < DETECT_LINES && (n = getline(&line, &cap, f)) >= 0; seen++) {
        strip_eol(line, &n);
        int k = classify_line(line);
        if (k >= 0) {
            *fmt = k ? HOG_FORMAT_LIBSVM : HOG_FORMAT_CSV;
            break;
        }
    }
    int rc = ferror(f) ? (errno ? -errno : -EIO) : 0;
    free(line);
    fclose(f);
    return rc;
}

/* ===================================================================== *
 *  The reader: big buffered reads, one line at a time into the parsers
 * ===================================================================== */

static int check_csv_params(const hog_read_params *p, char *err, size_t len)
{
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

int hog_text_read(const char *path, const hog_read_params *p, hog_builder *b, char *err,
                  size_t err_len)
{
    if (p->format != HOG_FORMAT_LIBSVM && p->format != HOG_FORMAT_CSV)
        return hog_fail(HOG_EPARAM, err, err_len, "format: text reading needs libsvm or CSV");
    int rc = p->format == HOG_FORMAT_CSV ? check_csv_params(p, err, err_len) : 0;
    if (rc < 0)
        return rc;

    text_ctx c;
    memset(&c, 0, sizeof(c));
    c.path = path;
    c.err = err;
    c.err_len = err_len;
    c.delim = p->format == HOG_FORMAT_CSV ? p->delimiter : 0;
    c.header = p->header;
    c.label_name = p->label_name;
    c.label_index = p->label_index;
    c.c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (c.c_locale == (locale_t)0)
        return hog_fail(-ENOMEM, err, err_len, "%s: cannot make the C locale", path);

    char *buf = hog_malloc(READ_BUFFER);
    FILE *f = buf ? fopen(path, "re") : NULL;
    if (!f) {
        rc = buf ? -errno : -ENOMEM;
        hog_free(buf);
        freelocale(c.c_locale);
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    }
    setvbuf(f, buf, _IOFBF, READ_BUFFER);

    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) >= 0) {
        c.line_no++;
        strip_eol(line, &n);
        if (memchr(line, '\0', (size_t)n)) {
            rc = bad(&c, line, line + strlen(line), "text", "a NUL byte");
            break;
        }
        rc = p->format == HOG_FORMAT_CSV ? csv_line(&c, line) : svm_line(&c, line);
        if (rc < 0)
            break;
        if (rc == 0)
            continue;
        rc = hog_builder_add(b, c.label, c.index, c.value, c.nnz);
        if (rc < 0) {
            if (rc == HOG_EPARAM)
                hog_fail(rc, err, err_len,
                         "%s:%llu: the block holding this row passes 2^32 values or bytes "
                         "(use fewer rows per block)",
                         path, (unsigned long long)c.line_no);
            else
                hog_fail(rc, err, err_len, "%s:%llu: %s", path, (unsigned long long)c.line_no,
                         hog_strerror(rc));
            break;
        }
        rc = 0;
    }
    if (rc == 0 && ferror(f)) {
        rc = errno ? -errno : -EIO;
        hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    }
    free(line); /* getline's buffer comes from malloc */
    fclose(f);
    hog_free(buf);
    hog_free(c.index);
    hog_free(c.value);
    freelocale(c.c_locale);
    return rc;
}
