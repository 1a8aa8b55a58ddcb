// Leveled logging: to stderr, to a log file (a detached daemon's default), or to syslog. The last
// warnings and errors are also kept in memory (the mount shows them in .omicsfs/errors). Never
// used for control flow.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace omicsfs {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kSilent = 4 };

void SetLogLevel(LogLevel level);
void SetLogToSyslog(bool enabled);
// Appends every later line to `path` (created 0600, its missing parent directories 0700), with a
// time stamp; replaces syslog, and stderr unless `also_stderr` (until SetLogTee(false): a daemon
// about to detach logs its start to both).
Status SetLogFile(const std::string& path, bool also_stderr = false);
void SetLogTee(bool also_stderr);
bool LogEnabled(LogLevel level);
void Log(LogLevel level, std::string_view message);
// The last warnings and errors, oldest first, each "YYYY-MM-DDTHH:MM:SSZ level: message"
// (kept whatever the level, at most kRecentProblems).
inline constexpr size_t kRecentProblems = 200;
std::vector<std::string> RecentProblems();

inline void LogDebug(std::string_view m) { Log(LogLevel::kDebug, m); }
inline void LogInfo(std::string_view m) { Log(LogLevel::kInfo, m); }
inline void LogWarning(std::string_view m) { Log(LogLevel::kWarning, m); }
inline void LogError(std::string_view m) { Log(LogLevel::kError, m); }

}  // namespace omicsfs
