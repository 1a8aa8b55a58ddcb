// BlobStore: key → optional bytes, for Zarr. A missing key is a value ("absent"), not an error.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/byte_source.h"
#include "util/status.h"

namespace omicsfs::io {

class BlobStore {
 public:
  virtual ~BlobStore() = default;
  virtual const std::string& Describe() const = 0;
  // The bytes under `key` ("a/b/.zarray", "call_DP/0.1"), nullopt when absent.
  virtual Result<std::optional<std::string>> Get(const std::string& key) const = 0;
  // Names directly under `prefix` ("" = the root), sorted; directories and files alike.
  virtual Result<std::vector<std::string>> List(const std::string& prefix) const = 0;
  // Gets worth having in flight at once for one reader (ByteSpace::Parallelism).
  virtual unsigned Parallelism() const { return 1; }
  // The object under `key` for positional reads of parts of it (nullptr when absent), where a
  // part costs less than the whole and no round trip of its own (local files, zip entries).
  // Unsupported elsewhere (remote objects: one request for the whole beats one per part).
  virtual Result<std::shared_ptr<const ByteSource>> OpenForParts(const std::string& key) const {
    return UnsupportedError(Describe() + ": no reads of parts of " + key);
  }
};

}  // namespace omicsfs::io
