// Read-ahead for sequential readers: after a read touches chunk k of a view, the next chunks are
// rendered in the background into the decode cache, so `cat` and `grep` overlap decoding with
// copying. A bounded queue and a fixed set of worker threads; single flight in the cache makes a
// foreground read of a chunk being prefetched wait for it instead of rendering it twice.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace omicsfs::text {

class Prefetcher {
 public:
  // At most `max_queue` waiting tasks. No workers until Start (a daemon starts them after it
  // forks: threads do not survive fork); until then Submit is a no-op.
  explicit Prefetcher(size_t max_queue = 64) : max_queue_(max_queue) {}
  void Start(unsigned threads);
  ~Prefetcher();  // drops waiting tasks and joins the workers
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // Queues `task` unless the queue is full (prefetching is best effort).
  void Submit(std::function<void()> task);

 private:
  void Run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  size_t max_queue_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace omicsfs::text
