// BED / 10x TSV views of BPCells fragments: `chrom\tstart\tend\tbarcode`, chromosomes in ID
// order, fragments in stored order within a chromosome. The 10x form prints end − 1 (unsigned
// 32-bit, as BPCells' write_fragments_10x does). Chunks never span chromosomes and are cut at
// multiples of kFragmentsPerChunk physical fragments.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "formats/bpcells/fragment_partition.h"
#include "formats/bpcells/fragments.h"
#include "text/packed_names.h"
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
  // `cells`: the fragments' cell names packed (shared by the views of one store), or nullptr
  // for a table of this view's own; a group's views take their tally's.
  BedSource(std::shared_ptr<const formats::bpcells::Fragments> fragments, Style style,
            std::string name, std::shared_ptr<const FragmentTally> tally = nullptr,
            size_t group = 0, std::shared_ptr<const PackedNames> cells = nullptr);
  uint64_t ChunkCount() const override { return chunks_.size(); }
  Status RenderChunk(uint64_t k, std::string* out) const override;
  Result<std::optional<uint64_t>> MeasureChunk(uint64_t k) const override;
  // A group's lengths come from its tally (made for all groups at once).
  bool MeasuresWithoutReading() const override { return tally_ != nullptr; }
  std::string Describe() const override;
  // From the decoded fragments, no text: [start, end) (10x: end − 1, as its third column says).
  bool HasRecordSpans() const override { return true; }
  Status RecordSpans(uint64_t k, ChunkSpans* out) const override;
  // From the other form's spans of the same fragments (ends ± 1): both forms sized by one pass.
  bool SpansFromPartner(const RecordSource& partner, uint64_t k, const ChunkSpans& from,
                        ChunkSpans* out) const override;

 private:
  // Chunk k's fragments (a group's from the tally) and the names of their cells.
  Status Fetch(uint64_t k, formats::bpcells::FragmentRange* f,
               const std::vector<std::string>** cells) const;

  std::shared_ptr<const formats::bpcells::Fragments> fragments_;
  Style style_;
  std::string name_;
  std::vector<Chunk> chunks_;
  std::shared_ptr<const FragmentTally> tally_;
  size_t group_ = 0;
  std::shared_ptr<const PackedNames> cells_;  // the names Fetch's cell numbers index, packed
};

// The cell groups of one fragments view (a groups=@NAME folder), regrouped in one pass
// (formats::bpcells::FragmentPartition over the view's chunks) and their text lengths: per chunk
// and group, the bytes of the group's lines in the BED and the 10x form. A group's views read
// and size themselves from it: each costs its group's fragments, and the store is decoded once
// for all groups instead of once per group and view. Thread-safe; built on first use.
class FragmentTally {
 public:
  // `group_of_cell`: per cell ID of `base`, its group, or -1. The regrouped fragments go to a
  // scratch file in the first usable of `scratch_dirs` (then $TMPDIR, /tmp).
  FragmentTally(std::shared_ptr<const formats::bpcells::Fragments> base,
                std::vector<int32_t> group_of_cell, size_t groups,
                std::vector<std::string> scratch_dirs);
  Result<uint64_t> Length(size_t group, uint64_t chunk, BedSource::Style style) const;
  // The group's fragments of a chunk, their cells named by cell_names().
  Status Read(size_t group, uint64_t chunk, formats::bpcells::FragmentRange* out) const {
    return partition_.Read(group, chunk, out);
  }
  const std::vector<std::string>& cell_names() const { return partition_.base().cell_names(); }
  const std::shared_ptr<const PackedNames>& packed_cell_names() const { return packed_cells_; }

 private:
  Status Compute() const;

  formats::bpcells::FragmentPartition partition_;
  std::vector<BedSource::Chunk> chunks_;
  std::shared_ptr<const PackedNames> packed_cells_;
  mutable std::mutex mu_;
  mutable bool done_ = false;
  mutable std::vector<uint64_t> lengths_;  // [chunk][group][style]
};

}  // namespace omicsfs::text
