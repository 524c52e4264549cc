/* etl_hgd.c: the .hgd reader: maps a file and validates its header, table, summary and names before a trainer trusts them, and tells when a mapped file changed. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etl_hgd_layout.h"

/* ===================================================================== *
 *  Reader: map, then validate every byte that a trainer will trust
 * ===================================================================== */

/* Where the first byte that is not zero lies in p[0..n), or n: a word at a
 * time, as the header is read two or three times per open. */
static size_t first_nonzero(const uint8_t *p, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        if (hog_get_u64(p + i) != 0)
            break;
    while (i < n && p[i] == 0)
        i++;
    return i;
}

/* Checks the fixed header fields; h holds the first 4096 bytes (zero-padded
 * past the end of a short file), size the file's length. */
static int check_header(const char *path, const uint8_t *h, uint64_t size, char *err, size_t len)
{
    if (size < HGD_MAGIC_BYTES || memcmp(h + H_MAGIC, HGD_MAGIC, HGD_MAGIC_BYTES) != 0)
        return hog_fail(HOG_EMAGIC, err, len, "%s: not a hogtrain dataset (bad magic)", path);
    if (size < H_VERSION + 4)
        return hog_fail(HOG_ETRUNCATED, err, len, "%s: truncated: file has %llu bytes",
                        path, (unsigned long long)size);
    uint32_t version = hog_get_u32(h + H_VERSION);
    if (version < 1 || version > HOG_HGD_VERSION)
        return hog_fail(HOG_EVERSION, err, len, "%s: version %u, this build reads versions 1 to %u",
                        path, version, HOG_HGD_VERSION);
    if (size < HOG_HGD_HEADER_BYTES) {
        if (size >= H_FILE_BYTES + 8)
            return hog_fail(HOG_ETRUNCATED, err, len,
                            "%s: truncated: header says %llu bytes, file has %llu", path,
                            (unsigned long long)hog_get_u64(h + H_FILE_BYTES),
                            (unsigned long long)size);
        return hog_fail(HOG_ETRUNCATED, err, len,
                        "%s: truncated: file has %llu bytes, less than the %u-byte header", path,
                        (unsigned long long)size, HOG_HGD_HEADER_BYTES);
    }
    uint64_t stored = version == 1 ? hog_get_u32(h + H1_HEADER_CRC) : hog_get_u64(h + H_HEADER_SUM);
    uint64_t sum = header_sum(h, version);
    if (stored != sum)
        return hog_fail(HOG_ECHECKSUM, err, len,
                        "%s: header checksum mismatch (stored 0x%016llx, computed 0x%016llx)", path,
                        (unsigned long long)stored, (unsigned long long)sum);
    uint64_t file_bytes = hog_get_u64(h + H_FILE_BYTES);
    if (file_bytes > size)
        return hog_fail(HOG_ETRUNCATED, err, len,
                        "%s: truncated: header says %llu bytes, file has %llu", path,
                        (unsigned long long)file_bytes, (unsigned long long)size);
    if (file_bytes < size)
        return hog_fail(HOG_ECORRUPT, err, len,
                        "%s: header says %llu bytes, file has %llu (trailing bytes)", path,
                        (unsigned long long)file_bytes, (unsigned long long)size);
    uint32_t header_bytes = hog_get_u32(h + H_HEADER_BYTES);
    if (header_bytes != HOG_HGD_HEADER_BYTES)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: header_bytes is %u, expected %u", path,
                        header_bytes, HOG_HGD_HEADER_BYTES);
    uint32_t flags = hog_get_u32(h + H_FLAGS);
    const uint32_t known = version == 1   ? 0u
                           : version == 2 ? HOG_HGD_WEIGHTED | HOG_HGD_ONE_BASED | HOG_HGD_SOURCE
                           : version == 3 ? HOG_HGD_WEIGHTED | HOG_HGD_ONE_BASED | HOG_HGD_SOURCE | HOG_HGD_SUMMARY
                           : version == 4 ? HOG_HGD_WEIGHTED | HOG_HGD_ONE_BASED | HOG_HGD_SOURCE | HOG_HGD_SUMMARY |
                                                HOG_HGD_NAMES
                           : version == 5 ? HOG_HGD_WEIGHTED | HOG_HGD_ONE_BASED | HOG_HGD_SOURCE | HOG_HGD_SUMMARY |
                                                HOG_HGD_NAMES | HOG_HGD_FNAMES
                           : version == 6 ? HOG_HGD_WEIGHTED | HOG_HGD_ONE_BASED | HOG_HGD_SOURCE | HOG_HGD_SUMMARY |
                                                HOG_HGD_NAMES | HOG_HGD_FNAMES | HOG_HGD_FIELDS
                                          : HOG_HGD_WEIGHTED | HOG_HGD_ONE_BASED | HOG_HGD_SOURCE | HOG_HGD_SUMMARY |
                                                HOG_HGD_NAMES | HOG_HGD_FNAMES | HOG_HGD_FIELDS | HOG_HGD_HASHED;
    if (flags & ~known)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: unknown flags 0x%x", path, flags);
    uint32_t align = hog_get_u32(h + H_BLOCK_ALIGN);
    if (align != HOG_HGD_ALIGN)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: block_align is %u, expected %u", path,
                        align, HOG_HGD_ALIGN);
    /* Zero but for the records its flags announce. */
    const size_t zero[7][2] = {
        {version == 1 ? H1_END : flags & HOG_HGD_SOURCE ? H_SOURCE_END : H_END, H_SUMMARY_OFFSET},
        {flags & HOG_HGD_SUMMARY ? H_SUMMARY_END : H_SUMMARY_OFFSET, H_SUMMARY_END},
        {flags & HOG_HGD_NAMES ? H_NAMES_END : H_NAMES_OFFSET, H_NAMES_END},
        {flags & HOG_HGD_FNAMES ? H_FNAMES_END : H_FNAMES_OFFSET, H_FNAMES_END},
        {flags & HOG_HGD_FIELDS ? H_FIELDS_END : H_FIELDS, H_FIELDS_END},
        {flags & HOG_HGD_HASHED ? H_HASH_BITS_END : H_HASH_BITS, H_HASH_BITS_END},
        {H_HASH_BITS_END, HOG_HGD_HEADER_BYTES},
    };
    for (size_t i = 0; i < HOG_ARRAY_LEN(zero); i++) {
        const size_t from = HOG_MIN(zero[i][0], zero[i][1]), n = zero[i][1] - from;
        const size_t nonzero = first_nonzero(h + from, n);
        if (nonzero < n)
            return hog_fail(HOG_ECORRUPT, err, len, "%s: header byte %zu is not zero", path, from + nonzero);
    }

    uint64_t rows = hog_get_u64(h + H_ROWS), features = hog_get_u64(h + H_FEATURES);
    uint32_t blocks = hog_get_u32(h + H_BLOCKS), rpb = hog_get_u32(h + H_ROWS_PER_BLOCK);
    if (rpb == 0 || rpb > HOG_MAX_ROWS_PER_BLOCK)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: rows_per_block is %u, not between 1 and %u", path, rpb,
                        HOG_MAX_ROWS_PER_BLOCK);
    if (rows > (uint64_t)UINT32_MAX * rpb || (rows + rpb - 1) / rpb != blocks)
        return hog_fail(HOG_ECORRUPT, err, len,
                        "%s: %u blocks cannot hold %llu rows of %u per block", path, blocks,
                        (unsigned long long)rows, rpb);
    if (features > (uint64_t)UINT32_MAX + 1)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: features %llu exceeds 2^32", path,
                        (unsigned long long)features);
    uint64_t table_offset = hog_get_u64(h + H_TABLE_OFFSET);
    if (table_offset % 8 != 0 || table_offset < HOG_HGD_HEADER_BYTES ||
        table_offset > file_bytes ||
        (file_bytes - table_offset) != (uint64_t)blocks * HOG_HGD_TABLE_ENTRY)
        return hog_fail(HOG_ECORRUPT, err, len,
                        "%s: table_offset %llu does not place %u table entries at the end of "
                        "%llu bytes",
                        path, (unsigned long long)table_offset, blocks,
                        (unsigned long long)file_bytes);
    const uint32_t fields = hog_get_u32(h + H_FIELDS);
    if ((flags & HOG_HGD_FIELDS) && (fields == 0 || fields > HOG_MAX_FIELDS))
        return hog_fail(HOG_ECORRUPT, err, len, "%s: fields is %u, not between 1 and %u", path, fields,
                        HOG_MAX_FIELDS);
    const uint32_t bits = hog_get_u32(h + H_HASH_BITS);
    if ((flags & HOG_HGD_HASHED) && (bits == 0 || bits > 31))
        return hog_fail(HOG_ECORRUPT, err, len, "%s: hash_bits is %u, not between 1 and 31", path, bits);
    if (rows == 0)
        return hog_fail(HOG_EEMPTY, err, len, "%s: data set has no rows", path);
    return 0;
}

/* Checks the table entries against the header and each other; fills the block views. */
static int check_table(const char *path, const uint8_t *map, const uint8_t *h, hog_block *out,
                       uint64_t *blocks_end, char *err, size_t len)
{
    uint64_t rows = hog_get_u64(h + H_ROWS), nnz = hog_get_u64(h + H_NNZ);
    uint32_t blocks = hog_get_u32(h + H_BLOCKS), rpb = hog_get_u32(h + H_ROWS_PER_BLOCK);
    uint32_t version = hog_get_u32(h + H_VERSION);
    const uint32_t flags = hog_get_u32(h + H_FLAGS);
    const int layout = (flags & HOG_HGD_WEIGHTED ? HOG_BLOCK_WEIGHTED : 0) | (flags & HOG_HGD_FIELDS ? HOG_BLOCK_FIELDS : 0);
    uint64_t table_offset = hog_get_u64(h + H_TABLE_OFFSET);
    const uint8_t *table = map + table_offset;
    size_t table_bytes = (size_t)blocks * HOG_HGD_TABLE_ENTRY;

    uint64_t stored = version == 1 ? hog_get_u32(h + H_TABLE_SUM) : hog_get_u64(h + H_TABLE_SUM);
    uint64_t sum = table_sum(table, table_bytes, version);
    if (stored != sum)
        return hog_fail(HOG_ECHECKSUM, err, len,
                        "%s: block table checksum mismatch (stored 0x%016llx, computed 0x%016llx)",
                        path, (unsigned long long)stored, (unsigned long long)sum);

    uint64_t end = HOG_HGD_HEADER_BYTES, nnz_sum = 0, fp = FP_SEED;
    for (uint32_t i = 0; i < blocks; i++) {
        const uint8_t *e = table + (size_t)i * HOG_HGD_TABLE_ENTRY;
        uint64_t off = hog_get_u64(e + T_OFFSET), bytes = hog_get_u64(e + T_BYTES);
        uint32_t brows = hog_get_u32(e + T_ROWS), bnnz = hog_get_u32(e + T_NNZ);
        uint32_t want = i + 1 < blocks ? rpb : (uint32_t)(rows - (uint64_t)i * rpb);
        if (brows != want)
            return hog_fail(HOG_ECORRUPT, err, len, "%s: block %u: %u rows, expected %u", path,
                            i, brows, want);
        if (version == 1 && hog_get_u32(e + T1_RESERVED) != 0)
            return hog_fail(HOG_ECORRUPT, err, len, "%s: block %u: reserved field is not zero",
                            path, i);
        if (off % HOG_HGD_ALIGN != 0 || bytes % HOG_HGD_ALIGN != 0 || off < end ||
            bytes > table_offset || off > table_offset - bytes)
            return hog_fail(HOG_ECORRUPT, err, len,
                            "%s: block %u: offset %llu, %llu bytes: misaligned, overlapping or "
                            "outside %llu..%llu",
                            path, i, (unsigned long long)off, (unsigned long long)bytes,
                            (unsigned long long)end, (unsigned long long)table_offset);
        if (hog_block_bytes(brows, bnnz, layout) > bytes)
            return hog_fail(HOG_ECORRUPT, err, len,
                            "%s: block %u: %u rows and %u non-zeros need %llu bytes, entry has "
                            "%llu",
                            path, i, brows, bnnz,
                            (unsigned long long)hog_block_bytes(brows, bnnz, layout),
                            (unsigned long long)bytes);
        nnz_sum += bnnz;
        end = off + bytes;
        uint64_t bsum = version == 1 ? hog_get_u32(e + T_SUM) : hog_get_u64(e + T_SUM);
        fp = fp_step(fp, brows, bnnz, bsum);
        hog_block_view(&out[i], map + off, brows, bnnz, layout, bsum);
    }
    if (nnz_sum != nnz)
        return hog_fail(HOG_ECORRUPT, err, len,
                        "%s: blocks hold %llu non-zeros, header says %llu", path,
                        (unsigned long long)nnz_sum, (unsigned long long)nnz);
    if (fp != hog_get_u64(h + H_FINGERPRINT))
        return hog_fail(HOG_ECHECKSUM, err, len,
                        "%s: fingerprint does not match the block table", path);
    *blocks_end = end;
    return 0;
}

/* Checks a version-3 file's summary against the header and the layout and
 * points *s into the mapping; a file without one leaves *s zero. What it
 * claims of the rows is checked as far as it bears on memory: each label
 * against the rows as their blocks are checked (check_block). */
static int check_summary(const char *path, const uint8_t *map, const uint8_t *h, uint64_t blocks_end,
                         hog_hgd_summary *s, char *err, size_t len)
{
    memset(s, 0, sizeof(*s));
    if (!(hog_get_u32(h + H_FLAGS) & HOG_HGD_SUMMARY))
        return 0;
    const uint64_t off = hog_get_u64(h + H_SUMMARY_OFFSET), bytes = hog_get_u64(h + H_SUMMARY_BYTES);
    const uint64_t table = hog_get_u64(h + H_TABLE_OFFSET);
    const uint64_t rows = hog_get_u64(h + H_ROWS), features = hog_get_u64(h + H_FEATURES);
    if (off % 8 != 0 || off < blocks_end || bytes < 8 || off > table || bytes > table - off)
        return hog_fail(HOG_ECORRUPT, err, len,
                        "%s: summary at %llu, %llu bytes: misaligned or outside %llu..%llu (after the blocks, "
                        "before the table)",
                        path, (unsigned long long)off, (unsigned long long)bytes, (unsigned long long)blocks_end,
                        (unsigned long long)table);
    const uint8_t *p = map + off;
    const uint32_t labels = hog_get_u32(p), degrees = hog_get_u32(p + 4);
    if (labels != HOG_HGD_MANY_LABELS && (labels == 0 || labels > HOG_HGD_SUMMARY_LABELS || labels > rows))
        return hog_fail(HOG_ECORRUPT, err, len,
                        "%s: summary lists %u label values, expected 1 to %u (and no more than the %llu rows)",
                        path, labels, HOG_HGD_SUMMARY_LABELS, (unsigned long long)rows);
    if (degrees != 0 && degrees != features)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: summary has the degrees of %u features, the header says %llu",
                        path, degrees, (unsigned long long)features);
    if (bytes != summary_size(labels, degrees))
        return hog_fail(HOG_ECORRUPT, err, len, "%s: summary is %llu bytes, its counts need %llu", path,
                        (unsigned long long)bytes, (unsigned long long)summary_size(labels, degrees));
    const uint32_t listed = labels == HOG_HGD_MANY_LABELS ? 0 : labels;
    s->labels = labels;
    s->degrees = degrees;
    s->label = (const double *)(const void *)(p + 8);
    s->count = (const uint64_t *)(const void *)(p + 8 + 8 * (uint64_t)listed);
    s->degree = (const uint32_t *)(const void *)(p + 8 + 16 * (uint64_t)listed);
    const uint64_t stored = hog_get_u64(h + H_SUMMARY_SUM), sum = summary_sum(p, s);
    int rc = 0;
    if (stored != sum)
        rc = hog_fail(HOG_ECHECKSUM, err, len, "%s: summary checksum mismatch (stored 0x%016llx, computed 0x%016llx)",
                      path, (unsigned long long)stored, (unsigned long long)sum);
    uint64_t total = 0;
    for (uint32_t i = 0; i < listed && rc == 0; i++) {
        if (!isfinite(s->label[i]) || (i > 0 && !(s->label[i] > s->label[i - 1])))
            rc = hog_fail(HOG_ECORRUPT, err, len, "%s: summary label %u (%g) is not finite or not above the one before",
                          path, i, s->label[i]);
        else if ((double)(float)s->label[i] != s->label[i])
            rc = hog_fail(HOG_ECORRUPT, err, len, "%s: summary label %u (%.17g) is not a 32-bit float, as labels are",
                          path, i, s->label[i]);
        else if (s->count[i] == 0 || s->count[i] > rows - total)
            rc = hog_fail(HOG_ECORRUPT, err, len, "%s: summary label %g has %llu rows, past the %llu of the file",
                          path, s->label[i], (unsigned long long)s->count[i], (unsigned long long)rows);
        else
            total += s->count[i];
    }
    if (rc == 0 && listed && total != rows)
        rc = hog_fail(HOG_ECORRUPT, err, len, "%s: summary counts %llu rows, the header %llu", path,
                      (unsigned long long)total, (unsigned long long)rows);
    for (uint32_t f = 0; f < degrees && rc == 0; f++)
        if (s->degree[f] > rows)
            rc = hog_fail(HOG_ECORRUPT, err, len, "%s: summary gives feature %u %u rows, past the %llu of the file",
                          path, f, s->degree[f], (unsigned long long)rows);
    if (rc == 0 && degrees && s->degree[degrees - 1] == 0)
        rc = hog_fail(HOG_ECORRUPT, err, len,
                      "%s: summary gives the last feature (%u) no rows: features is the largest index + 1", path,
                      degrees - 1);
    if (rc < 0)
        memset(s, 0, sizeof(*s));
    return rc;
}

/* A section's place in the header (its offset at header byte field): a
 * multiple of 8, after the sections before it (which end at after) and
 * before the table, at least 4 bytes. Returns 0 or HOG_ECORRUPT, naming
 * the header byte. */
static int section_placed(const char *path, unsigned field, const char *what, const char *after_what, uint64_t off,
                          uint64_t bytes, uint64_t after, uint64_t table, char *err, size_t len)
{
    if (off % 8 != 0 || off < after || off > table || bytes < 4 || bytes > table - off)
        return hog_fail(HOG_ECORRUPT, err, len,
                        "%s: header byte %u: %s at byte %llu, %llu bytes: misaligned or outside %llu..%llu (after "
                        "%s, before the table)", path, field, what, (unsigned long long)off,
                        (unsigned long long)bytes, (unsigned long long)after, (unsigned long long)table,
                        after_what);
    return 0;
}

/* Checks a version-4 file's class names against the header, the layout
 * and the summary (checked before), and copies them into *names (owned);
 * a file without them leaves *names empty. Every size is bounded by the
 * mapping before it is added to an offset, and every error names the
 * byte where the fault lies. */
static int check_names(const char *path, const uint8_t *map, const uint8_t *h, const hog_hgd_summary *sm,
                       hog_idmap *names, char *err, size_t len)
{
    memset(names, 0, sizeof(*names));
    const uint32_t flags = hog_get_u32(h + H_FLAGS);
    if (!(flags & HOG_HGD_NAMES))
        return 0;
    if (!(flags & HOG_HGD_SUMMARY))
        return hog_fail(HOG_ECORRUPT, err, len, "%s: header byte %u: flags 0x%x announce class names (bit 4) "
                        "without the summary (bit 3) that lists their numbers", path, H_FLAGS, flags);
    const uint64_t off = hog_get_u64(h + H_NAMES_OFFSET), bytes = hog_get_u64(h + H_NAMES_BYTES);
    const uint64_t table = hog_get_u64(h + H_TABLE_OFFSET);
    /* the summary was placed inside the file, before the table */
    const uint64_t after = hog_get_u64(h + H_SUMMARY_OFFSET) + hog_get_u64(h + H_SUMMARY_BYTES);
    int rc = section_placed(path, H_NAMES_OFFSET, "class names", "the summary", off, bytes, after, table, err, len);
    if (rc < 0)
        return rc;
    const uint8_t *p = map + off;
    const uint32_t n = hog_get_u32(p);
    if (n == 0 || n > HOG_MAX_LABEL_NAMES)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: %u class names, expected 1 to %u", path,
                        (unsigned long long)off, n, HOG_MAX_LABEL_NAMES);
    const uint64_t least = 4 + 2ull * n, most = 4 + (uint64_t)n * (HOG_LABEL_NAME_MAX + 1);
    if (bytes < least || bytes > most)
        return hog_fail(HOG_ECORRUPT, err, len,
                        "%s: header byte %u: names_bytes is %llu, not between %llu and %llu for %u class names",
                        path, H_NAMES_BYTES, (unsigned long long)bytes, (unsigned long long)least,
                        (unsigned long long)most, n);
    const uint64_t stored = hog_get_u64(h + H_NAMES_SUM), sum = names_sum(p, p + 4, bytes - 4);
    if (stored != sum)
        return hog_fail(HOG_ECHECKSUM, err, len, "%s: byte %llu: class names checksum mismatch (stored 0x%016llx, "
                        "computed 0x%016llx)", path, (unsigned long long)off, (unsigned long long)stored,
                        (unsigned long long)sum);
    /* label i is name i: the summary lists exactly the numbers 0..n-1 */
    if (sm->labels != n)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: %u class names, but the summary lists %s%u label "
                        "values: labels that are names are numbered 0 to %u, each on some row", path,
                        (unsigned long long)off, n, sm->labels == HOG_HGD_MANY_LABELS ? "more than " : "",
                        sm->labels == HOG_HGD_MANY_LABELS ? HOG_HGD_SUMMARY_LABELS : sm->labels, n - 1);
    const uint64_t labels_at = hog_get_u64(h + H_SUMMARY_OFFSET) + 8;
    for (uint32_t i = 0; i < n; i++)
        if (sm->label[i] != (double)i)
            return hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: summary label %u is %g: labels that are class "
                            "names are numbered 0 to %u", path, (unsigned long long)(labels_at + 8ull * i), i,
                            sm->label[i], n - 1);
    const char *s = (const char *)p + 4, *end = (const char *)p + bytes;
    for (uint32_t k = 0; k < n && rc == 0; k++) {
        const unsigned long long at = (unsigned long long)((const uint8_t *)s - map);
        const char *nul = s < end ? memchr(s, '\0', (size_t)(end - s)) : NULL;
        uint32_t id;
        if (!nul) {
            rc = hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: class name %u runs past the names' end at byte "
                          "%llu (each ends with a NUL)", path, at, k, (unsigned long long)(off + bytes));
        } else if (nul == s || (size_t)(nul - s) > HOG_LABEL_NAME_MAX) {
            rc = hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: class name %u is %zu bytes, not 1 to %u", path,
                          at, k, (size_t)(nul - s), HOG_LABEL_NAME_MAX);
        } else if (hog_idmap_find(names, s, (size_t)(nul - s)) >= 0) {
            rc = hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: class name %u ('%.64s') repeats class %lld's",
                          path, at, k, s, (long long)hog_idmap_find(names, s, (size_t)(nul - s)));
        } else if ((rc = hog_idmap_intern(names, s, (size_t)(nul - s), &id)) < 0) {
            rc = hog_fail(rc, err, len, "%s: out of memory", path);
        }
        s = nul ? nul + 1 : end;
    }
    if (rc == 0 && s != end)
        rc = hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: %llu bytes after the last of %u class names", path,
                      (unsigned long long)((const uint8_t *)s - map), (unsigned long long)(end - s), n);
    if (rc < 0)
        hog_idmap_free(names);
    return rc;
}

/* Checks a version-5 file's feature names against the header and the
 * layout and copies them into *fn (owned); a file without them leaves *fn
 * empty. The place and size are bounded by the sections before it and the
 * table before the bytes are read, and every error names the byte. */
static int check_fnames(const char *path, const uint8_t *map, const uint8_t *h, uint64_t blocks_end,
                        hog_fnames *fn, char *err, size_t len)
{
    memset(fn, 0, sizeof(*fn));
    const uint32_t flags = hog_get_u32(h + H_FLAGS);
    if (!(flags & HOG_HGD_FNAMES))
        return 0;
    const uint64_t off = hog_get_u64(h + H_FNAMES_OFFSET), bytes = hog_get_u64(h + H_FNAMES_BYTES);
    const uint64_t table = hog_get_u64(h + H_TABLE_OFFSET);
    /* the sections before it were placed inside the file, before the table */
    uint64_t after = blocks_end;
    if (flags & HOG_HGD_SUMMARY)
        after = hog_get_u64(h + H_SUMMARY_OFFSET) + hog_get_u64(h + H_SUMMARY_BYTES);
    if (flags & HOG_HGD_NAMES)
        after = hog_get_u64(h + H_NAMES_OFFSET) + hog_get_u64(h + H_NAMES_BYTES);
    int rc = section_placed(path, H_FNAMES_OFFSET, "feature names", "the sections before them", off, bytes, after,
                            table, err, len);
    if (rc < 0)
        return rc;
    const uint64_t stored = hog_get_u64(h + H_FNAMES_SUM), sum = hog_hash64(map + off, (size_t)bytes, 0);
    if (stored != sum)
        return hog_fail(HOG_ECHECKSUM, err, len, "%s: byte %llu: feature names checksum mismatch (stored "
                        "0x%016llx, computed 0x%016llx)", path, (unsigned long long)off, (unsigned long long)stored,
                        (unsigned long long)sum);
    return hog_fnames_read(path, map + off, bytes, off, hog_get_u64(h + H_FEATURES), fn, err, len);
}

static int read_full(int fd, uint8_t *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, buf + done, len - done, (off_t)done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            break;
        done += (size_t)n;
    }
    return 0;
}

/* The mapped data sets open now, for hog_dataset_changed_path: a signal
 * handler reads the list, so slots are claimed and freed with atomics and
 * never locked. A data set that finds no free slot is simply not listed. */
#define MAPPED_SLOTS 64
static const hog_dataset *_Atomic mapped_sets[MAPPED_SLOTS];

static void mapped_add(const hog_dataset *ds)
{
    for (size_t i = 0; i < MAPPED_SLOTS; i++) {
        const hog_dataset *none = NULL;
        if (atomic_compare_exchange_strong(&mapped_sets[i], &none, ds))
            return;
    }
}

void hog_hgd_forget(const hog_dataset *ds)
{
    for (size_t i = 0; i < MAPPED_SLOTS; i++) {
        const hog_dataset *was = ds;
        if (atomic_compare_exchange_strong(&mapped_sets[i], &was, NULL))
            return;
    }
}

int hog_dataset_changed(const hog_dataset *ds)
{
    struct stat st;
    if (!ds->map || ds->fd < 0 || fstat(ds->fd, &st) < 0)
        return 0;
    int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    return (uint64_t)st.st_size != ds->mapped_size || mtime != ds->mapped_mtime_ns;
}

const char *hog_dataset_changed_path(void)
{
    for (size_t i = 0; i < MAPPED_SLOTS; i++) {
        const hog_dataset *ds = atomic_load(&mapped_sets[i]);
        if (ds && ds->path && hog_dataset_changed(ds))
            return ds->path;
    }
    return NULL;
}

int hog_hgd_open(const char *path, hog_dataset **out, char *err, size_t err_len)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int rc = -errno;
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    }
    return hog_hgd_open_fd(fd, path, out, err, err_len);
}

int hog_hgd_open_fd(int fd, const char *path, hog_dataset **out, char *err, size_t err_len)
{
    return hog_hgd_open_lazy(fd, path, 0, out, err, err_len);
}

int hog_hgd_open_lazy(int fd, const char *path, int lazy, hog_dataset **out, char *err, size_t err_len)
{
    *out = NULL;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int rc = -errno;
        close(fd);
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    }
    uint64_t size = (uint64_t)st.st_size;

    /* The header is read, not mapped, so a short or empty file is judged
     * before mmap (which refuses a zero length). */
    uint8_t h[HOG_HGD_HEADER_BYTES];
    memset(h, 0, sizeof(h));
    int rc = read_full(fd, h, (size_t)HOG_MIN(size, (uint64_t)sizeof(h)));
    if (rc < 0) {
        close(fd);
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    }
    rc = check_header(path, h, size, err, err_len);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    if (size > SIZE_MAX) {
        close(fd);
        return hog_fail(-EFBIG, err, err_len, "%s: too large to map", path);
    }

    void *map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    rc = map == MAP_FAILED ? -errno : 0;
    if (rc < 0) {
        close(fd);
        return hog_fail(rc, err, err_len, "%s: mmap: %s", path, hog_strerror(rc));
    }
    /* Validation reads the file front to back once; afterwards trainers walk
     * whole blocks in shuffled order, which plain readahead serves well. */
    if (!lazy)
        (void)madvise(map, (size_t)size, MADV_SEQUENTIAL);

    hog_dataset *ds = hog_calloc(1, sizeof(*ds));
    uint32_t blocks = hog_get_u32(h + H_BLOCKS);
    hog_block *views = hog_calloc(blocks, sizeof(hog_block));
    char *name = hog_strdup(path); /* for the message of a change */
    _Atomic unsigned char *checked = lazy ? hog_calloc(HOG_MAX(blocks, 1), 1) : NULL;
    if (!ds || !views || !name || (lazy && !checked)) {
        hog_free(name);
        rc = hog_fail(-ENOMEM, err, err_len, "%s: out of memory", path);
        goto refused;
    }
    ds->fd = fd; /* kept for posix_fadvise on out-of-core scans */
    ds->version = hog_get_u32(h + H_VERSION);
    ds->map = map;
    ds->map_bytes = (size_t)size;
    ds->blocks = views;
    /* Listed from here on: the check of every block below reads the whole
     * mapping, and a file truncated meanwhile is named by the SIGBUS it
     * gives (hog_dataset_changed_path), as during the epochs. */
    ds->mapped_size = size;
    ds->mapped_mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    ds->path = name;
    mapped_add(ds);

    /* Re-read the header from the mapping: it is what the views point into,
     * and a file rewritten between pread and mmap must not slip through. */
    rc = check_header(path, map, size, err, err_len);
    if (rc == 0 && memcmp(map, h, sizeof(h)) != 0)
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: file changed while being opened", path);
    uint64_t blocks_end = 0;
    if (rc == 0)
        rc = check_table(path, map, h, views, &blocks_end, err, err_len);
    if (rc == 0)
        rc = check_summary(path, map, h, blocks_end, &ds->summary, err, err_len);
    if (rc == 0)
        rc = check_names(path, map, h, &ds->summary, &ds->names, err, err_len);
    if (rc == 0)
        rc = check_fnames(path, map, h, blocks_end, &ds->fnames, err, err_len);
    uint64_t features = hog_get_u64(h + H_FEATURES);
    /* Validation reads every block once; each is unmapped from the process
     * when checked, so opening a file of any size leaves nothing resident
     * (the pages stay in the page cache for the first epoch unless the file
     * is larger than half the available memory, when they go too). */
    ds->info.blocks = blocks; /* what hog_dataset_willneed/drop look at */
    ds->fields = hog_get_u32(h + H_FLAGS) & HOG_HGD_FIELDS ? hog_get_u32(h + H_FIELDS) : 0; /* and check_block */
    ds->hash_bits = hog_get_u32(h + H_FLAGS) & HOG_HGD_HASHED ? hog_get_u32(h + H_HASH_BITS) : 0;
    ds->info.features = features; /* what hog_dataset_check checks indices against */
    if (rc == 0 && !lazy)
        rc = hog_hgd_check_blocks(path, ds, features, size > hog_mem_usable() / 2, err, err_len);
    if (rc < 0)
        goto refused;
    if (!lazy)
        (void)madvise(map, (size_t)size, MADV_NORMAL);
    ds->checked = checked;

    ds->info.format = HOG_FORMAT_BINARY;
    ds->info.rows = hog_get_u64(h + H_ROWS);
    ds->info.features = features;
    ds->info.nnz = hog_get_u64(h + H_NNZ);
    ds->info.blocks = blocks;
    ds->info.rows_per_block = hog_get_u32(h + H_ROWS_PER_BLOCK);
    ds->info.weighted = (hog_get_u32(h + H_FLAGS) & HOG_HGD_WEIGHTED) != 0;
    ds->info.index_base = (hog_get_u32(h + H_FLAGS) & HOG_HGD_ONE_BASED) != 0;
    ds->info.fingerprint = hog_get_u64(h + H_FINGERPRINT);
    ds->info.file_bytes = size;
    *out = ds;
    return 0;

refused: /* what hog_dataset_close would free, before a data set is handed out */
    if (ds) {
        hog_hgd_forget(ds);
        hog_free(ds->path);
        hog_idmap_free(&ds->names);
        hog_fnames_free(&ds->fnames);
    }
    hog_free((void *)checked);
    hog_free(views);
    hog_free(ds);
    munmap(map, (size_t)size);
    close(fd);
    return rc;
}

int hog_hgd_source_read(const char *path, hog_hgd_source *src, int *has, char *err, size_t err_len)
{
    *has = 0;
    memset(src, 0, sizeof(*src));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int rc = -errno;
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    }
    struct stat st;
    uint8_t h[HOG_HGD_HEADER_BYTES];
    memset(h, 0, sizeof(h));
    int rc = fstat(fd, &st) < 0 ? -errno : 0;
    if (rc == 0)
        rc = read_full(fd, h, (size_t)HOG_MIN((uint64_t)st.st_size, (uint64_t)sizeof(h)));
    close(fd);
    if (rc < 0)
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    rc = check_header(path, h, (uint64_t)st.st_size, err, err_len);
    if (rc < 0)
        return rc;
    if (hog_get_u32(h + H_VERSION) >= 2 && (hog_get_u32(h + H_FLAGS) & HOG_HGD_SOURCE)) {
        get_source(h, src);
        *has = 1;
    }
    return 0;
}
