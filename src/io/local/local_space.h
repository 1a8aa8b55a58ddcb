// The local backend of the storage seam: a directory's files. Objects are opened per read (no
// descriptor is held per file: a mount of 2 TB of stores would run out of them), and every read
// checks the file against the store's ChangeGuard after reading, so bytes written during the
// read are caught too.
#pragma once

#include <sys/stat.h>

#include <memory>
#include <string>
#include <utility>

#include "io/byte_source.h"
#include "util/file.h"

namespace omicsfs::io {

// What a stat says of a file, in the seam's terms (stamp: size, mtime, ctime, mode, inode).
ObjectInfo LocalObjectInfo(const struct stat& st);

class LocalByteSource : public ByteSource {
 public:
  // `st`: the file as it was opened. With an inactive `guard`, the source guards itself from
  // `st`: a read of the file changed since is ESTALE.
  LocalByteSource(std::string path, const struct stat& st, ChangeGuard guard);
  // Opens `path` (a regular file); NotFound when missing, Io otherwise.
  static Result<std::shared_ptr<const LocalByteSource>> OpenPath(const std::string& path,
                                                                 ChangeGuard guard = {});

  const std::string& Describe() const override { return path_; }
  const ObjectInfo& Info() const override { return info_; }
  Status ReadExact(uint64_t offset, void* out, size_t length) const override;
  // What its reads check the file against (readers that open the path themselves check it too).
  const ChangeGuard& guard() const { return guard_; }

 private:
  std::string path_;
  ObjectInfo info_;
  ChangeGuard guard_;
};

class LocalByteSpace : public ByteSpace {
 public:
  // With an active guard, an object (or a missing object's directory) changed since the store was
  // fingerprinted is refused: an open view never mixes old and new bytes.
  explicit LocalByteSpace(std::string root, ChangeGuard guard = {})
      : root_(std::move(root)), guard_(guard) {}
  const std::string& Describe() const override { return root_; }
  Result<std::shared_ptr<const ByteSource>> Open(const std::string& key) const override;
  Result<std::vector<ListEntry>> List(const std::string& prefix) const override;
  Result<std::optional<std::string>> Get(const std::string& key, uint64_t max_bytes) const override;

 private:
  Result<std::optional<std::pair<File, struct stat>>> OpenFile(const std::string& key) const;
  // Absent is a value only if the nearest existing directory above `key` is as it was.
  Status CheckAbsent(const std::string& key) const;

  std::string root_;
  ChangeGuard guard_;
};

}  // namespace omicsfs::io
