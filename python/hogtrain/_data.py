# _data.py: NumPy arrays, SciPy CSR matrices and files made into the library's data sets, the arrays borrowed where they can be, with their columns' fields for field-aware machines.
# SPDX-License-Identifier: BSD-2-Clause
"""Data sets for the estimators.

A SciPy CSR matrix with float32 values, int32 (or int64) row offsets,
int32 column indices in canonical order (sorted, no duplicates) is handed
to the library as it is: the data set reads its arrays in place
(HOG_ARRAYS_BORROW) and keeps references to them until it is closed.
Anything else is converted once (float64 values to float32, int64 indices
to uint32, unsorted rows sorted in a copy). A dense array is copied into the
library's sparse rows by hog_dataset_from_dense. A file path (libsvm, CSV,
Vowpal Wabbit text, LIBFFM text, or a binary .hgd, which is memory-mapped)
is opened by the library itself.

Fields, for a field-aware factorisation machine: one field id a column of
X (column_fields), given to the library as one a value (hog_csr.fields,
made here: 2 bytes a non-zero) with their count, the largest + 1, so that
every batch of the same columns has the same fields whichever it uses.
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
        self.fields = int(lib.hog_dataset_fields(ptr))

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


def read_params(index_base=-1, fields=False):
    """hog_read_params: the library's defaults (the format detected),
    index_base as hog_read_params.index_base (-1: detected), and fields:
    Vowpal Wabbit namespaces and CSV columns kept as fields (LIBFFM text
    keeps its own either way)."""
    rp = ffi.new("hog_read_params *", lib.hog_read_params_default())
    rp.index_base = index_base
    rp.fields = int(bool(fields))
    return rp


def open_path(path, index_base=-1, fields=False):
    """Opens a data file with read_params(index_base, fields)."""
    rp = read_params(index_base, fields)
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


def column_fields(fields, n_features):
    """fields (one field id a column of X, integers 0 to 65535) as uint16,
    checked; ValueError saying what is wrong."""
    a = np.asarray(fields)
    if a.ndim != 1 or a.shape[0] != n_features:
        raise ValueError("fields has shape %s: expected one field id for each of the %d columns of X" % (
            a.shape, n_features))
    if a.dtype.kind not in "iu":
        raise ValueError("fields has dtype %s: expected integer field ids (0 to 65535)" % a.dtype)
    bad = np.flatnonzero((a < 0) | (a > 65535))
    if bad.size:
        raise ValueError("fields[%d] is %d: expected field ids 0 to 65535" % (bad[0], a[bad[0]]))
    return a.astype(np.uint16)


def from_arrays(X, labels=None, weights=None, fields=None):
    """A data set of X (a CSR matrix, or a 2-D float32 array in C order),
    labels and weights (float32 arrays, or None: all 0, all 1), and fields
    (column_fields' uint16 array, one a column, or None: no fields)."""
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
    if fields is not None and not sp.issparse(X):
        X = sp.csr_matrix(X)  # its zeros dropped, as hog_dataset_from_dense drops them
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
        if fields is not None:
            c.fields = buf("uint16_t[]", fields[indices])  # the field of each value's column
            c.field_count = int(fields.max()) + 1 if len(fields) else 1
        check(lib.hog_dataset_from_csr(c, lib.HOG_ARRAYS_BORROW, out, err, len(err)), err)
        return Dataset(out[0], tuple(keep))
    x = np.ascontiguousarray(X, dtype=np.float32)
    check(lib.hog_dataset_from_dense(buf("float[]", x), rows, cols, buf("float[]", labels),
                                     buf("float[]", weights), 0, out, err, len(err)), err)
    return Dataset(out[0])
