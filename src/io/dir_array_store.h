// BPCells directory backend: one file per array. Numeric files carry an 8-byte ASCII magic
// (UINT32v1, UINT64v1, FLOATSv1, DOUBLEv1) then little-endian values; string arrays are text,
// one value per line; `version` holds the version string and a newline.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "io/array_store.h"
#include "util/file.h"

namespace omicsfs::io {

class DirArrayStore : public ArrayStore {
 public:
  // Scans `dir` once: which arrays exist, their types and lengths. Files are opened per read;
  // with an active guard, every read refuses a file changed since the store was fingerprinted.
  static Result<std::unique_ptr<DirArrayStore>> Open(const std::string& dir, ChangeGuard guard = {});

  const std::string& Describe() const override { return dir_; }
  Result<std::string> Version() const override;
  Result<std::optional<ArrayInfo>> Info(const std::string& name) const override;
  Status Read(const std::string& name, ElemType type, uint64_t first, uint64_t count,
              void* out) const override;
  Result<std::vector<std::string>> ReadStrings(const std::string& name) const override;

 private:
  struct Entry {
    bool numeric = false;
    ElemType type = ElemType::kString;
    uint64_t file_size = 0;
    // Neither a numeric header nor text (control bytes where a header belongs): a damaged array.
    std::string bad_header;
  };
  DirArrayStore(std::string dir, ChangeGuard guard) : dir_(std::move(dir)), guard_(guard) {}
  std::string PathOf(const std::string& name) const { return dir_ + "/" + name; }

  std::string dir_;
  ChangeGuard guard_;
  std::map<std::string, Entry> entries_;
};

// Reads a BPCells-style version file: the text up to the first newline (one trailing '\r'
// stripped). Returns NotFound when there is no such file.
Result<std::string> ReadVersionFile(const std::string& path);

}  // namespace omicsfs::io
