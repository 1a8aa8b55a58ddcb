// A BPCells sparse matrix (CSC or CSR; packed or unpacked; uint32/float32/float64; v1 or v2), or a
// slice of one. Opened once: everything is validated up front, then the object is immutable and
// thread-safe. A formats::MatrixReader (formats/matrix.h): typed records for ranges of entries in
// storage order; never formats text.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "formats/bpcells/bitpacked_array.h"
#include "formats/bpcells/version.h"
#include "formats/matrix.h"
#include "io/array_store.h"

namespace omicsfs::formats::bpcells {

// The contract's vocabulary, as the BPCells reader has always named it.
using formats::MatrixEntries;
using formats::MatrixSubset;

class Matrix final : public MatrixReader {
 public:
  static Result<std::shared_ptr<const Matrix>> Open(std::shared_ptr<const io::ArrayStore> store);
  // The matrix over `subset` of `parent` (a store or itself a slice), with the same API: the
  // major (outer) axis in selection order, each major slice's entries in stored order, both
  // indices renumbered to positions in the selection. Chosen major slices are read in place;
  // a minor-axis selection filters them, which costs one pass over the chosen major slices'
  // inner indices here (to count the kept entries per major slice, for idxptr(), and to
  // remember where every kCheckpoint-th kept entry lies in the parent, so ReadEntries starts
  // near its range). Absent names on a chosen axis become the stand-ins of the chosen
  // items (row7, col3: NamesSource's rule), so a slice's names still say which they were.
  static Result<std::shared_ptr<const Matrix>> Slice(std::shared_ptr<const Matrix> parent,
                                                     MatrixSubset subset);
  // The contract's Slice: the same, of this matrix.
  Result<std::shared_ptr<const MatrixReader>> Slice(MatrixSubset subset) const override;

  const std::string& Describe() const override { return store_->Describe(); }
  const StoreVersion& version() const { return version_; }
  // outer_dim()+1 monotone pointers: entries of outer slice j are [idxptr[j], idxptr[j+1]).
  const std::vector<uint64_t>& idxptr() const { return idxptr_; }

  // Decodes entries [n0, n1); validates every inner index against inner_dim().
  Status ReadEntries(uint64_t n0, uint64_t n1, MatrixEntries* out) const override;

 private:
  Matrix() = default;
  // Inner indices of entries [n0, n1) only (validated), without values.
  Status ReadInner(uint64_t n0, uint64_t n1, std::vector<uint32_t>* out) const;
  Status ReadStored(uint64_t n0, uint64_t n1, MatrixEntries* out) const;
  Status ReadSliced(uint64_t n0, uint64_t n1, MatrixEntries* out) const;

  // What a slice adds: where its entries are in the parent.
  static constexpr uint64_t kCheckpoint = 4096;
  struct SliceData {
    std::shared_ptr<const Matrix> parent;
    std::vector<uint32_t> major;  // the parent's outer index of each outer slice
    std::vector<uint32_t>
        minor_map;  // per parent inner index: its new index, or kDropped; empty: all kept
    std::vector<uint64_t> checkpoint;  // minor_map set: parent entry of kept entry c·kCheckpoint
  };
  static constexpr uint32_t kDropped = UINT32_MAX;
  std::shared_ptr<const SliceData> slice_;
  std::shared_ptr<const io::ArrayStore> store_;
  StoreVersion version_;
  std::optional<BitpackedArray> packed_index_;  // packed stores
  std::optional<BitpackedArray> packed_val_;    // packed uint stores
};

}  // namespace omicsfs::formats::bpcells
