// Leveled logging to stderr, or syslog once the daemon has detached. Never used for control flow.
#pragma once

#include <string_view>

namespace omicsfs {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

void SetLogLevel(LogLevel level);
void SetLogToSyslog(bool enabled);
bool LogEnabled(LogLevel level);
void Log(LogLevel level, std::string_view message);

inline void LogDebug(std::string_view m) { Log(LogLevel::kDebug, m); }
inline void LogInfo(std::string_view m) { Log(LogLevel::kInfo, m); }
inline void LogWarning(std::string_view m) { Log(LogLevel::kWarning, m); }
inline void LogError(std::string_view m) { Log(LogLevel::kError, m); }

}  // namespace omicsfs
