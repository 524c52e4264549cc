/* etl_parse_vw.c: the Vowpal Wabbit line parser: label, importance weight, tag and hashed features in namespaces. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <math.h>
#include <string.h>

#include "etl_parse.h"

/* ===================================================================== *
 *  Vowpal Wabbit: label [importance] ['tag]|namespace[:scale] f[:v] ... |...
 *
 *  Features are hashed with the namespace's hash as seed (the default
 *  namespace seeds 0), every feature string is hashed (plain integers
 *  too), a namespace scale multiplies its values. Read with fields
 *  (hog_read_params.fields), each namespace is a field, numbered by the byte its name starts with, the default
 *  namespace's 32 (a space), as Vowpal Wabbit's -q names namespaces:
 *  stable across files, whatever order their namespaces come in. With rows->fnames set,
 *  each feature's name ("namespace^feature", or "feature" in the default
 *  namespace) goes to the parser thread's set (hog_parse_vw_names).
 * ===================================================================== */

/* One line; fielded is a constant in each of the two copies
 * hog_parse_vw_line makes, so that the line without fields has no test
 * of them per feature. */
static HOG_ALWAYS_INLINE int vw_line(hog_parse_ctx *c, const char *line, const char *le, const int fielded)
{
    const char *p = skip_blanks(line, le);
    if (p == le)
        return 0;
    const char *bar = memchr(p, '|', (size_t)(le - p));
    if (!bar)
        return hog_parse_fail(c, le, "'|' and features", "end of line");
    if (p == bar)
        return hog_parse_fail(c, p, "a label", NULL);
    hog_rows *o = c->out;
    int rc = hog_rows_reserve(o, (uint64_t)(le - p) / 2 + 1);
    if (rc < 0)
        return rc;
    const uint64_t start = o->nnz;

    double d;
    const char *e = scan_number(p, bar, c->lim, &d);
    if (!e || (e < bar && !is_blank(*e)))
        return hog_parse_fail(c, p, "a number", NULL);
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
                return rc < 0 ? rc : hog_parse_fail(c, t, "a non-negative importance weight", NULL);
            seen_weight = 1;
            continue;
        }
        return hog_parse_fail(c, t, seen_weight || seen_tag ? "'|'" : "an importance weight or a 'tag", NULL);
    }

    uint64_t nnz = start;
    uint16_t *const fld = fielded ? o->field : NULL;
    for (const char *s = bar; s < le;) { /* s is at a '|' */
        const char *n = s + 1, *ne = n;
        while (ne < le && !is_blank(*ne) && *ne != '|' && *ne != ':')
            ne++;
        uint32_t seed = ne > n ? hog_murmur3_32(n, (size_t)(ne - n), 0) : 0;
        const uint16_t field = ne > n ? (unsigned char)*n : ' ';
        double scale = 1;
        const char *q = ne;
        if (q < le && *q == ':') {
            const char *vs = q + 1;
            e = scan_number(vs, le, c->lim, &scale);
            if (!e || !(e == le || is_blank(*e) || *e == '|'))
                return hog_parse_fail(c, vs, "a number", NULL);
            if (!isfinite(scale))
                return hog_parse_fail(c, vs, "a finite number", NULL);
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
                return hog_parse_fail(c, t, "a feature name", NULL);
            double v = 1;
            if (colon && scan_number(colon + 1, q, c->lim, &v) != q)
                return hog_parse_fail(c, colon + 1, "a number", NULL);
            float f = 0;
            if ((rc = finite_value(c, colon ? colon + 1 : t, v * scale, &f)) < 0)
                return rc;
            if (f != 0.0f) {
                o->index[nnz] = hog_murmur3_32(t, (size_t)(name_end - t), seed) & c->mask;
                o->value[nnz] = f;
                if (fld)
                    fld[nnz] = field;
                nnz++;
            }
        }
        s = q;
    }
    o->nnz = nnz;
    if ((rc = hog_row_sort_merge(c, start)) < 0)
        return rc;
    o->weight[o->rows] = weight;
    hog_rows_push(o, label);
    return 1;
}

int hog_parse_vw_line(hog_parse_ctx *c, const char *line, const char *le)
{
    return c->out->fielded ? vw_line(c, line, le, 1) : vw_line(c, line, le, 0);
}

int hog_parse_vw_names(const hog_parse_ctx *c, const char *line, const char *le)
{
    hog_fnames *const fnames = c->out->fnames;
    const char *s = memchr(line, '|', (size_t)(le - line));
    int rc = 0;
    if (!s)
        return 0;
    while (s < le && rc == 0) { /* s is at a '|' */
        const char *n = s + 1, *ne = n;
        while (ne < le && !is_blank(*ne) && *ne != '|' && *ne != ':')
            ne++;
        const uint32_t seed = ne > n ? hog_murmur3_32(n, (size_t)(ne - n), 0) : 0;
        double scale = 1;
        const char *q = ne;
        if (q < le && *q == ':')
            q = scan_number(q + 1, le, c->lim, &scale);
        for (;;) {
            q = skip_blanks(q, le);
            if (q == le || *q == '|')
                break;
            const char *t = q, *colon = NULL;
            for (; q < le && !is_blank(*q) && *q != '|'; q++)
                if (*q == ':' && !colon)
                    colon = q;
            const char *name_end = colon ? colon : q;
            double v = 1;
            if (colon)
                (void)scan_number(colon + 1, q, c->lim, &v);
            if ((float)(v * scale) == 0.0f)
                continue;
            const uint32_t index = hog_murmur3_32(t, (size_t)(name_end - t), seed) & c->mask;
            if ((rc = hog_fnames_add(fnames, index, n, (size_t)(ne - n), ne > n ? '^' : 0, t,
                                     (size_t)(name_end - t))) < 0)
                break;
        }
        s = q;
    }
    return rc;
}
