/* test_pool_threads.c: the worker pool runs every step on every worker, reuses its threads, binds them, spreads them over NUMA nodes and gives them node-local memory. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <errno.h>
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool/pool.h"

typedef struct step_arg {
    atomic_uint calls;
    atomic_uint mask;
    pthread_t threads[8];
    int cpu[8];
} step_arg;

static void record(void *v, unsigned ith, unsigned nth)
{
    step_arg *a = v;
    cr_assert(ith < nth && nth <= 8);
    atomic_fetch_add(&a->calls, 1);
    atomic_fetch_or(&a->mask, 1u << ith);
    a->threads[ith] = pthread_self();
    a->cpu[ith] = sched_getcpu();
}

Test(pool, every_worker_runs_each_step_once)
{
    hog_pool *p;
    cr_assert_eq(hog_pool_create(4, 0, &p, NULL, 0), 0);
    cr_assert_eq(hog_pool_threads(p), 4u);
    step_arg a = {0};
    for (int step = 0; step < 100; step++)
        hog_pool_run(p, record, &a);
    cr_assert_eq(atomic_load(&a.calls), 400u);
    cr_assert_eq(atomic_load(&a.mask), 0xfu);
    hog_pool_free(p);
}

Test(pool, threads_are_reused_across_steps)
{
    hog_pool *p;
    cr_assert_eq(hog_pool_create(2, 0, &p, NULL, 0), 0);
    step_arg a = {0}, b = {0};
    hog_pool_run(p, record, &a);
    hog_pool_run(p, record, &b);
    for (int i = 0; i < 2; i++)
        cr_assert(pthread_equal(a.threads[i], b.threads[i]));
    hog_pool_free(p);
}

Test(pool, default_is_one_worker_per_core_and_binding_pins_them)
{
    unsigned cores = hog_pool_default_threads();
    cr_assert_geq(cores, 1u);
    hog_pool *p;
    cr_assert_eq(hog_pool_create(0, 1, &p, NULL, 0), 0);
    cr_assert_eq(hog_pool_threads(p), cores);
    if (cores > 8) {
        hog_pool_free(p);
        cr_skip_test("more than 8 cores: placement checked on the first 8 only by other tests");
    }
    step_arg a = {0};
    hog_pool_run(p, record, &a);
    /* Pinned to distinct cores: each worker reports a different CPU. */
    for (unsigned i = 0; i < cores; i++)
        for (unsigned j = i + 1; j < cores; j++)
            cr_assert_neq(a.cpu[i], a.cpu[j], "workers %u and %u share cpu %d", i, j, a.cpu[i]);
    hog_pool_free(p);
}

Test(pool, free_accepts_null)
{
    hog_pool_free(NULL);
}

/* ===================================================================== *
 *  Topology and placement on synthetic and XML topologies
 * ===================================================================== */

static hog_topo *topo(const char *spec)
{
    hog_topo *t;
    char err[512] = "";
    int rc = hog_topo_load(spec, &t, err, sizeof(err));
    cr_assert_eq(rc, 0, "%s: %s", spec, err);
    return t;
}

/* Places nth workers on spec and checks each worker's node, core and PU
 * against want[]: {node, core, pu, shared} per worker. */
static void check_place(const char *spec, unsigned nth, const unsigned (*want)[4])
{
    hog_topo *t = topo(spec);
    hog_place pl[64];
    cr_assert_leq(nth, 64u);
    cr_assert_eq(hog_topo_place(t, nth, pl), 0);
    for (unsigned i = 0; i < nth; i++) {
        cr_assert_eq(pl[i].node, want[i][0], "%s, %u threads: worker %u on node %u, want %u", spec, nth, i,
                     pl[i].node, want[i][0]);
        cr_assert_eq(pl[i].core, want[i][1], "%s, %u threads: worker %u on core %u, want %u", spec, nth, i,
                     pl[i].core, want[i][1]);
        cr_assert_eq(pl[i].pu, want[i][2], "%s, %u threads: worker %u on PU %u of its core, want %u", spec, nth,
                     i, pl[i].pu, want[i][2]);
        cr_assert_eq(pl[i].shared, want[i][3], "%s, %u threads: worker %u shared %u", spec, nth, i, pl[i].shared);
        const hog_topo_core *c = hog_topo_core_at(t, pl[i].core);
        cr_assert_eq(pl[i].pu_os, c->pu_os[pl[i].pu]);
        cr_assert_eq(c->node, pl[i].node);
    }
    hog_topo_free(t);
}

Test(topology, synthetic_two_sockets_is_described)
{
    hog_topo *t = topo("package:2 numa:1 core:4 pu:2");
    cr_assert_eq(hog_topo_nodes(t), 2u);
    cr_assert_eq(hog_topo_cores(t), 8u);
    cr_assert_eq(hog_topo_pus(t), 16u);
    cr_assert_eq(hog_topo_is_machine(t), 0);
    cr_assert_str_eq(hog_topo_source(t), "synthetic \"package:2 numa:1 core:4 pu:2\"");
    for (unsigned n = 0; n < 2; n++) {
        const hog_topo_node *node = hog_topo_node_at(t, n);
        cr_assert_eq(node->os_index, n);
        cr_assert_eq(node->cores, 4u);
        cr_assert_eq(node->pus, 8u);
        /* MemAvailable shared out, not hwloc's invented per-node figure. */
        cr_assert_eq(node->mem_bytes, hog_topo_mem_available(t) / 2);
        for (unsigned k = 0; k < 4; k++) {
            const hog_topo_core *c = hog_topo_core_at(t, node->core_ids[k]);
            cr_assert_eq(c->logical, 4 * n + k);
            cr_assert_eq(c->node, n);
            cr_assert_eq(c->pus, 2u);
            /* Synthetic PUs are numbered in order: core c has PUs 2c, 2c+1. */
            cr_assert_eq(c->pu_os[0], 2 * c->logical);
            cr_assert_eq(c->pu_os[1], 2 * c->logical + 1);
        }
    }
    cr_assert_null(hog_topo_node_at(t, 2));
    cr_assert_null(hog_topo_core_at(t, 8));
    cr_assert_gt(hog_topo_mem_available(t), 0u);
    hog_topo_free(t);
}

Test(topology, bad_descriptions_are_refused_with_a_reason)
{
    hog_topo *t = (hog_topo *)1;
    char err[512] = "";
    cr_assert_eq(hog_topo_load("bogus:3", &t, err, sizeof(err)), HOG_ETOPOLOGY);
    cr_assert_null(t);
    cr_assert(strstr(err, "\"bogus:3\": not an hwloc synthetic description"), "%s", err);
    cr_assert_eq(hog_topo_load("/nonexistent/machine.xml", &t, err, sizeof(err)), -ENOENT);
    cr_assert(strstr(err, "/nonexistent/machine.xml: No such file"), "%s", err);
}

Test(topology, xml_file_round_trips_a_synthetic_machine)
{
    char path[] = "/tmp/hog-topo-XXXXXX.xml";
    int fd = mkstemps(path, 4);
    cr_assert_geq(fd, 0);
    close(fd);
    hwloc_topology_t h;
    cr_assert_eq(hwloc_topology_init(&h), 0);
    cr_assert_eq(hwloc_topology_set_synthetic(h, "package:4 numa:1 core:3 pu:2"), 0);
    cr_assert_eq(hwloc_topology_load(h), 0);
    cr_assert_eq(hwloc_topology_export_xml(h, path, 0), 0);
    hwloc_topology_destroy(h);

    hog_topo *t = topo(path);
    unlink(path);
    cr_assert_eq(hog_topo_nodes(t), 4u);
    cr_assert_eq(hog_topo_cores(t), 12u);
    cr_assert_eq(hog_topo_pus(t), 24u);
    cr_assert_eq(hog_topo_is_machine(t), 0);
    cr_assert(strncmp(hog_topo_source(t), "XML file /tmp/hog-topo-", 23) == 0, "%s", hog_topo_source(t));
    hog_pool *p;
    cr_assert_eq(hog_pool_create_on(t, 4, 1, &p, NULL, 0), 0);
    for (unsigned i = 0; i < 4; i++)
        cr_assert_eq(hog_pool_worker_node(p, i), (int)i, "one worker per node");
    hog_pool_free(p);
    hog_topo_free(t);
}

/* The report: `package:32 core:32 pu:16` ran for more than 20 s
 * (the PUs were looked up core by core, quadratic), and a 1,024-core
 * description started 1,024 threads on two CPUs. */
Test(topology, a_large_synthetic_machine_loads_fast_and_starts_few_workers, .timeout = 20)
{
    double t0 = hog_now();
    hog_topo *t = topo("package:32 core:32 pu:16");
    cr_assert_lt(hog_now() - t0, 5.0, "loaded in %.1f s", hog_now() - t0);
    cr_assert_eq(hog_topo_cores(t), 1024u);
    cr_assert_eq(hog_topo_pus(t), 16384u);
    const hog_topo_core *last = hog_topo_core_at(t, 1023);
    cr_assert_eq(last->pus, 16u);
    cr_assert_eq(last->pu_os[0], 1023u * 16);
    cr_assert_eq(last->pu_os[15], 1023u * 16 + 15);
    cr_assert_eq(hog_topo_workers(t), HOG_MIN(1024u, hog_cpus()), "at most this process's CPUs");
    hog_pool *p;
    cr_assert_eq(hog_pool_create_on(t, 0, 1, &p, NULL, 0), 0);
    cr_assert_eq(hog_pool_threads(p), HOG_MIN(1024u, hog_cpus()));
    hog_pool_free(p);
    cr_assert_eq(hog_pool_create_on(t, 6, 1, &p, NULL, 0), 0, "a number asked for is started as asked");
    cr_assert_eq(hog_pool_threads(p), 6u);
    hog_pool_free(p);
    hog_topo_free(t);
    t = topo(NULL);
    cr_assert_eq(hog_topo_workers(t), hog_topo_cores(t), "this machine: one per core");
    hog_topo_free(t);
}

/* The override comes from the program, never from the environment. */
Test(topology, the_program_sets_the_topology_before_any_worker)
{
    setenv("HOG_TOPOLOGY", "package:3 core:1 pu:1", 1); /* read by nobody in the library */
    char err[512] = "";
    cr_assert_eq(hog_topology_set("bogus:3", err, sizeof(err)), HOG_ETOPOLOGY);
    cr_assert(strstr(err, "topology \"bogus:3\": not an hwloc synthetic description"), "%s", err);
    cr_assert_eq(hog_topology_set(NULL, err, sizeof(err)), 0, "NULL keeps this machine's, unloaded");
    cr_assert_eq(hog_topology_set("package:2 numa:1 core:2 pu:1", err, sizeof(err)), 0, "%s", err);
    const hog_topo *t;
    cr_assert_eq(hog_topo_default(&t, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(hog_topo_source(t), "synthetic \"package:2 numa:1 core:2 pu:1\"");
    cr_assert_eq(hog_topology_set("package:4 core:1 pu:1", err, sizeof(err)), -EBUSY);
    cr_assert(strstr(err, "already loaded (synthetic \"package:2 numa:1 core:2 pu:1\")"), "%s", err);
    char text[4096];
    cr_assert_gt(hog_topology_describe(0, text, sizeof(text)), 0, "%s", text);
    cr_assert(strstr(text, "NUMA nodes         2\n"), "%s", text);
}

Test(topology, this_machine_unless_set_and_then_settled)
{
    setenv("HOG_TOPOLOGY", "package:3 core:1 pu:1", 1);
    const hog_topo *t;
    cr_assert_eq(hog_topo_default(&t, NULL, 0), 0);
    cr_assert_eq(hog_topo_is_machine(t), 1, "HOG_TOPOLOGY is the command's, not the library's");
    char err[512] = "";
    cr_assert_eq(hog_topology_set("package:2 core:1 pu:1", err, sizeof(err)), -EBUSY);
    cr_assert(strstr(err, "already loaded (this machine)"), "%s", err);
}

Test(topology, this_machine_has_cores_on_nodes)
{
    hog_topo *t = topo(NULL);
    cr_assert_eq(hog_topo_is_machine(t), 1);
    cr_assert_str_eq(hog_topo_source(t), "this machine");
    cr_assert_geq(hog_topo_cores(t), 1u);
    cr_assert_geq(hog_topo_pus(t), hog_topo_cores(t));
    unsigned sum = 0;
    for (unsigned n = 0; n < hog_topo_nodes(t); n++)
        sum += hog_topo_node_at(t, n)->cores;
    cr_assert_eq(sum, hog_topo_cores(t), "every core belongs to one node");
    hog_topo_free(t);
}

Test(placement, one_node_two_cores)
{
    static const unsigned two[][4] = {{0, 0, 0, 0}, {0, 1, 0, 0}};
    check_place("core:2 pu:1", 2, two);
    static const unsigned one[][4] = {{0, 0, 0, 0}};
    check_place("core:2 pu:1", 1, one);
    /* More threads than PUs: they wrap around, marked shared. */
    static const unsigned three[][4] = {{0, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 0, 1}};
    check_place("core:2 pu:1", 3, three);
}

Test(placement, two_nodes_four_cores)
{
    const char *m = "package:2 numa:1 core:4 pu:1";
    static const unsigned t2[][4] = {{0, 0, 0, 0}, {1, 4, 0, 0}};
    check_place(m, 2, t2);
    static const unsigned t4[][4] = {{0, 0, 0, 0}, {0, 1, 0, 0}, {1, 4, 0, 0}, {1, 5, 0, 0}};
    check_place(m, 4, t4);
    static const unsigned t3[][4] = {{0, 0, 0, 0}, {0, 1, 0, 0}, {1, 4, 0, 0}};
    check_place(m, 3, t3);
    static const unsigned t8[][4] = {{0, 0, 0, 0}, {0, 1, 0, 0}, {0, 2, 0, 0}, {0, 3, 0, 0},
                                     {1, 4, 0, 0}, {1, 5, 0, 0}, {1, 6, 0, 0}, {1, 7, 0, 0}};
    check_place(m, 8, t8);
    /* 12 on 8 single-threaded cores: 6 per node, the last 2 of each sharing. */
    static const unsigned t12[][4] = {{0, 0, 0, 0}, {0, 1, 0, 0}, {0, 2, 0, 0}, {0, 3, 0, 0},
                                      {0, 0, 0, 1}, {0, 1, 0, 1}, {1, 4, 0, 0}, {1, 5, 0, 0},
                                      {1, 6, 0, 0}, {1, 7, 0, 0}, {1, 4, 0, 1}, {1, 5, 0, 1}};
    check_place(m, 12, t12);
}

Test(placement, hyperthreads_only_after_every_core)
{
    const char *m = "package:2 numa:1 core:4 pu:2";
    /* 8 threads: every core, no hyperthread. */
    static const unsigned t8[][4] = {{0, 0, 0, 0}, {0, 1, 0, 0}, {0, 2, 0, 0}, {0, 3, 0, 0},
                                     {1, 4, 0, 0}, {1, 5, 0, 0}, {1, 6, 0, 0}, {1, 7, 0, 0}};
    check_place(m, 8, t8);
    /* 12: the 4 extra on second PUs, 2 per node. */
    static const unsigned t12[][4] = {{0, 0, 0, 0}, {0, 1, 0, 0}, {0, 2, 0, 0}, {0, 3, 0, 0},
                                      {0, 0, 1, 0}, {0, 1, 1, 0}, {1, 4, 0, 0}, {1, 5, 0, 0},
                                      {1, 6, 0, 0}, {1, 7, 0, 0}, {1, 4, 1, 0}, {1, 5, 1, 0}};
    check_place(m, 12, t12);
}

Test(placement, four_nodes_with_hyperthreads)
{
    /* 4 nodes (two per package) of 2 cores of 2 PUs. */
    const char *m = "package:2 numa:2 core:2 pu:2";
    hog_topo *t = topo(m);
    cr_assert_eq(hog_topo_nodes(t), 4u);
    cr_assert_eq(hog_topo_cores(t), 8u);
    cr_assert_eq(hog_topo_pus(t), 16u);
    hog_topo_free(t);
    static const unsigned t4[][4] = {{0, 0, 0, 0}, {1, 2, 0, 0}, {2, 4, 0, 0}, {3, 6, 0, 0}};
    check_place(m, 4, t4);
    /* 10: all 8 cores, then hyperthreads on nodes 0 and 1. */
    static const unsigned t10[][4] = {{0, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {1, 2, 0, 0}, {1, 3, 0, 0},
                                      {1, 2, 1, 0}, {2, 4, 0, 0}, {2, 5, 0, 0}, {3, 6, 0, 0}, {3, 7, 0, 0}};
    check_place(m, 10, t10);
    /* 16: every PU once, none shared; 17: the first wraps. */
    hog_topo *u = topo(m);
    hog_place pl[17];
    cr_assert_eq(hog_topo_place(u, 16, pl), 0);
    unsigned seen = 0;
    for (unsigned i = 0; i < 16; i++) {
        cr_assert_eq(pl[i].shared, 0u);
        cr_assert_eq(pl[i].node, i / 4);
        cr_assert_eq(seen & (1u << pl[i].pu_os), 0u, "PU %u used twice", pl[i].pu_os);
        seen |= 1u << pl[i].pu_os;
    }
    cr_assert_eq(seen, 0xffffu);
    cr_assert_eq(hog_topo_place(u, 17, pl), 0);
    cr_assert_eq(pl[4].shared, 1u, "node 0 takes the 17th worker, after its own four");
    cr_assert_eq(pl[4].pu_os, pl[0].pu_os);
    cr_assert_eq(hog_topo_place(u, 0, pl), -EINVAL);
    hog_topo_free(u);
}

Test(placement, odd_counts_go_to_the_first_nodes)
{
    static const unsigned t5[][4] = {{0, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 0, 1}, {1, 2, 0, 0}, {1, 3, 0, 0}};
    check_place("package:2 numa:1 core:2 pu:1", 5, t5);
}

Test(placement, uneven_nodes_each_take_what_their_cores_allow)
{
    /* Synthetic descriptions are symmetric: restrict one to 6 of its 8 PUs
     * (as a cpuset or a container would) and save it as XML, giving a node of
     * 4 cores and a node of 2. */
    char path[] = "/tmp/hog-topo-XXXXXX.xml";
    int fd = mkstemps(path, 4);
    cr_assert_geq(fd, 0);
    close(fd);
    hwloc_topology_t h;
    cr_assert_eq(hwloc_topology_init(&h), 0);
    cr_assert_eq(hwloc_topology_set_synthetic(h, "package:2 numa:1 core:4 pu:1"), 0);
    cr_assert_eq(hwloc_topology_load(h), 0);
    hwloc_bitmap_t keep = hwloc_bitmap_alloc();
    hwloc_bitmap_set_range(keep, 0, 5);
    cr_assert_eq(hwloc_topology_restrict(h, keep, 0), 0);
    hwloc_bitmap_free(keep);
    cr_assert_eq(hwloc_topology_export_xml(h, path, 0), 0);
    hwloc_topology_destroy(h);
    hog_topo *t = topo(path);
    cr_assert_eq(hog_topo_node_at(t, 0)->cores, 4u);
    cr_assert_eq(hog_topo_node_at(t, 1)->cores, 2u);
    hog_topo_free(t);
    /* 5: round-robin gives 3 + 2; 6: 4 + 2; 7: the one beyond the cores wraps on node 0. */
    static const unsigned t5[][4] = {{0, 0, 0, 0}, {0, 1, 0, 0}, {0, 2, 0, 0}, {1, 4, 0, 0}, {1, 5, 0, 0}};
    check_place(path, 5, t5);
    static const unsigned t6[][4] = {{0, 0, 0, 0}, {0, 1, 0, 0}, {0, 2, 0, 0}, {0, 3, 0, 0},
                                     {1, 4, 0, 0}, {1, 5, 0, 0}};
    check_place(path, 6, t6);
    static const unsigned t7[][4] = {{0, 0, 0, 0}, {0, 1, 0, 0}, {0, 2, 0, 0}, {0, 3, 0, 0},
                                     {0, 0, 0, 1}, {1, 4, 0, 0}, {1, 5, 0, 0}};
    check_place(path, 7, t7);
    unlink(path);
}

/* ===================================================================== *
 *  The pool on topologies: nodes recorded, node-local memory
 * ===================================================================== */

Test(pool_numa, pool_reports_each_workers_node_on_a_synthetic_machine)
{
    hog_topo *t = topo("package:2 numa:1 core:4 pu:1");
    hog_pool *p;
    cr_assert_eq(hog_pool_create_on(t, 0, 1, &p, NULL, 0), 0);
    cr_assert_eq(hog_pool_threads(p), HOG_MIN(8u, hog_cpus()), "default: one per core, at most this process's CPUs");
    hog_pool_free(p);
    cr_assert_eq(hog_pool_create_on(t, 8, 1, &p, NULL, 0), 0);
    cr_assert_eq(hog_pool_threads(p), 8u, "one worker per core of the topology, asked for");
    for (unsigned i = 0; i < 8; i++) {
        cr_assert_eq(hog_pool_worker_node(p, i), (int)(i / 4));
        cr_assert_eq(hog_pool_worker_place(p, i)->core, i);
        cr_assert_eq(hog_pool_worker_bound(p, i), 0, "a synthetic machine is never bound");
    }
    cr_assert_eq(hog_pool_worker_node(p, 8), -1);
    step_arg a = {0};
    hog_pool_run(p, record, &a);
    cr_assert_eq(atomic_load(&a.mask), 0xffu);
    hog_pool_free(p);

    cr_assert_eq(hog_pool_create_on(t, 4, 0, &p, NULL, 0), 0);
    cr_assert_eq(hog_pool_worker_node(p, 0), -1, "without bind the OS places workers");
    cr_assert_null(hog_pool_worker_place(p, 0));
    hog_pool_free(p);
    hog_topo_free(t);
}

typedef struct local_arg {
    hog_pool *pool;
    void *mem[8];
    size_t bytes;
    atomic_uint ok;
} local_arg;

/* Each worker writes and reads back its own block. */
static void use_local(void *v, unsigned ith, unsigned nth)
{
    (void)nth;
    local_arg *a = v;
    unsigned char *m = a->mem[ith];
    for (size_t i = 0; i < a->bytes; i++)
        m[i] = (unsigned char)(i * 7 + ith);
    int good = 1;
    for (size_t i = 0; i < a->bytes; i++)
        good &= m[i] == (unsigned char)(i * 7 + ith);
    if (good)
        atomic_fetch_add(&a->ok, 1);
}

static void check_local(hog_pool *p, hog_local_kind expect_a, hog_local_kind expect_b)
{
    unsigned nth = hog_pool_threads(p);
    cr_assert_leq(nth, 8u);
    static const size_t sizes[] = {1, 100, 4096, 3 << 20};
    for (unsigned s = 0; s < 4; s++) {
        local_arg a = {.pool = p, .bytes = sizes[s]};
        for (unsigned i = 0; i < nth; i++) {
            a.mem[i] = hog_pool_alloc_local(p, i, sizes[s]);
            cr_assert_not_null(a.mem[i]);
            cr_assert_eq((uintptr_t)a.mem[i] % HOG_CACHELINE, 0u, "cache-line aligned");
            if (sizes[s] >= (2u << 20)) /* its header starts a huge page, advised before the first touch */
                cr_assert_eq(((uintptr_t)a.mem[i] - HOG_CACHELINE) % (2u << 20), 0u, "worker %u: %p", i, a.mem[i]);
            hog_local_kind k = hog_pool_local_kind(a.mem[i]);
            cr_assert(k == expect_a || k == expect_b, "worker %u: kind %d", i, (int)k);
            const unsigned char *m = a.mem[i];
            for (size_t j = 0; j < sizes[s]; j++)
                cr_assert_eq(m[j], 0, "zero-filled");
        }
        hog_pool_run(p, use_local, &a);
        cr_assert_eq(atomic_load(&a.ok), nth);
        for (unsigned i = 0; i < nth; i++)
            hog_pool_free_local(p, a.mem[i]);
    }
    hog_pool_free_local(p, NULL);
    cr_assert_null(hog_pool_alloc_local(p, nth, 64), "no such worker");
}

Test(pool_numa, local_memory_on_a_synthetic_machine_is_plain_and_usable)
{
    hog_topo *t = topo("package:2 numa:1 core:2 pu:1");
    hog_pool *p;
    cr_assert_eq(hog_pool_create_on(t, 4, 1, &p, NULL, 0), 0);
    check_local(p, HOG_LOCAL_PLAIN, HOG_LOCAL_PLAIN);
    hog_pool_free(p);
    hog_topo_free(t);
}

Test(pool_numa, local_memory_on_this_machine_follows_the_worker)
{
    hog_pool *p;
    unsigned n = HOG_MIN(hog_pool_default_threads(), 8u);
    cr_assert_eq(hog_pool_create(n, 1, &p, NULL, 0), 0);
    int pinned = 1;
    for (unsigned i = 0; i < n; i++)
        pinned &= (hog_pool_worker_bound(p, i) & HOG_BIND_CPU) != 0;
    /* Bound by hwloc where the OS allows, else first touch by the pinned
     * worker; a plain allocation only if the OS refused to pin. */
    if (pinned)
        check_local(p, HOG_LOCAL_NODE, HOG_LOCAL_TOUCH);
    else
        check_local(p, HOG_LOCAL_NODE, HOG_LOCAL_PLAIN);
    hog_pool_free(p);

    cr_assert_eq(hog_pool_create(2, 0, &p, NULL, 0), 0);
    check_local(p, HOG_LOCAL_PLAIN, HOG_LOCAL_PLAIN);
    hog_pool_free(p);
}

Test(pool_numa, workers_and_memory_land_on_their_nodes_on_a_numa_machine)
{
    const hog_topo *t;
    cr_assert_eq(hog_topo_default(&t, NULL, 0), 0);
    if (!hog_topo_is_machine(t) || hog_topo_nodes(t) < 2)
        cr_skip_test("needs a machine with 2 or more NUMA nodes (this one has %u)", hog_topo_nodes(t));
    unsigned nodes = hog_topo_nodes(t), nth = HOG_MIN(2 * nodes, 8u);
    hog_pool *p;
    cr_assert_eq(hog_pool_create(nth, 1, &p, NULL, 0), 0);
    step_arg a = {0};
    hog_pool_run(p, record, &a);
    hwloc_topology_t h;
    cr_assert_eq(hwloc_topology_init(&h), 0);
    cr_assert_eq(hwloc_topology_load(h), 0);
    for (unsigned i = 0; i < nth; i++) {
        if (!(hog_pool_worker_bound(p, i) & HOG_BIND_CPU))
            cr_skip_test("the OS refuses to pin threads here");
        const hog_place *pl = hog_pool_worker_place(p, i);
        cr_assert_eq(a.cpu[i], (int)pl->pu_os, "worker %u runs on its PU", i);
        hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(h, (unsigned)a.cpu[i]);
        hwloc_obj_t numa = hwloc_get_obj_by_type(h, HWLOC_OBJ_NUMANODE, pl->node);
        cr_assert(hwloc_bitmap_isset(numa->cpuset, pu->os_index), "worker %u's CPU is on node %u", i, pl->node);
        char *m = hog_pool_alloc_local(p, i, 1 << 20);
        cr_assert_not_null(m);
        hwloc_nodeset_t where = hwloc_bitmap_alloc();
        if (hog_pool_local_kind(m) == HOG_LOCAL_NODE &&
            hwloc_get_area_memlocation(h, m, 1 << 20, where, HWLOC_MEMBIND_BYNODESET) == 0)
            cr_assert(hwloc_bitmap_isequal(where, numa->nodeset), "worker %u's memory is on node %u", i,
                      numa->os_index);
        hwloc_bitmap_free(where);
        hog_pool_free_local(p, m);
    }
    hwloc_topology_destroy(h);
    hog_pool_free(p);
}

/* HOG_POOL_BIND_AUTO pins the workers when they take every core the
 * process may use, and leaves fewer to the OS: runs side by side are not
 * all pinned to the first cores. */
Test(pool, auto_binding_pins_only_workers_that_take_every_core)
{
    hog_topo *t = topo("package:1 core:8 pu:1");
    const unsigned all = hog_topo_workers(t);
    hog_pool *p;
    cr_assert_eq(hog_pool_create_on(t, all, HOG_POOL_BIND_AUTO, &p, NULL, 0), 0);
    cr_assert_not_null(hog_pool_worker_place(p, 0), "%u workers of %u: placed", all, all);
    hog_pool_free(p);
    cr_assert_eq(hog_pool_create_on(t, 0, HOG_POOL_BIND_AUTO, &p, NULL, 0), 0);
    cr_assert_not_null(hog_pool_worker_place(p, 0), "one a core: placed");
    hog_pool_free(p);
    if (all > 1) {
        cr_assert_eq(hog_pool_create_on(t, all - 1, HOG_POOL_BIND_AUTO, &p, NULL, 0), 0);
        cr_assert_null(hog_pool_worker_place(p, 0), "%u workers of %u: left to the OS", all - 1, all);
        hog_pool_free(p);
    }
    /* 0 and 1 are as asked, whatever the count. */
    cr_assert_eq(hog_pool_create_on(t, 1, 1, &p, NULL, 0), 0);
    cr_assert_not_null(hog_pool_worker_place(p, 0));
    hog_pool_free(p);
    cr_assert_eq(hog_pool_bind_for(1, 1), 1);
    cr_assert_eq(hog_pool_bind_for(8, 0), 0);
    /* This machine: one worker a core is pinned, fewer are not. */
    const unsigned here = hog_pool_default_threads();
    cr_assert_eq(hog_pool_bind_for(0, HOG_POOL_BIND_AUTO), 1);
    cr_assert_eq(hog_pool_bind_for(here, HOG_POOL_BIND_AUTO), 1);
    cr_assert_eq(hog_pool_bind_for(1, HOG_POOL_BIND_AUTO), here <= 1);
    hog_topo_free(t);
}
