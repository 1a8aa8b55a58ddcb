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
void AppendInt(std::string* out, int64_t v);

// The VCF float policy (lossless float32): the fewest significant digits p (1..9) whose
// correctly rounded %.{p-1}e form reads back as the same float32, laid out like C's %g with
// precision max(6, p): scientific when the exponent is < -4 or >= that precision, else fixed;
// no trailing zeros. "-0" for negative zero; inf, -inf, nan, -nan for non-finite values.
void AppendVcfFloat(std::string* out, float v);

// Java 19+ Double.toString: shortest round-trip digits (a 1-digit result is replaced by the
// closest 2-digit one when that is closer, e.g. 9.9E-324); plain decimal with at least one
// fraction digit for 1e-3 <= |x| < 1e7, else d.ddd…E[-]n; NaN, Infinity, -Infinity, -0.0.
void AppendJavaDouble(std::string* out, double v);
inline constexpr size_t kMaxJavaDoubleChars = 32;
char* WriteJavaDouble(char* p, double v);  // writes at most kMaxJavaDoubleChars
size_t JavaDoubleLength(double v);         // what WriteJavaDouble would write, without writing
void AppendFloat(std::string* out, float v);
void AppendDouble(std::string* out, double v);

}  // namespace omicsfs::text
