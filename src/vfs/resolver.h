// Folders made on lookup: a directory may carry a DirResolver, asked when a lookup inside it
// misses whether the name is one of its hidden children (slices such as `region=chr20:1-2000000`).
// Tree::Lookup then adds the child (hidden: never listed) with a DirLoader, and the usual lazy
// load builds its contents when it is looked into. The loaded tree's root may carry a resolver
// of its own (so such folders compose), as may any directory in it.
//
// MadeFolders is the tree's book of the folders made so: per store (the outermost directory
// carrying a resolver above them), which are alive and when each was last used, so that the
// least recently used ones nobody holds can be dropped past the store's bound.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "vfs/node.h"

namespace omicsfs::vfs {

// What a resolver answers for a name it knows: the new directory's metadata and how to build
// its contents (as DirLoader::load: a fresh tree whose root stands for the directory, built
// without any tree lock held and never failing: problems become ERROR.txt there).
struct ResolvedDir {
  mode_t perm = 0555;  // write bits are dropped (read-only)
  struct timespec mtime {};
  uid_t uid = 0;
  gid_t gid = 0;
  std::function<std::unique_ptr<Tree>()> load;  // empty: an empty directory
  // For a folder built from inputs that may change while mounted (a slice's list files): true
  // while they are as they were when it was resolved. Asked on every lookup of the folder (no
  // tree lock held; cheap: a stat); a stale folder is dropped and resolved anew (a new inode;
  // files open in the old one keep their bytes). Such a folder's entry is never cached by the
  // kernel. Empty: always current.
  std::function<bool()> current;
};

class DirResolver {
 public:
  static constexpr size_t kDefaultMaxFolders = 64;

  // `max_folders`: how many made folders the store keeps (when this resolver is the store's,
  // the outermost one); at least 1.
  explicit DirResolver(size_t max_folders = kDefaultMaxFolders)
      : max_folders_(max_folders < 1 ? 1 : max_folders) {}
  virtual ~DirResolver() = default;

  // Whether `name` is a hidden child of the directory. Cheap (parses the name, no I/O); called
  // without any tree lock held, possibly by several threads at once and more than once per name.
  virtual std::optional<ResolvedDir> Resolve(std::string_view name) const = 0;

  size_t max_folders() const { return max_folders_; }

 private:
  size_t max_folders_;
};

// The tree's book of made folders. Add/Remove/Oldest: under the tree's exclusive lock;
// Touch/StoreOver/Has: under its shared lock (they only read the maps; the times are atomics).
class MadeFolders {
 public:
  void Add(Ino folder, Ino store, size_t max_folders);
  void Remove(Ino folder);  // detached (no-op for a folder not in the book)
  bool Has(Ino folder) const { return folders_.count(folder) != 0; }
  size_t Size() const { return folders_.size(); }
  size_t Count(Ino store) const;
  // The store of `folder` when that store holds more folders than its bound, else 0.
  Ino StoreOver(Ino folder) const;
  bool Over(Ino store) const;
  // The store's folders, least recently used first (ties: the one made last first, so a folder
  // goes before the folder it was made in).
  std::vector<Ino> Oldest(Ino store) const;

  uint64_t Tick() const { return clock_.fetch_add(1, std::memory_order_relaxed) + 1; }
  void Touch(Ino folder, uint64_t tick) const;

 private:
  struct Folder {
    Folder(Ino s, uint64_t tick) : store(s), used(tick) {}  // clang 14 has no aggregate ()-init
    Ino store;
    mutable std::atomic<uint64_t> used;
  };
  struct Store {
    size_t max_folders = DirResolver::kDefaultMaxFolders;
    std::set<Ino> folders;
  };
  std::map<Ino, Folder> folders_;
  std::map<Ino, Store> stores_;
  mutable std::atomic<uint64_t> clock_{0};
};

}  // namespace omicsfs::vfs
