/* etl_hgd_pages.c: a mapped data set's pages, block by block: read ahead of use, given back after it. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <fcntl.h>
#include <sys/mman.h>

#include "etl.h"

/* ===================================================================== *
 *  Out-of-core scans of a mapped file
 * ===================================================================== */

/* The page-aligned file range of a block of a mapped data set. */
static int block_range(const hog_dataset *ds, uint32_t block, size_t *off, size_t *len)
{
    if (!ds->map || block >= ds->info.blocks)
        return 0;
    const hog_block *b = &ds->blocks[block];
    size_t start = (size_t)((const char *)b->ptr - (const char *)ds->map);
    size_t end = start + (size_t)hog_block_bytes(b->rows, b->nnz, hog_block_layout(b));
    *off = start & ~(size_t)(HOG_HGD_ALIGN - 1); /* blocks start aligned; be safe anyway */
    *len = HOG_MIN(end, ds->map_bytes) - *off;
    return 1;
}

void hog_dataset_willneed(const hog_dataset *ds, uint32_t block)
{
    size_t off, len;
    if (block_range(ds, block, &off, &len))
        (void)madvise((char *)ds->map + off, len, MADV_WILLNEED);
}

void hog_dataset_drop(const hog_dataset *ds, uint32_t block, int cache)
{
    size_t off, len;
    if (!block_range(ds, block, &off, &len))
        return;
    (void)madvise((char *)ds->map + off, len, MADV_DONTNEED);
    if (cache && ds->fd >= 0)
        (void)posix_fadvise(ds->fd, (off_t)off, (off_t)len, POSIX_FADV_DONTNEED);
}
