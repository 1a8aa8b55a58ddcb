#!/usr/bin/python3
# Checks matrix.h5ad files with the real clients (anndata 0.8, h5py, scipy), against references
# the daemon did not make. argv[1]: a TSV, one file a line:
#   H5AD  MTX  ROWNAMES  COLNAMES  ORDER(col|row)  DTYPE(uint32|float32|float64)
# MTX is the reference MatrixMarket text (.gz allowed) whose entries are in the store's order;
# empty names files mean the stand-ins row1…/col1…. Prints "ok N" or the failures, one a line.
import gzip
import io
import sys

import anndata
import h5py
import numpy as np
import scipy.io

failures = []


def text(path):
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if path.endswith(".gz") else data


def names(path, prefix, n):
    got = text(path).decode("utf-8").splitlines()
    return got if got else [prefix + str(i + 1) for i in range(n)]


def check(path, mtx, rownames, colnames, order, dtype):
    def fail(what):
        failures.append(path + ": " + what)

    ref = scipy.io.mmread(io.BytesIO(text(mtx)))  # COO, entries in the file's (the store's) order
    rows = names(rownames, "row", ref.shape[0])
    cols = names(colnames, "col", ref.shape[1])
    kind = "csr" if order == "col" else "csc"
    for backed in (None, "r"):
        a = anndata.read_h5ad(path, backed=backed)
        x = a.X if backed is None else a.X[:]
        if a.shape != (ref.shape[1], ref.shape[0]):
            fail("shape %s, want %s (cells x genes)" % (a.shape, ref.shape[::-1]))
            continue
        if x.format != kind or str(x.dtype) != dtype:
            fail("X is %s %s, want %s %s" % (x.format, x.dtype, kind, dtype))
        if list(a.obs_names) != cols or list(a.var_names) != rows:
            fail("names differ (backed=%s)" % backed)
        # The stored arrays, not reordered: X's indices and data are the entries in store order
        # (read whole; a backed read goes through scipy's slicing, which may sort them).
        inner = ref.row if order == "col" else ref.col
        if backed is None and (
            not np.array_equal(x.indices, inner)
            or not np.array_equal(x.data, ref.data.astype(x.dtype))
        ):
            fail("indices or data differ from the reference's entries")
        if (x.T != ref.astype(x.dtype).tocsr()).nnz != 0:
            fail("X.T differs from the reference (backed=%s)" % backed)
        if backed is not None and x.shape[0] > 2:
            part = a.X[1:3]  # a backed row range
            if (part != x[1:3]).nnz != 0:
                fail("backed X[1:3] differs")
        if backed is not None:
            a.file.close()
    with h5py.File(path, "r") as f:
        want = {
            "": ("anndata", "0.1.0"),
            "X": (kind + "_matrix", "0.1.0"),
            "obs": ("dataframe", "0.2.0"),
            "var": ("dataframe", "0.2.0"),
            "obs/_index": ("string-array", "0.2.0"),
            "var/_index": ("string-array", "0.2.0"),
        }
        for g in ("layers", "obsm", "obsp", "uns", "varm", "varp"):
            want[g] = ("dict", "0.1.0")
        for k, (t, v) in want.items():
            o = f[k] if k else f
            if (o.attrs.get("encoding-type"), o.attrs.get("encoding-version")) != (t, v):
                fail("%s: encoding attributes %s" % (k or "/", dict(o.attrs)))
        if list(f["X"].attrs["shape"]) != [ref.shape[1], ref.shape[0]]:
            fail("X shape attribute")
        for g in ("obs", "var"):
            if f[g].attrs["_index"] != "_index" or len(f[g].attrs["column-order"]) != 0:
                fail(g + ": dataframe attributes")
        for g in ("layers", "obsm", "obsp", "uns", "varm", "varp"):
            if len(f[g]) != 0:
                fail(g + " is not empty")
        if f["X/indptr"].dtype != np.int32 or f["X/indices"].dtype != np.int32:
            fail("indptr/indices are not int32")


n = 0
for line in open(sys.argv[1], encoding="utf-8"):
    check(*line.rstrip("\n").split("\t"))
    n += 1
print("\n".join(failures) if failures else "ok %d" % n)
