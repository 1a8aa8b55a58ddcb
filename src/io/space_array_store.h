// The BPCells directory layout over any ByteSpace (a local directory, an HTTP store, an S3
// prefix): one object per array. Numeric objects carry an 8-byte ASCII magic (UINT32v1,
// UINT64v1, FLOATSv1, DOUBLEv1) then little-endian values; string arrays are text, one value per
// line; `version` holds the version string and a newline.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "io/array_store.h"
#include "io/byte_source.h"

namespace omicsfs::io {

class SpaceArrayStore : public ArrayStore {
 public:
  // Lists the space's root once and opens every object: which arrays exist, their types and
  // lengths. Reads then go to those objects, which refuse bytes changed since (ESTALE).
  static Result<std::unique_ptr<SpaceArrayStore>> Open(std::shared_ptr<const ByteSpace> space);

  const std::string& Describe() const override { return space_->Describe(); }
  Result<std::string> Version() const override;
  Result<std::optional<ArrayInfo>> Info(const std::string& name) const override;
  Status Read(const std::string& name, ElemType type, uint64_t first, uint64_t count,
              void* out) const override;
  Result<std::vector<std::string>> ReadStrings(const std::string& name) const override;

 private:
  struct Entry {
    std::shared_ptr<const ByteSource> source;
    bool numeric = false;
    ElemType type = ElemType::kString;
    // Neither a numeric header nor text (control bytes where a header belongs): a damaged array.
    std::string bad_header;
  };
  explicit SpaceArrayStore(std::shared_ptr<const ByteSpace> space) : space_(std::move(space)) {}

  std::shared_ptr<const ByteSpace> space_;
  std::map<std::string, Entry> entries_;
};

// The text of the small object `key` up to its first newline (one trailing '\r' stripped).
// NotFound when there is no such object.
Result<std::string> ReadFirstLine(const ByteSpace& space, const std::string& key);

}  // namespace omicsfs::io
