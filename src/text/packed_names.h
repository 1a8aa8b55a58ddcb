// Names laid end to end, each followed by one end byte, for a renderer that copies many of them
// in an order of its own (the cell column of fragments): one contiguous run, in place of a heap
// string each, so a line costs one cache miss for its name instead of two dependent ones.
// Built on first use; immutable after; shared by the views over the same names.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace omicsfs::text {

class PackedNames {
 public:
  struct Table {
    std::string bytes;         // name 0, end, name 1, end, …
    std::vector<uint64_t> at;  // name i with its end byte is bytes[at[i], at[i+1])
    std::string_view Line(uint32_t i) const { return {bytes.data() + at[i], at[i + 1] - at[i]}; }
  };
  // `names` (kept alive by `owner`) must not change after.
  PackedNames(std::shared_ptr<const void> owner, const std::vector<std::string>* names, char end)
      : owner_(std::move(owner)), names_(names), end_(end) {}
  const Table& Get() const {
    std::call_once(once_, [this] {
      table_.at.reserve(names_->size() + 1);
      for (const std::string& n : *names_) {
        table_.at.push_back(table_.bytes.size());
        table_.bytes += n;
        table_.bytes.push_back(end_);
      }
      table_.at.push_back(table_.bytes.size());
    });
    return table_;
  }

 private:
  std::shared_ptr<const void> owner_;
  const std::vector<std::string>* names_;
  char end_;
  mutable std::once_flag once_;
  mutable Table table_;
};

}  // namespace omicsfs::text
