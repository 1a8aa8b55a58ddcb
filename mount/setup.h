// What the commands check and prepare before they start: the mountpoint, index_dir, and the
// contents of the hidden control folder (MOUNT/.omicsfs/).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cache/cache_pool.h"
#include "io/remote/remote.h"
#include "text/virtual_file.h"
#include "util/status.h"
#include "vfs/tree.h"
#include "vfs/withdrawals.h"

namespace omicsfs::mount {

// Refuses a mountpoint that cannot work, with one line saying why: missing; not a directory; a
// dead mount ("Transport endpoint is not connected", with how to recover); already an omicsfs
// mount; inside SOURCE, or SOURCE inside it (the daemon would read its own tree). Warns when it
// is not empty.
Status CheckMountpoint(const std::string& mountpoint, const std::string& source);

// The index directory to use: an existing directory, or one created when at most its last two
// levels are missing under an existing writable directory other than `/` (so a typo never
// creates a tree under `/`). A path that exists and is not a directory is an error. Any other
// problem is an error for a named index_dir and, for the default one, a warning and "" (indexes
// then stay in memory).
Result<std::string> PrepareIndexDir(const std::string& dir, bool named);

// Where a mount's numbers come from, for MOUNT/.omicsfs/status.
struct StatusSources {
  std::string source, mountpoint, index_dir, log_file;
  const cache::CachePool* pool = nullptr;
  std::shared_ptr<vfs::Tree>* tree = nullptr;  // the served tree (the daemon's; outlives reads)
  const io::RemoteSource* remote = nullptr;    // a remote SOURCE's client and block cache
  const text::SizingOptions::Progress* sizing = nullptr;  // chunks the sizing passes read
  const vfs::Withdrawals* withdrawals = nullptr;          // files not listed: they cannot exist
};

// The files of MOUNT/.omicsfs/: `errors` (the last warnings and errors the daemon logged) and
// `status` (source, cache and index figures), generated when read.
std::vector<std::pair<std::string, std::shared_ptr<const vfs::FileContent>>> ControlFiles(
    StatusSources sources);

}  // namespace omicsfs::mount
