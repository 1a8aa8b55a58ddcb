// HDF5 files along the daemon's own path: discovery of the file as SOURCE (so the vetting helper
// omicsfs-h5vet parses it first, in a process of its own, exactly as in the daemon), then every
// view of every store found read in full. libhdf5 crashes on some damaged files by design
// (docs/robustness.md); the helper takes those. A crash in this process is a file the helper let
// through that still breaks the daemon.
#include <unistd.h>

#include <fstream>
#include <string>

#include "cache/cache_pool.h"
#include "vfs/discover.h"

namespace {

void ReadAll(const omicsfs::vfs::Tree& tree, omicsfs::vfs::Ino ino) {
  auto entries = tree.ReadDir(ino);
  if (!entries.ok()) {  // a file
    for (uint64_t off = 0;; off += 1 << 20) {
      auto pieces = tree.Read(ino, off, 1 << 20);
      if (!pieces.ok()) return;
      uint64_t got = 0;
      for (const auto& p : *pieces) got += p.length;
      if (got < (1 << 20)) return;
    }
  }
  for (const auto& e : *entries) {
    if (e.name != "." && e.name != "..") ReadAll(tree, e.ino);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace omicsfs;
  static const std::string path = "/tmp/fuzz_h5_" + std::to_string(::getpid()) + ".h5";
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), size);
  cache::CachePool pool(64 << 20);
  vfs::DiscoverOptions options;
  options.pool = &pool;
  options.h5vet.helper = OMICSFS_H5VET;
  options.h5vet.timeout_s = 20;
  auto tree = vfs::Discover(path, options);
  if (tree.ok()) ReadAll(**tree, vfs::kRootIno);
  return 0;
}
