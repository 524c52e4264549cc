# _data.py: NumPy arrays, SciPy CSR matrices and files made into the library's data sets, the arrays borrowed where they can be.
# SPDX-License-Identifier: BSD-2-Clause
"""Data sets for the estimators.

A SciPy CSR matrix with float32 values, int32 (or int64) row offsets,
int32 column indices in canonical order (sorted, no duplicates) is handed
to the library as it is: the data set reads its arrays in place
(HOG_ARRAYS_BORROW) and keeps references to them until it is closed.
Anything else is converted once (float64 values to float32, int64 indices
to uint32, unsorted rows sorted in a copy). A dense array is copied into the
library's sparse rows by hog_dataset_from_dense. A file path (libsvm, CSV,
Vowpal Wabbit text, or a binary .hgd, which is memory-mapped) is opened by
the library itself.
"""

import os

import numpy as np
import scipy.sparse as sp

from ._ffi import check, ffi, lib, new_err


class Dataset:
    """A hog_dataset, with what it borrows kept alive until close()."""

    def __init__(self, ptr, keep=()):
        self.ptr = ptr
        self._keep = keep
        info = ffi.new("hog_dataset_info *")
        lib.hog_dataset_get_info(ptr, info)
        self.rows = int(info.rows)
        self.features = int(info.features)
        self.index_base = int(info.index_base)

    def labels(self):
        """The rows' labels, as float32."""
        out = np.empty(self.rows, dtype=np.float32)
        lib.hog_dataset_labels(self.ptr, ffi.from_buffer("float[]", out, require_writable=True))
        return out

    def close(self):
        if self.ptr is not None:
            lib.hog_dataset_close(self.ptr)
            self.ptr = None
            self._keep = ()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


def is_path(X):
    return isinstance(X, (str, bytes, os.PathLike))


def open_path(path, index_base=-1):
    """Opens a data file with the library's defaults (the format detected);
    index_base as hog_read_params.index_base (-1: detected)."""
    rp = ffi.new("hog_read_params *", lib.hog_read_params_default())
    rp.index_base = index_base
    out = ffi.new("hog_dataset **")
    err = new_err()
    check(lib.hog_dataset_open(os.fsencode(path), rp, out, err, len(err)), err)
    return Dataset(out[0])


def csr_arrays(X):
    """X's arrays as the library takes them: (indptr, indices as uint32,
    values as float32), each the matrix's own where it already is so."""
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    values = np.ascontiguousarray(X.data, dtype=np.float32)
    indices = X.indices
    if indices.dtype == np.int32:
        indices = np.ascontiguousarray(indices).view(np.uint32)
    else:
        if X.shape[1] > 2**32:
            raise ValueError("X has %d columns: the library takes at most 2^32" % X.shape[1])
        indices = np.ascontiguousarray(indices, dtype=np.uint32)
    indptr = X.indptr
    if indptr.dtype not in (np.int32, np.int64):
        indptr = indptr.astype(np.int64)
    return np.ascontiguousarray(indptr), indices, values


def from_arrays(X, labels=None, weights=None):
    """A data set of X (a CSR matrix, or a 2-D float32 array in C order),
    labels and weights (float32 arrays, or None: all 0, all 1)."""
    keep = []

    def buf(ctype, a):
        if a is None:
            return ffi.NULL
        keep.append(a)
        b = ffi.from_buffer(ctype, a)
        keep.append(b)
        return b

    out = ffi.new("hog_dataset **")
    err = new_err()
    rows, cols = X.shape
    if sp.issparse(X):
        indptr, indices, values = csr_arrays(X)
        c = ffi.new("hog_csr *")
        c.rows = rows
        c.cols = cols
        c.indptr = buf("char[]", indptr)
        c.indptr_bytes = indptr.dtype.itemsize
        c.indices = buf("uint32_t[]", indices)
        c.values = buf("float[]", values)
        c.labels = buf("float[]", labels)
        c.weights = buf("float[]", weights)
        check(lib.hog_dataset_from_csr(c, lib.HOG_ARRAYS_BORROW, out, err, len(err)), err)
        return Dataset(out[0], tuple(keep))
    x = np.ascontiguousarray(X, dtype=np.float32)
    check(lib.hog_dataset_from_dense(buf("float[]", x), rows, cols, buf("float[]", labels),
                                     buf("float[]", weights), 0, out, err, len(err)), err)
    return Dataset(out[0])
