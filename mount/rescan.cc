#include "mount/rescan.h"

#include <algorithm>
#include <chrono>

#include "util/log.h"

namespace omicsfs::mount {

Rescanner::Rescanner(DiscoverFn discover, vfs::Tree* tree, fuse_session* se, double interval_s)
    : discover_(std::move(discover)), tree_(tree), se_(se), interval_s_(interval_s) {}

Rescanner::~Rescanner() { Stop(); }

void Rescanner::Start() {
  if (interval_s_ <= 0 || thread_.joinable()) return;
  thread_ = std::thread([this] { Loop(); });
}

void Rescanner::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Rescanner::Loop() {
  using Clock = std::chrono::steady_clock;
  std::chrono::duration<double> pause(interval_s_);
  for (;;) {
    {
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, pause, [this] { return stop_; })) return;
    }
    const auto start = Clock::now();
    try {
      ScanOnce();
    } catch (const std::exception& e) {  // never let a scan take the daemon down
      LogError(std::string("rescan failed: ") + e.what());
    }
    const std::chrono::duration<double> took = Clock::now() - start;
    pause = std::max(std::chrono::duration<double>(interval_s_), 20 * took);
  }
}

void Rescanner::ScanOnce() {
  auto fresh = discover_(tree_);
  if (!fresh.ok()) {  // SOURCE unreachable for now (e.g. a network blip): keep serving
    LogWarning("rescan: " + fresh.status().message() + " (keeping the current tree)");
    return;
  }
  const vfs::Tree::Changes changes = tree_->Merge(**fresh);
  if (changes.empty()) return;
  for (const std::string& line : changes.described) LogInfo("rescan: " + line);
  for (const auto& [parent, name] : changes.entries) {
    // -ENOENT: the kernel had no such entry cached. Nothing else can fail usefully here.
    fuse_lowlevel_notify_inval_entry(se_, parent, name.c_str(), name.size());
  }
  for (const vfs::Ino ino : changes.inodes) fuse_lowlevel_notify_inval_inode(se_, ino, 0, 0);
}

void Releaser::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    for (;;) {
      auto releases = tree_->TakeReleases(std::chrono::seconds(1));
      for (const auto& [parent, name] : releases) {
        // -ENOENT: the kernel dropped it already. A folder in use (a cwd, an open file) stays.
        fuse_lowlevel_notify_inval_entry(se_, parent, name.c_str(), name.size());
      }
      for (const auto& [parent, name] : tree_->TakeWithdrawn()) {
        // The folder's listing too: the kernel keeps listings (cache_readdir), and it may have no
        // entry of the name to drop (its lookups failed), in which case only this clears it.
        fuse_lowlevel_notify_inval_entry(se_, parent, name.c_str(), name.size());
        fuse_lowlevel_notify_inval_inode(se_, parent, 0, 0);
      }
      if (stopping_.load()) return;
    }
  });
}

void Releaser::Stop() {
  stopping_.store(true);
  tree_->StopReleases();
  if (thread_.joinable()) thread_.join();
}

}  // namespace omicsfs::mount
