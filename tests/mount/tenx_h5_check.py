#!/usr/bin/python3
# Checks 10x.h5 files (Cell Ranger's feature-barcode HDF5) with h5py, scipy and anndata, against
# references the daemon did not make. argv[1]: a TSV, one file a line:
#   H5  MTX  ROWNAMES  COLNAMES  DTYPE(uint32|int32|int64|uint64|float32|float64)
# MTX is the reference MatrixMarket text (.gz allowed) of the matrix, genes x cells; empty names
# files mean the stand-ins row1…/col1…. Prints "ok N" or the failures, one a line.
#
# Checked per file: the layout Cell Ranger writes (the root holds only `matrix`; its datasets,
# their dtypes and shapes; fixed-length `S` strings), the CSC arrays against the reference (as
# scipy builds them), and what scanpy's read_10x_h5 returns: scanpy is not packaged for Debian 12,
# so its reading code (scanpy 1.9, readwrite.py: read_10x_h5 → _read_v3_10x_h5, gex_only) is
# replayed here with the same h5py, numpy and anndata calls. scanpy decodes names with numpy's
# astype(str), which is ASCII: a file with non-ASCII names is refused by scanpy itself
# (UnicodeDecodeError), as it would be for Cell Ranger's; those files are checked without it.
import gzip
import warnings
import io
import sys

import anndata
import h5py
import numpy as np
import scipy.io
import scipy.sparse

failures = []
# anndata 0.8 says it casts X to float32 (scanpy's AnnData(matrix) call does that): expected.
warnings.filterwarnings("ignore", category=FutureWarning)


def text(path):
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if path.endswith(".gz") else data


def names(path, prefix, n):
    got = text(path).decode("utf-8").splitlines()
    return got if got else [prefix + str(i + 1) for i in range(n)]


def _collect_datasets(dsets, group):
    for k, v in group.items():
        if isinstance(v, h5py.Dataset):
            dsets[k] = v[:]
        else:
            _collect_datasets(dsets, v)


def read_10x_h5_as_scanpy(filename):
    """scanpy 1.9's read_10x_h5(filename) (genome=None, gex_only=True), v3 branch."""
    with h5py.File(str(filename), "r") as f:
        v3 = "/matrix" in f
    if not v3:
        raise ValueError("not read as a v3 file")
    with h5py.File(str(filename), "r") as f:
        dsets = {}
        _collect_datasets(dsets, f["matrix"])
        M, N = dsets["shape"]
        data = dsets["data"]
        if dsets["data"].dtype == np.dtype("int32"):
            data = dsets["data"].view("float32")
            data[:] = dsets["data"]
        matrix = scipy.sparse.csr_matrix((data, dsets["indices"], dsets["indptr"]), shape=(N, M))
        adata = anndata.AnnData(
            matrix,
            obs=dict(obs_names=dsets["barcodes"].astype(str)),
            var=dict(
                var_names=dsets["name"].astype(str),
                gene_ids=dsets["id"].astype(str),
                feature_types=dsets["feature_type"].astype(str),
                genome=dsets["genome"].astype(str),
            ),
        )
    adata = adata[:, list(map(lambda x: x == "Gene Expression", adata.var["feature_types"]))]
    if adata.is_view:
        adata = adata.copy()
    return adata


def check(path, mtx, rownames, colnames, dtype):
    def fail(what):
        failures.append(path + ": " + what)

    ref = scipy.io.mmread(io.BytesIO(text(mtx))).tocsc()  # genes x cells
    genes, cells = ref.shape
    rows = names(rownames, "row", genes)
    cols = names(colnames, "col", cells)
    with h5py.File(path, "r") as f:
        if list(f.keys()) != ["matrix"]:
            fail("root holds %s, not only matrix" % list(f.keys()))
        if f.attrs.get("filetype") != b"matrix" or f.attrs.get("version") != 2:
            fail("root attributes %s" % dict(f.attrs))
        m = f["matrix"]
        if sorted(m.keys()) != ["barcodes", "data", "features", "indices", "indptr", "shape"]:
            fail("matrix holds %s" % sorted(m.keys()))
            return
        feats = m["features"]
        if sorted(feats.keys()) != ["_all_tag_keys", "feature_type", "genome", "id", "name"]:
            fail("features holds %s" % sorted(feats.keys()))
            return
        want_types = {
            "indptr": np.dtype("int64"),
            "indices": np.dtype("int64"),
            "shape": np.dtype("int32"),
            "data": np.dtype(dtype),
        }
        for k, t in want_types.items():
            if m[k].dtype != t:
                fail("%s is %s, want %s" % (k, m[k].dtype, t))
        for ds in (m["barcodes"], feats["id"], feats["name"], feats["feature_type"],
                   feats["genome"], feats["_all_tag_keys"]):
            if ds.dtype.kind != "S" or ds.dtype.itemsize < 1 or ds.ndim != 1:
                fail("%s is %s: not fixed-length strings" % (ds.name, ds.dtype))
        if list(m["shape"][:]) != [genes, cells]:
            fail("shape %s, want %s" % (list(m["shape"][:]), [genes, cells]))
        dec = lambda ds: [x.decode("utf-8") for x in ds[:]]
        if dec(m["barcodes"]) != cols:
            fail("barcodes differ from the column names")
        if dec(feats["id"]) != rows or dec(feats["name"]) != rows:
            fail("features/id or name differ from the row names")
        if dec(feats["feature_type"]) != ["Gene Expression"] * genes:
            fail("feature_type")
        if dec(feats["genome"]) != [""] * genes or feats["genome"].dtype.itemsize != 1:
            fail("genome is not '' (S1)")
        if dec(feats["_all_tag_keys"]) != ["genome"]:
            fail("_all_tag_keys")
        indptr, indices, data = m["indptr"][:], m["indices"][:], m["data"][:]
        if len(indptr) != cells + 1 or indptr[0] != 0 or indptr[-1] != ref.nnz:
            fail("indptr: %d pointers ending at %d" % (len(indptr), indptr[-1]))
            return
        if not np.array_equal(indptr, ref.indptr):
            fail("indptr differs from the reference's column counts")
        x = scipy.sparse.csc_matrix((data, indices, indptr), shape=(genes, cells))
        if (x != ref.astype(x.dtype)).nnz != 0:
            fail("the CSC matrix differs from the reference")
    ascii_names = all(n.isascii() for n in rows + cols)
    if not ascii_names:
        return
    a = read_10x_h5_as_scanpy(path)
    if a.shape != (cells, genes):
        fail("scanpy's read: shape %s" % (a.shape,))
        return
    if list(a.obs_names) != cols or list(a.var_names) != rows:
        fail("scanpy's read: names differ")
    if list(a.var["gene_ids"]) != rows or set(a.var["feature_types"]) - {"Gene Expression"}:
        fail("scanpy's read: var columns")
    if (a.X != ref.T.astype(a.X.dtype)).nnz != 0:
        fail("scanpy's read: X differs from the reference (%s)" % a.X.dtype)


n = 0
for line in open(sys.argv[1], encoding="utf-8"):
    check(*line.rstrip("\n").split("\t"))
    n += 1
print("\n".join(failures) if failures else "ok %d" % n)
