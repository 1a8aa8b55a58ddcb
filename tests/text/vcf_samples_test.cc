// The VCF view's sample columns (text/vcf_samples.h) against a plain reference formatter: every
// integer dtype, edge values (the missing and fill sentinels, 0, digit boundaries, each type's
// extremes, negatives), entries of 1..12 values, GT with and without phasing, sample counts
// around the writer's block size, and both of its ways (slots, and entries too long for them).
#include "text/vcf_samples.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace omicsfs::text::vcf {
namespace {

using formats::zarr::DType;

template <typename T>
std::vector<int64_t> Edges() {
  std::vector<int64_t> e = {0,   1,    9,    10,   11,    99,    100,    101,
                            999, 1000, 1001, 9999, 10000, 99999, 100000, 123456789};
  if (std::is_signed_v<T>) {
    for (int64_t v : {-1, -2, -3, -9, -10, -99, -100, -999, -1000, -10000}) e.push_back(v);
  }
  e.push_back(static_cast<int64_t>(std::numeric_limits<T>::max()));
  e.push_back(static_cast<int64_t>(std::numeric_limits<T>::min()));
  if (std::is_signed_v<T>) e.push_back(static_cast<int64_t>(std::numeric_limits<T>::min()) + 1);
  std::vector<int64_t> in_range;
  for (int64_t v : e) {
    bool fits;
    if constexpr (std::is_same_v<T, uint64_t>) {
      fits = v >= 0;
    } else {
      fits = static_cast<int64_t>(static_cast<T>(v)) == v;
    }
    if (fits) in_range.push_back(v);
  }
  return in_range;
}

struct Column {
  DType dtype;
  bool is_signed;
  uint64_t n;
  std::string bytes;            // the values, in the dtype's width
  std::vector<int64_t> values;  // the same, as numbers (uint64 max as -1 bit pattern)
};

template <typename T>
Column MakeColumn(DType dtype, uint64_t ns, uint64_t n, std::mt19937_64& rng) {
  Column c{dtype, std::is_signed_v<T>, n, {}, {}};
  const std::vector<int64_t> edges = Edges<T>();
  std::vector<T> v(ns * n);
  for (uint64_t s = 0; s < ns; ++s) {
    for (uint64_t i = 0; i < n; ++i) {
      T x;
      switch (rng() % 4) {
        case 0:
          x = static_cast<T>(edges[rng() % edges.size()]);
          break;
        case 1:
          x = static_cast<T>(rng() % 100);
          break;
        case 2:
          x = static_cast<T>(rng());
          break;
        default:
          x = static_cast<T>(rng() % 1200);
          break;
      }
      // Signed entries often end early in fills (haploid calls, fewer alleles), as stores hold
      // them.
      if (std::is_signed_v<T> && i > 0 && rng() % 3 == 0) x = static_cast<T>(-2);
      v[s * n + i] = x;
    }
  }
  c.bytes.assign(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  for (T x : v) c.values.push_back(static_cast<int64_t>(x));
  return c;
}

// What vcztools writes for one entry: values up to the first fill, '.' for missing, sep between.
void Reference(std::string* out, const Column& c, uint64_t s, char sep) {
  for (uint64_t i = 0; i < c.n; ++i) {
    const int64_t x = c.values[s * c.n + i];
    if (c.is_signed && x == -2) break;
    if (i > 0) out->push_back(sep);
    if (c.is_signed && x == -1) {
      out->push_back('.');
    } else if (c.is_signed) {
      *out += std::to_string(x);
    } else {
      *out += std::to_string(static_cast<uint64_t>(x));
    }
  }
}

std::string ReferenceSamples(const std::vector<Column>& cols, uint64_t ns, bool gt,
                             const uint8_t* phased) {
  std::string out;
  for (uint64_t s = 0; s < ns; ++s) {
    out.push_back('\t');
    for (size_t c = 0; c < cols.size(); ++c) {
      if (c > 0) out.push_back(':');
      Reference(&out, cols[c], s,
                c == 0 && gt ? (phased != nullptr && phased[s] ? '|' : '/') : ',');
    }
  }
  return out;
}

// Writes through WriteIntSamples into a buffer of exactly IntSamplesBound bytes followed by a
// guard; checks the guard and returns the text.
std::string Written(const std::vector<Column>& cols, uint64_t ns, bool gt, const uint8_t* phased) {
  std::vector<IntColumn> ic;
  for (const Column& c : cols) ic.push_back({c.dtype, c.bytes.data(), c.n});
  const uint64_t bound = IntSamplesBound(ic.data(), ic.size(), ns);
  std::string buf(bound + 64, '\x5a');
  char* end = WriteIntSamples(buf.data(), ic.data(), ic.size(), ns, gt, phased);
  EXPECT_LE(static_cast<uint64_t>(end - buf.data()), bound);
  EXPECT_EQ(buf.substr(bound), std::string(64, '\x5a')) << "wrote past the bound";
  return buf.substr(0, end - buf.data());
}

Column MakeOf(DType t, uint64_t ns, uint64_t n, std::mt19937_64& rng) {
  switch (t) {
    case DType::kInt8:
      return MakeColumn<int8_t>(t, ns, n, rng);
    case DType::kInt16:
      return MakeColumn<int16_t>(t, ns, n, rng);
    case DType::kInt32:
      return MakeColumn<int32_t>(t, ns, n, rng);
    case DType::kInt64:
      return MakeColumn<int64_t>(t, ns, n, rng);
    case DType::kUInt8:
      return MakeColumn<uint8_t>(t, ns, n, rng);
    case DType::kUInt16:
      return MakeColumn<uint16_t>(t, ns, n, rng);
    case DType::kUInt32:
      return MakeColumn<uint32_t>(t, ns, n, rng);
    case DType::kUInt64:
      return MakeColumn<uint64_t>(t, ns, n, rng);
    default: {  // kBool: 0 and 1
      Column c{t, false, n, {}, {}};
      for (uint64_t i = 0; i < ns * n; ++i) {
        const uint8_t b = rng() % 2;
        c.bytes.push_back(static_cast<char>(b));
        c.values.push_back(b);
      }
      return c;
    }
  }
}

constexpr DType kTypes[] = {DType::kInt8,   DType::kInt16,  DType::kInt32,
                            DType::kInt64,  DType::kUInt8,  DType::kUInt16,
                            DType::kUInt32, DType::kUInt64, DType::kBool};

TEST(VcfSamples, EachTypeAndWidthMatchesTheReference) {
  std::mt19937_64 rng(28);
  for (DType t : kTypes) {
    for (uint64_t n : {1, 2, 3, 4, 7, 12}) {
      for (uint64_t ns : {1, 127, 128, 129, 300}) {
        std::vector<Column> cols = {MakeOf(t, ns, n, rng)};
        EXPECT_EQ(Written(cols, ns, false, nullptr), ReferenceSamples(cols, ns, false, nullptr))
            << "dtype " << static_cast<int>(t) << " n " << n << " samples " << ns;
      }
    }
  }
}

TEST(VcfSamples, GenotypesWithFormatFields) {
  std::mt19937_64 rng(17);
  for (uint64_t ploidy : {1, 2, 3}) {
    for (uint64_t ns : {1, 5, 128, 500, 1000}) {
      std::vector<Column> cols = {
          MakeOf(DType::kInt8, ns, ploidy, rng), MakeOf(DType::kInt16, ns, 3, rng),
          MakeOf(DType::kInt16, ns, 1, rng), MakeOf(DType::kInt32, ns, 1, rng),
          MakeOf(DType::kUInt8, ns, 2, rng)};
      std::vector<uint8_t> phased(ns);
      for (auto& p : phased)
        p = static_cast<uint8_t>(rng() % 3 == 0 ? 0 : rng() % 200);  // any nonzero is phased
      EXPECT_EQ(Written(cols, ns, true, phased.data()),
                ReferenceSamples(cols, ns, true, phased.data()));
      EXPECT_EQ(Written(cols, ns, true, nullptr), ReferenceSamples(cols, ns, true, nullptr));
      EXPECT_EQ(Written(cols, ns, false, nullptr), ReferenceSamples(cols, ns, false, nullptr));
    }
  }
}

TEST(VcfSamples, SmallGenotypesEveryPair) {
  // Diploid int8 calls of every pair of -2..12 (fill, missing, one and two digits), phased or not.
  std::vector<int8_t> v;
  std::vector<uint8_t> phased;
  for (int a = -2; a <= 12; ++a) {
    for (int b = -2; b <= 12; ++b) {
      for (uint8_t p : {0, 1}) {
        v.push_back(static_cast<int8_t>(a));
        v.push_back(static_cast<int8_t>(b));
        phased.push_back(p);
      }
    }
  }
  const uint64_t ns = phased.size();
  Column c{
      DType::kInt8, true, 2, std::string(reinterpret_cast<const char*>(v.data()), v.size()), {}};
  for (int8_t x : v) c.values.push_back(x);
  std::vector<Column> cols = {c};
  EXPECT_EQ(Written(cols, ns, true, phased.data()),
            ReferenceSamples(cols, ns, true, phased.data()));
  // A few by hand: what a VCF shows.
  const std::string text = Written(cols, ns, true, phased.data());
  EXPECT_NE(text.find("\t0/1\t0|1\t"), std::string::npos);
  EXPECT_NE(text.find("\t./.\t.|.\t"), std::string::npos);
  EXPECT_NE(text.find("\t12/12\t12|12"), std::string::npos);
}

TEST(VcfSamples, ManyColumnsOrLongEntriesGoTheStraightWay) {
  std::mt19937_64 rng(5);
  for (uint64_t ns : {1, 129}) {
    std::vector<Column> many;
    for (int c = 0; c < 17; ++c) many.push_back(MakeOf(kTypes[c % 9], ns, 1 + c % 3, rng));
    EXPECT_EQ(Written(many, ns, true, nullptr), ReferenceSamples(many, ns, true, nullptr));
    std::vector<Column> longer = {MakeOf(DType::kInt8, ns, 2, rng),
                                  MakeOf(DType::kInt64, ns, 12, rng),
                                  MakeOf(DType::kUInt64, ns, 40, rng)};
    EXPECT_EQ(Written(longer, ns, true, nullptr), ReferenceSamples(longer, ns, true, nullptr));
  }
}

TEST(VcfSamples, NoColumnsWriteTabs) { EXPECT_EQ(Written({}, 3, false, nullptr), "\t\t\t"); }

}  // namespace
}  // namespace omicsfs::text::vcf
