/* test_util_file.c: the shared helpers: atomic files (and hog_output, their public face), CRC-32, the seeded shuffle, error names. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

Test(util, crc32_matches_the_standard_check_value)
{
    cr_assert_eq(hog_crc32(0, "123456789", 9), 0xcbf43926u);
    /* Incremental equals one-shot. */
    cr_assert_eq(hog_crc32(hog_crc32(0, "1234", 4), "56789", 5), 0xcbf43926u);
}

Test(util, atomic_file_appears_whole_or_not_at_all)
{
    char dir[] = "/tmp/hog-util-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/out.bin", dir);
    cr_assert_eq(hog_write_file_atomic(path, "old", 3), 0);

    hog_atomic_file f;
    cr_assert_eq(hog_atomic_open(&f, path), 0);
    cr_assert_eq(hog_atomic_write(&f, "new contents", 12), 0);
    /* Until the commit the old file is what readers see. */
    FILE *r = fopen(path, "r");
    char buf[32] = "";
    cr_assert_eq(fread(buf, 1, sizeof(buf), r), 3u);
    fclose(r);
    cr_assert_str_eq(buf, "old");
    hog_atomic_abort(&f);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_size, 3);

    cr_assert_eq(hog_atomic_open(&f, path), 0);
    cr_assert_eq(hog_atomic_write(&f, "xxxx contents", 13), 0);
    cr_assert_eq(hog_atomic_pwrite(&f, "new!", 4, 0), 0);
    cr_assert_eq(hog_atomic_commit(&f), 0);
    r = fopen(path, "r");
    memset(buf, 0, sizeof(buf));
    cr_assert_eq(fread(buf, 1, sizeof(buf), r), 13u);
    fclose(r);
    cr_assert_str_eq(buf, "new! contents");

    char cmd[160];
    snprintf(cmd, sizeof(cmd), "test $(ls -A %s | wc -l) -eq 1 && rm -rf %s", dir, dir);
    cr_assert_eq(system(cmd), 0, "a temporary file was left behind");
}

/* A large output is handed to writeback as it grows, and rewriting bytes
 * already handed over (a header written last, at offset 0) still lands. */
Test(util, atomic_file_starts_writeback_as_it_grows)
{
    char dir[] = "/tmp/hog-util-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/big.bin", dir);
    const size_t piece = HOG_WRITEBACK_BYTES / 2;
    unsigned char *buf = malloc(piece);
    cr_assert_not_null(buf);
    hog_atomic_file f;
    cr_assert_eq(hog_atomic_open(&f, path), 0);
    for (unsigned k = 0; k < 3; k++) {
        memset(buf, 'a' + k, piece);
        cr_assert_eq(hog_atomic_write(&f, buf, piece), 0);
        cr_assert_eq(f.synced, k >= 1 ? 2 * (uint64_t)piece : 0, "after piece %u: synced %llu", k,
                     (unsigned long long)f.synced);
    }
    cr_assert_eq(hog_atomic_pwrite(&f, "HEAD", 4, 0), 0);
    cr_assert_eq(hog_atomic_commit(&f), 0);

    FILE *r = fopen(path, "rb");
    cr_assert_not_null(r);
    for (unsigned k = 0; k < 3; k++) {
        cr_assert_eq(fread(buf, 1, piece, r), piece);
        size_t i = k == 0 ? 4 : 0;
        if (k == 0)
            cr_assert_eq(memcmp(buf, "HEAD", 4), 0);
        for (; i < piece && buf[i] == 'a' + k; i++)
            ;
        cr_assert_eq(i, piece, "piece %u differs at byte %zu", k, i);
    }
    cr_assert_eq(fgetc(r), EOF);
    fclose(r);
    free(buf);
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

/* With O_DIRECT on, aligned writes go straight to the device; a write the
 * file system refuses that way (unaligned) is made buffered, and O_DIRECT
 * stays off. A file system without O_DIRECT (tmpfs) refuses to turn it on,
 * and the file is written buffered. Either way every byte lands. */
Test(util, atomic_file_direct_writes_land_and_fall_back)
{
    char dir[] = "/tmp/hog-util-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/direct.bin", dir);
    const size_t n = 2 * HOG_DIRECT_ALIGN;
    unsigned char *buf = hog_aligned_alloc(HOG_DIRECT_ALIGN, n + 8);
    cr_assert_not_null(buf);
    memset(buf, 'a', n);
    hog_atomic_file f;
    cr_assert_eq(hog_atomic_open(&f, path), 0);
    int rc = hog_atomic_direct(&f, 1);
    cr_assert(rc == 0 || rc == -EINVAL, "%s", hog_strerror(rc));
    cr_assert_eq(f.direct, rc == 0);
    cr_assert_eq(hog_atomic_pwrite(&f, buf, n, 0), 0);
    memcpy(buf + n + 1, "tail!", 5);
    cr_assert_eq(hog_atomic_pwrite(&f, buf + n + 1, 5, n), 0); /* unaligned everywhere */
    cr_assert_eq(f.direct, 0);
    cr_assert_eq(hog_atomic_commit(&f), 0);

    size_t len;
    unsigned char *got;
    cr_assert_eq(hog_read_file(path, &got, &len), 0);
    cr_assert_eq(len, n + 5);
    size_t i = 0;
    while (i < n && got[i] == 'a')
        i++;
    cr_assert_eq(i, n, "byte %zu differs", i);
    cr_assert_eq(memcmp(got + n, "tail!", 5), 0);
    hog_free(got);
    hog_free(buf);
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(util, atomic_open_in_a_missing_folder_fails_cleanly)
{
    hog_atomic_file f;
    cr_assert_eq(hog_atomic_open(&f, "/tmp/hog-no-such-dir/x/y.bin"), -2);
    hog_atomic_abort(&f);
}

/* A tool's output struct is set up as {.fd = -1} and aborted on every way
 * out, opened or not, committed or not. */
Test(util, atomic_abort_is_safe_unopened_and_after_a_commit)
{
    char dir[] = "/tmp/hog-util-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/out.txt", dir);
    hog_atomic_file f = {.fd = -1};
    hog_atomic_abort(&f);
    cr_assert_eq(hog_atomic_open(&f, path), 0);
    cr_assert_eq(hog_atomic_write(&f, "kept", 4), 0);
    cr_assert_eq(hog_atomic_commit(&f), 0);
    hog_atomic_abort(&f);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "the committed file stays");
    cr_assert_eq(st.st_size, 4);
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "test $(ls -A %s | wc -l) -eq 1 && rm -rf %s", dir, dir);
    cr_assert_eq(system(cmd), 0, "a temporary file was left behind");
}

/* hog_output: what a program linking the library writes with, whole or not at all. */
Test(util, output_appears_whole_on_commit_and_not_at_all_on_abort)
{
    char dir[] = "/tmp/hog-util-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/predictions.txt", dir);
    cr_assert_eq(hog_write_file_atomic(path, "old\n", 4), 0);

    hog_output *o;
    cr_assert_eq(hog_output_open(path, &o), 0);
    cr_assert_eq(hog_output_write(o, "0.25\n", 5), 0);
    hog_output_abort(o);
    unsigned char *got;
    size_t len;
    cr_assert_eq(hog_read_file(path, &got, &len), 0);
    cr_assert_eq(len, 4);
    cr_assert_eq(memcmp(got, "old\n", 4), 0, "an abandoned output leaves the file as it was");
    hog_free(got);

    mode_t mask = umask(022);
    cr_assert_eq(hog_output_open(path, &o), 0);
    for (int i = 0; i < 1000; i++)
        cr_assert_eq(hog_output_write(o, "0.25\n", 5), 0);
    cr_assert_eq(hog_output_commit(o), 0);
    umask(mask);
    cr_assert_eq(hog_read_file(path, &got, &len), 0);
    cr_assert_eq(len, 5000);
    cr_assert_eq(memcmp(got + 4995, "0.25\n", 5), 0);
    hog_free(got);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0644, "the permissions of a new file: %o", st.st_mode & 0777);
    hog_output_abort(NULL);

    char cmd[160];
    snprintf(cmd, sizeof(cmd), "test $(ls -A %s | wc -l) -eq 1 && rm -rf %s", dir, dir);
    cr_assert_eq(system(cmd), 0, "a temporary file was left behind");
}

Test(util, output_in_a_missing_folder_fails_cleanly)
{
    hog_output *o = (hog_output *)1;
    cr_assert_eq(hog_output_open("/tmp/hog-no-such-dir/x/y.txt", &o), -ENOENT);
    cr_assert_null(o);
}

/* A replaced file keeps its mode; a new one gets 0666 less the umask,
 * which the library reads without setting it. */
Test(util, output_keeps_the_mode_of_the_file_it_replaces)
{
    char dir[] = "/tmp/hog-util-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128], fresh[128];
    snprintf(path, sizeof(path), "%s/model.hog", dir);
    snprintf(fresh, sizeof(fresh), "%s/new.hog", dir);
    cr_assert_eq(hog_write_file_atomic(path, "old", 3), 0);
    cr_assert_eq(chmod(path, 0600), 0);
    cr_assert_eq(hog_write_file_atomic(path, "new", 3), 0);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);

    mode_t mask = umask(027);
    int rc = hog_write_file_atomic(fresh, "x", 1);
    umask(mask);
    cr_assert_eq(rc, 0);
    cr_assert_eq(stat(fresh, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0640, "mode %o", st.st_mode & 07777);
    unlink(path);
    unlink(fresh);
    rmdir(dir);
}

/* A private file is 0600 whatever the umask (none here, and one that takes
 * the owner's own bits) and whatever the mode of the file it replaces, and
 * its temporary file is 0600 before a byte is written. */
Test(util, private_file_is_0600_from_its_creation)
{
    char dir[] = "/tmp/hog-util-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/key", dir);
    cr_assert_eq(hog_write_file_atomic(path, "old", 3), 0);
    cr_assert_eq(chmod(path, 0644), 0);
    struct stat st;
    const mode_t masks[] = {0, 0377};
    for (unsigned i = 0; i < 2; i++) {
        mode_t mask = umask(masks[i]);
        hog_atomic_file f;
        int rc = hog_atomic_open_private(&f, path);
        umask(mask);
        cr_assert_eq(rc, 0);
        cr_assert_eq(fstat(f.fd, &st), 0);
        cr_assert_eq(st.st_mode & 07777, 0600, "temporary file mode %o", st.st_mode & 07777);
        cr_assert_eq(hog_atomic_write(&f, "new", 3), 0);
        cr_assert_eq(hog_atomic_commit(&f), 0);
        cr_assert_eq(stat(path, &st), 0);
        cr_assert_eq(st.st_mode & 07777, 0600, "mode %o under umask %o", st.st_mode & 07777, masks[i]);
        cr_assert_eq(st.st_size, 3);
    }
    unlink(path);
    rmdir(dir);
}

/* A device, FIFO or socket at the output path is refused and left as it
 * is; a folder gets -EISDIR; a symbolic link is replaced by the new file
 * and what it pointed to is untouched. */
Test(util, output_refuses_what_is_not_a_file_and_replaces_a_symlink)
{
    char dir[] = "/tmp/hog-util-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char fifo[128], sub[128], target[128], link[128];
    snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
    snprintf(sub, sizeof(sub), "%s/sub", dir);
    snprintf(target, sizeof(target), "%s/target", dir);
    snprintf(link, sizeof(link), "%s/link", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_eq(hog_write_file_atomic(fifo, "x", 1), HOG_ENOTFILE);
    struct stat st;
    cr_assert_eq(lstat(fifo, &st), 0);
    cr_assert(S_ISFIFO(st.st_mode), "the FIFO was replaced");
    hog_output *o = NULL;
    cr_assert_eq(hog_output_open("/dev/null", &o), HOG_ENOTFILE);
    cr_assert_null(o);
    cr_assert_eq(stat("/dev/null", &st), 0);
    cr_assert(S_ISCHR(st.st_mode));

    cr_assert_eq(mkdir(sub, 0700), 0);
    cr_assert_eq(hog_write_file_atomic(sub, "x", 1), -EISDIR);

    cr_assert_eq(hog_write_file_atomic(target, "kept", 4), 0);
    cr_assert_eq(symlink("target", link), 0);
    cr_assert_eq(hog_write_file_atomic(link, "new", 3), 0);
    cr_assert_eq(lstat(link, &st), 0);
    cr_assert(S_ISREG(st.st_mode), "the link was followed, not replaced");
    cr_assert_eq(st.st_size, 3);
    cr_assert_eq(stat(target, &st), 0);
    cr_assert_eq(st.st_size, 4, "the link's target was changed");

    char cmd[160];
    snprintf(cmd, sizeof(cmd), "test $(ls -A %s | grep -c tmp) -eq 0 && rm -rf %s", dir, dir);
    cr_assert_eq(system(cmd), 0, "a temporary file was left behind");
}

Test(util, shuffle_is_a_seeded_permutation)
{
    uint32_t a[1000], b[1000];
    for (uint32_t i = 0; i < 1000; i++)
        a[i] = b[i] = i;
    hog_rng r1 = {7}, r2 = {7};
    hog_shuffle_u32(a, 1000, &r1);
    hog_shuffle_u32(b, 1000, &r2);
    cr_assert(memcmp(a, b, sizeof(a)) == 0, "same seed, same order");
    int seen[1000] = {0}, moved = 0;
    for (uint32_t i = 0; i < 1000; i++) {
        cr_assert_lt(a[i], 1000u);
        cr_assert_eq(seen[a[i]]++, 0);
        moved += a[i] != i;
    }
    cr_assert_gt(moved, 900);
}

Test(util, error_names_cover_both_ranges)
{
    cr_assert_str_eq(hog_strerror(HOG_ETRUNCATED), "file is truncated");
    cr_assert_str_eq(hog_strerror(-12), "Cannot allocate memory");
    cr_assert_str_eq(hog_strerror(-99999), "unknown error");
    char buf[32];
    cr_assert_eq(hog_fail(HOG_EFORMAT, buf, sizeof(buf), "%s:%d", "a.csv", 3), HOG_EFORMAT);
    cr_assert_str_eq(buf, "a.csv:3");
    cr_assert_eq(hog_version_number(), (unsigned)HOG_VERSION_NUMBER);
}
