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

// Reads every file below `ino`: its first 8 MiB and its last 64 KiB (a damaged shape can make a
// view of many gigabytes; the ends and the sizing pass still run every code path).
void ReadAll(const omicsfs::vfs::Tree& tree, omicsfs::vfs::Ino ino) {
  auto entries = tree.ReadDir(ino);
  if (!entries.ok()) {  // a file
    constexpr uint64_t kStep = 1 << 20, kHead = 8 << 20, kTail = 64 << 10;
    for (uint64_t off = 0; off < kHead; off += kStep) {
      auto pieces = tree.Read(ino, off, kStep);
      if (!pieces.ok()) return;
      uint64_t got = 0;
      for (const auto& p : *pieces) got += p.length;
      if (got < kStep) return;
    }
    auto content = tree.Open(ino, 0);
    if (!content.ok()) return;
    auto size = (*content)->Size();
    if (size.ok() && *size > kHead + kTail) (void)tree.Read(ino, *size - kTail, kTail);
    return;
  }
  for (const auto& e : *entries) {
    if (e.name != "." && e.name != "..") ReadAll(tree, e.ino);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace omicsfs;
  static const std::string path = "/tmp/fuzz_h5_" + std::to_string(::getpid()) + ".h5";
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), size);
  cache::CachePool pool(64 << 20);
  vfs::DiscoverOptions options;
  options.pool = &pool;
  options.h5vet.helper = OMICSFS_H5VET;
  // A seed is vetted in well under a second even under the sanitizers; inputs that send libhdf5
  // into an endless loop cost the whole timeout each (CI's smoke run took 23 s or 203 s by how
  // many such inputs its mutations met).
  options.h5vet.timeout_s = 5;
  options.h5vet.full_read_bytes = 4 << 20;  // the seeds are smaller: still read whole
  auto tree = vfs::Discover(path, options);
  if (tree.ok()) ReadAll(**tree, vfs::kRootIno);
  return 0;
}
