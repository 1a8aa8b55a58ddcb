// The fragments of a store (or of a region slice of one) regrouped by cell group, for the
// groups of a groups=@NAME folder. One pass over the fragments, chunk by chunk, writes each
// group's fragments of the chunk side by side into an anonymous scratch file; a group's part of
// a chunk is then read back alone, so every group's views (sizes, text, region indexes) cost
// that group's fragments, not the store's, and the store is decoded once for all groups.
// Built on first use (thread-safe; a failed build is tried again by the next caller).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "formats/bpcells/fragments.h"
#include "util/file.h"

namespace omicsfs::formats::bpcells {

class FragmentPartition {
 public:
  // `chunks`: physical ranges of `base`, in the order its views show them; `group_of_cell`: per
  // cell ID of `base`, its group or -1 (in no group).
  FragmentPartition(std::shared_ptr<const Fragments> base,
                    std::vector<std::pair<uint64_t, uint64_t>> chunks,
                    std::vector<int32_t> group_of_cell, size_t groups,
                    std::vector<std::string> scratch_dirs);

  const Fragments& base() const { return *base_; }
  size_t groups() const { return groups_; }
  size_t chunks() const { return chunks_.size(); }
  // The fragments of `group` in chunk `k`, in stored order (cells as the base's IDs).
  Status Read(size_t group, uint64_t k, FragmentRange* out) const;

 private:
  Status Build() const;

  std::shared_ptr<const Fragments> base_;
  std::vector<std::pair<uint64_t, uint64_t>> chunks_;
  std::vector<int32_t> group_of_cell_;
  size_t groups_;
  std::vector<std::string> scratch_dirs_;
  mutable std::mutex mu_;
  mutable bool built_ = false;
  mutable std::optional<ScratchFile> file_;
  mutable std::vector<uint64_t>
      first_;  // per (chunk, group), and one past: its first fragment in the file
};

}  // namespace omicsfs::formats::bpcells
