// BED / 10x TSV views of BPCells fragments: `chrom\tstart\tend\tbarcode`, chromosomes in ID
// order, fragments in stored order within a chromosome. The 10x form prints end − 1 (unsigned
// 32-bit, as BPCells' write_fragments_10x does). Chunks never span chromosomes and are cut at
// multiples of kFragmentsPerChunk physical fragments.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "formats/bpcells/fragments.h"
#include "text/record_source.h"

namespace omicsfs::text {

class FragmentTally;

class BedSource : public RecordSource {
 public:
  static constexpr uint64_t kFragmentsPerChunk = 128 * 64;
  enum class Style { kBed, kTenX };
  struct Chunk {
    uint32_t chr;
    uint64_t begin, end;
  };
  // The chunks of a view of `f`: its runs, cut at multiples of kFragmentsPerChunk.
  static std::vector<Chunk> Chunks(const formats::bpcells::Fragments& f);

  // With a tally (a group of a groups=@NAME folder), chunk lengths come from it, not a pass.
  BedSource(std::shared_ptr<const formats::bpcells::Fragments> fragments, Style style, std::string name,
            std::shared_ptr<const FragmentTally> tally = nullptr, size_t group = 0);
  uint64_t ChunkCount() const override { return chunks_.size(); }
  Status RenderChunk(uint64_t k, std::string* out) const override;
  Result<std::optional<uint64_t>> MeasureChunk(uint64_t k) const override;
  std::string Describe() const override;
  // From the decoded fragments, no text: [start, end) (10x: end − 1, as its third column says).
  bool HasRecordSpans() const override { return true; }
  Status RecordSpans(uint64_t k, ChunkSpans* out) const override;

 private:
  std::shared_ptr<const formats::bpcells::Fragments> fragments_;
  Style style_;
  std::string name_;
  std::vector<Chunk> chunks_;
  std::shared_ptr<const FragmentTally> tally_;
  size_t group_ = 0;
};

// The text lengths of the cell groups of one fragments view, found in one pass: per chunk of
// the view of `base` (BedSource::Chunks) and per group, the bytes of the group's lines in the
// BED and the 10x form. A groups=@NAME folder's views size themselves from it: one pass over
// the store sizes every group, instead of a pass per group and view. Thread-safe; computed on
// first use (a failure is returned to that caller and tried again by the next).
class FragmentTally {
 public:
  // `group_of_cell`: per cell ID of `base`, its group, or -1.
  FragmentTally(std::shared_ptr<const formats::bpcells::Fragments> base, std::vector<int32_t> group_of_cell, size_t groups);
  Result<uint64_t> Length(size_t group, uint64_t chunk, BedSource::Style style) const;

 private:
  Status Compute() const;

  std::shared_ptr<const formats::bpcells::Fragments> base_;
  std::vector<int32_t> group_of_cell_;
  size_t groups_;
  std::vector<BedSource::Chunk> chunks_;
  mutable std::mutex mu_;
  mutable bool done_ = false;
  mutable std::vector<uint64_t> lengths_;  // [chunk][group][style]
};

}  // namespace omicsfs::text
