// 10x.h5: a matrix (formats/matrix.h) as Cell Ranger's feature-barcode HDF5 file (Cell Ranger ≥ 3,
// `filtered_feature_bc_matrix.h5`), served as a text::H5FileView (text/h5_view.h), what Seurat's
// Read10X_h5 and scanpy's read_10x_h5 read. Beside the `10x/` folder it holds the same matrix.
//
// The root holds one object, the group `matrix` (Read10X_h5 reads every top-level object as a
// genome), with the root attributes Cell Ranger writes that say what the file is (`filetype` =
// "matrix", `version` = 2); in `matrix`, as Cell Ranger writes them:
//   barcodes            the column names (col1… without), fixed-length strings (numpy `S`)
//   shape               int32 [genes, cells] (int64 only past 2^31 - 1)
//   indptr, indices     int64, genes × cells CSC: per cell (column), its genes (rows) and values
//   data                the store's value type: an integer store stays integer (uint32 counts are
//                       uint32, not Cell Ranger's int32: a count past 2^31 - 1 is kept, and
//                       Read10X_h5 and read_10x_h5 read either; int32, int64, uint64, float32
//                       and float64 as stored)
//   features/id, name   the row names (row1… without)
//   features/feature_type  "Gene Expression" for every row; features/genome "" for every row;
//   features/_all_tag_keys ["genome"]
// Strings are fixed-length as numpy's `S` writes them (io/h5_image.h H5Value::FixedStrings:
// as wide as the longest, at least one byte), ASCII, or UTF-8 when a name holds non-ASCII bytes
// (scanpy's read_10x_h5 decodes names as ASCII and refuses such files; Seurat reads them).
//
// A column-major store's columns are its majors: indptr, indices and data are its arrays as
// stored. A row-major store's columns come from the transposed copy of its transpose
// (formats/row_access.h), made on the first read of those arrays and persisted in index_dir as
// the dense view's copy is; the file's size and metadata need no pass.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/matrix.h"
#include "formats/row_access.h"
#include "io/h5_image.h"
#include "text/h5_view.h"

namespace omicsfs::text {

// The plan of 10x.h5 for `m` (its external datasets: matrix/indptr, matrix/indices,
// matrix/data). Names whose fixed-length arrays would pass 1 GiB are Unsupported.
Result<io::h5::H5Plan> TenxH5Plan(const formats::MatrixReader& m);

// The renderer of those arrays: `m`'s columns (text/sparse_arrays.h ColumnsOf; a row-major
// store's copy made in `scratch_dirs`, persisted as `persist` says).
std::shared_ptr<const H5ArrayRenderer> TenxH5Renderer(
    std::shared_ptr<const formats::MatrixReader> m, cache::CachePool* pool,
    std::vector<std::string> scratch_dirs, formats::TransposedCopy persist,
    uint64_t entries_per_chunk = uint64_t{1} << 18);

}  // namespace omicsfs::text
