#include "vfs/tree.h"

#include <fcntl.h>
#include <sys/stat.h>

namespace omicsfs::vfs {

Tree::Tree() {
  Node root;
  root.name = "";
  root.parent = kRootIno;
  root.kind = NodeKind::kDirectory;
  root.perm = 0555;
  nodes_.push_back(std::move(root));
}

Ino Tree::AddChild(Ino parent, Node child) {
  Node& p = node(parent);
  if (auto it = p.children.find(child.name); it != p.children.end()) {
    return node(it->second).kind == child.kind && child.kind == NodeKind::kDirectory ? it->second : 0;
  }
  child.parent = parent;
  std::string name = child.name;
  nodes_.push_back(std::move(child));
  Ino ino = nodes_.size();
  node(parent).children.emplace(std::move(name), ino);  // `p` may dangle after push_back
  return ino;
}

const Node* Tree::Get(Ino ino) const {
  if (ino == 0 || ino > nodes_.size()) return nullptr;
  return &nodes_[ino - 1];
}

Result<Ino> Tree::Lookup(Ino parent, std::string_view name) const {
  const Node* p = Get(parent);
  if (p == nullptr) return NotFoundError("no inode " + std::to_string(parent));
  if (p->kind != NodeKind::kDirectory) return InvalidArgumentError("not a directory");
  if (name == ".") return parent;
  if (name == "..") return p->parent;
  auto it = p->children.find(name);
  if (it == p->children.end()) return NotFoundError(std::string(name));
  return it->second;
}

Result<Attr> Tree::GetAttr(Ino ino) const {
  const Node* n = Get(ino);
  if (n == nullptr) return NotFoundError("no inode " + std::to_string(ino));
  Attr a;
  a.ino = ino;
  a.mtime = n->mtime;
  a.uid = n->uid;
  a.gid = n->gid;
  switch (n->kind) {
    case NodeKind::kDirectory: {
      a.mode = S_IFDIR | n->perm;
      uint32_t subdirs = 0;
      for (const auto& [name, child] : n->children) subdirs += nodes_[child - 1].kind == NodeKind::kDirectory;
      a.nlink = 2 + subdirs;
      a.size = 4096;
      break;
    }
    case NodeKind::kFile: {
      a.mode = S_IFREG | n->perm;
      ASSIGN_OR_RETURN(a.size, n->content->Size());
      break;
    }
    case NodeKind::kSymlink:
      a.mode = S_IFLNK | 0777;
      a.size = n->link_target.size();
      break;
  }
  return a;
}

Result<std::vector<DirEntry>> Tree::ReadDir(Ino ino) const {
  const Node* n = Get(ino);
  if (n == nullptr) return NotFoundError("no inode " + std::to_string(ino));
  if (n->kind != NodeKind::kDirectory) return InvalidArgumentError("not a directory");
  std::vector<DirEntry> out;
  out.reserve(n->children.size() + 2);
  out.push_back({".", ino, NodeKind::kDirectory});
  out.push_back({"..", n->parent, NodeKind::kDirectory});
  for (const auto& [name, child] : n->children) out.push_back({name, child, nodes_[child - 1].kind});
  return out;
}

Status Tree::Open(Ino ino, int flags) const {
  const Node* n = Get(ino);
  if (n == nullptr) return NotFoundError("no inode " + std::to_string(ino));
  if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_TRUNC | O_CREAT | O_APPEND)) != 0) {
    return ReadOnlyError("read-only filesystem");
  }
  if (n->kind == NodeKind::kDirectory) return Status(ErrorCode::kIo, "is a directory", EISDIR);
  if (n->kind != NodeKind::kFile) return InvalidArgumentError("not a regular file");
  return OkStatus();
}

Result<std::vector<text::Piece>> Tree::Read(Ino ino, uint64_t offset, uint64_t length) const {
  const Node* n = Get(ino);
  if (n == nullptr) return NotFoundError("no inode " + std::to_string(ino));
  if (n->kind != NodeKind::kFile) return Status(ErrorCode::kIo, "is a directory", EISDIR);
  return n->content->Read(offset, length);
}

Result<std::string> Tree::ReadLink(Ino ino) const {
  const Node* n = Get(ino);
  if (n == nullptr) return NotFoundError("no inode " + std::to_string(ino));
  if (n->kind != NodeKind::kSymlink) return InvalidArgumentError("not a symlink");
  return n->link_target;
}

Result<Ino> Tree::Resolve(std::string_view path) const {
  Ino cur = kRootIno;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view part = path.substr(pos, slash - pos);
    if (!part.empty()) {
      auto next = Lookup(cur, part);
      if (!next.ok()) return NotFoundError(std::string(path) + ": no such file or directory");
      cur = *next;
    }
    pos = slash + 1;
  }
  return cur;
}

}  // namespace omicsfs::vfs
