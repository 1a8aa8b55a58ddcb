#include "util/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>

namespace omicsfs {
namespace {

TEST(RunChild, ExitCodeAndOutput) {
  auto r = RunChild({"/bin/sh", "-c", "echo first; echo last >&2; exit 3"}, 20);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->signal, 0);
  EXPECT_FALSE(r->timed_out);
  EXPECT_FALSE(r->Succeeded());
  EXPECT_EQ(r->output, "first\nlast\n");
  EXPECT_EQ(r->Describe(), "exit code 3: last");
}

TEST(RunChild, Success) {
  auto r = RunChild({"/bin/true"}, 20);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->Succeeded());
}

TEST(RunChild, SignalIsReported) {
  auto r = RunChild({"/bin/sh", "-c", "kill -SEGV $$"}, 20);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->signal, SIGSEGV);
  EXPECT_FALSE(r->Succeeded());
  EXPECT_NE(r->Describe().find("signal 11"), std::string::npos) << r->Describe();
}

TEST(RunChild, HangIsKilledAtTheTimeLimit) {
  const auto start = std::chrono::steady_clock::now();
  auto r = RunChild({"/bin/sleep", "30"}, 0.3);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_FALSE(r->Succeeded());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(RunChild, OutputIsBoundedToItsTail) {
  auto r = RunChild({"/bin/sh", "-c", "yes x | head -c 1000000; echo end"}, 20, 0, 1000);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->output.size(), 1000u);
  EXPECT_EQ(r->output.substr(r->output.size() - 4), "end\n");
}

TEST(RunChild, MemoryHogIsKilledAtItsLimit) {
  // The shell holds 200 MB in a variable; the limit is 64 MiB.
  auto r = RunChild({"/bin/sh", "-c", "x=$(head -c 200000000 /dev/zero | tr '\\0' a); sleep 30"},
                    60, 64 << 20);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->too_big);
  EXPECT_FALSE(r->Succeeded());
  EXPECT_NE(r->Describe().find("memory limit"), std::string::npos) << r->Describe();
  auto small = RunChild({"/bin/true"}, 20, 64 << 20);
  ASSERT_TRUE(small.ok());
  EXPECT_TRUE(small->Succeeded());
}

TEST(RunChild, MissingProgramIsAnError) { EXPECT_FALSE(RunChild({"/nonexistent/helper"}, 5).ok()); }

}  // namespace
}  // namespace omicsfs
