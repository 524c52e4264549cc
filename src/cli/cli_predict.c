/* cli_predict.c: `hogtrain predict`: score every row of a data set with a saved model. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <string.h>

#include "cli.h"

static const char predict_usage[] =
    "usage: hogtrain predict MODEL INPUT [-o PREDICTIONS] [options]\n"
    "  writes one line per row: the probability of the positive class (logistic),\n"
    "  the predicted label (hinge, softmax) or the predicted value (squared).\n"
    "  INPUT -                 standard input. A pipe or a FIFO is answered as it comes: the\n"
    "                          rows that have arrived are scored and written out whenever it\n"
    "                          has nothing more ready; its last line must end in a newline\n"
    "  -o, --output FILE       predictions to FILE (atomically, when the input ends) instead of\n"
    "                          standard output; with --report and no -o, none are written\n"
    "                          (-o - writes them too)\n"
    "  --probabilities         logistic and softmax: the probability of every class, a\n"
    "                          column each in the order of the first line, which names the\n"
    "                          classes by their labels (or names)\n"
    "  --raw                   the model's scores before any link: the margin (binary), the\n"
    "                          value (regression), a column per class (softmax)\n"
    "  --output-format text|f32\n"
    "                          lines of text (default), or little-endian float32s, one per\n"
    "                          number (no header)\n"
    "  --threads N             scoring threads (default: one per core)\n"
    "  --report FILE           JSON with the metrics against INPUT's labels\n"
    "  -q, --quiet             print nothing but errors\n"
    "  Vowpal Wabbit's names work too: -i MODEL, -d INPUT, -p PREDICTIONS (-o), and -t\n"
    "  (test only, which predict always is)\n"
    CLI_READ_MEM_USAGE
    "                          (predict: a .hgd of more than half of it is read with O_DIRECT,\n"
    "                          past the page cache, a few blocks ahead)\n"
    "  how to read text INPUT (the model was trained with the same, usually; a libsvm\n"
    "  --index-base other than the model's is an error):\n"
    CLI_READ_USAGE;

static int write_report(const char *path, const char *model, const char *input, const hog_metrics *mt,
                        uint64_t rows, double seconds)
{
    cli_out o;
    if (cli_out_open(&o, path) < 0)
        return -1;
    fprintf(o.f, "{\n  \"command\": \"predict\",\n  \"model\": ");
    cli_json_string(o.f, model);
    fprintf(o.f, ",\n  \"input\": ");
    cli_json_string(o.f, input);
    fprintf(o.f, ",\n  \"rows\": %llu,\n  \"seconds\": %.9g,\n  \"rows_per_s\": %.10g", (unsigned long long)rows,
            seconds, seconds > 0 ? (double)rows / seconds : 0.0);
    fprintf(o.f, ",\n  \"test\": ");
    cli_json_metrics(o.f, mt);
    fprintf(o.f, "\n}\n");
    return cli_out_close(&o, 1);
}

/* Where the library's predictions go: the output's stdio stream. */
typedef struct predict_sink {
    cli_out o;
    int failed; /* a write failed: the output reports why when closed */
} predict_sink;

/* A block's predictions at a time, flushed: on a pipe the library hands
 * over the rows that have come whenever the input has nothing more ready,
 * and their answers must not wait in stdio's buffer for the next. A block
 * of a file is thousands of rows, so a flush each costs nothing. */
static int sink_write(void *ctx, const void *buf, size_t len)
{
    predict_sink *k = ctx;
    if (fwrite(buf, 1, len, k->o.f) == len && fflush(k->o.f) == 0)
        return 0;
    k->failed = 1;
    return k->o.rc ? k->o.rc : errno ? -errno : -EIO;
}

int cli_predict(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'}, {"report", required_argument, 0, 'R'},
        {"output-format", required_argument, 0, 'O'}, {"threads", required_argument, 0, 'T'},
        {"probabilities", no_argument, 0, 'P'}, {"raw", no_argument, 0, 'W'},
        {"predictions", required_argument, 0, 'o'}, {"data", required_argument, 0, 'd'},
        {"initial_regressor", required_argument, 0, 'i'}, {"testonly", no_argument, 0, 't'},
        CLI_READ_OPTIONS, CLI_READ_MEM_OPTION, {0, 0, 0, 0},
    };
    hog_read_params rp = hog_read_params_default();
    hog_predict_params pp = hog_predict_params_default();
    const char *out = NULL, *report = NULL;
    unsigned long long threads;
    int c, li;
    const char *model_arg = NULL, *data = NULL;
    while ((c = cli_getopt("predict", argc, argv, "o:qhb:p:d:i:t", opts, &li)) != -1) {
        switch (c) {
        case 'o':
        case 'p': out = optarg; break;
        case 'i': model_arg = optarg; break;
        case 'd': data = optarg; break;
        case 't': break; /* predict only tests */
        case 'P':
        case 'W':
            if (pp.what != HOG_PREDICT_VALUE) {
                cli_error("--probabilities and --raw are alternatives: give one");
                return 2;
            }
            pp.what = c == 'P' ? HOG_PREDICT_PROBABILITIES : HOG_PREDICT_RAW;
            break;
        case 'q': cli_quiet = 1; break;
        case 'h': fputs(predict_usage, stdout); return 0;
        case 'R': report = optarg; break;
        case 'O':
            if (strcmp(optarg, "text") == 0) {
                pp.format = HOG_PREDICT_TEXT;
            } else if (strcmp(optarg, "f32") == 0) {
                pp.format = HOG_PREDICT_F32;
            } else {
                cli_error("--output-format: expected text or f32, found '%s'", optarg);
                return 2;
            }
            break;
        case 'T':
            if (cli_unsigned("--threads", optarg, 4096, &threads) < 0)
                return 2;
            pp.threads = (unsigned)threads;
            break;
        case 'b':
        case CLI_READ_OPT:
            if (cli_read_option(c == 'b' ? "hash-bits" : opts[li].name, optarg, &rp) < 0)
                return 2;
            break;
        default: return 2;
        }
    }
    /* MODEL and INPUT, in that order, but for those given as -i MODEL and -d INPUT */
    int at = optind;
    if (!model_arg && at < argc)
        model_arg = argv[at++];
    if (!data && at < argc)
        data = argv[at++];
    if (at != argc || !model_arg || !data) {
        cli_error("predict needs MODEL and INPUT (or -i MODEL -d INPUT); see hogtrain predict --help");
        return 2;
    }
    const char *model_path = model_arg, *input = cli_input(data);
    const char *ins[] = {model_path, input}, *outs[] = {out, report};
    if (cli_outputs_apart(ins, 2, outs, 2) < 0)
        return 1;
    char err[CLI_ERR_LEN] = "";
    hog_file_kind kind;
    if (hog_file_probe(model_path, &kind, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        return 1;
    }
    if (kind == HOG_FILE_MF_MODEL) {
        if (pp.format != HOG_PREDICT_TEXT) {
            cli_error("--output-format f32: linear models only; %s is a matrix factorisation", model_path);
            return 2;
        }
        return cli_mf_predict(model_path, input, out, report);
    }
    hog_model *m = NULL;
    if (hog_model_load(model_path, &m, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        return 1;
    }
    hog_model_info mi;
    hog_model_get_info(m, &mi);
    if (rp.index_base >= 0 && rp.index_base != mi.data_index_base) {
        cli_error("--index-base %d: %s was trained on %d-based libsvm indices, and reading %s otherwise would "
                  "shift every feature by one; leave --index-base out to follow the model", rp.index_base,
                  model_path, mi.data_index_base, input);
        hog_model_free(m);
        return 2;
    }
    const unsigned bits = hog_model_data_hash_bits(m);
    if (bits && rp.hash_bits && rp.hash_bits != bits) {
        cli_error("--hash-bits %u: %s was trained on text hashed into 2^%u features (-b %u), and %s hashed "
                  "otherwise would score features it never learned; leave -b out to follow the model", rp.hash_bits,
                  model_path, bits, bits, input);
        hog_model_free(m);
        return 2;
    }
    if (pp.what != HOG_PREDICT_VALUE && !hog_predict_columns(m, pp.what)) {
        cli_error("--probabilities: %s is a %s model, which gives no probabilities (logistic and softmax do)",
                  model_path, hog_loss_name(mi.loss));
        hog_model_free(m);
        return 2;
    }
    /* A report alone asks for the metrics: nothing is formatted then. */
    const int predictions = out || !report;
    predict_sink sink = {.failed = 0};
    if (predictions) {
        if (cli_out_open(&sink.o, out) < 0) {
            hog_model_free(m);
            return 1;
        }
        pp.write = sink_write;
        pp.write_ctx = &sink;
        /* the probabilities' columns are named by their classes' labels */
        if (pp.what == HOG_PREDICT_PROBABILITIES && pp.format == HOG_PREDICT_TEXT)
            for (uint32_t k = 0; k < mi.classes; k++) {
                const char *name = hog_model_class_name(m, k);
                if (name) {
                    cli_text_name(sink.o.f, name);
                    fputc(k + 1 < mi.classes ? ' ' : '\n', sink.o.f);
                } else
                    fprintf(sink.o.f, "%.17g%c", hog_model_class_label(m, k), k + 1 < mi.classes ? ' ' : '\n');
            }
    }
    pp.metrics = report || !cli_quiet;
    hog_predict_stats st;
    /* The pass, from the input's open to its last prediction written: the
     * model's load is left out, as training's examples/s leave out its
     * data's read. */
    const double t0 = cli_now();
    int rc = hog_model_predict_file(m, input, &rp, &pp, &st, err, sizeof(err));
    const double seconds = cli_now() - t0;
    int status = 1;
    if (rc < 0) {
        if (sink.failed && sink.o.out) /* says which file and why, as any failed output */
            cli_out_close(&sink.o, 1);
        else {
            cli_error("%s", err[0] ? err : hog_strerror(rc));
            if (predictions)
                cli_out_close(&sink.o, 0);
        }
        goto out;
    }
    cli_report_skipped(input, st.skipped, err);
    if (st.features > mi.features && !cli_quiet)
        fprintf(stderr, "hogtrain: note: %s has features up to %llu, the model %llu: the extra ones are ignored\n",
                input, (unsigned long long)st.features - 1, (unsigned long long)mi.features);
    if (!cli_quiet) {
        const hog_metrics *mt = &st.metrics;
        fprintf(stderr, "%s: %llu rows", input, (unsigned long long)mt->rows);
        if (isfinite(mt->accuracy))
            fprintf(stderr, ", accuracy %.4f", mt->accuracy);
        if (isfinite(mt->logloss))
            fprintf(stderr, ", logloss %.4f", mt->logloss);
        if (isfinite(mt->auc))
            fprintf(stderr, ", auc %.4f", mt->auc);
        if (isfinite(mt->rmse))
            fprintf(stderr, ", rmse %.4f", mt->rmse);
        fprintf(stderr, "; %.3f s, %.0f rows/s\n", seconds, seconds > 0 ? (double)st.rows / seconds : 0.0);
    }
    /* The predictions are committed last: a report that fails leaves an
     * older file of them as it was. */
    if (report && write_report(report, model_path, input, &st.metrics, st.rows, seconds) < 0) {
        if (predictions)
            cli_out_close(&sink.o, 0);
        goto out;
    }
    if (predictions && cli_out_close(&sink.o, 1) < 0)
        goto out;
    status = 0;
out:
    hog_model_free(m);
    return status;
}
