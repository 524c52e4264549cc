/* test_cli_topology.c: end-to-end tests of `hogtrain info --topology` on this machine and on synthetic and XML machines given by HOG_TOPOLOGY. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <hwloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_command.h"

static void setup(void)
{
    scratch_make("topo");
}

TestSuite(cli_topology, .init = setup, .fini = scratch_remove);

/* Runs "hogtrain ARGS" with HOG_TOPOLOGY set to topo (unset if NULL). */
static int hog_on(const char *topo, const char *args)
{
    char env[512];
    if (topo)
        snprintf(env, sizeof(env), "HOG_TOPOLOGY='%s'", topo);
    return hog_env(topo ? env : NULL, args);
}

/* The node column of worker rows ("  worker  node  core L# ..."), in order,
 * into nodes[]; returns the number of rows. */
static unsigned worker_nodes(unsigned *nodes, unsigned max)
{
    const char *table = strstr(out, "core L#");
    cr_assert_not_null(table, "no worker table in:\n%s", out);
    const char *line = strchr(table, '\n') + 1;
    unsigned n = 0;
    unsigned w, node, core, core_os, cpu;
    while (sscanf(line, "%u %u %u %u %u", &w, &node, &core, &core_os, &cpu) == 5) {
        cr_assert_eq(w, n, "rows in worker order");
        if (n < max)
            nodes[n] = node;
        n++;
        line = strchr(line, '\n') + 1;
    }
    return n;
}

Test(cli_topology, this_machine)
{
    hwloc_topology_t h;
    cr_assert_eq(hwloc_topology_init(&h), 0);
    cr_assert_eq(hwloc_topology_set_flags(h, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM |
                                                 HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_CPUBINDING |
                                                 HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_MEMBINDING),
                 0);
    cr_assert_eq(hwloc_topology_load(h), 0);
    int cores = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE);
    int numa = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE);
    hwloc_topology_destroy(h);
    cr_assert_eq(hog_on(NULL, "info --topology"), 0, "%s", out);
    cr_assert(strstr(out, "topology           this machine\n"), "%s", out);
    char want[128];
    snprintf(want, sizeof(want), "NUMA nodes         %d\ncores              %d\n", numa, cores);
    cr_assert(strstr(out, want), "want '%s' in:\n%s", want, out);
    snprintf(want, sizeof(want), "threads            %d (one per core, the default):", cores);
    cr_assert(strstr(out, want), "want '%s' in:\n%s", want, out);
    unsigned nodes[512];
    cr_assert_eq(worker_nodes(nodes, 512), (unsigned)cores);
    cr_assert(strstr(out, "binding            "), "%s", out);
    cr_assert(strstr(out, "node-local memory  "), "%s", out);
    cr_assert(strstr(out, "MemAvailable"), "%s", out);

    snprintf(want, sizeof(want), "--bind auto        pins them: %d worker%s take every core", cores,
             cores == 1 ? "" : "s");
    cr_assert(strstr(out, want), "want '%s' in:\n%s", want, out);

    cr_assert_eq(hog_on(NULL, "info --topology --threads 3"), 0, "%s", out);
    cr_assert_eq(worker_nodes(nodes, 512), 3u);
    if (cores > 1) { /* fewer workers than cores: auto leaves them to the OS */
        cr_assert_eq(hog_on(NULL, "info --topology --threads 1"), 0, "%s", out);
        cr_assert(strstr(out, "--bind auto        leaves them to the OS: 1 worker on "), "%s", out);
    }
}

/* A process confined to one CPU (taskset here; a scheduler's cpuset alike)
 * sees one core and places its worker on that CPU, not on CPU 0. */
Test(cli_topology, a_confined_process_uses_only_its_cpus)
{
    cpu_set_t allowed;
    cr_assert_eq(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
    if (CPU_COUNT(&allowed) < 2)
        cr_skip_test("needs 2 CPUs to confine the process to one of them (this process may use %d)",
                     CPU_COUNT(&allowed));
    int last = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed))
            last = c;
    char env[64];
    snprintf(env, sizeof(env), "env -u HOG_TOPOLOGY taskset -c %d", last);
    cr_assert_eq(hog_env(env, "info --topology"), 0, "%s", out);
    cr_assert(strstr(out, "cores              1\n"), "%s", out);
    const char *row = strstr(out, "CPU P#\n");
    cr_assert_not_null(row, "%s", out);
    unsigned w, node, core, core_os, cpu;
    cr_assert_eq(sscanf(row + 7, "%u %u %u %u %u", &w, &node, &core, &core_os, &cpu), 5, "%s", out);
    cr_assert_eq(cpu, (unsigned)last, "worker placed on CPU %u, the process may use only %d:\n%s", cpu, last, out);
}

Test(cli_topology, synthetic_two_sockets_spread_the_threads)
{
    const char *m = "package:2 numa:1 core:4 pu:2";
    cr_assert_eq(hog_on(m, "info --topology --threads 4"), 0, "%s", out);
    cr_assert(strstr(out, "topology           synthetic \"package:2 numa:1 core:4 pu:2\" (not this machine: nothing"),
              "%s", out);
    cr_assert(strstr(out, "NUMA nodes         2\ncores              8\nPUs                16 (hardware threads)\n"),
              "%s", out);
    cr_assert(strstr(out, "node 0 (P#0)       4 cores, 8 PUs"), "%s", out);
    cr_assert(strstr(out, "cores L#4-7, CPUs P#8-15\n"), "%s", out);
    cr_assert(strstr(out, "threads            4: 2 on node 0, 2 on node 1\n"), "%s", out);
    cr_assert(strstr(out, "binding            not attempted: the topology is not this machine's\n"), "%s", out);
    cr_assert_null(strstr(out, "--bind auto"), "nothing is pinned on a machine that is not this one:\n%s", out);
    unsigned nodes[16];
    cr_assert_eq(worker_nodes(nodes, 16), 4u);
    static const unsigned want[] = {0, 0, 1, 1};
    for (unsigned i = 0; i < 4; i++)
        cr_assert_eq(nodes[i], want[i], "worker %u on node %u", i, nodes[i]);

    /* The default is one per core; hyperthreads are used beyond it. */
    cr_assert_eq(hog_on(m, "info --topology"), 0, "%s", out);
    cr_assert_eq(worker_nodes(nodes, 16), 8u);
    cr_assert_null(strstr(out, "hyperthread"), "%s", out);
    cr_assert_eq(hog_on(m, "info --topology --threads 10"), 0, "%s", out);
    cr_assert(strstr(out, "       4      0        0        0      1  hyperthread: every core is taken\n"), "%s", out);
}

Test(cli_topology, many_threads_need_a_bigger_buffer)
{
    cr_assert_eq(hog_on("package:4 numa:1 core:8 pu:2", "info --topology --threads 1000"), 0, "%.2000s", out);
    unsigned nodes[1000];
    cr_assert_eq(worker_nodes(nodes, 1000), 1000u);
    cr_assert(strstr(out, "threads            1000: 250 on node 0, 250 on node 1, 250 on node 2, 250 on node 3\n"));
    cr_assert(strstr(out, "shared: more workers than CPUs"));
}

/* The issue's reports: `package:32 core:32 pu:16` ran for more than 20 s
 * with no output, and a 1,024-core description started 1,024 threads on
 * two CPUs. The description plans that machine; a run here is bounded. */
Test(cli_topology, a_large_synthetic_machine_is_described_fast_and_bounded_here, .timeout = 30)
{
    cr_assert_eq(hog_on("package:32 core:32 pu:16", "info --topology"), 0, "%.2000s", out);
    unsigned nodes[1024];
    cr_assert_eq(worker_nodes(nodes, 1024), 1024u, "the plan: one per core of that machine");
    cpu_set_t allowed;
    cr_assert_eq(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
    unsigned cpus = (unsigned)CPU_COUNT(&allowed);
    char want[160];
    snprintf(want, sizeof(want), "(not this machine: nothing is bound, and a run here starts at most %u workers", cpus);
    cr_assert(strstr(out, want), "%.2000s", out);

    write_file("t.svm", "1 1:1\n0 2:1\n1 1:1 3:1\n0 2:1 3:1\n");
    cr_assert_eq(hog_on("package:512 core:2 pu:1", "train t.svm -o m.hog --epochs 1 --report r.json -q"), 0, "%s",
                 out);
    snprintf(want, sizeof(want), "\"threads\": %u,", (cpus < 1024 ? cpus : 1024u));
    cr_assert(strstr(slurp("r.json"), want), "want %s in %s", want, slurp("r.json"));
    cr_assert_eq(hog_on("package:512 core:2 pu:1", "train t.svm -o m.hog --epochs 1 --threads 3 --report r.json -q"),
                 0, "%s", out);
    cr_assert(strstr(slurp("r.json"), "\"threads\": 3,"), "a number asked for is started: %s", slurp("r.json"));
}

Test(cli_topology, xml_machine_from_a_file)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/quad.xml", dir);
    hwloc_topology_t h;
    cr_assert_eq(hwloc_topology_init(&h), 0);
    cr_assert_eq(hwloc_topology_set_synthetic(h, "package:2 numa:2 core:3 pu:1"), 0);
    cr_assert_eq(hwloc_topology_load(h), 0);
    cr_assert_eq(hwloc_topology_export_xml(h, path, 0), 0);
    hwloc_topology_destroy(h);
    cr_assert_eq(hog_on(path, "info --topology --threads 6"), 0, "%s", out);
    char want[320];
    snprintf(want, sizeof(want), "topology           XML file %s (not this machine", path);
    cr_assert(strstr(out, want), "%s", out);
    cr_assert(strstr(out, "NUMA nodes         4\ncores              12\n"), "%s", out);
    cr_assert(strstr(out, "threads            6: 2 on node 0, 2 on node 1, 1 on node 2, 1 on node 3\n"), "%s", out);
}

Test(cli_topology, errors_name_the_cause)
{
    cr_assert_eq(hog_on("bogus:3", "info --topology"), 1);
    cr_assert(strstr(out, "hogtrain: HOG_TOPOLOGY: topology \"bogus:3\": not an hwloc synthetic description"), "%s",
              out);
    cr_assert_eq(hog_on("/nonexistent/m.xml", "info --topology"), 1);
    cr_assert(strstr(out, "hogtrain: HOG_TOPOLOGY: topology /nonexistent/m.xml: No such file or directory"), "%s",
              out);
    cr_assert_eq(hog_on(NULL, "info --topology --threads many"), 2);
    cr_assert(strstr(out, "--threads: expected a whole number from 0 to 65536, found 'many'"), "%s", out);
    cr_assert_eq(hog_on(NULL, "info --threads 2"), 2);
    cr_assert(strstr(out, "--threads 2: only with --topology"), "%s", out);
    cr_assert_eq(hog_on(NULL, "info --topology data.hgd"), 2);
    cr_assert(strstr(out, "info --topology takes no FILE (found 'data.hgd')"), "%s", out);
}

/* --bind auto, the default: a run whose workers take every core this
 * process may use is pinned; one of fewer is left to the OS, so that two
 * such runs side by side are not pinned to the same first core. The model
 * keeps what it came to; 0 and 1 are as given, anything else is refused. */
Test(cli_topology, binding_is_auto_and_the_model_keeps_what_it_came_to)
{
    hwloc_topology_t h;
    cr_assert_eq(hwloc_topology_init(&h), 0);
    cr_assert_eq(hwloc_topology_set_flags(h, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM |
                                                 HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_CPUBINDING),
                 0);
    cr_assert_eq(hwloc_topology_load(h), 0);
    const int cores = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE);
    hwloc_topology_destroy(h);
    char rows[4096] = "";
    for (int i = 0; i < 60; i++)
        strcat(rows, i % 2 ? "1 1:1 2:0.5\n" : "0 1:-1 3:0.5\n");
    write_file("t.svm", rows);
    const struct { const char *flags; int bind; } runs[] = {
        {"--threads 1", cores > 1 ? 0 : 1},
        {"", 1}, /* one thread a core */
        {"--threads 1 --bind auto", cores > 1 ? 0 : 1},
        {"--threads 1 --bind 1", 1},
        {"--bind 0", 0},
    };
    for (unsigned i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        cr_assert_eq(hog("train t.svm -o m.hog --epochs 2 --holdout 0 -q %s", runs[i].flags), 0, "%s", out);
        /* the model's metadata: text lines after a binary header */
        char path[256], m[65536], want[16];
        snprintf(path, sizeof(path), "%s/m.hog", dir);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f);
        const size_t n = fread(m, 1, sizeof(m), f);
        fclose(f);
        snprintf(want, sizeof(want), "\nbind %d\n", runs[i].bind);
        cr_assert(memmem(m, n, want, strlen(want)), "%s on %d cores: want '%.6s' in the model", runs[i].flags,
                  cores, want + 1);
    }
    cr_assert_eq(hog("train t.svm -o m2.hog --bind 2"), 2);
    cr_assert(strstr(out, "--bind: expected 0, 1 or auto, found '2'"), "%s", out);
    cr_assert(!exists("m2.hog"));
}
