/* util_file.c: files written whole or not at all (an unnamed O_TMPFILE, or a named temporary file, made visible by rename only when complete; hog_output for programs), and whole files read. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* ---- How an output reaches its name ----
 *
 * The file is made in the target's folder with O_TMPFILE: it has no name,
 * so a process killed at any instant leaves nothing behind; the kernel
 * frees it with the last descriptor. At the commit it is fsynced, linked
 * under a temporary name (linkat: AT_EMPTY_PATH, which needs
 * CAP_DAC_READ_SEARCH before Linux 6.10, or /proc/self/fd/N with
 * AT_SYMLINK_FOLLOW) and renamed over the target, and the folder is
 * fsynced. linkat cannot replace a name and no kernel call links an
 * unnamed file over one, so a temporary name exists for the two system
 * calls between linkat and rename.
 *
 * Where the file system refuses O_TMPFILE (EOPNOTSUPP; EISDIR or EINVAL
 * from kernels or file systems that do not know it), or the file could not
 * be linked (no capability and no /proc), the file is created under its
 * temporary name from the start, as before.
 *
 * Either way the temporary name is NAME.hogtmp.XXXXXX (the target's name,
 * cut to fit NAME_MAX), and its writer holds an flock on the file until it
 * is renamed or removed. A process that dies holding it leaves a file that
 * is provably abandoned: every open of an output sweeps its folder and
 * removes the files of that pattern that belong to this user and whose lock
 * it can take. The lock is the evidence, not a pid in the name: a pid is
 * reused, and means nothing to a process in another pid namespace or on
 * another machine sharing the folder. A writer creates a named file and
 * locks it while holding a shared flock on the folder, and a sweep holds an
 * exclusive one, so that a sweep never sees a file in the instant between
 * its creation and its lock (where the folder takes no flock, the file's
 * age stands in: SWEEP_UNLOCKED_AGE).
 *
 * An output path that exists and is not a regular file is not replaced
 * but written into (see "Outputs written into" below). */

#define TEMP_MARK ".hogtmp."
#define TEMP_SUFFIX_LEN 6
#define TEMP_EXTRA (sizeof(TEMP_MARK) - 1 + TEMP_SUFFIX_LEN)

/* ---- temporary names a signal handler may remove (hog_output_unlink_temps) ---- */
#define PENDING_SLOTS 32
enum { SLOT_FREE, SLOT_BUSY, SLOT_NAMED };
static struct {
    _Atomic int state;
    int dir_fd;
    char name[NAME_MAX + 1];
} pending[PENDING_SLOTS];

/* Records a temporary name in the table; returns its slot, or -1 when the
 * table is full (the name is then only swept by a later run). */
static int pending_add(int dir_fd, const char *name)
{
    for (int i = 0; i < PENDING_SLOTS; i++) {
        int expect = SLOT_FREE;
        if (atomic_compare_exchange_strong(&pending[i].state, &expect, SLOT_BUSY)) {
            pending[i].dir_fd = dir_fd;
            snprintf(pending[i].name, sizeof(pending[i].name), "%s", name);
            atomic_store_explicit(&pending[i].state, SLOT_NAMED, memory_order_release);
            return i;
        }
    }
    return -1;
}

static void pending_drop(int *slot)
{
    if (*slot >= 0)
        atomic_store_explicit(&pending[*slot].state, SLOT_FREE, memory_order_release);
    *slot = -1;
}

void hog_output_unlink_temps(void)
{
    for (int i = 0; i < PENDING_SLOTS; i++)
        if (atomic_load_explicit(&pending[i].state, memory_order_acquire) == SLOT_NAMED)
            unlinkat(pending[i].dir_fd, pending[i].name, 0);
}

/* ---- temporary names ---- */

/* Writes NAME.hogtmp.XXXXXX into tmp (NAME_MAX + 1 bytes) with a fresh
 * suffix; NAME is cut so that the whole fits in NAME_MAX. */
static void temp_name(char *tmp, const char *name)
{
    static _Atomic uint64_t counter;
    static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    uint64_t x = hog_mix64(hog_mix64((uint64_t)getpid() << 32 ^ (uint64_t)(hog_now() * 1e9)) +
                           atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed));
    int keep = (int)HOG_MIN(strlen(name), NAME_MAX - TEMP_EXTRA);
    char suffix[TEMP_SUFFIX_LEN + 1];
    for (size_t i = 0; i < TEMP_SUFFIX_LEN; i++, x /= 62)
        suffix[i] = digits[x % 62];
    suffix[TEMP_SUFFIX_LEN] = '\0';
    snprintf(tmp, NAME_MAX + 1, "%.*s%s%s", keep, name, TEMP_MARK, suffix);
}

/* Whether name is one of ours: anything, then .hogtmp. and six letters or digits. */
static int temp_name_is_ours(const char *name)
{
    size_t n = strlen(name);
    if (n <= TEMP_EXTRA || memcmp(name + n - TEMP_EXTRA, TEMP_MARK, sizeof(TEMP_MARK) - 1) != 0)
        return 0;
    for (const char *p = name + n - TEMP_SUFFIX_LEN; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            return 0;
    return 1;
}

static int flock_retry(int fd, int op)
{
    int rc;
    while ((rc = flock(fd, op)) < 0 && errno == EINTR)
        ;
    return rc < 0 ? -errno : 0;
}

/* Where the folder takes no flock (NFS emulates flock with byte-range
 * locks, which a folder opened read-only cannot take), a named file is
 * swept only once it is this old by this machine's clock: a live writer
 * locks its file microseconds after creating it, and the margin covers a
 * server's clock that runs ahead. */
#define SWEEP_UNLOCKED_AGE 300

/* Removes the temporary files in the folder that a writer left when it
 * died: ours by name, this user's, and unlocked. Does nothing while another
 * process sweeps the folder. */
static void temps_sweep(int dir_fd, const char *path)
{
    int rc = flock_retry(dir_fd, LOCK_EX | LOCK_NB);
    if (rc == -EWOULDBLOCK)
        return;
    const int dir_locked = rc == 0;
    int list_fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = list_fd >= 0 ? fdopendir(list_fd) : NULL;
    if (!d) {
        if (list_fd >= 0)
            close(list_fd);
        if (dir_locked)
            (void)flock_retry(dir_fd, LOCK_UN);
        return;
    }
    const uid_t me = geteuid();
    const time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if ((e->d_type != DT_REG && e->d_type != DT_UNKNOWN) || !temp_name_is_ours(e->d_name))
            continue;
        /* Read-write where the mode allows: NFS's emulated flock needs it. */
        const int how = O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
        int fd = openat(dir_fd, e->d_name, O_RDWR | how);
        if (fd < 0 && errno == EACCES)
            fd = openat(dir_fd, e->d_name, O_RDONLY | how);
        if (fd < 0)
            continue;
        struct stat held, named;
        /* A shared lock is refused while the writer holds its exclusive
         * one; the name is removed only while it still names the file
         * whose lock was taken. */
        if (fstat(fd, &held) == 0 && S_ISREG(held.st_mode) && held.st_uid == me &&
            (dir_locked || now - held.st_mtime > SWEEP_UNLOCKED_AGE) && flock_retry(fd, LOCK_SH | LOCK_NB) == 0 &&
            fstatat(dir_fd, e->d_name, &named, AT_SYMLINK_NOFOLLOW) == 0 && named.st_dev == held.st_dev &&
            named.st_ino == held.st_ino && unlinkat(dir_fd, e->d_name, 0) == 0)
            hog_log(HOG_LOG_INFO, "%s: removed %s, a temporary file left beside it by an interrupted run", path,
                    e->d_name);
        close(fd);
    }
    closedir(d);
    if (dir_locked)
        (void)flock_retry(dir_fd, LOCK_UN);
}

/* Creates the named temporary file NAME.hogtmp.XXXXXX, locked, by
 * openat(O_EXCL) with mode 0666 (0600 for a private file) so that the
 * kernel applies the umask (mkstemp makes 0600, and reading the umask means
 * setting it, which races with every other thread of the process). */
static int temp_create_named(hog_atomic_file *f, mode_t mode)
{
    /* Shared: writers do not wait for each other, only for a sweep. */
    int locked = flock_retry(f->dir_fd, LOCK_SH) == 0;
    int fd = -EEXIST;
    for (int attempt = 0; attempt < 100 && fd == -EEXIST; attempt++) {
        temp_name(f->tmp_name, f->name);
        fd = openat(f->dir_fd, f->tmp_name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd < 0)
            fd = -errno;
    }
    if (fd >= 0) {
        (void)flock_retry(fd, LOCK_EX); /* waits only for a sweep's probe */
        f->slot = pending_add(f->dir_fd, f->tmp_name);
    }
    if (locked)
        (void)flock_retry(f->dir_fd, LOCK_UN);
    if (fd < 0)
        f->tmp_name[0] = '\0';
    return fd;
}

/* Whether this process holds CAP_DAC_READ_SEARCH, which linkat's
 * AT_EMPTY_PATH needs before Linux 6.10. */
static int can_read_search(void)
{
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2];
    if (syscall(SYS_capget, &hdr, data) < 0)
        return 0;
    return (data[CAP_TO_INDEX(CAP_DAC_READ_SEARCH)].effective & CAP_TO_MASK(CAP_DAC_READ_SEARCH)) != 0;
}

static void proc_fd_path(char *buf, size_t len, int fd)
{
    snprintf(buf, len, "/proc/self/fd/%d", fd);
}

/* Opens the unnamed file, or returns -EOPNOTSUPP where it could not be
 * made (the caller then makes a named one) and -errno for another error. */
static int temp_create_unnamed(hog_atomic_file *f, mode_t mode)
{
    int fd = openat(f->dir_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
    if (fd < 0)
        return errno == EISDIR || errno == EINVAL ? -EOPNOTSUPP : -errno;
    char proc[32];
    proc_fd_path(proc, sizeof(proc), fd);
    if (!can_read_search() && faccessat(AT_FDCWD, proc, F_OK, 0) < 0) {
        close(fd); /* it could not be given a name at the commit */
        return -EOPNOTSUPP;
    }
    (void)flock_retry(fd, LOCK_EX); /* no other process can reach it */
    return fd;
}

/* Gives the unnamed file its temporary name. */
static int temp_link_unnamed(hog_atomic_file *f)
{
    char proc[32];
    proc_fd_path(proc, sizeof(proc), f->fd);
    for (int attempt = 0; attempt < 100; attempt++) {
        temp_name(f->tmp_name, f->name);
        f->slot = pending_add(f->dir_fd, f->tmp_name);
        int rc = linkat(f->fd, "", f->dir_fd, f->tmp_name, AT_EMPTY_PATH);
        if (rc < 0 && errno == ENOENT) /* no CAP_DAC_READ_SEARCH */
            rc = linkat(AT_FDCWD, proc, f->dir_fd, f->tmp_name, AT_SYMLINK_FOLLOW);
        if (rc == 0)
            return 0;
        rc = -errno;
        pending_drop(&f->slot);
        f->tmp_name[0] = '\0';
        if (rc != -EEXIST)
            return rc;
    }
    return -EEXIST;
}

/* ---- hog_atomic_file ---- */

/* Opens the folder of path (the part before its last '/'). */
static int folder_open(const char *path, const char *name)
{
    size_t n = (size_t)(name - path);
    if (n == 0)
        return open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char *dir = hog_malloc(n + 1);
    if (!dir) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(dir, path, n);
    dir[n] = '\0'; /* "/x" keeps its "/" */
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int saved = errno;
    hog_free(dir);
    errno = saved;
    return fd;
}

/* ---- Outputs written into ----
 *
 * Unix tools write into what a path names when it is not a regular file
 * (cp x /dev/null, cc -o /dev/null, sort -o >(gzip > f)), and so do
 * outputs here; only regular files, which a reader may hold open or map,
 * are replaced by rename. Three cases:
 *
 * - The path leads into /proc/self/fd (/dev/fd/N, /dev/stdout, a process
 *   substitution, a link to one): it names one of this process's
 *   descriptors, which is duplicated rather than opened, because no open()
 *   reaches a socket that way and an open() of a pipe's /proc entry or of
 *   a file the shell opened with >> would not share the shell's offset and
 *   flags.
 * - A character device that seeks (/dev/null, /dev/zero) keeps nothing and
 *   hands nothing to a reader: it is written in place.
 * - Anything else (a FIFO, a pipe, a terminal, a file behind a
 *   descriptor) has a reader, who must get the whole output or none, as
 *   from a renamed file: the output is made in a nameless scratch file in
 *   /tmp (a library reads no environment, so not $TMPDIR) and copied in by
 *   sendfile at the commit. A FIFO is opened only then: opening it wakes
 *   its reader, who would read an empty output from a run that fails.
 *
 * Block devices (a disk: writing into it destroys what is there) and the
 * names of sockets (which open() cannot write) stay refused. */

/* Whether the folder dir_fd is this process's table of descriptors. */
static int own_fd_folder(int dir_fd)
{
    static const char *const tables[] = {"/proc/self/fd", "/proc/thread-self/fd"};
    struct stat d, t;
    if (fstat(dir_fd, &d) < 0)
        return 0;
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
        if (stat(tables[i], &t) == 0 && t.st_dev == d.st_dev && t.st_ino == d.st_ino)
            return 1;
    return 0;
}

/* The descriptor path names (it leads, through any symbolic links, to an
 * entry of /proc/self/fd), or -1 when it names none. The links are read
 * one at a time: following the last one would reach the pipe itself, and
 * realpath fails on a pipe's "pipe:[N]". */
static int own_descriptor(const char *path)
{
    char cur[PATH_MAX], link[PATH_MAX];
    if (strlen(path) >= sizeof(cur))
        return -1;
    snprintf(cur, sizeof(cur), "%s", path);
    for (int hop = 0; hop < 40; hop++) { /* the kernel's own limit on links */
        char *slash = strrchr(cur, '/');
        const char *base = slash ? slash + 1 : cur;
        int dir_fd;
        if (!slash)
            dir_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        else if (slash == cur)
            dir_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        else {
            *slash = '\0';
            dir_fd = open(cur, O_PATH | O_DIRECTORY | O_CLOEXEC);
            *slash = '/';
        }
        if (dir_fd < 0)
            return -1;
        if (own_fd_folder(dir_fd)) {
            close(dir_fd);
            char *end;
            errno = 0;
            long n = strtol(base, &end, 10);
            return *base >= '0' && *base <= '9' && !*end && errno == 0 && n <= INT_MAX ? (int)n : -1;
        }
        ssize_t len = readlinkat(dir_fd, base, link, sizeof(link) - 1);
        close(dir_fd);
        if (len < 0 || (size_t)len >= sizeof(link) - 1)
            return -1; /* not a link: the path is what it names */
        link[len] = '\0';
        size_t keep = link[0] == '/' || !slash ? 0 : (size_t)(slash - cur) + 1;
        if (keep + (size_t)len >= sizeof(cur))
            return -1;
        memmove(cur + keep, link, (size_t)len + 1);
    }
    return -1;
}

/* Sets f up to write into dest (a descriptor f now owns, or -1 for the FIFO
 * at path, opened by the commit), whose file is st. */
static int into_open(hog_atomic_file *f, const char *path, int dest, const struct stat *st)
{
    if (S_ISBLK(st->st_mode) || S_ISDIR(st->st_mode)) {
        if (dest >= 0)
            close(dest);
        return S_ISDIR(st->st_mode) ? -EISDIR : HOG_ENOTFILE;
    }
    f->path = hog_strdup(path);
    if (!f->path) {
        if (dest >= 0)
            close(dest);
        return -ENOMEM;
    }
    const char *slash = strrchr(f->path, '/');
    f->name = slash ? slash + 1 : f->path;
    if (dest >= 0 && S_ISCHR(st->st_mode) && lseek(dest, 0, SEEK_CUR) >= 0) {
        f->into = HOG_INTO_DEVICE;
        f->fd = dest;
        return 0;
    }
    f->into = HOG_INTO_COPY;
    f->dest_fd = dest;
    hog_atomic_file scratch;
    int rc = hog_scratch_open(&scratch, "/tmp", *f->name ? f->name : "output");
    if (rc < 0) {
        hog_atomic_abort(f);
        return rc;
    }
    f->fd = hog_scratch_take(&scratch);
    return 0;
}

/* Opens the output at path for writing into when it is one (see above);
 * returns 1 when it is not, for the caller to replace it. */
static int into_try(hog_atomic_file *f, const char *path)
{
    int own = own_descriptor(path);
    if (own >= 0) {
        int fl = fcntl(own, F_GETFL);
        if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
            return -EBADF; /* what a write to it would say */
        int fd = fcntl(own, F_DUPFD_CLOEXEC, 0);
        if (fd < 0)
            return -errno;
        struct stat st;
        if (fstat(fd, &st) < 0) {
            int rc = -errno;
            close(fd);
            return rc;
        }
        return into_open(f, path, fd, &st);
    }
    struct stat st;
    if (stat(path, &st) < 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
        return 1;
    if (S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode))
        return HOG_ENOTFILE;
    if (S_ISFIFO(st.st_mode)) /* opened by the commit; refused now if it would be then */
        return faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) < 0 ? -errno : into_open(f, path, -1, &st);
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) < 0) {
        int rc = -errno;
        close(fd);
        return rc;
    }
    return into_open(f, path, fd, &st);
}

/* Waits until fd takes more bytes (a descriptor the shell left non-blocking). */
static int wait_writable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    while (poll(&p, 1, -1) < 0)
        if (errno != EINTR)
            return -errno;
    return 0;
}

/* Copies the first len bytes of from into to, at to's offset, by read and
 * write: sendfile refuses a destination opened with O_APPEND (>>). */
static int copy_by_write(int from, int to, off_t off, uint64_t len)
{
    char buf[65536];
    while ((uint64_t)off < len) {
        ssize_t r = pread(from, buf, (size_t)HOG_MIN(sizeof(buf), len - (uint64_t)off), off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -errno : -EIO;
        for (ssize_t done = 0; done < r;) {
            ssize_t w = write(to, buf + done, (size_t)(r - done));
            int rc = w < 0 && errno == EAGAIN ? wait_writable(to) : 0;
            if (rc < 0)
                return rc;
            if (w < 0 && errno != EINTR && errno != EAGAIN)
                return -errno;
            if (w > 0)
                done += w;
        }
        off += r;
    }
    return 0;
}

/* Copies the scratch file into its destination (HOG_INTO_COPY). */
static int into_copy(hog_atomic_file *f)
{
    while (f->dest_fd < 0) { /* a FIFO: waits for its reader */
        f->dest_fd = open(f->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (f->dest_fd < 0 && errno != EINTR)
            return -errno;
    }
    off_t off = 0;
    while ((uint64_t)off < f->end) {
        ssize_t n = sendfile(f->dest_fd, f->fd, &off, (size_t)HOG_MIN(f->end - (uint64_t)off, 1u << 30));
        if (n < 0 && (errno == EINVAL || errno == ENOSYS))
            return copy_by_write(f->fd, f->dest_fd, off, f->end);
        int rc = n < 0 && errno == EAGAIN ? wait_writable(f->dest_fd) : 0;
        if (rc < 0)
            return rc;
        if (n < 0 && errno != EINTR && errno != EAGAIN)
            return -errno;
        if (n == 0)
            return -EIO; /* the scratch file is shorter than what was written */
    }
    struct stat st;
    if (fstat(f->dest_fd, &st) == 0 && S_ISREG(st.st_mode) && fsync(f->dest_fd) < 0)
        return -errno; /* a file behind a descriptor (>>) is kept like a renamed one */
    return 0;
}

enum { KIND_OUTPUT, KIND_FILE, KIND_PRIVATE };

static int atomic_open(hog_atomic_file *f, const char *path, int kind)
{
    memset(f, 0, sizeof(*f));
    f->fd = -1;
    f->dir_fd = -1;
    f->dest_fd = -1;
    f->slot = -1;
    if (kind == KIND_OUTPUT) {
        int rc = into_try(f, path);
        if (rc <= 0)
            return rc;
    }
    const int private_ = kind == KIND_PRIVATE;
    struct stat old;
    int replacing = lstat(path, &old) == 0;
    if (replacing && S_ISDIR(old.st_mode))
        return -EISDIR;
    if (replacing && !S_ISREG(old.st_mode) && !S_ISLNK(old.st_mode))
        return HOG_ENOTFILE;
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    if (!*name) /* "out/": a folder's name */
        return -EISDIR;
    if (strlen(name) > NAME_MAX)
        return -ENAMETOOLONG;
    f->path = hog_strdup(path);
    if (!f->path)
        return -ENOMEM;
    f->name = f->path + (name - path);
    f->dir_fd = folder_open(path, name);
    if (f->dir_fd < 0) {
        int rc = -errno;
        hog_atomic_abort(f);
        return rc;
    }
    temps_sweep(f->dir_fd, path);
    /* 0666 (0600) less the umask, applied by the kernel as for any file
     * created with open. */
    const mode_t mode = private_ ? 0600 : 0666;
    f->fd = temp_create_unnamed(f, mode);
    f->unnamed = f->fd >= 0;
    if (f->fd == -EOPNOTSUPP)
        f->fd = temp_create_named(f, mode);
    if (f->fd < 0) {
        int rc = f->fd;
        hog_atomic_abort(f);
        return rc;
    }
    /* A private file was created 0600 less the umask, so no other user
     * could open it even for a moment; the umask may have taken the
     * owner's own bits, which come back here. */
    if (private_ && fchmod(f->fd, 0600) < 0) {
        int rc = -errno;
        hog_atomic_abort(f);
        return rc;
    }
    /* A replaced file keeps its mode from the start (a named temporary file
     * of a 0600 model is never 0644), and its owner at the commit, where
     * this process may give it (root; or a group the user is in): until
     * then the file is this user's, which the sweep of a later run needs to
     * recognise it. */
    if (!private_ && replacing && S_ISREG(old.st_mode)) {
        (void)fchmod(f->fd, old.st_mode & 07777);
        f->owner_kept = 1;
        f->mode = old.st_mode & 07777;
        f->uid = old.st_uid;
        f->gid = old.st_gid;
    }
    return 0;
}

int hog_atomic_open(hog_atomic_file *f, const char *path)
{
    return atomic_open(f, path, KIND_OUTPUT);
}

int hog_atomic_open_file(hog_atomic_file *f, const char *path)
{
    return atomic_open(f, path, KIND_FILE);
}

int hog_atomic_open_private(hog_atomic_file *f, const char *path)
{
    return atomic_open(f, path, KIND_PRIVATE);
}

int hog_scratch_open(hog_atomic_file *f, const char *dir, const char *label)
{
    memset(f, 0, sizeof(*f));
    f->fd = -1;
    f->dest_fd = -1;
    f->slot = -1;
    size_t dn = strlen(dir), ln = strlen(label);
    if (!(f->path = hog_malloc(dn + ln + 2)))
        return -ENOMEM;
    snprintf(f->path, dn + ln + 2, "%s/%s", dir, label);
    f->name = f->path + dn + 1;
    f->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (f->dir_fd < 0) {
        int rc = -errno;
        hog_atomic_abort(f);
        return rc;
    }
    /* No name ever, or one for the instant between its creation and its
     * unlink (a crash there leaves a file of the pattern the sweeps take). */
    f->fd = temp_create_unnamed(f, 0600);
    f->unnamed = f->fd >= 0;
    if (f->fd == -EOPNOTSUPP) {
        temps_sweep(f->dir_fd, f->path);
        f->fd = temp_create_named(f, 0600);
        if (f->fd >= 0 && unlinkat(f->dir_fd, f->tmp_name, 0) == 0) {
            pending_drop(&f->slot);
            f->tmp_name[0] = '\0';
        }
    }
    if (f->fd < 0 || f->tmp_name[0]) {
        int rc = f->fd < 0 ? f->fd : -errno;
        hog_atomic_abort(f);
        return rc;
    }
    return 0;
}

int hog_scratch_take(hog_atomic_file *f)
{
    int fd = f->fd;
    f->fd = -1;
    hog_atomic_abort(f);
    return fd;
}

int hog_atomic_write(hog_atomic_file *f, const void *buf, size_t len)
{
    return hog_atomic_pwrite(f, buf, len, f->end);
}

int hog_atomic_write_crc(hog_atomic_file *f, uint32_t *crc, const void *buf, size_t len)
{
    if (len == 0)
        return 0;
    *crc = hog_crc32(*crc, buf, len);
    return hog_atomic_write(f, buf, len);
}

int hog_atomic_direct(hog_atomic_file *f, int on)
{
    if (f->into != HOG_INTO_RENAME) /* a device, or a scratch file nothing reads back from disk */
        return on ? -EOPNOTSUPP : 0;
    int fl = fcntl(f->fd, F_GETFL);
    if (fl < 0 || fcntl(f->fd, F_SETFL, on ? fl | O_DIRECT : fl & ~O_DIRECT) < 0)
        return -errno;
    f->direct = on;
    return 0;
}

int hog_atomic_pwrite(hog_atomic_file *f, const void *buf, size_t len, uint64_t off)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = pwrite(f->fd, p, len, (off_t)off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EINVAL && f->direct) { /* an alignment this file system refuses */
                int rc = hog_atomic_direct(f, 0);
                if (rc < 0)
                    return rc;
                continue;
            }
            return -errno;
        }
        p += w;
        len -= (size_t)w;
        off += (uint64_t)w;
    }
    if (off > f->end)
        f->end = off;
    /* Only a hint: the kernel may refuse it (a pipe, an old file system),
     * and an I/O error it meets is reported again by the fsync. Without it
     * dirty pages wait for the background threshold (10% of RAM by
     * default): a 2.6 GB convert output spent 1.15 s of its 9 s in the
     * final fsync. */
    if (f->into == HOG_INTO_RENAME && f->end - f->synced >= HOG_WRITEBACK_BYTES) {
        (void)sync_file_range(f->fd, (off_t)f->synced, (off_t)(f->end - f->synced), SYNC_FILE_RANGE_WRITE);
        f->synced = f->end;
    }
    return 0;
}

int hog_atomic_commit(hog_atomic_file *f)
{
    if (f->into != HOG_INTO_RENAME) {
        /* A device's fsync is EINVAL where it keeps nothing (/dev/null). */
        int rc = f->into == HOG_INTO_COPY ? into_copy(f) : fsync(f->fd) < 0 && errno != EINVAL ? -errno : 0;
        hog_atomic_abort(f);
        return rc;
    }
    int rc = fsync(f->fd) < 0 ? -errno : 0;
    if (rc == 0 && f->owner_kept) {
        if (fchown(f->fd, f->uid, f->gid) < 0)
            (void)fchown(f->fd, (uid_t)-1, f->gid);
        (void)fchmod(f->fd, f->mode); /* a change of owner clears set-user-ID */
    }
    if (rc == 0 && f->unnamed)
        rc = temp_link_unnamed(f);
    /* The file keeps its lock (f->fd stays open) until it has its final
     * name, so a sweep never takes it for abandoned. */
    if (rc == 0 && renameat(f->dir_fd, f->tmp_name, f->dir_fd, f->name) < 0)
        rc = -errno;
    if (rc == 0) {
        pending_drop(&f->slot);
        f->tmp_name[0] = '\0';
        if (fsync(f->dir_fd) < 0)
            rc = -errno;
    }
    hog_atomic_abort(f);
    return rc;
}

void hog_atomic_abort(hog_atomic_file *f)
{
    if (f->path) { /* opened: every field is set */
        pending_drop(&f->slot);
        if (f->tmp_name[0])
            unlinkat(f->dir_fd, f->tmp_name, 0);
        if (f->dir_fd >= 0)
            close(f->dir_fd);
        if (f->into == HOG_INTO_COPY && f->dest_fd >= 0)
            close(f->dest_fd);
        hog_free(f->path);
    }
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    f->dir_fd = -1;
    f->dest_fd = -1;
    f->into = HOG_INTO_RENAME;
    f->tmp_name[0] = '\0';
    f->path = NULL;
    f->name = NULL;
}

int hog_write_file_atomic(const char *path, const void *buf, size_t len)
{
    hog_atomic_file f;
    int rc = hog_atomic_open_file(&f, path);
    if (rc < 0)
        return rc;
    rc = hog_atomic_write(&f, buf, len);
    if (rc < 0) {
        hog_atomic_abort(&f);
        return rc;
    }
    return hog_atomic_commit(&f);
}

/* The public face of hog_atomic_file, for programs that link the library. */
struct hog_output {
    hog_atomic_file file;
};

int hog_output_open(const char *path, hog_output **out)
{
    *out = NULL;
    int rc = hog_cpu_check(NULL, 0);
    if (rc < 0)
        return rc;
    hog_output *o = hog_malloc(sizeof(*o));
    if (!o)
        return -ENOMEM;
    rc = hog_atomic_open(&o->file, path);
    if (rc < 0) {
        hog_free(o);
        return rc;
    }
    *out = o;
    return 0;
}

hog_atomic_file *hog_output_file(hog_output *o)
{
    return &o->file;
}

int hog_output_write(hog_output *o, const void *buf, size_t len)
{
    return hog_atomic_write(&o->file, buf, len);
}

int hog_output_commit(hog_output *o)
{
    int rc = hog_atomic_commit(&o->file);
    hog_free(o);
    return rc;
}

void hog_output_abort(hog_output *o)
{
    if (!o)
        return;
    hog_atomic_abort(&o->file);
    hog_free(o);
}

int hog_read_file(const char *path, unsigned char **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    int rc = fstat(fd, &st) < 0 ? -errno : S_ISREG(st.st_mode) ? 0 : -EINVAL;
    if (rc < 0) {
        close(fd);
        return rc;
    }
    size_t size = (size_t)st.st_size;
    unsigned char *buf = hog_malloc(size ? size : 1);
    if (!buf) {
        close(fd);
        return -ENOMEM;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            rc = r < 0 ? -errno : -EIO;
            hog_free(buf);
            close(fd);
            return rc;
        }
        got += (size_t)r;
    }
    close(fd);
    *out = buf;
    *len = got;
    return 0;
}
