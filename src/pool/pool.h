/* pool.h: the private interface of the worker pool: threads made once, pinned to cores with hwloc, reused for every parallel step. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_POOL_H
#define HOG_POOL_H

#include "../util/util.h"

/* ===================================================================== *
 *  Topology (pool_topology.c)
 *
 *  What hwloc sees, reduced to what placement needs: NUMA nodes, their
 *  cores, the cores' hardware threads (PUs). It comes from this machine, or
 *  from a description of another one (tests, and users planning a bigger
 *  machine), a spec the program gives (hog_topology_set; the command takes
 *  it from HOG_TOPOLOGY):
 *    - NULL or empty: this machine, restricted to the CPUs this process may
 *      use;
 *    - FILE.xml (a name ending in ".xml"): an XML topology as `lstopo
 *      FILE.xml` writes it;
 *    - anything else: an hwloc synthetic description, such as
 *      "package:2 numa:1 core:4 pu:2" (two sockets, one NUMA node each, four
 *      cores of two hardware threads per socket).
 *  Threads are only bound on a topology loaded from this machine, and a
 *  pool of the default size on another starts no more workers than this
 *  process has CPUs (hog_topo_workers).
 *
 *  Memory: hwloc's per-node memory figures are wrong on machines that
 *  initialise pages lazily, so every node is given MemAvailable divided by
 *  the number of nodes: an approximation, exact on one node, and near the
 *  truth on the symmetric multi-socket machines this is meant for.
 *
 *  A loaded topology is immutable and may be shared by any number of threads.
 * ===================================================================== */
typedef struct hog_topo hog_topo;

typedef struct hog_topo_node {
    unsigned os_index;        /* the OS's number of the node (numactl's, /sys's) */
    unsigned cores;           /* its cores (in this process's CPU set) */
    unsigned pus;             /* their hardware threads */
    uint64_t mem_bytes;       /* MemAvailable / nodes (see above) */
    const unsigned *core_ids; /* its cores, indices into hog_topo_core, in hwloc's logical order */
} hog_topo_node;

typedef struct hog_topo_core {
    unsigned logical;      /* hwloc's logical index (L#): unique, in topology order */
    unsigned os_index;     /* the OS's core id (P#; may repeat across sockets) */
    unsigned node;         /* the index of its NUMA node in this topology */
    unsigned pus;          /* hardware threads: 1, or 2 and more with SMT */
    const unsigned *pu_os; /* their OS numbers, the CPU numbers of taskset and /proc */
} hog_topo_core;

/* Loads a topology: spec NULL or "" is this machine; a name ending in ".xml"
 * an XML file; anything else a synthetic description. Returns 0, -ENOMEM,
 * -errno (an XML file that cannot be read), or HOG_ETOPOLOGY (hwloc refused
 * the description or failed; err says which and why). Free with hog_topo_free. */
int hog_topo_load(const char *spec, hog_topo **out, char *err, size_t err_len);

/* The process-wide topology: the one hog_topology_set loaded, or this
 * machine's, loaded on first use; kept for the life of the process (never
 * freed). Thread-safe. Returns 0 or the error of hog_topo_load, its
 * message in err. */
int hog_topo_default(const hog_topo **out, char *err, size_t err_len);

/* The workers a pool of the default size starts on t: one per core; on a
 * topology that is not this machine's, at most hog_cpus(), so that the
 * description of a large machine never starts more threads than this
 * process has CPUs (a caller that wants more asks for a number). */
unsigned hog_topo_workers(const hog_topo *t);

/* Releases a topology from hog_topo_load. NULL is accepted. */
void hog_topo_free(hog_topo *t);

unsigned hog_topo_nodes(const hog_topo *t);
unsigned hog_topo_cores(const hog_topo *t);
unsigned hog_topo_pus(const hog_topo *t);
const hog_topo_node *hog_topo_node_at(const hog_topo *t, unsigned node);
const hog_topo_core *hog_topo_core_at(const hog_topo *t, unsigned core);
/* MemAvailable when the topology was loaded, in bytes. */
uint64_t hog_topo_mem_available(const hog_topo *t);
/* 1 if loaded from this machine (threads and memory can be bound), 0 if not. */
int hog_topo_is_machine(const hog_topo *t);
/* Where it came from, for messages: "this machine", "synthetic \"...\"",
 * "XML file ...". */
const char *hog_topo_source(const hog_topo *t);

/* ---- placement ---- */

/* Where one worker goes. */
typedef struct hog_place {
    unsigned core;   /* index into hog_topo_core */
    unsigned node;   /* index of the NUMA node */
    unsigned pu;     /* which hardware thread of the core: 0, or 1 and up for hyperthreads */
    unsigned pu_os;  /* the OS number of that PU */
    unsigned shared; /* 1: more workers than PUs, this PU also runs an earlier worker */
} hog_place;

/* Computes where nth workers go on t, without starting any thread, into
 * out[0..nth). The policy:
 *   1. the workers are shared out over the NUMA nodes as evenly as their
 *      cores allow (round-robin over the nodes, one worker at a time, a node
 *      taking none once its cores are used), one worker per core;
 *   2. only when every core has a worker do hardware threads (PUs beyond
 *      the first of a core) take more, shared out over the nodes the same way;
 *   3. beyond the PUs, workers wrap around onto PUs already used (shared).
 * Worker ids are given in blocks: node 0's workers first, then node 1's, and
 * within a node in hwloc's logical core order. Blocks rather than an
 * interleaving, because each node's workers then form one range of ith (what
 * per-node replicas and per-node work splits want), and on one node worker i
 * is on core i, as before. Example: 2 nodes of 4 cores, 4 workers: workers 0,
 * 1 on cores 0, 1 of node 0, workers 2, 3 on cores 4, 5 of node 1.
 * Returns 0, or -EINVAL when nth is 0. */
int hog_topo_place(const hog_topo *t, unsigned nth, hog_place *out);

/* ---- binding and node memory (used by the pool) ---- */

#define HOG_BIND_CPU 1 /* the thread runs only on its PU */
#define HOG_BIND_MEM 2 /* the thread's memory policy binds its allocations to its node */

/* Pins the calling thread to pl's PU and binds its memory policy to pl's
 * node. Returns the HOG_BIND_* flags of what worked (0 on a topology that is
 * not this machine); failures are logged (a refused CPU binding as a
 * warning, a refused memory policy at debug level), never fatal. */
int hog_topo_bind_thread(const hog_topo *t, const hog_place *pl, unsigned ith);

/* Allocates bytes bound to the node (hwloc_alloc_membind, strict), page
 * aligned and zero-filled; free with hog_topo_free_node. NULL with errno set
 * when the OS refuses to bind (ENOSYS, EXDEV, EPERM) or t is not this machine. */
void *hog_topo_alloc_node(const hog_topo *t, unsigned node, size_t bytes);
void hog_topo_free_node(const hog_topo *t, void *p, size_t bytes);

/* ===================================================================== *
 *  Worker pool (pool_threads.c)
 * ===================================================================== */
typedef struct hog_pool hog_pool;

/* The work of one parallel step: called once on every worker with its index
 * ith in [0, nth). */
typedef void (*hog_pool_fn)(void *arg, unsigned ith, unsigned nth);

/* The workers of a pool of the default size on the process-wide topology
 * (hog_topo_workers of hog_topo_default), at least 1; 1 when it cannot be
 * loaded. */
unsigned hog_pool_default_threads(void);

/* hog_pool_create's bind: pin when the workers take every core the
 * process may run on (hog_topo_workers of the process-wide topology: a
 * taskset or cgroup narrows it), else leave them to the OS. A run that
 * owns its cores loses nothing to its pins; one of fewer workers is not
 * pinned to the first cores, where every other such run on the machine
 * would be pinned too (two one-thread runs at once shared one core, each
 * at half its speed). */
#define HOG_POOL_BIND_AUTO 2

/* What bind (0, 1 or HOG_POOL_BIND_AUTO) comes to for a pool of nthreads
 * workers (0: hog_topo_workers): 0 or 1; HOG_POOL_BIND_AUTO is 0 where the
 * topology cannot be loaded. */
int hog_pool_bind_for(unsigned nthreads, int bind);

/* Starts nthreads workers (0: hog_topo_workers) on the process-wide topology.
 * bind is 0, 1 or HOG_POOL_BIND_AUTO (see hog_pool_bind_for).
 * With bind set, workers are placed as hog_topo_place says, each pinned to
 * its PU with its memory policy bound to its node (only on this machine's
 * topology; binding the OS refuses is logged, not an error), and binding is
 * done before this returns. Without bind the OS places them.
 * Returns 0, -ENOMEM, -errno from pthread_create, or HOG_ETOPOLOGY (hwloc
 * failed to load the topology, needed to bind or to count cores; err names
 * the cause). */
int hog_pool_create(unsigned nthreads, int bind, hog_pool **out, char *err, size_t err_len);

/* The same on topology t, which must outlive the pool (tests use synthetic
 * topologies here: the placement is recorded, no thread is bound). */
int hog_pool_create_on(const hog_topo *t, unsigned nthreads, int bind, hog_pool **out, char *err,
                       size_t err_len);

/* Stops and joins the workers. NULL is accepted. Memory from
 * hog_pool_alloc_local must be freed before. */
void hog_pool_free(hog_pool *p);

unsigned hog_pool_threads(const hog_pool *p);

/* Runs fn(arg, ith, nth) on every worker and returns when all have returned.
 * Called from one thread at a time (not from a worker). */
void hog_pool_run(hog_pool *p, hog_pool_fn fn, void *arg);

/* Worker ith's NUMA node (an index into the topology's nodes), or -1 when
 * the pool was made without bind (the OS places the thread). */
int hog_pool_worker_node(const hog_pool *p, unsigned ith);

/* Worker ith's placement, or NULL when the pool was made without bind. */
const hog_place *hog_pool_worker_place(const hog_pool *p, unsigned ith);

/* The HOG_BIND_* flags of what binding worked for worker ith. */
int hog_pool_worker_bound(const hog_pool *p, unsigned ith);

/* How hog_pool_alloc_local got a block of memory. */
typedef enum hog_local_kind {
    HOG_LOCAL_NODE = 1,    /* bound to the worker's node by hwloc_alloc_membind */
    HOG_LOCAL_TOUCH = 2,   /* fresh pages first touched by the (pinned) worker itself */
    HOG_LOCAL_PLAIN = 3,   /* an ordinary aligned allocation: no placement known or possible */
} hog_local_kind;

/* Allocates bytes of zero-filled, cache-line-aligned memory for worker
 * ith's private state (example blocks, gradients, scratch), on the worker's
 * NUMA node: bound there by hwloc when the OS allows; else, if the worker is
 * pinned, fresh pages that the worker touches first (the kernel then puts
 * them on its node); else a plain aligned allocation. Which of the three
 * happened is logged at debug level and returned by hog_pool_local_kind.
 * Each call maps whole pages: meant for a few long-lived per-worker buffers,
 * not for per-example allocations. Called from the thread that runs steps
 * (the touch runs as a step), not from a worker. NULL on -ENOMEM. */
void *hog_pool_alloc_local(hog_pool *p, unsigned ith, size_t bytes);

/* Releases memory from hog_pool_alloc_local (NULL accepted), from any
 * thread, before the pool is freed. */
void hog_pool_free_local(hog_pool *p, void *mem);

/* How mem (from hog_pool_alloc_local) was allocated. */
hog_local_kind hog_pool_local_kind(const void *mem);

/* ===================================================================== *
 *  The shared pool (pool_shared.c)
 * ===================================================================== */
/* Lends the process-wide pool, made on first use and kept for the life of
 * the process, to one call: nthreads workers (0: one per core), bound as
 * hog_pool_create's bind says (a bound pool also serves bind 0). When the
 * kept pool has another shape it is replaced by one of this shape. While it
 * is lent, another borrower gets a pool made for its call alone, so
 * borrowers never wait for each other (see pool_shared.c). Give it back
 * with hog_pool_return. Thread-safe. Returns what hog_pool_create returns. */
int hog_pool_borrow(unsigned nthreads, int bind, hog_pool **out, char *err, size_t err_len);

/* Gives back a pool from hog_pool_borrow: the shared pool waits for the
 * next borrower, a pool made for one call is freed. Memory from
 * hog_pool_alloc_local must be freed before. NULL is accepted. */
void hog_pool_return(hog_pool *p);

/* How many pools this process has started (hog_pool_create,
 * hog_pool_create_on, the shared pool included; counted in
 * pool_threads.c): for tests of reuse. Thread-safe. */
unsigned long hog_pool_created(void);

#endif /* HOG_POOL_H */
