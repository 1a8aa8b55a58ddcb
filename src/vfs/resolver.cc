#include "vfs/resolver.h"

#include <algorithm>
#include <mutex>
#include <tuple>

#include "vfs/tree.h"

namespace omicsfs::vfs {

void MadeFolders::Add(Ino folder, Ino store, size_t max_folders) {
  folders_.try_emplace(folder, store, Tick());
  Store& s = stores_[store];
  s.max_folders = max_folders;
  s.folders.insert(folder);
}

void MadeFolders::Remove(Ino folder) {
  auto it = folders_.find(folder);
  if (it == folders_.end()) return;
  auto s = stores_.find(it->second.store);
  if (s != stores_.end()) {
    s->second.folders.erase(folder);
    if (s->second.folders.empty()) stores_.erase(s);
  }
  folders_.erase(it);
}

size_t MadeFolders::Count(Ino store) const {
  auto s = stores_.find(store);
  return s == stores_.end() ? 0 : s->second.folders.size();
}

bool MadeFolders::Over(Ino store) const {
  auto s = stores_.find(store);
  return s != stores_.end() && s->second.folders.size() > s->second.max_folders;
}

Ino MadeFolders::StoreOver(Ino folder) const {
  auto it = folders_.find(folder);
  if (it == folders_.end() || !Over(it->second.store)) return 0;
  return it->second.store;
}

std::vector<Ino> MadeFolders::Oldest(Ino store) const {
  std::vector<std::pair<uint64_t, Ino>> order;
  if (auto s = stores_.find(store); s != stores_.end()) {
    for (Ino f : s->second.folders)
      order.emplace_back(folders_.at(f).used.load(std::memory_order_relaxed), f);
  }
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first, b.second) < std::tie(b.first, a.second);
  });
  std::vector<Ino> out;
  out.reserve(order.size());
  for (const auto& [used, f] : order) out.push_back(f);
  return out;
}

void MadeFolders::Touch(Ino folder, uint64_t tick) const {
  auto it = folders_.find(folder);
  if (it == folders_.end()) return;
  // Several lookups may touch at once: keep the latest.
  uint64_t cur = it->second.used.load(std::memory_order_relaxed);
  while (cur < tick &&
         !it->second.used.compare_exchange_weak(cur, tick, std::memory_order_relaxed)) {
  }
}

// The Tree's side: making, touching and dropping folders.

Ino Tree::MakeFolder(Ino parent, std::string_view name,
                     const std::shared_ptr<const DirResolver>& resolver, ResolvedDir made,
                     bool remember) {
  std::unique_lock lock(mu_);
  if (node(parent).resolver != resolver) return 0;
  if (auto it = node(parent).children.find(name); it != node(parent).children.end()) {
    TouchLocked(it->second);  // made by another lookup meanwhile: the same folder
    if (remember) lookups_[it->second - 1].fetch_add(1, std::memory_order_relaxed);
    return it->second;
  }
  Node n;
  n.name = std::string(name);
  n.kind = NodeKind::kDirectory;
  n.perm = made.perm & 0555;
  n.mtime = made.mtime;
  n.uid = made.uid;
  n.gid = made.gid;
  n.hidden = true;
  n.current = std::move(made.current);
  if (made.load) {
    n.loader = std::make_shared<DirLoader>();
    n.loader->load = std::move(made.load);
  }
  const Ino ino = AddChild(parent, std::move(n));
  if (remember) lookups_[ino - 1].fetch_add(1, std::memory_order_relaxed);  // held before any trim
  Node& folder = node(ino);
  folder.made = true;
  folder.made_in = ino;
  if (folder.detached) return ino;  // made in a detached folder: goes with it, outside any bound
  // The store: the outermost directory carrying a resolver; its resolver sets the bound.
  Ino store = parent;
  for (Ino a = parent;; a = node(a).parent) {
    if (node(a).resolver != nullptr) store = a;
    if (a == kRootIno) break;
  }
  made_.Add(ino, store, node(store).resolver->max_folders());
  TouchLocked(ino);
  Trim(store, /*keep=*/ino);  // the new one stays even when every other one is held
  return ino;
}

void Tree::DropMade(Ino parent, std::string_view name, Ino folder) {
  std::unique_lock lock(mu_);
  Node& p = node(parent);
  auto it = p.children.find(name);
  if (it == p.children.end() || it->second != folder) return;  // dropped or replaced meanwhile
  p.children.erase(it);
  Detach(folder);
}

void Tree::TouchLocked(Ino ino) const {
  Ino folder = nodes_[ino - 1].made_in;
  if (folder == 0) return;
  const uint64_t tick = made_.Tick();
  while (folder != 0) {  // the folder and the folders it was made in
    made_.Touch(folder, tick);
    folder = nodes_[nodes_[folder - 1].parent - 1].made_in;
  }
}

bool Tree::Held(Ino ino) const {
  if (lookups_[ino - 1].load(std::memory_order_relaxed) != 0) return true;
  for (const auto& [name, child] : nodes_[ino - 1].children) {
    if (Held(child)) return true;
  }
  return false;
}

void Tree::Trim(Ino store, Ino keep) {
  if (!made_.Over(store)) return;
  // Only the least recently used past the bound are candidates: a folder just made or looked
  // up, whose lookup reply (and the kernel's reference) may still be on its way, is never one.
  size_t excess = made_.Count(store) - node(store).resolver->max_folders();
  std::vector<std::pair<Ino, std::string>> ask;
  for (Ino folder : made_.Oldest(store)) {
    if (excess == 0 || !made_.Over(store)) break;
    // Gone with a folder it was made in (Detach), or the new one.
    if (folder == keep || !made_.Has(folder)) continue;
    --excess;
    if (Held(folder)) {  // the kernel holds it: ask it to drop its entry (its forget comes back
                         // here)
      ask.emplace_back(node(folder).parent, node(folder).name);
      continue;
    }
    const Node& n = node(folder);
    node(n.parent).children.erase(n.name);
    Detach(folder);  // nobody holds it: its contents go now
  }
  if (ask.empty()) return;
  {
    std::lock_guard lock(release_mu_);
    for (auto& a : ask) {
      if (std::find(releases_.begin(), releases_.end(), a) == releases_.end())
        releases_.push_back(std::move(a));
    }
  }
  release_cv_.notify_one();
}

std::vector<std::pair<Ino, std::string>> Tree::TakeReleases(std::chrono::milliseconds wait) const {
  std::unique_lock lock(release_mu_);
  release_cv_.wait_for(
      lock, wait, [this] { return releases_stopped_ || !releases_.empty() || withdrawn_noted_; });
  std::vector<std::pair<Ino, std::string>> out;
  if (!releases_stopped_) out.swap(releases_);
  return out;
}

void Tree::StopReleases() const {
  {
    std::lock_guard lock(release_mu_);
    releases_stopped_ = true;
  }
  release_cv_.notify_all();
}

}  // namespace omicsfs::vfs
