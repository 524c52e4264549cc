/* cli_info.c: `hogtrain info`: what a dataset or a model file is, its sizes and its parameters; with --topology, the machine and where threads go. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *format_name(hog_format f)
{
    switch (f) {
    case HOG_FORMAT_BINARY: return "hogtrain binary dataset (.hgd)";
    case HOG_FORMAT_LIBSVM: return "libsvm text";
    case HOG_FORMAT_CSV: return "CSV text";
    case HOG_FORMAT_VW: return "Vowpal Wabbit text";
    case HOG_FORMAT_FFM: return "LIBFFM text";
    default: return "unknown";
    }
}

static void print_metrics(const char *name, const hog_metrics *m)
{
    if (m->rows == 0)
        return;
    printf("%-18s rows %llu", name, (unsigned long long)m->rows);
    const struct { const char *n; double v; } f[] = {
        {"loss", m->loss}, {"logloss", m->logloss}, {"accuracy", m->accuracy},
        {"auc", m->auc}, {"rmse", m->rmse},
    };
    for (unsigned i = 0; i < sizeof(f) / sizeof(f[0]); i++)
        if (isfinite(f[i].v))
            printf(", %s %.6g", f[i].n, f[i].v);
    printf("\n");
}

static int info_model(const char *path)
{
    hog_model *m;
    char err[CLI_ERR_LEN] = "";
    if (hog_model_load(path, &m, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        return 1;
    }
    hog_model_info in;
    hog_model_get_info(m, &in);
    const hog_train_params *p = &in.params;
    printf("%s: hogtrain model\n", path);
    printf("%-18s %s\n", "loss", hog_loss_name(in.loss));
    printf("%-18s %llu\n", "features", (unsigned long long)in.features);
    printf("%-18s %u\n", "outputs", in.outputs);
    if (hog_model_fields(m))
        printf("%-18s field-aware factorisation machine, %u latent factors a feature for each of %u fields\n",
               "model", in.params.factors, hog_model_fields(m));
    else if (in.params.factors)
        printf("%-18s factorisation machine, %u latent factors a feature\n", "model", in.params.factors);
    if (in.params.interactions)
        printf("%-18s %s, hashed into 2^%u features after the data's\n", "crosses", in.params.interactions,
               in.params.cross_bits);
    if (in.classes) {
        printf("%-18s %u:", "classes", in.classes);
        for (uint32_t k = 0; k < in.classes && k < 32; k++)
            if (hog_model_class_name(m, k)) {
                putchar(' ');
                cli_text_name(stdout, hog_model_class_name(m, k));
            } else
                printf(" %g", hog_model_class_label(m, k));
        printf("%s\n", in.classes > 32 ? " ..." : "");
    }
    const uint64_t named = hog_model_named_features(m);
    if (named) {
        printf("%-18s %llu of %llu:", "named features", (unsigned long long)named, (unsigned long long)in.features);
        for (uint64_t k = 0; k < named && k < 8; k++) {
            const uint64_t f = hog_model_named_feature(m, k);
            printf(" %llu=", (unsigned long long)(f + (uint64_t)in.data_index_base));
            cli_text_name(stdout, hog_model_feature_name(m, f));
        }
        printf("%s\n", named > 8 ? " ..." : "");
    }
    printf("%-18s %016llx\n", "data fingerprint", (unsigned long long)in.data_fingerprint);
    printf("%-18s %llu\n", "training rows", (unsigned long long)in.train_rows);
    if (in.data_skipped)
        printf("%-18s %llu\n", "skipped lines", (unsigned long long)in.data_skipped);
    if (in.data_index_base)
        printf("%-18s 1-based (text to score is read so unless --index-base says otherwise)\n",
               "libsvm indices");
    if (hog_model_data_hash_bits(m))
        printf("%-18s into 2^%u features (-b %u; predict and a warm start hash text so)\n", "text hashed",
               hog_model_data_hash_bits(m), hog_model_data_hash_bits(m));
    printf("%-18s threads %u, epochs %u, step %g, %s schedule (decay %g, power %g), l2 %g,"
           " holdout %g, seed %llu, bias %d\n", "parameters", p->threads, p->epochs, p->step,
           hog_schedule_name(p->schedule), p->decay, p->power, p->l2, p->holdout,
           (unsigned long long)p->seed, p->bias);
    printf("%-18s %s update, l1 %g%s, early stop %u, average %u", "optimiser", p->normalized ? "normalized" : "plain",
           p->l1, p->l1 > 0 && p->l2 > 0 ? " (elastic net)" : "", p->early_stop, p->average);
    if (in.loss == HOG_LOSS_QUANTILE)
        printf(", quantile %g", p->quantile);
    if (p->class_weight)
        printf(", class weights %s", hog_class_weight_name(p->class_weight));
    printf("\n");
    printf("%-18s %s", "kernel", hog_kernel_name(p->kernel));
    if (p->kernel == HOG_KERNEL_DENSE)
        printf(" (mini-batches of %u)", p->batch);
    printf(", replicas %s\n", hog_replicas_name(p->replicas));
    if (in.epochs_run) /* models from before these keys have none */
        printf("%-18s %u run, epoch %u kept\n", "epochs", in.epochs_run, in.best_epoch);
    printf("%-18s %llu of %llu\n", "non-zero weights", (unsigned long long)in.nonzero,
           (unsigned long long)cli_model_weights(m));
    printf("%-18s %.3f s\n", "training time", in.seconds);
    print_metrics("train metrics", &in.train);
    print_metrics("test metrics", &in.test);
    hog_model_free(m);
    return 0;
}

static int info_dataset(const char *path, const hog_read_params *rp)
{
    hog_dataset *ds;
    if (cli_open(path, rp, &ds) < 0)
        return 1;
    hog_dataset_info in;
    hog_dataset_get_info(ds, &in);
    printf("%s: %s\n", path, format_name(in.format));
    printf("%-18s %llu\n", "rows", (unsigned long long)in.rows);
    printf("%-18s %llu\n", "features", (unsigned long long)in.features);
    printf("%-18s %llu (%.2f per row, density %.4g)\n", "non-zeros", (unsigned long long)in.nnz,
           (double)in.nnz / (double)in.rows,
           in.features ? (double)in.nnz / ((double)in.rows * (double)in.features) : 0.0);
    const int fields = hog_dataset_fields(ds); /* what field-aware models pair features by */
    if (fields > 0)
        printf("%-18s %d\n", "fields", fields);
    else
        printf("%-18s none\n", "fields");
    if (hog_dataset_hash_bits(ds))
        printf("%-18s into 2^%u features (-b %u; a model trained on it hashes text so)\n", "text hashed",
               hog_dataset_hash_bits(ds), hog_dataset_hash_bits(ds));
    printf("%-18s %u of %u rows\n", "blocks", in.blocks, in.rows_per_block);
    printf("%-18s %llu\n", "file bytes", (unsigned long long)in.file_bytes);
    printf("%-18s %016llx\n", "fingerprint", (unsigned long long)in.fingerprint);
    if (in.index_base)
        printf("%-18s 1-based in the text (stored minus one)\n", "libsvm indices");
    if (in.weighted)
        printf("%-18s importance weights\n", "rows carry");
    hog_dataset_close(ds);
    return 0;
}

/* The library sizes the text; one retry covers any number of threads. */
static int info_topology(unsigned threads)
{
    char small[16384];
    int n = hog_topology_describe(threads, small, sizeof(small));
    if (n < 0) {
        cli_error("%s", small);
        return 1;
    }
    if ((size_t)n < sizeof(small)) {
        fputs(small, stdout);
        return 0;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        cli_error("out of memory");
        return 1;
    }
    int m = hog_topology_describe(threads, big, (size_t)n + 1);
    if (m < 0)
        cli_error("%s", big);
    else
        fputs(big, stdout);
    free(big);
    return m < 0;
}

#define INFO_USAGE                                                                              \
    "usage: hogtrain info FILE [options]\n"                                                     \
    "       hogtrain info --topology [--threads N]\n"                                           \
    "  --topology              the NUMA nodes, cores and memory hogtrain sees, where N worker\n" \
    "                          threads go, and whether binding works here (HOG_TOPOLOGY set to\n" \
    "                          an hwloc synthetic description or FILE.xml shows another machine)\n" \
    "  --threads N             workers to place (default: one per core)\n"

int cli_info(int argc, char **argv)
{
    enum { OPT_TOPOLOGY = 256, OPT_THREADS };
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'}, {"topology", no_argument, 0, OPT_TOPOLOGY},
        {"threads", required_argument, 0, OPT_THREADS}, CLI_READ_OPTIONS,
        CLI_READ_MEM_OPTION, {0, 0, 0, 0},
    };
    hog_read_params rp = hog_read_params_default();
    int c, li, topology = 0;
    unsigned long long threads = 0;
    const char *threads_arg = NULL;
    while ((c = cli_getopt("info", argc, argv, "hb:", opts, &li)) != -1) {
        if (c == 'h') {
            fputs(INFO_USAGE CLI_READ_MEM_USAGE CLI_READ_USAGE, stdout);
            return 0;
        }
        if (c == OPT_TOPOLOGY) {
            topology = 1;
            continue;
        }
        if (c == OPT_THREADS) {
            if (cli_unsigned("--threads", optarg, 65536, &threads) < 0)
                return 2;
            threads_arg = optarg;
            continue;
        }
        if ((c != CLI_READ_OPT && c != 'b') ||
            cli_read_option(c == 'b' ? "hash-bits" : opts[li].name, optarg, &rp) < 0)
            return 2;
    }
    if (topology) {
        if (optind != argc) {
            cli_error("info --topology takes no FILE (found '%s')", argv[optind]);
            return 2;
        }
        return info_topology((unsigned)threads);
    }
    if (threads_arg) {
        cli_error("--threads %s: only with --topology", threads_arg);
        return 2;
    }
    if (optind != argc - 1) {
        cli_error("info needs one FILE (or --topology)");
        return 2;
    }
    const char *path = argv[optind];
    char err[CLI_ERR_LEN] = "";
    hog_file_kind kind;
    if (hog_file_probe(path, &kind, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        return 1;
    }
    switch (kind) {
    case HOG_FILE_MODEL: return info_model(path);
    case HOG_FILE_MF_MODEL: return cli_mf_info(path);
    case HOG_FILE_RATINGS: return cli_mf_ratings_info(path);
    case HOG_FILE_CHECKPOINT:
    case HOG_FILE_MF_CHECKPOINT:
        /* Its state is for the run that made it: what it holds is checked
         * when that run resumes, against the data and the flags given. */
        printf("%s: a checkpoint of `hogtrain train%s`: continue that run with the same data and flags and "
               "`--checkpoint %s --resume`\n",
               path, kind == HOG_FILE_MF_CHECKPOINT ? " --model mf" : "", path);
        return 0;
    case HOG_FILE_DATASET:
    case HOG_FILE_TEXT: break;
    }
    return info_dataset(path, &rp);
}
