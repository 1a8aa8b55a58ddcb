// BPCells fragments (packed or unpacked, v1 or v2): chromosome and cell names, chr_ptr
// [begin, end) pairs per chromosome ID (not necessarily monotone), and decoded fragment ranges.
// Packed stores keep `cell` as BP-128, `start` as BP-128d1 with `start_starts`, and end − start
// as BP-128. Validated up front; immutable and thread-safe after Open.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "formats/bpcells/bitpacked_array.h"
#include "formats/bpcells/version.h"
#include "io/array_store.h"

namespace omicsfs::formats::bpcells {

struct FragmentRange {
  std::vector<uint32_t> start, end, cell;  // end is exclusive (the stored coordinate)
};

// A physical range [begin, end) of fragments of chromosome `chr`.
struct FragmentRun {
  uint32_t chr = 0;
  uint64_t begin = 0, end = 0;
};

// 0-based half-open [begin, end) on a chromosome, as tabix reads a region CHR:BEG-END
// ([BEG-1, END)).
struct Interval {
  uint64_t begin = 0, end = 0;
};

// What a slice keeps: fragments overlapping a region (when any), of the chosen cells (when any).
struct FragmentSubset {
  // Per chromosome ID, the regions asked for (any order, may overlap); nullopt: every fragment.
  std::optional<std::vector<std::vector<Interval>>> regions;
  // Store cell IDs, in the order chosen (the slice's cell i is the store's cells[i]).
  std::optional<std::vector<uint32_t>> cells;
};

class Fragments {
 public:
  static Result<std::shared_ptr<const Fragments>> Open(std::shared_ptr<const io::ArrayStore> store);

  const std::string& Describe() const { return store_->Describe(); }
  uint64_t size() const { return count_; }
  const std::vector<std::string>& chr_names() const { return chr_names_; }
  const std::vector<std::string>& cell_names() const { return *cell_names_; }
  // Physical range [begin, end) of chromosome ID c.
  std::pair<uint64_t, uint64_t> ChrRange(size_t c) const {
    return {chr_ptr_[2 * c], chr_ptr_[2 * c + 1]};
  }

  // The largest end coordinate, from the stored `end_max` array (the running maximum per block
  // of 128 fragments); nullopt when the store has none. Reads n/128 values: call it once.
  Result<std::optional<uint64_t>> MaxEnd() const;

  // Fragments [i0, i1) in physical order; validates cell IDs and end >= start. A slice's Read
  // returns only the fragments of its subset among them, cells numbered as its cell_names().
  Status Read(uint64_t i0, uint64_t i1, FragmentRange* out) const;

  // A slice: the same API over the fragments overlapping `subset.regions` (an overlap as tabix
  // sees one: start < END and end > BEG-1), of the chosen cells; chromosome ranges are found
  // with the store's end_max (the running maximum end per 128 fragments) and a search on start,
  // so a region costs its own fragments, not the chromosome's. Cell names: the chosen ones.
  // `root` may be a region slice (its runs are kept) when only cells are chosen.
  static Result<std::shared_ptr<const Fragments>> Slice(std::shared_ptr<const Fragments> root,
                                                        FragmentSubset subset);
  // The physical ranges the views show, in view order: chromosomes by ID; a region slice's
  // candidate ranges (whose fragments Read still filters).
  const std::vector<FragmentRun>& runs() const { return runs_; }
  bool sliced() const { return sliced_; }

 private:
  Fragments() = default;
  // Physical [lo, hi) of chromosome c holding every fragment that overlaps [b, e) (and maybe more).
  Result<std::pair<uint64_t, uint64_t>> Seek(size_t c, uint64_t b, uint64_t e) const;
  Result<uint32_t> StartAt(uint64_t i) const;
  // Drops from `f` (fragments from physical i0) what the subset does not keep.
  void Filter(uint64_t i0, FragmentRange* f) const;

  std::shared_ptr<const io::ArrayStore> store_;
  StoreVersion version_;
  uint64_t count_ = 0;
  std::vector<uint64_t> chr_ptr_;
  std::vector<std::string> chr_names_;
  // Shared by a store's slices that keep every cell (region slices); a cells slice has its own.
  std::shared_ptr<const std::vector<std::string>> cell_names_;
  std::optional<BitpackedArray> cell_, start_, end_;
  std::vector<FragmentRun> runs_;
  bool sliced_ = false;
  std::vector<std::vector<Interval>> regions_;  // per chromosome, sorted and merged; empty: all
  std::vector<int32_t> cell_map_;               // store cell ID → slice cell ID or -1; empty: all
  uint64_t store_cells_ = 0;  // the store's cell count (IDs are checked against it)
};

}  // namespace omicsfs::formats::bpcells
