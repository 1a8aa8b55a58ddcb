// `pseudobulk.tsv` of a matrix (formats/matrix.h) over groups of its columns: header `\t` + the
// group names, then per row (store order) its name (the 1-based number when the matrix has no
// names, as matrix.tsv) and per group `\t` + the sum of the row's values over the group's columns:
// integers for uint matrices (summed in uint64), else the double sum in the shortest text that
// round-trips (std::to_chars, as matrix.tsv writes float64 values: `3`, `0.25`, `1e-05`).
// The sums are computed once, on first need, in one pass over the stored entries (only the
// grouped columns' entries of a col-major matrix); a lasting failure is kept and returned by
// every chunk. Chunk 0 is the header, chunk k ≥ 1 a block of rows.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "formats/matrix.h"
#include "text/record_source.h"
#include "util/settled.h"

namespace omicsfs::text {

class PseudobulkSource : public RecordSource {
 public:
  static constexpr uint32_t kRowsPerChunk = 2048;

  // `group_of_col`: per column of `matrix`, its group (an index into `groups`) or -1 for none.
  PseudobulkSource(std::shared_ptr<const formats::MatrixReader> matrix,
                   std::vector<int32_t> group_of_col, std::vector<std::string> groups,
                   std::string name);
  uint64_t ChunkCount() const override;
  Status RenderChunk(uint64_t k, std::string* out) const override;
  std::string Describe() const override { return name_ + " of " + matrix_->Describe(); }

 private:
  Status Sum() const;

  std::shared_ptr<const formats::MatrixReader> matrix_;
  std::vector<int32_t> group_of_col_;
  std::vector<std::string> groups_;
  std::string name_;
  // Set once under summed_ (rows × groups, row by row), read-only afterwards.
  SettledStatus summed_;
  mutable std::vector<uint64_t> sum_u64_;
  mutable std::vector<int64_t> sum_i64_;
  mutable std::vector<double> sum_f64_;
};

}  // namespace omicsfs::text
