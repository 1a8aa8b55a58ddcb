// A Status computed until it settles: success and lasting failures (a corrupt chunk, an
// unsupported layout) are remembered; a transient failure (IsTransient: a server down, a
// timeout) is returned and the next call computes again, so a store read over the network works
// again once the network does. Concurrent callers wait for one computation.
#pragma once

#include <atomic>
#include <mutex>

#include "util/status.h"

namespace omicsfs {

class SettledStatus {
 public:
  template <typename Compute>
  Status Get(Compute&& compute) const {
    if (settled_.load(std::memory_order_acquire)) return status_;
    std::lock_guard<std::mutex> lock(mu_);
    if (settled_.load(std::memory_order_relaxed)) return status_;
    Status st = compute();
    if (!IsTransient(st)) {
      status_ = st;
      settled_.store(true, std::memory_order_release);
    }
    return st;
  }

 private:
  mutable std::mutex mu_;
  mutable std::atomic<bool> settled_{false};
  mutable Status status_;  // written once, before settled_
};

}  // namespace omicsfs
