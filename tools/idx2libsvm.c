/* idx2libsvm.c: converts (Fashion-)MNIST IDX image and label files, gzip-compressed or not, to libsvm text. */
/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Usage: idx2libsvm IMAGES.gz LABELS.gz OUT.svm
 *
 * IDX layout (all integers big-endian):
 *   images: u32 magic 0x00000803 (2051: unsigned bytes, 3 dimensions),
 *           u32 count, u32 rows, u32 cols, then count*rows*cols pixel bytes
 *   labels: u32 magic 0x00000801 (2049: unsigned bytes, 1 dimension),
 *           u32 count, then count label bytes
 *
 * Output: one line per image, "LABEL IDX:VAL IDX:VAL ...", where LABEL is the
 * class 0..9, IDX the 0-based pixel index (row * cols + col) and VAL the pixel
 * divided by 255 (printed with %.6g); zero pixels are left out. The file is
 * written to a temporary name beside OUT, fsync'ed and renamed, so OUT is
 * either absent or complete.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "../src/util/util.h"

#define IDX_MAGIC_IMAGES 2051u
#define IDX_MAGIC_LABELS 2049u
#define MAX_PIXELS (1u << 20) /* per image: far above 28*28, and a guard against garbage */
#define MAX_CLASS 9u
#define OUT_BUFFER (4u << 20)

static const char *prog = "idx2libsvm";

/* ---- reading ---- */

/* Reads exactly n bytes of `what` (of item `item`, if not negative). Returns 0,
 * or -1 after printing why, naming path. */
static int read_exact(gzFile gz, const char *path, void *buf, size_t n, const char *what,
                      long item)
{
    unsigned char *p = buf;
    while (n > 0) {
        unsigned chunk = n > (1u << 30) ? (1u << 30) : (unsigned)n;
        int got = gzread(gz, p, chunk);
        if (got < 0) {
            int zerr = 0;
            const char *msg = gzerror(gz, &zerr);
            fprintf(stderr, "%s: %s: read error in the %s: %s\n", prog, path, what,
                    zerr == Z_ERRNO ? strerror(errno) : msg);
            return -1;
        }
        if (got == 0) {
            if (item >= 0)
                fprintf(stderr, "%s: %s: truncated: the file ends in the %s of item %ld\n",
                        prog, path, what, item);
            else
                fprintf(stderr, "%s: %s: truncated: the file ends in the %s\n", prog, path,
                        what);
            return -1;
        }
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

static uint32_t be32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static gzFile open_idx(const char *path)
{
    gzFile gz = gzopen(path, "rb");
    if (!gz) {
        /* gzopen sets errno for file-system errors, leaves it 0 for lack of memory. */
        fprintf(stderr, "%s: %s: cannot open: %s\n", prog, path,
                errno ? strerror(errno) : "out of memory");
        return NULL;
    }
    gzbuffer(gz, 1u << 18);
    return gz;
}

/* Fails unless the stream has been read to its very end. */
static int expect_eof(gzFile gz, const char *path)
{
    unsigned char extra;
    int got = gzread(gz, &extra, 1);
    if (got < 0) {
        int zerr = 0;
        const char *msg = gzerror(gz, &zerr);
        fprintf(stderr, "%s: %s: read error: %s\n", prog, path,
                zerr == Z_ERRNO ? strerror(errno) : msg);
        return -1;
    }
    if (got > 0) {
        fprintf(stderr, "%s: %s: unexpected data after the last item (wrong count in the header?)\n",
                prog, path);
        return -1;
    }
    return 0;
}

/* ---- writing ---- */

/* Appends the decimal digits of v at p; returns the new end. */
static char *put_u32(char *p, uint32_t v)
{
    char tmp[10];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}


/* ---- main ---- */

int main(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: %s IMAGES.gz LABELS.gz OUT.svm\n"
               "Converts IDX images (magic 2051) and labels (magic 2049), gzip-compressed\n"
               "or not, to libsvm text: the label, then pixel index (0-based) : pixel/255\n"
               "for every non-zero pixel. OUT is written atomically.\n",
               prog);
        return 0;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: %s IMAGES.gz LABELS.gz OUT.svm\n", prog);
        return 2;
    }
    const char *img_path = argv[1], *lab_path = argv[2], *out_path = argv[3];
    int status = 1;
    gzFile img = NULL, lab = NULL;
    unsigned char *pixels = NULL;
    char *out = NULL;
    int rc;
    hog_atomic_file f = {.fd = -1};

    /* Headers first, so that a mismatch is reported before anything is written. */
    unsigned char h[16];
    if (!(img = open_idx(img_path)) || read_exact(img, img_path, h, 16, "header", -1) != 0)
        goto done;
    if (be32(h) != IDX_MAGIC_IMAGES) {
        fprintf(stderr, "%s: %s: not an IDX image file: magic %u, expected %u%s\n", prog,
                img_path, be32(h), IDX_MAGIC_IMAGES,
                be32(h) == IDX_MAGIC_LABELS ? " (this is a label file: wrong order?)" : "");
        goto done;
    }
    uint32_t n_img = be32(h + 4), rows = be32(h + 8), cols = be32(h + 12);
    if (rows == 0 || cols == 0 || (uint64_t)rows * cols > MAX_PIXELS) {
        fprintf(stderr, "%s: %s: bad image dimensions %ux%u\n", prog, img_path, rows, cols);
        goto done;
    }
    uint32_t npix = rows * cols;

    if (!(lab = open_idx(lab_path)) || read_exact(lab, lab_path, h, 8, "header", -1) != 0)
        goto done;
    if (be32(h) != IDX_MAGIC_LABELS) {
        fprintf(stderr, "%s: %s: not an IDX label file: magic %u, expected %u%s\n", prog,
                lab_path, be32(h), IDX_MAGIC_LABELS,
                be32(h) == IDX_MAGIC_IMAGES ? " (this is an image file: wrong order?)" : "");
        goto done;
    }
    uint32_t n_lab = be32(h + 4);
    if (n_lab != n_img) {
        fprintf(stderr, "%s: %s has %u images but %s has %u labels\n", prog, img_path, n_img,
                lab_path, n_lab);
        goto done;
    }

    /* The 256 possible values, formatted once: the same text as printf("%.6g")
     * per pixel, at a fraction of the cost. */
    char val_txt[256][16];
    size_t val_len[256];
    for (int v = 1; v < 256; v++)
        val_len[v] = (size_t)snprintf(val_txt[v], sizeof(val_txt[v]), "%.6g", (double)v / 255.0);

    pixels = malloc(npix);
    /* Worst line: "9" + npix * " IDX:0.xxxxxx" + "\n"; keep room for one. */
    size_t line_max = 2 + (size_t)npix * (1 + 10 + 1 + 15);
    size_t out_cap = OUT_BUFFER > 2 * line_max ? OUT_BUFFER : 2 * line_max;
    out = malloc(out_cap);
    if (!pixels || !out) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto done;
    }
    if ((rc = hog_atomic_open(&f, out_path)) < 0) {
        fprintf(stderr, "%s: %s: cannot create a temporary file beside it: %s\n", prog, out_path, strerror(-rc));
        goto done;
    }

    size_t used = 0;
    for (uint32_t i = 0; i < n_img; i++) {
        unsigned char label;
        if (read_exact(lab, lab_path, &label, 1, "label", (long)i) != 0)
            goto done;
        if (label > MAX_CLASS) {
            fprintf(stderr, "%s: %s: item %u has label %u, expected 0..%u\n", prog, lab_path,
                    i, label, MAX_CLASS);
            goto done;
        }
        if (read_exact(img, img_path, pixels, npix, "pixels", (long)i) != 0)
            goto done;

        char *p = out + used;
        *p++ = (char)('0' + label);
        for (uint32_t j = 0; j < npix; j++) {
            unsigned v = pixels[j];
            if (!v)
                continue;
            *p++ = ' ';
            p = put_u32(p, j);
            *p++ = ':';
            memcpy(p, val_txt[v], val_len[v]);
            p += val_len[v];
        }
        *p++ = '\n';
        used = (size_t)(p - out);
        if (out_cap - used < line_max) {
            if ((rc = hog_atomic_write(&f, out, used)) < 0) {
                fprintf(stderr, "%s: %s: write: %s\n", prog, out_path, strerror(-rc));
                goto done;
            }
            used = 0;
        }
    }
    if (expect_eof(lab, lab_path) != 0 || expect_eof(img, img_path) != 0)
        goto done;
    if (used && (rc = hog_atomic_write(&f, out, used)) < 0) {
        fprintf(stderr, "%s: %s: write: %s\n", prog, out_path, strerror(-rc));
        goto done;
    }
    if ((rc = hog_atomic_commit(&f)) < 0)
        fprintf(stderr, "%s: %s: %s\n", prog, out_path, strerror(-rc));
    status = rc < 0;
done:
    hog_atomic_abort(&f); /* after a commit: nothing left to remove */
    if (img)
        gzclose(img);
    if (lab)
        gzclose(lab);
    free(pixels);
    free(out);
    return status;
}
