/* test_command.h: for end-to-end tests: the hogtrain command run in the scratch folder with its output captured, and files written and read there. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TEST_COMMAND_H
#define HOG_TEST_COMMAND_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hogtrain.h>

#include "test_scratch.h"

/* What the last command printed (stdout and stderr). */
static char out[262144];

/* Runs "ENV BUILD/hogtrain ARGS" in the scratch folder (env may be NULL: the
 * environment as it is, HOG_TOPOLOGY removed); returns its exit status. */
static inline int hog_env(const char *env, const char *args)
{
    const char *build = getenv("HOG_BUILD");
    char bin[512], cmd[8192];
    snprintf(bin, sizeof(bin), "%s/hogtrain", build ? build : "build");
    cr_assert_eq(access(bin, X_OK), 0, "%s is not built", bin);
    snprintf(cmd, sizeof(cmd), "cd %s && %s %s %s 2>&1", dir, env ? env : "env -u HOG_TOPOLOGY", bin, args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, sizeof(out) - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* hog_env with no change to the environment and printf-style arguments. */
static inline int hog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int hog(const char *fmt, ...)
{
    char args[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof(args), fmt, ap);
    va_end(ap);
    return hog_env(NULL, args);
}

static inline void write_file(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static inline int exists(const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* A file of the scratch folder, in a buffer the next call reuses. */
static inline char *slurp(const char *name)
{
    static char buf[65536];
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s missing", name);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

#endif /* HOG_TEST_COMMAND_H */
