// In-memory BlobStore (tests, fuzzing): a sorted map of key → bytes.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>

#include "io/blob_store.h"

namespace omicsfs::io {

class MemoryBlobStore : public BlobStore {
 public:
  explicit MemoryBlobStore(std::map<std::string, std::string> blobs,
                           std::string describe = "(memory)")
      : blobs_(std::move(blobs)), describe_(std::move(describe)) {}
  const std::string& Describe() const override { return describe_; }
  Result<std::optional<std::string>> Get(const std::string& key) const override {
    auto it = blobs_.find(key);
    if (it == blobs_.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  }
  Result<std::vector<std::string>> List(const std::string& prefix) const override {
    const std::string p = prefix.empty() ? "" : prefix + "/";
    std::set<std::string> names;
    for (auto it = blobs_.lower_bound(p);
         it != blobs_.end() && it->first.compare(0, p.size(), p) == 0; ++it) {
      const std::string rest = it->first.substr(p.size());
      if (!rest.empty()) names.insert(rest.substr(0, rest.find('/')));
    }
    return std::vector<std::string>(names.begin(), names.end());
  }

 private:
  std::map<std::string, std::string> blobs_;
  std::string describe_;
};

}  // namespace omicsfs::io
