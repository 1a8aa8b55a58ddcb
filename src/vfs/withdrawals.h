// The files a mount does not list because they cannot exist: region indexes that tabix refuses
// for their view's records (text/tabix_source.h), found by a pass of this mount (the file is then
// withdrawn from its folder: FileContent::Withdrawn, Tree::TakeWithdrawn) or recorded in index_dir
// by an earlier one (never added). One per mount, shared by every scan: MOUNT/.omicsfs/status
// lists them with why, and `notify`, set by mount/, hears of each one a pass finds, so that the
// kernel drops its entries.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace omicsfs::vfs {

class Withdrawals {
 public:
  // `file` ("X.gz.csi of WHERE") cannot exist, for `why`. `found`: by a pass now (told to notify).
  void Add(const std::string& file, const std::string& why, bool found) {
    {
      std::lock_guard lock(mu_);
      why_[file] = why;
    }
    if (found && notify) notify();
  }
  // `file` is listed again (its store changed: a new verdict will come if it still holds).
  void Remove(const std::string& file) {
    std::lock_guard lock(mu_);
    why_.erase(file);
  }
  // (file, why), by file.
  std::vector<std::pair<std::string, std::string>> List() const {
    std::lock_guard lock(mu_);
    return {why_.begin(), why_.end()};
  }

  // Set before the tree is served; called with no lock held, on the thread of the pass.
  std::function<void()> notify;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string> why_;
};

}  // namespace omicsfs::vfs
