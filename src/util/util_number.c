/* util_number.c: numbers written to and read from text files in the C locale, whatever locale the program set, so that they round-trip. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "util.h"

/* One C locale object for the process, made on first use and never freed:
 * uselocale and strtod_l borrow it, so writing or reading a number costs no
 * newlocale. */
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale;

static void c_locale_make(void)
{
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

locale_t hog_c_locale(void)
{
    pthread_once(&c_locale_once, c_locale_make);
    return c_locale;
}

int hog_number_format(char *buf, size_t len, double v)
{
    /* glibc has no snprintf_l: the thread switches locale for the one call.
     * Integers need none of this: printf groups digits only when asked. */
    locale_t c = hog_c_locale();
    locale_t old = c ? uselocale(c) : (locale_t)0;
    int n = snprintf(buf, len, "%.17g", v);
    if (c)
        uselocale(old);
    return n;
}

int hog_number_parse(const char *s, double *out)
{
    locale_t c = hog_c_locale();
    char *end;
    double v = c ? strtod_l(s, &end, c) : strtod(s, &end);
    if (end == s || *end)
        return -EINVAL;
    *out = v;
    return 0;
}
