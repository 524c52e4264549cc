/* test_cli_mf.c: end-to-end tests of hogtrain's matrix factorisation: train --model mf, predict, info, reports and errors. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_command.h"

static void setup(void)
{
    scratch_make("climf");
}

TestSuite(cli_mf, .init = setup, .fini = scratch_remove);

/* A small rank-1 matrix: rating = 3 + (u - 5) * (i - 5) / 10, every pair. */
static void write_ratings(void)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/r.csv", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "userId,movieId,rating\n");
    for (int u = 0; u < 12; u++)
        for (int i = 0; i < 10; i++)
            fprintf(f, "%d,m%d,%g\n", u, i, 3 + (u - 5) * (i - 5) / 10.0);
    fclose(f);
}

static int lines(const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int n = 0, c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

Test(cli_mf, train_predict_info)
{
    write_ratings();
    cr_assert_eq(hog("train r.csv --model mf --rank 2 --epochs 60 --step 0.2 --l2 0.001 --l2-bias 0.001 --threads 1 "
                     "--holdout 0.1 -o m.mf --report rep.json --save-ratings r.hgr"), 0, "%s", out);
    cr_assert(strstr(out, "epoch 60/60"), "%s", out);
    cr_assert(strstr(out, "test rmse"), "%s", out);
    char rep[256];
    snprintf(rep, sizeof(rep), "%s/rep.json", dir);
    FILE *f = fopen(rep, "r");
    cr_assert_not_null(f);
    char json[4096];
    size_t n = fread(json, 1, sizeof(json) - 1, f);
    json[n] = '\0';
    fclose(f);
    cr_assert(strstr(json, "\"model_kind\": \"mf\""), "%s", json);
    cr_assert(strstr(json, "\"rank\": 2"), "%s", json);
    const char *tr = strstr(json, "\"train_rmse\": ");
    cr_assert_not_null(tr);
    cr_assert_lt(atof(tr + 14), 0.2, "%s", json);

    cr_assert_eq(hog("info m.mf"), 0, "%s", out);
    cr_assert(strstr(out, "matrix factorisation model"), "%s", out);
    cr_assert(strstr(out, "users              12"), "%s", out);
    cr_assert(strstr(out, "step 0.2 (adagrad)"), "the default step schedule: %s", out);
    cr_assert_eq(hog("info r.hgr"), 0, "%s", out);
    cr_assert(strstr(out, "ratings            120"), "%s", out);

    write_file("pairs.txt", "0 m0\n11 m9\n5 m3\nnew m1\n");
    cr_assert_eq(hog("predict m.mf pairs.txt -o pred.txt"), 0, "%s", out);
    cr_assert_eq(lines("pred.txt"), 4);
    char pp[256];
    snprintf(pp, sizeof(pp), "%s/pred.txt", dir);
    f = fopen(pp, "r");
    double v[4];
    for (int i = 0; i < 4; i++)
        cr_assert_eq(fscanf(f, "%lf", &v[i]), 1);
    fclose(f);
    cr_assert(v[0] > 4.5, "(0, m0) is rated 5.5, clamped to 5.5: predicted %g", v[0]);
    cr_assert(v[2] > 2.6 && v[2] < 3.4, "(5, m3) is rated 3: predicted %g", v[2]);
    /* The binary ratings train the same as the text (same names, same order). */
    cr_assert_eq(hog("train r.hgr --model mf --rank 2 --epochs 3 --threads 1 -o m2.mf -q"), 0, "%s", out);
    cr_assert_eq(hog("predict m2.mf r.csv --report prep.json -q"), 0, "%s", out);
}

Test(cli_mf, errors)
{
    write_file("bad.csv", "1 2 3\n1 2 three\n");
    cr_assert_eq(hog("train bad.csv --model mf -o m.mf"), 1, "%s", out);
    cr_assert(strstr(out, "bad.csv:2:5: expected a finite number (the rating), found 'three'"), "%s", out);
    cr_assert_eq(access("m.mf", F_OK), -1);
    write_ratings();
    cr_assert_eq(hog("train r.csv --model mf --rank 0 -o m.mf"), 2, "%s", out);
    cr_assert(strstr(out, "--rank"), "%s", out);
    cr_assert_eq(hog("train r.csv --model mf --step x -o m.mf"), 2, "%s", out);
    cr_assert_eq(hog("train r.csv --model mf --test r.csv --holdout 0.1 -o m.mf"), 2, "%s", out);
    cr_assert_eq(hog("train r.csv --model=mf --epochs 1 -q -o m.mf"), 0, "%s", out);
    write_file("pairs.txt", "0 m0 4\n0 m1 x y\n");
    cr_assert_eq(hog("predict m.mf pairs.txt"), 1, "%s", out);
    cr_assert(strstr(out, "pairs.txt:2:6: expected a finite number (the rating), found 'x'"), "%s", out);
    cr_assert_eq(hog("predict m.mf missing.txt"), 1, "%s", out);
    cr_assert(strstr(out, "missing.txt"), "%s", out);
}

/* --schedule picks the step rule, the model records it, and a rule that
 * matrix factorisation has not is refused, naming the choices. */
Test(cli_mf, the_step_schedule_is_chosen_and_recorded)
{
    write_ratings();
    cr_assert_eq(hog("train r.csv --model mf --rank 2 --epochs 60 --schedule decay --step 0.05 --l2 0.001 "
                     "--threads 1 --holdout 0 -o d.mf -q"), 0, "%s", out);
    cr_assert_eq(hog("info d.mf"), 0, "%s", out);
    cr_assert(strstr(out, "step 0.05 (decay)"), "%s", out);
    cr_assert_eq(hog("train r.csv --model mf --rank 2 --epochs 3 --schedule adagrad --threads 1 -o a.mf -q"), 0,
                 "%s", out);
    cr_assert_eq(hog("info a.mf"), 0, "%s", out);
    cr_assert(strstr(out, "step 0.1 (adagrad)"), "%s", out);
    cr_assert_eq(hog("train r.csv --model mf --schedule invscaling -o i.mf -q"), 2, "%s", out);
    cr_assert(strstr(out, "--schedule: expected adagrad or decay, found 'invscaling'"), "%s", out);
}

/* convert --ratings writes the same binary ratings file as train
 * --save-ratings, and training from it gives the same model. */
Test(cli_mf, convert_ratings_to_hgr)
{
    write_ratings();
    cr_assert_eq(hog("convert r.csv --ratings -o c.hgr"), 0, "%s", out);
    cr_assert(strstr(out, "c.hgr: ") && strstr(out, " ratings of "), "%s", out);
    cr_assert_eq(hog("train r.csv --model mf --rank 2 --epochs 3 --threads 1 -o a.mf --save-ratings s.hgr -q"), 0,
                 "%s", out);
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "cmp -s %s/c.hgr %s/s.hgr", dir, dir);
    cr_assert_eq(system(cmd), 0, "convert --ratings and --save-ratings write the same bytes");
    cr_assert_eq(hog("train c.hgr --model mf --rank 2 --epochs 3 --threads 1 -o b.mf -q"), 0, "%s", out);
    cr_assert_eq(hog("predict a.mf r.csv -o pa.txt -q"), 0, "%s", out);
    cr_assert_eq(hog("predict b.mf r.csv -o pb.txt -q"), 0, "%s", out);
    snprintf(cmd, sizeof(cmd), "cmp -s %s/pa.txt %s/pb.txt", dir, dir);
    cr_assert_eq(system(cmd), 0, "the model trained from the .hgr predicts as the one from text");
    /* a missing input is named and no file is left */
    cr_assert_eq(hog("convert missing.csv --ratings -o m.hgr"), 1, "%s", out);
    cr_assert(strstr(out, "missing.csv"), "%s", out);
    snprintf(cmd, sizeof(cmd), "%s/m.hgr", dir);
    cr_assert_neq(access(cmd, F_OK), 0, "no output after a failure");
}

/* Ratings compressed with gzip, as a file or down a pipe, train the same
 * model as the plain text, and their errors are located as in plain text. */
Test(cli_mf, train_from_gzip_ratings)
{
    write_ratings();
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "cd %s && gzip -k r.csv", dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(hog("train r.csv --model mf --rank 2 --epochs 3 --threads 1 -o a.mf -q"), 0, "%s", out);
    cr_assert_eq(hog("train r.csv.gz --model mf --rank 2 --epochs 3 --threads 1 -o b.mf"), 0, "%s", out);
    cr_assert(strstr(out, "r.csv.gz: 120 ratings, 12 users, 10 items"), "%s", out);
    cr_assert_eq(hog_env("gzip -c r.csv | env -u HOG_TOPOLOGY",
                         "train - --model mf --rank 2 --epochs 3 --threads 1 -o c.mf -q"), 0, "%s", out);
    const char *models[3] = {"a", "b", "c"};
    for (int k = 0; k < 3; k++)
        cr_assert_eq(hog("predict %s.mf r.csv -o p%s.txt -q", models[k], models[k]), 0, "%s", out);
    for (int k = 1; k < 3; k++) {
        snprintf(cmd, sizeof(cmd), "cmp -s %s/pa.txt %s/p%s.txt", dir, dir, models[k]);
        cr_assert_eq(system(cmd), 0, "the model from %s predicts as the one from the plain text",
                     k == 1 ? "r.csv.gz" : "a gzip pipe");
    }
    write_file("bad.csv", "1 2 3\n1 2 three\n");
    snprintf(cmd, sizeof(cmd), "cd %s && gzip bad.csv", dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(hog("train bad.csv.gz --model mf -o m.mf"), 1, "%s", out);
    cr_assert(strstr(out, "bad.csv.gz:2:5: expected a finite number (the rating), found 'three'"), "%s", out);
}

/* Several epochs without --test hold out a seeded tenth of the ratings and
 * stop 3 epochs after their RMSE last fell, keeping the best epoch's model,
 * as train does for the other models; --holdout 0 trains on every rating
 * for every epoch, and --early-stop K keeps the default holdout. */
Test(cli_mf, several_epochs_hold_out_a_tenth_and_stop_early)
{
    /* 600 noisy ratings of a rank-1 matrix of 60 users and 40 items: rank 16
     * and no L2 fit the noise, and the held-out RMSE soon rises. */
    char path[256];
    snprintf(path, sizeof(path), "%s/n.txt", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    uint64_t x = 42;
    for (int t = 0; t < 600; t++) {
        unsigned v[3];
        for (int c = 0; c < 3; c++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            v[c] = (unsigned)(x >> 33);
        }
        unsigned u = v[0] % 60, i = v[1] % 40;
        fprintf(f, "%u %u %.3f\n", u, i, 3 + ((int)(u % 7) - 3) * ((int)(i % 5) - 2) / 6.0 + (v[2] % 1000 / 1000.0 - 0.5));
    }
    fclose(f);
    write_ratings();
    cr_assert_eq(hog("train n.txt --model mf --rank 16 --l2 0 --l2-bias 0 --decay 1 --epochs 200 --threads 1 "
                     "-o m.mf --report r.json"), 0, "%s", out);
    cr_assert(strstr(out, "no --test: a seeded tenth of the ratings is held out, and training stops 3 epochs after "
                          "their rmse last fell, keeping the best epoch's model (--holdout 0: every rating, every "
                          "epoch)"), "%s", out);
    cr_assert(strstr(out, "early stop after epoch "), "%s", out);
    char *j = slurp("r.json");
    cr_assert(strstr(j, "\"holdout\": 0.1,") && strstr(j, "\"early_stop\": 3,"), "%s", j);
    unsigned run = (unsigned)atoi(strstr(j, "\"epochs_run\": ") + 14), best = (unsigned)atoi(strstr(j, "\"best_epoch\": ") + 14);
    cr_assert(run < 200 && best + 3 == run, "ran %u, kept %u:\n%s", run, best, j);
    unsigned long long held = strtoull(strstr(j, "\"test_ratings\": ") + 16, NULL, 10);
    cr_assert(held > 40 && held < 80, "%llu of 600 held out", held);
    cr_assert_eq(hog("info m.mf"), 0, "%s", out);
    char want[64];
    snprintf(want, sizeof(want), "%u run, the model of epoch %u", run, best);
    cr_assert(strstr(out, want) && strstr(out, "holdout 0.1, early stop 3"), "%s", out);
    /* --holdout 0: every rating, every epoch */
    cr_assert_eq(hog("train r.csv --model mf --rank 8 --epochs 20 --threads 1 --holdout 0 -o m.mf --report r.json"),
                 0, "%s", out);
    cr_assert(!strstr(out, "held out") && !strstr(out, "early stop"), "%s", out);
    j = slurp("r.json");
    cr_assert(strstr(j, "\"early_stop\": 0,") && strstr(j, "\"epochs_run\": 20,") && strstr(j, "\"best_epoch\": 20,") &&
              strstr(j, "\"test_ratings\": 0,") && strstr(j, "\"train_ratings\": 120,"), "%s", j);
    /* one epoch: nothing to stop; --test: its own set, no stopping unless asked */
    cr_assert_eq(hog("train r.csv --model mf --epochs 1 --threads 1 -o m.mf"), 0, "%s", out);
    cr_assert(!strstr(out, "held out"), "%s", out);
    cr_assert_eq(hog("train r.csv --model mf --epochs 3 --threads 1 --test r.csv -o m.mf --report r.json"), 0, "%s", out);
    cr_assert(!strstr(out, "held out") && strstr(slurp("r.json"), "\"early_stop\": 0,"), "%s", out);
    /* --early-stop K with the default holdout */
    cr_assert_eq(hog("train r.csv --model mf --epochs 5 --threads 1 --early-stop 7 -o m.mf -q --report r.json"), 0,
                 "%s", out);
    j = slurp("r.json");
    cr_assert(strstr(j, "\"holdout\": 0.1,") && strstr(j, "\"early_stop\": 7,"), "%s", j);
    cr_assert_eq(hog("train r.csv --model mf --early-stop 2 --holdout 0 -o m.mf"), 2, "%s", out);
    cr_assert(strstr(out, "--early-stop needs --test FILE or --holdout F"), "%s", out);
}
