// BlobStore over any ByteSpace (a local directory, an HTTP store, an S3 prefix, a zip archive):
// key = the object's key below the space's root. Blobs larger than `max_blob` are refused.
#pragma once

#include <memory>

#include "io/blob_store.h"
#include "io/byte_source.h"

namespace omicsfs::io {

class SpaceBlobStore : public BlobStore {
 public:
  explicit SpaceBlobStore(std::shared_ptr<const ByteSpace> space,
                          uint64_t max_blob = uint64_t{1} << 31)
      : space_(std::move(space)), max_blob_(max_blob) {}
  const std::string& Describe() const override { return space_->Describe(); }
  Result<std::optional<std::string>> Get(const std::string& key) const override {
    return space_->Get(key, max_blob_);
  }
  Result<std::vector<std::string>> List(const std::string& prefix) const override {
    ASSIGN_OR_RETURN(std::vector<ListEntry> entries, space_->List(prefix));
    std::vector<std::string> names;
    names.reserve(entries.size());
    for (auto& e : entries) names.push_back(std::move(e.name));
    return names;
  }
  unsigned Parallelism() const override { return space_->Parallelism(); }
  Result<std::shared_ptr<const ByteSource>> OpenForParts(const std::string& key) const override {
    return space_->OpenForParts(key);
  }
  const std::shared_ptr<const ByteSpace>& space() const { return space_; }

 private:
  std::shared_ptr<const ByteSpace> space_;
  uint64_t max_blob_;
};

}  // namespace omicsfs::io
