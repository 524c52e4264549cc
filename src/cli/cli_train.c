/* cli_train.c: `hogtrain train`: read data, check parameters, train with HOGWILD!, save the model, report. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static const char train_usage[] =
    "usage: hogtrain train INPUT -o MODEL [options]\n"
    "  INPUT -                 standard input (with several epochs, a pipe is read whole first)\n"
    "  -o, --output FILE       the model to write (atomically)\n"
    "  --loss L                logistic (default), hinge, modified_huber (binary), squared,\n"
    "                          quantile (regression) or softmax (multiclass)\n"
    "  --quantile TAU          the quantile loss's tau in (0, 1) (default 0.5: the median);\n"
    "                          its metric is the pinball loss\n"
    "  --threads N             worker threads (default: one per core)\n"
    "  --epochs E              passes over the data (default 20); 1 on text: one pass, each row\n"
    "                          once as it is read and none kept (a pipe of any length), its\n"
    "                          progressive loss printed at doubling rows\n"
    "  --step S                initial step size (default 2)\n"
    "  --schedule constant|decay|invscaling|adagrad\n"
    "                          step; step * decay^epoch (default); step / (1 + epochs)^power;\n"
    "                          or AdaGrad: step / sqrt(sum of squared gradients), per weight\n"
    "  --normalized[=0|1]      (or --normalized 0) scale-invariant updates (VW's normalized,\n"
    "                          NG): each feature's step is divided by its largest |x| seen,\n"
    "                          squared (with adagrad: by |x| times the AdaGrad root, VW's\n"
    "                          default), so features of very different ranges need no\n"
    "                          rescaling; any --schedule (default 1; 0: the plain loop)\n"
    "  --decay D               per-epoch step factor (default 0.8)\n"
    "  --power P               invscaling exponent (default 0.5)\n"
    "  --l2 L                  L2 penalty: mean loss + L/2 |w|^2 (default 1e-6); --l2 L/rows is\n"
    "                          L over the rows trained on (1/rows: LIBLINEAR's C = 1)\n"
    "  --l1 L                  L1 penalty: + L |w|_1, truncated gradient: sparse models with\n"
    "                          exact zeros (default 0); with --l2: elastic net\n"
    "  --class-weight balanced rows of class c count n / (K n_c): every class weighs the same\n"
    "                          in total, for imbalanced data (default none)\n"
    "  --train-metrics M       progressive (default): the training-set metrics are the last\n"
    "                          epoch's, each row scored before the step it gave, with no pass\n"
    "                          of their own; exact: a pass over the data with the final model\n"
    "  --early-stop K          with --test or --holdout: stop after K epochs without a lower\n"
    "                          test loss and keep the best epoch's model (default 3 with the\n"
    "                          default holdout, else 0)\n"
    "  --average[=E]           (or --average E) the model is the average of the weights over the last E\n"
    "                          epochs (Polyak-Ruppert; default E 1), evaluated and saved\n"
    "  --test FILE             evaluate on FILE after every epoch\n"
    "  --holdout F             or hold out a fraction F of INPUT for that (default: 0.1 with\n"
    "                          several epochs and no --test, to stop early; --holdout 0: none)\n"
    "  --seed N                shuffling and holdout seed (default 1)\n"
    "  --bias 0|1              learn an intercept (default 1)\n"
    "  --bind 0|1|auto         pin workers to cores (default auto: when they take every core\n"
    "                          this process may use; runs side by side are left to the OS)\n"
    "  --kernel auto|sparse|dense\n"
    "                          the training kernel: one example at a time over its\n"
    "                          non-zeros, or dense mini-batches with OpenBLAS (plain\n"
    "                          updates only: --normalized 0); auto: dense when at least\n"
    "                          20% of the entries are non-zero and the update is plain\n"
    "                          (default auto); --path is another name for it\n"
    "  --batch N               dense kernel: rows per mini-batch, 1..1024 (default 32)\n"
    "  --replicas machine|node|core\n"
    "                          one model shared by all workers (default), one per\n"
    "                          NUMA node averaged by a background thread, or one per\n"
    "                          worker; replicas are averaged after every epoch\n"
    "  --mem-limit BYTES       memory the data may use (K/M/G suffixes; default half\n"
    "                          of what is available); a larger .hgd trains out of core\n"
    "  --cache FILE.hgd        text INPUT is converted to FILE.hgd on the way and later\n"
    "                          epochs train from there; a later run reuses FILE.hgd\n"
    "                          while it holds INPUT as it is (size, time, inode, first\n"
    "                          and last MiB, read options), else rebuilds it, warning why\n"
    "  --stream 0|1            text INPUT: train the first epoch while the file is read,\n"
    "                          its rows in file order, shuffled within windows of blocks\n"
    "                          (default 1); 0 reads it whole first (for a file sorted by\n"
    "                          label, say)\n"
    "  --report FILE           write a JSON report (atomically)\n"
    "  -q, --quiet             no progress output\n"
    "  -i, --init MODEL        start from MODEL's weights, to go on training it on new data\n"
    "                          (its loss, index base and kind of model unless given; the\n"
    "                          same classes)\n"
    "  --model fm              a factorisation machine (Rendle 2010): a weight and --factors\n"
    "                          latent factors a feature, every pair of a row's features\n"
    "                          crossed through their factors' dot product; binary and\n"
    "                          regression losses; unless given, --schedule adagrad\n"
    "                          --step 0.2 --normalized 0 (LIBFFM's and xLearn's choice)\n"
    "                          and --l2 1e-4\n"
    "  --model ffm             a field-aware factorisation machine (Juan et al. 2016, LIBFFM's):\n"
    "                          for each field of the data, --factors latent factors a\n"
    "                          feature; a pair of features crossed through the factors each\n"
    "                          keeps for the other's field, over the row's |x|^2. INPUT needs\n"
    "                          fields: LIBFFM text (field:index:value), or Vowpal Wabbit\n"
    "                          namespaces and CSV columns, which it then reads as fields\n"
    "                          (--fields); the same defaults as fm but --step 0.3 --l2 1/rows\n"
    "  --factors K             latent factors a feature (1 to 256; default 4; implies --model fm)\n"
    "  --factor-init A         the factors start uniform in [-A, A] (default 0.5/sqrt(K))\n"
    "  --interactions AB[,CD]  feature crosses for a linear or softmax model, Vowpal Wabbit's -q\n"
    "                          (also --quadratic AB; given again, the pairs add up): every\n"
    "                          feature of namespace A with every one of B, its value the\n"
    "                          product, hashed after the data's features; ':' is any namespace\n"
    "                          (\"::\" every pair of a row's features). Reads VW namespaces and\n"
    "                          CSV columns as fields (--fields); LIBFFM's numbered fields take \"::\".\n"
    "                          Unless --l2 is given, the penalty is multiplied by the non-zeros\n"
    "                          a crossed row has for each of its own\n"
    "  --cross-bits B          the crosses hash into 2^B features (1 to 30; default 22)\n"
    "  --model mf              matrix factorisation of \"user item rating\" triples instead:\n"
    "                          see hogtrain train --model mf --help\n"
    "  Vowpal Wabbit's names for the same settings work too: -d INPUT, -f MODEL (-o),\n"
    "  -c (--cache INPUT.cache), --cache_file FILE (--cache), --passes N (--epochs),\n"
    "  -l, --learning_rate S (--step), --loss_function L (--loss), --bit_precision B\n"
    "  (--hash-bits), --holdout_off (--holdout 0), --initial_regressor MODEL (-i)\n"
    CLI_CKPT_USAGE
    "  --save-every N[s]       one pass (--epochs 1 over text: a pipe, a FIFO, a file): write\n"
    "                          the model so far to -o MODEL every N rows, or every N seconds\n"
    "                          (N s), atomically, while training goes on; SIGUSR1 writes one\n"
    "                          at once; SIGINT, SIGTERM or the input's end stop the read and\n"
    "                          write the model of every row read, and the command exits 0\n"
    CLI_LINK_USAGE
    "  how to read text INPUT and --test:\n"
    CLI_READ_USAGE;

typedef struct progress_state {
    int tty;
    int bar;               /* a progress bar is on the terminal's last line */
    hog_loss loss;
    hog_epoch_stats last;
    double *epoch_seconds; /* each epoch's training seconds, for the report */
    double *epoch_test;    /* each epoch's test loss (logloss where there is one), for the report */
    struct {               /* a run in one pass: its progressive validation, for the report */
        uint64_t rows;
        double seconds;
        hog_metrics all, recent;
    } curve[80];           /* a point at each power of two of rows, and the last */
    unsigned ncurve;
} progress_state;

static void print_metrics_brief(const hog_metrics *m, hog_loss loss)
{
    if (m->rows == 0)
        return;
    if (isfinite(m->logloss))
        fprintf(stderr, "  logloss %.4f", m->logloss);
    else if (isfinite(m->loss))
        fprintf(stderr, "  %s %.4f", loss == HOG_LOSS_QUANTILE ? "pinball loss" : "loss", m->loss);
    if (isfinite(m->accuracy))
        fprintf(stderr, "  accuracy %.4f", m->accuracy);
    if (isfinite(m->auc))
        fprintf(stderr, "  auc %.4f", m->auc);
    if (isfinite(m->rmse))
        fprintf(stderr, "  rmse %.4f", m->rmse);
}

static void on_progress(void *ctx, const hog_epoch_stats *s, int done)
{
    progress_state *ps = ctx;
    if (done) {
        /* A resumed run's first epoch: the seconds before it are unknown here. */
        ps->epoch_seconds[s->epoch - 1] = ps->last.epoch + 1 == s->epoch ? s->seconds - ps->last.seconds
                                                                          : (double)NAN;
        ps->epoch_test[s->epoch - 1] = isfinite(s->test.logloss) ? s->test.logloss : s->test.loss;
        ps->last = *s;
    }
    if (!done && s->progressive.rows) { /* Vowpal Wabbit's progressive validation, at doubling rows */
        if (ps->ncurve < sizeof(ps->curve) / sizeof(ps->curve[0])) {
            ps->curve[ps->ncurve].rows = s->examples;
            ps->curve[ps->ncurve].seconds = s->seconds;
            ps->curve[ps->ncurve].all = s->progressive;
            ps->curve[ps->ncurve].recent = s->progressive_recent;
            ps->ncurve++;
        }
        if (cli_quiet)
            return;
        const hog_metrics *a = &s->progressive, *r = &s->progressive_recent;
        fprintf(stderr, "%sprogressive: %llu rows  loss %.4f (last %llu rows %.4f)", ps->tty && ps->bar ? "\r\033[K" : "",
                (unsigned long long)s->examples, a->loss, (unsigned long long)r->rows, r->loss);
        if (isfinite(a->accuracy))
            fprintf(stderr, "  accuracy %.4f (%.4f)", a->accuracy, r->accuracy);
        if (isfinite(a->auc))
            fprintf(stderr, "  auc %.4f", a->auc);
        if (isfinite(a->rmse))
            fprintf(stderr, "  rmse %.4f (%.4f)", a->rmse, r->rmse);
        fprintf(stderr, "  %.2f s\n", s->seconds);
        ps->bar = 0;
        return;
    }
    if (cli_quiet)
        return;
    if (!done) {
        if (!ps->tty)
            return;
        ps->bar = 1;
        int width = 30, fill = (int)(s->progress * width);
        fprintf(stderr, "\repoch %u/%u [%.*s%*s] %3.0f%%", s->epoch, s->epochs, fill,
                "##############################", width - fill, "", 100 * s->progress);
        return;
    }
    double rate = s->seconds > 0 ? (double)s->examples / s->seconds : 0;
    ps->bar = 0;
    fprintf(stderr, "%sepoch %u/%u  step %.4g  train loss %.4f", ps->tty ? "\r\033[K" : "",
            s->epoch, s->epochs, s->step, s->train_loss);
    if (s->test.rows)
        fprintf(stderr, "  | test");
    print_metrics_brief(&s->test, ps->loss);
    fprintf(stderr, "  %.2f s  %.3g ex/s\n", s->seconds, rate);
}

/* The report of a run into o, opened before it, which this closes: fr
 * says how INPUT was read (read_seconds overlap the first epoch when it was
 * streamed), cache is --cache or NULL. */
static int write_report(cli_out *o, const char *input, const char *model_path, const hog_dataset_info *di,
                        const hog_model_info *mi, const progress_state *ps, const hog_file_run *fr, const char *cache,
                        const hog_link *link, double wall)
{
    const hog_epoch_stats *last = &ps->last;
    FILE *f = o->f;
    double secs = last->seconds;
    fprintf(f, "{\n  \"command\": \"train\",\n  \"input\": ");
    cli_json_string(f, input);
    fprintf(f, ",\n  \"model\": ");
    cli_json_string(f, model_path);
    fprintf(f, ",\n  \"loss\": \"%s\",\n  \"threads\": %u,\n  \"epochs\": %u,\n", hog_loss_name(mi->loss),
            mi->params.threads, mi->params.epochs);
    fprintf(f, "  \"kernel\": \"%s\",\n  \"batch\": %u,\n", hog_kernel_name(mi->params.kernel), mi->params.batch);
    fprintf(f, "  \"replicas\": \"%s\",\n", hog_replicas_name(mi->params.replicas));
    fprintf(f, "  \"rows\": %llu,\n  \"features\": %llu,\n  \"nnz\": %llu,\n", (unsigned long long)di->rows,
            (unsigned long long)di->features, (unsigned long long)di->nnz);
    fprintf(f, "  \"wall_seconds\": ");
    cli_json_number(f, wall);
    fprintf(f, ",\n  \"read_seconds\": ");
    cli_json_number(f, fr->read_seconds);
    fprintf(f, ",\n  \"streamed\": %s", fr->streamed ? "true" : "false");
    if (cache) {
        fprintf(f, ",\n  \"cache\": ");
        cli_json_string(f, cache);
        fprintf(f, ",\n  \"cache_used\": %s", fr->cache_used ? "true" : "false");
    }
    fprintf(f, ",\n  \"train_seconds\": ");
    cli_json_number(f, secs);
    fprintf(f, ",\n  \"epoch_seconds\": [");
    for (unsigned e = 0; e < last->epoch; e++) {
        fputs(e ? ", " : "", f);
        cli_json_number(f, ps->epoch_seconds[e]);
    }
    fputc(']', f);
    fprintf(f, ",\n  \"epoch_test_loss\": [");
    for (unsigned e = 0; e < last->epoch; e++) {
        fputs(e ? ", " : "", f);
        cli_json_number(f, last->test.rows ? ps->epoch_test[e] : (double)NAN);
    }
    fputc(']', f);
    fprintf(f, ",\n  \"examples\": %llu,\n  \"examples_per_s\": ", (unsigned long long)last->examples);
    cli_json_number(f, secs > 0 ? (double)last->examples / secs : (double)NAN);
    fprintf(f, ",\n  \"nnz_per_s\": ");
    cli_json_number(f, secs > 0 ? (double)last->nnz / secs : (double)NAN);
    fprintf(f, ",\n  \"train_loss\": ");
    cli_json_number(f, last->train_loss);
    fprintf(f, ",\n  \"schedule\": \"%s\",\n  \"normalized\": %s,\n  \"l2\": ", hog_schedule_name(mi->params.schedule),
            mi->params.normalized ? "true" : "false");
    cli_json_number(f, mi->params.l2);
    fprintf(f, ",\n  \"l1\": ");
    cli_json_number(f, mi->params.l1);
    if (mi->loss == HOG_LOSS_QUANTILE) {
        fprintf(f, ",\n  \"quantile\": ");
        cli_json_number(f, mi->params.quantile);
    }
    fprintf(f, ",\n  \"early_stop\": %u,\n  \"average\": %u,\n  \"epochs_run\": %u,\n  \"best_epoch\": %u,\n"
            "  \"nonzero_weights\": %llu,\n  \"weights\": %llu", mi->params.early_stop, mi->params.average,
            mi->epochs_run, mi->best_epoch, (unsigned long long)mi->nonzero,
            (unsigned long long)mi->features * mi->outputs);
    if (ps->ncurve) {
        fprintf(f, ",\n  \"progressive\": [");
        for (unsigned i = 0; i < ps->ncurve; i++) {
            fprintf(f, "%s\n    {\"rows\": %llu, \"seconds\": ", i ? "," : "", (unsigned long long)ps->curve[i].rows);
            cli_json_number(f, ps->curve[i].seconds);
            fprintf(f, ", \"all\": ");
            cli_json_metrics(f, &ps->curve[i].all);
            fprintf(f, ", \"recent\": ");
            cli_json_metrics(f, &ps->curve[i].recent);
            fputc('}', f);
        }
        fprintf(f, "\n  ]");
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        fprintf(f, ",\n  \"peak_rss_bytes\": %llu", (unsigned long long)ru.ru_maxrss * 1024ull);
    fprintf(f, ",\n  \"train_metrics\": \"%s\",\n  \"train\": ", hog_train_metrics_name(mi->params.train_metrics));
    cli_json_metrics(f, &mi->train);
    fprintf(f, ",\n  \"test\": ");
    cli_json_metrics(f, &mi->test);
    if (link)
        cli_link_report(f, link);
    fprintf(f, "\n}\n");
    return cli_out_close(o, 1);
}

/* Parses one training option into p. Returns 0, or -1 (reported). */
static int train_option(const char *name, const char *val, hog_train_params *p)
{
    char opt[64];
    snprintf(opt, sizeof(opt), "--%s", name);
    unsigned long long u;
    if (strcmp(name, "loss") == 0) {
        if (hog_loss_parse(val, &p->loss) == 0)
            return 0;
        cli_error("--loss: expected logistic, hinge, modified_huber, squared, quantile or softmax, found '%s'", val);
        return -1;
    }
    if (strcmp(name, "schedule") == 0) {
        if (hog_schedule_parse(val, &p->schedule) == 0)
            return 0;
        cli_error("--schedule: expected constant, decay, invscaling or adagrad, found '%s'", val);
        return -1;
    }
    if (strcmp(name, "train-metrics") == 0) {
        if (hog_train_metrics_parse(val, &p->train_metrics) == 0)
            return 0;
        cli_error("--train-metrics: expected progressive or exact, found '%s'", val);
        return -1;
    }
    if (strcmp(name, "class-weight") == 0) {
        if (hog_class_weight_parse(val, &p->class_weight) == 0)
            return 0;
        cli_error("--class-weight: expected balanced or none, found '%s'", val);
        return -1;
    }
    if (strcmp(name, "model") == 0) {
        if (strcmp(val, "fm") == 0 || strcmp(val, "ffm") == 0) {
            p->factors = p->factors ? p->factors : 4;
            p->field_aware = val[1] == 'f';
            return 0;
        }
        if (strcmp(val, "linear") == 0) {
            p->factors = 0;
            p->field_aware = 0;
            return 0;
        }
        cli_error("--model: expected linear, fm, ffm or mf, found '%s'", val);
        return -1;
    }
    if (strcmp(name, "factors") == 0) {
        if (cli_unsigned(opt, val, UINT32_MAX, &u) < 0)
            return -1;
        if (u < 1 || u > HOG_MAX_FACTORS) {
            cli_error("--factors: expected a whole number from 1 to %u, found '%s'", HOG_MAX_FACTORS, val);
            return -1;
        }
        p->factors = (uint32_t)u;
        return 0;
    }
    if (strcmp(name, "interactions") == 0 || strcmp(name, "quadratic") == 0) {
        /* given again, the pairs add up, as Vowpal Wabbit's -q does */
        static char spec[HOG_MAX_CROSSES * 3 + 1];
        const size_t used = strlen(spec);
        if (used + 1 + strlen(val) >= sizeof(spec)) {
            cli_error("%s: more than %u pairs of namespaces to cross", opt, HOG_MAX_CROSSES);
            return -1;
        }
        snprintf(spec + used, sizeof(spec) - used, "%s%s", used ? "," : "", val);
        p->interactions = spec;
        return 0;
    }
    if (strcmp(name, "cross-bits") == 0) {
        if (cli_unsigned(opt, val, 30, &u) < 0)
            return -1;
        if (u < 1) {
            cli_error("--cross-bits: expected 1 to 30, found '%s'", val);
            return -1;
        }
        p->cross_bits = (uint32_t)u;
        return 0;
    }
    if (strcmp(name, "factor-init") == 0) {
        double a;
        if (cli_double(opt, val, &a) < 0)
            return -1;
        if (!(a > 0 && a < 100)) {
            cli_error("--factor-init: expected a scale in (0, 100), found %s", val);
            return -1;
        }
        p->factor_init = (float)a;
        return 0;
    }
    if (strcmp(name, "normalized") == 0) {
        if (!val) { /* --normalized alone: on */
            p->normalized = 1;
            return 0;
        }
        if (cli_unsigned(opt, val, 1, &u) < 0)
            return -1;
        p->normalized = (int)u;
        return 0;
    }
    if (strcmp(name, "early-stop") == 0 || strcmp(name, "average") == 0) {
        if (!val) { /* --average alone: the last epoch */
            p->average = 1;
            return 0;
        }
        if (cli_unsigned(opt, val, 1000000, &u) < 0)
            return -1;
        if (name[0] == 'e')
            p->early_stop = (unsigned)u;
        else
            p->average = (unsigned)u;
        return 0;
    }
    if (strcmp(name, "bind") == 0)
        return cli_bind(val, &p->bind);
    if (strcmp(name, "threads") == 0 || strcmp(name, "epochs") == 0 || strcmp(name, "seed") == 0 ||
        strcmp(name, "bias") == 0 || strcmp(name, "stream") == 0) {
        unsigned long long max = strcmp(name, "seed") == 0 ? ~0ull
                                 : name[0] == 'b' || strcmp(name, "stream") == 0 ? 1 : 1000000;
        if (cli_unsigned(opt, val, max, &u) < 0)
            return -1;
        if (name[0] == 't') p->threads = (unsigned)u;
        else if (name[0] == 'e') p->epochs = (unsigned)u;
        else if (strcmp(name, "seed") == 0) p->seed = u;
        else if (strcmp(name, "stream") == 0) p->stream = (int)u;
        else p->bias = (int)u;
        return 0;
    }
    if (strcmp(name, "replicas") == 0) {
        if (hog_replicas_parse(val, &p->replicas) == 0)
            return 0;
        cli_error("--replicas: expected machine, node or core, found '%s'", val);
        return -1;
    }
    if (strcmp(name, "kernel") == 0 || strcmp(name, "path") == 0) { /* --path: its first name */
        if (hog_kernel_parse(val, &p->kernel) == 0)
            return 0;
        cli_error("%s: expected auto, sparse or dense, found '%s'", opt, val);
        return -1;
    }
    if (strcmp(name, "batch") == 0) {
        if (cli_unsigned(opt, val, 1024, &u) < 0)
            return -1;
        p->batch = (unsigned)u;
        return 0;
    }
    if (strcmp(name, "mem-limit") == 0) {
        unsigned long long b;
        if (cli_bytes(opt, val, &b) < 0)
            return -1;
        p->mem_limit = b;
        return 0;
    }
    if (strcmp(name, "l2") == 0 && strstr(val, "/rows")) { /* --l2 C/rows: C over the rows trained on */
        char num[64];
        const size_t n = (size_t)(strstr(val, "/rows") - val);
        if (n >= sizeof(num) || strcmp(val + n, "/rows") != 0) {
            cli_error("--l2: expected a penalty (1e-6) or one over the rows (1/rows), found '%s'", val);
            return -1;
        }
        memcpy(num, val, n);
        num[n] = 0;
        if (cli_double(opt, num, &p->l2_rows) < 0)
            return -1;
        if (!(p->l2_rows > 0)) {
            cli_error("--l2: the share over the rows must be above 0, found '%s'", val);
            return -1;
        }
        return 0;
    }
    if (strcmp(name, "l2") == 0)
        p->l2_rows = 0;
    double *d = strcmp(name, "step") == 0 ? &p->step : strcmp(name, "decay") == 0 ? &p->decay
              : strcmp(name, "power") == 0 ? &p->power : strcmp(name, "l2") == 0 ? &p->l2
              : strcmp(name, "holdout") == 0 ? &p->holdout : strcmp(name, "l1") == 0 ? &p->l1
              : strcmp(name, "quantile") == 0 ? &p->quantile : NULL;
    if (!d) {
        cli_error("unknown option %s", opt);
        return -1;
    }
    return cli_double(opt, val, d);
}

static const char tune_usage[] =
    "usage: hogtrain tune INPUT -o MODEL [--trials N] [--cv K | --holdout F] [train options]\n"
    "  searches N settings (default 16) of --step (1e-3 to 1), --schedule (decay or adagrad),\n"
    "  --normalized, --l2 (1e-8 to 1e-2) and --l1 (none, or 1e-8 to 1e-4) by successive\n"
    "  halving: every trial runs a few epochs, the better half twice as many, and so on up\n"
    "  to --epochs; each is scored by its held-out loss on K folds (--cv K) or on a holdout\n"
    "  (--holdout F, default 0.2). Prints the leaderboard, then trains the best on all of\n"
    "  INPUT and writes it to MODEL. The other options are train's, fixed for every trial:\n"
    "  --trials N              settings to try (default 16)\n"
    "  --cv K                  score each on K folds instead of one holdout\n";

static int train_main(int argc, char **argv, int tune);

int cli_train(int argc, char **argv)
{
    return train_main(argc, argv, 0);
}

int cli_tune(int argc, char **argv)
{
    return train_main(argc, argv, 1);
}

/* The trainer's snapshot write: the model file replaced atomically (a
 * temporary file beside it, synced, renamed), so that a reader of it only
 * ever finds a whole model, the last one. */
static int snap_write(void *ctx, const hog_model *m)
{
    const cli_snap *s = ctx;
    return hog_model_save(m, s->path);
}

/* train, or with tune the search of cli_tune_run before it. */
static int train_main(int argc, char **argv, int tune)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'}, {"test", required_argument, 0, 'T'},
        {"report", required_argument, 0, 'R'}, {"cache", required_argument, 0, 'C'},
        CLI_READ_OPTIONS,
        {"loss", required_argument, 0, 0}, {"threads", required_argument, 0, 0},
        {"epochs", required_argument, 0, 0}, {"step", required_argument, 0, 0},
        {"schedule", required_argument, 0, 0}, {"decay", required_argument, 0, 0},
        {"power", required_argument, 0, 0}, {"l2", required_argument, 0, 0},
        {"holdout", required_argument, 0, 0}, {"seed", required_argument, 0, 0},
        {"bias", required_argument, 0, 0}, {"bind", required_argument, 0, 0},
        {"mem-limit", required_argument, 0, 0}, {"kernel", required_argument, 0, 0},
        {"replicas", required_argument, 0, 0}, {"stream", required_argument, 0, 0},
        {"batch", required_argument, 0, 0}, {"normalized", optional_argument, 0, 0},
        {"l1", required_argument, 0, 0}, {"early-stop", required_argument, 0, 0},
        {"average", optional_argument, 0, 0}, {"quantile", required_argument, 0, 0},
        {"path", required_argument, 0, 0}, CLI_CKPT_OPTIONS, CLI_LINK_OPTIONS,
        /* the names Vowpal Wabbit users type (cli_canonical) */
        {"data", required_argument, 0, 'd'}, {"final_regressor", required_argument, 0, 'o'},
        {"cache_file", required_argument, 0, 'C'}, {"passes", required_argument, 0, 0},
        {"loss_function", required_argument, 0, 0}, {"learning_rate", required_argument, 0, 0},
        {"holdout_off", no_argument, 0, 0}, {"bit_precision", required_argument, 0, 'b'},
        {"init", required_argument, 0, 'i'}, {"initial_regressor", required_argument, 0, 'i'},
        {"cv", required_argument, 0, 'V'}, {"trials", required_argument, 0, 'U'},
        {"class-weight", required_argument, 0, 0}, {"train-metrics", required_argument, 0, 0},
        {"model", required_argument, 0, 0}, {"factors", required_argument, 0, 0},
        {"factor-init", required_argument, 0, 0}, {"interactions", required_argument, 0, 0},
        {"quadratic", required_argument, 0, 0}, {"cross-bits", required_argument, 0, 0},
        {"save-every", required_argument, 0, 0}, {0, 0, 0, 0},
    };
    if (cli_mf_wanted(argc, argv))
        return cli_mf_train(argc, argv);
    double t_start = cli_now();
    /* The command as given, for the resume line: getopt reorders argv. */
    char **given = calloc((size_t)argc + 1, sizeof(char *));
    if (!given) {
        cli_error("out of memory");
        return 1;
    }
    memcpy(given, argv, (size_t)argc * sizeof(char *));
    hog_train_params p = hog_train_params_default();
    hog_read_params rp = hog_read_params_default();
    hog_link_params lp = hog_link_params_default();
    const char *out = NULL, *test_path = NULL, *report = NULL, *cache = NULL;
    hog_model *init = NULL;
    cli_ckpt ck = {NULL, 300, 0, 0};
    int c, li, holdout_set = 0, rank_outputs = 0, status = 2;
    const char *data = NULL, *init_path = NULL;
    int cache_beside = 0, loss_set = 0, fm_set = 0, l2_set = 0; /* fm_set: --schedule (1), --step (2), --normalized (4) given */
    int kind_set = 0, stop_set = 0; /* --model or --factors given; --early-stop given */
    unsigned cv = 0, trials = 16;
    cli_snap snap = {NULL, 0, 0, 0};
    while ((c = cli_getopt(tune ? "tune" : "train", argc, argv, "o:qhb:d:f:l:ci:", opts, &li)) != -1) {
        switch (c) {
        case 'o':
        case 'f': out = optarg; break;
        case 'q': cli_quiet = 1; break;
        case 'h':
            if (tune)
                fputs(tune_usage, stdout);
            fputs(train_usage, stdout);
            status = 0;
            goto usage;
        case 'V':
        case 'U': {
            unsigned long long v;
            if (cli_unsigned(c == 'V' ? "--cv" : "--trials", optarg, 1000, &v) < 0)
                goto usage;
            if (v < 2) {
                cli_error("%s: at least 2, found %s", c == 'V' ? "--cv" : "--trials", optarg);
                goto usage;
            }
            *(c == 'V' ? &cv : &trials) = (unsigned)v;
            break;
        }
        case 'T': test_path = optarg; break;
        case 'R': report = optarg; break;
        case 'C': cache = optarg; break;
        case 'c': cache_beside = 1; break;
        case 'd': data = optarg; break;
        case 'i': init_path = optarg; break;
        case 'l':
            if (train_option("step", optarg, &p) < 0)
                goto usage;
            fm_set |= 2;
            break;
        case CLI_CKPT_OPT:
            if (cli_ckpt_option(opts[li].name, optarg, &ck) < 0)
                goto usage;
            break;
        case 'b':
        case CLI_READ_OPT:
            if (cli_read_option(c == 'b' ? "hash-bits" : opts[li].name, optarg, &rp) < 0)
                goto usage;
            break;
        case 'N':
            if (strcmp(opts[li].name, "rank-outputs") == 0)
                rank_outputs = 1;
            else if (cli_link_option(opts[li].name, optarg, &lp) < 0)
                goto usage;
            break;
        case 0: {
            const char *name = cli_canonical(opts[li].name);
            if (strcmp(name, "save-every") == 0) {
                if (cli_save_every_option(optarg, &snap) < 0)
                    goto usage;
                break;
            }
            if (strcmp(name, "holdout_off") == 0) {
                p.holdout = 0;
                holdout_set = 1;
                break;
            }
            holdout_set |= strcmp(name, "holdout") == 0;
            loss_set |= strcmp(name, "loss") == 0;
            fm_set |= (strcmp(name, "schedule") == 0) | (strcmp(name, "step") == 0) << 1 |
                      (strcmp(name, "normalized") == 0) << 2;
            l2_set |= strcmp(name, "l2") == 0;
            stop_set |= strcmp(name, "early-stop") == 0;
            kind_set |= strcmp(name, "model") == 0 || strcmp(name, "factors") == 0;
            const char *val = strcmp(name, "average") == 0 || strcmp(name, "normalized") == 0
                                  ? cli_optional_value(argc, argv) : optarg;
            if (train_option(name, val, &p) < 0)
                goto usage;
            break;
        }
        default: goto usage;
        }
    }
    /* INPUT, or -d INPUT as Vowpal Wabbit takes it; --cv alone writes no model */
    if (optind != argc - (data ? 0 : 1) || (!out && !(cv && !tune))) {
        cli_error("%s needs one INPUT (or -d INPUT) and -o MODEL; see hogtrain %s --help", tune ? "tune" : "train",
                  tune ? "tune" : "train");
        goto usage;
    }
    if ((cv || tune) && (test_path || ck.path || cache || cache_beside || init_path || lp.nodes > 1)) {
        cli_error("%s holds out parts of INPUT, read once: --test, --checkpoint, --cache, -c, --init and several "
                  "machines are not for it", tune ? "tune" : "--cv");
        goto usage;
    }
    if (cv && holdout_set) {
        cli_error("--cv and --holdout are alternatives: give one");
        goto usage;
    }
    if (!tune && trials != 16) {
        cli_error("--trials is for hogtrain tune");
        goto usage;
    }
    if (snap.set && (cv || tune || lp.nodes > 1)) {
        cli_error("--save-every writes the model of a run in one pass while it goes on: not for %s",
                  tune ? "hogtrain tune" : cv ? "--cv" : "a run of several ranks (--nodes)");
        goto usage;
    }
    const int out_is_file = cli_is_model_file(out);
    if (snap.set && out && !out_is_file) {
        cli_error("--save-every: -o %s is not a file: snapshots replace a model file while the run goes on", out);
        goto usage;
    }
    const char *input_arg = data ? data : argv[optind];
    char cache_buf[4096];
    if (cache_beside && !cache) { /* -c: Vowpal Wabbit's cache beside the data */
        snprintf(cache_buf, sizeof(cache_buf), "%s.cache", input_arg);
        cache = cache_buf;
    }
    if (test_path && holdout_set) {
        cli_error("--test and --holdout are alternatives: give one");
        goto usage;
    }
    /* Several epochs without a test set hold out a tenth and stop early
     * (--cv and tune hold out their own). */
    cli_holdout_default(&lp, cv || tune || test_path || holdout_set, p.epochs, stop_set, "rows", "loss", &p.holdout,
                        &p.early_stop);
    if (p.early_stop && !test_path && !(p.holdout > 0)) {
        cli_error("--early-stop needs --test FILE or --holdout F to measure improvement on");
        goto usage;
    }
    if (cli_ckpt_check(&ck, &lp) < 0)
        goto usage;
    if (init_path && ck.resume) {
        cli_error("--init and --resume are alternatives: a resumed run starts from its checkpoint");
        goto usage;
    }
    if (init_path) { /* the model's loss and index base unless given */
        char ierr[CLI_ERR_LEN] = "";
        if (hog_model_load(init_path, &init, ierr, sizeof(ierr)) < 0) {
            cli_error("--init: %s", ierr);
            status = 1;
            goto usage;
        }
        hog_model_info ii;
        hog_model_get_info(init, &ii);
        if (!loss_set)
            p.loss = ii.loss;
        else if (p.loss != ii.loss) {
            cli_error("--init %s was trained with --loss %s, this run has --loss %s: a warm start keeps the loss",
                      init_path, hog_loss_name(ii.loss), hog_loss_name(p.loss));
            goto usage;
        }
        if (rp.index_base < 0)
            rp.index_base = ii.data_index_base;
        const unsigned bits = hog_model_data_hash_bits(init);
        if (bits && rp.hash_bits && rp.hash_bits != bits) {
            cli_error("--hash-bits %u: --init %s was trained on text hashed into 2^%u features (-b %u); a warm "
                      "start hashes as its model did: leave -b out to follow it", rp.hash_bits, init_path, bits, bits);
            goto usage;
        }
        if (!kind_set) { /* and its kind of model */
            p.factors = ii.params.factors;
            p.field_aware = ii.params.field_aware;
        }
        if (!p.interactions && ii.params.interactions) { /* and its crosses */
            p.interactions = ii.params.interactions;
            p.cross_bits = ii.params.cross_bits;
        }
    }
    /* A factorisation machine's defaults, where not given: AdaGrad at 0.2,
     * plain (LIBFFM's and xLearn's choice; the normalized update's scales
     * are not a factor's). */
    if (p.factors) {
        if (!(fm_set & 1))
            p.schedule = HOG_SCHEDULE_ADAGRAD;
        /* A field-aware one at 0.3: on gen_click data (k 4, 1,000,000
         * rows) 0.2 reached test logloss 0.4330 after 7 epochs, 0.3 0.4308
         * after 4 and 0.4301 after 6 (0.4 and 0.5: 0.4298); on 30,000
         * rows 0.3 was the best of the three (0.5471, 0.2: 0.5490). */
        if (!(fm_set & 2))
            p.step = p.field_aware ? 0.3 : 0.2;
        if (!(fm_set & 4))
            p.normalized = 0;
        /* A factor's step has no feature scale to hold it back: without a
         * penalty the default run overfits within two epochs on click data
         * (gen_click, 300,000 rows: test logloss 0.559, then 0.571, ...,
         * 0.626 after six; with 1e-4 it falls to 0.534 and stays). */
        /* A field-aware one's factors each see a share of a feature's rows:
         * on gen_click data, 2e-5 was best at 30,000 rows and 6e-7 at
         * 1,000,000 (test logloss 0.548 and 0.442 after 4 epochs; 2e-5 gave
         * 0.506 there), so its penalty follows the rows, LIBLINEAR's C = 1. */
        if (!l2_set && p.field_aware)
            p.l2_rows = 1;
        else if (!l2_set)
            p.l2 = 1e-4;
    }
    /* Crosses multiply a row's terms; the penalty follows them unless given
     * (hog_train_params.l2_crossed). */
    if (p.interactions && *p.interactions && !l2_set)
        p.l2_crossed = 1;
    if (p.field_aware || p.interactions) /* VW namespaces and CSV columns become the fields */
        rp.fields = 1;
    const char *field;
    if (hog_train_params_check(&p, &field) < 0) {
        if (strcmp(field, "average") == 0)
            cli_error("invalid value for --average: %u epochs averaged, only %u trained", p.average, p.epochs);
        else if (strcmp(field, "quantile") == 0)
            cli_error("invalid value for --quantile: %g, expected a number in (0, 1)", p.quantile);
        else /* the field, as its option (cli_flags_rewrite) */
            cli_error("invalid value for hog_train_params.%s", field);
        goto usage;
    }
    hog_log_set(cli_log, NULL, cli_quiet ? HOG_LOG_ERROR : HOG_LOG_INFO);
    const char *input = cli_input(input_arg);
    if (cv || tune) { /* the folds or the search on INPUT read once, then (with -o) the model on all of it */
        status = 1;
        hog_dataset *ds = NULL;
        char derr[CLI_ERR_LEN] = "";
        if (!rp.mem_limit)
            rp.mem_limit = p.mem_limit;
        if (hog_dataset_open(input, &rp, &ds, derr, sizeof(derr)) < 0) {
            cli_error("%s", derr);
            goto usage;
        }
        hog_log_set(cli_log, NULL, HOG_LOG_ERROR); /* one line per trial is enough */
        int rc = 0;
        if (tune) {
            hog_train_params base = p, best;
            if (!cv && !holdout_set)
                base.holdout = 0.2;
            rc = cli_tune_run(&base, ds, trials, cv, input, &best);
            if (rc == 0) {
                best.progress = p.progress;
                best.progress_ctx = p.progress_ctx;
                best.holdout = holdout_set ? p.holdout : 0;
                p = best;
            }
        } else {
            rc = cli_cv_run(&p, ds, cv, input, out ? NULL : report);
        }
        hog_dataset_close(ds);
        hog_log_set(cli_log, NULL, cli_quiet ? HOG_LOG_ERROR : HOG_LOG_INFO);
        if (rc < 0 || !out) {
            status = rc < 0 ? 1 : 0;
            goto usage;
        }
    }
    const char *ins[] = {input, test_path}, *outs[] = {out, report, cache, ck.path};
    if (cli_outputs_apart(ins, 2, outs, 4) < 0) {
        status = 1;
        goto usage;
    }
    cli_signal_catch();
    char out_dir[4096];
    if (!rp.temp_dir && out) /* text too large for the limit goes next to the model */
        rp.temp_dir = cli_folder_of(out, out_dir, sizeof(out_dir));

    progress_state ps = {.tty = isatty(2), .loss = p.loss, .epoch_seconds = calloc(p.epochs, sizeof(double)),
                         .epoch_test = calloc(p.epochs, sizeof(double))};
    p.progress = on_progress;
    p.progress_ctx = &ps;
    hog_file_run fr;
    memset(&fr, 0, sizeof(fr));
    hog_trainer *t = NULL;
    hog_model *m = NULL;
    hog_link *link = NULL;
    char err[CLI_ERR_LEN] = "", rank_out[4096], rank_report[4096];
    hog_output *model_out = NULL;
    cli_out report_out;
    int report_open = 0;
    status = 1;
    if (!ps.epoch_seconds || !ps.epoch_test) {
        cli_error("out of memory");
        goto out;
    }
    int rc = hog_trainer_create(&p, &t, err, sizeof(err));
    if (rc < 0) {
        cli_error("%s", err[0] ? err : hog_strerror(rc));
        goto out;
    }
    cli_signal_route(t, NULL, NULL);
    /* A model file takes snapshots: on --save-every's count or timer, and
     * at SIGUSR1 whether or not it was given. */
    snap.path = out;
    if (out_is_file && !tune && !cv &&
        hog_trainer_set_snapshots(t, snap.rows, snap.seconds, snap_write, &snap) == 0)
        cli_signal_snapshots(t, NULL);
    hog_trainer_set_init(t, init); /* its loss is the run's (checked above) */
    if (ck.path && (rc = hog_trainer_set_checkpoint(t, ck.path, ck.every, ck.resume)) < 0) {
        cli_error("--checkpoint %s: %s", ck.path, hog_strerror(rc));
        goto out;
    }
    if (cli_link_open(&lp, t, NULL, &link) < 0)
        goto out;
    hog_trainer_set_link(t, link);
    if (link && hog_link_rank(link) != 0) {
        /* Rank 0 evaluates and writes; the others write their own view
         * only when asked, next to rank 0's file. */
        test_path = NULL;
        out = cli_rank_path(link, out, rank_outputs, rank_out, sizeof(rank_out));
        report = cli_rank_path(link, report, rank_outputs, rank_report, sizeof(rank_report));
    }
    /* Every output is made (its file without a name yet) before the first
     * epoch: a path that cannot be written fails now, not after the run. */
    if (out && (rc = hog_output_open(out, &model_out)) < 0) {
        cli_error("%s: cannot create a file beside it: %s", out, hog_strerror(rc));
        goto out;
    }
    if (report) {
        if (cli_out_open(&report_out, report) < 0)
            goto out;
        report_open = 1;
    }
    if (ck.path && !ck.resume && (rc = cli_output_check(ck.path)) < 0)
        goto out;
    /* A .hgd is checked block by block as training first reads it (its
     * scan), not in a pass of its own when it is opened. */
    rp.verify = HOG_VERIFY_AT_FIRST_READ;
    rc = hog_trainer_run_file(t, input, &rp, cache, test_path, &m, &fr, err, sizeof(err));
    /* A run in one pass that a signal ended has the model of the rows it
     * read: it is written as at the stream's end. */
    const int stopped = rc == 0 && hog_trainer_stopped(t);
    if (cli_signal_caught() && !stopped) {
        if (ps.bar && !cli_quiet)
            fputc('\n', stderr);
        status = cli_signal_report(cli_signal_caught(), rc, err, out, ck.path, link, argc, given);
        goto out;
    }
    if (rc < 0) {
        cli_error("%s", err[0] ? err : hog_strerror(rc));
        goto out;
    }
    /* Skipped input is never dropped without a word (not even with -q). */
    cli_report_skipped(input, hog_dataset_skipped(fr.train, err, sizeof(err)), err);
    if (fr.test)
        cli_report_skipped(test_path, hog_dataset_skipped(fr.test, err, sizeof(err)), err);
    hog_dataset_info di;
    hog_dataset_get_info(fr.train, &di);
    if (cache && !fr.cache_used && !cli_quiet)
        fprintf(stderr, "hogtrain: %s: cached %llu rows of %s\n", cache, (unsigned long long)di.rows, input);
    if (cli_link_after(link, out)) {
        status = 0;
        goto out;
    }
    if (cli_signal_caught() && !stopped) { /* the last moment a signal keeps the model from being written */
        status = cli_signal_report(cli_signal_caught(), 0, err, out, ck.path, link, argc, given);
        goto out;
    }
    rc = hog_model_save_output(m, model_out);
    model_out = NULL;
    if (rc < 0) {
        cli_error("%s: cannot save the model: %s", out, hog_strerror(rc));
        goto out;
    }
    hog_model_info mi;
    hog_model_get_info(m, &mi);
    if (!cli_quiet) {
        double secs = ps.last.seconds;
        fprintf(stderr, "%s: %s, %u threads, %u epochs, %.2f s training, %.3g examples/s, %.3g non-zeros/s\n",
                out, hog_loss_name(mi.loss), mi.params.threads, mi.params.epochs, secs,
                secs > 0 ? (double)ps.last.examples / secs : 0.0, secs > 0 ? (double)ps.last.nnz / secs : 0.0);
        fprintf(stderr, "%s: %llu of %llu weights non-zero", out, (unsigned long long)mi.nonzero,
                (unsigned long long)cli_model_weights(m));
        if (mi.epochs_run < mi.params.epochs || mi.best_epoch != mi.epochs_run)
            fprintf(stderr, "; stopped after epoch %u, kept epoch %u", mi.epochs_run, mi.best_epoch);
        /* The kept model is an average when its epoch was in the averaging window. */
        if (mi.params.average && mi.best_epoch > mi.params.epochs - mi.params.average)
            fprintf(stderr, "; the average over epochs %u to %u", mi.params.epochs - mi.params.average + 1,
                    mi.best_epoch);
        fprintf(stderr, "\n");
        fprintf(stderr, "train: %s %.4f", mi.loss == HOG_LOSS_QUANTILE ? "pinball loss" : "loss", mi.train.loss);
        if (isfinite(mi.train.accuracy))
            fprintf(stderr, "  accuracy %.4f", mi.train.accuracy);
        if (mi.params.train_metrics == HOG_TRAIN_METRICS_PROGRESSIVE)
            fprintf(stderr, "  (progressive: the last epoch, each row before its step)");
        fprintf(stderr, "\n");
        if (mi.test.rows) {
            fprintf(stderr, "test (%llu rows):", (unsigned long long)mi.test.rows);
            print_metrics_brief(&mi.test, mi.loss);
            fprintf(stderr, "\n");
        }
    }
    report_open = 0;
    if (report && write_report(&report_out, input, out, &di, &mi, &ps, &fr, cache, link, cli_now() - t_start) < 0)
        goto out;
    status = 0;
out:
    hog_output_abort(model_out);
    if (report_open)
        cli_out_close(&report_out, 0);
    cli_signal_release();
    hog_model_free(m);
    hog_trainer_free(t);
    cli_link_close(link);
    hog_dataset_close(fr.test);
    hog_dataset_close(fr.train);
    free(ps.epoch_seconds);
    free(ps.epoch_test);
usage:
    hog_model_free(init);
    free(given);
    return status;
}
