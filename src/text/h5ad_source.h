// matrix.h5ad: a matrix (formats/matrix.h) as the AnnData HDF5 file anndata 0.8 writes, served
// as a text::H5FileView (text/h5_view.h). X is cells × genes (AnnData's orientation: the
// matrix's columns are obs, its rows var), sparse, the store's arrays as they are: a
// column-major store is a csr_matrix (its majors are the cells), a row-major one a csc_matrix
// (its majors are the genes); no entry is reordered. The values keep the store's type (an
// integer store stays integer). obs and var are dataframes with no columns whose index is the
// names (col1…/row1… stand-ins where the store has none, as barcodes.tsv and genes.tsv write
// them); layers, obsm, obsp, uns, varm and varp are the empty groups anndata writes.
//
// Only X's three arrays are external (rendered from the store, little-endian): indptr (the major
// pointers: int32 while nnz fits, else int64, as scipy chooses), indices (int32 while the inner
// axis fits, else int64) and data. The names are written whole into the image.
#pragma once

#include <memory>
#include <string>

#include "formats/matrix.h"
#include "io/h5_image.h"
#include "text/h5_view.h"
#include "text/sparse_arrays.h"

namespace omicsfs::text {

// The HDF5 type of a matrix's values. A value type the view cannot express is Unsupported.
Result<io::h5::H5Type> H5adValueType(formats::ValueType t);

// The plan of matrix.h5ad for `m` (its external datasets: X/indptr, X/indices, X/data).
Result<io::h5::H5Plan> H5adPlan(const formats::MatrixReader& m);

// X's arrays from the store (text/sparse_arrays.h): the stored majors, int32 pointers and indices
// where they fit.
class H5adRenderer : public SparseArraysRenderer {
 public:
  H5adRenderer(std::shared_ptr<const formats::MatrixReader> m, cache::CachePool* pool,
               uint64_t entries_per_chunk = kEntriesPerChunk);
};

}  // namespace omicsfs::text
