#include "util/log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <atomic>
#include <ctime>
#include <deque>
#include <mutex>
#include <string>

#include "util/fs.h"

namespace omicsfs {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<bool> g_syslog{false};
std::atomic<int> g_fd{STDERR_FILENO};
std::atomic<bool> g_stamp{false};  // time stamps: in log files, not on a terminal's stderr
std::atomic<bool> g_tee{false};    // a log file, and stderr too
constexpr const char* kNames[] = {"debug", "info", "warning", "error"};

std::mutex g_recent_mu;
std::deque<std::string>& Recent() {
  static auto* recent = new std::deque<std::string>();  // never destroyed: logged from any thread
  return *recent;
}

std::string Now() {
  const std::time_t t = std::time(nullptr);
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}
}  // namespace

void SetLogLevel(LogLevel level) { g_level = static_cast<int>(level); }

void SetLogToSyslog(bool enabled) {
  if (enabled) openlog("omicsfs", LOG_PID, LOG_DAEMON);
  g_syslog = enabled;
}

void SetLogTee(bool also_stderr) { g_tee = also_stderr; }

Status SetLogFile(const std::string& path, bool also_stderr) {
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) {
    fs_error ec;
    if (!fs::is_directory(parent, ec)) {
      fs::create_directories(parent, ec);
      if (ec) return IoError("log_file: cannot create " + parent.string(), ec.value());
      ::chmod(parent.c_str(), 0700);
    }
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return IoError("log_file: cannot open " + path, errno);
  const int old = g_fd.exchange(fd);
  if (old != STDERR_FILENO) ::close(old);
  g_stamp = true;
  g_syslog = false;
  g_tee = also_stderr;
  return OkStatus();
}

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= g_level.load(); }

void Log(LogLevel level, std::string_view message) {
  const int lv = static_cast<int>(level);
  if (level >= LogLevel::kWarning && level <= LogLevel::kError) {
    std::string entry = Now() + " " + kNames[lv] + ": ";
    entry += message;
    std::lock_guard lock(g_recent_mu);
    Recent().push_back(std::move(entry));
    if (Recent().size() > kRecentProblems) Recent().pop_front();
  }
  if (!LogEnabled(level) || level == LogLevel::kSilent) return;
  if (g_syslog) {
    static constexpr int kPrio[] = {LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERR};
    syslog(kPrio[lv], "%.*s", static_cast<int>(message.size()), message.data());
    return;
  }
  // One write per line so concurrent lines never interleave.
  std::string tail = kNames[lv];
  tail += ": ";
  tail += message;
  tail += '\n';
  const std::string line =
      (g_stamp ? Now() + " omicsfs[" + std::to_string(::getpid()) + "]: " : "omicsfs: ") + tail;
  ssize_t ignored = ::write(g_fd.load(), line.data(), line.size());
  if (g_tee) ignored = ::write(STDERR_FILENO, ("omicsfs: " + tail).data(), tail.size() + 9);
  (void)ignored;
}

std::vector<std::string> RecentProblems() {
  std::lock_guard lock(g_recent_mu);
  return {Recent().begin(), Recent().end()};
}

}  // namespace omicsfs
