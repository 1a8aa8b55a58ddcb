// Java 19+ Double.toString: every value of the datg corpus's expected TSVs, printed from the
// parsed double, must give back the same token; random bit patterns must round-trip.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>

#include "testutil/mount_fixture.h"
#include "text/number_format.h"
#include "util/fs.h"

namespace omicsfs::text {
namespace {

std::string J(double d) {
  std::string s;
  AppendJavaDouble(&s, d);
  return s;
}

TEST(JavaDoubleTest, Examples) {
  EXPECT_EQ(J(1.0), "1.0");
  EXPECT_EQ(J(1e7), "1.0E7");
  EXPECT_EQ(J(9999999.0), "9999999.0");
  EXPECT_EQ(J(0.001), "0.001");
  EXPECT_EQ(J(9.99e-4), "9.99E-4");
  EXPECT_EQ(J(1234567.0), "1234567.0");
  EXPECT_EQ(J(123456789.0), "1.23456789E8");
  EXPECT_EQ(J(-0.0), "-0.0");
  EXPECT_EQ(J(0.0), "0.0");
  EXPECT_EQ(J(4.9e-324), "4.9E-324");
  EXPECT_EQ(J(2 * 4.9406564584124654e-324), "9.9E-324");
  EXPECT_EQ(J(1.7976931348623157e308), "1.7976931348623157E308");
  EXPECT_EQ(J(1e23), "1.0E23");
  EXPECT_EQ(J(NAN), "NaN");
  EXPECT_EQ(J(INFINITY), "Infinity");
  EXPECT_EQ(J(-INFINITY), "-Infinity");
  EXPECT_EQ(J(100.0), "100.0");
  EXPECT_EQ(J(-2.5e-5), "-2.5E-5");
}

TEST(JavaDoubleTest, EveryCorpusValue) {
  const std::string dir = OMICSFS_CORPUS_DIR "/datg";
  ASSERT_TRUE(fs::is_directory(dir));
  size_t checked = 0;
  for (auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find(".expected.tsv") == std::string::npos) continue;
    std::istringstream text(testutil::ReadMaybeGz(e.path().string()));
    std::string line;
    std::getline(text, line);  // header
    while (std::getline(text, line)) {
      size_t pos = line.find('\t');
      while (pos != std::string::npos) {
        size_t next = line.find('\t', pos + 1);
        std::string tok = line.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
        double d = std::strtod(tok.c_str(), nullptr);
        ASSERT_EQ(J(d), tok) << name;
        ++checked;
        pos = next;
      }
    }
  }
  EXPECT_GT(checked, 1000000u);
}

TEST(JavaDoubleTest, RandomBitPatternsRoundTrip) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 1000000; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, 8);
    if (!std::isfinite(d)) continue;
    std::string s = J(d);
    double back = std::strtod(s.c_str(), nullptr);
    ASSERT_EQ(std::memcmp(&back, &d, 8), 0) << s;
  }
}

}  // namespace
}  // namespace omicsfs::text
