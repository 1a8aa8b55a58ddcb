// Rescans: copying unchanged subtrees into a fresh tree (CopyInto) and grafting a fresh tree into
// the served one (Merge). See tree.h.
#include <algorithm>
#include <mutex>

#include "vfs/tree.h"

namespace omicsfs::vfs {
namespace {

bool SameMeta(const Node& a, const Node& b) {
  return a.perm == b.perm && a.uid == b.uid && a.gid == b.gid && a.mtime.tv_sec == b.mtime.tv_sec &&
         a.mtime.tv_nsec == b.mtime.tv_nsec;
}

// Whether a live node may stay as it is (directories are compared child by child instead).
bool SameNode(const Node& live, const Node& fresh) {
  if (live.kind != fresh.kind) return false;
  switch (live.kind) {
    case NodeKind::kDirectory:
      return true;
    case NodeKind::kFile:
      return live.content == fresh.content && SameMeta(live, fresh);
    case NodeKind::kSymlink:
      return live.link_target == fresh.link_target && SameMeta(live, fresh);
  }
  return false;
}

}  // namespace

Ino Tree::CopyFrom(const Tree& src, Ino from, Ino parent) {
  const Node& s = src.nodes_[from - 1];
  if (s.made) return 0;  // made folders belong to the served tree (a merge keeps them there)
  if (s.kind == NodeKind::kFile && s.content != nullptr && s.content->Withdrawn()) {
    return 0;  // its content cannot exist (a region index tabix refuses): not listed again
  }
  Node n = s;
  n.children.clear();
  const Ino ino = AddChild(parent, std::move(n));
  if (ino == 0) return 0;
  for (const auto& [name, child] : s.children) CopyFrom(src, child, ino);
  return ino;
}

bool Tree::CopyInto(std::string_view vpath, std::string_view fingerprint, Tree& dst,
                    Ino dst_parent) const {
  auto ino = ResolveImpl(vpath, /*load=*/false);
  if (!ino.ok()) return false;
  std::shared_lock lock(mu_);
  const Node& s = nodes_[*ino - 1];
  if (s.fingerprint.empty() || s.fingerprint != fingerprint) return false;
  if (*ino == kRootIno) {  // SOURCE itself is the store: copy onto the root
    Node& r = dst.root();
    r.perm = s.perm;
    r.mtime = s.mtime;
    r.uid = s.uid;
    r.gid = s.gid;
    r.fingerprint = s.fingerprint;
    r.resolver = s.resolver;
    for (const auto& [child_name, child] : s.children) dst.CopyFrom(*this, child, kRootIno);
    return true;
  }
  return dst.CopyFrom(*this, *ino, dst_parent) != 0;
}

void Tree::MergeDir(Ino live, const Tree& fresh, Ino from, Changes& changes, bool quiet) {
  const Node& f = fresh.nodes_[from - 1];
  // A scan builds what the served tree has built and leaves the rest lazy. Built here and lazy
  // there: loaded between the scan and this merge; unchanged this round, checked by the next.
  if (f.loader != nullptr && node(live).loader == nullptr) return;
  if (f.loader == nullptr)
    node(live).loader.reset();  // built by the scan (an in-flight load yields)
  {
    Node& l = node(live);
    if (!SameMeta(l, f)) {
      l.perm = f.perm;
      l.mtime = f.mtime;
      l.uid = f.uid;
      l.gid = f.gid;
      changes.inodes.push_back(live);
    }
    if (!quiet && !f.fingerprint.empty() && l.fingerprint != f.fingerprint) {
      const std::string path = PathOfLocked(live);
      changes.described.push_back("changed: " + (path.empty() ? "SOURCE" : path));
      quiet = true;  // the store is described; not its views
    }
    l.fingerprint = f.fingerprint;
  }
  const std::string dir = quiet ? "" : PathOfLocked(live);
  auto describe = [&](const char* what, const std::string& name) {
    if (!quiet) changes.described.push_back(what + (dir.empty() ? name : dir + "/" + name));
  };
  bool listing = false;
  std::vector<std::string> gone;
  // Made folders stay while the directory's resolver is the same object (discovery copies an
  // unchanged store with it), unless the fresh tree has a real entry of that name.
  const bool same_resolver = node(live).resolver == f.resolver;
  for (const auto& [name, child] : node(live).children) {
    auto it = f.children.find(name);
    if (node(child).made) {
      if (it != f.children.end() || !same_resolver) gone.push_back(name);
    } else if (it == f.children.end() || !SameNode(node(child), fresh.nodes_[it->second - 1])) {
      gone.push_back(name);
    }
  }
  node(live).resolver = f.resolver;
  for (const std::string& name : gone) {
    Node& l = node(live);
    auto it = l.children.find(name);
    const Ino child = it->second;
    const bool made = node(child).made;  // not listed, not a source file: neither shown nor logged
    l.children.erase(it);
    Detach(child);
    changes.entries.emplace_back(live, name);
    changes.inodes.push_back(child);
    if (made) continue;
    listing = true;
    describe(f.children.count(name) ? "changed: " : "removed: ", name);
  }
  for (const auto& [name, child] : f.children) {
    auto it = node(live).children.find(name);
    if (it == node(live).children.end()) {
      CopyFrom(fresh, child, live);
      changes.entries.emplace_back(live, name);  // a negative lookup may be cached
      listing = true;
      if (!std::binary_search(gone.begin(), gone.end(), name)) describe("added: ", name);
    } else if (fresh.nodes_[child - 1].kind == NodeKind::kDirectory) {
      MergeDir(it->second, fresh, child, changes, quiet);
    }
  }
  if (listing) changes.inodes.push_back(live);
}

Tree::Changes Tree::Merge(const Tree& fresh) {
  Changes changes;
  std::unique_lock lock(mu_);
  MergeDir(kRootIno, fresh, kRootIno, changes, /*quiet=*/false);
  return changes;
}

}  // namespace omicsfs::vfs
