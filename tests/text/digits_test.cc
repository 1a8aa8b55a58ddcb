// The digit words of the number formatters: both ways (SSE2 where built, and the portable one
// every build has) against snprintf, on every value of each 8-digit half.
#include "text/digits.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>

namespace omicsfs::text::digits {
namespace {

std::string Text(uint64_t a, uint64_t b) {
  char buf[16];
  std::memcpy(buf, &a, 8);
  std::memcpy(buf + 8, &b, 8);
  return std::string(buf, 16);
}

std::string Padded(uint64_t x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llu", static_cast<unsigned long long>(x));
  return buf;
}

TEST(Digits, EveryEightDigitHalfBothWays) {
  // Every half value in both halves: x = y·10^8 + (y·7919 mod 10^8) covers every high half and,
  // as y runs over all values, every low half through the multiplier's inverse.
  uint64_t bad = 0;
  for (uint64_t y = 0; y < 100000000; ++y) {
    const uint64_t x = y * 100000000 + (y * 7919) % 100000000;
    uint64_t a, b, c, d;
    Digits16(x, &a, &b);
    Digits16Scalar(x, &c, &d);
    if (a != c || b != d) ++bad;
    if (y % 999983 == 0) {
      ASSERT_EQ(Text(a, b), Padded(x));
      ASSERT_EQ(Text(c, d), Padded(x));
    }
  }
  EXPECT_EQ(bad, 0u);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t x = rng() % 10000000000000000ULL;
    uint64_t a, b;
    Digits16(x, &a, &b);
    ASSERT_EQ(Text(a, b), Padded(x));
  }
}

TEST(Digits, TrailingZeros) {
  for (uint64_t x : {0ULL, 1ULL, 10ULL, 1200ULL, 10000000ULL, 12345678ULL, 99999990ULL}) {
    const uint64_t w = Digits8(static_cast<uint32_t>(x));
    int want = 0;
    if (x == 0) want = 8;
    for (uint64_t t = x; t != 0 && t % 10 == 0; t /= 10) ++want;
    EXPECT_EQ(TrailingZeros(w), want) << x;
  }
}

}  // namespace
}  // namespace omicsfs::text::digits
