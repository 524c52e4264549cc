/* test_api.c: the library's boundary with a linked program: hog_init, the file probe and the parameter structs' fixed layout. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hogtrain.h>

#include "test_scratch.h"

static void setup(void)
{
    scratch_make("api");
}

TestSuite(api, .init = setup, .fini = scratch_remove);

static const char *at(const char *name)
{
    static char path[4][256];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
    return p;
}

static void write_text(const char *name, const char *text)
{
    FILE *f = fopen(at(name), "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static hog_file_kind probe(const char *name)
{
    hog_file_kind kind = (hog_file_kind)-1;
    char err[256] = "";
    cr_assert_eq(hog_file_probe(at(name), &kind, err, sizeof(err)), 0, "%s: %s", name, err);
    return kind;
}

Test(api, init_passes_on_the_cpu_the_tests_run_on)
{
    /* The tests are built like the library: whatever they run on, it has. */
    cr_assert_eq(hog_init(), 0);
    cr_assert_eq(hog_init(), 0, "a second call gives the same");
    cr_assert_str_eq(hog_strerror(HOG_ECPU), "this CPU lacks instructions the library was built to use");
}

Test(api, the_probe_tells_each_kind_of_file_by_its_magic)
{
    char err[512] = "";
    char lines[2048] = "";
    for (int i = 0; i < 60; i++)
        snprintf(lines + strlen(lines), sizeof(lines) - strlen(lines), "%d 1:%d 2:1\n", i % 2 ? 1 : -1, i % 7);
    write_text("d.svm", lines);
    cr_assert_eq(hog_dataset_convert(at("d.svm"), NULL, at("d.hgd"), NULL, err, sizeof(err)), 0, "%s", err);

    hog_dataset *ds;
    cr_assert_eq(hog_dataset_open(at("d.hgd"), NULL, &ds, err, sizeof(err)), 0, "%s", err);
    hog_train_params p = hog_train_params_default();
    p.threads = 1;
    p.epochs = 1;
    p.bind = 0;
    hog_trainer *t;
    hog_model *m;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_run(t, ds, NULL, &m, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_model_save(m, at("m.hog")), 0);
    hog_model_free(m);
    hog_trainer_free(t);
    hog_dataset_close(ds);

    lines[0] = '\0';
    for (int i = 0; i < 60; i++)
        snprintf(lines + strlen(lines), sizeof(lines) - strlen(lines), "u%d i%d %d\n", i % 6, i % 5, 1 + i % 5);
    write_text("r.txt", lines);
    hog_ratings *r;
    cr_assert_eq(hog_ratings_open(at("r.txt"), 0, &r, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_ratings_save(r, at("r.hgr")), 0);
    hog_mf_params mp = hog_mf_params_default();
    mp.rank = 2;
    mp.epochs = 1;
    mp.threads = 1;
    mp.bind = 0;
    hog_mf_model *mf;
    cr_assert_eq(hog_mf_train(&mp, r, NULL, &mf, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_mf_save(mf, at("m.mf")), 0);
    hog_mf_free(mf);
    hog_ratings_close(r);

    cr_assert_eq(probe("d.svm"), HOG_FILE_TEXT);
    cr_assert_eq(probe("d.hgd"), HOG_FILE_DATASET);
    cr_assert_eq(probe("m.hog"), HOG_FILE_MODEL);
    cr_assert_eq(probe("r.txt"), HOG_FILE_TEXT);
    cr_assert_eq(probe("r.hgr"), HOG_FILE_RATINGS);
    cr_assert_eq(probe("m.mf"), HOG_FILE_MF_MODEL);
}

Test(api, short_and_foreign_files_are_text)
{
    write_text("empty", "");
    write_text("short", "HOGDATA"); /* the magic less its NUL */
    write_text("seven", "HOGRATE");
    write_text("model-ish", "HOGMODEx and more");
    cr_assert_eq(probe("empty"), HOG_FILE_TEXT);
    cr_assert_eq(probe("short"), HOG_FILE_TEXT);
    cr_assert_eq(probe("seven"), HOG_FILE_TEXT);
    cr_assert_eq(probe("model-ish"), HOG_FILE_TEXT);
}

Test(api, a_pipe_is_not_read_and_is_text)
{
    /* No writer: opening it for a read would wait, and reading would take
     * bytes its reader could not have again. */
    cr_assert_eq(mkfifo(at("fifo"), 0600), 0);
    cr_assert_eq(probe("fifo"), HOG_FILE_TEXT);
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    cr_assert_eq(write(fds[1], "HOGMODEL", 8), 8);
    char self[64];
    snprintf(self, sizeof(self), "/proc/self/fd/%d", fds[0]);
    hog_file_kind kind;
    cr_assert_eq(hog_file_probe(self, &kind, NULL, 0), 0);
    cr_assert_eq(kind, HOG_FILE_TEXT);
    char back[8];
    cr_assert_eq(read(fds[0], back, 8), 8, "the bytes are still in the pipe");
    cr_assert_eq(memcmp(back, "HOGMODEL", 8), 0);
    close(fds[0]);
    close(fds[1]);
}

Test(api, probe_errors_name_the_file)
{
    hog_file_kind kind = HOG_FILE_MODEL;
    char err[256] = "";
    cr_assert_eq(hog_file_probe(at("missing"), &kind, err, sizeof(err)), -ENOENT);
    cr_assert_eq(kind, HOG_FILE_TEXT);
    cr_assert(strstr(err, "/missing: No such file or directory"), "%s", err);
    cr_assert_eq(hog_file_probe(dir, &kind, err, sizeof(err)), -EISDIR);
    cr_assert(strstr(err, "Is a directory"), "%s", err);
    cr_assert_eq(hog_file_probe(at("missing"), &kind, NULL, 0), -ENOENT, "the detail is optional");
}

Test(api, kind_names)
{
    cr_assert_str_eq(hog_file_kind_name(HOG_FILE_TEXT), "text");
    cr_assert_str_eq(hog_file_kind_name(HOG_FILE_DATASET), "dataset");
    cr_assert_str_eq(hog_file_kind_name(HOG_FILE_MODEL), "model");
    cr_assert_str_eq(hog_file_kind_name(HOG_FILE_MF_MODEL), "mf_model");
    cr_assert_str_eq(hog_file_kind_name(HOG_FILE_RATINGS), "ratings");
    cr_assert_str_eq(hog_file_kind_name(HOG_FILE_CHECKPOINT), "checkpoint");
    cr_assert_str_eq(hog_file_kind_name(HOG_FILE_MF_CHECKPOINT), "mf_checkpoint");
    cr_assert_str_eq(hog_file_kind_name((hog_file_kind)99), "unknown");
}

/* The parameter structs keep their size across minor versions, and a new
 * field's zero is the old behaviour: so the defaults leave the reserved
 * area zero. */
static int zero(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return 0;
    return 1;
}

Test(api, params_structs_have_a_fixed_size_and_zeroed_room_to_grow)
{
    cr_assert_eq(sizeof(hog_read_params), 128);
    cr_assert_eq(sizeof(hog_train_params), 256);
    cr_assert_eq(sizeof(hog_mf_params), 128);
    hog_read_params rp = hog_read_params_default();
    hog_train_params tp = hog_train_params_default();
    hog_mf_params mp = hog_mf_params_default();
    cr_assert(zero(rp.reserved, sizeof(rp.reserved)));
    cr_assert(zero(tp.reserved, sizeof(tp.reserved)));
    cr_assert_eq(mp.early_stop, 0u, "early_stop took hog_mf_params' reserved area in 0.2: zero by default");
    /* The reserved area ends the struct: nothing lies after it. */
    cr_assert_eq(offsetof(hog_read_params, reserved) + sizeof(rp.reserved), sizeof(rp));
    cr_assert_eq(offsetof(hog_train_params, reserved) + sizeof(tp.reserved), sizeof(tp));
    cr_assert_eq(offsetof(hog_mf_params, early_stop) + sizeof(mp.early_stop), sizeof(mp));
}
