// MatrixMarket coordinate view of a BPCells matrix: chunk 0 is the header, chunk k ≥ 1 holds
// entries [(k-1)·E, k·E) in storage order (E a multiple of 128).
#pragma once

#include <memory>

#include "formats/bpcells/matrix.h"
#include "text/record_source.h"

namespace omicsfs::text {

class MtxSource : public RecordSource {
 public:
  static constexpr uint64_t kEntriesPerChunk = 128 * 128;

  MtxSource(std::shared_ptr<const formats::bpcells::Matrix> matrix, std::string name,
            uint64_t entries_per_chunk = kEntriesPerChunk);
  uint64_t ChunkCount() const override;
  Status RenderChunk(uint64_t k, std::string* out) const override;
  std::string Describe() const override { return name_ + " of " + matrix_->Describe(); }

 private:
  std::shared_ptr<const formats::bpcells::Matrix> matrix_;
  uint64_t per_chunk_;
  std::string name_;
};

}  // namespace omicsfs::text
