#include "text/mtx_source.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "formats/bpcells/matrix.h"
#include "testutil/mount_fixture.h"
#include "testutil/store_writer.h"
#include "text/dense_source.h"
#include "text/number_format.h"
#include "text/raw_text.h"
#include "text/tsv_source.h"

namespace omicsfs::text {
namespace {

using testutil::ValueKind;

std::string RenderAll(const RecordSource& s) {
  std::string out;
  for (uint64_t k = 0; k < s.ChunkCount(); ++k) EXPECT_TRUE(s.RenderChunk(k, &out).ok());
  return out;
}

std::string F(float v) {
  std::string s;
  AppendFloat(&s, v);
  return s;
}
std::string D(double v) {
  std::string s;
  AppendDouble(&s, v);
  return s;
}

TEST(NumberFormatTest, ShortestRoundTripOfTheStoredType) {
  EXPECT_EQ(F(0.1f), "0.1");
  EXPECT_EQ(F(1e-7f), "1e-07");
  EXPECT_EQ(F(3.4e38f), "3.4e+38");
  EXPECT_EQ(F(16777216.0f), "16777216");
  EXPECT_EQ(F(-2.5f), "-2.5");
  EXPECT_EQ(D(-7.334437124352055e-05), "-7.334437124352055e-05");
  EXPECT_EQ(D(1.0 / 3), "0.3333333333333333");
  std::string u;
  AppendUInt(&u, 4294967295u);
  EXPECT_EQ(u, "4294967295");
}

TEST(NumberFormatTest, RandomBitPatternsRoundTrip) {
  std::mt19937 rng(1);
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, 4);
    if (!std::isfinite(f)) continue;
    std::string s = F(f);
    ASSERT_EQ(std::strtof(s.c_str(), nullptr), f) << s;
    uint64_t b64 = (uint64_t{rng()} << 32) | rng();
    double d;
    std::memcpy(&d, &b64, 8);
    if (!std::isfinite(d)) continue;
    std::string t = D(d);
    ASSERT_EQ(std::strtod(t.c_str(), nullptr), d) << t;
  }
}

TEST(NumberFormatTest, DecimalDigitsAtEveryLengthChange) {
  EXPECT_EQ(DecimalDigits(0), 1);
  uint64_t p = 1;
  for (int d = 1; d <= 20; ++d) {
    EXPECT_EQ(DecimalDigits(p), d) << p;
    EXPECT_EQ(DecimalDigits(p + 1), d) << p + 1;
    if (d > 1) {
      EXPECT_EQ(DecimalDigits(p - 1), d - 1) << p - 1;
    }
    if (d < 20) p *= 10;
  }
  EXPECT_EQ(DecimalDigits(~uint64_t{0}), 20);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t v = rng() >> (rng() % 64);
    ASSERT_EQ(DecimalDigits(v), static_cast<int>(std::to_string(v).size())) << v;
  }
}

// Stepping through sorted, unsorted and carrying values writes what to_chars writes.
TEST(NumberFormatTest, SteppedDecimalMatchesToChars) {
  std::mt19937 rng(7);
  SteppedDecimal d;
  uint32_t v = 0;
  for (int i = 0; i < 300000; ++i) {
    const uint32_t r = rng();
    switch (r % 8) {
      case 0:
        v = rng();
        break;  // anywhere
      case 1:
        v = rng() % 20000;
        break;  // few digits
      case 2:
        v = 9990 + rng() % 20;
        break;  // around a length change
      case 3:
        v = v > 0xFFFFFFFFu - 20000 ? rng() : v + 9990 + rng() % 20;
        break;  // carries
      case 4:
        v = v - std::min<uint32_t>(v, rng() % 50);
        break;  // backwards
      default:
        v = v > 0xFFFFFFFFu - 1000 ? rng() : v + rng() % 1000;
        break;  // sorted steps
    }
    const uint32_t near = static_cast<uint32_t>(v + (r >> 8) % 1200);  // an end past it (may wrap)
    d.Step(v);
    char got[48];
    const std::string text(got, d.Put(got));
    ASSERT_EQ(text, std::to_string(v)) << i;
    ASSERT_EQ(std::string(got, d.PutNear(got, near)), std::to_string(near)) << i;
  }
  char at_max[48];
  d.Set(0xFFFFFFFFu);
  EXPECT_EQ(std::string(at_max, d.Put(at_max)), "4294967295");
}

// Reference renderer written independently from the spec (not from the reader).
std::string Reference(const testutil::MatrixSpec& m) {
  std::string out = m.kind == ValueKind::kUInt32
                        ? "%%MatrixMarket matrix coordinate integer general\n"
                        : "%%MatrixMarket matrix coordinate real general\n";
  out += std::to_string(m.rows) + " " + std::to_string(m.cols) + " " +
         std::to_string(m.inner.size()) + "\n";
  for (size_t j = 0; j + 1 < m.idxptr.size(); ++j) {
    for (uint64_t n = m.idxptr[j]; n < m.idxptr[j + 1]; ++n) {
      uint64_t r = m.row_major ? j + 1 : m.inner[n] + 1, c = m.row_major ? m.inner[n] + 1 : j + 1;
      out += std::to_string(r) + " " + std::to_string(c) + " ";
      if (m.kind == ValueKind::kUInt32) out += std::to_string(static_cast<uint32_t>(m.values[n]));
      if (m.kind == ValueKind::kFloat32) out += F(static_cast<float>(m.values[n]));
      if (m.kind == ValueKind::kFloat64) out += D(m.values[n]);
      out += "\n";
    }
  }
  return out;
}

TEST(MtxSourceTest, MatchesReferenceAtEveryChunkSize) {
  for (ValueKind kind : {ValueKind::kUInt32, ValueKind::kFloat32, ValueKind::kFloat64}) {
    for (bool row_major : {false, true}) {
      auto spec = testutil::RandomMatrix(300, 90, 0.05, kind, row_major, true, 2, 9);
      auto m =
          formats::bpcells::Matrix::Open(testutil::ToMemoryStore(testutil::MakeMatrixStore(spec)));
      ASSERT_TRUE(m.ok()) << m.status().ToString();
      const std::string want = Reference(spec);
      for (uint64_t per : {uint64_t{128}, uint64_t{256}, MtxSource::kEntriesPerChunk}) {
        MtxSource src(*m, "matrix.mtx", per);
        EXPECT_EQ(RenderAll(src), want) << "per chunk " << per;
      }
      // An inner axis too long for the table of index texts: each written as it comes.
      MtxSource untabled(*m, "matrix.mtx", 256, /*max_inner_slots=*/10);
      EXPECT_EQ(RenderAll(untabled), want) << "no inner table";
    }
  }
}

// The dense view against a reference built cell by cell: rows with long runs of zeros (the
// pattern copies), rows with none, both storage orders, uint and real values; the sizes the
// sizing pass measures from the entries alone equal the rendered lengths.
TEST(DenseTsvSourceTest, MatchesReferenceAndItsMeasure) {
  const std::string scratch = testutil::MakeTempDir("dense-test");
  for (ValueKind kind : {ValueKind::kUInt32, ValueKind::kFloat64}) {
    for (bool row_major : {false, true}) {
      for (double density : {0.02, 0.9}) {
        auto spec = testutil::RandomMatrix(70, 230, density, kind, row_major, true, 2, 11,
                                           /*names=*/density > 0.5);
        auto m = formats::bpcells::Matrix::Open(
            testutil::ToMemoryStore(testutil::MakeMatrixStore(spec)));
        ASSERT_TRUE(m.ok()) << m.status().ToString();
        std::vector<std::string> cells(size_t{spec.rows} * spec.cols, "0");
        for (size_t j = 0; j + 1 < spec.idxptr.size(); ++j) {
          for (uint64_t n = spec.idxptr[j]; n < spec.idxptr[j + 1]; ++n) {
            const uint64_t r = spec.row_major ? j : spec.inner[n],
                           c = spec.row_major ? spec.inner[n] : j;
            std::string& v = cells[r * spec.cols + c];
            if (kind == ValueKind::kUInt32)
              v = std::to_string(static_cast<uint32_t>(spec.values[n]));
            else
              v = D(spec.values[n]);
          }
        }
        std::string want;
        for (uint32_t c = 0; c < spec.cols; ++c)
          (want += '\t') += spec.col_names.empty() ? std::to_string(c + 1) : spec.col_names[c];
        want += "\n";
        for (uint32_t r = 0; r < spec.rows; ++r) {
          want += spec.row_names.empty() ? std::to_string(r + 1) : spec.row_names[r];
          for (uint32_t c = 0; c < spec.cols; ++c) want += "\t" + cells[size_t{r} * spec.cols + c];
          want += "\n";
        }
        DenseTsvSource src(*m, "matrix.tsv", {scratch});
        ASSERT_TRUE(src.Prepare().ok());
        std::string got;
        for (uint64_t k = 0; k < src.ChunkCount(); ++k) {
          const size_t before = got.size();
          ASSERT_TRUE(src.RenderChunk(k, &got).ok()) << k;
          auto measured = src.MeasureChunk(k);
          ASSERT_TRUE(measured.ok());
          if (measured->has_value()) {
            EXPECT_EQ(**measured, got.size() - before) << "chunk " << k;
          }
        }
        EXPECT_EQ(got, want) << "row_major " << row_major << " density " << density;
      }
    }
  }
  std::filesystem::remove_all(scratch);
}

TEST(MtxSourceTest, EmptyColumnsAndZeroEntries) {
  testutil::MatrixSpec spec;
  spec.rows = 4;
  spec.cols = 3;
  spec.idxptr = {0, 0, 0, 0};
  auto m = formats::bpcells::Matrix::Open(testutil::ToMemoryStore(testutil::MakeMatrixStore(spec)));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  MtxSource src(*m, "matrix.mtx");
  EXPECT_EQ(RenderAll(src), "%%MatrixMarket matrix coordinate integer general\n4 3 0\n");
}

// Reals holding small whole numbers take the integer text table (counts kept as floats): the
// same text as std::to_chars, at the edges too (-0, 999, 1000, 1e6, fractions, NaN).
TEST(MtxSourceTest, WholeRealsPrintAsToCharsDoes) {
  const std::vector<double> values = {0.0, -0.0, 1.0,    3.0,   999.0, 1000.0,  999.5, 0.5,
                                      1e6, -1.0, 1e-300, 100.0, 64.0,  998.999, NAN,   4096.0};
  for (ValueKind kind : {ValueKind::kFloat32, ValueKind::kFloat64}) {
    testutil::MatrixSpec spec;
    spec.kind = kind;
    spec.rows = 1;
    spec.cols = static_cast<uint32_t>(values.size());
    spec.idxptr.push_back(0);
    for (size_t j = 0; j < values.size(); ++j) {
      spec.inner.push_back(0);
      spec.values.push_back(values[j]);
      spec.idxptr.push_back(j + 1);
    }
    auto m =
        formats::bpcells::Matrix::Open(testutil::ToMemoryStore(testutil::MakeMatrixStore(spec)));
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    MtxSource src(*m, "matrix.mtx");
    EXPECT_EQ(RenderAll(src), Reference(spec));
  }
}

TEST(NamesSourceTest, LayoutsAndFallback) {
  auto names =
      std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"a b", "ü"});
  EXPECT_EQ(RenderAll(NamesSource(names, NamesSource::Layout::kOnePerLine, 0, "x")), "a b\nü\n");
  EXPECT_EQ(RenderAll(NamesSource(names, NamesSource::Layout::kTwoColumns, 0, "x")),
            "a b\ta b\nü\tü\n");
  auto none = std::make_shared<const std::vector<std::string>>();
  EXPECT_EQ(RenderAll(NamesSource(none, NamesSource::Layout::kOnePerLine, 0, "x")), "");
  EXPECT_EQ(RenderAll(NamesSource(none, NamesSource::Layout::kTwoColumns, 3, "x")),
            "1\t1\n2\t2\n3\t3\n");
  EXPECT_EQ(RenderAll(NamesSource(names, NamesSource::Layout::kFeatures, 0, "x")),
            "a b\ta b\tGene Expression\nü\tü\tGene Expression\n");
  EXPECT_EQ(RenderAll(NamesSource(none, NamesSource::Layout::kFeatures, 2, "x", "row")),
            "row1\trow1\tGene Expression\nrow2\trow2\tGene Expression\n");
  std::vector<std::string> many;
  for (int i = 0; i < 20000; ++i) many.push_back(std::string("n").append(std::to_string(i)));
  NamesSource big(std::make_shared<const std::vector<std::string>>(many),
                  NamesSource::Layout::kOnePerLine, 0, "x");
  EXPECT_EQ(big.ChunkCount(), 3u);
  std::string all = RenderAll(big);
  EXPECT_EQ(all.substr(0, 6), "n0\nn1\n");
  EXPECT_EQ(all.substr(all.size() - 7), "n19999\n");
}

}  // namespace
}  // namespace omicsfs::text

namespace omicsfs::text {
namespace {

// Two RawText writers alive on one thread must not share the scratch buffer.
TEST(RawTextTest, NestedWritersKeepTheirOwnBytes) {
  std::string a, b;
  {
    RawText outer(&a);
    outer.Put("outer:");
    {
      RawText inner(&b);
      inner.Put("inner");
      char* p = inner.Reserve(3);
      *p++ = '!';
      inner.Commit(p);
    }
    outer.Put("done");
  }
  EXPECT_EQ(a, "outer:done");
  EXPECT_EQ(b, "inner!");
  {
    RawText again(&a);  // the thread's buffer is free again
    again.Put("+");
  }
  EXPECT_EQ(a, "outer:done+");
}

// PutShort copies exactly n bytes at every length, whatever its fixed-size moves.
TEST(RawTextTest, PutShortCopiesEveryLength) {
  std::string src;
  for (int i = 0; i < 40; ++i) src.push_back(static_cast<char>('A' + i));
  for (size_t n = 0; n <= src.size(); ++n) {
    std::string dst(48, '.');
    char* end = PutShort(dst.data() + 1, src.data(), n);
    EXPECT_EQ(end, dst.data() + 1 + n);
    EXPECT_EQ(dst, std::string(".") + src.substr(0, n) + std::string(47 - n, '.')) << n;
  }
}

}  // namespace
}  // namespace omicsfs::text
