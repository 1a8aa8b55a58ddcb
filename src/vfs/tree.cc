#include "vfs/tree.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <mutex>

namespace omicsfs::vfs {
namespace {

bool IsWithdrawn(const Node& n) {
  return n.kind == NodeKind::kFile && n.content != nullptr && n.content->Withdrawn().has_value();
}

}  // namespace

Tree::Tree() {
  Node root;
  root.name = "";
  root.parent = kRootIno;
  root.kind = NodeKind::kDirectory;
  root.perm = 0555;
  nodes_.push_back(std::move(root));
  lookups_.emplace_back(0);
}

Tree::~Tree() {
  {
    std::lock_guard lock(prefetch_mu_);
    prefetch_stop_ = true;
    prefetch_queue_.clear();
  }
  prefetch_cv_.notify_all();
  for (std::thread& t : prefetch_threads_) t.join();
}

Ino Tree::AddChild(Ino parent, Node child) {
  Node& p = node(parent);
  if (auto it = p.children.find(child.name); it != p.children.end()) {
    return node(it->second).kind == child.kind && child.kind == NodeKind::kDirectory ? it->second
                                                                                     : 0;
  }
  child.parent = parent;
  child.detached = p.detached;  // built into a detached made folder (Graft): goes with it
  child.made = false;
  child.made_in = p.made_in;
  std::string name = child.name;
  Ino ino = 0;
  if (!freed_.empty() && std::chrono::steady_clock::now() - freed_.front().second > kReuseAfter) {
    ino = freed_.front().first;
    freed_.pop_front();
    nodes_[ino - 1] = std::move(child);
    lookups_[ino - 1].store(0, std::memory_order_relaxed);
  } else {
    nodes_.push_back(std::move(child));
    lookups_.emplace_back(0);
    ino = nodes_.size();
  }
  p.children.emplace(std::move(name), ino);  // deque: `p` stays valid across push_back
  return ino;
}

std::string Tree::PathOf(Ino ino) const {
  std::shared_lock lock(mu_);
  return PathOfLocked(ino);
}

std::string Tree::PathOfLocked(Ino ino) const {
  std::string path;
  while (ino != kRootIno) {
    const Node& n = nodes_[ino - 1];
    path = path.empty() ? n.name : n.name + "/" + path;
    ino = n.parent;
  }
  return path;
}

const Node* Tree::GetLocked(Ino ino) const {
  if (ino == 0 || ino > nodes_.size() || nodes_[ino - 1].freed) return nullptr;
  return &nodes_[ino - 1];
}

bool Tree::Loaded(std::string_view vpath) const {
  auto ino = ResolveImpl(vpath, /*load=*/false);
  return ino.ok() && !Pending(*ino);
}

bool Tree::Pending(Ino ino) const {
  std::shared_lock lock(mu_);
  const Node* n = GetLocked(ino);
  return n != nullptr && n->loader != nullptr;
}

void Tree::Load(Ino ino, bool background) const {
  std::shared_ptr<DirLoader> loader;
  {
    std::shared_lock lock(mu_);
    const Node* n = GetLocked(ino);
    if (n == nullptr || n->loader == nullptr) return;
    loader = n->loader;
  }
  std::vector<Ino> next;
  {
    std::lock_guard once(loader->mu);  // other callers wait here for the one load
    {
      std::shared_lock lock(mu_);
      if (nodes_[ino - 1].loader != loader) return;  // built meanwhile, or replaced by a rescan
    }
    const std::unique_ptr<Tree> sub = loader->load();  // the I/O: no tree lock held
    std::unique_lock lock(mu_);
    if (nodes_[ino - 1].loader != loader) return;
    // Queries are const; building a lazy directory is the one change they make, logically
    // none (the directory was always going to hold these children). Trees are never const objects.
    Tree& self = const_cast<Tree&>(*this);
    self.Graft(ino, *sub);
    const Node& around = background ? nodes_[ino - 1] : nodes_[nodes_[ino - 1].parent - 1];
    for (const auto& [name, child] : around.children) {
      // Made folders are built when looked into: each is one lookup's request.
      if (nodes_[child - 1].loader != nullptr && !nodes_[child - 1].made) next.push_back(child);
    }
  }
  Prefetch(next);
}

void Tree::Graft(Ino ino, const Tree& sub) {
  Node& dir = node(ino);
  dir.loader.reset();
  // Removed by a rescan while it was loading. A made folder (and what is in one) still builds:
  // one dropped by the bound may be held by a lookup about to be answered; its name says it all.
  if (dir.detached && dir.made_in == 0) return;
  dir.fingerprint = sub.nodes_[0].fingerprint;
  if (sub.nodes_[0].resolver != nullptr) dir.resolver = sub.nodes_[0].resolver;
  for (const auto& [name, child] : sub.nodes_[0].children) CopyFrom(sub, child, ino);
}

void Tree::Prefetch(const std::vector<Ino>& inos) const {
  if (inos.empty()) return;
  std::lock_guard lock(prefetch_mu_);
  if (prefetch_stop_) return;
  for (Ino ino : inos) {
    if (prefetch_queued_.insert(ino).second) prefetch_queue_.push_back(ino);
  }
  while (prefetch_threads_.size() < kPrefetchThreads) {
    prefetch_threads_.emplace_back([this] { PrefetchLoop(); });
  }
  prefetch_cv_.notify_all();
}

void Tree::PrefetchLoop() const {
  for (;;) {
    Ino ino;
    {
      std::unique_lock lock(prefetch_mu_);
      prefetch_cv_.wait(lock, [this] { return prefetch_stop_ || !prefetch_queue_.empty(); });
      if (prefetch_stop_) return;
      ino = prefetch_queue_.front();
      prefetch_queue_.pop_front();
    }
    Load(ino, /*background=*/true);
  }
}

Result<Ino> Tree::Lookup(Ino parent, std::string_view name) const {
  return LookupImpl(parent, name, /*load=*/true);
}

Result<Ino> Tree::LookupAndRemember(Ino parent, std::string_view name) const {
  return LookupImpl(parent, name, /*load=*/true, /*remember=*/true);
}

size_t Tree::made_folders() const {
  std::shared_lock lock(mu_);
  return made_.Size();
}

Result<Ino> Tree::LookupImpl(Ino parent, std::string_view name, bool load, bool remember) const {
  auto take = [&](Ino ino) {  // under the lock that found it
    if (remember) lookups_[ino - 1].fetch_add(1, std::memory_order_relaxed);
    return ino;
  };
  if (load && name != "." && name != "..") Load(parent, /*background=*/false);
  for (;;) {
    std::shared_ptr<const DirResolver> resolver;
    Ino stale = 0;
    std::function<bool()> current;
    {
      std::shared_lock lock(mu_);
      const Node* p = GetLocked(parent);
      if (p == nullptr) return NotFoundError("no inode " + std::to_string(parent));
      if (p->kind != NodeKind::kDirectory) return InvalidArgumentError("not a directory");
      if (name == ".") return take(parent);
      if (name == "..") return take(p->parent);
      if (auto it = p->children.find(name); it != p->children.end()) {
        if (IsWithdrawn(nodes_[it->second - 1])) return NotFoundError(std::string(name));
        if (!load || !nodes_[it->second - 1].current) {
          if (load) TouchLocked(it->second);
          return take(it->second);
        }
        stale = it->second;
        current = nodes_[it->second - 1].current;
      }
      // Only a query makes folders: never the rescan's walks (CopyInto, Loaded).
      if (stale == 0 && (!load || p->resolver == nullptr)) return NotFoundError(std::string(name));
      resolver = p->resolver;
    }
    if (stale != 0) {  // a made folder whose inputs may have changed: asked with no lock held
      if (current()) {
        std::shared_lock lock(mu_);
        const Node* p = GetLocked(parent);
        auto it = p != nullptr ? p->children.find(name) : decltype(p->children.end()){};
        if (p == nullptr || it == p->children.end() || it->second != stale)
          continue;  // gone meanwhile: again
        TouchLocked(stale);
        return take(stale);
      }
      const_cast<Tree&>(*this).DropMade(parent, name, stale);
      continue;
    }
    std::optional<ResolvedDir> made = resolver->Resolve(name);  // parses the name: no lock held
    if (!made) return NotFoundError(std::string(name));
    // Trees are never const objects; as in Load, a made folder was always there logically.
    const Ino ino =
        const_cast<Tree&>(*this).MakeFolder(parent, name, resolver, std::move(*made), remember);
    if (ino != 0) return ino;  // else a rescan replaced the resolver meanwhile: ask the new one
  }
}

Result<Attr> Tree::GetAttr(Ino ino) const {
  Attr a;
  std::shared_ptr<const FileContent> content;
  {
    std::shared_lock lock(mu_);
    const Node* n = GetLocked(ino);
    if (n == nullptr) return NotFoundError("no inode " + std::to_string(ino));
    a.ino = ino;
    a.mtime = n->mtime;
    a.uid = n->uid;
    a.gid = n->gid;
    switch (n->kind) {
      case NodeKind::kDirectory: {
        a.mode = S_IFDIR | n->perm;
        uint32_t subdirs = 0;
        // Made folders come and go: not counted, so the directory's attributes stay as they are.
        for (const auto& [name, child] : n->children) {
          subdirs += nodes_[child - 1].kind == NodeKind::kDirectory && !nodes_[child - 1].made;
        }
        a.nlink = n->loader != nullptr ? 1 : 2 + subdirs;  // 1: not known yet (as btrfs says)
        a.uncached = static_cast<bool>(n->current);        // its entry is asked again on every walk
        a.size = 4096;
        return a;
      }
      case NodeKind::kFile:
        a.mode = S_IFREG | n->perm;
        content = n->content;
        if (content != nullptr) {
          if (auto why = content->Withdrawn()) return NotFoundError(*why);
        }
        break;
      case NodeKind::kSymlink:
        a.mode = S_IFLNK | 0777;
        a.size = n->link_target.size();
        return a;
    }
  }
  if (content == nullptr) return NotFoundError("inode " + std::to_string(ino) + " was removed");
  if (auto fresh = content->Fresh()) content = std::move(fresh);  // a rewritten pass-through file
  a.uncached = content->Uncached();
  ASSIGN_OR_RETURN(a.size, content->Size());  // may run the sizing pass: no lock held
  return a;
}

Result<NodeKind> Tree::Kind(Ino ino) const {
  std::shared_lock lock(mu_);
  const Node* n = GetLocked(ino);
  if (n == nullptr) return NotFoundError("no inode " + std::to_string(ino));
  return n->kind;
}

Result<std::vector<DirEntry>> Tree::ReadDir(Ino ino, bool load) const {
  if (load) Load(ino, /*background=*/false);
  std::shared_lock lock(mu_);
  const Node* n = GetLocked(ino);
  if (n == nullptr) return NotFoundError("no inode " + std::to_string(ino));
  if (n->kind != NodeKind::kDirectory) return InvalidArgumentError("not a directory");
  if (load) TouchLocked(ino);
  std::vector<DirEntry> out;
  out.reserve(n->children.size() + 2);
  out.push_back({".", ino, NodeKind::kDirectory});
  out.push_back({"..", n->parent, NodeKind::kDirectory});
  for (const auto& [name, child] : n->children) {
    const Node& c = nodes_[child - 1];
    if (!c.hidden && !IsWithdrawn(c)) out.push_back({name, child, c.kind});
  }
  return out;
}

Result<std::shared_ptr<const FileContent>> Tree::Open(Ino ino, int flags) const {
  std::shared_lock lock(mu_);
  const Node* n = GetLocked(ino);
  if (n == nullptr) return NotFoundError("no inode " + std::to_string(ino));
  if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_TRUNC | O_CREAT | O_APPEND)) != 0) {
    return ReadOnlyError("read-only filesystem");
  }
  if (n->kind == NodeKind::kDirectory) return Status(ErrorCode::kIo, "is a directory", EISDIR);
  if (n->kind != NodeKind::kFile) return InvalidArgumentError("not a regular file");
  if (n->content == nullptr) return NotFoundError("inode " + std::to_string(ino) + " was removed");
  TouchLocked(ino);
  if (auto fresh = n->content->Fresh()) return fresh;
  return n->content;
}

Result<std::vector<text::Piece>> Tree::Read(Ino ino, uint64_t offset, uint64_t length) const {
  ASSIGN_OR_RETURN(std::shared_ptr<const FileContent> content, Open(ino, O_RDONLY));
  return content->Read(offset, length);
}

Result<std::string> Tree::ReadLink(Ino ino) const {
  std::shared_lock lock(mu_);
  const Node* n = GetLocked(ino);
  if (n == nullptr) return NotFoundError("no inode " + std::to_string(ino));
  if (n->kind != NodeKind::kSymlink) return InvalidArgumentError("not a symlink");
  return n->link_target;
}

Result<Ino> Tree::Resolve(std::string_view path) const { return ResolveImpl(path, /*load=*/true); }

Result<Ino> Tree::ResolveImpl(std::string_view path, bool load) const {
  Ino cur = kRootIno;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view part = path.substr(pos, slash - pos);
    if (!part.empty()) {
      auto next = LookupImpl(cur, part, load);
      if (!next.ok()) return NotFoundError(std::string(path) + ": no such file or directory");
      cur = *next;
    }
    pos = slash + 1;
  }
  return cur;
}

size_t Tree::size() const {
  std::shared_lock lock(mu_);
  return nodes_.size() - freed_.size();  // every freed node waits in freed_ until reused
}

void Tree::Remember(Ino ino) {
  std::shared_lock lock(mu_);
  if (ino != 0 && ino <= lookups_.size() && !nodes_[ino - 1].freed)
    lookups_[ino - 1].fetch_add(1, std::memory_order_relaxed);
}

void Tree::Forget(Ino ino, uint64_t n) {
  bool release = false;
  Ino trim = 0;  // a store past its bound of made folders, which this forget may let shrink
  {
    std::shared_lock lock(mu_);
    if (ino == 0 || ino > lookups_.size() || nodes_[ino - 1].freed) return;
    std::atomic<uint64_t>& count = lookups_[ino - 1];
    uint64_t cur = count.load(std::memory_order_relaxed);
    uint64_t next;
    do {
      next = cur > n ? cur - n : 0;
    } while (!count.compare_exchange_weak(cur, next, std::memory_order_relaxed));
    if (next != 0) return;
    const Node& node = nodes_[ino - 1];
    release = node.detached;
    if (node.made_in != 0) trim = made_.StoreOver(node.made_in);
    if (!release && trim == 0) return;
  }
  std::unique_lock lock(mu_);
  if (release) ReleaseIfUnused(ino);
  if (trim != 0) Trim(trim, /*keep=*/0);
}

void Tree::ReleaseIfUnused(Ino ino) {
  Node& n = node(ino);
  if (n.freed || !n.detached || lookups_[ino - 1].load(std::memory_order_relaxed) != 0) return;
  n.content.reset();  // open files hold their own reference
  // Its children nobody holds go first (those built into it after it was detached were never
  // looked at by Detach); a directory goes after its last child.
  std::vector<Ino> children;
  for (const auto& [name, child] : n.children) children.push_back(child);
  for (Ino child : children) {
    if (!node(child).freed && node(child).detached) ReleaseIfUnused(child);
  }
  if (node(ino).freed || !node(ino).children.empty()) return;
  Ino up = node(ino).parent;
  Free(ino);
  // Its folder may have been waiting for its last child: up while detached, unheld and empty.
  while (up != 0 && up != kRootIno) {
    const Node& p = node(up);
    if (p.freed || !p.detached || lookups_[up - 1].load(std::memory_order_relaxed) != 0 ||
        !p.children.empty())
      break;
    const Ino next = p.parent;
    Free(up);
    up = next;
  }
}

void Tree::Free(Ino ino) {
  Node& n = node(ino);
  const Ino parent = n.parent;
  if (parent != 0 && parent != ino) {
    Node& p = node(parent);
    if (auto it = p.children.find(n.name); it != p.children.end() && it->second == ino)
      p.children.erase(it);
  }
  n = Node{};
  n.freed = true;
  n.detached = true;
  freed_.emplace_back(ino, std::chrono::steady_clock::now());
}

void Tree::Detach(Ino ino) {
  Node& n = node(ino);
  if (n.freed) return;
  n.detached = true;
  if (n.made) made_.Remove(ino);
  std::vector<Ino> children;  // freeing a child changes the map
  for (const auto& [name, child] : n.children) children.push_back(child);
  for (Ino child : children) Detach(child);
  ReleaseIfUnused(ino);
}

bool Tree::ListingSettled(Ino ino) const {
  std::shared_lock lock(mu_);
  const Node* n = GetLocked(ino);
  if (n == nullptr) return true;
  for (const auto& [name, child] : n->children) {
    const Node& c = nodes_[child - 1];
    if (c.kind == NodeKind::kFile && c.content != nullptr && c.content->MayBeWithdrawn()) {
      return false;
    }
  }
  return true;
}

void Tree::NoteWithdrawn() const {
  {
    std::lock_guard lock(release_mu_);
    withdrawn_noted_ = true;
  }
  release_cv_.notify_one();
}

std::vector<std::pair<Ino, std::string>> Tree::TakeWithdrawn() {
  {
    std::lock_guard lock(release_mu_);
    if (!withdrawn_noted_) return {};
    withdrawn_noted_ = false;
  }
  // Rare (a verdict per index that cannot exist): the whole tree is looked through, under the
  // shared lock; only the drop takes the exclusive one.
  std::vector<Ino> found;
  {
    std::shared_lock lock(mu_);
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (!nodes_[i].freed && !nodes_[i].detached && IsWithdrawn(nodes_[i])) found.push_back(i + 1);
    }
  }
  std::vector<std::pair<Ino, std::string>> out;
  if (found.empty()) return out;
  std::unique_lock lock(mu_);
  for (const Ino ino : found) {
    const Node& n = node(ino);
    if (n.freed || n.detached) continue;  // gone meanwhile (a rescan)
    out.emplace_back(n.parent, n.name);
    Node& p = node(n.parent);
    if (auto it = p.children.find(n.name); it != p.children.end() && it->second == ino) {
      p.children.erase(it);
    }
    Detach(ino);
  }
  return out;
}

}  // namespace omicsfs::vfs
