#include "util/log.h"

#include <syslog.h>
#include <unistd.h>

#include <atomic>
#include <string>

namespace omicsfs {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<bool> g_syslog{false};
}  // namespace

void SetLogLevel(LogLevel level) { g_level = static_cast<int>(level); }

void SetLogToSyslog(bool enabled) {
  if (enabled) openlog("omicsfs", LOG_PID, LOG_DAEMON);
  g_syslog = enabled;
}

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= g_level.load(); }

void Log(LogLevel level, std::string_view message) {
  if (!LogEnabled(level)) return;
  static constexpr const char* kNames[] = {"debug", "info", "warning", "error"};
  if (g_syslog) {
    static constexpr int kPrio[] = {LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERR};
    syslog(kPrio[static_cast<int>(level)], "%.*s", static_cast<int>(message.size()), message.data());
    return;
  }
  // One write per line so concurrent lines never interleave.
  std::string line = "omicsfs: ";
  line += kNames[static_cast<int>(level)];
  line += ": ";
  line += message;
  line += '\n';
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace omicsfs
