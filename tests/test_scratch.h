/* test_scratch.h: a scratch folder per Criterion test (each test runs in its own process), made by the suite's .init and removed by its .fini, and damage done to a file in it. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TEST_SCRATCH_H
#define HOG_TEST_SCRATCH_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* dir/name, in one of four buffers that take turns (a call's result lasts
 * three more calls). */
static inline char *scratch_path(const char *name)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
    return buf[k];
}

/* Flips bit 4 of the byte at off in path (off < 0: from the end). */
static inline void flip_byte(const char *path, long off)
{
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0);
    struct stat st;
    fstat(fd, &st);
    if (off < 0)
        off += st.st_size;
    unsigned char c;
    cr_assert_eq(pread(fd, &c, 1, off), 1);
    c ^= 0x10;
    cr_assert_eq(pwrite(fd, &c, 1, off), 1);
    close(fd);
}

#endif /* HOG_TEST_SCRATCH_H */
