/* cli_main.c: the hogtrain command: dispatch to the subcommands and the helpers they share. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

int cli_quiet;

static const char usage[] =
    "usage: hogtrain COMMAND [options]\n"
    "\n"
    "  convert INPUT -o DATA.hgd [--format csv|libsvm|vw] [--label COL] [--header]\n"
    "                 [--delimiter C] [--on-error stop|skip] [--parse-threads N]\n"
    "  train   INPUT -o MODEL [--loss logistic|hinge|squared|softmax|...] [--threads N]\n"
    "                 [--epochs E] [--step S] [--schedule decay|invscaling|adagrad]\n"
    "                 [--l2 L] [--l1 L] [--test FILE | --holdout F] [--seed N]\n"
    "                 [--cache FILE.hgd] [--mem-limit BYTES] [--report R.json]\n"
    "  train   RATINGS --model mf -o MODEL [--rank K] ...  matrix factorisation\n"
    "  predict MODEL INPUT [-o PREDICTIONS] [--report R.json]\n"
    "  info    FILE          a dataset (.hgd or text) or a model\n"
    "  info    --topology    NUMA nodes, cores and where workers would run\n"
    "  version\n"
    "\n"
    "INPUT is CSV, libsvm/svmlight or Vowpal Wabbit text (plain, .gz or .zst) or a\n"
    "binary dataset (.hgd), detected from its content; --format and the CSV options\n"
    "override for text. -q silences progress. Run 'hogtrain COMMAND --help' for all\n"
    "of a command's options.\n";

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("hogtrain: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
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
        else {
            cli_error("--format: expected csv, libsvm, vw or hgd, found '%s'", val);
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
        if (strcmp(val, "stop") == 0)
            p->on_error = HOG_ON_ERROR_STOP;
        else if (strcmp(val, "skip") == 0)
            p->on_error = HOG_ON_ERROR_SKIP;
        else {
            cli_error("--on-error: expected stop or skip, found '%s'", val);
            return -1;
        }
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
    /* Not silenced by -q: skipped input is never dropped without a word. */
    fprintf(stderr, "hogtrain: %s: skipped %llu malformed line%s; the first:\n%s", path,
            (unsigned long long)skipped, skipped == 1 ? "" : "s", locations);
}

const char *cli_input(const char *arg)
{
    return strcmp(arg, "-") == 0 ? "/dev/stdin" : arg;
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

int cli_out_open(cli_out *o, const char *path)
{
    memset(o, 0, sizeof(*o));
    if (!path || strcmp(path, "-") == 0) {
        o->f = stdout;
        return 0;
    }
    size_t n = strlen(path) + 16;
    o->path = strdup(path);
    o->tmp = malloc(n);
    if (!o->path || !o->tmp) {
        cli_error("%s: out of memory", path);
        return -1;
    }
    snprintf(o->tmp, n, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(o->tmp);
    if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
        cli_error("%s: cannot create a file beside it: %s", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(o->tmp);
        }
        free(o->path);
        free(o->tmp);
        return -1;
    }
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    return 0;
}

int cli_out_close(cli_out *o, int ok)
{
    if (o->f == stdout)
        return fflush(stdout) == 0 || !ok ? 0 : -1;
    int rc = 0;
    if (ok && (fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0)) {
        cli_error("%s: write failed: %s", o->path, strerror(errno));
        rc = -1;
    }
    if (fclose(o->f) != 0 && ok && rc == 0) {
        cli_error("%s: write failed: %s", o->path, strerror(errno));
        rc = -1;
    }
    if (ok && rc == 0 && rename(o->tmp, o->path) != 0) {
        cli_error("%s: cannot rename into place: %s", o->path, strerror(errno));
        rc = -1;
    }
    if (!ok || rc < 0)
        unlink(o->tmp);
    else {
        int dfd = open(dirname(o->tmp), O_RDONLY | O_DIRECTORY);
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
    }
    free(o->path);
    free(o->tmp);
    return rc;
}

/* A CPU below the build's level would stop on an illegal instruction
 * somewhere in the parsers; this says so before anything runs. */
static int cpu_ok(void)
{
#if defined(__x86_64__) && defined(__SSSE3__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("ssse3") || !__builtin_cpu_supports("sse4.2") ||
        !__builtin_cpu_supports("popcnt")) {
        cli_error("this hogtrain is built for " CLI_BUILD_CPU
                  " CPUs (SSSE3, SSE4.2, POPCNT), which this one is not: rebuild it with `make ARCH=`");
        return 0;
    }
#endif
    return 1;
}

int main(int argc, char **argv)
{
    if (!cpu_ok())
        return 1;
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "convert") == 0)
        return cli_convert(argc - 1, argv + 1);
    if (strcmp(cmd, "train") == 0)
        return cli_train(argc - 1, argv + 1);
    if (strcmp(cmd, "predict") == 0)
        return cli_predict(argc - 1, argv + 1);
    if (strcmp(cmd, "info") == 0)
        return cli_info(argc - 1, argv + 1);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("hogtrain %s (built for %s)\n", hog_version_string(), CLI_BUILD_CPU);
        return 0;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    cli_error("unknown command '%s'", cmd);
    fputs(usage, stderr);
    return 2;
}
