/* pool_topology.c: what hwloc sees (this machine, a synthetic description or an XML file), where workers go on it, and binding to it. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <hwloc.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pool.h"

struct hog_topo {
    hwloc_topology_t h;
    int machine;
    char source[320];
    unsigned nnodes, ncores, npus;
    hog_topo_node *nodes;
    hog_topo_core *cores;
    hwloc_obj_t *numa;     /* nnodes: hwloc's NUMA objects, NULL when hwloc shows none */
    unsigned *node_cores;  /* every node's core ids, node after node */
    unsigned *pu_os;       /* every core's PU numbers, core after core */
    uint64_t mem_available;
};

/* ===================================================================== *
 *  Loading
 * ===================================================================== */

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int load_hwloc(hog_topo *t, const char *spec, char *err, size_t err_len)
{
    if (hwloc_topology_init(&t->h) < 0) {
        t->h = NULL;
        return hog_fail(errno == ENOMEM ? -ENOMEM : HOG_ETOPOLOGY, err, err_len,
                        "hwloc: cannot initialise a topology: %s", strerror(errno));
    }
    if (spec && *spec) {
        if (ends_with(spec, ".xml")) {
            if (access(spec, R_OK) < 0)
                return hog_fail(-errno, err, err_len, "topology %s: %s", spec, strerror(errno));
            if (hwloc_topology_set_xml(t->h, spec) < 0)
                return hog_fail(HOG_ETOPOLOGY, err, err_len, "topology %s: hwloc cannot read it as XML: %s",
                                spec, strerror(errno));
            snprintf(t->source, sizeof(t->source), "XML file %s", spec);
        } else {
            if (hwloc_topology_set_synthetic(t->h, spec) < 0)
                return hog_fail(HOG_ETOPOLOGY, err, err_len,
                                "topology \"%s\": not an hwloc synthetic description (expected levels "
                                "such as \"package:2 numa:1 core:4 pu:2\", or FILE.xml)", spec);
            snprintf(t->source, sizeof(t->source), "synthetic \"%s\"", spec);
        }
    } else {
        snprintf(t->source, sizeof(t->source), "this machine");
        /* Only the CPUs and memory this process may use (taskset, numactl,
         * a scheduler's cpuset): workers placed outside them would be
         * moved there by our own binding, and two jobs given different
         * cores would share one. hog_cpus reads the same mask. */
        (void)hwloc_topology_set_flags(t->h, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM |
                                                 HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_CPUBINDING |
                                                 HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_MEMBINDING);
    }
    if (hwloc_topology_load(t->h) < 0)
        return hog_fail(HOG_ETOPOLOGY, err, err_len, "hwloc: cannot load the topology of %s: %s", t->source,
                        strerror(errno));
    t->machine = hwloc_topology_is_thissystem(t->h);
    return 0;
}

/* The index of the NUMA node whose CPUs include obj's, 0 if none does (a
 * topology without NUMA objects has one implicit node). */
static unsigned node_of(const hog_topo *t, hwloc_obj_t obj)
{
    for (unsigned n = 0; n < t->nnodes; n++)
        if (t->numa[n] && hwloc_bitmap_intersects(obj->cpuset, t->numa[n]->cpuset))
            return n;
    return 0;
}

/* Reduces hwloc's tree to the flat arrays placement reads. Where hwloc shows
 * no Core objects (some virtual machines), each PU counts as a core. */
static int build(hog_topo *t, char *err, size_t err_len)
{
    int nn = hwloc_get_nbobjs_by_type(t->h, HWLOC_OBJ_NUMANODE);
    t->nnodes = nn > 0 ? (unsigned)nn : 1;
    hwloc_obj_type_t ct = hwloc_get_nbobjs_by_type(t->h, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
    int nc = hwloc_get_nbobjs_by_type(t->h, ct);
    int np = hwloc_get_nbobjs_by_type(t->h, HWLOC_OBJ_PU);
    if (nc <= 0 || np <= 0)
        return hog_fail(HOG_ETOPOLOGY, err, err_len, "%s: hwloc shows no cores", t->source);
    t->ncores = (unsigned)nc;
    t->npus = (unsigned)np;
    t->nodes = hog_calloc(t->nnodes, sizeof(*t->nodes));
    t->numa = hog_calloc(t->nnodes, sizeof(*t->numa));
    t->cores = hog_calloc(t->ncores, sizeof(*t->cores));
    t->node_cores = hog_calloc(t->ncores, sizeof(*t->node_cores));
    t->pu_os = hog_calloc(t->npus, sizeof(*t->pu_os));
    if (!t->nodes || !t->numa || !t->cores || !t->node_cores || !t->pu_os)
        return -ENOMEM;
    t->mem_available = hog_mem_available();
    for (unsigned n = 0; n < t->nnodes; n++) {
        t->numa[n] = nn > 0 ? hwloc_get_obj_by_type(t->h, HWLOC_OBJ_NUMANODE, n) : NULL;
        t->nodes[n].os_index = t->numa[n] ? t->numa[n]->os_index : 0;
        /* hwloc's numa->attr->numanode.local_memory is not used: see pool.h. */
        t->nodes[n].mem_bytes = t->mem_available / t->nnodes;
    }
    /* Each PU is given to its core in one pass over the PUs, counted first
     * so that every core's PU numbers lie together: asking hwloc for the
     * PUs inside each core's cpuset is quadratic, 35 s for a synthetic
     * machine of 16,384 PUs. */
    for (unsigned c = 0; c < t->ncores; c++) {
        hwloc_obj_t obj = hwloc_get_obj_by_type(t->h, ct, c);
        hog_topo_core *core = &t->cores[c];
        core->logical = obj->logical_index;
        core->os_index = obj->os_index;
        core->node = node_of(t, obj);
    }
    for (int pass = 0; pass < 2; pass++) {
        unsigned at = 0;
        for (unsigned c = 0; pass == 1 && c < t->ncores; c++) { /* where each core's numbers go */
            t->cores[c].pu_os = &t->pu_os[at];
            at += t->cores[c].pus;
            t->cores[c].pus = 0;
        }
        for (unsigned i = 0; i < t->npus; i++) {
            hwloc_obj_t pu = hwloc_get_obj_by_type(t->h, HWLOC_OBJ_PU, i);
            hwloc_obj_t owner = ct == HWLOC_OBJ_PU ? pu : hwloc_get_ancestor_obj_by_type(t->h, ct, pu);
            if (!owner || owner->logical_index >= t->ncores)
                continue; /* a PU outside every core: not used */
            hog_topo_core *core = &t->cores[owner->logical_index];
            if (pass == 1)
                t->pu_os[core->pu_os - t->pu_os + core->pus] = pu->os_index;
            core->pus++;
        }
    }
    for (unsigned c = 0; c < t->ncores; c++) {
        const hog_topo_core *core = &t->cores[c];
        if (core->pus == 0)
            return hog_fail(HOG_ETOPOLOGY, err, err_len, "%s: core L#%u has no PU", t->source, core->logical);
        t->nodes[core->node].cores++;
        t->nodes[core->node].pus += core->pus;
    }
    unsigned at = 0;
    for (unsigned n = 0; n < t->nnodes; n++) {
        t->nodes[n].core_ids = &t->node_cores[at];
        for (unsigned c = 0; c < t->ncores; c++)
            if (t->cores[c].node == n)
                t->node_cores[at++] = c;
    }
    return 0;
}

int hog_topo_load(const char *spec, hog_topo **out, char *err, size_t err_len)
{
    *out = NULL;
    hog_topo *t = hog_calloc(1, sizeof(*t));
    if (!t)
        return hog_fail(-ENOMEM, err, err_len, "out of memory describing the topology");
    int rc = load_hwloc(t, spec, err, err_len);
    if (rc == 0)
        rc = build(t, err, err_len);
    if (rc < 0) {
        if (rc == -ENOMEM)
            hog_fail(rc, err, err_len, "out of memory describing the topology");
        hog_topo_free(t);
        return rc;
    }
    hog_log(HOG_LOG_DEBUG, "topology of %s: %u NUMA nodes, %u cores, %u PUs", t->source, t->nnodes, t->ncores,
            t->npus);
    *out = t;
    return 0;
}

void hog_topo_free(hog_topo *t)
{
    if (!t)
        return;
    if (t->h)
        hwloc_topology_destroy(t->h);
    hog_free(t->nodes);
    hog_free(t->numa);
    hog_free(t->cores);
    hog_free(t->node_cores);
    hog_free(t->pu_os);
    hog_free(t);
}

/* Loaded once: hwloc's discovery reads /sys and /proc for milliseconds, and
 * every pool, trainer and evaluation would otherwise repeat it. It is this
 * machine's unless the program set another (hog_topology_set) before the
 * first use; the library reads no environment. */
static pthread_mutex_t default_mu = PTHREAD_MUTEX_INITIALIZER;
static int default_done; /* this machine's loading was tried, or another's set */
static hog_topo *default_topo;
static int default_rc;
static char default_err[512];

int hog_topo_default(const hog_topo **out, char *err, size_t err_len)
{
    pthread_mutex_lock(&default_mu);
    if (!default_done) {
        default_rc = hog_topo_load(NULL, &default_topo, default_err, sizeof(default_err));
        default_done = default_rc != -ENOMEM; /* memory may be had on a later call */
    }
    int rc = default_rc;
    *out = default_topo;
    pthread_mutex_unlock(&default_mu);
    if (rc < 0)
        return hog_fail(rc, err, err_len, "%s", default_err);
    return 0;
}

int hog_topology_set(const char *spec, char *err_detail, size_t err_len)
{
    if (hog_cpu_check(err_detail, err_len) < 0)
        return HOG_ECPU;
    pthread_mutex_lock(&default_mu);
    int rc = 0;
    if (default_done) {
        rc = hog_fail(-EBUSY, err_detail, err_len, "the topology is already loaded (%s): hog_topology_set "
                      "comes before anything that places workers", default_topo ? default_topo->source : "failed");
    } else if (spec && *spec) {
        hog_topo *t;
        rc = hog_topo_load(spec, &t, err_detail, err_len);
        if (rc == 0) {
            default_topo = t;
            default_done = 1;
        }
    }
    pthread_mutex_unlock(&default_mu);
    return rc;
}

unsigned hog_topo_workers(const hog_topo *t)
{
    return t->machine ? t->ncores : HOG_MIN(t->ncores, hog_cpus());
}

unsigned hog_topo_nodes(const hog_topo *t) { return t->nnodes; }
unsigned hog_topo_cores(const hog_topo *t) { return t->ncores; }
unsigned hog_topo_pus(const hog_topo *t) { return t->npus; }
uint64_t hog_topo_mem_available(const hog_topo *t) { return t->mem_available; }
int hog_topo_is_machine(const hog_topo *t) { return t->machine; }
const char *hog_topo_source(const hog_topo *t) { return t->source; }

const hog_topo_node *hog_topo_node_at(const hog_topo *t, unsigned node)
{
    return node < t->nnodes ? &t->nodes[node] : NULL;
}

const hog_topo_core *hog_topo_core_at(const hog_topo *t, unsigned core)
{
    return core < t->ncores ? &t->cores[core] : NULL;
}

/* ===================================================================== *
 *  Placement
 * ===================================================================== */

/* Shares `want` workers over the nodes one at a time, round-robin, each node
 * taking at most cap[n]; adds them to cnt[] and returns how many were placed. */
static unsigned share_out(unsigned nnodes, const unsigned *cap, unsigned *cnt, unsigned want)
{
    unsigned placed = 0;
    while (placed < want) {
        unsigned progress = 0;
        for (unsigned n = 0; n < nnodes && placed < want; n++)
            if (cnt[n] < cap[n]) {
                cnt[n]++;
                placed++;
                progress = 1;
            }
        if (!progress)
            break;
    }
    return placed;
}

int hog_topo_place(const hog_topo *t, unsigned nth, hog_place *out)
{
    if (nth == 0)
        return -EINVAL;
    unsigned nn = t->nnodes;
    unsigned *buf = hog_calloc(4 * (size_t)nn, sizeof(unsigned));
    if (!buf)
        return -ENOMEM;
    unsigned *cap = buf, *tier1 = buf + nn, *tier2 = buf + 2 * nn, *tier3 = buf + 3 * nn;
    /* Tier 1: first PU of each core; tier 2: the other PUs; tier 3: wrap. */
    for (unsigned n = 0; n < nn; n++)
        cap[n] = t->nodes[n].cores;
    unsigned placed = share_out(nn, cap, tier1, nth);
    for (unsigned n = 0; n < nn; n++)
        cap[n] = t->nodes[n].pus - t->nodes[n].cores;
    placed += share_out(nn, cap, tier2, nth - placed);
    for (unsigned n = 0; n < nn; n++)
        cap[n] = t->nodes[n].pus ? nth : 0;
    share_out(nn, cap, tier3, nth - placed);

    unsigned w = 0;
    for (unsigned n = 0; n < nn; n++) {
        const hog_topo_node *node = &t->nodes[n];
        /* The node's slots in order: PU 0 of every core, then PU 1 of every
         * core that has one, and so on; tier 3 starts over from the first. */
        unsigned used = tier1[n] + tier2[n], total = used + tier3[n];
        unsigned slot_pu = 0, slot_core = 0, seen = 0;
        for (unsigned k = 0; k < total; k++) {
            if (k == used || seen == node->pus) {
                slot_pu = slot_core = 0;
                seen = 0;
            }
            /* The next core of this node that has a PU number slot_pu. */
            for (;;) {
                if (slot_core == node->cores) {
                    slot_core = 0;
                    slot_pu++;
                }
                if (t->cores[node->core_ids[slot_core]].pus > slot_pu)
                    break;
                slot_core++;
            }
            unsigned c = node->core_ids[slot_core];
            out[w].core = c;
            out[w].node = n;
            out[w].pu = slot_pu;
            out[w].pu_os = t->cores[c].pu_os[slot_pu];
            out[w].shared = k >= used;
            w++;
            slot_core++;
            seen++;
        }
    }
    hog_free(buf);
    return 0;
}

/* ===================================================================== *
 *  Binding
 * ===================================================================== */

int hog_topo_bind_thread(const hog_topo *t, const hog_place *pl, unsigned ith)
{
    if (!t->machine)
        return 0;
    int flags = 0;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return 0;
    /* One PU, not the whole core: no migration between a core's hyperthreads. */
    hwloc_bitmap_only(set, pl->pu_os);
    if (hwloc_set_cpubind(t->h, set, HWLOC_CPUBIND_THREAD) == 0)
        flags |= HOG_BIND_CPU;
    else
        hog_log(HOG_LOG_WARN, "worker %u: cannot bind to PU %u (core L#%u): %s", ith, pl->pu_os,
                t->cores[pl->core].logical, strerror(errno));
    hwloc_bitmap_free(set);
    hwloc_obj_t numa = t->numa[pl->node];
    if (numa) {
        /* Strict binding of the thread's policy: what it first touches (its
         * buffers, the pages of data it reads in) is put on its node. */
        if (hwloc_set_membind(t->h, numa->nodeset, HWLOC_MEMBIND_BIND,
                              HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET) == 0)
            flags |= HOG_BIND_MEM;
        else
            hog_log(HOG_LOG_DEBUG, "worker %u: memory policy not bound to node %u: %s (first touch applies)", ith,
                    numa->os_index, strerror(errno));
    }
    return flags;
}

void *hog_topo_alloc_node(const hog_topo *t, unsigned node, size_t bytes)
{
    if (!t->machine || node >= t->nnodes || !t->numa[node]) {
        errno = ENOSYS;
        return NULL;
    }
    /* Strict: without it hwloc may hand back unbound memory and say nothing. */
    return hwloc_alloc_membind(t->h, bytes, t->numa[node]->nodeset, HWLOC_MEMBIND_BIND,
                               HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_STRICT);
}

void hog_topo_free_node(const hog_topo *t, void *p, size_t bytes)
{
    if (p)
        hwloc_free(t->h, p, bytes);
}
