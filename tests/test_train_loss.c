/* test_train_loss.c: losses and their gradients against finite differences, softmax, parameter checks. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>

#include "train/train.h"

static double numeric_grad(hog_loss loss, float m, float y)
{
    const float h = 1e-2f;
    float lp, lm;
    hog_loss_grad(loss, m + h, y, &lp);
    hog_loss_grad(loss, m - h, y, &lm);
    return ((double)lp - (double)lm) / (2.0 * (double)h);
}

Test(loss, logistic_gradient_matches_finite_differences)
{
    for (float m = -8.0f; m <= 8.0f; m += 0.37f)
        for (int s = -1; s <= 1; s += 2) {
            float v, y = (float)s;
            double g = hog_loss_grad(HOG_LOSS_LOGISTIC, m, y, &v);
            cr_assert(fabs(g - numeric_grad(HOG_LOSS_LOGISTIC, m, y)) < 1e-3, "m=%g y=%g g=%g", (double)m, (double)y, g);
            cr_assert(fabs((double)v - log1p(exp(-(double)(y * m)))) < 1e-5);
        }
}

Test(loss, logistic_is_finite_for_huge_margins)
{
    float v;
    float g = hog_loss_grad(HOG_LOSS_LOGISTIC, 1e4f, -1.0f, &v);
    cr_assert(isfinite(v) && fabsf(v - 1e4f) < 1.0f);
    cr_assert(fabsf(g - 1.0f) < 1e-6f);
    g = hog_loss_grad(HOG_LOSS_LOGISTIC, 1e4f, 1.0f, &v);
    cr_assert(v >= 0.0f && v < 1e-6f && fabsf(g) < 1e-6f);
}

Test(loss, hinge_gradient_matches_finite_differences_off_the_kink)
{
    for (float m = -3.05f; m <= 3.0f; m += 0.25f)
        for (int s = -1; s <= 1; s += 2) {
            float v, y = (float)s;
            if (fabsf(y * m - 1.0f) < 0.05f)
                continue;
            double g = hog_loss_grad(HOG_LOSS_HINGE, m, y, &v);
            cr_assert(fabs(g - numeric_grad(HOG_LOSS_HINGE, m, y)) < 1e-3);
            cr_assert(fabsf(v - fmaxf(0.0f, 1.0f - y * m)) < 1e-6f);
        }
}

Test(loss, squared_gradient_matches_finite_differences)
{
    for (float m = -5.0f; m <= 5.0f; m += 0.5f) {
        float v;
        double g = hog_loss_grad(HOG_LOSS_SQUARED, m, 1.5f, &v);
        cr_assert(fabs(g - numeric_grad(HOG_LOSS_SQUARED, m, 1.5f)) < 1e-3);
        cr_assert(fabsf(v - 0.5f * (m - 1.5f) * (m - 1.5f)) < 1e-5f);
    }
}

Test(loss, softmax_cross_entropy_gradient_matches_finite_differences)
{
    const float base[4] = {0.3f, -1.2f, 2.0f, 0.1f};
    const int y = 2;
    float p[4];
    for (int k = 0; k < 4; k++)
        p[k] = base[k];
    float lse = hog_softmax(p, 4);
    double sum = 0;
    for (int k = 0; k < 4; k++)
        sum += (double)p[k];
    cr_assert(fabs(sum - 1.0) < 1e-6);
    for (int k = 0; k < 4; k++) {
        float up[4], dn[4];
        for (int i = 0; i < 4; i++)
            up[i] = dn[i] = base[i];
        const float h = 1e-2f;
        up[k] += h;
        dn[k] -= h;
        float lu = hog_softmax(up, 4) - (base[y] + (k == y ? h : 0.0f));
        float ld = hog_softmax(dn, 4) - (base[y] - (k == y ? h : 0.0f));
        double numeric = ((double)lu - (double)ld) / (2.0 * (double)h);
        double analytic = (double)p[k] - (k == y ? 1.0 : 0.0);
        cr_assert(fabs(numeric - analytic) < 1e-3, "class %d: %g vs %g", k, numeric, analytic);
    }
    cr_assert(isfinite(lse));
}

Test(loss, softmax_does_not_overflow)
{
    float s[3] = {1000.0f, 999.0f, -1000.0f};
    float lse = hog_softmax(s, 3);
    cr_assert(isfinite(lse) && fabsf(lse - 1000.3133f) < 1e-3f);
    cr_assert(fabsf(s[0] - 0.7310586f) < 1e-5f && s[2] == 0.0f);
}

Test(params, defaults_pass_the_check_and_bad_fields_are_named)
{
    hog_train_params p = hog_train_params_default();
    const char *field = "x";
    cr_assert_eq(hog_train_params_check(&p, &field), 0);
    cr_assert_null(field);
    p.step = -1;
    cr_assert_eq(hog_train_params_check(&p, &field), HOG_EPARAM);
    cr_assert_str_eq(field, "step");
    p = hog_train_params_default();
    p.holdout = 1.0;
    cr_assert_eq(hog_train_params_check(&p, &field), HOG_EPARAM);
    cr_assert_str_eq(field, "holdout");
    p = hog_train_params_default();
    p.epochs = 0;
    cr_assert_eq(hog_train_params_check(&p, &field), HOG_EPARAM);
    cr_assert_str_eq(field, "epochs");
}

Test(params, names_round_trip)
{
    for (int l = HOG_LOSS_LOGISTIC; l <= HOG_LOSS_SOFTMAX; l++) {
        hog_loss back;
        cr_assert_eq(hog_loss_parse(hog_loss_name((hog_loss)l), &back), 0);
        cr_assert_eq((int)back, l);
    }
    hog_loss x;
    cr_assert_eq(hog_loss_parse("huber", &x), HOG_EPARAM);
    hog_schedule s;
    cr_assert_eq(hog_schedule_parse("invscaling", &s), 0);
    cr_assert_eq(s, HOG_SCHEDULE_INVSCALING);
    cr_assert_str_eq(hog_strerror(HOG_ECHECKSUM), "checksum mismatch");
    cr_assert_str_eq(hog_strerror(-2), "No such file or directory");
}
