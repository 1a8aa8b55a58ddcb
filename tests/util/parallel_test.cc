#include "util/parallel.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace omicsfs {
namespace {

TEST(ParallelFor, RunsEveryTaskOnceOnSeveralThreads) {
  for (unsigned width : {0u, 1u, 3u, 8u, 64u}) {
    std::vector<std::atomic<int>> runs(100);
    std::mutex mu;
    std::vector<std::thread::id> ids;
    Status st = ParallelFor(runs.size(), width, [&](size_t i) {
      runs[i].fetch_add(1);
      std::lock_guard<std::mutex> lock(mu);
      ids.push_back(std::this_thread::get_id());
      return OkStatus();
    });
    ASSERT_TRUE(st.ok()) << st.ToString();
    for (auto& r : runs) EXPECT_EQ(r.load(), 1);
    if (width <= 1) {
      for (auto id : ids) EXPECT_EQ(id, std::this_thread::get_id());  // the caller alone
    }
  }
}

TEST(ParallelFor, ReturnsTheLowestFailureAndSkipsWhatIsLeft) {
  std::atomic<int> started{0};
  Status st = ParallelFor(1000, 4, [&](size_t i) -> Status {
    started.fetch_add(1);
    if (i == 7 || i == 9) return CorruptError("task " + std::to_string(i));
    if (i > 9) std::this_thread::sleep_for(std::chrono::microseconds(200));
    return OkStatus();
  });
  EXPECT_EQ(st.code(), ErrorCode::kCorrupt);
  EXPECT_EQ(st.message(), "task 7");
  EXPECT_LT(started.load(), 1000);
  // In order on the caller's thread: the first failure stops the rest.
  started = 0;
  st = ParallelFor(10, 1, [&](size_t i) -> Status {
    started.fetch_add(1);
    return i == 2 ? CorruptError("two") : OkStatus();
  });
  EXPECT_EQ(st.message(), "two");
  EXPECT_EQ(started.load(), 3);
}

TEST(ParallelFor, AnExceptionBecomesAnError) {
  Status st = ParallelFor(5, 3, [](size_t i) -> Status {
    if (i == 1) throw std::runtime_error("boom");
    return OkStatus();
  });
  EXPECT_EQ(st.code(), ErrorCode::kInternal);
  EXPECT_NE(st.message().find("boom"), std::string::npos);
}

// A daemon forks after it set up (fuse_daemonize): the pool's threads stay in the parent, and the
// child starts its own at its first batch.
TEST(ParallelFor, WorksInAChildAfterFork) {
  auto count = [] {
    std::atomic<int> runs{0};
    Status st = ParallelFor(64, 8, [&](size_t) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      runs.fetch_add(1);
      return OkStatus();
    });
    return st.ok() ? runs.load() : -1;
  };
  ASSERT_EQ(count(), 64);  // the pool is started here
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(20);  // a hang fails the test rather than blocking it
    _exit(count() == 64 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(count(), 64) << "the parent's pool still works";
}

}  // namespace
}  // namespace omicsfs
