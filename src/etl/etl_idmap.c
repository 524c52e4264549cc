/* etl_idmap.c: name maps: user and item names to dense ids and back, for ratings and the models trained on them. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <string.h>

#include "etl.h"

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

uint64_t hog_idmap_hash(const char *s, size_t len)
{
    return name_hash(s, len);
}

void hog_idmap_prefetch(const hog_idmap *m, uint64_t h)
{
    if (m->cap)
        __builtin_prefetch(&m->slots[(uint32_t)h & (m->cap - 1)], 0, 3);
}

void hog_idmap_prefetch_name(const hog_idmap *m, uint64_t h)
{
    if (!m->cap)
        return;
    const uint32_t v = m->slots[(uint32_t)h & (m->cap - 1)];
    if (v)
        __builtin_prefetch(&m->off[v - 1], 0, 3);
}

static int64_t find_hashed(const hog_idmap *m, const char *s, size_t len, uint64_t h)
{
    if (!m->cap)
        return -1;
    uint32_t i = (uint32_t)h & (m->cap - 1);
    for (uint32_t v; (v = m->slots[i]) != 0; i = (i + 1) & (m->cap - 1))
        if (same_name(m, v - 1, s, len))
            return v - 1;
    return -1;
}

int64_t hog_idmap_find(const hog_idmap *m, const char *s, size_t len)
{
    return find_hashed(m, s, len, name_hash(s, len));
}

int hog_idmap_intern(hog_idmap *m, const char *s, size_t len, uint32_t *id)
{
    return hog_idmap_intern_hashed(m, s, len, name_hash(s, len), id);
}

int hog_idmap_intern_hashed(hog_idmap *m, const char *s, size_t len, uint64_t h, uint32_t *id)
{
    int64_t found = find_hashed(m, s, len, h);
    if (found >= 0) {
        *id = (uint32_t)found;
        return 0;
    }
    if (m->n >= UINT32_MAX - 2 || m->names_len + len + 1 > UINT32_MAX)
        return HOG_ECORRUPT;
    int rc = table_grow(m, m->n + 1);
    if (rc < 0)
        return rc;
    if (m->n + 2 > m->off_cap || m->names_len + len + 1 > m->names_cap) {
        void *off = m->off, *names = m->names;
        rc = hog_array_grow(&off, &m->off_cap, (size_t)m->n + 2, sizeof(uint32_t), 256);
        m->off = off;
        if (rc == 0)
            rc = hog_array_grow(&names, &m->names_cap, (size_t)(m->names_len + len + 1), 1, 4096);
        m->names = names;
        m->owned = 1; /* what was grown is freed with the map, even when the rest failed */
        if (rc < 0)
            return rc;
    }
    if (m->n == 0)
        m->off[0] = 0;
    memcpy(m->names + m->names_len, s, len);
    m->names[m->names_len + len] = '\0';
    m->names_len += len + 1;
    m->off[m->n + 1] = (uint32_t)m->names_len;
    *id = m->n++;
    table_put(m->slots, m->cap, h, *id);
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
