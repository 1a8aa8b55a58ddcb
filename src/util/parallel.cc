#include "util/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace omicsfs {
namespace {

Status RunGuarded(const std::function<Status(size_t)>& task, size_t i) {
  try {
    return task(i);
  } catch (const std::exception& e) {
    return InternalError(std::string("task failed: ") + e.what());
  } catch (...) {
    return InternalError("task failed with an unknown exception");
  }
}

}  // namespace

Status ParallelFor(size_t n, unsigned width, const std::function<Status(size_t)>& task) {
  if (width <= 1 || n <= 1) {
    for (size_t i = 0; i < n; ++i) RETURN_IF_ERROR(RunGuarded(task, i));
    return OkStatus();
  }
  std::vector<Status> results(n);
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    for (size_t i; !failed.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < n;) {
      results[i] = RunGuarded(task, i);
      if (!results[i].ok()) failed.store(true, std::memory_order_relaxed);
    }
  };
  const size_t threads = std::min<size_t>(width, n) - 1;
  std::vector<std::thread> helpers;
  helpers.reserve(threads);
  for (size_t t = 0; t < threads; ++t) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no thread to be had: the caller's thread (and any started) does the rest
    }
  }
  work();
  for (auto& h : helpers) h.join();
  for (auto& st : results) RETURN_IF_ERROR(st);
  return OkStatus();
}

}  // namespace omicsfs
