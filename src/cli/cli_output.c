/* cli_output.c: the command's output files (predictions, reports), written whole or not at all through hog_output, and the JSON they hold. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* stdio writes through this into the library's atomic output, so a report
 * or the predictions are printed as to any FILE. */
static ssize_t out_write(void *cookie, const char *buf, size_t len)
{
    cli_out *o = cookie;
    int rc = hog_output_write(o->out, buf, len);
    if (rc < 0) {
        o->rc = rc;
        errno = -rc;
        return -1;
    }
    return (ssize_t)len;
}

int cli_out_open(cli_out *o, const char *path)
{
    memset(o, 0, sizeof(*o));
    if (!path || cli_is_stdout(path)) {
        o->f = stdout;
        return 0;
    }
    o->path = path;
    int rc = hog_output_open(path, &o->out);
    if (rc < 0) {
        cli_error("%s: cannot create a file beside it: %s", path, hog_strerror(rc));
        return -1;
    }
    o->f = fopencookie(o, "w", (cookie_io_functions_t){.write = out_write});
    if (!o->f) {
        cli_error("%s: out of memory", path);
        hog_output_abort(o->out);
        return -1;
    }
    return 0;
}

int cli_output_check(const char *path)
{
    hog_output *o;
    int rc = hog_output_open(path, &o);
    if (rc < 0) {
        cli_error("%s: cannot create a file beside it: %s", path, hog_strerror(rc));
        return -1;
    }
    hog_output_abort(o);
    return 0;
}

int cli_out_close(cli_out *o, int ok)
{
    if (o->f == stdout)
        return fflush(stdout) == 0 || !ok ? 0 : -1;
    int written = fflush(o->f) == 0 && !ferror(o->f);
    fclose(o->f);
    if (!ok || !written) {
        hog_output_abort(o->out);
        if (!ok)
            return 0;
        cli_error("%s: write failed: %s", o->path, hog_strerror(o->rc ? o->rc : -EIO));
        return -1;
    }
    int rc = hog_output_commit(o->out);
    if (rc < 0) {
        cli_error("%s: write failed: %s", o->path, hog_strerror(rc));
        return -1;
    }
    return 0;
}

void cli_json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.10g", v);
    else
        fputs("null", f);
}

void cli_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void cli_text_name(FILE *f, const char *s)
{
    int quote = *s == '\0';
    for (const unsigned char *c = (const unsigned char *)s; *c && !quote; c++)
        quote = *c <= ' ' || *c == '"' || *c == 0x7f;
    if (!quote) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void cli_json_metrics(FILE *f, const hog_metrics *m)
{
    fprintf(f, "{\"rows\": %llu, \"loss\": ", (unsigned long long)m->rows);
    cli_json_number(f, m->loss);
    fputs(", \"logloss\": ", f);
    cli_json_number(f, m->logloss);
    fputs(", \"accuracy\": ", f);
    cli_json_number(f, m->accuracy);
    fputs(", \"auc\": ", f);
    cli_json_number(f, m->auc);
    fputs(", \"rmse\": ", f);
    cli_json_number(f, m->rmse);
    fputc('}', f);
}

