// Prefix sums of chunk byte lengths (8 bytes per chunk): offset → (chunk, offset in chunk).
#pragma once

#include <cstdint>
#include <vector>

namespace omicsfs::text {

class ChunkIndex {
 public:
  ChunkIndex() : starts_{0} {}
  explicit ChunkIndex(const std::vector<uint64_t>& lengths);

  uint64_t chunk_count() const { return starts_.size() - 1; }
  uint64_t total_size() const { return starts_.back(); }
  uint64_t ChunkStart(uint64_t k) const { return starts_[k]; }
  uint64_t ChunkLength(uint64_t k) const { return starts_[k + 1] - starts_[k]; }
  // The chunk holding byte `offset` (< total_size()); empty chunks are skipped.
  uint64_t Locate(uint64_t offset) const;

 private:
  std::vector<uint64_t> starts_;  // chunk_count()+1 entries
};

}  // namespace omicsfs::text
