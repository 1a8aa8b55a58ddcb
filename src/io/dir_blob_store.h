// Directory BlobStore: key = relative path below the root directory.
#pragma once

#include "io/blob_store.h"

namespace omicsfs::io {

class DirBlobStore : public BlobStore {
 public:
  explicit DirBlobStore(std::string root, size_t max_blob = size_t{1} << 31)
      : root_(std::move(root)), max_blob_(max_blob) {}
  const std::string& Describe() const override { return root_; }
  Result<std::optional<std::string>> Get(const std::string& key) const override;
  Result<std::vector<std::string>> List(const std::string& prefix) const override;

 private:
  std::string root_;
  size_t max_blob_;
};

}  // namespace omicsfs::io
