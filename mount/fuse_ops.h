// libfuse low-level glue: each handler maps (ino, offset, size) to one vfs call and replies
// exactly once. No exception crosses into libfuse; no lock is held across a reply.
#pragma once

#include <fuse_lowlevel.h>

#include <map>
#include <memory>
#include <mutex>

#include "cache/cache_pool.h"
#include "vfs/tree.h"

namespace omicsfs::mount {

// Open file handles: `fi->fh` points at the content an open file reads (no lock on reads); the
// table owns them, so handles whose release never arrived (unmounted meanwhile) are freed too.
class OpenFiles {
 public:
  OpenFiles() = default;
  OpenFiles(const OpenFiles&) = delete;
  OpenFiles& operator=(const OpenFiles&) = delete;
  uint64_t Add(std::shared_ptr<const vfs::FileContent> content);
  static const vfs::FileContent* Get(uint64_t fh) {
    return fh ? reinterpret_cast<const std::shared_ptr<const vfs::FileContent>*>(fh)->get()
              : nullptr;
  }
  void Remove(uint64_t fh);

 private:
  std::mutex mu_;
  std::map<uint64_t, std::unique_ptr<std::shared_ptr<const vfs::FileContent>>> handles_;
};

struct Daemon {
  std::shared_ptr<vfs::Tree> tree;
  OpenFiles open_files;
  cache::CachePool* pool = nullptr;
  bool direct_io = false;
  // Long: a rescan that changes the tree tells the kernel which entries and inodes to drop.
  double timeout_s = 3600.0;
};

// The operation table (assign_operations in one place).
const fuse_lowlevel_ops& Operations();

}  // namespace omicsfs::mount
