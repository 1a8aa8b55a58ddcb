// Discovery's wiring: SOURCE as a folder (local, or a ByteSpace), the one walk over it, and the
// hidden control folder.
#include "vfs/discover.h"

#include "util/fs.h"
#include "util/log.h"
#include "vfs/kinds/registry.h"
#include "vfs/local_folder.h"
#include "vfs/space_folder.h"
#include "vfs/walk.h"

namespace omicsfs::vfs {
namespace {

// The hidden control folder: found by lookup, never listed.
void AddControlFolder(Tree& tree, const DiscoverOptions& options) {
  if (options.control_files.empty()) return;
  const Node& root = tree.root();
  if (auto it = root.children.find(kControlDir); it != root.children.end()) {
    // Copied with an unchanged single-store root on a rescan, or a real file of that name.
    if (!tree.node(it->second).hidden) {
      LogWarning(std::string("SOURCE has an entry named ") + kControlDir +
                 "; the control folder is not shown");
    }
    return;
  }
  Meta meta;
  meta.perm = root.perm & 0444;
  meta.mtime = root.mtime;
  meta.uid = root.uid;
  meta.gid = root.gid;
  TreeWriter out(&tree);
  const Ino dir = out.AddDir(kRootIno, kControlDir, meta, /*from_file=*/true);
  tree.node(dir).hidden = true;
  for (const auto& [name, content] : options.control_files) out.AddFile(dir, name, meta, content);
}

std::shared_ptr<const WalkSettings> SettingsOf(const DiscoverOptions& options) {
  auto s = std::make_shared<WalkSettings>();
  s->views.pool = options.pool;
  s->views.sizing = options.sizing;
  s->views.index_dir = options.index_dir;
  s->views.lists_dir = options.lists_dir;
  s->views.withdrawals = options.withdrawals;
  s->h5vet = options.h5vet;
  s->h5vet.store_marks = Hdf5StoreMarks();  // the groups the helper vets: those some kind opens
  return s;
}

}  // namespace

Result<std::shared_ptr<Tree>> Discover(const std::string& source, const DiscoverOptions& options) {
  if (options.pool == nullptr) return InternalError("Discover: no cache pool");
  auto tree = std::make_shared<Tree>();
  Walker walker(tree.get(), SettingsOf(options), options.previous);
  if (options.space != nullptr) {
    auto [folder, entry] = SpaceFolder::Source(options.space, options.space_key);
    RETURN_IF_ERROR(walker.AddSource(*folder, entry));
  } else {
    // Absolute paths: the daemon changes directory to / when it detaches.
    fs_error ec;
    std::string absolute = fs::absolute(source, ec).lexically_normal().string();
    if (ec) return IoError(source, ec.value());
    if (absolute.size() > 1 && absolute.back() == '/') absolute.pop_back();
    const LocalWalk walk = LocalWalk::For(options.index_dir, options.follow_symlinks);
    ASSIGN_OR_RETURN(auto located, LocalFolder::Source(absolute, walk));
    RETURN_IF_ERROR(walker.AddSource(*located.first, located.second));
  }
  AddControlFolder(*tree, options);
  return tree;
}

std::vector<std::string> FixedKeys() { return FixedStoreKeys(); }

std::string StoresHelp() { return KindsHelp(); }

}  // namespace omicsfs::vfs
