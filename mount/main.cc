// omicsfs: options → command (mount / ls / cat). Exit codes: 0 ok, 1 usage, 2 SOURCE unusable,
// 3 mount failed.
#include <malloc.h>

#include <cstdio>

#include "mount/commands.h"
#include "mount/options.h"
#include "util/log.h"

int main(int argc, char** argv) {
  using namespace omicsfs::mount;
  // Rendered chunks (hundreds of KiB) are allocated and freed at a high rate: grow the heaps in
  // 64 MiB steps instead of one system call per chunk (measured, `cat` of a 2 GB datg view:
  // 6.6 → 4.0 s with a 2 GiB cache, 4.4 → 3.7 s with 256 MiB; system time 5.0 → 1.3 s). RSS
  // stays bounded: the cache trims freed memory after evictions (cache/cache_pool.cc).
  mallopt(M_TOP_PAD, 64 << 20);
  // One arena for all threads, no mmap for buffers up to 32 MiB and no automatic trimming: a
  // buffer freed by one thread (an evicted chunk) is reused by the next allocation on any thread
  // without faulting its pages in again. Per-thread arenas fragmented (RSS 390 MB at a 256 MiB
  // cache without trimming) and trimming after every eviction made ~1/3 of the CPU time of a
  // VCF `cat` page faults; the cache now trims only when RSS passes its budget plus a slack
  // (cache/cache_pool.cc). Measured, VCF `cat`: 1.6 → 1.2 s, page faults 335 k → 80 k.
  mallopt(M_ARENA_MAX, 1);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  auto options = ParseOptions(argc, argv);
  if (!options.ok()) {
    std::fprintf(stderr, "omicsfs: %s\nTry 'omicsfs --help'.\n",
                 options.status().message().c_str());
    return kExitUsage;
  }
  if (options->debug) omicsfs::SetLogLevel(omicsfs::LogLevel::kDebug);
  switch (options->command) {
    case Command::kHelp:
      std::fputs(UsageText().c_str(), stdout);
      return kExitOk;
    case Command::kVersion:
      std::printf("omicsfs %s\n", OMICSFS_VERSION);
      return kExitOk;
    case Command::kLs:
      return RunLs(*options);
    case Command::kCat:
      return RunCat(*options);
    case Command::kIndex:
      return RunIndex(*options);
    case Command::kMount:
      return RunMount(*options, argv[0]);
  }
  return kExitUsage;
}
