// Live changes: a thread that rediscovers SOURCE every interval, merges the fresh tree into the
// served one (vfs::Tree::Merge) and tells the kernel which entries and inodes to drop.
#pragma once

#include <fuse_lowlevel.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "vfs/tree.h"

namespace omicsfs::mount {

class Rescanner {
 public:
  using DiscoverFn = std::function<Result<std::shared_ptr<vfs::Tree>>(const vfs::Tree* previous)>;

  // `interval_s` is the shortest pause between scans; a scan that takes t seconds stretches the
  // pause to 20·t, so scanning never takes more than ~5 % of a core.
  Rescanner(DiscoverFn discover, vfs::Tree* tree, fuse_session* se, double interval_s);
  ~Rescanner();  // stops

  void Start();  // after fuse_daemonize: threads do not survive its fork
  void Stop();

 private:
  void Loop();
  void ScanOnce();

  DiscoverFn discover_;
  vfs::Tree* tree_;
  fuse_session* se_;
  double interval_s_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// Asks the kernel to drop its entries of folders made on lookup past their store's bound (the
// tree's release requests), so that its forgets let the daemon free them: a script visiting
// 100 000 slices leaves the daemon as small as one visiting 64; and the entries and listings of
// withdrawn files (Tree::TakeWithdrawn: region indexes that cannot exist), so that the next
// `ls` does not show them. Notifications go from this thread, never from a request handler
// (libfuse: that may deadlock).
class Releaser {
 public:
  Releaser(vfs::Tree* tree, fuse_session* se) : tree_(tree), se_(se) {}
  ~Releaser() { Stop(); }
  void Start();  // after fuse_daemonize
  void Stop();

 private:
  vfs::Tree* tree_;
  fuse_session* se_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace omicsfs::mount
