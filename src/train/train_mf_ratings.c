/* train_mf_ratings.c: rating triples for matrix factorisation: name maps, the text reader and the binary ratings file (.hgr). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "train_mf.h"

/*
 * Binary ratings file (.hgr), version 1. Little-endian.
 *
 * Why a format of its own and not rows of a .hgd: a rating stored as a .hgd
 * row would be a row offset, two indices, two values and a label (24 bytes
 * where a triple needs 12), in 4096-byte aligned blocks, and .hgd has no
 * place for the user and item names that predictions are asked by. This
 * file is the triples as the trainer holds them in memory, so it is mapped
 * and used in place, plus the two name tables.
 *
 *   offset  bytes        field
 *   0       8            magic "HOGRATE\0"
 *   8       4            version (1)
 *   12      4            flags: bit 0 set when the triples have ratings
 *                        (a pairs file has not); other bits refused
 *   16      8            n, triples
 *   24      4            users
 *   28      4            items
 *   32      8            U, bytes of user names (NUL-terminated, back to back)
 *   40      8            I, bytes of item names
 *   48      8            fingerprint (hog_ratings_fingerprint)
 *   56      4            CRC-32 of every byte after the header
 *   60      4            CRC-32 of bytes 0..59
 *   64      12 n         triples: u32 user, u32 item, f32 rating (NaN in a pairs file)
 *   ...     4 (users+1)  u32 offset of each user name in the user names, then U
 *   ...     U + pad      user names, zero-padded to a multiple of 4
 *   ...     4 (items+1)  item name offsets
 *   ...     I + pad      item names, zero-padded to a multiple of 4
 *
 * Everything is checked at open: sizes against the file size, both CRCs,
 * name offsets increasing and each name NUL-terminated and unique, ids in
 * range, ratings finite.
 */
#define HGR_VERSION 1u
#define HGR_HEAD 64u
#define HGR_HAS_RATINGS 1u
#define MAX_NAME 4096u

/* ===================================================================== *
 *  Name maps
 * ===================================================================== */
static uint64_t name_hash(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, then a full mix for the table's low bits */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return hog_mix64(h);
}

static int same_name(const hog_idmap *m, uint32_t id, const char *s, size_t len)
{
    uint32_t a = m->off[id], b = m->off[id + 1];
    return b - a == len + 1 && memcmp(m->names + a, s, len) == 0;
}

static void table_put(uint32_t *slots, uint32_t cap, uint64_t h, uint32_t id)
{
    uint32_t i = (uint32_t)h & (cap - 1);
    while (slots[i])
        i = (i + 1) & (cap - 1);
    slots[i] = id + 1;
}

static int table_grow(hog_idmap *m, uint32_t want)
{
    uint32_t cap = m->cap ? m->cap : 64;
    while (cap / 2 < want) {
        if (cap >= (1u << 31))
            return HOG_ECORRUPT;
        cap *= 2;
    }
    if (cap == m->cap)
        return 0;
    uint32_t *slots = hog_calloc(cap, sizeof(uint32_t));
    if (!slots)
        return -ENOMEM;
    for (uint32_t id = 0; id < m->n; id++) {
        const char *s = m->names + m->off[id];
        table_put(slots, cap, name_hash(s, m->off[id + 1] - m->off[id] - 1), id);
    }
    hog_free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return 0;
}

int64_t hog_idmap_find(const hog_idmap *m, const char *s, size_t len)
{
    if (!m->cap)
        return -1;
    uint32_t i = (uint32_t)name_hash(s, len) & (m->cap - 1);
    for (uint32_t v; (v = m->slots[i]) != 0; i = (i + 1) & (m->cap - 1))
        if (same_name(m, v - 1, s, len))
            return v - 1;
    return -1;
}

int hog_idmap_intern(hog_idmap *m, const char *s, size_t len, uint32_t *id)
{
    int64_t found = hog_idmap_find(m, s, len);
    if (found >= 0) {
        *id = (uint32_t)found;
        return 0;
    }
    if (m->n >= UINT32_MAX - 2 || m->names_len + len + 1 > UINT32_MAX)
        return HOG_ECORRUPT;
    int rc = table_grow(m, m->n + 1);
    if (rc < 0)
        return rc;
    if (m->n + 2 > m->off_cap) {
        uint32_t cap = m->off_cap ? m->off_cap * 2 : 256;
        uint32_t *off = hog_realloc(m->off, (size_t)cap * sizeof(uint32_t));
        if (!off)
            return -ENOMEM;
        m->off = off;
        m->off_cap = cap;
    }
    if (m->names_len + len + 1 > m->names_cap) {
        uint64_t cap = m->names_cap ? m->names_cap * 2 : 4096;
        while (cap < m->names_len + len + 1)
            cap *= 2;
        char *names = hog_realloc(m->names, cap);
        if (!names)
            return -ENOMEM;
        m->names = names;
        m->names_cap = cap;
    }
    if (m->n == 0)
        m->off[0] = 0;
    memcpy(m->names + m->names_len, s, len);
    m->names[m->names_len + len] = '\0';
    m->names_len += len + 1;
    m->off[m->n + 1] = (uint32_t)m->names_len;
    *id = m->n++;
    table_put(m->slots, m->cap, name_hash(s, len), *id);
    m->owned = 1;
    return 0;
}

int hog_idmap_index(hog_idmap *m)
{
    uint32_t n = m->n;
    m->n = 0;
    int rc = table_grow(m, n);
    m->n = n;
    if (rc < 0)
        return rc;
    for (uint32_t id = 0; id < n; id++) {
        const char *s = m->names + m->off[id];
        size_t len = m->off[id + 1] - m->off[id] - 1;
        if (hog_idmap_find(m, s, len) >= 0)
            return HOG_ECORRUPT;
        table_put(m->slots, m->cap, name_hash(s, len), id);
    }
    return 0;
}

int hog_idmap_check(hog_idmap *m)
{
    uint32_t n = m->n;
    if (n && (m->off[0] != 0 || m->off[n] != m->names_len))
        return HOG_ECORRUPT;
    if (!n && m->names_len)
        return HOG_ECORRUPT;
    for (uint32_t i = 0; i < n; i++)
        if (m->off[i + 1] <= m->off[i] || m->off[i + 1] > m->names_len || m->names[m->off[i + 1] - 1] != '\0' ||
            memchr(m->names + m->off[i], '\0', m->off[i + 1] - m->off[i] - 1))
            return HOG_ECORRUPT;
    return hog_idmap_index(m);
}

void hog_idmap_free(hog_idmap *m)
{
    if (m->owned) {
        hog_free(m->off);
        hog_free(m->names);
    }
    hog_free(m->slots);
    memset(m, 0, sizeof(*m));
}

/* ===================================================================== *
 *  The ratings object
 * ===================================================================== */
void hog_ratings_close(hog_ratings *r)
{
    if (!r)
        return;
    hog_idmap_free(&r->users);
    hog_idmap_free(&r->items);
    hog_free(r->own);
    if (r->map)
        munmap(r->map, r->map_len);
    hog_free(r);
}

void hog_ratings_get_info(const hog_ratings *r, hog_ratings_info *info)
{
    *info = r->info;
}

void hog_ratings_get(const hog_ratings *r, uint64_t i, uint32_t *user, uint32_t *item, float *rating)
{
    const hog_mf_triple *t = &r->t[i];
    if (user)
        *user = t->user;
    if (item)
        *item = t->item;
    if (rating)
        *rating = t->rating;
}

const char *hog_ratings_user_name(const hog_ratings *r, uint32_t u)
{
    return hog_idmap_name(&r->users, u);
}

const char *hog_ratings_item_name(const hog_ratings *r, uint32_t i)
{
    return hog_idmap_name(&r->items, i);
}

uint64_t hog_ratings_fingerprint(const hog_ratings *r)
{
    uint32_t hi = hog_crc32(0, r->t, r->info.ratings * sizeof(hog_mf_triple));
    uint32_t lo = hog_crc32(0, r->users.names, r->users.names_len);
    lo = hog_crc32(lo, r->items.names, r->items.names_len);
    return (uint64_t)hi << 32 | lo;
}

/* Mean and range of the ratings, once the triples are in place. */
static void ratings_summary(hog_ratings *r)
{
    hog_ratings_info *in = &r->info;
    in->users = r->users.n;
    in->items = r->items.n;
    in->mean = in->min = in->max = NAN;
    if (!in->has_ratings)
        return;
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    for (uint64_t i = 0; i < in->ratings; i++) {
        double v = r->t[i].rating;
        sum += v;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    in->mean = sum / (double)in->ratings;
    in->min = lo;
    in->max = hi;
}

/* ===================================================================== *
 *  Text
 * ===================================================================== */
typedef struct text_cursor {
    const char *path;
    const char *line;  /* start of the current line */
    uint64_t lineno;   /* 1-based */
    char *err;
    size_t err_len;
} text_cursor;

static int is_field_end(char ch)
{
    return ch == ' ' || ch == '\t' || ch == ',' || ch == '\n' || ch == '\r';
}

/* HOG_EFORMAT with "path:line:col: expected WHAT, found 'TOKEN'". */
static int text_error(const text_cursor *c, const char *at, const char *end, const char *what)
{
    /* The offending token: up to the next separator, or the separator alone. */
    const char *tok_end = at;
    if (at < end && (*at == ' ' || *at == '\t' || *at == ','))
        tok_end++;
    else
        while (tok_end < end && tok_end - at < 32 && !is_field_end(*tok_end))
            tok_end++;
    if (at >= end || *at == '\n' || *at == '\r')
        return hog_fail(HOG_EFORMAT, c->err, c->err_len, "%s:%llu:%llu: expected %s, found the end of the line",
                        c->path, (unsigned long long)c->lineno, (unsigned long long)(at - c->line) + 1, what);
    return hog_fail(HOG_EFORMAT, c->err, c->err_len, "%s:%llu:%llu: expected %s, found '%.*s'", c->path,
                    (unsigned long long)c->lineno, (unsigned long long)(at - c->line) + 1, what,
                    (int)(tok_end - at), at);
}

static int is_blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

/* Skips a separator: blanks, at most one comma, blanks. Returns the next
 * field's start, or NULL if there is no separator before it. */
static const char *skip_separator(const char *s, const char *end)
{
    const char *start = s;
    while (s < end && is_blank(*s))
        s++;
    if (s < end && *s == ',') {
        s++;
        while (s < end && is_blank(*s))
            s++;
    }
    return s > start ? s : NULL;
}

/* At a line's end (after trailing blanks): '\n', "\r\n", or the end of the
 * data. */
static int at_line_end(const char *s, const char *end)
{
    return s >= end || *s == '\n' || (*s == '\r' && (s + 1 >= end || s[1] == '\n'));
}

/* Parses the text in buf[0..len) into r. */
static int parse_text(hog_ratings *r, const char *buf, size_t len, int allow_pairs, text_cursor *c)
{
    const char *s = buf, *end = buf + len;
    uint64_t cap = 0, n = 0;
    int shape = -1; /* 1: triples, 0: pairs; fixed by the first data line */
    int first = 1;
    c->lineno = 0;
    while (s < end) {
        c->line = s;
        c->lineno++;
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *eol = nl ? nl : end;
        const char *next = nl ? nl + 1 : end;
        const char *p = s;
        while (p < eol && is_blank(*p))
            p++;
        if (p == eol || *p == '#' || (*p == '\r' && p + 1 == eol)) {
            s = next;
            continue;
        }
        /* user SEP item [SEP rating [SEP ignored...]]; the rating may be
         * absent only in a pairs file. */
        const char *f[3];
        size_t flen[3];
        int has = 1;
        const char *q = p;
        for (int k = 0; k < 3; k++) {
            f[k] = q;
            while (q < eol && !is_field_end(*q))
                q++;
            flen[k] = (size_t)(q - f[k]);
            if (flen[k] == 0)
                return text_error(c, q, eol, k == 0 ? "a user" : k == 1 ? "an item" : "a rating");
            if (k == 2)
                break;
            const char *after = skip_separator(q, eol);
            if (after && !at_line_end(after, eol)) {
                q = after;
                continue;
            }
            if (k == 1 && allow_pairs && shape != 1 && at_line_end(after ? after : q, eol)) {
                has = 0;
                break;
            }
            return text_error(c, after ? after : q, eol, k == 0 ? "a separator and an item" : "a separator and a rating");
        }
        double v = NAN;
        if (has) {
            const char *num_end = hog_parse_double(f[2], f[2] + flen[2], &v);
            if (!num_end || num_end != f[2] + flen[2] || !isfinite(v)) {
                if (first) { /* a header line: its third field is not a number */
                    first = 0;
                    s = next;
                    continue;
                }
                return text_error(c, f[2], eol, "a finite number (the rating)");
            }
            /* Fields after the third (a timestamp) are ignored; a separator must come first. */
            q = f[2] + flen[2];
            if (!at_line_end(q, eol) && !skip_separator(q, eol))
                return text_error(c, q, eol, "a separator or the end of the line");
        }
        first = 0;
        if (shape < 0)
            shape = has;
        else if (shape != has)
            return text_error(c, has ? f[2] : q, eol, shape ? "a rating (earlier lines have one)" :
                                                              "the end of the line (earlier lines have no rating)");
        for (int k = 0; k < 2; k++)
            if (flen[k] > MAX_NAME)
                return text_error(c, f[k], eol, "a name of at most 4096 bytes");
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            hog_mf_triple *t = hog_realloc(r->own, cap * sizeof(hog_mf_triple));
            if (!t)
                return hog_fail(-ENOMEM, c->err, c->err_len, "%s: out of memory", c->path);
            r->own = t;
        }
        hog_mf_triple *t = &r->own[n];
        int rc = hog_idmap_intern(&r->users, f[0], flen[0], &t->user);
        if (rc == 0)
            rc = hog_idmap_intern(&r->items, f[1], flen[1], &t->item);
        if (rc == -ENOMEM)
            return hog_fail(rc, c->err, c->err_len, "%s: out of memory", c->path);
        if (rc < 0)
            return text_error(c, f[0], eol, "fewer than 2^32 - 2 distinct names");
        t->rating = (float)v;
        n++;
        s = next;
    }
    r->t = r->own;
    r->info.ratings = n;
    r->info.has_ratings = shape != 0;
    if (n == 0)
        return hog_fail(HOG_EEMPTY, c->err, c->err_len, "%s: no ratings", c->path);
    return 0;
}

/* ===================================================================== *
 *  The binary file
 * ===================================================================== */

static uint64_t pad4(uint64_t n)
{
    return (n + 3) & ~(uint64_t)3;
}

/* Checks one name table at p (offsets, then names) of n names and
 * names_len bytes, and points m at it. Returns 0 or HOG_ECORRUPT. */
static int map_names(hog_idmap *m, const unsigned char *p, uint32_t n, uint64_t names_len)
{
    m->n = n;
    m->off = (uint32_t *)(uintptr_t)p;
    m->names = (char *)(uintptr_t)(p + 4ull * (n + 1));
    m->names_len = names_len;
    m->owned = 0;
    return hog_idmap_check(m);
}

static int open_binary(hog_ratings *r, const char *path, int fd, uint64_t size, char *err, size_t err_len)
{
    if (size < HGR_HEAD)
        return hog_fail(HOG_ETRUNCATED, err, err_len, "%s: truncated: %llu bytes, the header alone is %u", path,
                        (unsigned long long)size, HGR_HEAD);
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        int rc = -errno;
        return hog_fail(rc, err, err_len, "%s: mmap: %s", path, hog_strerror(rc));
    }
    r->map = map;
    r->map_len = size;
    const unsigned char *h = map;
    if (hog_crc32(0, h, 60) != hog_get_u32(h + 60))
        return hog_fail(HOG_ECHECKSUM, err, err_len, "%s: header checksum mismatch: the file is corrupted", path);
    uint32_t version = hog_get_u32(h + 8), flags = hog_get_u32(h + 12);
    if (version != HGR_VERSION)
        return hog_fail(HOG_EVERSION, err, err_len, "%s: ratings file version %u, this build reads version %u", path,
                        version, HGR_VERSION);
    if (flags & ~HGR_HAS_RATINGS)
        return hog_fail(HOG_ECORRUPT, err, err_len, "%s: unknown flags 0x%x", path, flags);
    uint64_t n = hog_get_u64(h + 16), ulen = hog_get_u64(h + 32), ilen = hog_get_u64(h + 40);
    uint32_t users = hog_get_u32(h + 24), items = hog_get_u32(h + 28);
    if (n > (1ull << 40) || ulen > UINT32_MAX || ilen > UINT32_MAX || users >= UINT32_MAX - 1 ||
        items >= UINT32_MAX - 1)
        return hog_fail(HOG_ECORRUPT, err, err_len, "%s: implausible sizes in the header", path);
    uint64_t want = HGR_HEAD + 12 * n + 4ull * (users + 1) + pad4(ulen) + 4ull * (items + 1) + pad4(ilen);
    if (size != want)
        return hog_fail(size < want ? HOG_ETRUNCATED : HOG_ECORRUPT, err, err_len,
                        "%s: %s: the header implies %llu bytes, the file has %llu", path,
                        size < want ? "truncated" : "trailing bytes", (unsigned long long)want,
                        (unsigned long long)size);
    if (hog_crc32(0, h + HGR_HEAD, size - HGR_HEAD) != hog_get_u32(h + 56))
        return hog_fail(HOG_ECHECKSUM, err, err_len, "%s: checksum mismatch: the file is corrupted", path);
    const unsigned char *p = h + HGR_HEAD + 12 * n;
    int rc = map_names(&r->users, p, users, ulen);
    if (rc == 0)
        rc = map_names(&r->items, p + 4ull * (users + 1) + pad4(ulen), items, ilen);
    if (rc == -ENOMEM)
        return hog_fail(rc, err, err_len, "%s: out of memory", path);
    if (rc < 0)
        return hog_fail(HOG_ECORRUPT, err, err_len, "%s: a name table is malformed", path);
    r->t = (const hog_mf_triple *)(const void *)(h + HGR_HEAD);
    r->info.ratings = n;
    r->info.has_ratings = (flags & HGR_HAS_RATINGS) != 0;
    r->info.binary = 1;
    for (uint64_t i = 0; i < n; i++) {
        const hog_mf_triple *t = &r->t[i];
        if (t->user >= users || t->item >= items || (r->info.has_ratings && !isfinite(t->rating)))
            return hog_fail(HOG_ECORRUPT, err, err_len, "%s: triple %llu is out of range (user %u, item %u, rating %g)",
                            path, (unsigned long long)i, t->user, t->item, (double)t->rating);
    }
    if (n == 0)
        return hog_fail(HOG_EEMPTY, err, err_len, "%s: no ratings", path);
    if (hog_ratings_fingerprint(r) != hog_get_u64(h + 48))
        return hog_fail(HOG_ECORRUPT, err, err_len, "%s: the fingerprint does not match the contents", path);
    return 0;
}

static int read_fd(int fd, char *buf, uint64_t len)
{
    uint64_t got = 0;
    while (got < len) {
        ssize_t k = read(fd, buf + got, len - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? -errno : -EIO;
        got += (uint64_t)k;
    }
    return 0;
}

int hog_ratings_open(const char *path, int allow_pairs, hog_ratings **out, char *err, size_t err_len)
{
    *out = NULL;
    if (hog_cpu_check(err, err_len) < 0)
        return HOG_ECPU;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int rc = -errno;
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        int rc = S_ISREG(st.st_mode) ? -errno : -EINVAL;
        close(fd);
        return hog_fail(rc, err, err_len, "%s: not a regular file (ratings are mapped: a pipe cannot be)", path);
    }
    hog_ratings *r = hog_calloc(1, sizeof(*r));
    if (!r) {
        close(fd);
        return hog_fail(-ENOMEM, err, err_len, "%s: out of memory", path);
    }
    uint64_t size = (uint64_t)st.st_size;
    r->info.file_bytes = size;
    char magic[8] = {0};
    int rc = 0;
    ssize_t got = pread(fd, magic, sizeof(magic), 0);
    if (got == 8 && memcmp(magic, HGR_MAGIC, 8) == 0) {
        rc = open_binary(r, path, fd, size, err, err_len);
    } else {
        char *buf = hog_malloc(size ? size : 1);
        if (!buf)
            rc = hog_fail(-ENOMEM, err, err_len, "%s: out of memory", path);
        else if ((rc = read_fd(fd, buf, size)) < 0)
            hog_fail(rc, err, err_len, "%s: read: %s", path, hog_strerror(rc));
        else {
            text_cursor c = {path, buf, 0, err, err_len};
            rc = parse_text(r, buf, size, allow_pairs, &c);
        }
        hog_free(buf);
    }
    close(fd);
    if (rc < 0) {
        hog_ratings_close(r);
        return rc;
    }
    ratings_summary(r);
    if (!r->info.binary)
        r->info.fingerprint = hog_ratings_fingerprint(r);
    else
        r->info.fingerprint = hog_get_u64((const unsigned char *)r->map + 48);
    *out = r;
    return 0;
}

static int write_names(hog_atomic_file *f, uint32_t *crc, const hog_idmap *m)
{
    static const char zero[4] = {0};
    uint32_t first = 0;
    const uint32_t *off = m->n ? m->off : &first;
    *crc = hog_crc32(*crc, off, 4ull * (m->n + 1));
    int rc = hog_atomic_write(f, off, 4ull * (m->n + 1));
    size_t pad = (size_t)(pad4(m->names_len) - m->names_len);
    if (rc == 0 && m->names_len) {
        *crc = hog_crc32(*crc, m->names, m->names_len);
        rc = hog_atomic_write(f, m->names, m->names_len);
    }
    if (rc == 0 && pad) {
        *crc = hog_crc32(*crc, zero, pad);
        rc = hog_atomic_write(f, zero, pad);
    }
    return rc;
}

int hog_ratings_save(const hog_ratings *r, const char *path)
{
    const hog_ratings_info *in = &r->info;
    unsigned char h[HGR_HEAD] = {0};
    memcpy(h, HGR_MAGIC, 8);
    hog_put_u32(h + 8, HGR_VERSION);
    hog_put_u32(h + 12, in->has_ratings ? HGR_HAS_RATINGS : 0);
    hog_put_u64(h + 16, in->ratings);
    hog_put_u32(h + 24, r->users.n);
    hog_put_u32(h + 28, r->items.n);
    hog_put_u64(h + 32, r->users.names_len);
    hog_put_u64(h + 40, r->items.names_len);
    hog_put_u64(h + 48, in->fingerprint);
    hog_atomic_file f;
    int rc = hog_atomic_open(&f, path);
    if (rc < 0)
        return rc;
    /* The body first (its CRC goes in the header), then the header. */
    uint32_t crc = 0;
    rc = hog_atomic_pwrite(&f, h, HGR_HEAD, 0);
    if (rc == 0) {
        crc = hog_crc32(crc, r->t, 12 * in->ratings);
        rc = hog_atomic_write(&f, r->t, 12 * in->ratings);
    }
    if (rc == 0)
        rc = write_names(&f, &crc, &r->users);
    if (rc == 0)
        rc = write_names(&f, &crc, &r->items);
    if (rc == 0) {
        hog_put_u32(h + 56, crc);
        hog_put_u32(h + 60, hog_crc32(0, h, 60));
        rc = hog_atomic_pwrite(&f, h, HGR_HEAD, 0);
    }
    if (rc < 0) {
        hog_atomic_abort(&f);
        return rc;
    }
    return hog_atomic_commit(&f);
}
