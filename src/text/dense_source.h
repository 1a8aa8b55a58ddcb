// Dense `matrix.tsv` of a matrix (formats/matrix.h): header `\t` + column names, then per row the
// row name and C values (`0` where nothing is stored). 1-based numbers stand in for absent names.
// Sizes come from the stored entries alone (never from rendering zeros): a row is
// len(name) + 2·C + 1 + Σ(len(value) − 1) bytes. Chunks are groups of rows of ~256 KiB.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "formats/row_access.h"
#include "text/record_source.h"
#include "util/settled.h"

namespace omicsfs::text {

class DenseTsvSource : public RecordSource {
 public:
  // A col-major store is transposed into `scratch_dirs` (persisted as `persist` says).
  DenseTsvSource(std::shared_ptr<const formats::MatrixReader> matrix, std::string name,
                 std::vector<std::string> scratch_dirs,
                 formats::TransposedCopy persist = formats::TransposedCopy());
  uint64_t ChunkCount() const override;
  Status Prepare() const override;
  Result<std::optional<uint64_t>> MeasureChunk(uint64_t k) const override;
  Status RenderChunk(uint64_t k, std::string* out) const override;
  std::string Describe() const override { return name_ + " of " + matrix_->Describe(); }

 private:
  std::pair<uint32_t, uint32_t> Rows(uint64_t k) const;  // rows of chunk k ≥ 1
  // The row's name, or its 1-based number written into `buf` (kMaxNumberChars) when unnamed.
  std::string_view RowName(uint32_t r, char* buf) const;
  Status ComputeRowLengths() const;

  std::shared_ptr<const formats::MatrixReader> matrix_;
  std::vector<std::string> scratch_dirs_;
  formats::TransposedCopy persist_;
  std::string name_;
  uint64_t rows_per_chunk_ = 1;
  // Set once by Prepare (under the sizing pass's lock), read-only afterwards.
  mutable std::shared_ptr<const formats::RowAccess> rows_;
  // Needed only by a sizing pass (not when the size index persisted): computed on first use.
  SettledStatus row_lengths_;
  mutable std::vector<uint64_t> row_len_;
};

}  // namespace omicsfs::text
