// libfuse low-level glue: each handler maps (ino, offset, size) to one vfs call and replies
// exactly once. No exception crosses into libfuse; no lock is held across a reply.
#pragma once

#include <fuse_lowlevel.h>

#include <memory>

#include "cache/cache_pool.h"
#include "vfs/tree.h"

namespace omicsfs::mount {

struct Daemon {
  std::shared_ptr<vfs::Tree> tree;
  cache::CachePool* pool = nullptr;
  bool direct_io = false;
  // Long: a rescan that changes the tree tells the kernel which entries and inodes to drop.
  double timeout_s = 3600.0;
};

// The operation table (assign_operations in one place).
const fuse_lowlevel_ops& Operations();

}  // namespace omicsfs::mount
