// Row-by-row access to a matrix (any formats::MatrixReader), for dense views: entries of rows
// [r0, r1) with columns ascending. Row-major matrices are read in place (a row whose entries are
// not in column order, as in a slice choosing columns out of store order, is sorted); col-major
// ones are transposed once into an anonymous scratch file (index_dir, else $TMPDIR) in row bands
// whose entries fit a fixed memory budget, so memory stays bounded however large the matrix is.
//
// With a `persist` path (in index_dir, named after the store's fingerprint) the transposed copy
// is linked there once written and reused by later mounts (first byte in milliseconds instead of
// a pass over the store). It carries the key, the row offsets and an XXH3 hash per block of
// records; every read verifies the blocks it touches, so a damaged file fails with EIO (and a
// log line saying to remove it or mount with rebuild_index), never with wrong values.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/matrix.h"
#include "util/file.h"

namespace omicsfs::formats {

struct RowEntries {
  std::vector<uint64_t> row_ptr;  // r1 - r0 + 1 offsets into the vectors below
  std::vector<uint32_t> cols;
  std::vector<uint32_t> u32;
  std::vector<float> f32;
  std::vector<double> f64;
  std::vector<int32_t> i32;
  std::vector<int64_t> i64;
  std::vector<uint64_t> u64;
};

// Where a col-major store's transposed copy persists (see above).
struct TransposedCopy {
  std::string path;  // empty: not persisted
  std::string key;   // the store's fingerprint: a file made for another store is ignored
  bool rebuild = false;
  // The copy of the store keyed `key` in `dir` (a name made from the key's hash).
  static TransposedCopy In(const std::string& dir, std::string key, bool rebuild);
};

class RowAccess {
 public:
  using Persist = TransposedCopy;
  static Result<std::shared_ptr<const RowAccess>> Build(
      std::shared_ptr<const MatrixReader> matrix, const std::vector<std::string>& scratch_dirs,
      uint64_t memory_budget = 64 << 20, const TransposedCopy& persist = TransposedCopy());
  const MatrixReader& matrix() const { return *matrix_; }
  uint64_t RowNnz(uint32_t r) const { return row_ptr_[r + 1] - row_ptr_[r]; }
  // The first of row r's entries when the rows are laid end to end (r ≤ rows; RowBegin(rows) is
  // nnz): what a CSR indptr holds.
  uint64_t RowBegin(uint32_t r) const { return row_ptr_[r]; }
  Status ReadRows(uint32_t r0, uint32_t r1, RowEntries* out) const;
  // Entries [n0, n1) of the rows laid end to end (n1 ≤ nnz), across rows or within one, as
  // MatrixEntries (`inner` = the column): a copy's rows hold their columns ascending; a row-major
  // matrix read in place gives its entries in the store's order (unsorted where ReadRows sorts).
  Status ReadRecords(uint64_t n0, uint64_t n1, MatrixEntries* out) const;

 private:
  RowAccess() = default;
  size_t ValueSize() const;
  Status Transpose(const std::vector<std::string>& scratch_dirs, uint64_t memory_budget,
                   const Persist& persist);
  bool LoadPersisted(const Persist& persist);
  void SavePersisted(const Persist& persist);
  std::string Header(const Persist& persist) const;
  uint64_t HeaderSize(const Persist& persist) const;  // of Header() once the block hashes exist
  const File& Records() const { return csr_ ? csr_->file() : persisted_; }
  // Records [base, base + n) of the copy, each block checked against its hash where the copy has
  // them: a pointer into `buf` (or into nothing when n is 0).
  Result<const char*> CopyRecords(uint64_t base, uint64_t n, std::unique_ptr<char[]>* buf) const;

  std::shared_ptr<const MatrixReader> matrix_;
  std::vector<uint64_t> row_ptr_;     // rows + 1
  std::unique_ptr<ScratchFile> csr_;  // col-major stores: records (col u32, value) in row order
  File persisted_;                    // ... or the same records in a persisted file
  uint64_t data_offset_ = 0;          // where the records start in that file
  std::vector<uint64_t> block_hash_;  // per kBlockRecords records; empty: not verified
};

}  // namespace omicsfs::formats
