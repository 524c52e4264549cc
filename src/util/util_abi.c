/* util_abi.c: what the library and the program linking it must agree on: the CPU it runs on (hog_init) and the layout of the parameter structs. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

/* ===================================================================== *
 *  The CPU
 *
 *  The library is built for the Makefile's ARCH (x86-64-v2 by default), so
 *  the compiler may use SSSE3, SSE4.2 or POPCNT in any function. The check
 *  itself must run on any x86-64 CPU: its functions are compiled for the
 *  baseline whatever the flags, and call nothing of the library's but
 *  snprintf-like libc code. It asks for every instruction set the
 *  compiler was allowed (the predefined macros say which), so a build for
 *  -march=native checks AVX2 and the rest as well.
 * ===================================================================== */
#if defined(__x86_64__) && defined(__GNUC__)
#define BASELINE __attribute__((target("arch=x86-64")))
#else
#define BASELINE
#endif

static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;
static char cpu_missing[96]; /* "SSE4.2, POPCNT": the sets this CPU lacks; "" when none */

/* Unused in a build for the plain baseline (make ARCH=), which needs no
 * instruction set beyond what every x86-64 CPU has. */
BASELINE __attribute__((unused)) static void missing(const char *name)
{
    size_t used = strlen(cpu_missing);
    snprintf(cpu_missing + used, sizeof(cpu_missing) - used, "%s%s", used ? ", " : "", name);
}

/* __builtin_cpu_supports takes only a string literal, hence a macro. */
#define NEED(id, name)                                                                             \
    do {                                                                                           \
        if (!__builtin_cpu_supports(id))                                                           \
            missing(name);                                                                         \
    } while (0)

BASELINE static void cpu_scan(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
#ifdef __SSE3__
    NEED("sse3", "SSE3");
#endif
#ifdef __SSSE3__
    NEED("ssse3", "SSSE3");
#endif
#ifdef __SSE4_1__
    NEED("sse4.1", "SSE4.1");
#endif
#ifdef __SSE4_2__
    NEED("sse4.2", "SSE4.2");
#endif
#ifdef __POPCNT__
    NEED("popcnt", "POPCNT");
#endif
#ifdef __AVX__
    NEED("avx", "AVX");
#endif
#ifdef __AVX2__
    NEED("avx2", "AVX2");
#endif
#ifdef __FMA__
    NEED("fma", "FMA");
#endif
#ifdef __BMI__
    NEED("bmi", "BMI1");
#endif
#ifdef __BMI2__
    NEED("bmi2", "BMI2");
#endif
#ifdef __AVX512F__
    NEED("avx512f", "AVX-512F");
#endif
#endif
}

BASELINE int hog_cpu_check(char *err, size_t err_len)
{
    pthread_once(&cpu_once, cpu_scan);
    if (!cpu_missing[0])
        return 0;
    if (err && err_len)
        snprintf(err, err_len, "this CPU lacks %s, which this build of hogtrain uses: build it for this CPU "
                 "(make ARCH= builds for any x86-64)", cpu_missing);
    return HOG_ECPU;
}

BASELINE int hog_init(void)
{
    return hog_cpu_check(NULL, 0);
}

/* ===================================================================== *
 *  The parameter structs' layout
 *
 *  A program holds these by value, built against the header it was
 *  compiled with: their size and every field's offset are part of the
 *  ABI (see Compatibility in hogtrain.h). A new field takes its bytes
 *  from the front of `reserved`; anything that moves one of these fails
 *  here. The figures are those of 64-bit targets (LP64).
 * ===================================================================== */
#if defined(__LP64__)
#define AT(type, field, off)                                                                       \
    _Static_assert(offsetof(type, field) == (off), #type "." #field " stays at byte " #off)

_Static_assert(sizeof(hog_read_params) == 128, "hog_read_params stays 128 bytes");
AT(hog_read_params, format, 0);
AT(hog_read_params, delimiter, 4);
AT(hog_read_params, header, 8);
AT(hog_read_params, label_index, 16);
AT(hog_read_params, label_name, 24);
AT(hog_read_params, ignore, 32);
AT(hog_read_params, categorical, 40);
AT(hog_read_params, rows_per_block, 48);
AT(hog_read_params, hash_bits, 52);
AT(hog_read_params, index_base, 56);
AT(hog_read_params, on_error, 60);
AT(hog_read_params, threads, 64);
AT(hog_read_params, max_line, 72);
AT(hog_read_params, max_features, 80);
AT(hog_read_params, mem_limit, 88);
AT(hog_read_params, temp_dir, 96);
AT(hog_read_params, verify, 104);
AT(hog_read_params, padding, 108);
AT(hog_read_params, feature_names, 112);
AT(hog_read_params, fields, 116);
AT(hog_read_params, reserved, 120);

_Static_assert(sizeof(hog_train_params) == 256, "hog_train_params stays 256 bytes");
AT(hog_train_params, loss, 0);
AT(hog_train_params, threads, 4);
AT(hog_train_params, epochs, 8);
AT(hog_train_params, step, 16);
AT(hog_train_params, decay, 24);
AT(hog_train_params, power, 32);
AT(hog_train_params, schedule, 40);
AT(hog_train_params, l2, 48);
AT(hog_train_params, holdout, 56);
AT(hog_train_params, seed, 64);
AT(hog_train_params, bias, 72);
AT(hog_train_params, bind, 76);
AT(hog_train_params, mem_limit, 80);
AT(hog_train_params, progress, 88);
AT(hog_train_params, progress_ctx, 96);
AT(hog_train_params, kernel, 104);
AT(hog_train_params, batch, 108);
AT(hog_train_params, normalized, 112);
AT(hog_train_params, l1, 120);
AT(hog_train_params, early_stop, 128);
AT(hog_train_params, average, 132);
AT(hog_train_params, quantile, 136);
AT(hog_train_params, replicas, 144);
AT(hog_train_params, stream, 148);
AT(hog_train_params, fold, 152);
AT(hog_train_params, class_weight, 160);
AT(hog_train_params, train_metrics, 164);
AT(hog_train_params, factors, 168);
AT(hog_train_params, factor_init, 172);
AT(hog_train_params, field_aware, 176);
AT(hog_train_params, reserved32, 180);
AT(hog_train_params, l2_rows, 184);
AT(hog_train_params, interactions, 192);
AT(hog_train_params, cross_bits, 200);
AT(hog_train_params, l2_crossed, 204);
AT(hog_train_params, reserved, 208);

_Static_assert(sizeof(hog_mf_params) == 128, "hog_mf_params stays 128 bytes");
AT(hog_mf_params, rank, 0);
AT(hog_mf_params, threads, 4);
AT(hog_mf_params, epochs, 8);
AT(hog_mf_params, step, 16);
AT(hog_mf_params, decay, 24);
AT(hog_mf_params, l2, 32);
AT(hog_mf_params, l2_bias, 40);
AT(hog_mf_params, init, 48);
AT(hog_mf_params, holdout, 56);
AT(hog_mf_params, seed, 64);
AT(hog_mf_params, clamp, 72);
AT(hog_mf_params, bind, 76);
AT(hog_mf_params, progress, 80);
AT(hog_mf_params, progress_ctx, 88);
AT(hog_mf_params, link, 96);
AT(hog_mf_params, control, 104);
AT(hog_mf_params, schedule, 112);
AT(hog_mf_params, grid, 116);
AT(hog_mf_params, step_schedule, 120);
AT(hog_mf_params, early_stop, 124); /* the front of the reserved area in 0.2 */

_Static_assert(sizeof(hog_link_params) == 192, "hog_link_params stays 192 bytes");
AT(hog_link_params, rank, 0);
AT(hog_link_params, nodes, 4);
AT(hog_link_params, coordinator, 8);
AT(hog_link_params, secret, 16);
AT(hog_link_params, bind_host, 24);
AT(hog_link_params, run_id, 32);
AT(hog_link_params, rate, 40);
AT(hog_link_params, timeout, 48);
AT(hog_link_params, join_timeout, 56);
AT(hog_link_params, chunk, 64);
AT(hog_link_params, sync, 68);
AT(hog_link_params, sync_seconds, 72);
AT(hog_link_params, shards, 80);
AT(hog_link_params, drop, 88);
AT(hog_link_params, reserved, 96);

_Static_assert(sizeof(hog_predict_params) == 64, "hog_predict_params stays 64 bytes");
AT(hog_predict_params, threads, 0);
AT(hog_predict_params, format, 4);
AT(hog_predict_params, write, 8);
AT(hog_predict_params, write_ctx, 16);
AT(hog_predict_params, fd, 24);
AT(hog_predict_params, metrics, 28);
AT(hog_predict_params, what, 32);
AT(hog_predict_params, reserved32, 36);
AT(hog_predict_params, reserved, 40);

/* A matrix the program describes and passes in (as the params structs):
 * fields, field_count and reserved32 took the front 16 bytes of its
 * reserved area in 0.2. */
_Static_assert(sizeof(hog_csr) == 96, "hog_csr stays 96 bytes");
AT(hog_csr, rows, 0);
AT(hog_csr, cols, 8);
AT(hog_csr, indptr, 16);
AT(hog_csr, indptr_bytes, 24);
AT(hog_csr, rows_per_block, 28);
AT(hog_csr, indices, 32);
AT(hog_csr, values, 40);
AT(hog_csr, labels, 48);
AT(hog_csr, weights, 56);
AT(hog_csr, fields, 64);
AT(hog_csr, field_count, 72);
AT(hog_csr, reserved32, 76);
AT(hog_csr, reserved, 80);

/* A struct the library fills in: fixed within a major version. */
_Static_assert(sizeof(hog_weights) == 40, "hog_weights stays 40 bytes");
AT(hog_weights, features, 0);
AT(hog_weights, outputs, 8);
AT(hog_weights, classes, 12);
AT(hog_weights, w, 16);
AT(hog_weights, bias, 24);
AT(hog_weights, class_labels, 32);
#endif
