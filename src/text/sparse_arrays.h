// The three arrays of a compressed sparse matrix in an HDF5 view (matrix.h5ad's X, 10x.h5's
// matrix/): indptr (the majors' pointers), indices (each entry's inner index) and data (its
// value), rendered little-endian from a source of majors and their entries, chunk by chunk, for
// text::H5FileView (text/h5_view.h). Shared by text/h5ad_source.h and text/tenx_h5_source.h.
//
// The source is a matrix's entries in storage order (StoredMajors: a column-major store's
// majors are its columns), or a row-major matrix's columns read from its transposed copy
// (ColumnsOf: formats/row_access.h, made on first use and persisted in index_dir).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/matrix.h"
#include "formats/row_access.h"
#include "io/h5_image.h"
#include "text/h5_view.h"

namespace omicsfs::text {

// Majors and their entries, in order.
class SparseMajors {
 public:
  virtual ~SparseMajors() = default;
  virtual std::string Describe() const = 0;
  virtual uint64_t majors() const = 0;
  virtual uint64_t nnz() const = 0;
  virtual formats::ValueType value_type() const = 0;
  // Appends the pointers [j0, j1) of the majors() + 1 an indptr holds: the first entry of each
  // major, and nnz() for j = majors().
  virtual Status Begins(uint64_t j0, uint64_t j1, std::vector<uint64_t>* out) const = 0;
  // Entries [n0, n1): inner indices and values of value_type().
  virtual Status Read(uint64_t n0, uint64_t n1, formats::MatrixEntries* out) const = 0;
};

// `m`'s majors as stored (for a column-major matrix: its columns).
std::shared_ptr<const SparseMajors> StoredMajors(std::shared_ptr<const formats::MatrixReader> m);

// `m`'s columns (its majors when column-major; else those of the transposed copy of its
// transpose, made on first Begins or Read — a pass over the store — in `scratch_dirs` and
// persisted as `persist` says). Within a column, rows ascending where a copy is made.
std::shared_ptr<const SparseMajors> ColumnsOf(std::shared_ptr<const formats::MatrixReader> m,
                                              std::vector<std::string> scratch_dirs,
                                              formats::TransposedCopy persist);

// A names column of an HDF5 view: the names, or PREFIX1… where the store has none (as
// barcodes.tsv and genes.tsv write them).
std::vector<std::string> NamesOrStandIns(const std::vector<std::string>& names, uint32_t n,
                                         const char* prefix);

// The HDF5 type of a matrix's values (the store's: integer stores stay integer). A value type
// with no case here is Unsupported, `view` naming the file in the message.
Result<io::h5::H5Type> H5ValueType(formats::ValueType t, const char* view);

// The external datasets indptr (0), indices (1) and data (2), in that order in the plan. Indices
// and data of one block of entries come from one decode, kept in the decode cache for both.
class SparseArraysRenderer : public H5ArrayRenderer {
 public:
  static constexpr uint64_t kEntriesPerChunk = uint64_t{1} << 18;  // a multiple of 128
  struct Widths {
    bool indptr64 = true;   // int64 (else int32)
    bool indices64 = true;  // int64 (else int32)
  };

  SparseArraysRenderer(std::shared_ptr<const SparseMajors> source, cache::CachePool* pool,
                       Widths widths, uint64_t entries_per_chunk = kEntriesPerChunk);
  uint64_t ChunkElements(size_t d) const override;
  Result<cache::Buffer> Chunk(size_t d, uint64_t k) const override;

 private:
  struct Entries;  // one decoded block: indices and values, as the file stores them
  Result<std::shared_ptr<const Entries>> Block(uint64_t k) const;
  Result<std::string> Indptr(uint64_t k) const;

  std::shared_ptr<const SparseMajors> source_;
  cache::CachePool* pool_;
  uint64_t owner_;
  uint64_t per_chunk_;
  Widths widths_;
};

}  // namespace omicsfs::text
