/* cli_export.c: `hogtrain export`: a saved linear model's weights as text or JSON, for reading, plotting or another tool. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <getopt.h>
#include <math.h>
#include <string.h>

#include "cli.h"

static const char export_usage[] =
    "usage: hogtrain export MODEL [-o FILE] [--format text|json] [--all] [--indices]\n"
    "  writes the weights of a model: text, a line per weight, \"FEATURE CLASS WEIGHT\"\n"
    "  (FEATURE the feature's name where the training text named it: a CSV header's column,\n"
    "  \"column=value\" of a categorical one, Vowpal Wabbit's \"namespace^feature\", names that\n"
    "  hash to one feature joined by '|'; else the index as the training data wrote it; or\n"
    "  \"bias\"; CLASS the label the weight scores: the positive class of a binary model, each\n"
    "  class of softmax, \"-\" for regression; a factorisation machine's factor K of the\n"
    "  feature: \"vK\"; a name with a blank or a quote in double\n"
    "  quotes, its quotes doubled, as in CSV), or one JSON object with the model's kind and\n"
    "  [index, class, weight] triples, the feature's name a fourth element where it has one\n"
    "  -o, --output FILE       to FILE (atomically) instead of standard output\n"
    "  --format text|json      text (default) or JSON\n"
    "  --all                   every weight, zeros too (default: those that are not zero)\n"
    "  --indices               features by index only, named or not\n"
    "  -q, --quiet             print nothing but errors\n";

/* The class an output scores, as text: softmax, output k's; binary, the
 * positive class; regression, none. A factorisation machine's output 0 is
 * its linear weight, and output k > 0 its factor k: "vK". A field-aware
 * one's (fields > 0) output k is factor k mod F + 1 for field k / F:
 * "field3.v2". */
static const char *class_of_output(char *buf, size_t len, const hog_model *m, const hog_weights *w, uint32_t k,
                                   uint32_t factors, uint32_t fields)
{
    if (fields) {
        snprintf(buf, len, "field%u.v%u", k / factors, k % factors + 1);
        return buf;
    }
    if (factors && k > 0) {
        snprintf(buf, len, "v%u", k);
        return buf;
    }
    const uint32_t c = w->outputs > 1 && !factors ? k : w->classes - 1;
    const char *name = w->class_labels ? hog_model_class_name(m, c) : NULL;
    if (name)
        return name;
    if (!w->class_labels)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.17g", w->class_labels[c]);
    return buf;
}

int cli_export(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"format", required_argument, 0, 'F'},
        {"all", no_argument, 0, 'A'},          {"quiet", no_argument, 0, 'q'},
        {"indices", no_argument, 0, 'I'},      {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *out = NULL;
    int json = 0, all = 0, indices = 0, c, li;
    while ((c = cli_getopt("export", argc, argv, "o:qh", opts, &li)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'q': cli_quiet = 1; break;
        case 'A': all = 1; break;
        case 'I': indices = 1; break;
        case 'h': fputs(export_usage, stdout); return 0;
        case 'F':
            if (strcmp(optarg, "text") != 0 && strcmp(optarg, "json") != 0) {
                cli_error("--format: expected text or json, found '%s'", optarg);
                return 2;
            }
            json = optarg[0] == 'j';
            break;
        default: return 2;
        }
    }
    if (optind != argc - 1) {
        cli_error("export needs one MODEL; see hogtrain export --help");
        return 2;
    }
    const char *path = argv[optind];
    const char *ins[] = {path}, *outs[] = {out};
    if (cli_outputs_apart(ins, 1, outs, 1) < 0)
        return 1;
    char err[CLI_ERR_LEN] = "";
    hog_file_kind kind;
    if (hog_file_probe(path, &kind, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        return 1;
    }
    if (kind != HOG_FILE_MODEL) {
        cli_error("%s is %s, not a linear model: export writes a linear model's weights", path,
                  hog_file_kind_name(kind));
        return 1;
    }
    hog_model *m;
    if (hog_model_load(path, &m, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        return 1;
    }
    hog_model_info mi;
    hog_model_get_info(m, &mi);
    hog_weights w;
    hog_model_weights(m, &w);
    cli_out o;
    if (cli_out_open(&o, out) < 0) {
        hog_model_free(m);
        return 1;
    }
    /* Features are numbered as the training data wrote them: 1-based
     * libsvm text was stored minus one. */
    const uint64_t base = (uint64_t)mi.data_index_base;
    /* A factorisation machine has one bias, and a weight and its factors a
     * feature (a field-aware one, its factors for each field). */
    const uint32_t nbias = mi.params.factors ? 1 : w.outputs;
    char cls[64];
    if (json) {
        fprintf(o.f, "{\n  \"model\": ");
        cli_json_string(o.f, path);
        fprintf(o.f, ",\n  \"loss\": \"%s\",\n  \"features\": %llu,\n  \"index_base\": %llu,\n  \"classes\": [",
                hog_loss_name(mi.loss), (unsigned long long)w.features, (unsigned long long)base);
        for (uint32_t k = 0; k < w.classes; k++) {
            fprintf(o.f, "%s", k ? ", " : "");
            if (hog_model_class_name(m, k))
                cli_json_string(o.f, hog_model_class_name(m, k));
            else
                cli_json_number(o.f, w.class_labels[k]);
        }
        fprintf(o.f, "],\n  \"bias\": {");
        for (uint32_t k = 0; k < nbias; k++) {
            fprintf(o.f, "%s", k ? ", " : "");
            cli_json_string(o.f, class_of_output(cls, sizeof(cls), m, &w, k, mi.params.factors, 0));
            fprintf(o.f, ": ");
            cli_json_number(o.f, (double)w.bias[k]);
        }
        fprintf(o.f, "},\n  \"weights\": [");
    }
    uint64_t n = 0;
    if (!json)
        for (uint32_t k = 0; k < nbias; k++) {
            fputs("bias ", o.f);
            cli_text_name(o.f, class_of_output(cls, sizeof(cls), m, &w, k, mi.params.factors, 0));
            fprintf(o.f, " %.9g\n", (double)w.bias[k]);
        }
    for (uint64_t j = 0; j < w.features; j++)
        for (uint32_t k = 0; k < w.outputs; k++) {
            float v = w.w[j * w.outputs + k];
            if (v == 0.0f && !all)
                continue;
            const char *name = class_of_output(cls, sizeof(cls), m, &w, k, mi.params.factors, hog_model_fields(m));
            const char *feature = indices ? NULL : hog_model_feature_name(m, j);
            if (json) {
                fprintf(o.f, "%s\n    [%llu, ", n ? "," : "", (unsigned long long)(j + base));
                cli_json_string(o.f, name);
                fprintf(o.f, ", %.9g", (double)v);
                if (feature) {
                    fputs(", ", o.f);
                    cli_json_string(o.f, feature);
                }
                fputc(']', o.f);
            } else {
                if (feature)
                    cli_text_name(o.f, feature);
                else
                    fprintf(o.f, "%llu", (unsigned long long)(j + base));
                fputc(' ', o.f);
                cli_text_name(o.f, name);
                fprintf(o.f, " %.9g\n", (double)v);
            }
            n++;
        }
    if (json)
        fprintf(o.f, "%s]\n}\n", n ? "\n  " : "");
    hog_model_free(m);
    if (cli_out_close(&o, 1) < 0)
        return 1;
    if (!cli_quiet && out)
        fprintf(stderr, "%s: %llu weights of %s\n", out, (unsigned long long)n, path);
    return 0;
}
