/* etl_source.c: the one way a pass reads a data set's blocks: in core, through the mapping with read-ahead and drop-behind, or with O_DIRECT through the block ring; checked at first read, the file's change detected at the pass's end. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <string.h>

#include "etl.h"

/*
 * Who decides. Before this file, each reader (the epochs, evaluation,
 * predict, the scan) chose for itself whether to open a ring, how far to
 * read ahead, when to drop a block's pages and when to look for a change
 * of the file, each its own way. Here the choice is made once, from the
 * data set and the memory the caller may use, and a pass's purpose says
 * only how its blocks are used (read again later, read once, shared by
 * the segments of an epoch, or the pass that checks the whole file).
 *
 * Read-ahead through the mapping: `ahead` is the last place of the pass
 * whose read was started. A reader at place i moves it to i + depth,
 * starting each block's read once, whichever reader gets there first.
 */

struct hog_block_source {
    const hog_dataset *ds;
    hog_block_ring *ring; /* out of core with O_DIRECT, or NULL: in core or through the mapping */
    int ooc;
    unsigned readers;
    /* the pass */
    hog_pass_purpose purpose;
    int use_ring;        /* this pass reads through the ring */
    int whole;           /* over every block in file order */
    int readahead;       /* through the mapping: MADV_WILLNEED ahead of the readers */
    int drop, drop_cache; /* at release: the pages leave the process, and the page cache */
    unsigned depth;      /* blocks read ahead */
    uint32_t *order;     /* the pass's blocks (ds->info.blocks room) */
    uint32_t *pos;       /* per block: its place in order */
    uint32_t n;
    _Alignas(HOG_CACHELINE) atomic_uint next; /* the next place hog_block_source_next hands out */
    _Alignas(HOG_CACHELINE) atomic_uint ahead;
    atomic_uint bad; /* the lowest block that failed, UINT32_MAX: none */
};

hog_source_params hog_source_params_default(void)
{
    return (hog_source_params){.readers = 1, .out_of_core = HOG_SOURCE_DECIDE};
}

int hog_block_source_open(const hog_dataset *ds, const hog_source_params *sp, hog_block_source **out)
{
    *out = NULL;
    hog_block_source *s = hog_aligned_alloc(HOG_CACHELINE, sizeof(*s));
    if (!s)
        return -ENOMEM;
    memset(s, 0, sizeof(*s));
    s->ds = ds;
    s->readers = HOG_MAX(sp->readers, 1u);
    const uint64_t resident = sp->resident ? sp->resident : sp->limit / 2;
    s->ooc = sp->out_of_core != HOG_SOURCE_DECIDE ? sp->out_of_core != 0
                                                  : sp->limit > 0 && hog_dataset_bytes(ds) > resident;
    const uint32_t nb = HOG_MAX(ds->info.blocks, 1u);
    s->order = hog_malloc(nb * sizeof(uint32_t));
    s->pos = hog_malloc(nb * sizeof(uint32_t));
    atomic_init(&s->next, 0);
    atomic_init(&s->ahead, 0);
    atomic_init(&s->bad, UINT32_MAX);
    if (!s->order || !s->pos) {
        hog_block_source_close(s);
        return -ENOMEM;
    }
    /* Out of core, the blocks are read with O_DIRECT into a ring of
     * buffers, past the page cache that every byte would cross once to be
     * dropped again: 2 per reader and 2 more (the mapping's read-ahead), or
     * as many as a sixteenth of the limit holds, up to 64 MiB. Where the
     * file system refuses O_DIRECT, or for data not in a file of its own,
     * through the mapping. */
    if (s->ooc && !sp->mapped) {
        int rc = hog_block_ring_open(ds, 2 * s->readers + 2, hog_ring_bytes(sp->limit), &s->ring);
        if (rc == -ENOMEM) {
            hog_block_source_close(s);
            return rc;
        }
    }
    if (s->ooc)
        hog_log(HOG_LOG_DEBUG, "%s out of core: reads %s", ds->path ? ds->path : "the data set",
                s->ring ? "with O_DIRECT" : "through the mapping");
    *out = s;
    return 0;
}

int hog_block_source_out_of_core(const hog_block_source *s)
{
    return s->ooc;
}

/* The place of block b in the pass. */
static uint32_t place_of(const hog_block_source *s, uint32_t b)
{
    return s->whole ? b : s->pos[b];
}

/* Starts the reads of the places up to `to` not yet started. */
static void read_ahead(hog_block_source *s, uint32_t to)
{
    to = HOG_MIN(to, s->n - 1);
    unsigned a = atomic_load_explicit(&s->ahead, memory_order_relaxed);
    while (a < to) {
        if (atomic_compare_exchange_weak_explicit(&s->ahead, &a, a + 1, memory_order_relaxed, memory_order_relaxed))
            hog_dataset_willneed(s->ds, s->order[++a]);
    }
}

int hog_block_source_pass(hog_block_source *s, hog_pass_purpose purpose, const uint32_t *order, uint32_t n)
{
    const hog_dataset *ds = s->ds;
    s->purpose = purpose;
    s->whole = order == NULL;
    s->n = s->whole ? ds->info.blocks : HOG_MIN(n, ds->info.blocks);
    for (uint32_t i = 0; i < s->n; i++) {
        s->order[i] = s->whole ? i : order[i];
        s->pos[s->order[i]] = i;
    }
    /* The check's pass reads the mapping: its pages are what later reads
     * through the mapping take as checked. */
    s->use_ring = s->ring && purpose != HOG_PASS_CHECK;
    s->readahead = !s->use_ring && (s->ooc || purpose == HOG_PASS_ONCE);
    s->drop = !s->use_ring && (s->ooc || purpose == HOG_PASS_ONCE);
    s->drop_cache = s->ooc;
    s->depth = purpose == HOG_PASS_EPOCH ? 2 * s->readers : s->readers;
    atomic_store_explicit(&s->next, 0, memory_order_relaxed);
    atomic_store_explicit(&s->bad, UINT32_MAX, memory_order_relaxed);
    if (s->n == 0)
        return 0;
    if (s->use_ring)
        return s->whole ? hog_block_ring_pass_in_order(s->ring) : hog_block_ring_pass(s->ring, s->order, s->n);
    if (s->readahead) {
        hog_dataset_willneed(ds, s->order[0]);
        atomic_store_explicit(&s->ahead, 0, memory_order_relaxed);
        read_ahead(s, s->depth - 1);
    }
    return 0;
}

const hog_block *hog_block_source_get(hog_block_source *s, uint32_t b)
{
    const hog_block *blk;
    if (s->use_ring) {
        blk = hog_block_ring_get(s->ring, b);
    } else {
        if (s->readahead)
            read_ahead(s, place_of(s, b) + s->depth);
        blk = hog_dataset_check(s->ds, b, NULL, 0) < 0 ? NULL : &s->ds->blocks[b];
    }
    if (!blk)
        hog_atomic_min_u32(&s->bad, b);
    return blk;
}

int hog_block_source_next(hog_block_source *s, uint32_t *b, const hog_block **blk)
{
    /* A failed block stops the claims: a reader in file order would not go
     * past it. */
    if (atomic_load_explicit(&s->bad, memory_order_relaxed) != UINT32_MAX)
        return 0;
    uint32_t i = atomic_fetch_add_explicit(&s->next, 1, memory_order_relaxed);
    if (i >= s->n)
        return 0;
    *b = s->order[i];
    if ((*blk = hog_block_source_get(s, *b)) != NULL)
        return 1;
    /* Its one reader lets the failed slot go (hog_block_source_end says why). */
    if (s->use_ring)
        hog_block_ring_release(s->ring, *b);
    return HOG_ECORRUPT;
}

void hog_block_source_release(hog_block_source *s, uint32_t b)
{
    if (s->use_ring)
        hog_block_ring_release(s->ring, b);
    else if (s->drop)
        hog_dataset_drop(s->ds, b, s->drop_cache);
}

uint32_t hog_block_source_failed(const hog_block_source *s)
{
    return atomic_load_explicit(&s->bad, memory_order_relaxed);
}

int hog_block_source_end(hog_block_source *s, char *err, size_t err_len)
{
    const hog_dataset *ds = s->ds;
    int rc = 0;
    if (s->use_ring && s->n)
        rc = hog_block_ring_end(s->ring, err, err_len);
    s->use_ring = 0; /* a second end, or a close, has no pass to end */
    uint32_t bad = atomic_load_explicit(&s->bad, memory_order_relaxed);
    if (rc == 0 && bad != UINT32_MAX)
        rc = hog_dataset_check_failed(ds, bad, err, err_len);
    /* Every block checked: the header's feature count against the largest
     * index the blocks hold, as a check at open would (a crafted count
     * would have a trainer allocate weights no row uses). */
    if (rc == 0 && s->purpose == HOG_PASS_CHECK && s->whole)
        rc = hog_dataset_verify(ds, err, err_len);
    /* What was read of a file truncated or rewritten in place cannot be
     * trusted, nor anything made of it. */
    if (rc == 0 && hog_dataset_changed(ds))
        rc = hog_fail(HOG_ECORRUPT, err, err_len,
                      "%s changed while it was read (truncated or written in place): what was read of it cannot "
                      "be trusted; replace a data set in use by writing a new file and renaming it",
                      ds->path ? ds->path : "the data set");
    return rc;
}

void hog_block_source_close(hog_block_source *s)
{
    if (!s)
        return;
    hog_block_ring_close(s->ring);
    hog_free(s->order);
    hog_free(s->pos);
    hog_free(s);
}
