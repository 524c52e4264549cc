/* pool_describe.c: hog_topology_describe, the text of `hogtrain info --topology`: the machine as hwloc sees it and where workers go. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "pool.h"

typedef struct text {
    char *buf;
    size_t len;
    size_t at; /* the length of everything written, even what did not fit */
} text;

static void put(text *o, const char *fmt, ...) HOG_PRINTF(2, 3);
static void put(text *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->at < o->len ? o->buf + o->at : NULL, o->at < o->len ? o->len - o->at : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->at += (size_t)n;
}

/* "0-3,8,10-11": runs of consecutive numbers, as lscpu and numactl write CPU lists. */
static void put_list(text *o, const unsigned *v, unsigned n)
{
    for (unsigned i = 0; i < n;) {
        unsigned j = i;
        while (j + 1 < n && v[j + 1] == v[j] + 1)
            j++;
        put(o, j > i ? "%s%u-%u" : "%s%u", i ? "," : "", v[i], v[j]);
        i = j + 1;
    }
}

static double gib(uint64_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0 * 1024.0);
}

/* Returns 0, or -ENOMEM (nothing written). */
static int put_machine(text *o, const hog_topo *t)
{
    unsigned nn = hog_topo_nodes(t), nc = hog_topo_cores(t), np = hog_topo_pus(t);
    unsigned *ids = hog_malloc(((size_t)HOG_MAX(nc, np) + 1) * sizeof(unsigned));
    if (!ids)
        return -ENOMEM;
    if (hog_topo_is_machine(t))
        put(o, "%-18s %s\n", "topology", hog_topo_source(t));
    else
        put(o, "%-18s %s (not this machine: nothing is bound, and a run here starts at most %u workers unless "
            "given a number)\n", "topology", hog_topo_source(t), hog_topo_workers(t));
    put(o, "%-18s %u\n", "NUMA nodes", nn);
    put(o, "%-18s %u\n", "cores", nc);
    put(o, "%-18s %u%s\n", "PUs", np, np > nc ? " (hardware threads)" : "");
    put(o, "%-18s %.2f GiB available (MemAvailable), counted as %.2f GiB per node:"
        " hwloc's per-node sizes are not used\n", "memory", gib(hog_topo_mem_available(t)),
        gib(hog_topo_mem_available(t) / nn));
    for (unsigned n = 0; n < nn; n++) {
        const hog_topo_node *node = hog_topo_node_at(t, n);
        char label[32];
        snprintf(label, sizeof(label), "node %u (P#%u)", n, node->os_index);
        put(o, "%-18s %u cores, %u PUs, ~%.2f GiB", label, node->cores, node->pus, gib(node->mem_bytes));
        if (node->cores) {
            for (unsigned k = 0; k < node->cores; k++)
                ids[k] = hog_topo_core_at(t, node->core_ids[k])->logical;
            put(o, ": cores L#");
            put_list(o, ids, node->cores);
            unsigned m = 0;
            for (unsigned k = 0; k < node->cores; k++) {
                const hog_topo_core *c = hog_topo_core_at(t, node->core_ids[k]);
                for (unsigned u = 0; u < c->pus && m < np; u++)
                    ids[m++] = c->pu_os[u];
            }
            put(o, ", CPUs P#");
            put_list(o, ids, m);
        }
        put(o, "\n");
    }
    hog_free(ids);
    return 0;
}

static void put_placement(text *o, const hog_topo *t, unsigned nth, const hog_place *pl)
{
    unsigned nn = hog_topo_nodes(t);
    put(o, "%-18s %u%s:", "threads", nth, nth == hog_topo_cores(t) ? " (one per core, the default)" : "");
    for (unsigned n = 0; n < nn; n++) {
        unsigned k = 0;
        for (unsigned i = 0; i < nth; i++)
            k += pl[i].node == n;
        put(o, "%s %u on node %u", n ? "," : "", k, n);
    }
    put(o, "\n%8s %6s %8s %8s %6s\n", "worker", "node", "core L#", "core P#", "CPU P#");
    for (unsigned i = 0; i < nth; i++) {
        const hog_topo_core *c = hog_topo_core_at(t, pl[i].core);
        put(o, "%8u %6u %8u %8u %6u%s\n", i, pl[i].node, c->logical, c->os_index, pl[i].pu_os,
            pl[i].shared ? "  shared: more workers than CPUs" : pl[i].pu ? "  hyperthread: every core is taken" : "");
    }
}

/* What --bind auto, the default, makes of nth workers on this machine. */
static void put_auto(text *o, const hog_topo *t, unsigned nth)
{
    if (!hog_topo_is_machine(t))
        return;
    const unsigned cores = hog_topo_workers(t);
    if (hog_pool_bind_for(nth, HOG_POOL_BIND_AUTO))
        put(o, "%-18s pins them: %u worker%s take every core this process may use (%u)\n", "--bind auto", nth,
            nth == 1 ? "" : "s", cores);
    else
        put(o, "%-18s leaves them to the OS: %u worker%s on %u cores this process may use (--bind 1 pins them)\n",
            "--bind auto", nth, nth == 1 ? "" : "s", cores);
}

/* Starts the pool for real, as a trainer would, to say what binding this
 * process is allowed: containers and cpusets may refuse either kind. */
static int put_binding(text *o, const hog_topo *t, unsigned nth)
{
    if (!hog_topo_is_machine(t)) {
        put(o, "%-18s not attempted: the topology is not this machine's\n", "binding");
        return 0;
    }
    hog_pool *p;
    char err[512] = "";
    int rc = hog_pool_create_on(t, nth, 1, &p, err, sizeof(err));
    if (rc < 0)
        return hog_fail(rc, o->buf, o->len, "cannot start %u workers to try binding: %s", nth, err);
    unsigned cpu = 0, mem = 0;
    for (unsigned i = 0; i < nth; i++) {
        cpu += (hog_pool_worker_bound(p, i) & HOG_BIND_CPU) != 0;
        mem += (hog_pool_worker_bound(p, i) & HOG_BIND_MEM) != 0;
    }
    put(o, "%-18s %s: %u of %u workers pinned to their CPU, %u of %u with their memory policy bound to"
        " their node\n", "binding", cpu == nth ? (mem == nth ? "works" : "pinning works") : "refused", cpu,
        nth, mem, nth);
    void *m = hog_pool_alloc_local(p, 0, 4096);
    if (m) {
        hog_local_kind k = hog_pool_local_kind(m);
        put(o, "%-18s %s\n", "node-local memory",
            k == HOG_LOCAL_NODE ? "bound to the worker's node (hwloc_alloc_membind)"
            : k == HOG_LOCAL_TOUCH ? "first touch by the pinned worker (binding memory is refused here)"
                                   : "plain aligned allocation (the worker is not pinned)");
        hog_pool_free_local(p, m);
    }
    hog_pool_free(p);
    return 0;
}

int hog_topology_describe(unsigned threads, char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    if (hog_cpu_check(buf, len) < 0)
        return HOG_ECPU;
    const hog_topo *t;
    int rc = hog_topo_default(&t, buf, len);
    if (rc < 0)
        return rc;
    unsigned nth = threads ? threads : hog_topo_cores(t);
    hog_place *pl = hog_calloc(nth, sizeof(*pl));
    if (!pl)
        return hog_fail(-ENOMEM, buf, len, "out of memory placing %u threads", nth);
    rc = hog_topo_place(t, nth, pl);
    if (rc < 0) {
        hog_free(pl);
        return hog_fail(rc, buf, len, "cannot place %u threads: %s", nth, hog_strerror(rc));
    }
    text o = {buf, len, 0};
    if (put_machine(&o, t) < 0) {
        hog_free(pl);
        return hog_fail(-ENOMEM, buf, len, "out of memory describing the topology");
    }
    put_placement(&o, t, nth, pl);
    put_auto(&o, t, nth);
    hog_free(pl);
    rc = put_binding(&o, t, nth);
    if (rc < 0)
        return rc;
    return o.at > INT_MAX ? INT_MAX : (int)o.at;
}
