/* test_cli_keygen.c: end-to-end tests of `hogtrain keygen`: a private key file made and replaced, and the usage and file errors. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "test_command.h"

static void setup(void)
{
    scratch_make("clikeygen");
}

TestSuite(cli_keygen, .init = setup, .fini = scratch_remove);

static mode_t mode_of(const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "%s", path);
    return st.st_mode & 07777;
}

Test(cli_keygen, makes_a_private_key_and_replaces_it)
{
    cr_assert_eq(hog("keygen key"), 0, "%s", out);
    cr_assert(strstr(out, "key: a new secret key (mode 0600)"), "%s", out);
    cr_assert_eq(mode_of("key"), 0600, "mode %o", mode_of("key"));
    char first[61];
    const char *text = slurp("key");
    cr_assert_eq(strlen(text), 60u, "%s", text);
    memcpy(first, text, sizeof(first));
    cr_assert_eq(strncmp(first, "hogtrain-secret-v1 ", 19), 0, "%s", first);

    /* Run again, under no umask, over a key someone made readable: a new
     * key, 0600 again, and nothing printed with -q. */
    char path[256];
    snprintf(path, sizeof(path), "%s/key", dir);
    cr_assert_eq(chmod(path, 0644), 0);
    cr_assert_eq(hog_env("umask 000 && env -u HOG_TOPOLOGY", "keygen -q key"), 0, "%s", out);
    cr_assert_str_eq(out, "");
    cr_assert_eq(mode_of("key"), 0600, "mode %o", mode_of("key"));
    cr_assert_str_neq(slurp("key"), first);
    cr_assert_eq(strlen(slurp("key")), 60u);
}

Test(cli_keygen, usage)
{
    cr_assert_eq(hog("keygen"), 2, "%s", out);
    cr_assert(strstr(out, "hogtrain: keygen needs one FILE"), "%s", out);
    cr_assert(strstr(out, "usage: hogtrain keygen FILE"), "%s", out);
    cr_assert_eq(hog("keygen a b"), 2, "%s", out);
    cr_assert(!exists("a") && !exists("b"));
    cr_assert_eq(hog("keygen --bogus key"), 2, "%s", out);
    cr_assert(!exists("key"));
    cr_assert_eq(hog("keygen --help"), 0, "%s", out);
    cr_assert(strstr(out, "usage: hogtrain keygen FILE"), "%s", out);
    cr_assert_eq(hog("help"), 0, "%s", out);
    cr_assert(strstr(out, "keygen  FILE"), "%s", out);
}

Test(cli_keygen, a_missing_folder_or_a_fifo_fails_naming_the_path)
{
    cr_assert_eq(hog("keygen no/such/key"), 1, "%s", out);
    cr_assert(strstr(out, "hogtrain: no/such/key: cannot write the secret: No such file or directory"), "%s", out);
    char fifo[256];
    snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_eq(hog("keygen fifo"), 1, "%s", out);
    cr_assert(strstr(out, "hogtrain: fifo: cannot write the secret: not a regular file"), "%s", out);
    struct stat st;
    cr_assert_eq(lstat(fifo, &st), 0);
    cr_assert(S_ISFIFO(st.st_mode), "the FIFO was replaced");
}
