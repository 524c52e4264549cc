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
                     "--threads 1 -o d.mf -q"), 0, "%s", out);
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
