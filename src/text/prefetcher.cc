#include "text/prefetcher.h"

namespace omicsfs::text {

void Prefetcher::Start(unsigned threads) {
  std::lock_guard<std::mutex> lock(mu_);
  for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this] { Run(); });
}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  for (auto& w : workers_) w.join();
}

void Prefetcher::Submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (workers_.empty() || stop_ || queue_.size() >= max_queue_) return;
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void Prefetcher::Run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      task();
    } catch (...) {
      // Best effort: a failed prefetch is retried (and reported) by the foreground read.
    }
  }
}

}  // namespace omicsfs::text
