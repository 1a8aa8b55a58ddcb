// Number formatters: std::to_chars only (no locale, no printf). Reals print as the shortest text
// that round-trips to the stored type (std::to_chars default form).
#pragma once

#include <charconv>
#include <cstdint>
#include <string>

namespace omicsfs::text {

// Maximum characters any formatter below writes.
inline constexpr size_t kMaxNumberChars = 32;

inline char* WriteUInt(char* p, uint64_t v) { return std::to_chars(p, p + 20, v).ptr; }
inline char* WriteFloat(char* p, float v) { return std::to_chars(p, p + kMaxNumberChars, v).ptr; }
inline char* WriteDouble(char* p, double v) { return std::to_chars(p, p + kMaxNumberChars, v).ptr; }

void AppendUInt(std::string* out, uint64_t v);
void AppendFloat(std::string* out, float v);
void AppendDouble(std::string* out, double v);

}  // namespace omicsfs::text
