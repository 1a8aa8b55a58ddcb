// Number formatters: std::to_chars only (no locale, no printf). Reals print as the shortest text
// that round-trips to the stored type (std::to_chars default form).
#pragma once

#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>

namespace omicsfs::text {

// Maximum characters any formatter below writes.
inline constexpr size_t kMaxNumberChars = 32;

inline char* WriteUInt(char* p, uint64_t v) { return std::to_chars(p, p + 20, v).ptr; }
inline char* WriteInt(char* p, int64_t v) { return std::to_chars(p, p + 21, v).ptr; }
inline char* WriteFloat(char* p, float v) { return std::to_chars(p, p + kMaxNumberChars, v).ptr; }
inline char* WriteDouble(char* p, double v) { return std::to_chars(p, p + kMaxNumberChars, v).ptr; }

void AppendUInt(std::string* out, uint64_t v);

inline constexpr uint64_t kPow10[20] = {1ULL,
                                        10ULL,
                                        100ULL,
                                        1000ULL,
                                        10000ULL,
                                        100000ULL,
                                        1000000ULL,
                                        10000000ULL,
                                        100000000ULL,
                                        1000000000ULL,
                                        10000000000ULL,
                                        100000000000ULL,
                                        1000000000000ULL,
                                        10000000000000ULL,
                                        100000000000000ULL,
                                        1000000000000000ULL,
                                        10000000000000000ULL,
                                        100000000000000000ULL,
                                        1000000000000000000ULL,
                                        10000000000000000000ULL};

// Decimal digits of v (1 for 0): from its bit length, then one comparison. (v | 1 has the
// digits of v: an even v is never the 10^k − 1 below a new length.)
inline int DecimalDigits(uint64_t v) {
  v |= 1;
  const int bits = 64 - __builtin_clzll(v);
  const int n = (bits * 1233) >> 12;  // floor(bits·log10(2)), within one of the answer
  return n + (v >= kPow10[n]);
}

// "00" "01" … "99": two digits a look-up.
inline constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// A uint32's decimal text kept for stepping through sorted values (positions along a
// chromosome): from a value a little below, only the last four digits are made anew unless a
// carry passes them. Put and PutNear may store up to 16 bytes. (The digits above the last four
// are copied from memory written only by Set, so no load waits on a store just made.)
class SteppedDecimal {
 public:
  void Set(uint32_t v) {
    value_ = v;
    std::memset(digits_, '0', 10);
    char buf[20];  // WriteUInt's room (a uint32 takes at most 10)
    char* end = WriteUInt(buf, v);
    len_ = static_cast<int>(end - buf);
    std::memcpy(digits_ + 10 - len_, buf, static_cast<size_t>(len_));
    low_ = v % 10000;
    low_text_ = Four(low_);
  }
  void Step(uint32_t v) {
    const uint32_t low = low_ + (v - value_);
    if (!Near(v, low)) return Set(v);
    value_ = v;
    low_ = low;
    low_text_ = Four(low);
  }
  char* Put(char* p) const {
    std::memcpy(p, digits_ + 10 - len_, 16);
    if (len_ >= 4) std::memcpy(p + len_ - 4, &low_text_, 4);
    return p + len_;
  }
  // v's text (e.g. an end a few hundred past this start), from these digits when v is near.
  char* PutNear(char* p, uint32_t v) const {
    const uint32_t low = low_ + (v - value_);
    if (!Near(v, low)) return WriteUInt(p, v);
    std::memcpy(p, digits_ + 10 - len_, 16);
    const uint32_t text = Four(low);
    std::memcpy(p + len_ - 4, &text, 4);
    return p + len_;
  }

 private:
  // v ≥ value_ ≥ 10000 and v's last four digits hold the step: same length, same digits above.
  bool Near(uint32_t v, uint32_t low) const {
    return v >= value_ && value_ >= 10000 && v - value_ < 10000 && low < 10000;
  }
  static uint32_t Four(uint32_t v) {  // v < 10000 as four ASCII digits, in memory order
    uint16_t hi, lo;
    std::memcpy(&hi, kDigitPairs + 2 * (v / 100), 2);
    std::memcpy(&lo, kDigitPairs + 2 * (v % 100), 2);
    uint32_t out;
    const uint16_t halves[2] = {hi, lo};
    std::memcpy(&out, halves, 4);
    return out;
  }
  char digits_[32] = {};  // 10 digits, zero-padded on the left, then room for a 16-byte copy
  uint32_t value_ = 0, low_ = 0, low_text_ = 0x30303030;  // low_: value_ % 10000
  int len_ = 1;
};

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
