// Discovery's writes into a tree being built: directories, files, symlinks and the metadata they
// show. One place for the permission rules.
#pragma once

#include <memory>
#include <string>

#include "vfs/folder.h"
#include "vfs/tree.h"

namespace omicsfs::vfs {

class TreeWriter {
 public:
  explicit TreeWriter(Tree* tree) : tree_(tree) {}
  Tree& tree() const { return *tree_; }

  // A directory of SOURCE keeps its read and search bits as they are (under default_permissions
  // the kernel enforces them: who cannot enter it on disk cannot enter it here). A directory made
  // from a file (HDF5 groups, NAME.datg/, a remote folder) can be entered by whoever can read it.
  static mode_t DirPerm(const Meta& meta, bool from_file) {
    return from_file ? (meta.perm & 0444) | ((meta.perm & 0444) >> 2) : meta.perm & 0555;
  }
  // 0 when a file of that name is there already (directories merge).
  Ino AddDir(Ino parent, const std::string& name, const Meta& meta, bool from_file);
  Ino AddFile(Ino parent, const std::string& name, const Meta& meta,
              std::shared_ptr<const FileContent> content);
  Ino AddSymlink(Ino parent, const std::string& name, const Meta& meta, const std::string& target);
  // SOURCE itself: the root's metadata.
  void SetRoot(const Meta& meta, bool from_file);

 private:
  Tree* tree_;
};

}  // namespace omicsfs::vfs
