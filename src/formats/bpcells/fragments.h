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

class Fragments {
 public:
  static Result<std::shared_ptr<const Fragments>> Open(std::shared_ptr<const io::ArrayStore> store);

  const std::string& Describe() const { return store_->Describe(); }
  uint64_t size() const { return count_; }
  const std::vector<std::string>& chr_names() const { return chr_names_; }
  const std::vector<std::string>& cell_names() const { return cell_names_; }
  // Physical range [begin, end) of chromosome ID c.
  std::pair<uint64_t, uint64_t> ChrRange(size_t c) const { return {chr_ptr_[2 * c], chr_ptr_[2 * c + 1]}; }

  // The largest end coordinate, from the stored `end_max` array (the running maximum per block
  // of 128 fragments); nullopt when the store has none. Reads n/128 values: call it once.
  Result<std::optional<uint64_t>> MaxEnd() const;

  // Fragments [i0, i1) in physical order; validates cell IDs and end >= start.
  Status Read(uint64_t i0, uint64_t i1, FragmentRange* out) const;

 private:
  Fragments() = default;

  std::shared_ptr<const io::ArrayStore> store_;
  StoreVersion version_;
  uint64_t count_ = 0;
  std::vector<uint64_t> chr_ptr_;
  std::vector<std::string> chr_names_, cell_names_;
  std::optional<BitpackedArray> cell_, start_, end_;
};

}  // namespace omicsfs::formats::bpcells
