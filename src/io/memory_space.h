// In-memory backend of the storage seam (tests, fuzzing): a sorted map of key → bytes.
#pragma once

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "io/byte_source.h"

namespace omicsfs::io {

class MemoryByteSource : public ByteSource {
 public:
  MemoryByteSource(std::string describe, std::string bytes)
      : describe_(std::move(describe)), bytes_(std::move(bytes)) {
    info_.size = bytes_.size();
    info_.stamp = std::to_string(bytes_.size());
  }
  const std::string& Describe() const override { return describe_; }
  const ObjectInfo& Info() const override { return info_; }
  Status ReadExact(uint64_t offset, void* out, size_t length) const override {
    if (offset > bytes_.size() || length > bytes_.size() - offset) {
      return CorruptError(describe_ + ": bytes " + std::to_string(offset) + "+" +
                          std::to_string(length) + " lie past its end (" +
                          std::to_string(bytes_.size()) + " bytes)");
    }
    if (length > 0) std::memcpy(out, bytes_.data() + offset, length);
    return OkStatus();
  }

 private:
  std::string describe_;
  std::string bytes_;
  ObjectInfo info_;
};

class MemoryByteSpace : public ByteSpace {
 public:
  explicit MemoryByteSpace(std::map<std::string, std::string> objects,
                           std::string describe = "(memory)")
      : objects_(std::move(objects)), describe_(std::move(describe)) {}
  const std::string& Describe() const override { return describe_; }
  Result<std::shared_ptr<const ByteSource>> Open(const std::string& key) const override {
    RETURN_IF_ERROR(CheckKey(*this, key));
    auto it = objects_.find(key);
    if (it == objects_.end()) return std::shared_ptr<const ByteSource>();
    return std::shared_ptr<const ByteSource>(
        std::make_shared<const MemoryByteSource>(Where(key), it->second));
  }
  Result<std::vector<ListEntry>> List(const std::string& prefix) const override {
    if (!prefix.empty()) RETURN_IF_ERROR(CheckKey(*this, prefix));
    const std::string p = prefix.empty() ? "" : prefix + "/";
    std::vector<ListEntry> out;
    for (auto it = objects_.lower_bound(p);
         it != objects_.end() && it->first.compare(0, p.size(), p) == 0; ++it) {
      const std::string rest = it->first.substr(p.size());
      const size_t slash = rest.find('/');
      ListEntry e;
      e.name = rest.substr(0, slash);
      e.kind = slash == std::string::npos ? EntryKind::kFile : EntryKind::kDirectory;
      if (e.kind == EntryKind::kFile) e.info.size = it->second.size();
      if (out.empty() || out.back().name != e.name) out.push_back(std::move(e));
    }
    return out;
  }

 private:
  std::map<std::string, std::string> objects_;
  std::string describe_;
};

}  // namespace omicsfs::io
