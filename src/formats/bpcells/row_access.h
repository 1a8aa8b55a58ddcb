// Row-by-row access to a BPCells matrix, for dense views: entries of rows [r0, r1) with columns
// ascending. Row-major stores are read in place; col-major stores are transposed once into an
// anonymous scratch file (index_dir, else $TMPDIR) in row bands whose entries fit a fixed
// memory budget, so memory stays bounded however large the matrix is.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/bpcells/matrix.h"
#include "util/file.h"

namespace omicsfs::formats::bpcells {

struct RowEntries {
  std::vector<uint64_t> row_ptr;  // r1 - r0 + 1 offsets into the vectors below
  std::vector<uint32_t> cols;
  std::vector<uint32_t> u32;
  std::vector<float> f32;
  std::vector<double> f64;
};

class RowAccess {
 public:
  static Result<std::shared_ptr<const RowAccess>> Build(std::shared_ptr<const Matrix> matrix,
                                                        const std::vector<std::string>& scratch_dirs,
                                                        uint64_t memory_budget = 64 << 20);
  const Matrix& matrix() const { return *matrix_; }
  uint64_t RowNnz(uint32_t r) const { return row_ptr_[r + 1] - row_ptr_[r]; }
  Status ReadRows(uint32_t r0, uint32_t r1, RowEntries* out) const;

 private:
  RowAccess() = default;
  size_t ValueSize() const;
  Status Transpose(const std::vector<std::string>& scratch_dirs, uint64_t memory_budget);

  std::shared_ptr<const Matrix> matrix_;
  std::vector<uint64_t> row_ptr_;   // rows + 1
  std::unique_ptr<ScratchFile> csr_;  // col-major stores: records (col u32, value) in row order
};

}  // namespace omicsfs::formats::bpcells
