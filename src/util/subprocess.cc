#include "util/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

extern char** environ;

namespace omicsfs {

namespace {

// Resident memory of a running process, from /proc (0 when unknown).
uint64_t ResidentBytes(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/statm", static_cast<int>(pid));
  FILE* f = std::fopen(path, "re");
  if (f == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

}  // namespace

std::string ChildOutcome::Describe() const {
  std::string out;
  if (too_big) {
    out = "used more than its memory limit";
  } else if (timed_out) {
    out = "no answer within the time limit";
  } else if (signal != 0) {
    out = "signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  } else {
    out = "exit code " + std::to_string(exit_code);
  }
  size_t end = output.find_last_not_of("\n ");
  if (end != std::string::npos) {
    size_t begin = output.rfind('\n', end);
    begin = begin == std::string::npos ? 0 : begin + 1;
    out += ": " + output.substr(begin, end + 1 - begin);
  }
  return out;
}

Result<ChildOutcome> RunChild(const std::vector<std::string>& argv, double timeout_s,
                              uint64_t max_rss_bytes, size_t max_output) {
  if (argv.empty()) return InvalidArgumentError("RunChild: no program");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return IoError("pipe for " + argv[0], errno);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  // A fresh signal mask and default dispositions: the daemon blocks signals in its threads.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0].c_str(), &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return IoError("cannot start " + argv[0], rc);
  }
  ChildOutcome out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      out.timed_out = true;
      break;
    }
    if (max_rss_bytes > 0 && ResidentBytes(pid) > max_rss_bytes) {
      out.too_big = true;
      break;
    }
    struct pollfd p = {fds[0], POLLIN, 0};
    const int n = ::poll(
        &p, 1, static_cast<int>(std::min<int64_t>(left.count(), max_rss_bytes > 0 ? 20 : 1000)));
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    const ssize_t got = ::read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // end of output: the child (and anything it started) closed the pipe
    out.output.append(buf, static_cast<size_t>(got));
    if (out.output.size() > 2 * max_output) out.output.erase(0, out.output.size() - max_output);
  }
  ::close(fds[0]);
  if (out.timed_out || out.too_big) ::kill(pid, SIGKILL);
  int status = 0;
  struct rusage usage = {};
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  out.max_rss_bytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
  if (max_rss_bytes > 0 && out.max_rss_bytes > max_rss_bytes)
    out.too_big = true;  // between two checks
  if (out.output.size() > max_output) out.output.erase(0, out.output.size() - max_output);
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out.signal = out.timed_out || out.too_big ? 0 : WTERMSIG(status);
  return out;
}

}  // namespace omicsfs
