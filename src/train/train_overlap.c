/* train_overlap.c: how many segments ran beside a worker's, as the mean number in flight over its span (see train.h). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "train.h"

void hog_overlap_init(hog_overlap *c, double (*now)(void))
{
    pthread_mutex_init(&c->mu, NULL);
    c->now = now;
    c->inflight = 0;
    c->last = now();
    c->area = 0;
}

void hog_overlap_destroy(hog_overlap *c)
{
    pthread_mutex_destroy(&c->mu);
}

/* Adds d segments in flight; returns the area so far, and the time in *now. */
static double overlap_step(hog_overlap *c, int d, double *now)
{
    pthread_mutex_lock(&c->mu);
    double t = c->now();
    c->area += (double)c->inflight * (t - c->last);
    c->last = t;
    c->inflight = (unsigned)((int)c->inflight + d);
    double a = c->area;
    pthread_mutex_unlock(&c->mu);
    *now = t;
    return a;
}

double hog_overlap_enter(hog_overlap *c, double *t0)
{
    return overlap_step(c, +1, t0);
}

float hog_overlap_share(hog_overlap *c, double t0, double a0, unsigned members)
{
    double t1, a1 = overlap_step(c, -1, &t1);
    double mean = t1 > t0 ? (a1 - a0) / (t1 - t0) : 1.0;
    return 1.0f / (float)HOG_MIN(HOG_MAX(mean, 1.0), (double)(members ? members : 1));
}
