/* util.h: the private helpers every subsystem shares: allocation, errors, logging, checksums, files, random numbers. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_UTIL_H
#define HOG_UTIL_H

#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <locale.h>
#include <sys/stat.h>

#include "hogtrain.h"

#define HOG_CACHELINE 64
#define HOG_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define HOG_MIN(a, b) ((a) < (b) ? (a) : (b))
#define HOG_MAX(a, b) ((a) > (b) ? (a) : (b))

#if defined(__GNUC__)
#define HOG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define HOG_LIKELY(x) __builtin_expect(!!(x), 1)
#define HOG_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define HOG_PRINTF(f, a)
#define HOG_LIKELY(x) (x)
#define HOG_UNLIKELY(x) (x)
#endif

/* ---- allocation: one wrapper, jemalloc in normal builds, libc under sanitizers ---- */
void *hog_malloc(size_t n);
void *hog_calloc(size_t count, size_t size);
void *hog_realloc(void *p, size_t n);
/* Aligned to `align` (a power of two, at least sizeof(void *)); free with hog_free. */
void *hog_aligned_alloc(size_t align, size_t n);
void hog_free(void *p);
/* Large arrays read at random (a model's weights and state): from 2 MiB on,
 * aligned to and rounded up to 2 MiB pages and advised to the kernel as
 * huge pages (madvise MADV_HUGEPAGE; where refused, small pages, silently).
 * Free with hog_free. _calloc zeroes (the first touch: the pages are made
 * then); _grow copies old bytes of p (NULL: none) into a zeroed array of n
 * and frees p, or returns NULL and leaves p as it was. */
void *hog_huge_alloc(size_t n);
void *hog_huge_calloc(size_t count, size_t size);
void *hog_huge_grow(void *p, size_t old, size_t n);
/* Huge pages for a mapping made elsewhere (a NUMA node's, by hwloc, or
 * fresh pages a worker will touch first): map hog_huge_round(n) bytes
 * instead of n - 2 MiB more from 2 MiB on, so that n bytes fit from the
 * first 2 MiB boundary inside - then hog_huge_advise(p, that length)
 * advises the whole huge pages from that boundary before anything touches
 * them and returns it (below 2 MiB: p itself, nothing advised). */
size_t hog_huge_round(size_t n);
void *hog_huge_advise(void *p, size_t n);
/* What the process got: the kernel's setting, the bytes advised and the
 * huge pages it holds (/proc/self/smaps_rollup), one line into buf. */
void hog_huge_describe(char *buf, size_t len);
char *hog_strdup(const char *s);
/* Grows the array *p (elements of `size` bytes, *cap of them) to hold at
 * least `need`, doubling from `first` (or from *cap when it is larger), so n
 * appends cost O(log n) reallocations. Leaves *p and *cap unchanged and
 * returns -ENOMEM when the memory cannot be had or the size would overflow;
 * returns 0 otherwise. */
int hog_array_grow(void **p, size_t *cap, size_t need, size_t size, size_t first);
/* Adds y to the ascending set s[0..*n) (room for cap) unless it is there.
 * Returns 0, or -1 when the set is full. */
int hog_set_insert_f64(double *s, uint32_t *n, uint32_t cap, double y);

/* ---- error details: a message written into a caller's buffer ---- */
/* Writes a formatted message into buf (len bytes, NUL-terminated) when buf is
 * not NULL, and returns rc so a caller can `return hog_fail(...)`. */
int hog_fail(int rc, char *buf, size_t len, const char *fmt, ...) HOG_PRINTF(4, 5);

/* ---- logging ---- */
void hog_log(hog_log_level level, const char *fmt, ...) HOG_PRINTF(2, 3);

/* ---- the CPU (util_abi.c) ---- */
/* hog_init's check, for the calls that read files or create objects to make
 * first: 0, or HOG_ECPU with the instruction sets this CPU lacks in err
 * (len bytes, NUL-terminated; may be NULL). Runs on any x86-64 CPU; the
 * CPU is asked once per process. */
int hog_cpu_check(char *err, size_t len);

/* ---- checksums (util_hash.c) ---- */
/* CRC-32 (zlib's polynomial): model files and version-1 binary datasets. */
uint32_t hog_crc32(uint32_t crc, const void *data, size_t len);
/* XXH3-64 with a seed: binary datasets from version 2 on. Several GB/s per
 * core, where zlib's CRC-32 manages about 1.4 here; a checksum of several
 * arrays is chained, each array's hash seeding the next. Thread-safe. */
uint64_t hog_hash64(const void *data, size_t len, uint64_t seed);

/* ---- feature hashing: MurmurHash3 x86_32 (util_murmur.c) ---- */
/* Austin Appleby's hash (public domain), written from its description:
 * 4-byte little-endian blocks, then the tail, then the length and the final
 * avalanche. The block steps are inline so that a parser's hot loop can
 * hash a 4-byte key without a call (hog_murmur3_u32). */
static inline uint32_t hog_murmur_k(uint32_t k)
{
    k *= 0xcc9e2d51u;
    k = (k << 15) | (k >> 17);
    return k * 0x1b873593u;
}

static inline uint32_t hog_murmur_block(uint32_t h, uint32_t k)
{
    h ^= hog_murmur_k(k);
    h = (h << 13) | (h >> 19);
    return h * 5 + 0xe6546b64u;
}

static inline uint32_t hog_murmur_final(uint32_t h, uint32_t len)
{
    h ^= len;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

/* The hash of x's 4 little-endian bytes: hog_murmur3_32 of them, inline. */
static inline uint32_t hog_murmur3_u32(uint32_t x, uint32_t seed)
{
    return hog_murmur_final(hog_murmur_block(seed, x), 4);
}

/* The hash of s[0..len). */
uint32_t hog_murmur3_32(const char *s, size_t len, uint32_t seed);

/* The same hash fed piece by piece: start from {seed, 0, 0, 0}, feed the
 * pieces in order, and hog_murmur_end gives hog_murmur3_32 of them joined
 * (a CSV category's "name=value" without building the string). */
typedef struct hog_murmur_stream {
    uint32_t h, carry, len;
    unsigned n;
} hog_murmur_stream;
void hog_murmur_feed(hog_murmur_stream *m, const char *s, size_t len);
uint32_t hog_murmur_end(const hog_murmur_stream *m);

/* The mask that keeps the low `bits` bits of a hash (0, or 32 and more:
 * all of them). */
static inline uint32_t hog_hash_mask(unsigned bits)
{
    return bits == 0 || bits >= 32 ? UINT32_MAX : (1u << bits) - 1;
}

/* The feature hash of a string (namespace-seeded), reduced to bits. */
uint32_t hog_hash_feature(const char *s, size_t len, uint32_t seed, unsigned bits);

/* ---- 64-bit mixing and a small seeded generator (splitmix64) ---- */
static inline uint64_t hog_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

typedef struct hog_rng {
    uint64_t state;
} hog_rng;

static inline uint64_t hog_rng_next(hog_rng *r)
{
    r->state += 0x9e3779b97f4a7c15ULL;
    uint64_t x = r->state;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Uniform in [0, n) (Lemire's multiply-shift; the bias is below 2^-32 for n < 2^32). */
static inline uint32_t hog_rng_below(hog_rng *r, uint32_t n)
{
    return (uint32_t)(((hog_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Fisher-Yates shuffle of a[0..n). */
static inline void hog_shuffle_u32(uint32_t *a, uint32_t n, hog_rng *r)
{
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = hog_rng_below(r, i);
        uint32_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

/* Where y is, or would go, in the ascending a[0..n): the first place
 * whose value is not below y (n: past them all). */
static inline uint32_t hog_search_f64(const double *a, uint32_t n, double y)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (a[mid] < y)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Whether y is one of the ascending a[0..n). */
static inline int hog_has_f64(const double *a, uint32_t n, double y)
{
    uint32_t at = hog_search_f64(a, n, y);
    return at < n && a[at] == y;
}

/* Lowers *a to v if v is below it (raises, for _max), lock-free: what
 * several threads reduce into one, the lowest bad block or the largest
 * index seen. Relaxed: the value alone is shared, nothing else by it. */
static inline void hog_atomic_min_u32(atomic_uint *a, uint32_t v)
{
    unsigned was = atomic_load_explicit(a, memory_order_relaxed);
    while (v < was && !atomic_compare_exchange_weak_explicit(a, &was, v, memory_order_relaxed, memory_order_relaxed))
        ;
}

static inline void hog_atomic_max_u64(_Atomic uint64_t *a, uint64_t v)
{
    uint64_t was = atomic_load_explicit(a, memory_order_relaxed);
    while (v > was && !atomic_compare_exchange_weak_explicit(a, &was, v, memory_order_relaxed, memory_order_relaxed))
        ;
}

/* ---- the machine (util_machine.c) ---- */
/* Memory the kernel says is available for new work (MemAvailable), in bytes;
 * sysconf's free pages where /proc/meminfo is missing. hwloc's NUMA memory
 * figures are not used: with lazy page initialisation they are wrong. */
uint64_t hog_mem_available(void);

/* The memory this process's cgroup still lets it use: the lowest, from its
 * cgroup up to the root, of the limit less the working set (usage less the
 * inactive page cache, which is reclaimed first), or UINT64_MAX with no
 * limit. Cgroup v1 when /proc/self/cgroup names a memory controller
 * (v1_root/PATH/memory.limit_in_bytes, memory.usage_in_bytes, a limit near
 * 2^63 meaning none), else v2 ("0::PATH": v2_root/PATH/memory.max, "max"
 * meaning none, memory.current). The files are read from proc_cgroup and
 * the two roots, which tests point at a scratch tree. */
uint64_t hog_mem_cgroup_room(const char *proc_cgroup, const char *v1_root, const char *v2_root);

/* What a run may use: the smaller of hog_mem_available and the cgroup's
 * room (hog_mem_cgroup_room of /proc/self/cgroup, /sys/fs/cgroup/memory
 * and /sys/fs/cgroup). */
uint64_t hog_mem_usable(void);

/* The CPUs this process may run on (its affinity mask), at least 1. */
unsigned hog_cpus(void);

double hog_now(void); /* seconds, CLOCK_MONOTONIC */

/* 1 where the CPU has PREFETCHW (CPUID 0x80000001, ECX bit 8), else 0: set
 * when the library loads, read by the row loops' write prefetches
 * (train.h, hog_prefetch_write). */
extern int hog_cpu_prefetchw;

/* ---- vector register state ---- */
/* Code built for plain x86-64 (legacy SSE) runs far slower on a thread whose
 * AVX registers' upper halves are left in use by earlier AVX code: each
 * instruction gains a false dependency. hog_vector_state_clear ends that
 * state (vzeroupper) where the CPU has AVX, and does nothing elsewhere; the
 * pool's workers call it before each step. hog_vector_state_dirty says
 * whether the upper halves of registers 0-15 (AVX or AVX-512) are in use
 * on this thread: 1 or 0, or -1 where the CPU cannot tell (no XGETBV with
 * ECX=1). */
void hog_vector_state_clear(void);
int hog_vector_state_dirty(void);

/* ---- fixed-width fields of the binary formats, in host byte order (the
 * formats are little-endian, as every target hogtrain builds for) ---- */
static inline uint32_t hog_get_u32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline uint64_t hog_get_u64(const void *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline void hog_put_u32(void *p, uint32_t v)
{
    memcpy(p, &v, sizeof(v));
}

static inline void hog_put_u64(void *p, uint64_t v)
{
    memcpy(p, &v, sizeof(v));
}

/* ---- numbers as text in files, in the C locale (util_number.c) ---- */
/* The C locale ('.' the decimal point, no digit grouping), made once per
 * process and never freed; (locale_t)0 when it could not be made (out of
 * memory), and then callers fall back to the thread's locale. Thread-safe. */
locale_t hog_c_locale(void);

/* Enough for any double hog_number_format writes, and its NUL. */
#define HOG_NUMBER_CHARS 32

/* Writes v with 17 significant digits ("%.17g": enough for every double to
 * read back to itself; "nan", "inf" for those) in the C locale, whatever
 * locale the embedding program set. Returns what snprintf returns.
 * Thread-safe. */
int hog_number_format(char *buf, size_t len, double v);

/* Reads all of s as a double in the C locale (strtod's syntax). Returns 0,
 * or -EINVAL (nothing, or something after the number); *out is set only on
 * success. Thread-safe. */
int hog_number_parse(const char *s, double *out);

/* ---- numbers as printf writes them, without printf (util_format.c) ---- */
/* Enough for anything the two formatters below write, and its NUL
 * ("%.6f" of the largest double takes 318 bytes). */
#define HOG_FORMAT_CHARS 320

/* Write v into buf (HOG_FORMAT_CHARS bytes) byte for byte as snprintf's
 * "%.6f" and "%.9g" would in the C locale (correctly rounded, ties to
 * even; "nan", "-inf" and the like), NUL-terminated, and return the
 * length. About ten times faster than snprintf for the values they are
 * made for (probabilities, and floats in %.9g, which round-trips them).
 * Thread-safe. */
size_t hog_format_f6(char *buf, double v);
size_t hog_format_g9(char *buf, double v);

/* ---- atomic file output: an unnamed file (O_TMPFILE) or a named temporary one, fsync, rename, fsync of the folder (util_file.c) ---- */
typedef struct hog_atomic_file {
    int fd;
    int dir_fd;     /* the target's folder: where the file is named, renamed and fsynced */
    char *path;     /* final path */
    const char *name; /* its last component (inside path) */
    char tmp_name[NAME_MAX + 1]; /* the temporary name in dir_fd while the file has one, else "" */
    int unnamed;    /* made with O_TMPFILE: named only at the commit */
    int slot;       /* its place in the table of hog_output_unlink_temps, or -1 */
    int owner_kept; /* the replaced file's owner and mode are given at the commit */
    mode_t mode;
    uid_t uid;
    gid_t gid;
    uint64_t end;   /* the end of what was written: where hog_atomic_write goes */
    uint64_t synced;/* bytes before this were handed to writeback (see hog_atomic_pwrite) */
    int direct;     /* O_DIRECT is on (hog_atomic_direct) */
    int into;       /* HOG_INTO_*: how an output that is not a regular file is written */
    int dest_fd;    /* HOG_INTO_COPY: where the commit copies the file (a dup of one of the
                     * process's descriptors, a character device), or -1: a FIFO, opened then */
} hog_atomic_file;

/* How hog_atomic_open writes its output (hog_atomic_file.into). Zero, the
 * default of a struct set by hand, is the renamed file. */
enum {
    HOG_INTO_RENAME = 0, /* a new file renamed over the path at the commit */
    HOG_INTO_DEVICE = 1, /* fd is a character device that seeks (/dev/null): written in place */
    HOG_INTO_COPY = 2    /* fd is a nameless scratch file in /tmp, copied into dest_fd at the commit */
};

/* Opens an output at path. A regular file, a missing one, a symbolic link
 * to one, or a dangling link is replaced atomically: the new file is made in
 * path's folder, unnamed (O_TMPFILE) where the file system allows it, else
 * named NAME.hogtmp.XXXXXX; with the permissions of the file it will
 * replace, or 0666 less the umask for a new one (the owner follows at the
 * commit). A symbolic link at path is replaced, not followed. First removes
 * what interrupted runs left in that folder: files of that pattern, this
 * user's, that no live process holds locked.
 *
 * Anything else that exists is written into, never replaced, as cp and cc
 * -o do, and what a symbolic link at path leads to is what counts:
 * - a path that names one of the process's own descriptors (/dev/fd/N,
 *   /proc/self/fd/N, /dev/stdout, /dev/stderr, or a link to one): the
 *   descriptor is duplicated, so that a pipe, a socket or a file the shell
 *   opened with >> (which no open() of the path reaches the same way) is
 *   written; -EBADF when the descriptor is closed or read-only;
 * - a character device that seeks (/dev/null): written in place;
 * - a FIFO, a terminal, a descriptor: the output goes to a nameless scratch
 *   file in /tmp and is copied in whole at the commit, so that a reader gets
 *   all of it or nothing, and a FIFO is opened (for writing, waiting for a
 *   reader as any writer does) only by a commit, never by a failed run.
 * Returns 0, -EISDIR (path is a folder), HOG_ENOTFILE (a block device or a
 * socket's name), -EBADF, or -errno (-ENOENT, -EACCES, -EROFS, -ENOSPC, ...). */
int hog_atomic_open(hog_atomic_file *f, const char *path);
/* As hog_atomic_open, for a file the library reads back (a cache, a
 * checkpoint): only a regular file (or a link, or nothing) at path is
 * replaced; a device, FIFO or socket gives HOG_ENOTFILE and is left as it
 * is. */
int hog_atomic_open_file(hog_atomic_file *f, const char *path);
/* As hog_atomic_open_file, for a file only its owner may read (a secret
 * key): the file is made 0600 and stays 0600 whatever the umask and the
 * mode and owner of the file it replaces, so that no other user can open it
 * at any moment. */
int hog_atomic_open_private(hog_atomic_file *f, const char *path);
/* A scratch file in the folder dir, for data too large for memory: never
 * named (O_TMPFILE), or, where the file system refuses that, unlinked the
 * moment it is created, so that it vanishes with its last descriptor, a
 * crash included. Only its owner may read it. Written with the calls
 * below; label is how messages name it (f->path is DIR/LABEL). Returns 0
 * or -errno. */
int hog_scratch_open(hog_atomic_file *f, const char *dir, const char *label);
/* The scratch file's descriptor, which the caller now owns; frees f. */
int hog_scratch_take(hog_atomic_file *f);
/* Appends all of buf after the furthest byte written so far. Returns 0 or -errno. */
int hog_atomic_write(hog_atomic_file *f, const void *buf, size_t len);
/* hog_atomic_write that also runs the CRC-32 *crc over buf, for the file
 * formats that end in a checksum of what came before. */
int hog_atomic_write_crc(hog_atomic_file *f, uint32_t *crc, const void *buf, size_t len);
/* Writes all of buf at offset off. Returns 0 or -errno. Each time another
 * HOG_WRITEBACK_BYTES lie past what was last handed to the kernel, their
 * writeback is started (sync_file_range, which does not wait), so that a
 * large output goes to disk while it is made instead of all at once in the
 * fsync of hog_atomic_commit. */
#define HOG_WRITEBACK_BYTES (32u << 20)
int hog_atomic_pwrite(hog_atomic_file *f, const void *buf, size_t len, uint64_t off);
/* Turns O_DIRECT on or off for the writes that follow (fcntl F_SETFL).
 * With it on, the kernel copies nothing into the page cache: the device
 * reads the caller's buffer. Every write must then start at a multiple of
 * HOG_DIRECT_ALIGN in memory and in the file and be a multiple of it long;
 * a write the file system still refuses (EINVAL: a stricter alignment) is
 * made again buffered, and O_DIRECT stays off from then on. Returns 0, or
 * -errno when the file system does not take O_DIRECT (tmpfs), or
 * -EOPNOTSUPP for an output written into (a device, a FIFO): the file is
 * then written buffered as before. */
#define HOG_DIRECT_ALIGN 4096u
int hog_atomic_direct(hog_atomic_file *f, int on);
/* fsyncs; gives an unnamed file its temporary name (linkat); renames it
 * over path; fsyncs the folder. Frees f. Returns 0 or -errno (on failure
 * the temporary file is removed, and path is as it was unless the folder's
 * fsync failed). An output written into (HOG_INTO_COPY) is copied into its
 * destination here, opening a FIFO first (which waits for its reader);
 * -EPIPE when the reader went away. */
int hog_atomic_commit(hog_atomic_file *f);
/* Removes the temporary file (closing an unnamed one is enough) and frees
 * f. Safe after a failed open, after a commit (it then does nothing) and on
 * a struct set to {.fd = -1}. */
void hog_atomic_abort(hog_atomic_file *f);

/* The file a hog_output writes (util_file.c), for the library's own
 * writers; the caller of a writer that commits or aborts it then frees o
 * with hog_free. */
hog_atomic_file *hog_output_file(hog_output *o);

/* Reads a whole regular file into a new buffer (*out, hog_free it; at least
 * one byte is allocated, so an empty file gives a valid pointer and *len 0).
 * Returns 0, -errno, -EINVAL (not a regular file), -EIO (it shrank while
 * being read) or -ENOMEM. */
int hog_read_file(const char *path, unsigned char **out, size_t *len);

/* Whether a file of this mode (stat's st_mode) is a stream: a pipe, a
 * socket or a terminal, with no offsets and no size, read in order and
 * once. */
static inline int hog_is_stream(mode_t mode)
{
    return S_ISFIFO(mode) || S_ISSOCK(mode) || S_ISCHR(mode);
}

/* Writes a whole regular file atomically (hog_atomic_open_file and the
 * helpers above in one call). */
int hog_write_file_atomic(const char *path, const void *buf, size_t len);

#endif /* HOG_UTIL_H */
