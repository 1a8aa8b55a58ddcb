// The lossless VCF float rule, checked against the corpus README's examples and against an
// independent printf/strtof reference over random float32 bit patterns.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "text/number_format.h"

namespace omicsfs::text {
namespace {

std::string V(float f) {
  std::string s;
  AppendVcfFloat(&s, f);
  return s;
}

// Reference: smallest p with strtof(%.{p-1}e) == x, then %.{max(6,p)}g of that decimal.
std::string Reference(float x) {
  char buf[64];
  int p = 1;
  for (; p <= 9; ++p) {
    std::snprintf(buf, sizeof(buf), "%.*e", p - 1, static_cast<double>(x));
    if (std::strtof(buf, nullptr) == x) break;
  }
  double d = std::strtod(buf, nullptr);
  std::snprintf(buf, sizeof(buf), "%.*g", std::max(6, p), d);
  return buf;
}

TEST(VcfFloatTest, ContractExamples) {
  EXPECT_EQ(V(1e-07f), "1e-07");
  EXPECT_EQ(V(3.4e+38f), "3.4e+38");
  EXPECT_EQ(V(1.5e-05f), "1.5e-05");
  EXPECT_EQ(V(1.2345679e+08f), "1.2345679e+08");
  EXPECT_EQ(V(0.5f), "0.5");
  EXPECT_EQ(V(9.6f), "9.6");
  EXPECT_EQ(V(58104.6f), "58104.6");
  EXPECT_EQ(V(100000.0f), "100000");
  EXPECT_EQ(V(1234567.0f), "1234567");
  EXPECT_EQ(V(0.0001f), "0.0001");
  EXPECT_EQ(V(999999.5f), "999999.5");
  EXPECT_EQ(V(16777216.0f), "16777216");
  EXPECT_EQ(V(0.33333334f), "0.33333334");
  EXPECT_EQ(V(2311380.0f), "2.31138e+06");
  EXPECT_EQ(V(3.0103f), "3.0103");
  EXPECT_EQ(V(0.0003f), "0.0003");
  EXPECT_EQ(V(3.4028235e+38f), "3.4028235e+38");
  EXPECT_EQ(V(6.4456e-40f), "6.4456e-40");
  EXPECT_EQ(V(0.0f), "0");
  EXPECT_EQ(V(-0.0f), "-0");
  EXPECT_EQ(V(-2.5f), "-2.5");
  EXPECT_EQ(V(INFINITY), "inf");
  EXPECT_EQ(V(-INFINITY), "-inf");
  EXPECT_EQ(V(NAN), "nan");
  EXPECT_EQ(V(-NAN), "-nan");
}

TEST(VcfFloatTest, RandomBitPatternsMatchReferenceAndRoundTrip) {
  std::mt19937 rng(2024);
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, 4);
    if (!std::isfinite(f)) continue;
    std::string s = V(f);
    ASSERT_EQ(s, Reference(f)) << bits;
    float back = std::strtof(s.c_str(), nullptr);
    ASSERT_EQ(std::memcmp(&back, &f, 4), 0) << s;
  }
}

TEST(VcfFloatTest, DecimalLikeValues) {
  std::mt19937 rng(7);
  for (int i = 0; i < 100000; ++i) {
    float f = static_cast<float>(static_cast<int>(rng() % 2000000) - 1000000) /
              std::pow(10.0f, static_cast<float>(rng() % 8));
    ASSERT_EQ(V(f), Reference(f)) << f;
  }
}

}  // namespace
}  // namespace omicsfs::text
