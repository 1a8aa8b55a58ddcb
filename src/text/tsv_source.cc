#include "text/tsv_source.h"

#include <algorithm>

#include "text/number_format.h"

namespace omicsfs::text {

NamesSource::NamesSource(std::shared_ptr<const std::vector<std::string>> names, Layout layout,
                         uint64_t fallback_count, std::string describe)
    : names_(std::move(names)), layout_(layout), fallback_(fallback_count),
      describe_(std::move(describe)) {}

uint64_t NamesSource::ChunkCount() const { return (count() + kNamesPerChunk - 1) / kNamesPerChunk; }

Status NamesSource::RenderChunk(uint64_t k, std::string* out) const {
  const uint64_t first = k * kNamesPerChunk;
  const uint64_t last = std::min(first + kNamesPerChunk, count());
  std::string number;
  for (uint64_t i = first; i < last; ++i) {
    const std::string* name;
    if (names_->empty()) {
      number.clear();
      AppendUInt(&number, i + 1);
      name = &number;
    } else {
      name = &(*names_)[i];
    }
    out->append(*name);
    if (layout_ == Layout::kTwoColumns) {
      out->push_back('\t');
      out->append(*name);
    }
    out->push_back('\n');
  }
  return OkStatus();
}

}  // namespace omicsfs::text
