/* test_util_file.c: the shared helpers: atomic files (unnamed, named where O_TMPFILE is refused, swept after a crash; and hog_output, their public face), CRC-32, the seeded shuffle, error names. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
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

/* A file the library reads back (hog_atomic_open_file, and
 * hog_write_file_atomic over it): a device, FIFO or socket at the path is
 * refused and left as it is; a folder gets -EISDIR; a symbolic link is
 * replaced by the new file and what it pointed to is untouched. */
Test(util, a_file_refuses_what_is_not_one_and_replaces_a_symlink)
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
    hog_atomic_file f;
    cr_assert_eq(hog_atomic_open_file(&f, "/dev/null"), HOG_ENOTFILE);
    hog_atomic_abort(&f);
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

/* ---- outputs written into: devices, FIFOs, the process's descriptors ---- */

/* Enough output to pass a pipe's buffer (64 KiB) many times over, so that
 * the commit's copy has to wait for its reader. */
#define INTO_BYTES (1u << 20)

static void into_fill(char *buf)
{
    for (size_t i = 0; i < INTO_BYTES; i++)
        buf[i] = (char)('a' + (i * 7 + i / 977) % 26);
}

/* Writes buf as an output would: all but the head, then the head in place
 * (the file formats write their header last), through f. */
static void into_write(hog_atomic_file *f, const char *buf)
{
    cr_assert_eq(hog_atomic_pwrite(f, buf + 16, 4096 - 16, 16), 0);
    for (size_t at = 4096; at < INTO_BYTES; at += 4096)
        cr_assert_eq(hog_atomic_write(f, buf + at, HOG_MIN(4096, INTO_BYTES - at)), 0);
    cr_assert_eq(hog_atomic_pwrite(f, buf, 16, 0), 0);
}

typedef struct {
    int fd;
    char *got;
    size_t len;
} reader;

/* Reads fd to its end: a blocking read from a FIFO that no writer has
 * opened yet would see its end at once, so the first bytes are awaited
 * with poll, which waits for a writer's data. */
static void *read_all(void *arg)
{
    reader *r = arg;
    struct pollfd p = {.fd = r->fd, .events = POLLIN};
    if (poll(&p, 1, -1) != 1)
        return NULL;
    ssize_t n;
    while ((n = read(r->fd, r->got + r->len, INTO_BYTES + 1 - r->len)) > 0)
        r->len += (size_t)n;
    return NULL;
}

/* Whether a writer ever opened the FIFO whose reading end is fd: the
 * kernel reports a hang-up only to a reader that outlived a writer. */
static int fifo_was_opened(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    cr_assert_geq(poll(&p, 1, 0), 0);
    return (p.revents & POLLHUP) != 0;
}

/* A FIFO is written into, never replaced: nothing reaches it (it is not
 * even opened) until the commit, which copies the whole output in. */
Test(util, an_output_into_a_fifo_arrives_whole_at_the_commit)
{
    scratch_make("util");
    char fifo[128];
    snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    char *buf = malloc(INTO_BYTES);
    reader r = {.got = malloc(INTO_BYTES + 1)};
    cr_assert(buf && r.got);
    into_fill(buf);
    r.fd = open(fifo, O_RDONLY | O_NONBLOCK); /* a reader that does not wait for a writer */
    cr_assert_geq(r.fd, 0);

    hog_atomic_file f;
    cr_assert_eq(hog_atomic_open(&f, fifo), 0);
    into_write(&f, buf);
    cr_assert(!fifo_was_opened(r.fd), "the FIFO was opened before the commit");
    char c;
    cr_assert_eq(read(r.fd, &c, 1), 0, "bytes reached the FIFO before the commit");

    cr_assert_eq(fcntl(r.fd, F_SETFL, 0), 0);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, read_all, &r), 0);
    cr_assert_eq(hog_atomic_commit(&f), 0);
    pthread_join(t, NULL);
    cr_assert_eq(r.len, (size_t)INTO_BYTES, "%zu bytes", r.len);
    cr_assert(memcmp(r.got, buf, INTO_BYTES) == 0, "the FIFO's reader got other bytes");
    cr_assert(fifo_was_opened(r.fd));
    close(r.fd);

    struct stat st;
    cr_assert_eq(lstat(fifo, &st), 0);
    cr_assert(S_ISFIFO(st.st_mode), "the FIFO was replaced");
    cr_assert_eq(names_in_dir(NULL), 1, "a file was left beside the FIFO");
    free(buf);
    free(r.got);
    scratch_remove();
}

/* A run that fails never opens the FIFO, so its reader sees no empty
 * output; the scratch file in /tmp goes with its descriptor. */
Test(util, an_aborted_output_sends_nothing_into_a_fifo)
{
    scratch_make("util");
    char fifo[128];
    snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    int rfd = open(fifo, O_RDONLY | O_NONBLOCK);
    cr_assert_geq(rfd, 0);
    hog_atomic_file f;
    cr_assert_eq(hog_atomic_open(&f, fifo), 0);
    cr_assert_eq(hog_atomic_write(&f, "never seen", 10), 0);
    hog_atomic_abort(&f);
    hog_output *o;
    cr_assert_eq(hog_output_open(fifo, &o), 0);
    cr_assert_eq(hog_output_write(o, "nor this", 8), 0);
    hog_output_abort(o);
    cr_assert(!fifo_was_opened(rfd), "an aborted output opened the FIFO");
    char c;
    cr_assert_eq(read(rfd, &c, 1), 0);
    close(rfd);

    /* One the user may not write is refused at the open, not at the commit. */
    if (geteuid() != 0) {
        cr_assert_eq(chmod(fifo, 0400), 0);
        cr_assert_eq(hog_atomic_open(&f, fifo), -EACCES);
    }
    scratch_remove();
}

/* A pipe that only this process holds (a process substitution, a shell's
 * pipe) is reached through /proc/self/fd/N, /dev/fd/N or a link to one:
 * the descriptor is duplicated, and the output arrives at the commit. */
Test(util, an_output_into_a_pipe_goes_through_its_descriptor)
{
    scratch_make("util");
    char link[128];
    snprintf(link, sizeof(link), "%s/link", dir);
    for (int i = 0; i < 3; i++) {
        int fds[2];
        cr_assert_eq(pipe(fds), 0);
        char path[128];
        snprintf(path, sizeof(path), "%s/%d", i == 0 ? "/proc/self/fd" : "/dev/fd", fds[1]);
        if (i == 2) { /* a link to it, as /dev/stdout is to /proc/self/fd/1 */
            cr_assert_eq(symlink(path, link), 0);
            snprintf(path, sizeof(path), "%s", link);
        }
        hog_atomic_file f;
        cr_assert_eq(hog_atomic_open(&f, path), 0, "%s", path);
        close(fds[1]); /* the output holds its own duplicate */
        cr_assert_eq(hog_atomic_write(&f, "xxxxx piped", 11), 0);
        cr_assert_eq(hog_atomic_pwrite(&f, "bytes", 5, 0), 0);
        cr_assert_eq(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
        char got[32];
        cr_assert_eq(read(fds[0], got, sizeof(got)), -1, "bytes in the pipe before the commit");
        cr_assert_eq(errno, EAGAIN);
        cr_assert_eq(hog_atomic_commit(&f), 0);
        cr_assert_eq(read(fds[0], got, sizeof(got)), 11);
        cr_assert(memcmp(got, "bytes piped", 11) == 0);
        cr_assert_eq(read(fds[0], got, sizeof(got)), 0, "the commit kept a writing end open");
        close(fds[0]);
    }
    struct stat st;
    cr_assert_eq(lstat(link, &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the link was replaced");
    scratch_remove();
}

/* A file the shell opened with >> is appended to, at the commit, through
 * its descriptor (sendfile refuses O_APPEND: the copy falls back to
 * write); a closed or read-only descriptor is -EBADF at the open. */
Test(util, an_output_through_a_descriptor_appends_or_is_ebadf)
{
    scratch_make("util");
    char path[128], fdpath[64];
    snprintf(path, sizeof(path), "%s/log", dir);
    cr_assert_eq(hog_write_file_atomic(path, "old\n", 4), 0);
    int fd = open(path, O_WRONLY | O_APPEND);
    cr_assert_geq(fd, 0);
    snprintf(fdpath, sizeof(fdpath), "/dev/fd/%d", fd);
    hog_atomic_file f;
    cr_assert_eq(hog_atomic_open(&f, fdpath), 0);
    cr_assert_eq(hog_atomic_write(&f, "new\n", 4), 0);
    assert_content(path, "old\n");
    cr_assert_eq(hog_atomic_commit(&f), 0);
    assert_content(path, "old\nnew\n");
    close(fd);

    cr_assert_eq(hog_atomic_open(&f, fdpath), -EBADF, "a closed descriptor");
    fd = open(path, O_RDONLY);
    cr_assert_geq(fd, 0);
    snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
    cr_assert_eq(hog_atomic_open(&f, fdpath), -EBADF, "a read-only descriptor");
    close(fd);
    assert_content(path, "old\nnew\n");
    scratch_remove();
}

/* /dev/null, and a link to it, take an output and stay what they are; a
 * socket's name and a block device are refused and left as they are. */
Test(util, devices_are_written_into_and_sockets_refused)
{
    scratch_make("util");
    char link[128], sock[100];
    snprintf(link, sizeof(link), "%s/null", dir);
    snprintf(sock, sizeof(sock), "%s/sock", dir);
    cr_assert_eq(symlink("/dev/null", link), 0);
    const char *paths[] = {"/dev/null", link};
    for (int i = 0; i < 2; i++) {
        hog_atomic_file f;
        cr_assert_eq(hog_atomic_open(&f, paths[i]), 0, "%s", paths[i]);
        cr_assert_eq(hog_atomic_write(&f, "gone", 4), 0);
        cr_assert_eq(hog_atomic_pwrite(&f, "head", 4, 0), 0);
        cr_assert_eq(hog_atomic_commit(&f), 0);
        hog_output *o;
        cr_assert_eq(hog_output_open(paths[i], &o), 0);
        cr_assert_eq(hog_output_write(o, "gone", 4), 0);
        cr_assert_eq(hog_output_commit(o), 0);
    }
    struct stat st;
    cr_assert_eq(stat("/dev/null", &st), 0);
    cr_assert(S_ISCHR(st.st_mode), "/dev/null was replaced");
    cr_assert_eq(lstat(link, &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the link to /dev/null was replaced");

    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    cr_assert_geq(s, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
    cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
    hog_atomic_file f;
    cr_assert_eq(hog_atomic_open(&f, sock), HOG_ENOTFILE);
    hog_atomic_abort(&f);
    cr_assert_eq(lstat(sock, &st), 0);
    cr_assert(S_ISSOCK(st.st_mode), "the socket was replaced");
    close(s);
    cr_assert_eq(names_in_dir(".hogtmp."), 0);

    const char *disks[] = {"/dev/loop0", "/dev/sda", "/dev/vda", "/dev/nvme0n1"};
    for (size_t i = 0; i < sizeof(disks) / sizeof(disks[0]); i++)
        if (stat(disks[i], &st) == 0 && S_ISBLK(st.st_mode)) {
            cr_assert_eq(hog_atomic_open(&f, disks[i]), HOG_ENOTFILE, "%s", disks[i]);
            break;
        }
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
