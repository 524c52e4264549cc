/* cli_common.c: what every subcommand shares: messages, option values, the data-reading options and opening data. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/stat.h>

#include "cli.h"

int cli_quiet;

/* Messages hold the library's error details, which name its settings
 * (hog_train_params.step): the user reads the option instead (--step). */
#define MSG_LEN (4 * CLI_ERR_LEN)

void cli_error(const char *fmt, ...)
{
    char msg[MSG_LEN], text[MSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cli_flags_rewrite(msg, text, sizeof(text));
    fprintf(stderr, "hogtrain: %s\n", text);
}

void cli_log(void *ctx, hog_log_level level, const char *msg)
{
    (void)ctx;
    char text[MSG_LEN];
    cli_flags_rewrite(msg, text, sizeof(text));
    fprintf(stderr, "hogtrain: %s%s\n", level == HOG_LOG_ERROR ? "error: " : level == HOG_LOG_WARN ? "warning: " : "",
            text);
}

int cli_double(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno == ERANGE || !isfinite(v)) {
        cli_error("%s: expected a number, found '%s'", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_either(const char *opt, const char *s, const char *a, int va, const char *b, int vb, int *out)
{
    if (strcmp(s, a) != 0 && strcmp(s, b) != 0) {
        cli_error("%s: expected %s or %s, found '%s'", opt, a, b, s);
        return -1;
    }
    *out = strcmp(s, a) == 0 ? va : vb;
    return 0;
}

int cli_bind(const char *s, int *out)
{
    if (strcmp(s, "auto") == 0) {
        *out = HOG_BIND_AUTO;
        return 0;
    }
    if (strcmp(s, "0") != 0 && strcmp(s, "1") != 0) {
        cli_error("--bind: expected 0, 1 or auto, found '%s'", s);
        return -1;
    }
    *out = s[0] - '0';
    return 0;
}

int cli_unsigned(const char *opt, const char *s, unsigned long long max, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || *s == '-' || errno == ERANGE || v > max) {
        cli_error("%s: expected a whole number from 0 to %llu, found '%s'", opt, max, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_bytes(const char *opt, const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    const char *units = "KMGT";
    double scale = 1;
    if (*end && strchr(units, *end) && end[1] == '\0') {
        for (const char *u = units; u <= strchr(units, *end); u++)
            scale *= 1024;
        end++;
    } else if (*end && (end[0] == 'k') && end[1] == '\0') {
        scale = 1024;
        end++;
    }
    if (!*s || *end || errno == ERANGE || !(v >= 0) || v * scale > 1.8e19) {
        cli_error("%s: expected a size in bytes (with K, M, G or T), found '%s'", opt, s);
        return -1;
    }
    *out = (unsigned long long)(v * scale);
    return 0;
}

const char *cli_folder_of(const char *path, char *buf, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return ".";
    snprintf(buf, len, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    return buf;
}

int cli_read_option(const char *opt, const char *val, hog_read_params *p)
{
    if (strcmp(opt, "format") == 0) {
        if (strcmp(val, "csv") == 0)
            p->format = HOG_FORMAT_CSV;
        else if (strcmp(val, "libsvm") == 0 || strcmp(val, "svmlight") == 0)
            p->format = HOG_FORMAT_LIBSVM;
        else if (strcmp(val, "hgd") == 0 || strcmp(val, "binary") == 0)
            p->format = HOG_FORMAT_BINARY;
        else if (strcmp(val, "vw") == 0)
            p->format = HOG_FORMAT_VW;
        else if (strcmp(val, "ffm") == 0 || strcmp(val, "libffm") == 0)
            p->format = HOG_FORMAT_FFM;
        else {
            cli_error("--format: expected csv, libsvm, vw, ffm or hgd, found '%s'", val);
            return -1;
        }
        return 1;
    }
    if (strcmp(opt, "label") == 0) {
        unsigned long long idx;
        if (val[0] >= '0' && val[0] <= '9' && strspn(val, "0123456789") == strlen(val)) {
            if (cli_unsigned("--label", val, 1u << 30, &idx) < 0)
                return -1;
            p->label_index = (long)idx;
            p->label_name = NULL;
        } else {
            p->label_name = val;
        }
        return 1;
    }
    if (strcmp(opt, "header") == 0) {
        p->header = 1;
        return 1;
    }
    if (strcmp(opt, "feature-names") == 0) {
        p->feature_names = 1;
        return 1;
    }
    if (strcmp(opt, "fields") == 0) {
        p->fields = 1;
        return 1;
    }
    if (strcmp(opt, "ignore") == 0 || strcmp(opt, "categorical") == 0) {
        *(opt[0] == 'i' ? &p->ignore : &p->categorical) = val;
        return 1;
    }
    if (strcmp(opt, "index-base") == 0 && strcmp(val, "auto") == 0) {
        p->index_base = -1;
        return 1;
    }
    if (strcmp(opt, "hash-bits") == 0 || strcmp(opt, "index-base") == 0 || strcmp(opt, "parse-threads") == 0) {
        unsigned long long v;
        unsigned long long max = opt[0] == 'h' ? 31 : opt[0] == 'i' ? 1 : 4096;
        char name[32];
        snprintf(name, sizeof(name), "--%s", opt);
        if (cli_unsigned(name, val, max, &v) < 0)
            return -1;
        if (opt[0] == 'h')
            p->hash_bits = (unsigned)v;
        else if (opt[0] == 'i')
            p->index_base = (int)v;
        else
            p->threads = (unsigned)v;
        return 1;
    }
    if (strcmp(opt, "on-error") == 0) {
        int v;
        if (cli_either("--on-error", val, "stop", HOG_ON_ERROR_STOP, "skip", HOG_ON_ERROR_SKIP, &v) < 0)
            return -1;
        p->on_error = (hog_on_error)v;
        return 1;
    }
    if (strcmp(opt, "temp-dir") == 0) {
        struct stat st;
        if (stat(val, &st) < 0 || !S_ISDIR(st.st_mode)) {
            cli_error("--temp-dir: %s is not a folder", val);
            return -1;
        }
        p->temp_dir = val;
        return 1;
    }
    if (strcmp(opt, "mem-limit") == 0) {
        unsigned long long v;
        if (cli_bytes("--mem-limit", val, &v) < 0)
            return -1;
        p->mem_limit = v;
        return 1;
    }
    if (strcmp(opt, "max-line") == 0) {
        unsigned long long v;
        if (cli_bytes("--max-line", val, &v) < 0)
            return -1;
        if (v == 0) {
            cli_error("--max-line: a line of at least 1 byte must be allowed, found '%s'", val);
            return -1;
        }
        p->max_line = v;
        return 1;
    }
    if (strcmp(opt, "max-features") == 0) {
        unsigned long long v;
        if (cli_unsigned("--max-features", val, 1ull << 32, &v) < 0)
            return -1;
        if (v == 0) {
            cli_error("--max-features: at least 1 feature must be allowed, found '%s'", val);
            return -1;
        }
        p->max_features = v;
        return 1;
    }
    if (strcmp(opt, "delimiter") == 0) {
        if (strcmp(val, "\\t") == 0 || strcmp(val, "tab") == 0)
            p->delimiter = '\t';
        else if (strlen(val) == 1 && val[0] != '"' && val[0] != '\n')
            p->delimiter = val[0];
        else {
            cli_error("--delimiter: expected one character (or 'tab'), found '%s'", val);
            return -1;
        }
        return 1;
    }
    return 0;
}

void cli_report_skipped(const char *path, uint64_t skipped, const char *locations)
{
    if (skipped == 0)
        return;
    char text[MSG_LEN];
    cli_flags_rewrite(locations, text, sizeof(text));
    /* Not silenced by -q: skipped input is never dropped without a word. */
    fprintf(stderr, "hogtrain: %s: skipped %llu malformed line%s; the first:\n%s", path,
            (unsigned long long)skipped, skipped == 1 ? "" : "s", text);
}

const char *cli_input(const char *arg)
{
    return strcmp(arg, "-") == 0 ? "/dev/stdin" : arg;
}

int cli_is_stdout(const char *path)
{
    return strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0;
}

/* Whether a and b name one existing file. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Whether path is a character device (/dev/null, a terminal): it takes
 * each output whole in turn and replaces nothing, so it may be given as
 * several outputs, and as an input too. A FIFO may not: it is one
 * reader's single stream. */
static int is_device(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

int cli_outputs_apart(const char *const *inputs, size_t n_in, const char *const *outputs, size_t n_out)
{
    for (size_t i = 0; i < n_out; i++) {
        const char *o = outputs[i];
        if (!o || cli_is_stdout(o) || is_device(o))
            continue;
        for (size_t j = 0; j < n_in; j++)
            if (inputs[j] && same_file(o, inputs[j])) {
                cli_error("%s is the input %s: refusing to write over what is read", o, inputs[j]);
                return -1;
            }
        for (size_t j = 0; j < i; j++)
            if (outputs[j] && !cli_is_stdout(outputs[j]) &&
                (strcmp(o, outputs[j]) == 0 || same_file(o, outputs[j]))) {
                cli_error("%s is given as two outputs: one would replace the other", o);
                return -1;
            }
    }
    return 0;
}

int cli_open(const char *path, const hog_read_params *p, hog_dataset **out)
{
    char err[CLI_ERR_LEN] = "";
    int rc = hog_dataset_open(path, p, out, err, sizeof(err));
    if (rc < 0) {
        cli_error("%s", err[0] ? err : hog_strerror(rc));
        return -1;
    }
    uint64_t skipped = hog_dataset_skipped(*out, err, sizeof(err));
    cli_report_skipped(path, skipped, err);
    return 0;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t cli_model_weights(const hog_model *m)
{
    hog_model_info in;
    hog_model_get_info(m, &in);
    const uint32_t F = in.params.factors, G = hog_model_fields(m);
    return in.features * (G ? (uint64_t)F * G : F ? 1ull + F : in.outputs);
}

int cli_save_every_option(const char *val, cli_snap *s)
{
    const size_t n = strlen(val);
    s->set = 1;
    if (n > 1 && val[n - 1] == 's') {
        char num[64];
        snprintf(num, sizeof(num), "%.*s", (int)(n - 1), val);
        if (cli_double("--save-every", num, &s->seconds) < 0 || !(s->seconds > 0))
            goto bad;
        return 0;
    }
    unsigned long long v;
    if (cli_unsigned("--save-every", val, ~0ull, &v) < 0)
        return -1;
    if (v == 0)
        goto bad;
    s->rows = v;
    return 0;
bad:
    cli_error("--save-every: expected rows (a whole number from 1) or seconds (a number above 0, then s), found '%s'",
              val);
    return -1;
}

int cli_is_model_file(const char *out)
{
    struct stat st;
    return out && (stat(out, &st) < 0 ? errno == ENOENT : S_ISREG(st.st_mode));
}
