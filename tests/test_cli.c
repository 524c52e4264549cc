/* test_cli.c: end-to-end tests of the hogtrain command: convert, train, predict, info, reports and errors. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "test_command.h"
#include "test_xor_data.h"
#include "util/util.h" /* hog_murmur3_32: where the tests' names hash to */

static void setup(void)
{
    scratch_make("cli");
}

TestSuite(cli, .init = setup, .fini = scratch_remove);

/* A seeded, linearly separable libsvm file: label = sign(x1 - x2 + 0.5 x3). */
static void write_separable(const char *name, int rows, unsigned seed, int zero_one)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    srand(seed);
    for (int i = 0; i < rows; i++) {
        double x[4];
        for (int k = 0; k < 4; k++)
            x[k] = rand() / (double)RAND_MAX * 2 - 1;
        int pos = x[0] - x[1] + 0.5 * x[2] > 0;
        fprintf(f, "%s 1:%.4f 2:%.4f 3:%.4f 4:%.4f\n", pos ? "1" : (zero_one ? "0" : "-1"), x[0], x[1], x[2], x[3]);
    }
    fclose(f);
}

Test(cli, version_names_the_cpu_level_it_was_built_for)
{
    /* the test is compiled with the same ARCH as the command */
    cr_assert_eq(hog("--version"), 0, "%s", out);
    char want[64];
    snprintf(want, sizeof(want), "hogtrain %s (built for %s)\n", hog_version_string(), CLI_BUILD_CPU);
    cr_assert_str_eq(out, want);
}

Test(cli, convert_train_predict_info_end_to_end)
{
    write_separable("train.svm", 3000, 1, 0);
    write_separable("test.svm", 500, 2, 0);
    cr_assert_eq(hog("convert train.svm -o train.hgd"), 0, "%s", out);
    cr_assert(strstr(out, "3000 rows"), "%s", out);
    cr_assert_eq(hog("info train.hgd"), 0, "%s", out);
    cr_assert(strstr(out, "binary dataset") && strstr(out, "3000"), "%s", out);
    cr_assert(strstr(out, "1-based in the text"), "indices 1..4, no 0: detected 1-based: %s", out);

    cr_assert_eq(hog("train train.hgd --test test.svm -o m.hog --epochs 10 --threads 2 --report r.json"), 0, "%s", out);
    cr_assert(strstr(out, "epoch 10/10"), "one line per epoch when not a terminal: %s", out);
    char *report = slurp("r.json");
    const char *keys[] = {"\"threads\": 2", "\"epochs\": 10", "\"wall_seconds\"", "\"examples_per_s\"",
                          "\"nnz_per_s\"", "\"train_loss\"", "\"test\": {\"rows\": 500", "\"accuracy\""};
    for (unsigned i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        cr_assert(strstr(report, keys[i]), "report lacks %s: %s", keys[i], report);
    double acc = atof(strstr(strstr(report, "\"test\""), "\"accuracy\": ") + 12);
    cr_assert_gt(acc, 0.95, "test accuracy %g", acc);

    cr_assert_eq(hog("predict m.hog test.svm -o p.txt --report pr.json"), 0, "%s", out);
    char *pred = slurp("p.txt");
    int lines = 0;
    for (char *s = pred; *s; s++)
        lines += *s == '\n';
    cr_assert_eq(lines, 500);
    double p0 = atof(pred);
    cr_assert(p0 >= 0 && p0 <= 1, "a probability: %s", pred);
    double acc2 = atof(strstr(slurp("pr.json"), "\"accuracy\": ") + 12);
    cr_assert_float_eq(acc, acc2, 1e-9, "predict and train agree on the test accuracy");

    cr_assert_eq(hog("info m.hog"), 0, "%s", out);
    cr_assert(strstr(out, "hogtrain model") && strstr(out, "logistic") && strstr(out, "epochs 10"), "%s", out);
    cr_assert(strstr(out, "libsvm indices") && strstr(out, "1-based"), "%s", out);

    /* predict reads libsvm as the training data was read */
    char *auto_pred = strdup(slurp("p.txt"));
    cr_assert_eq(hog("predict m.hog test.svm -o p1.txt --index-base 1"), 0, "%s", out);
    cr_assert_str_eq(slurp("p1.txt"), auto_pred);
    /* another base would shift every feature: refused, nothing written */
    cr_assert_eq(hog("predict m.hog test.svm -o p0.txt --index-base 0"), 2, "%s", out);
    cr_assert(strstr(out, "--index-base 0: m.hog was trained on 1-based libsvm indices"), "%s", out);
    cr_assert(!exists("p0.txt"));
    free(auto_pred);
}

Test(cli, csv_with_header_and_label_by_name)
{
    char csv[65536] = "x1,x2,target,x3\n";
    srand(3);
    for (int i = 0; i < 800; i++) {
        double a = rand() / (double)RAND_MAX - 0.5, b = rand() / (double)RAND_MAX - 0.5;
        char line[128];
        snprintf(line, sizeof(line), "%.3f,%.3f,%d,%.3f\n", a, b, a + b > 0 ? 1 : 0, 0.1);
        strcat(csv, line);
    }
    write_file("d.csv", csv);
    cr_assert_eq(hog("train d.csv --label target --holdout 0.2 -o m.hog --epochs 20 --report r.json -q"), 0, "%s", out);
    cr_assert_str_eq(out, "", "-q prints nothing");
    char *report = slurp("r.json");
    cr_assert(strstr(report, "\"features\": 3"), "%s", report);
    double acc = atof(strstr(strstr(report, "\"test\""), "\"accuracy\": ") + 12);
    cr_assert_gt(acc, 0.9, "%s", report);
}

Test(cli, softmax_predicts_original_class_labels)
{
    char text[65536] = "";
    srand(4);
    for (int i = 0; i < 600; i++) {
        int c = i % 3;
        char line[128];
        snprintf(line, sizeof(line), "%d %d:1 %d:%.3f\n", 10 * (c + 1), c + 1, 4 + rand() % 3, rand() / (double)RAND_MAX);
        strcat(text, line);
    }
    write_file("c.svm", text);
    cr_assert_eq(hog("train c.svm --loss softmax -o m.hog -q"), 0, "%s", out);
    cr_assert_eq(hog("predict m.hog c.svm -q"), 0, "%s", out);
    cr_assert(strncmp(out, "10\n20\n30\n10\n", 12) == 0, "class labels, not indices: %.40s", out);
}

Test(cli, malformed_text_names_file_line_and_column_and_writes_nothing)
{
    write_file("bad.svm", "1 1:0.5 2:0.25\n-1 1:0.5 2:abc\n");
    cr_assert_eq(hog("convert bad.svm -o bad.hgd"), 1, "%s", out);
    cr_assert(strstr(out, "bad.svm:2:"), "%s", out);
    cr_assert(!exists("bad.hgd"), "no output on error");
    cr_assert_eq(system("test -z \"$(ls /tmp/hog-cli-*/bad.hgd.tmp* 2>/dev/null)\""), 0, "no temporary left");

    write_file("bad.csv", "1,2,3\n4,5\n");
    cr_assert_eq(hog("train bad.csv -o m.hog"), 1, "%s", out);
    cr_assert(strstr(out, "bad.csv:2:"), "%s", out);
    cr_assert(!exists("m.hog"));
}

Test(cli, corrupted_binary_dataset_is_refused)
{
    write_separable("t.svm", 200, 5, 1);
    cr_assert_eq(hog("convert t.svm -o t.hgd -q"), 0, "%s", out);
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "printf 'X' | dd of=%s/t.hgd bs=1 seek=5000 conv=notrunc status=none", dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(hog("train t.hgd -o m.hog"), 1, "%s", out);
    cr_assert(strstr(out, "t.hgd"), "%s", out);
    cr_assert(!exists("m.hog"));
    snprintf(cmd, sizeof(cmd), "truncate -s 4096 %s/t.hgd", dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(hog("info t.hgd"), 1, "%s", out);
    cr_assert(strstr(out, "truncated"), "%s", out);
}

Test(cli, bad_options_exit_2_with_a_message)
{
    write_separable("t.svm", 50, 6, 0);
    cr_assert_eq(hog("train t.svm -o m.hog --step fast"), 2);
    cr_assert(strstr(out, "--step: expected a number, found 'fast'"), "%s", out);
    cr_assert_eq(hog("train t.svm -o m.hog --loss huber"), 2);
    cr_assert(strstr(out, "--loss"), "%s", out);
    cr_assert_eq(hog("train t.svm -o m.hog --decay 2"), 2);
    cr_assert(strstr(out, "--decay"), "%s", out);
    cr_assert_eq(hog("train t.svm"), 2);
    cr_assert_eq(hog("frobnicate"), 2);
    cr_assert_eq(hog("train missing.svm -o m.hog"), 1);
    cr_assert(strstr(out, "missing.svm") && strstr(out, "No such file"), "%s", out);
    cr_assert_eq(hog("train t.svm -o m.hog --test t.svm --holdout 0.1"), 2);
}

Test(cli, skipped_lines_are_counted_located_and_recorded)
{
    write_file("s.svm", "1 1:1 2:2\n0 1:x\n1 3:1\n0 2:1\n1 x\n");
    cr_assert_eq(hog("train s.svm -o m.hog -q"), 1, "%s", out);
    cr_assert(strstr(out, "s.svm:2:5: expected a number, found 'x'"), "%s", out);
    cr_assert_eq(hog("train s.svm -o m.hog -q --on-error skip"), 0, "%s", out);
    cr_assert(strstr(out, "skipped 2 malformed lines") && strstr(out, "s.svm:5:3: expected index:value"),
              "-q does not hide skipped input: %s", out);
    cr_assert_eq(hog("info m.hog"), 0, "%s", out);
    cr_assert(strstr(out, "skipped lines      2"), "the model records it: %s", out);
    cr_assert_eq(hog("convert s.svm -o s.hgd -q --on-error skip"), 0, "%s", out);
    cr_assert(strstr(out, "skipped 2"), "%s", out);
    cr_assert_eq(hog("info s.hgd"), 0, "%s", out);
    cr_assert(strstr(out, "rows               3"), "%s", out);
}

Test(cli, compressed_and_vw_inputs)
{
    write_separable("t.svm", 400, 9, 0);
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "cd %s && gzip -k t.svm && zstd -q t.svm -o t.svm.zst 2>/dev/null || cp t.svm.gz t.svm.zst", dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(hog("convert t.svm -o a.hgd -q"), 0, "%s", out);
    cr_assert_eq(hog("convert t.svm.gz -o b.hgd -q"), 0, "%s", out);
    cr_assert_eq(hog("convert t.svm.zst -o c.hgd -q"), 0, "%s", out);
    snprintf(cmd, sizeof(cmd), "cd %s && cmp a.hgd b.hgd && cmp a.hgd c.hgd", dir);
    cr_assert_eq(system(cmd), 0, "compressed input gives the same dataset");
    snprintf(cmd, sizeof(cmd), "cd %s && head -c $(( $(stat -c %%s t.svm.gz) / 2 )) t.svm.gz > cut.gz", dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(hog("convert cut.gz -o d.hgd -q"), 1, "%s", out);
    cr_assert(strstr(out, "cut.gz: corrupt gzip stream at compressed byte offset"), "%s", out);
    cr_assert(!exists("d.hgd"));

    write_file("v.vw", "1 |f a b:2 |g c\n-1 2.0 'tag|f d |g c:0.5\n1 |f a\n-1 |f d e\n");
    cr_assert_eq(hog("train v.vw -o v.hog -q -b 10 --epochs 20"), 0, "%s", out);
    cr_assert_eq(hog("info v.vw -b 10"), 0, "%s", out);
    cr_assert(strstr(out, "Vowpal Wabbit") || strstr(out, "VW"), "%s", out);
    cr_assert_eq(hog("predict v.hog v.vw -b 10 -q"), 0, "%s", out);
    cr_assert(strncmp(out, "0.", 2) == 0, "a probability per line: %s", out);
}

/* "-" is standard input: a pipe is read once, in order, to its end. */
Test(cli, standard_input_is_read_as_a_pipe)
{
    write_separable("t.svm", 3000, 21, 0);
    cr_assert_eq(hog("convert t.svm -o a.hgd -q"), 0, "%s", out);
    cr_assert_eq(hog_env("cat t.svm | env -u HOG_TOPOLOGY", "convert - -o b.hgd -q"), 0, "%s", out);
    cr_assert_eq(hog_env("gzip -c t.svm | env -u HOG_TOPOLOGY", "convert - -o c.hgd -q"), 0, "%s", out);
    cr_assert_eq(hog("convert - -o d.hgd -q < t.svm"), 0, "%s", out); /* a file as standard input */
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "cd %s && cmp a.hgd b.hgd && cmp a.hgd c.hgd && cmp a.hgd d.hgd", dir);
    cr_assert_eq(system(cmd), 0, "standard input gives the same dataset as the file");

    /* Training reads a pipe whole first (its length is unknown), says so,
     * and never takes an older cache for a pipe's text. */
    for (int run = 0; run < 2; run++) {
        cr_assert_eq(hog_env("cat t.svm | env -u HOG_TOPOLOGY",
                             "train - -o m.hog --kernel sparse --epochs 3 --cache t.hgd --report r.json"),
                     0, "%s", out);
        cr_assert(strstr(out, "the input is a pipe") && strstr(out, "cached 3000 rows"), "run %d: %s", run, out);
        char *r = slurp("r.json");
        cr_assert(strstr(r, "\"rows\": 3000") && strstr(r, "\"streamed\": false"), "%s", r);
    }
    cr_assert_eq(hog_env("head -n 7 t.svm | env -u HOG_TOPOLOGY", "predict m.hog - -q"), 0, "%s", out);
    int lines = 0;
    for (const char *c = out; *c; c++)
        lines += *c == '\n';
    cr_assert_eq(lines, 7, "a prediction per row read from the pipe: %s", out);

    /* A malformed line is located in standard input; nothing is written. */
    cr_assert_eq(hog_env("printf '1 1:0.5\\n1 x:1\\n' | env -u HOG_TOPOLOGY", "convert - -o e.hgd -q"), 1, "%s", out);
    cr_assert(strstr(out, "/dev/stdin:2:"), "%s", out);
    cr_assert(!exists("e.hgd"));
}

Test(cli, cache_is_written_once_and_reused_while_it_matches_the_input)
{
    write_separable("t.svm", 2000, 12, 0);
    cr_assert_eq(hog("train t.svm --cache t.hgd -o m.hog --epochs 3 --report r1.json"), 0, "%s", out);
    cr_assert(strstr(out, "cached 2000 rows"), "%s", out);
    cr_assert(strstr(slurp("r1.json"), "\"cache_used\": false"));
    cr_assert(exists("t.hgd"));
    cr_assert_eq(hog("train t.svm --cache t.hgd -o m.hog --epochs 3 --report r2.json"), 0, "%s", out);
    cr_assert(strstr(out, "reading t.hgd, the cache of t.svm"), "%s", out);
    char *r2 = slurp("r2.json");
    cr_assert(strstr(r2, "\"cache_used\": true") && strstr(r2, "\"epoch_seconds\": ["), "%s", r2);
    /* A touched input makes the cache stale: it is written again. */
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "touch -d '+1 minute' %s/t.svm", dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(hog("train t.svm --cache t.hgd -o m.hog --epochs 1"), 0, "%s", out);
    cr_assert(strstr(out, "cached 2000 rows"), "%s", out);
}

/* The reports: after `cp -p older_other.svm a.svm` a run trained on
 * the old cache's 9,000 rows, and a corrupt cache failed every run until it
 * was deleted by hand. */
Test(cli, a_cache_that_does_not_match_its_input_is_rebuilt_with_a_warning)
{
    write_separable("a.svm", 9000, 31, 0);
    write_separable("older_other.svm", 100, 32, 0);
    char cmd[512], want[256];
    snprintf(cmd, sizeof(cmd), "touch -d '-1 day' %s/older_other.svm", dir);
    cr_assert_eq(system(cmd), 0);
    const char *run = "train a.svm --cache a.hgd -o m.hog --epochs 1 --kernel sparse --report r.json";
    cr_assert_eq(hog("%s", run), 0, "%s", out);
    cr_assert(strstr(out, "a.hgd: cached 9000 rows of a.svm"), "%s", out);
    struct stat before, after;
    snprintf(cmd, sizeof(cmd), "%s/a.svm", dir);
    cr_assert_eq(stat(cmd, &before), 0);
    snprintf(cmd, sizeof(cmd), "cd %s && cp -p older_other.svm a.svm", dir);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof(cmd), "%s/a.svm", dir);
    cr_assert_eq(stat(cmd, &after), 0);

    cr_assert_eq(hog("%s", run), 0, "%s", out);
    snprintf(want, sizeof(want),
             "hogtrain: warning: a.hgd: cache of another a.svm (size %lld now, %lld then): rebuilt\n",
             (long long)after.st_size, (long long)before.st_size);
    cr_assert(strstr(out, want), "want '%s' in:\n%s", want, out);
    char *r = slurp("r.json");
    cr_assert(strstr(r, "\"rows\": 100,") && strstr(r, "\"cache_used\": false"), "%s", r);
    cr_assert_eq(hog("%s", run), 0, "%s", out);
    cr_assert(!strstr(out, "warning") && strstr(out, "reading a.hgd, the cache of a.svm"), "%s", out);
    r = slurp("r.json");
    cr_assert(strstr(r, "\"rows\": 100,") && strstr(r, "\"cache_used\": true"), "%s", r);

    /* A damaged cache: rebuilt, the run goes on; so is one read otherwise. */
    snprintf(cmd, sizeof(cmd), "%s/a.hgd", dir);
    flip_byte(cmd, 5000);
    cr_assert_eq(hog("%s", run), 0, "%s", out);
    cr_assert(strstr(out, "hogtrain: warning: a.hgd: not a usable cache (block 0: checksum mismatch"), "%s", out);
    cr_assert(strstr(slurp("r.json"), "\"cache_used\": false"));
    cr_assert_eq(hog("%s -b 12", run), 0, "%s", out);
    cr_assert(strstr(out, "hogtrain: warning: a.hgd: cache of a.svm read with other options (--hash-bits 12 now, 0 "
                          "then): rebuilt\n"), "%s", out);
    cr_assert_eq(hog("%s -b 12", run), 0, "%s", out);
    cr_assert(strstr(slurp("r.json"), "\"cache_used\": true"));
}

/* The report: `hogtrain info /dev/zero` reached 3.3 GB within 5 s,
 * a line that never ends held whole. Zeros are no text, refused from the
 * first chunk; text whose line never ends (the zeros made letters) must
 * have its end in sight of the first MiB for the plan, and no line may
 * pass --max-line (64 MiB). */
Test(cli, a_line_longer_than_the_bound_is_an_error_with_its_number)
{
    cr_assert_eq(hog("info /dev/zero"), 1, "%s", out);
    cr_assert_str_eq(out, "hogtrain: /dev/zero: not text: its first 65536 bytes are all zero\n");
    cr_assert_eq(hog_env("head -c 200M /dev/zero | tr '\\0' x | env -u HOG_TOPOLOGY", "info /dev/stdin"), 1, "%s", out);
    cr_assert(strstr(out, "hogtrain: /dev/stdin:1: a line longer than 1048576 bytes"), "%s", out);
    cr_assert_eq(hog_env("head -c 200M /dev/zero | tr '\\0' x | env -u HOG_TOPOLOGY", "convert - -o z.hgd"), 1,
                 "%s", out);
    cr_assert(strstr(out, "hogtrain: /dev/stdin:1: a line longer than "), "%s", out);
    cr_assert(!exists("z.hgd"));

    char text[4096] = "1 1:1\n0 2:1\n1 3:1";
    size_t n = strlen(text);
    memset(text + n, ' ', 2000); /* line 3: 2005 bytes */
    strcpy(text + n + 2000, "\n0 4:1\n");
    write_file("l.svm", text);
    cr_assert_eq(hog("convert l.svm -o l.hgd --max-line 1K"), 1, "%s", out);
    cr_assert_str_eq(out, "hogtrain: l.svm:3: a line longer than 1024 bytes (--max-line)\n");
    cr_assert(!exists("l.hgd"));
    cr_assert_eq(hog("train l.svm -o m.hog --max-line 1K --on-error skip -q"), 1, "%s", out);
    cr_assert(strstr(out, "l.svm:3: a line longer than 1024 bytes (--max-line)"), "not skipped: %s", out);
    /* Lines within the bound read as they always did. */
    cr_assert_eq(hog("convert l.svm -o l.hgd --max-line 2K -q"), 0, "%s", out);
    cr_assert_eq(hog("convert l.svm -o d.hgd -q"), 0, "%s", out);
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "cmp %s/l.hgd %s/d.hgd", dir, dir);
    cr_assert_eq(system(cmd), 0, "the same data set with and without --max-line");
    cr_assert_eq(hog("convert l.svm -o l.hgd --max-line 0"), 2, "%s", out);
    cr_assert(strstr(out, "--max-line: a line of at least 1 byte must be allowed"), "%s", out);
}

Test(cli, text_trains_while_it_is_read_unless_stream_is_0)
{
    write_separable("t.svm", 30000, 12, 0);
    /* Four dense features: the sparse kernel is asked for, the dense one would read the file whole. */
    cr_assert_eq(hog("train t.svm -o m.hog --kernel sparse --epochs 2 --holdout 0.1 --report r1.json"), 0, "%s", out);
    cr_assert(strstr(out, "training while reading"), "%s", out);
    char *r1 = slurp("r1.json");
    cr_assert(strstr(r1, "\"streamed\": true") && strstr(r1, "\"rows\": 30000"), "%s", r1);
    cr_assert_eq(hog("train t.svm -o m.hog --kernel sparse --epochs 2 --holdout 0.1 --stream 0 --report r2.json"), 0,
                 "%s", out);
    cr_assert(!strstr(out, "training while reading"), "%s", out);
    char *r2 = slurp("r2.json");
    cr_assert(strstr(r2, "\"streamed\": false"), "%s", r2);
    double a1 = atof(strstr(strstr(r1, "\"test\""), "\"accuracy\": ") + 12);
    double a2 = atof(strstr(strstr(r2, "\"test\""), "\"accuracy\": ") + 12);
    cr_assert(a1 > 0.95 && a2 > 0.95, "holdout accuracy %g streamed, %g read whole", a1, a2);
    cr_assert_eq(hog("train t.svm -o m.hog --stream 2"), 2, "%s", out);
    cr_assert(strstr(out, "--stream"), "%s", out);
    /* A malformed line past the first blocks: no model, no cache. */
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "cd %s && cp t.svm bad.svm && echo '1 3:0.5 x:1' >> bad.svm", dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(hog("train bad.svm -o bad.hog --cache bad.hgd --kernel sparse -q"), 1, "%s", out);
    cr_assert(strstr(out, "bad.svm:30001:"), "%s", out);
    cr_assert(!exists("bad.hog") && !exists("bad.hgd"), "nothing half-written is left");
    /* A bad test set is found when training starts, and named. */
    cr_assert_eq(hog("train t.svm -o m2.hog --kernel sparse --test bad.svm --epochs 1"), 1, "%s", out);
    cr_assert(strstr(out, "bad.svm:30001:") && !strstr(out, "epoch 1/1"), "%s", out);
    cr_assert(!exists("m2.hog"));
}

Test(cli, optimiser_regulariser_early_stop_and_average_flags_end_to_end)
{
    write_separable("train.svm", 3000, 11, 0);
    cr_assert_eq(hog("train train.svm -o m.hog --holdout 0.2 --schedule adagrad --normalized --l1 0.001 --l2 0"
                     " --early-stop 2 --average=2 --epochs 8 --threads 2 --report r.json"), 0, "%s", out);
    cr_assert(strstr(out, "m.hog: ") && strstr(out, "weights non-zero"), "%s", out);
    char *report = slurp("r.json");
    const char *keys[] = {"\"schedule\": \"adagrad\"", "\"normalized\": true", "\"l1\": 0.001", "\"l2\": 0",
                          "\"early_stop\": 2", "\"average\": 2", "\"epochs_run\": ", "\"best_epoch\": ",
                          "\"nonzero_weights\": ", "\"weights\": 4"};
    for (unsigned i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        cr_assert(strstr(report, keys[i]), "report lacks %s: %s", keys[i], report);
    unsigned nz = (unsigned)atoi(strstr(report, "\"nonzero_weights\": ") + 19);
    cr_assert(nz >= 3 && nz <= 4, "%u non-zero weights: features 1-3 carry the label (1-based: weights 0-2)", nz);
    double acc = atof(strstr(strstr(report, "\"test\""), "\"accuracy\": ") + 12);
    cr_assert_gt(acc, 0.95, "holdout accuracy %g", acc);
    cr_assert_eq(hog("info m.hog"), 0, "%s", out);
    cr_assert(strstr(out, "adagrad schedule") && strstr(out, "normalized update, l1 0.001") &&
              strstr(out, "early stop 2, average 2") && strstr(out, "non-zero weights") && strstr(out, " kept"),
              "%s", out);
}

/* Several epochs without --test hold out a seeded tenth and stop early,
 * keeping the best epoch (Vowpal Wabbit's default for several passes);
 * --holdout 0, one epoch or --test turn it off. --l2 1/rows (LIBLINEAR's
 * C = 1) is 1 over the rows trained on, the holdout's left out. */
Test(cli, several_epochs_hold_out_a_tenth_and_stop_early)
{
    write_separable("t.svm", 4000, 5, 0);
    cr_assert_eq(hog("train t.svm -o m.hog --threads 1 --l2 1/rows --report r.json"), 0, "%s", out);
    cr_assert(strstr(out, "no --test: a seeded tenth of the rows is held out, and training stops 3 epochs"), "%s", out);
    char *report = slurp("r.json");
    cr_assert(strstr(report, "\"early_stop\": 3"), "%s", report);
    double rows = atof(strstr(strstr(report, "\"test\""), "\"rows\": ") + 8);
    cr_assert(rows > 300 && rows < 500, "%g held-out rows of 4000", rows);
    double l2 = atof(strstr(report, "\"l2\": ") + 6);
    cr_assert(fabs(l2 * (4000 - rows) - 1) < 1e-3, "l2 %g is not 1 over the %g rows trained on", l2, 4000 - rows);
    cr_assert_eq(hog("train t.svm -o m.hog --threads 1 --holdout 0 --l2 1/rows --report r.json -q"), 0, "%s", out);
    report = slurp("r.json");
    cr_assert(strstr(report, "\"early_stop\": 0") && strstr(report, "\"epochs_run\": 20"), "%s", report);
    cr_assert(fabs(atof(strstr(report, "\"l2\": ") + 6) * 4000 - 1) < 1e-3, "%s", report);
    cr_assert_eq(hog("train t.svm -o m.hog --threads 1 --epochs 1 --l2 1e-5 --report r.json"), 0, "%s", out);
    cr_assert(!strstr(out, "held out"), "%s", out);
    report = slurp("r.json");
    cr_assert(strstr(report, "\"early_stop\": 0") && strstr(report, "\"l2\": 1e-05"), "%s", report);
    cr_assert_eq(hog("train t.svm -o m.hog --threads 1 --test t.svm --epochs 3 -q"), 0, "%s", out);
    cr_assert_eq(hog("info m.hog"), 0, "%s", out);
    cr_assert(strstr(out, "early stop 0"), "%s", out);    /* Nor for a rank of several a launcher makes (srun here): each would
     * keep its own best epoch. The rank goes on to meet its coordinator. */
    cr_assert_eq(hog("keygen k.key"), 0, "%s", out);
    cr_assert_eq(hog_env("env -u HOG_TOPOLOGY SLURM_PROCID=1 SLURM_NTASKS=2",
                         "train t.svm -o m.hog --epochs 3 --coordinator 127.0.0.1:9 --secret k.key --join-timeout 1"),
                 1, "%s", out);
    cr_assert(!strstr(out, "held out") && !strstr(out, "early-stop") && strstr(out, "no answer from the coordinator"),
              "%s", out);
}

Test(cli, quantile_and_modified_huber_losses_end_to_end)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/reg.svm", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    srand(5);
    for (int i = 0; i < 3000; i++) {
        double x = rand() / (double)RAND_MAX * 2 - 1, noise = rand() / (double)RAND_MAX * 2 - 1;
        fprintf(f, "%.5f 1:%.5f\n", 3 * x + noise, x);
    }
    fclose(f);
    cr_assert_eq(hog("train reg.svm -o q.hog --loss quantile --quantile 0.9 --holdout 0.2 --epochs 20 --threads 1"),
                 0, "%s", out);
    cr_assert(strstr(out, "pinball loss"), "%s", out);
    cr_assert_eq(hog("predict q.hog reg.svm -o q.txt -q"), 0, "%s", out);
    char *pred = slurp("q.txt");
    double v = atof(pred);
    cr_assert(v > -5 && v < 5 && !strstr(pred, "nan"), "a prediction: %.40s", pred);
    cr_assert_eq(hog("info q.hog"), 0, "%s", out);
    cr_assert(strstr(out, "quantile 0.9") && strstr(out, "loss               quantile"), "%s", out);

    write_separable("b.svm", 2000, 12, 1);
    cr_assert_eq(hog("train b.svm -o mh.hog --loss modified_huber --holdout 0.2 --threads 1"), 0, "%s", out);
    cr_assert(strstr(out, "accuracy"), "%s", out);
    cr_assert_eq(hog("predict mh.hog b.svm -o mh.txt -q"), 0, "%s", out);
    char *cls = slurp("mh.txt");
    cr_assert(cls[0] == '0' || cls[0] == '1', "a class label of the training data: %.20s", cls);
}

Test(cli, bad_optimiser_options_exit_2_with_a_message)
{
    write_separable("t.svm", 50, 6, 0);
    cr_assert_eq(hog("train t.svm -o m.hog --quantile 1.5 --loss quantile"), 2);
    cr_assert(strstr(out, "--quantile: 1.5, expected a number in (0, 1)"), "%s", out);
    cr_assert_eq(hog("train t.svm -o m.hog --early-stop 2 --holdout 0"), 2);
    cr_assert(strstr(out, "--early-stop needs --test FILE or --holdout F"), "%s", out);
    cr_assert_eq(hog("train t.svm -o m.hog --average=20 --epochs 10"), 2);
    cr_assert(strstr(out, "--average: 20 epochs averaged, only 10 trained"), "%s", out);
    cr_assert_eq(hog("train t.svm -o m.hog --schedule sgd"), 2);
    cr_assert(strstr(out, "expected constant, decay, invscaling or adagrad, found 'sgd'"), "%s", out);
    cr_assert_eq(hog("train t.svm -o m.hog --l1 -1"), 2);
    cr_assert(strstr(out, "--l1"), "%s", out);
    cr_assert(!exists("m.hog"));
}

/* info and predict ask the library what a file is; what cannot be read is
 * named with the reason, and an output that cannot be made is reported
 * with nothing left behind. */
Test(cli, unreadable_inputs_and_outputs_are_reported)
{
    write_separable("t.svm", 200, 8, 0);
    cr_assert_eq(hog("info missing.hog"), 1, "%s", out);
    cr_assert(strstr(out, "hogtrain: missing.hog: No such file or directory"), "%s", out);
    cr_assert_eq(hog("info ."), 1, "%s", out);
    cr_assert(strstr(out, "hogtrain: .: Is a directory"), "%s", out);
    cr_assert_eq(hog("predict missing.hog t.svm"), 1, "%s", out);
    cr_assert(strstr(out, "hogtrain: missing.hog: No such file or directory"), "%s", out);

    cr_assert_eq(hog("train t.svm -o m.hog -q"), 0, "%s", out);
    cr_assert_eq(hog("predict m.hog t.svm -q -o no/such/folder/p.txt"), 1, "%s", out);
    cr_assert(strstr(out, "hogtrain: no/such/folder/p.txt: cannot create a file beside it: No such file or directory"),
              "%s", out);
    cr_assert_eq(hog("predict m.hog t.svm -q -o p.txt --report r.json"), 0, "%s", out);
    char *p = slurp("p.txt");
    int lines = 0;
    for (; *p; p++)
        lines += *p == '\n';
    cr_assert_eq(lines, 200);
    cr_assert(strstr(slurp("r.json"), "\"command\": \"predict\""));
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "test $(ls -A %s | grep -c tmp) -eq 0", dir);
    cr_assert_eq(system(cmd), 0, "a temporary file was left behind");
}

/* An output is never an input, nor another output; a device is never
 * replaced; /dev/stdout is a stream; a replaced model keeps its mode. */
Test(cli, outputs_never_destroy_inputs_or_devices)
{
    write_separable("t.svm", 200, 9, 0);
    char *before = strdup(slurp("t.svm"));
    cr_assert_eq(hog("convert t.svm -o t.svm"), 1, "%s", out);
    cr_assert(strstr(out, "hogtrain: t.svm is the input t.svm: refusing to write over what is read"), "%s", out);
    cr_assert_str_eq(slurp("t.svm"), before);
    free(before);
    cr_assert_eq(hog("convert t.svm -o d.hgd -q"), 0, "%s", out);
    cr_assert_eq(hog("train d.hgd -o d.hgd -q"), 1, "%s", out);
    cr_assert(strstr(out, "hogtrain: d.hgd is the input d.hgd"), "%s", out);
    cr_assert_eq(hog("info d.hgd"), 0, "the data set was damaged: %s", out);
    cr_assert_eq(hog("train d.hgd -o m.hog -q --report m.hog"), 1, "%s", out);
    cr_assert(strstr(out, "hogtrain: m.hog is given as two outputs"), "%s", out);

    cr_assert_eq(hog("train d.hgd -o m.hog -q"), 0, "%s", out);
    char path[512];
    snprintf(path, sizeof(path), "%s/m.hog", dir);
    cr_assert_eq(chmod(path, 0600), 0);
    cr_assert_eq(hog("train d.hgd -o m.hog -q"), 0, "%s", out);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
    cr_assert_eq(hog("predict m.hog d.hgd -q -o m.hog"), 1, "%s", out);
    cr_assert(strstr(out, "hogtrain: m.hog is the input m.hog"), "%s", out);

    cr_assert_eq(hog("convert t.svm -o /dev/null"), 0, "written into, as cp writes into it: %s", out);
    cr_assert_eq(stat("/dev/null", &st), 0);
    cr_assert(S_ISCHR(st.st_mode), "/dev/null was replaced");

    cr_assert_eq(hog("predict m.hog d.hgd -q -o /dev/stdout"), 0, "%s", out);
    int lines = 0;
    for (const char *p = out; *p; p++)
        lines += *p == '\n';
    cr_assert_eq(lines, 200, "%s", out);
}

/* What a reader of a FIFO got: it waits in its open for the command's
 * commit, then reads to the end. */
typedef struct {
    char path[128];
    char got[65536];
    size_t len;
} fifo_reader;

static void *fifo_read(void *arg)
{
    fifo_reader *r = arg;
    int fd = open(r->path, O_RDONLY);
    if (fd < 0)
        return NULL;
    ssize_t n;
    while (r->len < sizeof(r->got) && (n = read(fd, r->got + r->len, sizeof(r->got) - r->len)) > 0)
        r->len += (size_t)n;
    close(fd);
    return NULL;
}

/* Outputs behave as Unix tools' do: /dev/null takes them (two at once too)
 * and stays a device; a FIFO's reader gets the whole predictions; a pipe
 * the command inherits is written through /dev/fd/N, as for -o >(cmd);
 * the same FIFO named twice is refused. */
Test(cli, outputs_go_into_devices_fifos_and_pipes)
{
    write_separable("t.svm", 200, 8, 0);
    cr_assert_eq(hog("train t.svm -o m.hog -q"), 0, "%s", out);
    cr_assert_eq(hog("convert t.svm -o /dev/null -q"), 0, "%s", out);
    cr_assert_eq(hog("predict m.hog t.svm -q -o /dev/null"), 0, "%s", out);
    cr_assert_eq(hog("train t.svm -q -o /dev/null --report /dev/null"), 0, "%s", out);
    struct stat st;
    cr_assert_eq(stat("/dev/null", &st), 0);
    cr_assert(S_ISCHR(st.st_mode), "/dev/null was replaced");
    cr_assert_eq(hog("predict m.hog t.svm -q -o p.txt"), 0, "%s", out);
    char *want = strdup(slurp("p.txt"));

    fifo_reader *r = calloc(1, sizeof(*r));
    cr_assert(want && r);
    snprintf(r->path, sizeof(r->path), "%s/p.fifo", dir);
    cr_assert_eq(mkfifo(r->path, 0600), 0);
    cr_assert_eq(hog("predict m.hog t.svm -q -o p.fifo --report p.fifo"), 1, "%s", out);
    cr_assert(strstr(out, "hogtrain: p.fifo is given as two outputs"), "%s", out);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, fifo_read, r), 0);
    cr_assert_eq(hog("predict m.hog t.svm -q -o p.fifo"), 0, "%s", out);
    pthread_join(t, NULL);
    cr_assert_eq(r->len, strlen(want), "the reader got %zu bytes", r->len);
    cr_assert(memcmp(r->got, want, r->len) == 0, "the reader got other predictions");
    cr_assert_eq(lstat(r->path, &st), 0);
    cr_assert(S_ISFIFO(st.st_mode), "the FIFO was replaced");

    int fds[2];
    cr_assert_eq(pipe(fds), 0); /* inherited by the command, as a shell's >(...) is */
    cr_assert_eq(hog("predict m.hog t.svm -q -o /dev/fd/%d", fds[1]), 0, "%s", out);
    close(fds[1]);
    r->len = 0;
    ssize_t n;
    while ((n = read(fds[0], r->got + r->len, sizeof(r->got) - r->len)) > 0)
        r->len += (size_t)n;
    close(fds[0]);
    cr_assert_eq(r->len, strlen(want), "the pipe got %zu bytes", r->len);
    cr_assert(memcmp(r->got, want, r->len) == 0, "the pipe got other predictions");
    free(r);
    free(want);
}

/* Writes n bytes (NULs and all) to the scratch folder's name. */
static void write_bytes(const char *name, const void *bytes, size_t n)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

/* The reports: a typo in line 1 of libsvm made the file CSV with a
 * header ("no data rows" alone, the error blamed on line 2 with more); a
 * NUL byte made it "not a hogtrain dataset (bad magic)". */
Test(cli, detection_cannot_mislead_a_typo_in_line_one_or_a_nul_byte)
{
    write_file("a.svm", "1 1::0.5\n");
    cr_assert_eq(hog("convert a.svm -o a.hgd"), 1, "%s", out);
    cr_assert_str_eq(out, "hogtrain: warning: a.svm: line 1 reads as no format (its index:value pairs are malformed), "
                          "and no line follows it: read as libsvm, as the file's name says\n"
                          "hogtrain: a.svm:1:5: expected a number, found ':0.5'\n");
    cr_assert(!exists("a.hgd"));

    write_file("b.svm", "1 1::0.5\n-1 2:1\n1 3:1\n");
    cr_assert_eq(hog("train b.svm -o m.hog"), 1, "%s", out);
    cr_assert(strstr(out, "hogtrain: warning: b.svm: read as libsvm: line 1 reads as CSV, and of the next 2 data "
                          "lines, 2 read as libsvm, 0 as CSV and 0 as VW; line 1 is no CSV header but a libsvm line "
                          "with an error\n"), "%s", out);
    cr_assert(strstr(out, "hogtrain: b.svm:1:5: expected a number, found ':0.5'\n"), "%s", out);
    cr_assert(!exists("m.hog"));
    cr_assert_eq(hog("train b.svm -o m.hog -q"), 1, "%s", out);
    cr_assert_str_eq(out, "hogtrain: b.svm:1:5: expected a number, found ':0.5'\n", "-q keeps the error alone");

    static const char nul[] = "1 1:0.5\n-1 2:\0" "1\n-1 3:1\n";
    write_bytes("n.svm", nul, sizeof(nul) - 1);
    cr_assert_eq(hog("convert n.svm -o n.hgd"), 1, "%s", out);
    cr_assert_str_eq(out, "hogtrain: n.svm:2:6: expected text, found a NUL byte\n");
    cr_assert(!exists("n.hgd"));
    cr_assert_eq(hog("train n.svm -o m.hog --on-error skip -q"), 0, "%s", out);
    cr_assert(strstr(out, "n.svm:2:6: expected text, found a NUL byte"), "skipped and located: %s", out);
}

/* The report: `hogtrain convert /dev/zero` read forever. Input
 * that is not text is refused from its first chunk, saying what it is. */
Test(cli, input_that_is_not_text_is_refused_at_once_and_named)
{
    cr_assert_eq(hog("convert /dev/zero -o z.hgd"), 1, "%s", out);
    cr_assert_str_eq(out, "hogtrain: /dev/zero: not text: its first 65536 bytes are all zero\n");
    cr_assert(!exists("z.hgd"));
    cr_assert_eq(hog("train /dev/zero -o m.hog"), 1, "%s", out);
    cr_assert(strstr(out, "hogtrain: /dev/zero: not text: its first 65536 bytes are all zero\n"), "%s", out);
    cr_assert(!exists("m.hog"));

    static unsigned char bytes[100000];
    uint64_t x = 88172645463325252ULL;
    for (size_t i = 0; i < sizeof(bytes); i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        bytes[i] = (unsigned char)(x >> 56);
    }
    bytes[0] = 'x'; /* neither the .hgd magic nor any other */
    write_bytes("r.bin", bytes, sizeof(bytes));
    cr_assert_eq(hog("convert r.bin -o r.hgd"), 1, "%s", out);
    cr_assert(strstr(out, "hogtrain: r.bin: not text but binary data (") &&
              strstr(out, " of its first 65536 bytes are NUL or control characters)\n"), "%s", out);
    cr_assert(!exists("r.hgd"));
    static const char zip[] = "PK\3\4\24\0\6\0\10\0\0\0!\0";
    write_bytes("book.xlsx", zip, sizeof(zip));
    cr_assert_eq(hog("info book.xlsx"), 1, "%s", out);
    cr_assert_str_eq(out, "hogtrain: book.xlsx: not text but a zip archive (a spreadsheet? save it as CSV)\n");
}

/* The report: `printf '1 1:0.5\n-1 4294967295:1\n' > b.svm;
 * hogtrain train b.svm -o m --mem-limit 256M` was killed for memory with
 * no message. */
Test(cli, a_feature_index_past_the_ceiling_is_refused_with_the_hint_to_hash)
{
    write_file("big.svm", "1 1:0.5\n-1 4294967295:1\n");
    cr_assert_eq(hog("train big.svm -o m --mem-limit 256M"), 1, "%s", out);
    /* the model's half of the limit, 20 bytes a feature: the default update's packed record (a weight,
     * the normalized update's scale, its reciprocal and the L2 term) and the best epoch's weight the
     * default holdout's early stopping keeps */
    cr_assert(strstr(out, "hogtrain: big.svm:2:4: index 4294967295 is past the ceiling of 6710886 features "
                          "(--max-features, --mem-limit): hash them (--hash-bits 22)\n"), "%s", out);
    cr_assert(!exists("m"));
    cr_assert_eq(hog("train big.svm -o m --max-features 1000 -q"), 1, "%s", out);
    cr_assert_str_eq(out, "hogtrain: big.svm:2:4: index 4294967295 is past the ceiling of 1000 features "
                          "(--max-features, --mem-limit): hash them (--hash-bits 9)\n");
    cr_assert(!exists("m"));
    cr_assert_eq(hog("convert big.svm -o big.hgd --max-features 1000"), 1, "%s", out);
    cr_assert(!exists("big.hgd"));
    /* the hint works */
    cr_assert_eq(hog("train big.svm -o m --max-features 1000 -b 9 -q"), 0, "%s", out);
    cr_assert(exists("m"));
    /* a binary data set is judged by its header's count, when it is opened */
    cr_assert_eq(hog("convert big.svm -o big.hgd -b 12 -q"), 0, "%s", out);
    cr_assert_eq(hog("train big.hgd -o m2 --max-features 1000 -q"), 1, "%s", out);
    cr_assert(strstr(out, "hogtrain: big.hgd: ") &&
              strstr(out, " features are past the ceiling of 1000 (--max-features, --mem-limit): make it from its "
                          "text again, hashed (--hash-bits 9)\n"), "%s", out);
    cr_assert(!exists("m2"));
    cr_assert_eq(hog("train big.svm -o m --max-features 0"), 2, "%s", out);
    cr_assert_str_eq(out, "hogtrain: --max-features: at least 1 feature must be allowed, found '0'\n");
}

/* Rows of two features and a class name: "virginica" first, so the names'
 * first-seen order is not their sorted one. */
static void write_named(const char *name, int rows, int classes, unsigned seed)
{
    static const char *const names[3] = {"virginica", "setosa", "versicolor"};
    char *csv = malloc(64 * (size_t)rows + 64), line[128];
    strcpy(csv, "a,b,species\n");
    srand(seed);
    for (int i = 0; i < rows; i++) {
        int c = i % classes;
        double a = rand() / (double)RAND_MAX * 0.4, b = rand() / (double)RAND_MAX * 0.4;
        snprintf(line, sizeof(line), "%.3f,%.3f,%s\n", a + c, b - c, names[c]);
        strcat(csv, line);
    }
    write_file(name, csv);
    free(csv);
}

Test(cli, string_class_labels_are_kept_sorted_and_predicted_by_name)
{
    write_named("iris.csv", 300, 3, 5);
    cr_assert_eq(hog("train iris.csv --label species --loss softmax -o m.hog -q"), 0, "%s", out);
    cr_assert_eq(hog("info m.hog"), 0, "%s", out);
    cr_assert(strstr(out, "classes            3: setosa versicolor virginica\n"), "%s", out);
    cr_assert_eq(hog("predict m.hog iris.csv --label species -q"), 0, "%s", out);
    cr_assert(strncmp(out, "virginica\nsetosa\nversicolor\nvirginica\n", 38) == 0, "%.60s", out);
    cr_assert_eq(hog("predict m.hog iris.csv --label species --probabilities -q"), 0, "%s", out);
    cr_assert(strncmp(out, "setosa versicolor virginica\n", 28) == 0, "%.60s", out);
    cr_assert_eq(hog("predict m.hog iris.csv --label species --report r.json -q"), 0, "%s", out);
    char *report = slurp("r.json");
    cr_assert(strstr(report, "\"accuracy\": 1,") || strstr(report, "\"accuracy\": 0.99"), "%s", report);
    cr_assert_eq(hog("export m.hog"), 0, "%s", out);
    cr_assert(strncmp(out, "bias setosa ", 12) == 0, "%.60s", out);
    cr_assert_eq(hog("export m.hog --format json"), 0, "%s", out);
    cr_assert(strstr(out, "\"classes\": [\"setosa\", \"versicolor\", \"virginica\"]"), "%s", out);
    /* a held-out test file numbers its names in its own order */
    write_file("t.csv", "a,b,species\n1.1,-1.1,setosa\n2.1,-2.1,versicolor\n0.1,0.1,virginica\n");
    cr_assert_eq(hog("train iris.csv --label species --loss softmax --test t.csv -o m2.hog --report r2.json -q"), 0,
                 "%s", out);
    report = slurp("r2.json");
    cr_assert(strstr(strstr(report, "\"test\""), "\"accuracy\": 1,"), "%s", report);
    /* names the model does not know: an error for the metrics (the
     * command's summary, --report), naming the name; predictions alone
     * (-q) do not read the labels */
    write_file("u.csv", "a,b,species\n0.1,0.1,daisy\n");
    cr_assert_eq(hog("predict m.hog u.csv --label species -q"), 0, "%s", out);
    cr_assert_str_eq(out, "virginica\n");
    cr_assert_eq(hog("predict m.hog u.csv --label species -o p.txt"), 1, "%s", out);
    cr_assert(strstr(out, "u.csv: label 'daisy' is not one of the model's 3 classes (setosa, versicolor, "
                          "virginica)"), "%s", out);
    cr_assert_eq(hog("train iris.csv --label species --loss softmax --test u.csv -o m3.hog -q"), 1, "%s", out);
    cr_assert(strstr(out, "label 'daisy' is not one of the model's 3 classes"), "%s", out);
    cr_assert(!exists("m3.hog"));
}

Test(cli, two_string_labels_make_the_second_sorted_name_positive)
{
    write_named("b.csv", 200, 2, 6); /* virginica (first seen) at a = 0, setosa at a = 1 */
    cr_assert_eq(hog("train b.csv --label species -o b.hog -q"), 0, "%s", out);
    cr_assert_eq(hog("info b.hog"), 0, "%s", out);
    cr_assert(strstr(out, "classes            2: setosa virginica\n"), "%s", out);
    cr_assert_eq(hog("export b.hog"), 0, "%s", out);
    cr_assert(strncmp(out, "bias virginica ", 15) == 0, "the positive class is the second name: %.60s", out);
    /* the first row is virginica: its probability (of the positive class) is high */
    cr_assert_eq(hog("predict b.hog b.csv --label species -q"), 0, "%s", out);
    cr_assert_gt(atof(out), 0.5, "%.60s", out);
    cr_assert_eq(hog("predict b.hog b.csv --label species --loss hinge -q"), 2, "%s", out);
}

/* What a model file holds past its metadata (which records the time a
 * run took): the labels, the names, the weights; its length into *len. */
static unsigned char *model_body(const char *name, size_t *len)
{
    static unsigned char buf[2][65536];
    static int which;
    unsigned char *b = buf[which ^= 1];
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s missing", name);
    size_t n = fread(b, 1, sizeof(buf[0]), f);
    fclose(f);
    cr_assert_gt(n, 36);
    uint32_t meta;
    memcpy(&meta, b + 12, 4);
    cr_assert_leq(32 + (size_t)meta + 4, n);
    *len = n - 4 - 32 - meta; /* the CRC covers the metadata too */
    return b + 32 + meta;
}

static void assert_same_model(const char *a, const char *b)
{
    size_t la, lb;
    const unsigned char *pa = model_body(a, &la), *pb = model_body(b, &lb);
    cr_assert_eq(la, lb, "%s: %zu bytes past the metadata, %s: %zu", a, la, b, lb);
    cr_assert_eq(memcmp(pa, pb, la), 0, "%s and %s differ past their metadata", a, b);
}

/* A .hgd keeps the class names and their numbers: converted, or cached by
 * --cache, it trains the model the text trains, bit for bit on one
 * thread with a fixed seed; predictions name the classes from either. */
Test(cli, string_labels_survive_convert_and_the_cache_bit_for_bit)
{
    write_named("iris.csv", 300, 3, 11);
    const char *run = "--loss softmax --threads 1 --seed 7 --epochs 5 -q";
    cr_assert_eq(hog("train iris.csv --label species %s -o text.hog", run), 0, "%s", out);
    cr_assert_eq(hog("convert iris.csv --label species -o iris.hgd -q"), 0, "%s", out);
    cr_assert_eq(hog("train iris.hgd %s -o hgd.hog", run), 0, "%s", out);
    assert_same_model("text.hog", "hgd.hog");
    cr_assert_eq(hog("info hgd.hog"), 0, "%s", out);
    cr_assert(strstr(out, "classes            3: setosa versicolor virginica\n"), "%s", out);
    /* the cache: written on the first run, read on the second */
    cr_assert_eq(hog("train iris.csv --label species %s --cache c.hgd -o c1.hog", run), 0, "%s", out);
    cr_assert(exists("c.hgd"));
    cr_assert_eq(hog("train iris.csv --label species %s --cache c.hgd -o c2.hog --report r.json", run), 0, "%s", out);
    cr_assert(strstr(slurp("r.json"), "\"cache_used\": true"), "%s", slurp("r.json"));
    assert_same_model("text.hog", "c1.hog");
    assert_same_model("text.hog", "c2.hog");
    /* predictions and metrics from the .hgd: its names map to the model's */
    cr_assert_eq(hog("predict hgd.hog iris.hgd --report p.json -o p.txt -q"), 0, "%s", out);
    cr_assert(strncmp(slurp("p.txt"), "virginica\nsetosa\nversicolor\n", 28) == 0, "%.60s", slurp("p.txt"));
    cr_assert(strstr(slurp("p.json"), "\"accuracy\": 1,") || strstr(slurp("p.json"), "\"accuracy\": 0.99"), "%s",
              slurp("p.json"));
    /* a held-out .hgd numbered in its own order */
    write_file("t.csv", "a,b,species\n1.1,-1.1,setosa\n2.1,-2.1,versicolor\n0.1,0.1,virginica\n");
    cr_assert_eq(hog("convert t.csv --label species -o t.hgd -q"), 0, "%s", out);
    cr_assert_eq(hog("train iris.hgd %s --test t.hgd -o m2.hog --report r2.json", run), 0, "%s", out);
    cr_assert(strstr(strstr(slurp("r2.json"), "\"test\""), "\"accuracy\": 1,"), "%s", slurp("r2.json"));
}

/* A class name with a blank or a quote keeps export's lines at three
 * fields (and the probabilities' header and info's list at one a class):
 * quoted as CSV quotes it. */
Test(cli, class_names_with_blanks_are_quoted_where_fields_are_blank_separated)
{
    write_file("sp.csv", "a,b,species\n0.1,0.2,Iris setosa\n1.1,1.2,\"say \"\"hi\"\"\"\n0.2,0.1,Iris setosa\n"
                         "1.3,1.0,\"say \"\"hi\"\"\"\n0.5,0.5,tab\there\n0.6,0.4,plain\n");
    cr_assert_eq(hog("train sp.csv --label species --loss softmax -o sp.hog -q"), 0, "%s", out);
    cr_assert_eq(hog("export sp.hog --all"), 0, "%s", out);
    cr_assert(strncmp(out, "bias \"Iris setosa\" ", 19) == 0, "%.80s", out);
    cr_assert(strstr(out, "\nbias plain "), "%s", out);
    cr_assert(strstr(out, "\nbias \"say \"\"hi\"\"\" "), "%s", out);
    cr_assert(strstr(out, "\nbias \"tab\there\" "), "%s", out);
    cr_assert(strstr(out, "\nb \"Iris setosa\" "), "%s", out); /* the header names the features */
    /* every line: FEATURE, the class (one field, quoted or not), WEIGHT */
    for (char *line = out; *line; line = strchr(line, '\n') + 1) {
        char *end = strchr(line, '\n');
        cr_assert_not_null(end);
        char *cls = strchr(line, ' ') + 1, *after = cls;
        if (*cls == '"')
            for (after = cls + 1; !(*after == '"' && after[1] != '"'); after += *after == '"' ? 2 : 1)
                cr_assert_lt(after, end, "%.*s", (int)(end - line), line);
        after = strchr(after, ' ');
        cr_assert(after && after < end && !memchr(after + 1, ' ', (size_t)(end - after - 1)) &&
                  !memchr(after + 1, '\t', (size_t)(end - after - 1)), "%.*s", (int)(end - line), line);
    }
    cr_assert_eq(hog("export sp.hog --format json"), 0, "%s", out);
    cr_assert(strstr(out, "\"classes\": [\"Iris setosa\", \"plain\", \"say \\\"hi\\\"\", \"tab\\u0009here\"]"), "%s", out);
    cr_assert_eq(hog("info sp.hog"), 0, "%s", out);
    cr_assert(strstr(out, "classes            4: \"Iris setosa\" plain \"say \"\"hi\"\"\" \"tab\there\"\n"), "%s", out);
    cr_assert_eq(hog("predict sp.hog sp.csv --label species --probabilities -q"), 0, "%s", out);
    cr_assert(strncmp(out, "\"Iris setosa\" plain \"say \"\"hi\"\"\" \"tab\there\"\n", 44) == 0, "%.80s", out);
    /* predictions are a name a line: as they are */
    cr_assert_eq(hog("predict sp.hog sp.csv --label species -q"), 0, "%s", out);
    cr_assert(strncmp(out, "Iris setosa\nsay \"hi\"\n", 21) == 0, "%.80s", out);
}

Test(cli, string_labels_are_refused_where_they_cannot_go)
{
    write_named("b.csv", 50, 2, 7);
    cr_assert_eq(hog("train b.csv --label species --loss squared -o r.hog -q"), 1, "%s", out);
    cr_assert(strstr(out, "the labels are class names ('virginica', ...), not numbers: --loss squared is a "
                          "regression"), "%s", out);
    cr_assert(!exists("r.hog"));
    cr_assert_eq(hog("convert b.csv --label species -o b.hgd -q"), 0, "%s", out);
    cr_assert_eq(hog("train b.hgd --loss squared -o r.hog -q"), 1, "%s", out);
    cr_assert(strstr(out, "the labels are class names ('virginica', ...), not numbers: --loss squared is a "
                          "regression"), "%s", out);
    cr_assert(!exists("r.hog"));
    /* a numeric label column is read as before: a name after numbers is an error at its place */
    write_file("n.csv", "a,y\n1,0\n2,1\n3,setosa\n");
    cr_assert_eq(hog("train n.csv --label y -o n.hog -q"), 1, "%s", out);
    cr_assert(strstr(out, "n.csv:4:3: expected a number, found 'setosa'"), "%s", out);
    /* no header: the label column of names does not make the first line one */
    write_file("h.csv", "1.0,setosa\n2.0,virginica\n1.1,setosa\n2.2,virginica\n");
    cr_assert_eq(hog("train h.csv --label 1 -o h.hog -q"), 0, "%s", out);
    cr_assert_eq(hog("info h.hog"), 0, "%s", out);
    cr_assert(strstr(out, "training rows      4\n"), "%s", out);
}

/* ===================================================================== *
 *  Feature names
 * ===================================================================== */

/* A CSV header names the features (its categorical values' when asked):
 * export prints the names where it printed indices (quoted as CSV quotes, where a name has a blank), JSON
 * gives them as a fourth element, info counts and shows them; --indices
 * and a headerless file keep the indices. */
Test(cli, csv_header_names_the_features_in_export_and_info)
{
    write_file("h.csv", "y,age,\"my height\",color\n1,30,1.8,red\n0,40,1.6,blue\n1,35,1.7,red\n0,50,1.5,blue\n");
    /* the numeric columns named without asking; the categorical values asked for */
    cr_assert_eq(hog("train h.csv --categorical color --threads 1 -o plain.hog -q"), 0, "%s", out);
    cr_assert_eq(hog("info plain.hog"), 0, "%s", out);
    cr_assert(strstr(out, "\nnamed features     2 of "), "%s", out);
    cr_assert_eq(hog("train h.csv --categorical color --feature-names --threads 1 -o h.hog -q"), 0, "%s", out);
    char blue[32];
    snprintf(blue, sizeof(blue), "\n%u 1 ", (hog_murmur3_32("color=blue", 10, 0) & ((1u << 18) - 1)) + 2);
    cr_assert_eq(hog("export h.hog"), 0, "%s", out);
    cr_assert(strncmp(out, "bias 1 ", 7) == 0, "%s", out);
    cr_assert(strstr(out, "\nage 1 "), "%s", out);
    cr_assert(strstr(out, "\n\"my height\" 1 "), "%s", out);
    cr_assert(strstr(out, "\ncolor=red 1 ") && strstr(out, "\ncolor=blue 1 "), "%s", out);
    cr_assert_null(strstr(out, "\n0 1 "), "%s", out);
    cr_assert_eq(hog("export h.hog --indices"), 0, "%s", out);
    cr_assert(strstr(out, "\n0 1 ") && strstr(out, "\n1 1 ") && strstr(out, blue), "%s", out);
    cr_assert_null(strstr(out, "age"), "%s", out);
    cr_assert_eq(hog("export h.hog --format json"), 0, "%s", out);
    cr_assert(strstr(out, "\n    [0, \"1\", ") && strstr(out, ", \"age\"]"), "%s", out);
    cr_assert(strstr(out, ", \"my height\"]"), "%s", out);
    cr_assert_eq(hog("info h.hog"), 0, "%s", out);
    cr_assert(strstr(out, "\nnamed features     4 of "), "%s", out);
    cr_assert(strstr(out, ": 0=age 1=\"my height\" "), "%s", out);
    /* no header: no names */
    write_file("n.csv", "1,30,1.8\n0,40,1.6\n1,35,1.7\n0,50,1.5\n");
    cr_assert_eq(hog("train n.csv --threads 1 -o n.hog -q"), 0, "%s", out);
    cr_assert_eq(hog("info n.hog"), 0, "%s", out);
    cr_assert_null(strstr(out, "named features"), "%s", out);
    cr_assert_eq(hog("export n.hog"), 0, "%s", out);
    cr_assert(strstr(out, "\n0 1 ") && strstr(out, "\n1 1 "), "%s", out);
}

/* Vowpal Wabbit names its features as --invert_hash does, when asked:
 * names that hash to one feature are all kept, sorted, joined by '|'. */
Test(cli, vw_feature_names_keep_every_name_of_a_collision)
{
    write_file("c.vw", "1 |a x y:2 |b x\n-1 |a y | x z\n1 |a x | z\n");
    cr_assert_eq(hog("train c.vw -b 1 --threads 1 -o plain.hog -q"), 0, "%s", out);
    cr_assert_eq(hog("info plain.hog"), 0, "%s", out);
    cr_assert_null(strstr(out, "named features"), "not asked for: %s", out);
    cr_assert_eq(hog("train c.vw -b 1 --threads 1 --feature-names -o c.hog -q"), 0, "%s", out);
    /* which of the two indices each name hashes to */
    const unsigned a = hog_murmur3_32("a", 1, 0), b = hog_murmur3_32("b", 1, 0);
    const char *names[5] = {"a^x", "a^y", "b^x", "x", "z"};
    const unsigned at[5] = {hog_murmur3_32("x", 1, a) & 1, hog_murmur3_32("y", 1, a) & 1,
                            hog_murmur3_32("x", 1, b) & 1, hog_murmur3_32("x", 1, 0) & 1,
                            hog_murmur3_32("z", 1, 0) & 1};
    char want[2][64] = {"", ""};
    for (int i = 0; i < 5; i++) /* in byte order already */
        snprintf(want[at[i]] + strlen(want[at[i]]), 64 - strlen(want[at[i]]), "%s%s", want[at[i]][0] ? "|" : "",
                 names[i]);
    cr_assert(want[0][0] && want[1][0], "the test's names fall on both features");
    cr_assert_eq(hog("export c.hog --all"), 0, "%s", out);
    char line[160];
    for (int f = 0; f < 2; f++) {
        snprintf(line, sizeof(line), "\n%s 1 ", want[f]);
        cr_assert(strstr(out, line), "%s lacks %s", out, line);
    }
    cr_assert_eq(hog("info c.hog"), 0, "%s", out);
    snprintf(line, sizeof(line), "named features     2 of 2: 0=%s 1=%s\n", want[0], want[1]);
    cr_assert(strstr(out, line), "%s lacks %s", out, line);
}

/* Converted, or cached, the names go with the rows: training the .hgd
 * gives the model the text gives, names and all, bit for bit on one
 * thread. */
Test(cli, feature_names_survive_convert_and_the_cache_bit_for_bit)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/d.vw", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    srand(5);
    for (int i = 0; i < 3000; i++)
        fprintf(f, "%d |u u%d age:%d |w w%d w%d:0.5 | c%d\n", rand() % 2 ? 1 : -1, rand() % 50, rand() % 90,
                rand() % 400, rand() % 400, rand() % 7);
    fclose(f);
    const char *run = "--threads 1 --seed 3 --epochs 3 -b 12 --feature-names --stream 0 -q";
    cr_assert_eq(hog("train d.vw %s -o text.hog", run), 0, "%s", out);
    cr_assert_eq(hog("convert d.vw -b 12 --feature-names -o d.hgd -q"), 0, "%s", out);
    cr_assert_eq(hog("train d.hgd %s -o hgd.hog", run), 0, "%s", out);
    assert_same_model("text.hog", "hgd.hog");
    cr_assert_eq(hog("train d.vw %s --cache c.hgd -o c1.hog", run), 0, "%s", out);
    cr_assert_eq(hog("train d.vw %s --cache c.hgd -o c2.hog --report r.json", run), 0, "%s", out);
    cr_assert(strstr(slurp("r.json"), "\"cache_used\": true"), "%s", slurp("r.json"));
    assert_same_model("text.hog", "c1.hog");
    assert_same_model("text.hog", "c2.hog");
    /* the cache's record has the option: a run without it rebuilds the cache */
    cr_assert_eq(hog("train d.vw --threads 1 -b 12 --stream 0 --epochs 1 --cache c.hgd -o c3.hog"), 0, "%s", out);
    cr_assert(strstr(out, "c.hgd: cache of d.vw read with other options (--feature-names 0 now, 1 then): rebuilt"),
              "%s", out);
    cr_assert_eq(hog("info c3.hog"), 0, "%s", out);
    cr_assert_null(strstr(out, "named features"), "%s", out);
    cr_assert_eq(hog("info hgd.hog"), 0, "%s", out);
    cr_assert(strstr(out, "named features"), "%s", out);
    /* the text streamed into its first epoch keeps them too */
    cr_assert_eq(hog("train d.vw --threads 1 -b 12 --feature-names -q -o s.hog"), 0, "%s", out);
    cr_assert_eq(hog("export s.hog"), 0, "%s", out);
    cr_assert(strstr(out, "\nu^age 1 ") && strstr(out, "\nw^w"), "%s", out);
}

/* A warm start keeps the initial model's names and adds the new data's. */
Test(cli, a_warm_start_keeps_the_names_and_adds_the_new_ones)
{
    write_file("a.csv", "y,age,height\n1,30,1.8\n0,40,1.6\n1,35,1.7\n0,50,1.5\n");
    cr_assert_eq(hog("train a.csv --threads 1 -o a.hog -q"), 0, "%s", out);
    write_file("b.csv", "y,age,height,weight\n1,31,1.8,70\n0,41,1.6,90\n");
    cr_assert_eq(hog("train b.csv --threads 1 -i a.hog -o b.hog -q"), 0, "%s", out);
    cr_assert_eq(hog("info b.hog"), 0, "%s", out);
    cr_assert(strstr(out, "named features     3 of 3: 0=age 1=height 2=weight\n"), "%s", out);
    /* the same column under another name: both kept */
    write_file("c.csv", "y,years,height\n1,31,1.8\n0,41,1.6\n");
    cr_assert_eq(hog("train c.csv --threads 1 -i b.hog -o c.hog -q"), 0, "%s", out);
    cr_assert_eq(hog("info c.hog"), 0, "%s", out);
    cr_assert(strstr(out, "named features     3 of 3: 0=age|years 1=height 2=weight\n"), "%s", out);
    /* data without names: the model's stay */
    write_file("d.csv", "1,31,1.8\n0,41,1.6\n");
    cr_assert_eq(hog("train d.csv --threads 1 -i c.hog -o d.hog -q"), 0, "%s", out);
    cr_assert_eq(hog("info d.hog"), 0, "%s", out);
    cr_assert(strstr(out, "named features     3 of 3: 0=age|years 1=height 2=weight\n"), "%s", out);
}

/* The whole of a file of the scratch folder, malloc'd (*len its size). */
static char *slurp_bytes(const char *name, size_t *len)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s missing", name);
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    cr_assert_geq(n, 0);
    rewind(f);
    char *b = malloc((size_t)n + 1);
    cr_assert_not_null(b);
    *len = fread(b, 1, (size_t)n, f);
    fclose(f);
    return b;
}

/* Each parser thread keeps the names it meets and the sets are merged:
 * text cut into many chunks gives the same .hgd, names and all, on one
 * thread and on four. */
Test(cli, feature_names_do_not_depend_on_the_parser_threads)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/big.vw", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    srand(9);
    for (int i = 0; i < 60000; i++) /* about 2.5 MB: chunks of 1 MiB under --mem-limit 4M */
        fprintf(f, "%d |u u%d |w w%d w%d:0.5 w%d | c%d\n", rand() % 2 ? 1 : -1, rand() % 3000, rand() % 5000,
                rand() % 5000, rand() % 5000, rand() % 9);
    fclose(f);
    cr_assert_eq(hog("convert big.vw -b 10 --feature-names --parse-threads 1 --mem-limit 4M -o one.hgd -q"), 0, "%s",
                 out);
    cr_assert_eq(hog("convert big.vw -b 10 --feature-names --parse-threads 4 --mem-limit 4M -o four.hgd -q"), 0, "%s",
                 out);
    size_t a, b;
    char *x = slurp_bytes("one.hgd", &a), *y = slurp_bytes("four.hgd", &b);
    cr_assert(a == b && memcmp(x, y, a) == 0, "one thread's .hgd and four's differ");
    uint32_t version;
    memcpy(&version, x + 8, 4);
    cr_assert_eq(version, 7, "with feature names, and the hash bits (-b 10)");
    uint32_t bits;
    memcpy(&bits, x + 300, 4);
    cr_assert_eq(bits, 10);
    free(x);
    free(y);
}

/* LIBFFM text converts to a .hgd that keeps its fields, which info
 * counts; --format ffm reads it under any name; a linear model trains on
 * it, reading the global indices; a bad triple is named by its place. */
Test(cli, ffm_converts_with_its_fields_and_trains_linear)
{
    char *text = malloc(64 * 1024);
    cr_assert_not_null(text);
    size_t n = 0;
    srand(33);
    for (int i = 0; i < 600; i++) { /* field f's values are indices 10 f .. 10 f + 9 */
        const int a = rand() % 10, b = rand() % 10, c = rand() % 10;
        n += (size_t)snprintf(text + n, 64 * 1024 - n, "%d 0:%d:1 1:%d:1 2:%d:1\n", a < 5, a, 10 + b, 20 + c);
    }
    write_file("clicks.ffm", text);
    write_file("clicks.txt", text);
    free(text);
    cr_assert_eq(hog("info clicks.ffm"), 0, "%s", out);
    cr_assert(strstr(out, "LIBFFM text") && strstr(out, "fields             3\n"), "%s", out);
    cr_assert_eq(hog("convert clicks.ffm -o clicks.hgd -q"), 0, "%s", out);
    cr_assert_eq(hog("info clicks.hgd"), 0, "%s", out);
    cr_assert(strstr(out, "binary dataset") && strstr(out, "rows               600\n") &&
                  strstr(out, "fields             3\n"),
              "%s", out);
    cr_assert_eq(hog("convert clicks.txt --format ffm -o txt.hgd -q"), 0, "%s", out);
    size_t a, b;
    char *x = slurp_bytes("clicks.hgd", &a), *y = slurp_bytes("txt.hgd", &b);
    cr_assert(a == b && memcmp(x, y, a) == 0, "the same rows and fields whatever the name");
    uint32_t version;
    memcpy(&version, x + 8, 4);
    cr_assert_eq(version, 6, "a file with fields is version 6");
    free(x);
    free(y);

    /* the label is field 0's value below 5: a linear model learns it */
    cr_assert_eq(hog("train clicks.hgd --loss logistic --epochs 20 --threads 1 -o m.hog --report r.json -q"), 0,
                 "%s", out);
    char *report = slurp("r.json");
    const char *acc = strstr(report, "\"accuracy\": ");
    cr_assert_not_null(acc, "%s", report);
    cr_assert_gt(strtod(acc + 12, NULL), 0.95, "%s", report);
    cr_assert_eq(hog("train clicks.ffm --loss logistic --epochs 2 --threads 1 -o m2.hog -q"), 0, "%s", out);

    write_file("plain.svm", "1 1:1\n0 2:1\n");
    cr_assert_eq(hog("info plain.svm"), 0, "%s", out);
    cr_assert(strstr(out, "fields             none\n"), "%s", out);
    write_file("bad.ffm", "1 0:1:1\n0 1:2:1 x:3:1\n");
    cr_assert_eq(hog("info bad.ffm"), 1, "%s", out);
    cr_assert(strstr(out, "bad.ffm:2:9: expected a field number before ':', found 'x:3:1'"), "%s", out);
}

Test(cli, a_factorisation_machine_trains_predicts_and_exports)
{
    /* field 0's value and field 1's interact: the label is 1 when exactly
     * one of them is odd, which only their factors can learn */
    write_xor("xor.ffm", XOR_LIBFFM, 6000, 35, 0, 0);
    cr_assert_eq(hog("train xor.ffm --model fm --epochs 15 --threads 1 -o fm.hog --holdout 0.2 --report r.json -q"),
                 0, "%s", out);
    char *report = slurp("r.json");
    const char *acc = strstr(report, "\"accuracy\": ");
    cr_assert_not_null(acc, "%s", report);
    cr_assert_gt(strtod(acc + 12, NULL), 0.98, "%s", report);
    cr_assert_eq(hog("info fm.hog"), 0, "%s", out);
    cr_assert(strstr(out, "factorisation machine, 4 latent factors a feature") &&
                  strstr(out, "adagrad schedule") && strstr(out, "plain update") && strstr(out, "l2 0.0001"),
              "%s", out);
    cr_assert_eq(hog("predict fm.hog xor.ffm -o p.txt -q"), 0, "%s", out);
    cr_assert_eq(hog("predict fm.hog xor.ffm --output-format text --probabilities -o pp.txt -q"), 0, "%s", out);
    cr_assert_eq(hog("export fm.hog -o w.txt -q"), 0, "%s", out);
    char *w = slurp("w.txt");
    cr_assert(strncmp(w, "bias 1 ", 7) == 0 && strstr(w, "\n0 1 ") && strstr(w, "\n0 v4 "), "%s", w);
    cr_assert_null(strstr(w, "bias v"), "%s", w);
    cr_assert_eq(hog("train xor.ffm --model fm --factors 300 -o x.hog -q"), 2, "%s", out);
    cr_assert(strstr(out, "--factors: expected a whole number from 1 to 256, found '300'"), "%s", out);
    cr_assert_eq(hog("train xor.ffm --model trees -o x.hog -q"), 2, "%s", out);
    cr_assert(strstr(out, "--model: expected linear, fm, ffm or mf, found 'trees'"), "%s", out);
    cr_assert_eq(hog("train xor.ffm --model fm --normalized 1 -o x.hog -q"), 1, "%s", out);
    cr_assert(strstr(out, "the plain or the AdaGrad update: set --normalized 0 (AdaGrad: --schedule adagrad)"), "%s", out);
    cr_assert(!exists("x.hog"));
}

Test(cli, a_field_aware_factorisation_machine_trains_on_fields_and_says_what_it_needs)
{
    /* the same cross of two fields, in LIBFFM text and as Vowpal Wabbit
     * namespaces (which --model ffm reads as fields): the same rows */
    write_xor("xor.ffm", XOR_LIBFFM, 6000, 36, 0, 0);
    write_xor("xor.vw", XOR_VW, 6000, 36, 0, 0);
    cr_assert_eq(hog("train xor.ffm --model ffm --epochs 12 --threads 1 -o ffm.hog --holdout 0.2 --report r.json -q"),
                 0, "%s", out);
    char *report = slurp("r.json");
    const char *acc = strstr(report, "\"accuracy\": ");
    cr_assert_not_null(acc, "%s", report);
    cr_assert_gt(strtod(acc + 12, NULL), 0.98, "%s", report);
    cr_assert_eq(hog("info ffm.hog"), 0, "%s", out);
    cr_assert(strstr(out, "field-aware factorisation machine, 4 latent factors a feature for each of 2 fields") &&
                  strstr(out, "l2 0.00020") && strstr(out, "of 160\n"), /* 1 over the ~4,800 rows trained */
              "%s", out);
    cr_assert_eq(hog("predict ffm.hog xor.ffm -o p.txt"), 0, "%s", out);
    cr_assert(strstr(out, "accuracy 0.9") || strstr(out, "accuracy 1.0000"), "%s", out);
    cr_assert_eq(hog("export ffm.hog -o w.txt -q"), 0, "%s", out);
    char *w = slurp("w.txt");
    cr_assert(strncmp(w, "bias 1 ", 7) == 0 && strstr(w, "\n0 field1.v4 ") && strstr(w, "\n19 field0.v1 "), "%s", w);
    cr_assert_eq(hog("train xor.vw --model ffm --epochs 12 --threads 1 -o vw.hog --holdout 0.2 --report r2.json -q"),
                 0, "%s", out);
    report = slurp("r2.json");
    acc = strstr(report, "\"accuracy\": ");
    cr_assert(acc && strtod(acc + 12, NULL) > 0.98, "%s", report);
    cr_assert_eq(hog("predict vw.hog xor.vw -o p2.txt -q"), 0, "%s", out);
    /* libsvm text has no fields: neither trains nor is scored, each saying so */
    write_file("plain.svm", "1 1:1 2:1\n0 2:1 3:1\n");
    cr_assert_eq(hog("train plain.svm --model ffm -o x.hog -q"), 1, "%s", out);
    cr_assert(strstr(out, "--model ffm: the training data has no fields"), "%s", out);
    cr_assert(!exists("x.hog"));
    cr_assert_eq(hog("predict ffm.hog plain.svm -o x.txt -q"), 1, "%s", out);
    cr_assert(strstr(out, "plain.svm: the text has no fields"), "%s", out);
    cr_assert(!exists("x.txt"));
    /* a warm start goes on with the model's kind */
    cr_assert_eq(hog("train xor.ffm -i ffm.hog --epochs 1 --threads 1 -o warm.hog -q"), 0, "%s", out);
    cr_assert_eq(hog("info warm.hog"), 0, "%s", out);
    cr_assert(strstr(out, "field-aware"), "%s", out);
    cr_assert_eq(hog("train xor.ffm -i ffm.hog --model fm --epochs 1 -o x.hog -q"), 1, "%s", out);
    cr_assert(strstr(out, "a run goes on with the model's kind"), "%s", out);
    cr_assert_eq(hog("train xor.ffm --model ffm --l2 2/rows --epochs 1 --threads 1 -o l.hog -q"), 0, "%s", out);
    cr_assert_eq(hog("info l.hog"), 0, "%s", out);
    cr_assert(strstr(out, "l2 0.000333333"), "%s", out);
    cr_assert_eq(hog("train xor.ffm --l2 2/row -o x.hog -q"), 2, "%s", out);
    cr_assert(strstr(out, "--l2: expected a number"), "%s", out);
}

Test(cli, crosses_of_namespaces_train_predict_and_say_what_they_need)
{
    /* namespace a's feature and b's interact: the label is 1 when exactly
     * one of them is odd, which only the weight of their pair learns */
    write_xor("xor.vw", XOR_VW, 5000, 37, 0, 0);
    cr_assert_eq(hog("train xor.vw --epochs 5 --threads 1 -o lin.hog --holdout 0.2 --report r0.json -q"), 0, "%s", out);
    char *report = slurp("r0.json");
    const char *acc = strstr(report, "\"accuracy\": ");
    cr_assert(acc && strtod(acc + 12, NULL) < 0.6, "%s", report);
    cr_assert_eq(hog("train xor.vw --quadratic ab --quadratic ac --cross-bits 16 --epochs 5 --threads 1 -o q.hog "
                     "--holdout 0.2 --report r.json -q"),
                 0, "%s", out);
    report = slurp("r.json");
    acc = strstr(report, "\"accuracy\": ");
    cr_assert(acc && strtod(acc + 12, NULL) > 0.98, "%s", report);
    cr_assert_eq(hog("info q.hog"), 0, "%s", out);
    cr_assert(strstr(out, "crosses            ab,ac, hashed into 2^16 features after the data's"), "%s", out);
    /* the penalty follows the crosses unless given: two features a row and
     * one cross, 1.5 times the default's */
    cr_assert(strstr(out, "l2 1.5e-06,"), "%s", out);
    cr_assert_eq(hog("train xor.vw --quadratic ab --cross-bits 16 --epochs 1 --threads 1 --l2 1e-6 -o g.hog -q"), 0,
                 "%s", out);
    cr_assert_eq(hog("info g.hog"), 0, "%s", out);
    cr_assert(strstr(out, "l2 1e-06,"), "%s", out);
    cr_assert_eq(hog("predict q.hog xor.vw -o p.txt"), 0, "%s", out);
    cr_assert(strstr(out, "accuracy 0.9") || strstr(out, "accuracy 1.0000"), "%s", out);
    /* a warm start keeps them without being told */
    cr_assert_eq(hog("train xor.vw -i q.hog --epochs 1 --threads 1 -o w.hog -q"), 0, "%s", out);
    cr_assert_eq(hog("info w.hog"), 0, "%s", out);
    cr_assert(strstr(out, "crosses            ab,ac"), "%s", out);
    write_file("plain.svm", "1 1:1 2:1\n-1 2:1 3:1\n");
    cr_assert_eq(hog("train plain.svm --interactions ab -o x.hog -q"), 1, "%s", out);
    cr_assert(strstr(out, "--interactions \"ab\" names fields, and the training data has none"), "%s", out);
    cr_assert_eq(hog("train xor.vw --interactions abc -o x.hog -q"), 1, "%s", out);
    cr_assert(strstr(out, "--interactions \"abc\": at byte 0, expected a pair of two bytes"), "%s", out);
    cr_assert_eq(hog("train xor.vw --interactions ab --model fm -o x.hog -q"), 1, "%s", out);
    cr_assert(strstr(out, "crosses are for a linear or softmax model"), "%s", out);
    cr_assert(!exists("x.hog"));
}

/* --save-every: rows or seconds, -o a file; one pass takes snapshots, a run
 * of several epochs says it takes none. */
Test(cli, save_every_is_rows_or_seconds_into_a_model_file)
{
    write_separable("t.svm", 30000, 5, 0);
    static const char *const bad[] = {"0", "5x", "-3", "0s", "s"};
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(hog("train t.svm -o m.hog --epochs 1 --save-every %s", bad[i]), 2, "--save-every %s: %s", bad[i],
                     out);
        cr_assert(strstr(out, "--save-every"), "%s", out);
    }
    cr_assert_eq(hog("train t.svm -o /dev/null --epochs 1 --save-every 100"), 2, "%s", out);
    cr_assert(strstr(out, "--save-every: -o /dev/null is not a file"), "%s", out);
    cr_assert_eq(hog("train t.svm --cv 3 --save-every 100"), 2, "%s", out);
    cr_assert(strstr(out, "not for --cv"), "%s", out);
    cr_assert_eq(hog("train t.svm -o m.hog --epochs 1 --threads 2 --save-every 5000"), 0, "%s", out);
    cr_assert(strstr(out, "snapshot after 16384 rows"), "%s", out);
    cr_assert_eq(hog("train t.svm -o m.hog --epochs 1 --threads 2 --save-every 0.001s"), 0, "%s", out);
    cr_assert(strstr(out, "snapshot after 16384 rows"), "%s", out);
    cr_assert_eq(hog("train t.svm -o m.hog --epochs 2 --holdout 0 --save-every 5000"), 0, "%s", out);
    cr_assert(strstr(out, "no snapshots are taken: they are a run in one pass's (one epoch over text), and this run "
                          "keeps its data set (more than one epoch)"), "%s", out);
    cr_assert(!strstr(out, "snapshot after"), "%s", out);
}
