/* test_net_launch.c: a run's parameters from hand-made launcher environments (Open MPI, MPICH/Hydra, Slurm), their checks, and Slurm's node lists. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"

static char err[512];

/* detect over env, with err cleared first. */
static int detect(hog_link_params *p, char *const *env)
{
    err[0] = '\0';
    return hog_launch_detect(p, env, err, sizeof(err));
}

/* ---- the defaults and the checks ---- */

Test(net_launch, defaults_are_the_documented_ones)
{
    hog_link_params p = hog_link_params_default();
    cr_assert_eq(p.rank, -1);
    cr_assert_eq(p.nodes, 0);
    cr_assert_null(p.coordinator);
    cr_assert_null(p.secret);
    cr_assert_null(p.bind_host);
    cr_assert_null(p.run_id);
    cr_assert_eq(p.rate, 64 * 1048576.0);
    cr_assert_eq(p.timeout, 10);
    cr_assert_eq(p.join_timeout, 120);
    cr_assert_eq(p.chunk, 1024u);
    cr_assert_eq(p.sync, HOG_SYNC_ASYNC);
    cr_assert_eq(p.sync_seconds, 0);
    cr_assert_eq(p.shards, 0);
    cr_assert_eq(p.drop, 0);
    for (size_t i = 0; i < sizeof(p.reserved); i++)
        cr_assert_eq(p.reserved[i], 0);
    /* Unknown rank and size are not a run yet. */
    const char *field = NULL;
    cr_assert_eq(hog_link_params_check(&p, &field), HOG_EPARAM);
    cr_assert_str_eq(field, "rank");
}

/* A valid run of 4, changed by one field at a time. */
static hog_link_params four(void)
{
    hog_link_params p = hog_link_params_default();
    p.rank = 3;
    p.nodes = 4;
    p.coordinator = "node01:29517";
    p.secret = "/shared/key";
    return p;
}

static void expect_bad(const hog_link_params *p, const char *want, const char *what)
{
    const char *field = "unset";
    cr_assert_eq(hog_link_params_check(p, &field), HOG_EPARAM, "%s", what);
    cr_assert_str_eq(field, want, "%s", what);
    cr_assert_eq(hog_link_params_check(p, NULL), HOG_EPARAM, "%s", what);
}

Test(net_launch, check_accepts_good_runs)
{
    const char *field = "unset";
    hog_link_params p = four();
    cr_assert_eq(hog_link_params_check(&p, &field), 0);
    cr_assert_null(field);
    const char *coordinators[] = {"10.0.0.1:1", "*:65535", "[::1]:5555", "[fe80::1%eth0]:29517", "a-b.example.org:80"};
    for (size_t i = 0; i < sizeof(coordinators) / sizeof(coordinators[0]); i++) {
        p.coordinator = coordinators[i];
        cr_assert_eq(hog_link_params_check(&p, &field), 0, "%s", coordinators[i]);
    }
    /* One node needs neither a coordinator nor a secret. */
    hog_link_params one = hog_link_params_default();
    one.rank = 0;
    one.nodes = 1;
    cr_assert_eq(hog_link_params_check(&one, &field), 0);
    p = four();
    p.nodes = 4096;
    p.rank = 4095;
    p.chunk = 16;
    p.drop = 1;
    p.shards = 1;
    p.sync = HOG_SYNC_AVERAGE;
    p.sync_seconds = 2.5;
    p.bind_host = "[::1]";
    cr_assert_eq(hog_link_params_check(&p, &field), 0);
    p.chunk = 65536;
    p.bind_host = "192.168.1.7";
    cr_assert_eq(hog_link_params_check(&p, &field), 0);
}

Test(net_launch, check_names_the_first_bad_field)
{
    hog_link_params p = four();
    p.rank = -1;
    expect_bad(&p, "rank", "rank unknown");
    p = four();
    p.rank = 4;
    expect_bad(&p, "rank", "rank past nodes");
    p = four();
    p.nodes = 0;
    expect_bad(&p, "nodes", "no nodes");
    p = four();
    p.nodes = 4097;
    expect_bad(&p, "nodes", "too many nodes");
    p = four();
    p.coordinator = NULL;
    expect_bad(&p, "coordinator", "no coordinator");
    const char *coordinators[] = {"", "node01", "node01:", ":5555", "node01:0", "node01:65536", "node01:+80",
                                  "node01:80x", "node01: 80", "::1:5555", "[::1]5555", "[]:5555", "[::1:5555",
                                  "tcp://node01:5555", "no de:80"};
    for (size_t i = 0; i < sizeof(coordinators) / sizeof(coordinators[0]); i++) {
        p.coordinator = coordinators[i];
        expect_bad(&p, "coordinator", coordinators[i]);
    }
    p = four();
    p.secret = NULL;
    expect_bad(&p, "secret", "no secret");
    p.secret = "";
    expect_bad(&p, "secret", "empty secret");
    p = four();
    p.bind_host = "";
    expect_bad(&p, "bind_host", "empty bind host");
    p.bind_host = "a b";
    expect_bad(&p, "bind_host", "blank in the bind host");
    p = four();
    p.rate = 0;
    expect_bad(&p, "rate", "no rate");
    p.rate = INFINITY;
    expect_bad(&p, "rate", "infinite rate");
    p.rate = NAN;
    expect_bad(&p, "rate", "NaN rate");
    p = four();
    p.timeout = -1;
    expect_bad(&p, "timeout", "negative timeout");
    p = four();
    p.join_timeout = 0;
    expect_bad(&p, "join_timeout", "no join timeout");
    p = four();
    p.chunk = 15;
    expect_bad(&p, "chunk", "small chunk");
    p.chunk = 65537;
    expect_bad(&p, "chunk", "large chunk");
    p = four();
    p.sync = (hog_sync)2;
    expect_bad(&p, "sync", "unknown sync");
    p = four();
    p.sync_seconds = -0.5;
    expect_bad(&p, "sync_seconds", "negative sync seconds");
    p.sync_seconds = NAN;
    expect_bad(&p, "sync_seconds", "NaN sync seconds");
    p = four();
    p.shards = 2;
    expect_bad(&p, "shards", "shards 2");
    p = four();
    p.drop = 1.5;
    expect_bad(&p, "drop", "drop above 1");
    p.drop = NAN;
    expect_bad(&p, "drop", "NaN drop");
    p = four();
    p.reserved[95] = 1;
    expect_bad(&p, "reserved", "reserved byte");
    /* With one node, a coordinator given is still checked. */
    hog_link_params one = hog_link_params_default();
    one.rank = 0;
    one.nodes = 1;
    one.coordinator = "node01";
    expect_bad(&one, "coordinator", "one node, bad coordinator");
}

/* ---- the launchers ---- */

Test(net_launch, open_mpi)
{
    char *env[] = {"HOME=/root", "OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=4",
                   "OMPI_MCA_ess_base_jobid=3735683073", "HOGTRAIN_COORDINATOR=head:5555", NULL};
    hog_link_params p = hog_link_params_default();
    cr_assert_eq(detect(&p, env), 1, "%s", err);
    cr_assert_eq(p.rank, 2);
    cr_assert_eq(p.nodes, 4);
    cr_assert_str_eq(p.coordinator, "head:5555");
    cr_assert_str_eq(p.run_id, "ompi-3735683073");
    p.secret = "/k";
    cr_assert_eq(hog_link_params_check(&p, NULL), 0);
}

Test(net_launch, mpich_hydra)
{
    char *env[] = {"PMI_RANK=0", "PMI_SIZE=2", "HOGTRAIN_COORDINATOR=[::1]:29517", NULL};
    hog_link_params p = hog_link_params_default();
    cr_assert_eq(detect(&p, env), 1, "%s", err);
    cr_assert_eq(p.rank, 0);
    cr_assert_eq(p.nodes, 2);
    cr_assert_str_eq(p.coordinator, "[::1]:29517");
    cr_assert_null(p.run_id);
}

Test(net_launch, slurm_coordinator_from_the_node_list)
{
    char *env[] = {"SLURM_PROCID=5", "SLURM_NTASKS=8", "SLURM_JOB_ID=4242", "SLURM_STEP_ID=3",
                   "SLURM_JOB_NODELIST=login[1-2]", "SLURM_STEP_NODELIST=a-b[003-005],c7", NULL};
    hog_link_params p = hog_link_params_default();
    cr_assert_eq(detect(&p, env), 1, "%s", err);
    cr_assert_eq(p.rank, 5);
    cr_assert_eq(p.nodes, 8);
    cr_assert_str_eq(p.coordinator, "a-b003:29517");
    cr_assert_str_eq(p.run_id, "slurm-4242.3");

    /* The job's list when the step has none; HOGTRAIN_PORT moves the port;
     * no step id, the job's alone. */
    char *job[] = {"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_JOB_ID=4242", "HOGTRAIN_PORT=6000",
                   "SLURM_JOB_NODELIST=node[07-09,12]", NULL};
    p = hog_link_params_default();
    cr_assert_eq(detect(&p, job), 1, "%s", err);
    cr_assert_str_eq(p.coordinator, "node07:6000");
    cr_assert_str_eq(p.run_id, "slurm-4242");
}

Test(net_launch, the_first_launcher_wins_and_hogtrain_variables_come_first)
{
    /* mpirun inside a Slurm allocation: Open MPI's rank, Open MPI's job. */
    char *env[] = {"SLURM_PROCID=0", "SLURM_NTASKS=1", "SLURM_JOB_ID=77", "SLURM_JOB_NODELIST=gpu[1-2],cpu5",
                   "OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=3", "OMPI_MCA_ess_base_jobid=9", NULL};
    hog_link_params p = hog_link_params_default();
    cr_assert_eq(detect(&p, env), 1, "%s", err);
    cr_assert_eq(p.rank, 1);
    cr_assert_eq(p.nodes, 3);
    cr_assert_str_eq(p.coordinator, "gpu1:29517");
    cr_assert_str_eq(p.run_id, "ompi-9");

    char *ours[] = {"SLURM_PROCID=1", "SLURM_NTASKS=2", "SLURM_JOB_ID=77", "SLURM_JOB_NODELIST=n[1-2]",
                    "HOGTRAIN_COORDINATOR=10.1.2.3:7000", "HOGTRAIN_RUN_ID=nightly", NULL};
    p = hog_link_params_default();
    cr_assert_eq(detect(&p, ours), 1, "%s", err);
    cr_assert_str_eq(p.coordinator, "10.1.2.3:7000");
    cr_assert_str_eq(p.run_id, "nightly");
}

Test(net_launch, fields_already_set_are_kept)
{
    char *env[] = {"OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=4", "OMPI_MCA_ess_base_jobid=1",
                   "HOGTRAIN_COORDINATOR=head:5555", NULL};
    hog_link_params p = hog_link_params_default();
    p.rank = 0;
    p.coordinator = "mine:1";
    p.run_id = "mine";
    cr_assert_eq(detect(&p, env), 1, "%s", err);
    cr_assert_eq(p.rank, 0);
    cr_assert_eq(p.nodes, 4);
    cr_assert_str_eq(p.coordinator, "mine:1");
    cr_assert_str_eq(p.run_id, "mine");
    p = hog_link_params_default();
    p.nodes = 2;
    cr_assert_eq(detect(&p, env), 1, "%s", err);
    cr_assert_eq(p.rank, 2);
    cr_assert_eq(p.nodes, 2);
}

Test(net_launch, no_launcher)
{
    char *env[] = {"HOME=/root", "PATH=/bin", "PMI_RANKS=1", "SLURM_PROCID=", NULL};
    hog_link_params p = hog_link_params_default();
    cr_assert_eq(detect(&p, env), 0, "%s", err);
    cr_assert_eq(p.rank, -1);
    cr_assert_eq(p.nodes, 0);
    cr_assert_null(p.coordinator);
    cr_assert_null(p.run_id);
    char *empty[] = {NULL};
    cr_assert_eq(detect(&p, empty), 0);
    cr_assert_eq(detect(&p, NULL), 0);
    /* Without a launcher, the coordinator is still read. */
    char *coordinator[] = {"HOGTRAIN_COORDINATOR=head:5555", NULL};
    cr_assert_eq(detect(&p, coordinator), 0, "%s", err);
    cr_assert_str_eq(p.coordinator, "head:5555");
}

Test(net_launch, bad_values_are_refused_naming_the_variable)
{
    const struct {
        char *env[5];
        const char *want;
    } cases[] = {
        {{"OMPI_COMM_WORLD_RANK=abc", "OMPI_COMM_WORLD_SIZE=4"}, "OMPI_COMM_WORLD_RANK=abc: expected a rank 0..3"},
        {{"OMPI_COMM_WORLD_RANK=4", "OMPI_COMM_WORLD_SIZE=4"}, "OMPI_COMM_WORLD_RANK=4: expected a rank 0..3"},
        {{"OMPI_COMM_WORLD_RANK=-1", "OMPI_COMM_WORLD_SIZE=4"}, "OMPI_COMM_WORLD_RANK=-1: expected a rank 0..3"},
        {{"OMPI_COMM_WORLD_RANK=+1", "OMPI_COMM_WORLD_SIZE=4"}, "OMPI_COMM_WORLD_RANK=+1: expected a rank 0..3"},
        {{"OMPI_COMM_WORLD_RANK=1 ", "OMPI_COMM_WORLD_SIZE=4"}, "OMPI_COMM_WORLD_RANK=1 : expected a rank 0..3"},
        {{"PMI_RANK=1", "PMI_SIZE=1"}, "PMI_RANK=1: expected a rank 0..0"},
        {{"PMI_RANK=0", "PMI_SIZE=0"}, "PMI_SIZE=0: expected a number of ranks 1..4096"},
        {{"PMI_RANK=0", "PMI_SIZE=4097"}, "PMI_SIZE=4097: expected a number of ranks 1..4096"},
        {{"PMI_RANK=0", "PMI_SIZE=99999999999999999999999"}, "PMI_SIZE=99999999999999999999999: expected a number"},
        {{"SLURM_PROCID=0"}, "SLURM_PROCID=0 but SLURM_NTASKS is not set"},
        {{"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_JOB_NODELIST=node["}, "SLURM_JOB_NODELIST=node[: expected a Slurm node list"},
        {{"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_STEP_NODELIST=[1-2]"}, "SLURM_STEP_NODELIST=[1-2]: expected a Slurm node list"},
        {{"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_JOB_NODELIST=n1", "HOGTRAIN_PORT=70000"}, "HOGTRAIN_PORT=70000: expected a port 1..65535"},
        {{"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_JOB_NODELIST=n1", "HOGTRAIN_PORT=0"}, "HOGTRAIN_PORT=0: expected a port 1..65535"},
        {{"HOGTRAIN_COORDINATOR=head"}, "HOGTRAIN_COORDINATOR=head: expected HOST:PORT"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        hog_link_params p = hog_link_params_default(), before = p;
        cr_assert_eq(detect(&p, cases[i].env), HOG_EPARAM, "%s", cases[i].want);
        cr_assert(strstr(err, cases[i].want) == err, "wanted \"%s\", got \"%s\"", cases[i].want, err);
        cr_assert_eq(memcmp(&p, &before, sizeof(p)), 0, "%s: the params changed on an error", cases[i].want);
    }
}

/* The public call reads this process's environment (each test runs in a
 * process of its own). */
Test(net_launch, from_env_reads_the_process_environment)
{
    cr_assert_eq(clearenv(), 0);
    hog_link_params p = hog_link_params_default();
    cr_assert_eq(hog_link_params_from_env(&p, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(setenv("PMI_RANK", "1", 1), 0);
    cr_assert_eq(setenv("PMI_SIZE", "3", 1), 0);
    cr_assert_eq(hog_link_params_from_env(&p, err, sizeof(err)), 1, "%s", err);
    cr_assert_eq(p.rank, 1);
    cr_assert_eq(p.nodes, 3);
    cr_assert_eq(setenv("PMI_SIZE", "x", 1), 0);
    p = hog_link_params_default();
    cr_assert_eq(hog_link_params_from_env(&p, err, sizeof(err)), HOG_EPARAM);
    cr_assert_str_eq(err, "PMI_SIZE=x: expected a number of ranks 1..4096");
}

/* ---- Slurm's node lists ---- */

Test(net_launch, slurm_first_host)
{
    const struct {
        const char *list, *first;
    } good[] = {
        {"node01", "node01"},
        {"node[07-09,12]", "node07"},
        {"node[12,07-09]", "node12"},
        {"gpu[1-2],cpu5", "gpu1"},
        {"a-b[003-005]", "a-b003"},
        {"cpu5,gpu[1-2]", "cpu5"},
        {"rack[1-2]n[03-04]", "rack1n03"},
        {"n[1-2]-ib", "n1-ib"},
        {"host.example.org", "host.example.org"},
    };
    char buf[64];
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        cr_assert_eq(hog_slurm_first_host(good[i].list, buf, sizeof(buf)), 0, "%s", good[i].list);
        cr_assert_str_eq(buf, good[i].first, "%s", good[i].list);
    }
    const char *bad[] = {"", "node[", "node[3-", "node[3-]", "[1-2]", "node[]", "node[a]", "node[1-2", "node]",
                         "node[1,]", ",node1", "node1,", "node1,,node2", "node1,gpu[", "node 1", "node:1",
                         "node[[1]]"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(hog_slurm_first_host(bad[i], buf, sizeof(buf)), HOG_EFORMAT, "%s", bad[i]);
    /* The first host and its NUL must fit. */
    cr_assert_eq(hog_slurm_first_host("node[07-09]", buf, 7), 0);
    cr_assert_str_eq(buf, "node07");
    cr_assert_eq(hog_slurm_first_host("node[07-09]", buf, 6), HOG_EFORMAT);
    cr_assert_eq(hog_slurm_first_host("node1", buf, 0), HOG_EFORMAT);
}
