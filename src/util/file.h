// RAII file descriptor and positional reads: stateless, safe from many threads.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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

  // Opens read-only (O_CLOEXEC; O_NOFOLLOW when `nofollow`; O_NONBLOCK when `nonblocking`: a
  // FIFO's open returns at once instead of waiting for a writer).
  static Result<File> OpenReadOnly(const std::string& path, bool nofollow = false,
                                   bool nonblocking = false);
  // Takes ownership of an open descriptor.
  static File Adopt(int fd, std::string path) {
    File f;
    f.fd_ = fd;
    f.path_ = std::move(path);
    return f;
  }

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

// An anonymous scratch file (O_TMPFILE: unlinked, gone when closed) for derived data.
class ScratchFile {
 public:
  // Creates it in the first usable directory of `dirs` (then $TMPDIR, /tmp).
  static Result<ScratchFile> Create(const std::vector<std::string>& dirs);
  Status WriteAt(uint64_t offset, const void* data, size_t length);
  const File& file() const { return file_; }

 private:
  File file_;
};

// Whether time a is after time b.
inline bool Later(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec);
}

// Detects source files changed after their store was fingerprinted. `since` is the newest
// ctime/mtime seen then; a file written, replaced, renamed or chmod-ed later carries a newer
// ctime (the filesystem's own clock, so NFS client skew does not matter). Reads check after
// reading, so bytes written during the read are caught too. Inactive guards accept everything.
struct ChangeGuard {
  struct timespec since {};
  bool active = false;

  // Widens `since` to cover a file seen while fingerprinting.
  void Observe(const struct stat& st);
  // ESTALE (an Io status naming the file) when `f` changed after `since`.
  Status Check(const File& f) const;
  // The same for a path that no longer opens, or whose directory changed (a removed chunk).
  Status CheckPath(const std::string& path) const;
  bool ChangedSince(const struct stat& st) const;
};

// Sets a file's mtime to now (best effort): derived files record their last use this way.
void TouchFile(const std::string& path);

// Reads a whole (small) regular file into a string (anything else is refused, a FIFO without
// waiting for its writer); with a guard, refuses a file changed since; `st` receives its stat.
Result<std::string> ReadWholeFile(const std::string& path, size_t max_bytes = 1 << 20,
                                  const ChangeGuard* guard = nullptr, struct stat* st = nullptr);

}  // namespace omicsfs
