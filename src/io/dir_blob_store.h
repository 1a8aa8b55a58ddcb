// Directory BlobStore: key = relative path below the root directory.
#pragma once

#include "io/blob_store.h"
#include "util/file.h"

namespace omicsfs::io {

class DirBlobStore : public BlobStore {
 public:
  // With an active guard, a blob (or a missing blob's directory) changed since the store was
  // fingerprinted is refused: an open view never mixes old and new bytes.
  explicit DirBlobStore(std::string root, size_t max_blob = size_t{1} << 31, ChangeGuard guard = {})
      : root_(std::move(root)), max_blob_(max_blob), guard_(guard) {}
  const std::string& Describe() const override { return root_; }
  Result<std::optional<std::string>> Get(const std::string& key) const override;
  Result<std::vector<std::string>> List(const std::string& prefix) const override;

 private:
  Status CheckAbsent(const std::string& key) const;

  std::string root_;
  size_t max_blob_;
  ChangeGuard guard_;
};

}  // namespace omicsfs::io
