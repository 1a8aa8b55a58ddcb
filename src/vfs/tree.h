// The virtual tree: built once by discovery, then immutable. Inode = index + 1 (root = 1), so
// lookups need no locks and `forget` has nothing to free.
#pragma once

#include <string_view>
#include <vector>

#include "vfs/node.h"

namespace omicsfs::vfs {

class Tree {
 public:
  Tree();  // creates the root directory

  // Building (before the tree is shared).
  Node& root() { return nodes_[0]; }
  Node& node(Ino ino) { return nodes_[ino - 1]; }
  // Adds a child; if the name is taken, returns the existing child's inode when it is of the same
  // kind (directories merge), else 0.
  Ino AddChild(Ino parent, Node child);

  // Queries (thread-safe once built).
  const Node* Get(Ino ino) const;
  Result<Ino> Lookup(Ino parent, std::string_view name) const;
  Result<Attr> GetAttr(Ino ino) const;
  Result<std::vector<DirEntry>> ReadDir(Ino ino) const;
  // Refuses write access (EROFS) and directories.
  Status Open(Ino ino, int flags) const;
  Result<std::vector<text::Piece>> Read(Ino ino, uint64_t offset, uint64_t length) const;
  Result<std::string> ReadLink(Ino ino) const;
  // Resolves a slash-separated path from the root ("" or "/" is the root; symlinks not followed).
  Result<Ino> Resolve(std::string_view path) const;
  size_t size() const { return nodes_.size(); }

 private:
  std::vector<Node> nodes_;
};

}  // namespace omicsfs::vfs
