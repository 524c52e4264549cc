/* cli_predict.c: `hogtrain predict`: score every row of a data set with a saved model. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <getopt.h>
#include <math.h>
#include <string.h>

#include "cli.h"

static const char predict_usage[] =
    "usage: hogtrain predict MODEL INPUT [-o PREDICTIONS] [--report R.json]\n"
    "  writes one line per row: the probability of the positive class (logistic),\n"
    "  the predicted label (hinge, softmax) or the predicted value (squared).\n"
    "  INPUT -        standard input\n"
    "  -o FILE        predictions to FILE (atomically) instead of standard output\n"
    "  --report FILE  JSON with the metrics against INPUT's labels\n"
    "  how to read text INPUT (the model was trained with the same, usually):\n"
    CLI_READ_USAGE;

static int write_report(const char *path, const char *model, const char *input, const hog_metrics *mt)
{
    cli_out o;
    if (cli_out_open(&o, path) < 0)
        return -1;
    fprintf(o.f, "{\n  \"command\": \"predict\",\n  \"model\": ");
    cli_json_string(o.f, model);
    fprintf(o.f, ",\n  \"input\": ");
    cli_json_string(o.f, input);
    fprintf(o.f, ",\n  \"test\": ");
    cli_json_metrics(o.f, mt);
    fprintf(o.f, "\n}\n");
    return cli_out_close(&o, 1);
}

int cli_predict(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'}, {"report", required_argument, 0, 'R'},
        CLI_READ_OPTIONS, {0, 0, 0, 0},
    };
    hog_read_params rp = hog_read_params_default();
    const char *out = NULL, *report = NULL;
    int c, li;
    while ((c = getopt_long(argc, argv, "o:qhb:", opts, &li)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'q': cli_quiet = 1; break;
        case 'h': fputs(predict_usage, stdout); return 0;
        case 'R': report = optarg; break;
        case 'b':
        case CLI_READ_OPT:
            if (cli_read_option(c == 'b' ? "hash-bits" : opts[li].name, optarg, &rp) < 0)
                return 2;
            break;
        default: fputs(predict_usage, stderr); return 2;
        }
    }
    if (optind != argc - 2) {
        cli_error("predict needs MODEL and INPUT");
        fputs(predict_usage, stderr);
        return 2;
    }
    const char *model_path = argv[optind], *input = cli_input(argv[optind + 1]);
    const char *ins[] = {model_path, input}, *outs[] = {out, report};
    if (cli_outputs_apart(ins, 2, outs, 2) < 0)
        return 1;
    char err[CLI_ERR_LEN] = "";
    hog_file_kind kind;
    if (hog_file_probe(model_path, &kind, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        return 1;
    }
    if (kind == HOG_FILE_MF_MODEL)
        return cli_mf_predict(model_path, input, out, report);
    hog_model *m = NULL;
    hog_dataset *ds = NULL;
    int status = 1;
    if (hog_model_load(model_path, &m, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        return 1;
    }
    hog_model_info mi;
    hog_model_get_info(m, &mi);
    if (rp.index_base < 0) /* libsvm indices mean what they meant in training */
        rp.index_base = mi.data_index_base;
    if (cli_open(input, &rp, &ds) < 0)
        goto out;
    hog_dataset_info di;
    hog_dataset_get_info(ds, &di);
    if (di.features > mi.features && !cli_quiet)
        fprintf(stderr, "hogtrain: note: %s has features up to %llu, the model %llu: the extra ones are ignored\n",
                input, (unsigned long long)di.features - 1, (unsigned long long)mi.features);
    cli_out o;
    if (cli_out_open(&o, out) < 0)
        goto out;
    for (uint64_t i = 0; i < di.rows; i++) {
        hog_row row = hog_dataset_row(ds, i);
        uint32_t cls = 0;
        double v = hog_model_predict(m, &row, &cls, NULL);
        switch (mi.loss) {
        case HOG_LOSS_LOGISTIC: fprintf(o.f, "%.6f\n", v); break;
        case HOG_LOSS_SQUARED:
        case HOG_LOSS_QUANTILE: fprintf(o.f, "%.9g\n", v); break;
        default: fprintf(o.f, "%.17g\n", hog_model_class_label(m, cls)); break;
        }
    }
    /* The predictions are committed last: an evaluation or a report that
     * fails leaves an older file as it was. */
    if (report || !cli_quiet) {
        hog_metrics mt;
        int rc = hog_model_evaluate(m, ds, 0, &mt);
        if (rc < 0) {
            cli_error("evaluating %s: %s", input, hog_strerror(rc));
            cli_out_close(&o, 0);
            goto out;
        }
        if (!cli_quiet) {
            fprintf(stderr, "%s: %llu rows", input, (unsigned long long)mt.rows);
            if (isfinite(mt.accuracy))
                fprintf(stderr, ", accuracy %.4f", mt.accuracy);
            if (isfinite(mt.logloss))
                fprintf(stderr, ", logloss %.4f", mt.logloss);
            if (isfinite(mt.auc))
                fprintf(stderr, ", auc %.4f", mt.auc);
            if (isfinite(mt.rmse))
                fprintf(stderr, ", rmse %.4f", mt.rmse);
            fprintf(stderr, "\n");
        }
        if (report && write_report(report, model_path, input, &mt) < 0) {
            cli_out_close(&o, 0);
            goto out;
        }
    }
    if (cli_out_close(&o, 1) < 0)
        goto out;
    status = 0;
out:
    hog_dataset_close(ds);
    hog_model_free(m);
    return status;
}
