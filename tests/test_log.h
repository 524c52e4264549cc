/* test_log.h: the library's log kept in a buffer (from any thread), for tests that check what a run said. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TEST_LOG_H
#define HOG_TEST_LOG_H

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <hogtrain.h>

static char logged[4096];
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/* A hog_log_fn: appends each message and a newline to logged (what does
 * not fit is dropped). */
static inline void log_keep(void *ctx, hog_log_level level, const char *msg)
{
    (void)ctx;
    (void)level;
    pthread_mutex_lock(&log_lock);
    size_t n = strlen(logged);
    snprintf(logged + n, sizeof(logged) - n, "%s\n", msg);
    pthread_mutex_unlock(&log_lock);
}

/* Empties logged. */
static inline void log_forget(void)
{
    pthread_mutex_lock(&log_lock);
    logged[0] = '\0';
    pthread_mutex_unlock(&log_lock);
}

#endif
