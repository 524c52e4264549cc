/* test_cli_flags.c: the command writes the library's names for settings (hog_train_params.step) as its options (--step), in every message. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The command's own sources: the table, the rewrite and the messages that use it. */
#include "cli/cli_flags.c"
#include "cli/cli_common.c"
#include "test_command.h"

static void rewrites(const char *msg, const char *want)
{
    char got[256];
    cli_flags_rewrite(msg, got, sizeof(got));
    cr_assert_str_eq(got, want, "'%s'", msg);
}

Test(cli_flags, a_setting_becomes_its_option)
{
    rewrites("epoch 3: the training loss is not finite: lower hog_train_params.step",
             "epoch 3: the training loss is not finite: lower --step");
    rewrites("hog_mf_params.step", "--step");
    rewrites("hog_train_params.early_stop: 0 epochs", "--early-stop: 0 epochs");
    rewrites("hog_mf_params.l2_bias, hog_mf_params.rank.", "--l2-bias, --rank.");
    rewrites("hog_read_params.hash_bits: 40 is not between 0 and 31", "--hash-bits: 40 is not between 0 and 31");
    rewrites("(hog_read_params.threads)", "(--parse-threads)");
    rewrites("hog_read_params.label_name and hog_read_params.label_index", "--label and --label");
    rewrites("hog_train_params.mem_limit", "--mem-limit");
    rewrites("a line longer than 1024 bytes (hog_read_params.max_line)", "a line longer than 1024 bytes (--max-line)");
}

Test(cli_flags, a_value_follows_its_option_as_the_command_spells_it)
{
    rewrites("(use hog_train_params.loss = HOG_LOSS_SOFTMAX for multiclass)", "(use --loss softmax for multiclass)");
    rewrites("hog_train_params.loss HOG_LOSS_MODIFIED_HUBER", "--loss modified_huber");
    rewrites("does not support hog_train_params.schedule = HOG_SCHEDULE_ADAGRAD; use the sparse kernel",
             "does not support --schedule adagrad; use the sparse kernel");
    rewrites("reading t.svm whole first: hog_train_params.replicas=HOG_REPLICAS_NODE",
             "reading t.svm whole first: --replicas node");
    rewrites("1-based; hog_read_params.index_base = 0 reads as written)", "1-based; --index-base 0 reads as written)");
    rewrites("hog_read_params.on_error = HOG_ON_ERROR_SKIP", "--on-error skip");
    rewrites("hog_train_params.normalized = 1 runs on the sparse kernel only",
             "--normalized runs on the sparse kernel only");
    rewrites("hog_train_params.kernel dense does not support hog_train_params.l1; use hog_train_params.kernel sparse",
             "--kernel dense does not support --l1; use --kernel sparse");
    rewrites("hog_read_params.header = 1.", "--header.");
    rewrites("hog_train_params.average = 3", "--average=3");
    rewrites("hog_train_params.quantile = 0.5.", "--quantile 0.5.");
    rewrites("hog_train_params.l1 = -1e-3", "--l1 -1e-3");
    /* A constant of another enum is no value of this option: left as written. */
    rewrites("hog_train_params.loss HOG_KERNEL_DENSE", "--loss HOG_KERNEL_DENSE");
}

Test(cli_flags, what_no_option_sets_is_left_as_it_is)
{
    rewrites("hog_train_params.progress is called", "hog_train_params.progress is called");
    rewrites("hog_read_params.rows_per_block: 0", "hog_read_params.rows_per_block: 0");
    rewrites("hog_model_info.features", "hog_model_info.features");
    rewrites("xhog_train_params.step", "xhog_train_params.step");
    rewrites("hog_train_params. step", "hog_train_params. step");
    rewrites("hog_train_params", "hog_train_params");
    rewrites("hog_", "hog_");
    rewrites("", "");
    rewrites("--step: expected a number", "--step: expected a number");
}

Test(cli_flags, the_output_is_cut_to_its_buffer)
{
    char small[8];
    memset(small, 'x', sizeof(small));
    cli_flags_rewrite("lower hog_train_params.step now", small, sizeof(small));
    cr_assert_str_eq(small, "lower -");
    cli_flags_rewrite("hog_train_params.loss = HOG_LOSS_SOFTMAX", small, sizeof(small));
    cr_assert_str_eq(small, "--loss ");
    cli_flags_rewrite("anything", small, 1);
    cr_assert_str_eq(small, "");
}

Test(cli_flags, error_messages_and_log_lines_are_rewritten, .init = cr_redirect_stderr)
{
    cli_error("%s: %s", "r.csv", "hog_mf_params.rank: 0 is not between 1 and 1024");
    cli_log(NULL, HOG_LOG_WARN, "epoch 3: the training loss is not finite: lower hog_train_params.step");
    cli_log(NULL, HOG_LOG_INFO, "reading t.svm whole before training: hog_train_params.replicas = HOG_REPLICAS_CORE");
    cli_report_skipped("s.svm", 1, "s.svm:2:3: expected an index of at least 1 (hog_read_params.index_base = 0 "
                                   "reads as written), found 0\n");
    fflush(stderr);
    cr_assert_stderr_eq_str("hogtrain: r.csv: --rank: 0 is not between 1 and 1024\n"
                            "hogtrain: warning: epoch 3: the training loss is not finite: lower --step\n"
                            "hogtrain: reading t.svm whole before training: --replicas core\n"
                            "hogtrain: s.svm: skipped 1 malformed line; the first:\n"
                            "s.svm:2:3: expected an index of at least 1 (--index-base 0 reads as written), found 0\n");
}

/* ===================================================================== *
 *  Every option in the table is one the command takes, and the messages
 *  the library writes about settings reach the user with the option.
 * ===================================================================== */
static void setup(void)
{
    scratch_make("cli-flags");
}

TestSuite(cli_flags_command, .init = setup, .fini = scratch_remove);

Test(cli_flags_command, every_option_in_the_table_is_in_the_usage)
{
    char train_usage[sizeof(out)], mf_usage[sizeof(out)];
    cr_assert_eq(hog("train --help"), 0, "%s", out);
    memcpy(train_usage, out, sizeof(out));
    cr_assert_eq(hog("train --model mf --help"), 0, "%s", out);
    memcpy(mf_usage, out, sizeof(out));
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        const char *usage = strcmp(flags[i].params, "hog_mf_params") == 0 ? mf_usage : train_usage;
        char spelled[64];
        snprintf(spelled, sizeof(spelled), "%s%s", flags[i].option, flags[i].takes == EQUALS ? "[=" : " ");
        cr_assert(strstr(usage, spelled), "%s.%s: no '%s' in\n%s", flags[i].params, flags[i].field, spelled, usage);
    }
}

/* A libsvm file of rows labelled by label(i), four features each. */
static void write_rows(const char *name, int rows, int (*label)(int))
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    srand(7);
    for (int i = 0; i < rows; i++) {
        double x[4];
        for (int k = 0; k < 4; k++)
            x[k] = rand() / (double)RAND_MAX * 2 - 1;
        fprintf(f, "%d 1:%.4f 2:%.4f 3:%.4f 4:%.4f\n", label ? label(i) : (x[0] > x[1] ? 1 : -1), x[0], x[1], x[2],
                x[3]);
    }
    fclose(f);
}

static int three_classes(int i)
{
    return i % 3;
}

Test(cli_flags_command, library_messages_name_options)
{
    write_rows("c.svm", 300, three_classes);
    cr_assert_eq(hog("train c.svm -o m.hog -q"), 1, "%s", out);
    cr_assert(strstr(out, "(use --loss softmax for multiclass)"), "%s", out);

    write_rows("t.svm", 300, NULL);
    cr_assert_eq(hog("train t.svm -o m.hog --kernel dense --schedule adagrad"), 1, "%s", out);
    cr_assert(strstr(out, "--kernel dense does not support --schedule adagrad; use --kernel sparse"), "%s", out);
    /* dense data: auto would take the dense kernel, which normalised updates keep off */
    cr_assert_eq(hog("train t.svm -o m.hog --normalized --epochs 1"), 0, "%s", out);
    cr_assert(strstr(out, "hogtrain: sparse kernel: --normalized runs on the sparse kernel only\n"), "%s", out);
    /* the default since: --normalized 0 (or =0) turns it off, and auto takes the dense kernel */
    cr_assert_eq(hog("train t.svm -o m.hog --epochs 1"), 0, "%s", out);
    cr_assert(strstr(out, "hogtrain: sparse kernel: --normalized runs on the sparse kernel only\n"), "%s", out);
    cr_assert_eq(hog("train t.svm -o m.hog --normalized 0 --epochs 1"), 0, "%s", out);
    cr_assert(strstr(out, "hogtrain: dense kernel (auto)"), "%s", out);
    cr_assert_eq(hog("train t.svm -o m.hog --normalized 2"), 2, "%s", out);
    cr_assert(strstr(out, "--normalized: expected a whole number from 0 to 1, found '2'"), "%s", out);
    cr_assert_eq(hog("train t.svm -o m.hog --replicas node --epochs 1"), 0, "%s", out);
    cr_assert(strstr(out, "whole before training: --replicas node\n"), "%s", out);
    /* a diverged run says what to lower, and its NaN weights are never saved */
    cr_assert_eq(hog("train t.svm -o nan.hog --loss squared --step 1e30 --epochs 1 --threads 1 --normalized 0"), 1,
                 "%s", out);
    cr_assert(strstr(out, "hogtrain: the training diverged in epoch 1: its loss is NaN, and no model was made. The "
                          "steps are too large for the data's scale: lower --step (now 1e+30), or set --normalized "
                          "for features of very different ranges\n"), "%s", out);
    cr_assert(!exists("nan.hog"));
    /* a loss that grows past ten times the first epoch's stops the run too */
    cr_assert_eq(hog("train t.svm -o nan.hog --loss squared --step 0.3 --schedule constant --epochs 20 --threads 1 "
                     "--normalized 0"), 1, "%s", out);
    cr_assert(strstr(out, "its loss is growing ("), "%s", out);
    cr_assert(!exists("nan.hog"));
    for (const char *s = out; (s = strstr(s, "hog_")) != NULL; s++)
        cr_assert(strncmp(s, "hog_train_params", 16) != 0 && strncmp(s, "hog_read_params", 15) != 0,
                  "a library name reached the user: %s", out);
}

Test(cli_flags_command, a_late_index_0_names_the_index_base_option)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/late0.svm", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < 100000; i++) /* past the first MiB, where the base is detected */
        fprintf(f, "%d 1:0.5 %d:1\n", i % 2, 2 + i % 1000);
    fprintf(f, "1 0:1\n");
    fclose(f);
    cr_assert_eq(hog("convert late0.svm -o late0.hgd"), 1, "%s", out);
    cr_assert(strstr(out, "--index-base 0 reads as written), found 0"), "%s", out);
    cr_assert_eq(hog("convert late0.svm -o late0.hgd --index-base 0 -q"), 0, "%s", out);
}

Test(cli_flags_command, an_mf_warning_names_the_step_option)
{
    char text[4096] = "";
    for (int i = 0; i < 200; i++)
        snprintf(text + strlen(text), sizeof(text) - strlen(text), "%d %d %d\n", i % 10, i % 7, 1 + i % 5);
    write_file("r.txt", text);
    /* the diverged factors are never saved */
    cr_assert_eq(hog("train r.txt --model mf -o m.mf --step 1e30 --epochs 2 --holdout 0 --threads 1 --rank 2"), 1,
                 "%s", out);
    cr_assert(strstr(out, "the training diverged in epoch 1: its error is not finite (NaN or infinite), and "
                          "no model was made. The steps are too large for the ratings' scale: lower --step (now "
                          "1e+30)\n"), "%s", out);
    cr_assert(!exists("m.mf"));
    /* In one pass too, before any model is made. */
    cr_assert_eq(hog("train r.txt --model mf -o m.mf --step 1e30 --epochs 1 --threads 1 --rank 2"), 1, "%s", out);
    cr_assert(strstr(out, "r.txt: the training diverged in its one pass after 200 ratings: its error is not finite (NaN "
                          "or infinite), and no model was made. The steps are too large for the ratings' scale: "
                          "lower --step (now 1e+30)\n"), "%s", out);
    cr_assert(!exists("m.mf"));
}

/* ===================================================================== *
 *  Options as people type them
 * ===================================================================== */

/* How many lines out holds. */
static int lines(void)
{
    int n = 0;
    for (const char *s = out; *s; s++)
        n += *s == '\n';
    return n;
}

Test(cli_flags_command, a_mistyped_option_gets_one_line_naming_the_one_meant)
{
    write_rows("t.svm", 200, NULL);
    cr_assert_eq(hog("train t.svm -o m.hog --stpe 0.1"), 2, "%s", out);
    cr_assert_str_eq(out, "hogtrain: train: unknown option --stpe (did you mean --step?); see hogtrain train --help\n");
    cr_assert_eq(hog("train t.svm -o m.hog --loss_functon logistic"), 2, "%s", out);
    cr_assert(strstr(out, "(did you mean --loss_function?)"), "%s", out);
    cr_assert_eq(hog("convert t.svm --outptu t.hgd"), 2, "%s", out);
    cr_assert(strstr(out, "convert: unknown option --outptu (did you mean --output?)"), "%s", out);
    cr_assert_eq(hog("train t.svm -o m.hog --zzzzzzzz"), 2, "%s", out);
    cr_assert_str_eq(out, "hogtrain: train: unknown option --zzzzzzzz; see hogtrain train --help\n");
    cr_assert_eq(hog("train t.svm -o m.hog --step"), 2, "%s", out);
    cr_assert_str_eq(out, "hogtrain: train: --step needs a value; see hogtrain train --help\n");
    cr_assert_eq(hog("train t.svm -o m.hog -z"), 2, "%s", out);
    cr_assert_eq(lines(), 1, "%s", out);
    cr_assert_eq(hog("info --topolgy"), 2, "%s", out);
    cr_assert(strstr(out, "(did you mean --topology?)"), "%s", out);
    cr_assert(!exists("m.hog"));
}

/* Vowpal Wabbit's names train the model ours do, and --average takes its
 * value either way. */
Test(cli_flags_command, other_tools_names_mean_the_same)
{
    write_rows("t.svm", 2000, NULL);
    cr_assert_eq(hog("train t.svm -o a.hog --epochs 3 --step 0.2 --loss hinge --hash-bits 10 --holdout 0 "
                     "--average=2 --threads 1 -q"), 0, "%s", out);
    cr_assert_eq(hog("train -d t.svm -f b.hog --passes 3 -l 0.2 --loss_function hinge --bit_precision 10 "
                     "--holdout_off --average 2 --threads 1 -q"), 0, "%s", out);
    cr_assert_eq(hog("train -d t.svm --final_regressor c.hog --passes 3 --learning_rate 0.2 --loss hinge -b 10 "
                     "--holdout_off --average 2 --threads 1 -c -q"), 0, "%s", out);
    cr_assert(exists("t.svm.cache"), "-c makes the cache beside the data");
    cr_assert_eq(hog("predict a.hog t.svm -o a.txt -q"), 0, "%s", out);
    cr_assert_eq(hog("predict b.hog t.svm -o b.txt -q"), 0, "%s", out);
    cr_assert_eq(hog("predict c.hog t.svm -o c.txt -q"), 0, "%s", out);
    char a[65536];
    snprintf(a, sizeof(a), "%s", slurp("a.txt"));
    cr_assert_str_eq(a, slurp("b.txt"));
    cr_assert_str_eq(a, slurp("c.txt"));
    cr_assert_eq(hog("info b.hog"), 0, "%s", out);
    cr_assert(strstr(out, "epochs 3, step 0.2"), "%s", out);
    cr_assert(strstr(out, "average 2"), "%s", out);
}

Test(cli_flags_command, help_command_is_the_commands_help)
{
    char want[sizeof(out)];
    const char *cmds[] = {"train", "train --model mf", "predict", "convert", "info", "keygen"};
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        cr_assert_eq(hog("%s --help", cmds[i]), 0, "%s", out);
        memcpy(want, out, sizeof(out));
        cr_assert_eq(hog("help %s", cmds[i]), 0, "%s", out);
        cr_assert_str_eq(out, want, "help %s", cmds[i]);
    }
    cr_assert_eq(hog("train --help"), 0, "%s", out);
    cr_assert(strstr(out, "--model mf "), "%s", out);
    cr_assert(strstr(out, "--passes N (--epochs)"), "%s", out);
}

static int two_or_three(int i)
{
    return 2 + i % 2;
}

/* -i goes on from a saved model: its loss unless given, and its classes. */
Test(cli_flags_command, a_warm_start_keeps_the_models_loss_and_classes)
{
    write_rows("t.svm", 2000, NULL);
    write_rows("o.svm", 2000, two_or_three);
    cr_assert_eq(hog("train t.svm -o a.hog --loss hinge --epochs 2 -q"), 0, "%s", out);
    cr_assert_eq(hog("train t.svm -o b.hog -i a.hog --epochs 1"), 0, "%s", out);
    cr_assert(strstr(out, "starting from the weights of the model given"), "%s", out);
    cr_assert_eq(hog("info b.hog"), 0, "%s", out);
    cr_assert(strstr(out, "hinge"), "%s", out);
    cr_assert_eq(hog("train t.svm -o c.hog --init a.hog --loss logistic"), 2, "%s", out);
    cr_assert(strstr(out, "--init a.hog was trained with --loss hinge, this run has --loss logistic"), "%s", out);
    cr_assert_eq(hog("train o.svm -o c.hog --initial_regressor a.hog"), 1, "%s", out);
    cr_assert(strstr(out, "label 2 is not one of the initial model's 2 classes"), "%s", out);
    cr_assert_eq(hog("train t.svm -o c.hog -i none.hog"), 1, "%s", out);
    cr_assert(strstr(out, "--init: "), "%s", out);
    cr_assert(!exists("c.hog"));
}

/* The model keeps the normalized update's feature scales: a warm start on
 * rows whose values start at 0.1 and later reach the model's scale of 1
 * keeps the weight learned (it was multiplied by (0.1 / 1)^2). */
Test(cli_flags_command, a_warm_start_goes_on_from_the_models_feature_scales)
{
    static char big[64 * 2000 + 1], small[64 * 2000 + 1];
    size_t nb = 0, ns = 0;
    static const char *const xs[4] = {"-1", "-0.5", "0.5", "1"}, *const ys[4] = {"-2", "-1", "1", "2"};
    for (int i = 0; i < 2000; i++) {
        nb += (size_t)snprintf(big + nb, sizeof(big) - nb, "%s,%s\n", ys[i % 4], xs[i % 4]);
        ns += (size_t)snprintf(small + ns, sizeof(small) - ns, "%s\n", i < 1999 ? "0.2,0.1" : "2,1");
    }
    write_file("big.csv", big);
    write_file("small.csv", small);
    cr_assert_eq(hog("train big.csv --label 0 --loss squared --threads 1 -q -o a.hog"), 0, "%s", out);
    cr_assert_eq(hog("export a.hog"), 0, "%s", out);
    char *w = strstr(out, "\n0 - ");
    cr_assert_not_null(w, "%s", out);
    const double before = strtod(w + 5, NULL);
    cr_assert_gt(before, 1.9, "%s", out);
    cr_assert_eq(hog("train small.csv --label 0 --loss squared --threads 1 --epochs 1 --step 1e-9 -i a.hog -o b.hog"),
                 0, "%s", out);
    cr_assert(strstr(out, "starting from the weights of the model given (1 features, its feature scales)"), "%s", out);
    cr_assert_eq(hog("export b.hog"), 0, "%s", out);
    cr_assert_not_null(w = strstr(out, "\n0 - "), "%s", out);
    cr_assert_float_eq(strtod(w + 5, NULL), before, 1e-5, "%s", out);
    /* the plain update has no scales to keep: its model is written as before */
    cr_assert_eq(hog("train big.csv --label 0 --loss squared --threads 1 -q --normalized 0 --step 0.01 -o p.hog"), 0,
                 "%s", out);
    cr_assert_eq(slurp("p.hog")[8], 1, "version 1");
}

/* train --cv K: the metrics of each fold and their mean, no model unless
 * -o; tune: a leaderboard of the trials and the best model. */
Test(cli_flags_command, cross_validation_and_tuning)
{
    write_rows("t.svm", 3000, NULL);
    cr_assert_eq(hog("train t.svm --cv 4 --epochs 3 --report cv.json"), 0, "%s", out);
    cr_assert(strstr(out, "4-fold cross-validation of t.svm (3000 rows):"), "%s", out);
    cr_assert(strstr(out, "  fold 4: "), "%s", out);
    cr_assert(strstr(out, "  mean:  loss "), "%s", out);
    cr_assert(strstr(out, "accuracy "), "%s", out);
    cr_assert(exists("cv.json"));
    cr_assert(strstr(slurp("cv.json"), "\"folds\": 4"), "%s", slurp("cv.json"));
    cr_assert_eq(hog("train t.svm --cv 3 --epochs 2 -o cv.hog -q"), 0, "%s", out);
    cr_assert(exists("cv.hog"), "with -o the model of all rows is written too");
    cr_assert_eq(hog("train t.svm --cv 3 --test t.svm"), 2, "%s", out);
    cr_assert(strstr(out, "--cv holds out parts of INPUT, read once"), "%s", out);
    cr_assert_eq(hog("train t.svm --cv 3 --holdout 0.1"), 2, "%s", out);
    cr_assert_eq(hog("train t.svm -o x.hog --trials 4"), 2, "%s", out);
    cr_assert(strstr(out, "--trials is for hogtrain tune"), "%s", out);
    cr_assert_eq(hog("tune t.svm -o best.hog --trials 4 --epochs 4 --seed 3"), 0, "%s", out);
    cr_assert(strstr(out, "tune: 4 trials on t.svm, scored on the holdout; the best first:"), "%s", out);
    cr_assert(strstr(out, "\n   4  step "), "%s", out);
    cr_assert(strstr(out, "round 2 of 3: 2 trials of 2 epochs"), "%s", out);
    cr_assert(exists("best.hog"));
    cr_assert_eq(hog("info best.hog"), 0, "%s", out);
    cr_assert(strstr(out, "epochs 4"), "%s", out);
    cr_assert_eq(hog("tune t.svm -o best2.hog --trials 2 --epochs 2 --cv 3 -q"), 0, "%s", out);
    cr_assert(strstr(out, "scored on K folds"), "%s", out);
    cr_assert_eq(hog("help tune"), 0, "%s", out);
    cr_assert(strstr(out, "usage: hogtrain tune INPUT -o MODEL"), "%s", out);
}

/* Folds and trials run side by side, a thread each: the same figures as
 * one after another, bit for bit, and the same leaderboard every time. */
Test(cli_flags_command, folds_and_trials_side_by_side_give_the_sequential_figures)
{
    write_rows("t.svm", 3000, NULL);
    static char one[sizeof(out)], two[sizeof(out)];
    cr_assert_eq(hog("train t.svm --cv 4 --epochs 3 --threads 1"), 0, "%s", out);
    memcpy(one, out, sizeof(out));
    cr_assert_eq(hog("train t.svm --cv 4 --epochs 3 --threads 2"), 0, "%s", out);
    cr_assert_str_eq(out, one);
    cr_assert_eq(hog("tune t.svm -o side.hog --trials 6 --epochs 4 --seed 7 --threads 1 -q"), 0, "%s", out);
    memcpy(one, out, sizeof(out));
    cr_assert_eq(hog("tune t.svm -o side.hog --trials 6 --epochs 4 --seed 7 --threads 3 -q"), 0, "%s", out);
    memcpy(two, out, sizeof(out));
    cr_assert_str_eq(two, one);
    cr_assert_eq(hog("tune t.svm -o side.hog --trials 6 --epochs 4 --seed 7 --threads 3 -q"), 0, "%s", out);
    cr_assert_str_eq(out, two);
    cr_assert(strstr(one, "\n   6  step "), "%s", one);
}

static int one_in_eight(int i)
{
    return i % 8 == 0 ? 1 : -1;
}

Test(cli_flags_command, class_weights_are_logged_and_kept_in_the_model)
{
    write_rows("skew.svm", 2000, one_in_eight);
    cr_assert_eq(hog("train skew.svm -o m.hog --class-weight balanced --epochs 2 --holdout 0"), 0, "%s", out);
    cr_assert(strstr(out, "class weights (balanced): -1: 0.571, 1: 4"), "%s", out);
    cr_assert(strstr(out, "read skew.svm whole") || strstr(out, "reading skew.svm whole"), "%s", out);
    cr_assert_eq(hog("info m.hog"), 0, "%s", out);
    cr_assert(strstr(out, "class weights balanced"), "%s", out);
    cr_assert_eq(hog("train skew.svm -o m.hog --class-weight heavy"), 2, "%s", out);
    cr_assert(strstr(out, "--class-weight: expected balanced or none, found 'heavy'"), "%s", out);
    cr_assert_eq(hog("train skew.svm -o m.hog --class-weight balanced --loss squared"), 2, "%s", out);
    cr_assert(strstr(out, "invalid value for --class-weight"), "%s", out);
}

static int by_three(int i)
{
    return i % 3;
}

/* predict --probabilities names the classes on its first line and gives a
 * column each, summing to one; --raw gives the scores; Vowpal Wabbit's
 * -t -i -d -p predict the same; an --index-base other than the model's is
 * refused. */
Test(cli_flags_command, predict_probabilities_raw_and_aliases)
{
    write_rows("b.svm", 600, NULL);
    write_rows("c.svm", 600, by_three);
    cr_assert_eq(hog("train b.svm -o b.hog --epochs 3 -q"), 0, "%s", out);
    cr_assert_eq(hog("train c.svm -o c.hog --loss softmax --epochs 3 -q"), 0, "%s", out);
    cr_assert_eq(hog("predict c.hog c.svm --probabilities -o cp.txt -q"), 0, "%s", out);
    char *text = slurp("cp.txt");
    cr_assert_eq(strncmp(text, "0 1 2\n", 6), 0, "%.40s", text);
    int rows = 0;
    for (char *line = strchr(text, '\n') + 1; *line; line = strchr(line, '\n') + 1, rows++) {
        double a, b, c;
        cr_assert_eq(sscanf(line, "%lf %lf %lf", &a, &b, &c), 3, "%.60s", line);
        cr_assert(fabs(a + b + c - 1) < 2e-6, "row %d sums to %g", rows, a + b + c);
    }
    cr_assert_eq(rows, 600);
    cr_assert_eq(hog("predict b.hog b.svm -o bv.txt -q"), 0, "%s", out);
    char values[65536];
    snprintf(values, sizeof(values), "%s", slurp("bv.txt"));
    cr_assert_eq(hog("predict b.hog b.svm --raw -o br.txt -q"), 0, "%s", out);
    text = slurp("br.txt");
    const char *v = values;
    for (int i = 0; i < 600; i++) { /* the value is the logistic link of the margin */
        double margin = strtod(text, &text), p = strtod(v, (char **)&v);
        cr_assert(fabs(1 / (1 + exp(-margin)) - p) < 1e-6, "row %d: margin %g, probability %g", i, margin, p);
    }
    cr_assert_eq(hog("predict -t -i b.hog -d b.svm -p vw.txt -q"), 0, "%s", out);
    cr_assert_str_eq(slurp("vw.txt"), values);
    cr_assert_eq(hog("predict b.hog b.svm --index-base 0 -q"), 2, "%s", out);
    cr_assert(strstr(out, "--index-base 0: b.hog was trained on 1-based libsvm indices"), "%s", out);
    cr_assert_eq(hog("train b.svm -o h.hog --loss hinge --epochs 1 -q"), 0, "%s", out);
    cr_assert_eq(hog("predict h.hog b.svm --probabilities"), 2, "%s", out);
    cr_assert(strstr(out, "h.hog is a hinge model, which gives no probabilities"), "%s", out);
    cr_assert_eq(hog("predict c.hog c.svm --raw --probabilities"), 2, "%s", out);
}

/* export: a line per non-zero weight, the features numbered as the
 * training text wrote them, the bias first; JSON with the same; an MF
 * model is refused. */
Test(cli_flags_command, export_writes_the_weights_as_text_and_json)
{
    write_rows("b.svm", 800, NULL);
    write_rows("c.svm", 600, by_three);
    cr_assert_eq(hog("train b.svm -o b.hog --epochs 2 -q"), 0, "%s", out);
    cr_assert_eq(hog("export b.hog"), 0, "%s", out);
    cr_assert_eq(strncmp(out, "bias 1 ", 7), 0, "%.80s", out);
    for (int j = 1; j <= 4; j++) {
        char want[16];
        snprintf(want, sizeof(want), "\n%d 1 ", j);
        cr_assert(strstr(out, want), "no feature %d in\n%s", j, out);
    }
    cr_assert(!strstr(out, "\n0 1 "), "1-based text: no feature 0\n%s", out);
    cr_assert_eq(lines(), 5, "%s", out);
    cr_assert_eq(hog("train c.svm -o c.hog --loss softmax --epochs 2 -q"), 0, "%s", out);
    cr_assert_eq(hog("export c.hog --format json -o c.json"), 0, "%s", out);
    char *j = slurp("c.json");
    cr_assert(strstr(j, "\"loss\": \"softmax\""), "%s", j);
    cr_assert(strstr(j, "\"classes\": [0, 1, 2]"), "%s", j);
    cr_assert(strstr(j, "\"bias\": {\"0\": "), "%s", j);
    cr_assert(strstr(j, "[4, \"2\", "), "%s", j);
    int triples = 0;
    for (const char *q = j; (q = strstr(q, "\n    [")) != NULL; q++)
        triples++;
    cr_assert_eq(triples, 12, "4 features x 3 classes:\n%s", j);
    write_file("r.txt", "1 1 3\n1 2 4\n2 1 5\n2 2 1\n");
    cr_assert_eq(hog("train r.txt --model mf --rank 2 -o r.mf -q"), 0, "%s", out);
    cr_assert_eq(hog("export r.mf"), 1, "%s", out);
    cr_assert(strstr(out, "not a linear model"), "%s", out);
}
