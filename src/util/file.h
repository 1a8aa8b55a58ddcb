// RAII file descriptor and positional reads: stateless, safe from many threads.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "util/status.h"

namespace omicsfs {

class File {
 public:
  File() = default;
  ~File();
  File(File&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }
  File& operator=(File&& o) noexcept;
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  // Opens read-only (O_CLOEXEC; O_NOFOLLOW when `nofollow`).
  static Result<File> OpenReadOnly(const std::string& path, bool nofollow = false);

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

  // Reads exactly `length` bytes at `offset`; a short file is Corrupt (names path and range).
  Status ReadExact(uint64_t offset, void* out, size_t length) const;
  // Reads up to `length` bytes at `offset`; returns the count (short only at end of file).
  Result<size_t> ReadAt(uint64_t offset, void* out, size_t length) const;
  Result<struct stat> Stat() const;

 private:
  int fd_ = -1;
  std::string path_;
};

// Reads a whole (small) file into a string.
Result<std::string> ReadWholeFile(const std::string& path, size_t max_bytes = 1 << 20);

}  // namespace omicsfs
