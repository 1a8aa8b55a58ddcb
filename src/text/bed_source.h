// BED / 10x TSV views of BPCells fragments: `chrom\tstart\tend\tbarcode`, chromosomes in ID
// order, fragments in stored order within a chromosome. The 10x form prints end − 1 (unsigned
// 32-bit, as BPCells' write_fragments_10x does). Chunks never span chromosomes and are cut at
// multiples of kFragmentsPerChunk physical fragments.
#pragma once

#include <memory>
#include <vector>

#include "formats/bpcells/fragments.h"
#include "text/record_source.h"

namespace omicsfs::text {

class BedSource : public RecordSource {
 public:
  static constexpr uint64_t kFragmentsPerChunk = 128 * 64;
  enum class Style { kBed, kTenX };

  BedSource(std::shared_ptr<const formats::bpcells::Fragments> fragments, Style style, std::string name);
  uint64_t ChunkCount() const override { return chunks_.size(); }
  Status RenderChunk(uint64_t k, std::string* out) const override;
  std::string Describe() const override;
  // From the decoded fragments, no text: [start, end) (10x: end − 1, as its third column says).
  bool HasRecordSpans() const override { return true; }
  Status RecordSpans(uint64_t k, ChunkSpans* out) const override;

 private:
  struct Range {
    uint32_t chr;
    uint64_t begin, end;
  };
  std::shared_ptr<const formats::bpcells::Fragments> fragments_;
  Style style_;
  std::string name_;
  std::vector<Range> chunks_;
};

}  // namespace omicsfs::text
