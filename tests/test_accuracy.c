/* test_accuracy.c: on LIBLINEAR's heart_scale, hogtrain's test accuracy is within 2 points of liblinear-train -s 0. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int run(const char *cmd, char *out, size_t len)
{
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, len - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

Test(accuracy, heart_scale_matches_liblinear)
{
    if (access("/usr/bin/liblinear-train", X_OK) != 0)
        cr_skip_test("liblinear-train is not installed (make test installs it)");
    const char *build = getenv("HOG_BUILD");
    char root[512], cmd[2048], out[8192];
    snprintf(root, sizeof(root), "%s/..", build ? build : "build");
    snprintf(cmd, sizeof(cmd), "sh %s/datasets/heart_scale.sh %s 2>&1", root, build ? build : "build");
    cr_assert_eq(run(cmd, out, sizeof(out)), 0, "%s", out);
    char dir[] = "/tmp/hog-acc-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    const char *data = "datasets/heart_scale";

    snprintf(cmd, sizeof(cmd),
             "cd %s && liblinear-train -q -s 0 %s/train.svm %s/ll.model && "
             "liblinear-predict %s/test.svm %s/ll.model %s/ll.out", root, data, dir, data, dir, dir);
    cr_assert_eq(run(cmd, out, sizeof(out)), 0, "%s", out);
    const char *a = strstr(out, "Accuracy = ");
    cr_assert_not_null(a, "%s", out);
    double liblinear = atof(a + 11) / 100.0;

    /* LIBLINEAR -s 0 minimises 1/2 |w|^2 + C sum(loss) with C = 1, that is
     * mean loss + 1/(2n) |w|^2: hogtrain's l2 = 1/n. */
    snprintf(cmd, sizeof(cmd), "cd %s && wc -l < %s/train.svm", root, data);
    cr_assert_eq(run(cmd, out, sizeof(out)), 0);
    double n = atof(out);
    snprintf(cmd, sizeof(cmd),
             "cd %s && %s/hogtrain train %s/train.svm --test %s/test.svm --l2 %.9g --epochs 50 --step 0.1 "
             "--decay 0.95 --threads 1 --bias 0 -o %s/m.hog --report %s/r.json -q && cat %s/r.json",
             root, build ? build : "build", data, data, 1.0 / n, dir, dir, dir);
    cr_assert_eq(run(cmd, out, sizeof(out)), 0, "%s", out);
    const char *t = strstr(out, "\"test\"");
    cr_assert_not_null(t, "%s", out);
    double ours = atof(strstr(t, "\"accuracy\": ") + 12);
    cr_log_info("heart_scale test accuracy: hogtrain %.4f, liblinear -s 0 %.4f", ours, liblinear);
    printf("heart_scale test accuracy: hogtrain %.4f, liblinear -s 0 %.4f\n", ours, liblinear);
    cr_assert_geq(ours, liblinear - 0.02, "hogtrain %.4f vs liblinear %.4f", ours, liblinear);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}
