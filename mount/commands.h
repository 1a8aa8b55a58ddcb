// The commands: mount, ls, cat, index. Each returns the process exit code of product.md
// (0 ok, 1 usage, 2 SOURCE unusable, 3 mount failed) or 4: a file could not be read (cat, index).
#pragma once

#include "mount/options.h"

namespace omicsfs::mount {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 1;
inline constexpr int kExitSource = 2;
inline constexpr int kExitMount = 3;
inline constexpr int kExitRead = 4;

int RunMount(const Options& options, const char* argv0);
int RunLs(const Options& options);
int RunCat(const Options& options);
int RunIndex(const Options& options);

}  // namespace omicsfs::mount
