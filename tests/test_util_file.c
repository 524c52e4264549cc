/* test_util_file.c: the shared helpers: atomic files (unnamed, named where O_TMPFILE is refused, swept after a crash; and hog_output, their public face), CRC-32, the seeded shuffle, error names. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_scratch.h"
#include "util/util.h"

Test(util, crc32_matches_the_standard_check_value)
{
    cr_assert_eq(hog_crc32(0, "123456789", 9), 0xcbf43926u);
    /* Incremental equals one-shot. */
    cr_assert_eq(hog_crc32(hog_crc32(0, "1234", 4), "56789", 5), 0xcbf43926u);
}

Test(util, atomic_file_appears_whole_or_not_at_all)
{
    scratch_make("util");
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

    char cmd[192];
    snprintf(cmd, sizeof(cmd), "test $(ls -A %s | wc -l) -eq 1 && rm -rf %s", dir, dir);
    cr_assert_eq(system(cmd), 0, "a temporary file was left behind");
}

/* A large output is handed to writeback as it grows, and rewriting bytes
 * already handed over (a header written last, at offset 0) still lands. */
Test(util, atomic_file_starts_writeback_as_it_grows)
{
    scratch_make("util");
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
    char cmd[192];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

/* With O_DIRECT on, aligned writes go straight to the device; a write the
 * file system refuses that way (unaligned) is made buffered, and O_DIRECT
 * stays off. A file system without O_DIRECT (tmpfs) refuses to turn it on,
 * and the file is written buffered. Either way every byte lands. */
Test(util, atomic_file_direct_writes_land_and_fall_back)
{
    scratch_make("util");
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
    char cmd[192];
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
    scratch_make("util");
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
    char cmd[192];
    snprintf(cmd, sizeof(cmd), "test $(ls -A %s | wc -l) -eq 1 && rm -rf %s", dir, dir);
    cr_assert_eq(system(cmd), 0, "a temporary file was left behind");
}

/* hog_output: what a program linking the library writes with, whole or not at all. */
Test(util, output_appears_whole_on_commit_and_not_at_all_on_abort)
{
    scratch_make("util");
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

    char cmd[192];
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
    scratch_make("util");
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
    scratch_make("util");
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
    scratch_make("util");
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

    char cmd[192];
    snprintf(cmd, sizeof(cmd), "test $(ls -A %s | grep -c tmp) -eq 0 && rm -rf %s", dir, dir);
    cr_assert_eq(system(cmd), 0, "a temporary file was left behind");
}

/* ---- the unnamed file, the named one where O_TMPFILE is refused, the sweep ---- */

/* A seccomp rule: system call nr, when the low word of its argument arg has
 * a bit of mask set (mask 0: always), gets action. */
typedef struct {
    int nr;
    unsigned arg, mask, action;
} rule;

/* Installs the rules in this process (a Criterion test runs in its own), so
 * that the kernel answers as one without O_TMPFILE, or as one that kills
 * the process at a given call. */
static void rules_install(const rule *r, size_t n)
{
    struct sock_filter f[64];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
        f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)r[i].nr, 0, r[i].mask ? 3 : 1);
        if (r[i].mask) {
            f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                                  (unsigned)offsetof(struct seccomp_data, args[r[i].arg]));
            f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, r[i].mask, 0, 1);
        }
        f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, r[i].action);
    }
    f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {(unsigned short)k, f};
    cr_assert_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
    cr_assert_eq(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0), 0, "seccomp: %s", strerror(errno));
}

/* open with O_TMPFILE fails with err, as on a file system without it. The
 * flag's own bit: glibc's O_TMPFILE includes O_DIRECTORY. */
static void refuse_tmpfile(int err)
{
    const unsigned bit = O_TMPFILE & ~O_DIRECTORY;
    rule r[] = {{__NR_openat, 2, bit, SECCOMP_RET_ERRNO | (unsigned)err},
                {__NR_open, 1, bit, SECCOMP_RET_ERRNO | (unsigned)err}};
    rules_install(r, 2);
}

/* How many names in the scratch folder contain part (NULL: all). */
static int names_in_dir(const char *part)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && (!part || strstr(e->d_name, part)))
            n++;
    closedir(d);
    return n;
}

static void assert_content(const char *path, const char *want)
{
    unsigned char *got;
    size_t len;
    cr_assert_eq(hog_read_file(path, &got, &len), 0, "%s is missing", path);
    cr_assert_eq(len, strlen(want), "%s: %zu bytes", path, len);
    cr_assert_eq(memcmp(got, want, len), 0, "%s: other bytes", path);
    hog_free(got);
}

/* Where the file system takes O_TMPFILE, the file being written has no
 * name: the folder shows the old file alone until the commit. */
Test(util, unnamed_file_has_no_name_until_the_commit)
{
    scratch_make("util");
    char path[128];
    snprintf(path, sizeof(path), "%s/out.bin", dir);
    cr_assert_eq(hog_write_file_atomic(path, "old", 3), 0);
    hog_atomic_file f;
    cr_assert_eq(hog_atomic_open(&f, path), 0);
    cr_assert_eq(f.unnamed, 1, "O_TMPFILE was not used on %s", dir);
    cr_assert_eq(hog_atomic_write(&f, "new!", 4), 0);
    cr_assert_eq(names_in_dir(NULL), 1);
    assert_content(path, "old");
    cr_assert_eq(hog_atomic_commit(&f), 0);
    assert_content(path, "new!");
    cr_assert_eq(names_in_dir(NULL), 1);
    scratch_remove();
}

/* Before Linux 6.10 linkat's AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH and
 * fails with ENOENT without it: the file is then linked through
 * /proc/self/fd. */
Test(util, unnamed_file_is_linked_through_proc_without_empty_path)
{
    if (access("/proc/self/fd/0", F_OK) != 0)
        cr_skip_test("no /proc here");
    scratch_make("util");
    rule r[] = {{__NR_linkat, 4, AT_EMPTY_PATH, SECCOMP_RET_ERRNO | ENOENT}};
    rules_install(r, 1);
    char path[128];
    snprintf(path, sizeof(path), "%s/model.hog", dir);
    hog_atomic_file f;
    cr_assert_eq(hog_atomic_open(&f, path), 0);
    cr_assert_eq(f.unnamed, 1);
    cr_assert_eq(hog_atomic_write(&f, "linked", 6), 0);
    cr_assert_eq(hog_atomic_commit(&f), 0);
    assert_content(path, "linked");
    cr_assert_eq(names_in_dir(NULL), 1);
    scratch_remove();
}

/* A file system that refuses O_TMPFILE (EOPNOTSUPP; EISDIR or EINVAL from
 * older kernels) gets a named temporary file: NAME.hogtmp.XXXXXX, this
 * user's, with the mode the file will have, renamed at the commit and
 * removed by an abort. */
static void named_file_round_trip(int err)
{
    scratch_make("util");
    refuse_tmpfile(err);
    char path[128], tmp[384];
    snprintf(path, sizeof(path), "%s/data.hgd", dir);
    cr_assert_eq(hog_write_file_atomic(path, "old", 3), 0);
    cr_assert_eq(chmod(path, 0640), 0);
    hog_atomic_file f;
    cr_assert_eq(hog_atomic_open(&f, path), 0);
    cr_assert_eq(f.unnamed, 0);
    cr_assert_eq(strncmp(f.tmp_name, "data.hgd.hogtmp.", 16), 0, "temporary name %s", f.tmp_name);
    cr_assert_eq(strlen(f.tmp_name), 22u);
    snprintf(tmp, sizeof(tmp), "%s/%s", dir, f.tmp_name);
    struct stat st;
    cr_assert_eq(stat(tmp, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0640, "the temporary file's mode %o", st.st_mode & 07777);
    cr_assert_eq(st.st_uid, geteuid());
    cr_assert_eq(hog_atomic_write(&f, "new", 3), 0);
    assert_content(path, "old");
    cr_assert_eq(hog_atomic_commit(&f), 0);
    assert_content(path, "new");
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0640);
    cr_assert_eq(names_in_dir(NULL), 1);

    cr_assert_eq(hog_atomic_open(&f, path), 0);
    cr_assert_eq(names_in_dir(".hogtmp."), 1);
    hog_atomic_abort(&f);
    cr_assert_eq(names_in_dir(NULL), 1);
    assert_content(path, "new");
    scratch_remove();
}

Test(util, named_file_where_o_tmpfile_is_not_supported)
{
    named_file_round_trip(EOPNOTSUPP);
}

Test(util, named_file_where_o_tmpfile_reads_as_a_folder)
{
    named_file_round_trip(EISDIR);
}

Test(util, named_file_where_o_tmpfile_is_an_invalid_flag)
{
    named_file_round_trip(EINVAL);
}

/* The named temporary file of a private file is 0600 from its creation,
 * whatever the umask. */
Test(util, named_private_file_is_0600_from_its_creation)
{
    scratch_make("util");
    refuse_tmpfile(EOPNOTSUPP);
    char path[128], tmp[384];
    snprintf(path, sizeof(path), "%s/key", dir);
    mode_t mask = umask(0);
    hog_atomic_file f;
    int rc = hog_atomic_open_private(&f, path);
    umask(mask);
    cr_assert_eq(rc, 0);
    snprintf(tmp, sizeof(tmp), "%s/%s", dir, f.tmp_name);
    struct stat st;
    cr_assert_eq(stat(tmp, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
    cr_assert_eq(hog_atomic_commit(&f), 0);
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0600);
    scratch_remove();
}


/* A scratch file is never seen in its folder, unnamed or (where O_TMPFILE
 * is refused) unlinked at once; what is written reads back through the
 * descriptor taken, and the file is 0600. */
static void scratch_round_trip(int refuse)
{
    scratch_make("util");
    if (refuse)
        refuse_tmpfile(EOPNOTSUPP);
    hog_atomic_file f;
    cr_assert_eq(hog_scratch_open(&f, dir, "scratch file for x.svm"), 0);
    cr_assert_eq(f.unnamed, !refuse);
    cr_assert_str_eq(f.name, "scratch file for x.svm");
    cr_assert_eq(names_in_dir(NULL), 0);
    cr_assert_eq(hog_atomic_pwrite(&f, "blocks", 6, 4096), 0);
    int fd = hog_scratch_take(&f);
    cr_assert_geq(fd, 0);
    cr_assert_eq(f.fd, -1);
    char got[6];
    cr_assert_eq(pread(fd, got, 6, 4096), 6);
    cr_assert_eq(memcmp(got, "blocks", 6), 0);
    struct stat st;
    cr_assert_eq(fstat(fd, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0600);
    cr_assert_eq(st.st_nlink, 0, "the scratch file has a name");
    cr_assert_eq(names_in_dir(NULL), 0);
    close(fd);
    char missing[128];
    snprintf(missing, sizeof(missing), "%s/none", dir);
    cr_assert_eq(hog_scratch_open(&f, missing, "x"), -ENOENT);
    hog_atomic_abort(&f);
    scratch_remove();
}

Test(util, scratch_file_has_no_name)
{
    scratch_round_trip(0);
}

Test(util, scratch_file_where_o_tmpfile_is_not_supported_is_unlinked_at_once)
{
    scratch_round_trip(1);
}

/* A writer killed in the middle leaves nothing of an unnamed file. */
Test(util, a_killed_writer_of_an_unnamed_file_leaves_nothing)
{
    scratch_make("util");
    char path[128];
    snprintf(path, sizeof(path), "%s/out.bin", dir);
    cr_assert_eq(hog_write_file_atomic(path, "old", 3), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        hog_atomic_file f;
        static char buf[1 << 20];
        if (hog_atomic_open(&f, path) == 0 && f.unnamed && hog_atomic_write(&f, buf, sizeof(buf)) == 0)
            raise(SIGKILL);
        _exit(1);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the writer was not killed mid-file");
    cr_assert_eq(names_in_dir(NULL), 1);
    assert_content(path, "old");
    scratch_remove();
}

/* Killed between linkat and rename (the rename kills it here), a writer
 * leaves the whole new file under its temporary name: the next output
 * opened in the folder removes it, and the target was never touched. */
Test(util, a_writer_killed_between_link_and_rename_is_swept)
{
    scratch_make("util");
    char path[128], other[128];
    snprintf(path, sizeof(path), "%s/m.hog", dir);
    snprintf(other, sizeof(other), "%s/other.txt", dir);
    cr_assert_eq(hog_write_file_atomic(path, "old", 3), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        rule r[] = {{__NR_renameat, 0, 0, SECCOMP_RET_KILL_PROCESS},
                    {__NR_renameat2, 0, 0, SECCOMP_RET_KILL_PROCESS},
                    {__NR_rename, 0, 0, SECCOMP_RET_KILL_PROCESS}};
        rules_install(r, 3);
        hog_atomic_file f;
        if (hog_atomic_open(&f, path) == 0 && f.unnamed && hog_atomic_write(&f, "complete", 8) == 0)
            hog_atomic_commit(&f);
        _exit(1);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFSIGNALED(status), "the writer was not killed at its rename");
    cr_assert_eq(names_in_dir("m.hog.hogtmp."), 1);
    assert_content(path, "old");
    cr_assert_eq(hog_write_file_atomic(other, "x", 1), 0);
    cr_assert_eq(names_in_dir(".hogtmp."), 0, "the abandoned file was not removed");
    cr_assert_eq(names_in_dir(NULL), 2);
    assert_content(path, "old");
    scratch_remove();
}

/* The sweep removes a killed writer's named file, and nothing else: not a
 * live writer's (it holds its lock), not another user's, not a FIFO or a
 * name of another pattern. */
Test(util, sweep_removes_only_what_a_dead_writer_of_this_user_left)
{
    scratch_make("util");
    refuse_tmpfile(EOPNOTSUPP);
    char path[128], name[192];
    /* A live writer in another process, held until the pipe closes; the
     * killed writer's open does not take its file. */
    int status;
    int go[2], done[2];
    cr_assert_eq(pipe(go), 0);
    cr_assert_eq(pipe(done), 0);
    snprintf(path, sizeof(path), "%s/live.hgd", dir);
    pid_t live = fork();
    cr_assert_geq(live, 0);
    if (live == 0) {
        close(go[0]);
        close(done[1]);
        hog_atomic_file f;
        char c = hog_atomic_open(&f, path) == 0 && hog_atomic_write(&f, "live", 4) == 0 ? 'y' : 'n';
        if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) != 0)
            _exit(1);
        _exit(hog_atomic_commit(&f) == 0 ? 0 : 1);
    }
    close(go[1]);
    close(done[0]);
    char c = 0;
    cr_assert_eq(read(go[0], &c, 1), 1);
    cr_assert_eq(c, 'y');

    snprintf(path, sizeof(path), "%s/killed.hgd", dir);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        hog_atomic_file f;
        if (hog_atomic_open(&f, path) == 0 && hog_atomic_write(&f, "partial", 7) == 0)
            raise(SIGKILL);
        _exit(1);
    }
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFSIGNALED(status));
    cr_assert_eq(names_in_dir("killed.hgd.hogtmp."), 1);

    /* Made by hand: an output would sweep already. */
    snprintf(name, sizeof(name), "%s/short.hogtmp.abc", dir);
    cr_assert_eq(close(open(name, O_WRONLY | O_CREAT | O_EXCL, 0600)), 0);
    snprintf(name, sizeof(name), "%s/fifo.hogtmp.abcdef", dir);
    cr_assert_eq(mkfifo(name, 0600), 0);
    int others = geteuid() == 0;
    if (others) {
        snprintf(name, sizeof(name), "%s/theirs.hogtmp.abcdef", dir);
        cr_assert_eq(close(open(name, O_WRONLY | O_CREAT | O_EXCL, 0600)), 0);
        cr_assert_eq(chown(name, 65534, 65534), 0);
    }
    cr_assert_eq(names_in_dir(".hogtmp."), 4 + others);

    snprintf(path, sizeof(path), "%s/next.hgd", dir);
    cr_assert_eq(hog_write_file_atomic(path, "next", 4), 0);
    cr_assert_eq(names_in_dir("killed.hgd"), 0, "the dead writer's file is still there");
    cr_assert_eq(names_in_dir("live.hgd.hogtmp."), 1, "the live writer's file was removed");
    cr_assert_eq(names_in_dir(".hogtmp."), 3 + others);

    close(done[1]);
    cr_assert_eq(waitpid(live, &status, 0), live);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the live writer could not commit");
    snprintf(path, sizeof(path), "%s/live.hgd", dir);
    assert_content(path, "live");
    cr_assert_eq(names_in_dir("live.hgd"), 1);
    scratch_remove();
}

/* Where the folder takes no flock (NFS: a folder opened read-only cannot
 * take its emulated lock), a dead writer's file is removed once it is five
 * minutes old, and a live writer's file, however old, is not. */
Test(util, sweep_without_a_folder_lock_waits_for_an_old_unlocked_file)
{
    scratch_make("util");
    refuse_tmpfile(EOPNOTSUPP);
    int go[2], done[2];
    cr_assert_eq(pipe(go), 0);
    cr_assert_eq(pipe(done), 0);
    char path[128], tmp[384];
    snprintf(path, sizeof(path), "%s/live.hgd", dir);
    pid_t live = fork();
    cr_assert_geq(live, 0);
    if (live == 0) {
        close(go[0]);
        close(done[1]);
        hog_atomic_file f;
        char c = hog_atomic_open(&f, path) == 0 ? 'y' : 'n';
        if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) != 0)
            _exit(1);
        _exit(hog_atomic_commit(&f) == 0 ? 0 : 1);
    }
    close(go[1]);
    close(done[0]);
    char c = 0;
    cr_assert_eq(read(go[0], &c, 1), 1);
    cr_assert_eq(c, 'y');
    snprintf(path, sizeof(path), "%s/killed.hgd", dir);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        hog_atomic_file f;
        if (hog_atomic_open(&f, path) == 0)
            raise(SIGKILL);
        _exit(1);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFSIGNALED(status));

    /* From here the folder's lock fails as on NFS: LOCK_EX | LOCK_NB is
     * the sweep's lock on the folder alone. */
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_flock, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, LOCK_EX | LOCK_NB, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOLCK),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {(unsigned short)HOG_ARRAY_LEN(f), f};
    cr_assert_eq(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0), 0);

    snprintf(path, sizeof(path), "%s/next.hgd", dir);
    cr_assert_eq(hog_write_file_atomic(path, "next", 4), 0);
    cr_assert_eq(names_in_dir("killed.hgd.hogtmp."), 1, "a fresh file was removed without the folder's lock");
    /* Both temporary files made ten minutes old. */
    DIR *d = opendir(dir);
    struct dirent *e;
    struct timespec old[2] = {{.tv_sec = time(NULL) - 600}, {.tv_sec = time(NULL) - 600}};
    int aged = 0;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".hogtmp.")) {
            snprintf(tmp, sizeof(tmp), "%s/%s", dir, e->d_name);
            cr_assert_eq(utimensat(AT_FDCWD, tmp, old, 0), 0);
            aged++;
        }
    closedir(d);
    cr_assert_eq(aged, 2);
    cr_assert_eq(hog_write_file_atomic(path, "next", 4), 0);
    cr_assert_eq(names_in_dir("killed.hgd"), 0, "the dead writer's old file is still there");
    cr_assert_eq(names_in_dir("live.hgd.hogtmp."), 1, "the live writer's file was removed");
    close(done[1]);
    cr_assert_eq(waitpid(live, &status, 0), live);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the live writer could not commit");
    cr_assert_eq(names_in_dir(NULL), 2);
    scratch_remove();
}

/* hog_output_unlink_temps, from a signal handler, removes the names of the
 * outputs in flight; the output then fails at its commit and the target is
 * as it was. */
Test(util, unlink_temps_removes_the_names_in_flight)
{
    scratch_make("util");
    refuse_tmpfile(EOPNOTSUPP);
    char path[128];
    snprintf(path, sizeof(path), "%s/predictions.txt", dir);
    cr_assert_eq(hog_write_file_atomic(path, "old", 3), 0);
    hog_output *o;
    cr_assert_eq(hog_output_open(path, &o), 0);
    cr_assert_eq(hog_output_write(o, "0.5\n", 4), 0);
    cr_assert_eq(names_in_dir(".hogtmp."), 1);
    hog_output_unlink_temps();
    cr_assert_eq(names_in_dir(NULL), 1);
    cr_assert_eq(hog_output_commit(o), -ENOENT);
    assert_content(path, "old");
    cr_assert_eq(names_in_dir(NULL), 1);
    scratch_remove();
}

/* As root, a replaced file's owner is given to the new file at the commit;
 * until then the temporary file is this user's (the sweep needs that), with
 * the old mode from the start. */
Test(util, the_owner_of_a_replaced_file_is_given_at_the_commit)
{
    if (geteuid() != 0)
        cr_skip_test("needs root to give a file away");
    scratch_make("util");
    refuse_tmpfile(EOPNOTSUPP);
    char path[128], tmp[384];
    snprintf(path, sizeof(path), "%s/shared.hog", dir);
    cr_assert_eq(hog_write_file_atomic(path, "old", 3), 0);
    cr_assert_eq(chown(path, 65534, 65534), 0);
    cr_assert_eq(chmod(path, 0640), 0);
    hog_atomic_file f;
    cr_assert_eq(hog_atomic_open(&f, path), 0);
    snprintf(tmp, sizeof(tmp), "%s/%s", dir, f.tmp_name);
    struct stat st;
    cr_assert_eq(stat(tmp, &st), 0);
    cr_assert_eq(st.st_uid, 0u);
    cr_assert_eq(st.st_mode & 07777, 0640);
    cr_assert_eq(hog_atomic_commit(&f), 0);
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_uid, 65534u);
    cr_assert_eq(st.st_gid, 65534u);
    cr_assert_eq(st.st_mode & 07777, 0640, "mode %o", st.st_mode & 07777);
    scratch_remove();
}

/* A name of NAME_MAX bytes still gets a temporary name that fits (its
 * front, then .hogtmp.XXXXXX), named or not. */
Test(util, the_longest_name_gets_a_temporary_name_that_fits)
{
    scratch_make("util");
    char name[NAME_MAX + 1], path[512];
    memset(name, 'n', NAME_MAX);
    name[NAME_MAX] = '\0';
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    cr_assert_eq(hog_write_file_atomic(path, "unnamed", 7), 0);
    assert_content(path, "unnamed");
    refuse_tmpfile(EOPNOTSUPP);
    hog_atomic_file f;
    cr_assert_eq(hog_atomic_open(&f, path), 0);
    cr_assert_eq(strlen(f.tmp_name), (size_t)NAME_MAX);
    cr_assert_eq(hog_atomic_write(&f, "named", 5), 0);
    cr_assert_eq(hog_atomic_commit(&f), 0);
    assert_content(path, "named");
    cr_assert_eq(names_in_dir(NULL), 1);
    scratch_remove();
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
