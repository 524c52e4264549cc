/* etl_parse_csv.c: the CSV line parser (RFC 4180 fields, one of them the label) and the CSV plan: delimiter, header, label, ignored and categorical columns. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl_parse.h"

/*
 * The CSV rules, beyond those of every format (etl_parse.c):
 *
 *  - A quoted field cannot span lines: chunks are cut at line ends without
 *    looking at quotes, so a quote left open at the end of a line is an
 *    error.
 *  - Empty fields (policy): an empty numeric field is a missing value and
 *    stores nothing, as a zero would; an empty label is an error ("expected a
 *    number"); an empty categorical field stores nothing; an empty ignored
 *    field is ignored. "" (an empty quoted field) counts as empty.
 *  - A quoted field holding a number is that number; a quoted field in a
 *    categorical column is its text with "" read as one quote.
 *  - Feature indices: numeric columns are numbered by their position among
 *    numeric columns. Categorical columns hash "name=value" into 2^bits
 *    (bits: hash_bits, or 18 if 0). With hash_bits 0 those hashes are
 *    placed after the numeric columns (index = numeric column count +
 *    hash), so they never collide with a numeric column; with hash_bits > 0
 *    numeric columns are hashed by name too, into the same 2^bits space.
 */

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

static int fields_error(hog_parse_ctx *c, const char *at, uint32_t found)
{
    char exp[32], fnd[16];
    snprintf(exp, sizeof(exp), "%u fields", c->plan->fields);
    snprintf(fnd, sizeof(fnd), "%u", found);
    return hog_parse_fail(c, at, exp, fnd);
}

/* Appends a row's class name [s, e) to r->names, NUL-terminated, its
 * doubled quotes made single when it was quoted with some. Returns 0 or
 * -ENOMEM. */
static int push_name(hog_rows *r, const char *s, const char *e, int escaped)
{
    const size_t n = (size_t)(e - s);
    void *buf = r->names;
    int rc = hog_array_grow(&buf, &r->names_cap, r->names_len + n + 1, 1, 4096);
    r->names = buf;
    if (rc < 0)
        return rc;
    char *d = r->names + r->names_len;
    for (const char *q = s; q < e; q++) {
        *d++ = *q;
        if (escaped && *q == '"' && q + 1 < e && q[1] == '"')
            q++;
    }
    *d++ = '\0';
    r->names_len = (size_t)(d - r->names);
    return 0;
}

/* The hash of "name=value" for categorical column j; [vs, ve) is the value,
 * with "" read as one quote when escaped. */
static uint32_t csv_category(const hog_parse_ctx *c, uint32_t j, const char *vs, const char *ve,
                             int escaped)
{
    hog_murmur_stream m = {0, 0, 0, 0};
    const char *name = c->plan->column_name ? c->plan->column_name[j] : NULL;
    char num[16];
    if (!name) {
        snprintf(num, sizeof(num), "%u", j);
        name = num;
    }
    hog_murmur_feed(&m, name, strlen(name));
    hog_murmur_feed(&m, "=", 1);
    if (!escaped) {
        hog_murmur_feed(&m, vs, (size_t)(ve - vs));
    } else {
        for (const char *p = vs; p < ve; p++) {
            hog_murmur_feed(&m, p, 1);
            p += *p == '"'; /* the second quote of "" */
        }
    }
    return (hog_murmur_end(&m) & c->mask) + c->cat_offset;
}

/* Adds "name=value" of categorical column j (a header's name), the
 * feature index, to the parser thread's names; [vs, ve) is the value, its
 * "" read as one quote when escaped. Returns 0 or -ENOMEM. */
static int category_name(hog_parse_ctx *c, uint32_t j, uint32_t index, const char *vs, const char *ve, int escaped)
{
    const char *name = c->plan->column_name[j];
    if (!escaped)
        return hog_fnames_add(c->out->fnames, index, name, strlen(name), '=', vs, (size_t)(ve - vs));
    char value[HOG_FEATURE_NAME_MAX + 1];
    size_t n = 0;
    for (const char *p = vs; p < ve && n <= HOG_FEATURE_NAME_MAX; p++) {
        value[n++] = *p;
        p += *p == '"'; /* the second quote of "" */
    }
    return hog_fnames_add(c->out->fnames, index, name, strlen(name), '=', value, n);
}

int hog_text_plan_fnames(const hog_text_plan *plan, hog_fnames *f)
{
    if (plan->format != HOG_FORMAT_CSV || !plan->header_lines || !plan->column_name || !plan->column_kind)
        return 0;
    int rc = 0;
    for (uint32_t j = 0; j < plan->fields && rc == 0; j++)
        if (plan->column_kind[j] == HOG_COL_NUMBER)
            rc = hog_fnames_add(f, plan->column_feature[j], plan->column_name[j], strlen(plan->column_name[j]), 0,
                                "", 0);
    return rc;
}

/* One line; fielded is a constant in each of the two copies
 * hog_parse_csv_line makes, so that the line without fields has no test
 * of them per value (a test per value cost 2% of the CSV parse's
 * instructions). */
static HOG_ALWAYS_INLINE int csv_line(hog_parse_ctx *c, const char *line, const char *le, const int fielded)
{
    const hog_text_plan *pl = c->plan;
    const char delim = pl->delimiter;
    const char *p = skip_blanks(line, le);
    if (p == le)
        return 0;
    if (delim != ' ')
        p = line;
    hog_rows *o = c->out;
    const uint32_t fields = pl->fields;
    int rc = hog_rows_reserve(o, fields);
    if (rc < 0)
        return rc;
    /* what the field loop reads, in locals: stores to the rows cannot change them */
    const uint64_t start = o->nnz;
    uint64_t nnz = start;
    uint32_t *const index = o->index;
    float *const value = o->value;
    uint16_t *const fld = fielded ? o->field : NULL; /* each value's column, with fields */
    const char *const lim = c->lim;
    const uint8_t *kind = c->kind;
    const uint32_t *feature = c->feature;
    float label = 0;
    const char *name_s = NULL, *name_e = NULL; /* a class name's field (label_names) */
    int name_escaped = 0;
    uint32_t j = 0;
    for (;; j++) {
        p = skip_pad(p, le, delim);
        const char *fs = p;
        if (HOG_UNLIKELY(j == fields))
            return fields_error(c, fs, j + csv_count_fields(p, le, delim));
        const unsigned k = kind[j];
        if (HOG_LIKELY(k == HOG_COL_NUMBER && lim - p >= 32)) {
            uint64_t m;
            unsigned nf;
            int neg;
            const char *r = decimal_parts(p, &m, &nf, &neg);
            if (HOG_LIKELY(r && r <= le && field_end(r, le, delim))) {
                float v = decimal_float(m, nf);
                v = neg ? -v : v;
                if (v != 0.0f) {
                    index[nnz] = feature[j];
                    value[nnz] = v;
                    if (fld)
                        fld[nnz] = (uint16_t)j;
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
                return hog_parse_fail(c, fs, "a closing quote", "end of line");
            vs = p + 1;
            ve = q;
            p = skip_pad(q + 1, le, delim);
            if (!field_end(p, le, delim))
                return hog_parse_fail(c, p, "a delimiter after the closing quote", NULL);
        } else if (k <= HOG_COL_LABEL) {
            double d;
            const char *e = scan_number(p, le, lim, &d);
            if (HOG_LIKELY(e != NULL)) {
                p = skip_pad(e, le, delim);
                if (HOG_UNLIKELY(!field_end(p, le, delim)))
                    return hog_parse_fail(c, fs, "a number", NULL);
                float v = 0;
                if ((rc = finite_value(c, fs, d, &v)) < 0)
                    return rc;
                if (k == HOG_COL_LABEL) {
                    label = v;
                } else if (v != 0.0f) {
                    index[nnz] = feature[j];
                    value[nnz] = v;
                    if (fld)
                        fld[nnz] = (uint16_t)j;
                    nnz++;
                }
                goto next;
            }
            if (!field_end(p, le, delim))
                return hog_parse_fail(c, fs, "a number", NULL);
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
                index[nnz] = csv_category(c, j, vs, ve, escaped);
                value[nnz] = 1.0f;
                if (o->fnames && pl->header_lines && (rc = category_name(c, j, index[nnz], vs, ve, escaped)) < 0)
                    return rc;
                if (fld)
                    fld[nnz] = (uint16_t)j;
                nnz++;
            }
        } else if (k == HOG_COL_LABEL_NAME) {
            if (ve == vs)
                return hog_parse_fail(c, fs, "a class label", NULL);
            if ((size_t)(ve - vs) > HOG_LABEL_NAME_MAX) {
                char what[64];
                snprintf(what, sizeof(what), "a class label of at most %u bytes", HOG_LABEL_NAME_MAX);
                return hog_parse_fail(c, fs, what, NULL);
            }
            name_s = vs;
            name_e = ve;
            name_escaped = escaped;
        } else if (k <= HOG_COL_LABEL) {
            if (ve == vs) {
                if (k == HOG_COL_LABEL)
                    return hog_parse_fail(c, fs, "a number", NULL);
            } else {
                double d;
                const char *e = escaped ? NULL : scan_number(vs, ve, lim, &d);
                if (e != ve)
                    return hog_parse_fail(c, fs, "a number", NULL);
                float v = 0;
                if ((rc = finite_value(c, fs, d, &v)) < 0)
                    return rc;
                if (k == HOG_COL_LABEL) {
                    label = v;
                } else if (v != 0.0f) {
                    index[nnz] = feature[j];
                    value[nnz] = v;
                    if (fld)
                        fld[nnz] = (uint16_t)j;
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
    if (HOG_UNLIKELY(j + 1 < fields))
        return fields_error(c, le, j + 1);
    o->nnz = nnz;
    if (c->csv_merge && (rc = hog_row_sort_merge(c, start)) < 0)
        return rc;
    if (name_s && (rc = push_name(o, name_s, name_e, name_escaped)) < 0)
        return rc;
    hog_rows_push(o, label);
    return 1;
}

int hog_parse_csv_line(hog_parse_ctx *c, const char *line, const char *le)
{
    return c->out->fielded ? csv_line(c, line, le, 1) : csv_line(c, line, le, 0);
}

/* The CSV tables of a plan made by hand: the label column, numeric columns
 * numbered by position (or hashed by their number as text). */
int hog_parse_csv_tables(hog_parse_ctx *c)
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
            c->own_kind[pl->label_col] = pl->label_names ? HOG_COL_LABEL_NAME : HOG_COL_LABEL;
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

/* ===================================================================== *
 *  The plan: delimiter, header, fields and their kinds
 * ===================================================================== */

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
    uint8_t *number; /* 1: the field reads as a number; 2: it is empty */
    uint32_t n;
    size_t cap;
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
    size_t cap = l->cap, ncap = cap;
    void *name = l->name, *number = l->number;
    int rc = hog_array_grow(&name, &ncap, (size_t)l->n + 1, sizeof(char *), 16);
    l->name = name;
    if (rc == 0)
        rc = hog_array_grow(&number, &cap, (size_t)l->n + 1, 1, 16);
    l->number = number;
    if (rc < 0)
        return rc;
    l->cap = cap;
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
static int csv_split(hog_parse_ctx *c, const char *line, const char *le, char delim, name_list *l)
{
    const char *p = delim == ' ' ? skip_blanks(line, le) : line;
    for (;;) {
        if (l->n == UINT32_MAX - 1)
            return hog_parse_fail(c, p, "fewer than 2^32 fields", NULL);
        p = skip_pad(p, le, delim);
        const char *fs = p, *vs = p, *ve;
        int escaped = 0;
        if (p < le && *p == '"') {
            const char *q = quote_end(p, le, &escaped);
            if (!q)
                return hog_parse_fail(c, fs, "a closing quote", "end of line");
            vs = p + 1;
            ve = q;
            p = skip_pad(q + 1, le, delim);
            if (!field_end(p, le, delim))
                return hog_parse_fail(c, p, "a delimiter after the closing quote", NULL);
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


/* Whether field j of l is a class name: not a number, and not starting
 * as one would (a digit, a sign, a point), so that a mistyped number
 * ("1,5" in a file of ';') stays an error at its place. */
static int is_name(const name_list *l, uint32_t j)
{
    const char c = l->name[j][0];
    return l->number[j] == 0 && !is_digit(c) && c != '-' && c != '+' && c != '.';
}

/* The CSV part of a plan: delimiter, header, fields and their kinds. */
int hog_text_plan_csv(const char *path, const hog_read_params *p, const char *head, size_t head_len,
                      hog_text_plan *plan, char *err, size_t err_len)
{
    const char *q = head, *end = head + head_len;
    hog_head_line l;
    uint64_t lines = 0;
    int found = 0;
    while (hog_head_next(&q, end, &l)) {
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

    hog_parse_ctx c;
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

    /* The next line, for the label column's kind: class names when its
     * label field is not a number (a header's name then says nothing). */
    name_list second;
    memset(&second, 0, sizeof(second));
    const char *q2 = l.next;
    hog_head_line l2;
    uint64_t lines2 = lines;
    while (hog_head_next(&q2, end, &l2)) {
        lines2++;
        if (skip_blanks(l2.s, l2.e) < l2.e) {
            c.line = l2.s;
            c.le = l2.e;
            c.line_no = lines2;
            rc = csv_split(&c, l2.s, l2.e, plan->delimiter, &second);
            if (rc == -ENOMEM) {
                names_free(&second);
                names_free(&names);
                return hog_fail(rc, err, err_len, "%s: out of memory", path);
            }
            if (rc < 0) /* a malformed line: the parser names it */
                names_free(&second);
            rc = 0;
            break;
        }
    }
    const uint32_t by_index = p->label_name || p->label_index < 0 ? UINT32_MAX : (uint32_t)p->label_index;
    const uint32_t names_at = by_index < second.n && is_name(&second, by_index) ? by_index : UINT32_MAX;

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
        for (uint32_t j = 0; j < names.n; j++) /* a column of class names is never a number */
            header |= kinds[j] == HOG_COL_NUMBER && names.number[j] == 0 && j != names_at;
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
    /* class names: the first data line's label is not a number */
    const name_list *data = header ? &second : &names;
    /* without a header the next line must agree: "y" over numbers is a
     * header that was said not to be one, an error at its place */
    if (plan->label_col < data->n && is_name(data, plan->label_col) &&
        (header || plan->label_col >= second.n || is_name(&second, plan->label_col))) {
        plan->label_names = 1;
        kinds[plan->label_col] = HOG_COL_LABEL_NAME;
    }

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
    names_free(&second);
    if (rc == -ENOMEM)
        hog_fail(rc, err, err_len, "%s: out of memory", path);
    return rc;
}
