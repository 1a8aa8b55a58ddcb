#include "vfs/tree_writer.h"

namespace omicsfs::vfs {
namespace {

Node NodeOf(const std::string& name, NodeKind kind, const Meta& meta, mode_t perm) {
  Node n;
  n.name = name;
  n.kind = kind;
  n.perm = perm;
  n.mtime = meta.mtime;
  n.uid = meta.uid;
  n.gid = meta.gid;
  return n;
}

}  // namespace

Ino TreeWriter::AddDir(Ino parent, const std::string& name, const Meta& meta, bool from_file) {
  return tree_->AddChild(parent,
                         NodeOf(name, NodeKind::kDirectory, meta, DirPerm(meta, from_file)));
}

Ino TreeWriter::AddFile(Ino parent, const std::string& name, const Meta& meta,
                        std::shared_ptr<const FileContent> content) {
  Node n = NodeOf(name, NodeKind::kFile, meta, meta.perm & 0444);
  n.content = std::move(content);
  return tree_->AddChild(parent, std::move(n));
}

Ino TreeWriter::AddSymlink(Ino parent, const std::string& name, const Meta& meta,
                           const std::string& target) {
  Node n = NodeOf(name, NodeKind::kSymlink, meta, 0);
  n.link_target = target;
  return tree_->AddChild(parent, std::move(n));
}

void TreeWriter::SetRoot(const Meta& meta, bool from_file) {
  Node& root = tree_->root();
  root.perm = DirPerm(meta, from_file);
  root.mtime = meta.mtime;
  root.uid = meta.uid;
  root.gid = meta.gid;
}

}  // namespace omicsfs::vfs
