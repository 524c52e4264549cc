/* train_mf_grid.c: FPSGD's grid for matrix factorisation: the ratings bucketed into (user band, item band) blocks, and the scheduler that hands workers blocks of bands no other worker holds. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <string.h>

#include "train_mf.h"

/*
 * Why a grid (Zhuang et al., "A fast parallel SGD for matrix factorization
 * in shared memory systems", 2013). HOGWILD! over shuffled ratings sends
 * every update to a random user row and a random item row: on 200,000
 * users at rank 16 that is 12.8 MB of user rows, out of every cache but
 * the last, and two workers keep taking each other's lines. Cutting users
 * and items into b bands each makes b x b blocks; a worker trains one
 * block at a time, whose rows (users/b and items/b of them) stay in its
 * own cache, and no two workers ever hold blocks of the same user band or
 * item band, so no row is written by two at once and no cache line moves
 * between cores while a block is trained. With b >= 2 threads + 1 a
 * worker that gives a block back always finds another free one.
 *
 * An epoch is a sequence of positions in a seeded order of the blocks
 * (train_mf.c draws it from seed and epoch), every block once. A worker
 * claims the first unclaimed position whose bands are free: on one thread
 * that is always the next position, so a run replays bit for bit; on
 * several, positions are taken a little out of order around the held
 * ones. A pause (a checkpoint, an interrupt) stops handing out positions
 * past the highest one claimed and lets the gaps below it fill, so that
 * when the workers stop the positions trained are exactly a prefix of the
 * order, as the segment schedule's are, and the checkpoint records its
 * length.
 */

/* Fewer ratings than this per block on average and the claims (a mutex
 * and a scan) start to show against the updates. */
#define MF_GRID_MIN_BLOCK 256u
/* The bands per side when the threads do not ask for more. On 20 M
 * ratings (200,000 users x 20,000 items, rank 16, one thread) 16 and 32
 * ran within the host's noise of each other and 8 and 64 slower (8: a
 * band's 25,000 user rows, 1.6 MB, leave the core's cache; 64: blocks of
 * 4,900 ratings); 32 leaves more free blocks to several workers. */
#define MF_GRID_BANDS 32u

uint32_t hog_mf_grid_bands(uint32_t want, unsigned nth, uint64_t n)
{
    if (want)
        return want;
    uint32_t b = MF_GRID_BANDS;
    while (b > 1 && (uint64_t)b * b * MF_GRID_MIN_BLOCK > n)
        b--;
    uint64_t need = 2 * (uint64_t)nth + 1;
    if (b < need)
        b = need < HOG_MF_MAX_GRID ? (uint32_t)need : HOG_MF_MAX_GRID;
    return b;
}

/* ===================================================================== *
 *  Building
 * ===================================================================== */
/* band[r] for r < n: r's place in a seeded permutation of [0, n), cut
 * into b bands of equal size (perm: n scratch words). */
static void bands_of(uint32_t *band, uint32_t *perm, uint32_t n, uint32_t b, uint64_t key)
{
    for (uint32_t r = 0; r < n; r++)
        perm[r] = r;
    hog_rng rng = {hog_mix64(key)};
    hog_shuffle_u32(perm, n, &rng);
    for (uint32_t j = 0; j < n; j++)
        band[perm[j]] = (uint32_t)((uint64_t)j * b / n);
}

static inline uint32_t block_of(const hog_mf_triple *t, const uint32_t *ub, const uint32_t *ib, uint32_t b)
{
    return ub[t->user] * b + ib[t->item];
}

int hog_mf_grid_build(mf_grid *g, hog_mf_triple *t, uint64_t n, uint32_t users, uint32_t items, uint64_t seed)
{
    const uint32_t b = g->b;
    g->blocks = b * b;
    uint32_t most = users > items ? users : items;
    uint32_t *ub = hog_malloc(((size_t)users + 1) * sizeof(uint32_t));
    uint32_t *ib = hog_malloc(((size_t)items + 1) * sizeof(uint32_t));
    uint32_t *perm = hog_malloc(((size_t)most + 1) * sizeof(uint32_t));
    uint64_t *next = hog_malloc((size_t)g->blocks * sizeof(uint64_t));
    g->start = hog_calloc((size_t)g->blocks + 1, sizeof(uint64_t));
    g->state = hog_malloc(g->blocks);
    g->busy = hog_calloc(2 * (size_t)b, 1);
    int rc = 0;
    if (!ub || !ib || !perm || !next || !g->start || !g->state || !g->busy) {
        rc = -ENOMEM;
        goto out;
    }
    bands_of(ub, perm, users, b, seed ^ 0x7573657262616e64ull);
    bands_of(ib, perm, items, b, seed ^ 0x6974656d62616e64ull);
    for (uint64_t k = 0; k < n; k++)
        g->start[block_of(&t[k], ub, ib, b) + 1]++;
    for (uint32_t k = 0; k < g->blocks; k++) {
        g->start[k + 1] += g->start[k];
        next[k] = g->start[k];
    }
    /* In place, one cycle at a time (an American flag sort's pass): each
     * triple is moved once into the first free slot of its block, so the
     * buckets cost no second copy of the ratings. The order it leaves in
     * a block follows from the shuffled copy's: random, fixed by seed. */
    for (uint32_t k = 0; k < g->blocks; k++)
        while (next[k] < g->start[k + 1]) {
            hog_mf_triple cur = t[next[k]];
            uint32_t d = block_of(&cur, ub, ib, b);
            while (d != k) {
                hog_mf_triple tmp = t[next[d]];
                t[next[d]++] = cur;
                cur = tmp;
                d = block_of(&cur, ub, ib, b);
            }
            t[next[k]++] = cur;
        }
    if (pthread_mutex_init(&g->mu, NULL) != 0) {
        rc = -ENOMEM;
        goto out;
    }
    if (pthread_cond_init(&g->freed, NULL) != 0) {
        pthread_mutex_destroy(&g->mu);
        rc = -ENOMEM;
        goto out;
    }
    g->sync_made = 1;
out:
    hog_free(ub);
    hog_free(ib);
    hog_free(perm);
    hog_free(next);
    return rc;
}

void hog_mf_grid_free(mf_grid *g)
{
    hog_free(g->start);
    hog_free(g->state);
    hog_free(g->busy);
    if (g->sync_made) {
        pthread_cond_destroy(&g->freed);
        pthread_mutex_destroy(&g->mu);
    }
    memset(g, 0, sizeof(*g));
}

/* ===================================================================== *
 *  The scheduler
 * ===================================================================== */
void hog_mf_grid_begin(mf_grid *g, const uint32_t *order, uint32_t n, uint32_t done)
{
    g->order = order;
    g->n = n;
    memset(g->state, 2, done);
    memset(g->state + done, 0, n - done);
    memset(g->busy, 0, 2 * (size_t)g->b);
    g->lo = g->top = done;
    g->end = n;
}

int hog_mf_grid_claim(mf_grid *g, uint32_t *pos)
{
    const uint32_t b = g->b;
    pthread_mutex_lock(&g->mu);
    for (;;) {
        while (g->lo < g->end && g->state[g->lo] != 0)
            g->lo++;
        if (g->lo >= g->end)
            break;
        for (uint32_t p = g->lo; p < g->end; p++) {
            uint32_t blk = g->order[p], ub = blk / b, ib = b + blk % b;
            if (g->state[p] != 0 || g->busy[ub] || g->busy[ib])
                continue;
            g->state[p] = 1;
            g->busy[ub] = g->busy[ib] = 1;
            g->top = p + 1 > g->top ? p + 1 : g->top;
            pthread_mutex_unlock(&g->mu);
            *pos = p;
            return 1;
        }
        /* Every unclaimed block shares a band with a held one: a holder
         * gives it back soon (nothing waits while nothing is held, for
         * then every block is free). */
        pthread_cond_wait(&g->freed, &g->mu);
    }
    pthread_mutex_unlock(&g->mu);
    return 0;
}

void hog_mf_grid_release(mf_grid *g, uint32_t pos, int pause)
{
    const uint32_t b = g->b, blk = g->order[pos];
    pthread_mutex_lock(&g->mu);
    g->state[pos] = 2;
    g->busy[blk / b] = g->busy[b + blk % b] = 0;
    if (pause && g->end > g->top)
        g->end = g->top;
    pthread_cond_broadcast(&g->freed);
    pthread_mutex_unlock(&g->mu);
}

uint32_t hog_mf_grid_paused_at(const mf_grid *g)
{
    return g->end;
}
