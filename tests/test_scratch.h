/* test_scratch.h: a scratch folder per Criterion test (each test runs in its own process), made by the suite's .init and removed by its .fini. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TEST_SCRATCH_H
#define HOG_TEST_SCRATCH_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

static char dir[64];

/* Makes /tmp/hog-NAME-XXXXXX into dir. */
static void scratch_make(const char *name)
{
    snprintf(dir, sizeof(dir), "/tmp/hog-%s-XXXXXX", name);
    cr_assert_not_null(mkdtemp(dir));
}

static void scratch_remove(void)
{
    char cmd[96];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

#endif /* HOG_TEST_SCRATCH_H */
