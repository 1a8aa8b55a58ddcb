#include "text/chunk_index.h"

#include <algorithm>

namespace omicsfs::text {

ChunkIndex::ChunkIndex(const std::vector<uint64_t>& lengths) {
  starts_.resize(lengths.size() + 1);
  starts_[0] = 0;
  for (size_t i = 0; i < lengths.size(); ++i) starts_[i + 1] = starts_[i] + lengths[i];
}

uint64_t ChunkIndex::Locate(uint64_t offset) const {
  // Last start <= offset; with empty chunks several starts are equal, upper_bound picks the
  // chunk that actually holds the byte.
  auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
  return static_cast<uint64_t>(it - starts_.begin()) - 1;
}

}  // namespace omicsfs::text
