// BlobStore: key → optional bytes, for Zarr. A missing key is a value ("absent"), not an error.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/byte_source.h"
#include "util/parallel.h"
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
  // reader that needs a few parts pays less for them than for the whole (ByteSpace::
  // OpenForParts: local files, zip entries, a near server's objects, large listed S3 objects).
  // Unsupported elsewhere (small objects of a distant server: one request beats one per part).
  virtual Result<std::shared_ptr<const ByteSource>> OpenForParts(const std::string& key) const {
    return UnsupportedError(Describe() + ": no reads of parts of " + key);
  }
};

// The objects under `keys` (each as Get gives it), fetched `width` at a time: from a remote
// store one round trip for several, not one after another.
inline std::vector<Result<std::optional<std::string>>> GetAll(const BlobStore& blobs,
                                                              const std::vector<std::string>& keys,
                                                              unsigned width) {
  // A key whose Get did not finish (an exception in it) stays an error, never "absent".
  std::vector<Result<std::optional<std::string>>> got(
      keys.size(), InternalError(blobs.Describe() + ": not fetched"));
  (void)ParallelFor(keys.size(), width, [&](size_t i) -> Status {
    got[i] = blobs.Get(keys[i]);
    return OkStatus();
  });
  return got;
}

}  // namespace omicsfs::io
