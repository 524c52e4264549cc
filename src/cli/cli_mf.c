/* cli_mf.c: the matrix factorisation side of the hogtrain command: train --model mf, predict and info for its models. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"

static const char mf_usage[] =
    "usage: hogtrain train RATINGS --model mf -o MODEL [options]\n"
    "  RATINGS: \"user item rating\" lines (spaces, tabs or a comma between fields,\n"
    "  an optional header, '#' comments, further fields ignored) or a .hgr file\n"
    "  -o, --output FILE       the model to write (atomically)\n"
    "  --rank K                factors per user and per item (default 32)\n"
    "  --threads N             worker threads (default: one per core)\n"
    "  --epochs E              passes over the ratings (default 20); --epochs 1 learns each\n"
    "                          rating once as it is read (a file, a pipe, a FIFO), holding\n"
    "                          none: progressive rmse printed at doubling ratings\n"
    "  --step S                initial step size (default 0.1)\n"
    "  --schedule adagrad|decay\n"
    "                          adagrad: each user's and item's step is S / sqrt(1 + its\n"
    "                          mean squared gradients so far), as LIBMF's (default);\n"
    "                          decay: the same S for every rating\n"
    "  --decay D               per-epoch step factor (default 0.95)\n"
    "  --l2 L                  L2 on the factors, per rating (default 0.1)\n"
    "  --l2-bias L             L2 on the user and item biases, per rating (default 0.01)\n"
    "  --init S                factors start N(0, S^2) (default 0.1)\n"
    "  --clamp 0|1             clip predictions to the training range (default 1)\n"
    "  --test FILE             evaluate on FILE (ratings) after every epoch\n"
    "  --holdout F             or hold out a fraction F of RATINGS for that (default: 0.1 with\n"
    "                          several epochs and no --test, to stop early; --holdout 0: none)\n"
    "  --early-stop K          with --test or --holdout: stop after K epochs without a lower\n"
    "                          test rmse and keep the best epoch's model (default 3 with the\n"
    "                          default holdout, else 0)\n"
    "  --seed N                initial factors, shuffling and holdout (default 1)\n"
    "  --bind 0|1|auto         pin workers to cores (default auto: when they take every core\n"
    "                          this process may use; runs side by side are left to the OS)\n"
    "  --mf-schedule grid|hogwild\n"
    "                          grid: FPSGD's blocks of user and item bands, no row shared\n"
    "                          between workers (default); hogwild: shuffled segments of\n"
    "                          1024 ratings, any worker on any row (a multi-node run\n"
    "                          always uses these)\n"
    "  --grid B                bands per side of the grid (default: 32, at least\n"
    "                          2 threads + 1, fewer on few ratings)\n"
    "  --save-ratings FILE     also write RATINGS as a binary ratings file (.hgr)\n"
    "  --on-error stop|skip    one pass (--epochs 1): a malformed line stops the run (default)\n"
    "                          or is skipped and counted\n"
    "  --save-every N[s]       one pass (--epochs 1): write the model of the ratings learned\n"
    "                          so far to -o (atomically) every N ratings, or every N seconds\n"
    "                          (N s); SIGUSR1 writes one too\n"
    "  --report FILE           write a JSON report (atomically)\n"
    "  -q, --quiet             no progress output\n"
    CLI_CKPT_USAGE
    CLI_LINK_USAGE;

int cli_mf_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return 0;
        if (strcmp(argv[i], "--model=mf") == 0 || (strcmp(argv[i], "--model") == 0 && i + 1 < argc &&
                                                    strcmp(argv[i + 1], "mf") == 0))
            return 1;
    }
    return 0;
}

/* A point of a run in one pass's progressive validation, for the report. */
typedef struct mf_point {
    uint64_t ratings;
    double seconds, rmse, recent;
} mf_point;

typedef struct mf_progress {
    int tty;
    unsigned epochs;
    double *epoch_seconds;
    hog_mf_epoch_stats last;
    mf_point curve[80];    /* a run in one pass: a point at each power of two of ratings from
                              1024, and the last */
    unsigned ncurve;
} mf_progress;

/* A run in one pass (hog_mf_train_stream): its progressive RMSE, as
 * Vowpal Wabbit prints its progressive loss, over all the ratings so far
 * and over those since the last line. */
static void on_stream_progress(void *ctx, const hog_mf_epoch_stats *s)
{
    mf_progress *ps = ctx;
    const hog_mf_epoch_stats *b = &ps->last;
    const double se = s->train_rmse * s->train_rmse * (double)s->updates,
                 se0 = b->updates ? b->train_rmse * b->train_rmse * (double)b->updates : 0;
    const uint64_t n = s->updates - b->updates;
    const double recent = n ? sqrt(fmax(se - se0, 0) / (double)n) : (double)NAN;
    /* The end, right after a point at a power of two, adds none. */
    if ((n || !ps->ncurve) && ps->ncurve < sizeof(ps->curve) / sizeof(ps->curve[0]))
        ps->curve[ps->ncurve++] = (mf_point){s->updates, s->seconds, s->train_rmse, recent};
    if (s->epoch)
        ps->epoch_seconds[0] = s->seconds;
    ps->last = *s;
    if (cli_quiet || !n)
        return;
    fprintf(stderr, "progressive: %llu ratings  rmse %.4f (last %llu ratings %.4f)  %.2f s\n",
            (unsigned long long)s->updates, s->train_rmse, (unsigned long long)n, recent, s->seconds);
}

static void on_progress(void *ctx, const hog_mf_epoch_stats *s)
{
    mf_progress *ps = ctx;
    /* A resumed run's first epoch: the seconds before it are unknown here. */
    ps->epoch_seconds[s->epoch - 1] = ps->last.epoch + 1 == s->epoch ? s->seconds - ps->last.seconds
                                                                      : (double)NAN;
    ps->last = *s;
    if (cli_quiet)
        return;
    double rate = s->seconds > 0 ? (double)s->updates / s->seconds : 0;
    fprintf(stderr, "epoch %u/%u  step %.4g  train rmse %.4f", s->epoch, s->epochs, s->step, s->train_rmse);
    if (s->test_ratings)
        fprintf(stderr, "  | test rmse %.4f", s->test_rmse);
    fprintf(stderr, "  %.2f s  %.3g updates/s\n", s->seconds, rate);
}

/* A snapshot of a run in one pass: the model file replaced atomically, so
 * that a reader of it only ever finds a whole model, the last one. */
static int snap_write(void *ctx, const hog_mf_model *m)
{
    const cli_snap *s = ctx;
    return hog_mf_save(m, s->path);
}

static int open_ratings(const char *path, int pairs, hog_ratings **out)
{
    char err[CLI_ERR_LEN] = "";
    int rc = hog_ratings_open(path, pairs, out, err, sizeof(err));
    if (rc < 0) {
        cli_error("%s", err[0] ? err : hog_strerror(rc));
        return -1;
    }
    return 0;
}

/* The report of a run, into o (opened before the model was saved, so that
 * a report that cannot be made leaves the older model as it was), which
 * it commits. */
static int write_report(cli_out *o, const char *input, const char *model, const hog_ratings_info *ri,
                        const hog_mf_info *mi, unsigned epochs_run, unsigned best_epoch, const mf_progress *ps,
                        const hog_link *link, double read_s, double wall)
{
    FILE *f = o->f;
    double secs = mi->seconds;
    fprintf(f, "{\n  \"command\": \"train\",\n  \"model_kind\": \"mf\",\n  \"input\": ");
    cli_json_string(f, input);
    fprintf(f, ",\n  \"model\": ");
    cli_json_string(f, model);
    fprintf(f, ",\n  \"rank\": %u,\n  \"threads\": %u,\n  \"epochs\": %u,\n", mi->rank, mi->params.threads,
            mi->params.epochs);
    fprintf(f, "  \"holdout\": ");
    cli_json_number(f, mi->params.holdout);
    fprintf(f, ",\n  \"early_stop\": %u,\n  \"epochs_run\": %u,\n  \"best_epoch\": %u,\n", mi->params.early_stop,
            epochs_run, best_epoch);
    fprintf(f, "  \"ratings\": %llu,\n  \"users\": %u,\n  \"items\": %u,\n  \"train_ratings\": %llu,\n",
            (unsigned long long)ri->ratings, mi->users, mi->items, (unsigned long long)mi->train_ratings);
    fprintf(f, "  \"wall_seconds\": ");
    cli_json_number(f, wall);
    fprintf(f, ",\n  \"read_seconds\": ");
    cli_json_number(f, read_s);
    fprintf(f, ",\n  \"train_seconds\": ");
    cli_json_number(f, secs);
    fprintf(f, ",\n  \"epoch_seconds\": [");
    for (unsigned e = 0; e < ps->last.epoch; e++) {
        fputs(e ? ", " : "", f);
        cli_json_number(f, ps->epoch_seconds[e]);
    }
    fprintf(f, "],\n  \"updates\": %llu,\n  \"updates_per_s\": ", (unsigned long long)mi->updates);
    cli_json_number(f, secs > 0 ? (double)mi->updates / secs : (double)NAN);
    fprintf(f, ",\n  \"train_rmse\": ");
    cli_json_number(f, mi->train_rmse);
    fprintf(f, ",\n  \"test_ratings\": %llu,\n  \"test_rmse\": ", (unsigned long long)mi->test_ratings);
    cli_json_number(f, mi->test_rmse);
    fprintf(f, ",\n  \"epoch_test_rmse\": ");
    cli_json_number(f, ps->last.test_rmse);
    if (ps->ncurve) { /* one pass: the progressive RMSE at doubling ratings */
        fprintf(f, ",\n  \"one_pass\": true,\n  \"progressive\": [");
        for (unsigned k = 0; k < ps->ncurve; k++) {
            fprintf(f, "%s\n    {\"ratings\": %llu, \"seconds\": ", k ? "," : "",
                    (unsigned long long)ps->curve[k].ratings);
            cli_json_number(f, ps->curve[k].seconds);
            fprintf(f, ", \"rmse\": ");
            cli_json_number(f, ps->curve[k].rmse);
            fprintf(f, ", \"recent_rmse\": ");
            cli_json_number(f, ps->curve[k].recent);
            fprintf(f, "}");
        }
        fprintf(f, "\n  ]");
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        fprintf(f, ",\n  \"peak_rss_bytes\": %llu", (unsigned long long)ru.ru_maxrss * 1024ull);
    if (link)
        cli_link_report(f, link);
    fprintf(f, "\n}\n");
    return cli_out_close(o, 1);
}

/* Parses one numeric option into p. Returns 0, or -1 (reported). */
static int mf_option(const char *name, const char *val, hog_mf_params *p)
{
    char opt[64];
    snprintf(opt, sizeof(opt), "--%s", name);
    unsigned long long u;
    struct { const char *n; unsigned *un; uint64_t *u64; int *i; unsigned long long max; } ints[] = {
        {"rank", &p->rank, NULL, NULL, 1024}, {"threads", &p->threads, NULL, NULL, 4096},
        {"epochs", &p->epochs, NULL, NULL, 1000000}, {"seed", NULL, &p->seed, NULL, ~0ull},
        {"clamp", NULL, NULL, &p->clamp, 1},
        {"grid", &p->grid, NULL, NULL, 4096}, {"early-stop", &p->early_stop, NULL, NULL, 1000000},
    };
    for (unsigned i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        if (strcmp(name, ints[i].n) != 0)
            continue;
        if (cli_unsigned(opt, val, ints[i].max, &u) < 0)
            return -1;
        if (ints[i].un) *ints[i].un = (unsigned)u;
        else if (ints[i].u64) *ints[i].u64 = u;
        else *ints[i].i = (int)u;
        return 0;
    }
    if (strcmp(name, "bind") == 0)
        return cli_bind(val, &p->bind);
    if (strcmp(name, "mf-schedule") == 0)
        return cli_either("--mf-schedule", val, "grid", HOG_MF_GRID, "hogwild", HOG_MF_HOGWILD, &p->schedule);
    if (strcmp(name, "schedule") == 0)
        return cli_either("--schedule", val, "adagrad", HOG_SCHEDULE_ADAGRAD, "decay", HOG_SCHEDULE_DECAY,
                          &p->step_schedule);
    double *d = strcmp(name, "step") == 0 ? &p->step : strcmp(name, "decay") == 0 ? &p->decay
              : strcmp(name, "l2") == 0 ? &p->l2 : strcmp(name, "l2-bias") == 0 ? &p->l2_bias
              : strcmp(name, "init") == 0 ? &p->init : strcmp(name, "holdout") == 0 ? &p->holdout : NULL;
    if (!d) {
        cli_error("unknown option %s", opt);
        return -1;
    }
    return cli_double(opt, val, d);
}

int cli_mf_train(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'}, {"test", required_argument, 0, 'T'},
        {"report", required_argument, 0, 'R'}, {"model", required_argument, 0, 'M'},
        {"save-ratings", required_argument, 0, 'S'},
        {"rank", required_argument, 0, 0}, {"threads", required_argument, 0, 0},
        {"epochs", required_argument, 0, 0}, {"step", required_argument, 0, 0},
        {"decay", required_argument, 0, 0}, {"l2", required_argument, 0, 0},
        {"l2-bias", required_argument, 0, 0}, {"init", required_argument, 0, 0},
        {"clamp", required_argument, 0, 0}, {"holdout", required_argument, 0, 0},
        {"seed", required_argument, 0, 0}, {"bind", required_argument, 0, 0},
        {"mf-schedule", required_argument, 0, 0}, {"grid", required_argument, 0, 0},
        {"schedule", required_argument, 0, 0}, {"early-stop", required_argument, 0, 0},
        {"save-every", required_argument, 0, 'E'}, {"on-error", required_argument, 0, 'X'}, CLI_CKPT_OPTIONS,
        CLI_LINK_OPTIONS, {0, 0, 0, 0},
    };
    double t_start = cli_now();
    hog_mf_params p = hog_mf_params_default();
    hog_link_params lp = hog_link_params_default();
    const char *out = NULL, *test_path = NULL, *report = NULL, *save = NULL;
    cli_ckpt ck = {NULL, 300, 0, 0};
    cli_snap snap = {NULL, 0, 0, 0};
    hog_read_params rp = hog_read_params_default(); /* one pass: on_error */
    int c, li, holdout_set = 0, stop_set = 0, rank_outputs = 0, status = 2;
    /* The command as given, for the resume line: getopt reorders argv. */
    char **given = calloc((size_t)argc + 1, sizeof(char *));
    if (!given) {
        cli_error("out of memory");
        return 1;
    }
    memcpy(given, argv, (size_t)argc * sizeof(char *));
    while ((c = cli_getopt("train", argc, argv, "o:qh", opts, &li)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'q': cli_quiet = 1; break;
        case 'h': fputs(mf_usage, stdout); status = 0; goto usage;
        case 'T': test_path = optarg; break;
        case 'R': report = optarg; break;
        case 'S': save = optarg; break;
        case 'E':
            if (cli_save_every_option(optarg, &snap) < 0)
                goto usage;
            break;
        case 'X': {
            int v;
            if (cli_either("--on-error", optarg, "stop", HOG_ON_ERROR_STOP, "skip", HOG_ON_ERROR_SKIP, &v) < 0)
                goto usage;
            rp.on_error = (hog_on_error)v;
            break;
        }
        case 'M':
            if (strcmp(optarg, "mf") != 0) {
                cli_error("--model: expected mf, found '%s'", optarg);
                goto usage;
            }
            break;
        case CLI_CKPT_OPT:
            if (cli_ckpt_option(opts[li].name, optarg, &ck) < 0)
                goto usage;
            break;
        case 'N':
            if (strcmp(opts[li].name, "rank-outputs") == 0)
                rank_outputs = 1;
            else if (cli_link_option(opts[li].name, optarg, &lp) < 0)
                goto usage;
            break;
        case 0:
            holdout_set |= strcmp(opts[li].name, "holdout") == 0;
            stop_set |= strcmp(opts[li].name, "early-stop") == 0;
            if (mf_option(opts[li].name, optarg, &p) < 0)
                goto usage;
            break;
        default: goto usage;
        }
    }
    if (optind != argc - 1 || !out) {
        cli_error("train --model mf needs one RATINGS file and -o MODEL");
        fputs(mf_usage, stderr);
        goto usage;
    }
    if (test_path && holdout_set) {
        cli_error("--test and --holdout are alternatives: give one");
        goto usage;
    }
    /* Several epochs without a test set hold out a tenth of the ratings
     * and stop early, as train does for the other models. */
    cli_holdout_default(&lp, test_path || holdout_set, p.epochs, stop_set, "ratings", "rmse", &p.holdout,
                        &p.early_stop);
    if (p.early_stop && !test_path && !(p.holdout > 0)) {
        cli_error("--early-stop needs --test FILE or --holdout F to measure improvement on");
        goto usage;
    }
    if (p.early_stop && lp.nodes > 1) {
        cli_error("--early-stop: a run across machines cannot stop early (each rank would keep its own best epoch)");
        goto usage;
    }
    if (cli_ckpt_check(&ck, &lp) < 0)
        goto usage;
    /* One epoch learns the ratings as they are read, unless an option needs them all first. */
    const char *whole = p.epochs != 1 ? NULL
                        : p.holdout > 0 ? "--holdout"
                        : p.early_stop ? "--early-stop"
                        : ck.path ? "--checkpoint"
                        : lp.nodes > 1 ? "--nodes"
                        : save ? "--save-ratings" : NULL;
    const int one_pass = p.epochs == 1 && !whole;
    if (snap.set && !one_pass) {
        cli_error("--save-every writes the model of a run in one pass while it goes on: not %s",
                  whole ? whole : "with several epochs");
        goto usage;
    }
    if (rp.on_error == HOG_ON_ERROR_SKIP && !one_pass) {
        cli_error("--on-error skip: a factorisation skips malformed lines in one pass (--epochs 1), not %s; read "
                  "whole, a malformed line stops it", whole ? whole : "with several epochs");
        goto usage;
    }
    const int out_is_file = cli_is_model_file(out);
    if (snap.set && !out_is_file) {
        cli_error("--save-every: -o %s is not a file: snapshots replace a model file while the run goes on", out);
        goto usage;
    }
    const char *field;
    if (hog_mf_params_check(&p, &field) < 0) {
        cli_error("invalid value for hog_mf_params.%s", field); /* as its option */
        goto usage;
    }
    hog_log_set(cli_log, NULL, cli_quiet ? HOG_LOG_ERROR : HOG_LOG_INFO);
    const char *input = cli_input(argv[optind]);
    const char *ins[] = {input, test_path}, *outs[] = {out, report, save, ck.path};
    if (cli_outputs_apart(ins, 2, outs, 4) < 0) {
        status = 1;
        goto usage;
    }
    status = 1;
    mf_progress ps = {isatty(2), p.epochs, calloc(p.epochs, sizeof(double)), {0}, {{0}}, 0};
    p.progress = one_pass ? on_stream_progress : on_progress;
    p.progress_ctx = &ps;
    hog_ratings *train = NULL, *test = NULL;
    hog_mf_model *m = NULL;
    hog_link *link = NULL;
    hog_mf_control *ctl = NULL;
    char err[CLI_ERR_LEN] = "", rank_out[4096], rank_report[4096];
    hog_output *model_out = NULL;
    cli_out ro;
    int ro_open = 0;
    if (!ps.epoch_seconds) {
        cli_error("out of memory");
        goto out;
    }
    int rc = hog_mf_control_create(&ctl);
    if (rc == 0 && ck.path)
        rc = hog_mf_control_set_checkpoint(ctl, ck.path, ck.every, ck.resume);
    if (rc < 0) {
        cli_error("%s", hog_strerror(rc));
        goto out;
    }
    p.control = ctl;
    cli_signal_catch();
    cli_signal_route(NULL, NULL, ctl);
    /* A model file takes snapshots in one pass: on --save-every's count or
     * timer, and at SIGUSR1 whether or not it was given. */
    snap.path = out;
    if (one_pass && out_is_file &&
        hog_mf_control_set_snapshots(ctl, snap.rows, snap.seconds, snap_write, &snap) == 0)
        cli_signal_snapshots(NULL, ctl);
    if (cli_link_open(&lp, NULL, ctl, &link) < 0)
        goto out;
    p.link = link;
    if (link && hog_link_rank(link) != 0) { /* as train: rank 0 evaluates and writes */
        test_path = NULL;
        out = cli_rank_path(link, out, rank_outputs, rank_out, sizeof(rank_out));
        report = cli_rank_path(link, report, rank_outputs, rank_report, sizeof(rank_report));
        save = NULL;
    }
    /* The outputs are made before the ratings are read (see cli_train). */
    if (out && (rc = hog_output_open(out, &model_out)) < 0) {
        cli_error("%s: cannot create a file beside it: %s", out, hog_strerror(rc));
        goto out;
    }
    if (report) {
        if (cli_out_open(&ro, report) < 0)
            goto out;
        ro_open = 1;
    }
    if (ck.path && !ck.resume && cli_output_check(ck.path) < 0)
        goto out;
    if (test_path && open_ratings(test_path, 0, &test) < 0)
        goto out;
    hog_ratings_info ri = {0};
    double read_s = NAN; /* one pass: reading and training overlap */
    if (one_pass) {
        if (!cli_quiet)
            fprintf(stderr, "%s: one pass: each rating learned once as it is read\n", input);
        uint64_t skipped = 0;
        rc = hog_mf_train_stream(&p, input, &rp, test, &m, &skipped, err, sizeof(err));
        /* A signal ends the read; the ratings read are learned and saved. */
        if (rc < 0 && cli_signal_caught()) {
            status = cli_signal_report(cli_signal_caught(), rc, err, out, NULL, NULL, argc, given);
            goto out;
        }
        if (rc < 0) {
            cli_error("%s", err[0] ? err : hog_strerror(rc));
            goto out;
        }
        cli_report_skipped(input, skipped, err);
        hog_mf_info si;
        hog_mf_get_info(m, &si);
        ri = (hog_ratings_info){.ratings = si.train_ratings, .users = si.users, .items = si.items,
                                .has_ratings = 1, .mean = si.mean, .min = si.min, .max = si.max};
        goto trained;
    }
    double t_read = cli_now();
    if (open_ratings(input, 0, &train) < 0)
        goto out;
    read_s = cli_now() - t_read;
    hog_ratings_get_info(train, &ri);
    if (!cli_quiet)
        fprintf(stderr, "%s: %llu ratings, %u users, %u items, mean %.4f (read in %.2f s)\n", input,
                (unsigned long long)ri.ratings, ri.users, ri.items, ri.mean, read_s);
    if (save) {
        rc = hog_ratings_save(train, save);
        if (rc < 0) {
            cli_error("%s: cannot write the ratings: %s", save, hog_strerror(rc));
            goto out;
        }
    }
    rc = hog_mf_train(&p, train, test, &m, err, sizeof(err));
    if (cli_signal_caught()) {
        status = cli_signal_report(cli_signal_caught(), rc, err, out, ck.path, link, argc, given);
        goto out;
    }
    if (rc < 0) {
        cli_error("%s: %s", input, err[0] ? err : hog_strerror(rc));
        goto out;
    }
    if (cli_link_after(link, out)) {
        status = 0;
        goto out;
    }
    if (cli_signal_caught()) { /* the last moment a signal keeps the model from being written */
        status = cli_signal_report(cli_signal_caught(), 0, err, out, ck.path, link, argc, given);
        goto out;
    }
trained:
    rc = hog_mf_save_output(m, model_out);
    model_out = NULL;
    if (rc < 0) {
        cli_error("%s: cannot save the model: %s", out, hog_strerror(rc));
        goto out;
    }
    hog_mf_info mi;
    hog_mf_get_info(m, &mi);
    unsigned epochs_run, best_epoch;
    hog_mf_get_epochs(m, &epochs_run, &best_epoch);
    if (!cli_quiet) {
        fprintf(stderr, "%s: mf rank %u, %u threads, ", out, mi.rank, mi.params.threads);
        if (one_pass)
            fputs("one pass", stderr);
        else
            fprintf(stderr, "%u epochs", epochs_run);
        if (epochs_run != best_epoch)
            fprintf(stderr, " (the model of epoch %u)", best_epoch);
        fprintf(stderr, ", %.2f s training, %.3g updates/s\n", mi.seconds,
                mi.seconds > 0 ? (double)mi.updates / mi.seconds : 0.0);
        if (one_pass)
            fprintf(stderr, "%u users, %u items, mean %.4f; progressive (%llu ratings, each before its step): "
                    "rmse %.4f\n", mi.users, mi.items, mi.mean, (unsigned long long)mi.train_ratings,
                    mi.train_rmse);
        else
            fprintf(stderr, "train (%llu ratings): rmse %.4f\n", (unsigned long long)mi.train_ratings,
                    mi.train_rmse);
        if (mi.test_ratings)
            fprintf(stderr, "test (%llu ratings): rmse %.4f\n", (unsigned long long)mi.test_ratings, mi.test_rmse);
    }
    if (report) {
        ro_open = 0;
        if (write_report(&ro, input, out, &ri, &mi, epochs_run, best_epoch, &ps, link, read_s, cli_now() - t_start) < 0)
            goto out;
    }
    status = 0;
out:
    hog_output_abort(model_out);
    if (ro_open)
        cli_out_close(&ro, 0);
    cli_signal_release();
    hog_mf_free(m);
    hog_ratings_close(test);
    hog_ratings_close(train);
    cli_link_close(link);
    hog_mf_control_free(ctl);
    free(ps.epoch_seconds);
usage:
    free(given);
    return status;
}

/* predict's state as batches of ratings come (hog_ratings_each): the
 * model's id of each user and item the input has named so far (-1:
 * unknown to the model), the output, the sums for the RMSE. */
typedef struct mf_scoring {
    const hog_mf_model *m;
    FILE *out;
    int64_t *uid, *iid;
    uint32_t nu, ni;
    uint64_t ratings;
    double se;
    int has_ratings;
} mf_scoring;

/* Extends map (n ids) to the names the batch has: the model's id of each. */
static int map_names(const hog_mf_model *m, const hog_ratings *b, int users, int64_t **map, uint32_t *n)
{
    hog_ratings_info bi;
    hog_ratings_get_info(b, &bi);
    const uint64_t want = users ? bi.users : bi.items;
    if (want <= *n)
        return 0;
    int64_t *p = realloc(*map, want * sizeof(int64_t));
    if (!p)
        return -1;
    *map = p;
    for (uint32_t k = *n; k < want; k++)
        p[k] = users ? hog_mf_user_id(m, hog_ratings_user_name(b, k)) : hog_mf_item_id(m, hog_ratings_item_name(b, k));
    *n = (uint32_t)want;
    return 0;
}

/* One batch: each pair's prediction, a line each, flushed, so that a pair
 * written alone to a pipe is answered at once. */
static int score_batch(void *ctx, const hog_ratings *b)
{
    mf_scoring *sc = ctx;
    if (map_names(sc->m, b, 1, &sc->uid, &sc->nu) < 0 || map_names(sc->m, b, 0, &sc->iid, &sc->ni) < 0)
        return -ENOMEM;
    hog_ratings_info bi;
    hog_ratings_get_info(b, &bi);
    sc->has_ratings = bi.has_ratings;
    for (uint64_t k = 0; k < bi.ratings; k++) {
        uint32_t u, i;
        float rating;
        hog_ratings_get(b, k, &u, &i, &rating);
        const float pred = (float)hog_mf_predict_id(sc->m, sc->uid[u], sc->iid[i]);
        const double e = (double)rating - (double)pred;
        sc->se += e * e;
        if (fprintf(sc->out, "%.9g\n", (double)pred) < 0)
            return -EIO;
    }
    sc->ratings += bi.ratings;
    return fflush(sc->out) == 0 ? 0 : -EIO;
}

int cli_mf_predict(const char *model_path, const char *input, const char *out, const char *report)
{
    char err[CLI_ERR_LEN] = "";
    hog_mf_model *m = NULL;
    int status = 1;
    if (hog_mf_load(model_path, &m, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        return 1;
    }
    /* The pairs are scored as they are read, batch by batch: the output
     * (and the report) are open first, and a bad line leaves a file named
     * by -o as it was (its temporary file is dropped). */
    cli_out o, rep;
    if (cli_out_open(&o, out) < 0)
        goto out;
    if (report && cli_out_open(&rep, report) < 0) {
        cli_out_close(&o, 0);
        goto out;
    }
    mf_scoring sc = {.m = m, .out = o.f};
    const int rc = hog_ratings_each(input, 1, score_batch, &sc, err, sizeof(err));
    free(sc.uid);
    free(sc.iid);
    if (rc < 0) {
        cli_error("%s", err[0] ? err : rc == -EIO ? "writing the predictions failed" : hog_strerror(rc));
        cli_out_close(&o, 0);
        if (report)
            cli_out_close(&rep, 0);
        goto out;
    }
    const double rmse = sc.has_ratings ? sqrt(sc.se / (double)sc.ratings) : (double)NAN;
    if (cli_out_close(&o, 1) < 0) {
        if (report)
            cli_out_close(&rep, 0);
        goto out;
    }
    if (!cli_quiet) {
        fprintf(stderr, "%s: %llu pairs", input, (unsigned long long)sc.ratings);
        if (isfinite(rmse))
            fprintf(stderr, ", rmse %.4f", rmse);
        fprintf(stderr, "\n");
    }
    if (report) {
        fprintf(rep.f, "{\n  \"command\": \"predict\",\n  \"model_kind\": \"mf\",\n  \"model\": ");
        cli_json_string(rep.f, model_path);
        fprintf(rep.f, ",\n  \"input\": ");
        cli_json_string(rep.f, input);
        fprintf(rep.f, ",\n  \"ratings\": %llu,\n  \"rmse\": ", (unsigned long long)sc.ratings);
        cli_json_number(rep.f, rmse);
        fprintf(rep.f, "\n}\n");
        if (cli_out_close(&rep, 1) < 0)
            goto out;
    }
    status = 0;
out:
    hog_mf_free(m);
    return status;
}

int cli_mf_info(const char *path)
{
    hog_mf_model *m;
    char err[CLI_ERR_LEN] = "";
    if (hog_mf_load(path, &m, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        return 1;
    }
    hog_mf_info in;
    hog_mf_get_info(m, &in);
    const hog_mf_params *p = &in.params;
    printf("%s: hogtrain matrix factorisation model\n", path);
    printf("%-18s %u\n", "rank", in.rank);
    printf("%-18s %u\n", "users", in.users);
    printf("%-18s %u\n", "items", in.items);
    printf("%-18s %.6g (ratings from %g to %g)\n", "mean rating", in.mean, in.min, in.max);
    printf("%-18s %016llx\n", "data fingerprint", (unsigned long long)in.data_fingerprint);
    printf("%-18s %llu\n", "training ratings", (unsigned long long)in.train_ratings);
    printf("%-18s threads %u, epochs %u, step %g (%s), decay %g, l2 %g, l2-bias %g, init %g, holdout %g,"
           " early stop %u, seed %llu, clamp %d\n", "parameters", p->threads, p->epochs, p->step,
           p->step_schedule == HOG_SCHEDULE_ADAGRAD ? "adagrad" : "decay", p->decay, p->l2, p->l2_bias, p->init,
           p->holdout, p->early_stop, (unsigned long long)p->seed, p->clamp);
    unsigned epochs_run, best_epoch;
    hog_mf_get_epochs(m, &epochs_run, &best_epoch);
    printf("%-18s %u run, the model of epoch %u\n", "epochs", epochs_run, best_epoch);
    if (p->schedule == HOG_MF_GRID)
        printf("%-18s grid of %u x %u blocks\n", "schedule", p->grid, p->grid);
    else if (p->schedule == HOG_MF_ARRIVAL)
        printf("%-18s one pass, segments in the order the ratings came\n", "schedule");
    else
        printf("%-18s hogwild (shuffled segments)\n", "schedule");
    printf("%-18s %.3f s, %llu updates\n", "training time", in.seconds, (unsigned long long)in.updates);
    printf("%-18s rmse %.6g%s\n", "train metrics", in.train_rmse,
           p->schedule == HOG_MF_ARRIVAL ? " (progressive: each rating before its step)" : "");
    if (in.test_ratings)
        printf("%-18s ratings %llu, rmse %.6g\n", "test metrics", (unsigned long long)in.test_ratings, in.test_rmse);
    hog_mf_free(m);
    return 0;
}

int cli_mf_ratings_info(const char *path)
{
    hog_ratings *r;
    if (open_ratings(path, 1, &r) < 0)
        return 1;
    hog_ratings_info in;
    hog_ratings_get_info(r, &in);
    printf("%s: %s\n", path, in.binary ? "hogtrain binary ratings (.hgr)" : "ratings text");
    printf("%-18s %llu%s\n", "ratings", (unsigned long long)in.ratings, in.has_ratings ? "" : " (pairs, no ratings)");
    printf("%-18s %u\n", "users", in.users);
    printf("%-18s %u\n", "items", in.items);
    if (in.has_ratings)
        printf("%-18s %.6g (from %g to %g)\n", "mean rating", in.mean, in.min, in.max);
    printf("%-18s %llu\n", "file bytes", (unsigned long long)in.file_bytes);
    printf("%-18s %016llx\n", "fingerprint", (unsigned long long)in.fingerprint);
    hog_ratings_close(r);
    return 0;
}
