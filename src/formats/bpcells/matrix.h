// A BPCells sparse matrix (CSC or CSR; packed or unpacked; uint32/float32/float64; v1 or v2).
// Opened once: everything is validated up front, then the object is immutable and thread-safe.
// Returns typed records for ranges of entries in storage order; never formats text.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "formats/bpcells/bitpacked_array.h"
#include "formats/bpcells/version.h"
#include "io/array_store.h"

namespace omicsfs::formats::bpcells {

// Entries [n0, n1) of a matrix in storage order.
struct MatrixEntries {
  std::vector<uint32_t> inner;  // row index (col-major) or column index (row-major), 0-based
  std::vector<uint32_t> u32;    // values, for uint matrices
  std::vector<float> f32;       // values, for float matrices
  std::vector<double> f64;      // values, for double matrices
};

class Matrix {
 public:
  static Result<std::shared_ptr<const Matrix>> Open(std::shared_ptr<const io::ArrayStore> store);

  const std::string& Describe() const { return store_->Describe(); }
  const StoreVersion& version() const { return version_; }
  ValueType value_type() const { return version_.value_type; }
  uint32_t rows() const { return rows_; }
  uint32_t cols() const { return cols_; }
  bool row_major() const { return row_major_; }
  uint64_t nnz() const { return nnz_; }
  uint32_t outer_dim() const { return row_major_ ? rows_ : cols_; }
  uint32_t inner_dim() const { return row_major_ ? cols_ : rows_; }
  // outer_dim()+1 monotone pointers: entries of outer slice j are [idxptr[j], idxptr[j+1]).
  const std::vector<uint64_t>& idxptr() const { return idxptr_; }
  const std::vector<std::string>& row_names() const { return row_names_; }
  const std::vector<std::string>& col_names() const { return col_names_; }

  // Decodes entries [n0, n1); validates every inner index against inner_dim().
  Status ReadEntries(uint64_t n0, uint64_t n1, MatrixEntries* out) const;

 private:
  Matrix() = default;

  std::shared_ptr<const io::ArrayStore> store_;
  StoreVersion version_;
  uint32_t rows_ = 0, cols_ = 0;
  bool row_major_ = false;
  uint64_t nnz_ = 0;
  std::vector<uint64_t> idxptr_;
  std::vector<std::string> row_names_, col_names_;
  std::optional<BitpackedArray> packed_index_;  // packed stores
  std::optional<BitpackedArray> packed_val_;    // packed uint stores
};

}  // namespace omicsfs::formats::bpcells
