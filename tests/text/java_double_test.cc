// Java 19+ Double.toString: every value of the datg corpus's expected TSVs, printed from the
// parsed double, must give back the same token; random bit patterns must round-trip.
#include <gtest/gtest.h>
#include <zlib.h>

#include <charconv>
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
  for (double special : {double{NAN}, double{INFINITY}, -double{INFINITY}, 0.0, -0.0})
    EXPECT_EQ(JavaDoubleLength(special), J(special).size());
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
        std::string tok =
            line.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
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

// An independent reference: std::to_chars gives the shortest round-trip digits (closest, even
// on a tie); a single digit is replaced by the closest decimal of one or two digits that rounds
// back, as Java's specification says. Only Java's layout is shared knowledge.
std::string Reference(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v < 0 ? "-Infinity" : "Infinity";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  auto split = [](const char* b, const char* e, std::string* digits, int* exponent) {
    const char* q = b;
    if (*q == '-') ++q;
    for (; q < e && *q != 'e'; ++q) {
      if (*q != '.') digits->push_back(*q);
    }
    *exponent = std::atoi(std::string(q + 1, e).c_str());
  };
  char buf[64];
  char* end = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific).ptr;
  std::string digits;
  int exponent = 0;
  split(buf, end, &digits, &exponent);
  if (digits.size() == 1) {
    char two[64];
    char* tend = std::to_chars(two, two + sizeof two, v, std::chars_format::scientific, 1).ptr;
    double back = 0;
    std::from_chars(two, tend, back);
    if (back == v) {
      digits.clear();
      split(two, tend, &digits, &exponent);
      while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    }
  }
  std::string out = v < 0 ? "-" : "";
  const double a = std::fabs(v);
  const int n = static_cast<int>(digits.size());
  if (a >= 1e-3 && a < 1e7) {
    if (exponent >= 0) {
      if (n <= exponent + 1) return out + digits + std::string(exponent + 1 - n, '0') + ".0";
      return out + digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
    }
    return out + "0." + std::string(-exponent - 1, '0') + digits;
  }
  return out + digits.substr(0, 1) + "." + (n > 1 ? digits.substr(1) : "0") + "E" +
         std::to_string(exponent);
}

TEST(JavaDoubleTest, AgreesWithTheReferenceEverywhere) {
  std::mt19937_64 rng(11);
  uint64_t checked = 0;
  auto check = [&](double d) {
    ++checked;
    const std::string got = J(d), want = Reference(d);
    // The sizing pass measures values without writing them: the same length, always.
    const size_t measured = JavaDoubleLength(d);
    if (got != want || measured != got.size()) {
      uint64_t bits;
      std::memcpy(&bits, &d, 8);
      ADD_FAILURE() << "bits " << std::hex << bits << ": got " << got << ", want " << want
                    << ", measured " << std::dec << measured;
      return false;
    }
    return true;
  };
  // Random bit patterns (every exponent), random values of every magnitude class that datg
  // holds (z-scores, p-values, correlations), integers, powers of two and ten, subnormals and
  // the neighbours of each.
  std::normal_distribution<double> normal(0, 3);
  std::uniform_real_distribution<double> unit(0, 1);
  const int n = std::getenv("OMICSFS_JAVA_DOUBLE_N")
                    ? std::atoi(std::getenv("OMICSFS_JAVA_DOUBLE_N"))
                    : 2000000;
  for (int i = 0; i < n; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, 8);
    if (std::isfinite(d) && !check(d)) return;
    if (!check(normal(rng)) || !check(unit(rng)) ||
        !check(std::ldexp(unit(rng), -static_cast<int>(rng() % 60))))
      return;
    if (!check(static_cast<double>(rng() % 100000000)) ||
        !check(std::round(normal(rng) * 1000) / 1000))
      return;
  }
  // Integers from 2^53 to 2^64 (where the scaled ends of the rounding interval are integers, and
  // an excluded end can be a multiple of 1000), and decimals of one to four digits at every
  // exponent with their neighbours (ties and ends of intervals).
  for (int i = 0; i < n / 4; ++i) {
    const double big = std::ldexp(static_cast<double>((rng() >> 11) | (uint64_t{1} << 52)),
                                  1 + static_cast<int>(rng() % 11));
    if (!check(big) || !check(std::nextafter(big, 0.0))) return;
  }
  for (int e = -323; e <= 308; ++e) {
    for (int j = 0; j < 8; ++j) {
      const std::string text = std::to_string(1 + rng() % 9999) + "e" + std::to_string(e - 3);
      const double d = std::strtod(text.c_str(), nullptr);
      if (!check(d) || !check(std::nextafter(d, 0.0)) || !check(std::nextafter(d, INFINITY)))
        return;
    }
  }
  for (int e = -1074; e <= 1023; ++e) {
    const double p = std::ldexp(1.0, e);
    if (!check(p) || !check(std::nextafter(p, 0.0)) || !check(std::nextafter(p, INFINITY))) return;
  }
  for (int e = -323; e <= 308; ++e) {
    const double p = std::strtod(("1e" + std::to_string(e)).c_str(), nullptr);
    if (!check(p) || !check(std::nextafter(p, 0.0)) || !check(std::nextafter(p, INFINITY))) return;
  }
  for (uint64_t bits = 1; bits < 100000; ++bits) {  // the smallest subnormals
    double d;
    std::memcpy(&d, &bits, 8);
    if (!check(d) || !check(-d)) return;
  }
  EXPECT_GT(checked, 10000000u);
}

}  // namespace
}  // namespace omicsfs::text
