#include "formats/bpcells/matrix.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "formats/row_access.h"
#include "testutil/store_writer.h"

namespace omicsfs::formats::bpcells {
namespace {

using testutil::MatrixSpec;
using testutil::ValueKind;

struct Case {
  ValueKind kind;
  bool row_major;
  bool packed;
  int format;
};

std::string Name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return std::string(c.kind == ValueKind::kUInt32    ? "uint"
                     : c.kind == ValueKind::kFloat32 ? "float"
                                                     : "double") +
         (c.row_major ? "_row" : "_col") + (c.packed ? "_packed" : "_unpacked") + "_v" +
         std::to_string(c.format);
}

class MatrixRoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(MatrixRoundTrip, EntriesNamesAndShape) {
  const Case& c = GetParam();
  MatrixSpec spec =
      testutil::RandomMatrix(173, 61, 0.08, c.kind, c.row_major, c.packed, c.format, 17);
  auto m = Matrix::Open(testutil::ToMemoryStore(testutil::MakeMatrixStore(spec)));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)->rows(), 173u);
  EXPECT_EQ((*m)->cols(), 61u);
  EXPECT_EQ((*m)->row_major(), c.row_major);
  EXPECT_EQ((*m)->nnz(), spec.inner.size());
  EXPECT_EQ((*m)->idxptr(), spec.idxptr);
  EXPECT_EQ((*m)->row_names(), spec.row_names);
  EXPECT_EQ((*m)->col_names(), spec.col_names);
  const uint64_t nnz = (*m)->nnz();
  for (uint64_t n0 : {uint64_t{0}, uint64_t{5}, uint64_t{128}, nnz / 2}) {
    MatrixEntries e;
    ASSERT_TRUE((*m)->ReadEntries(n0, nnz, &e).ok());
    for (uint64_t i = n0; i < nnz; ++i) {
      ASSERT_EQ(e.inner[i - n0], spec.inner[i]);
      switch (c.kind) {
        case ValueKind::kUInt32:
          ASSERT_EQ(e.u32[i - n0], static_cast<uint32_t>(spec.values[i]));
          break;
        case ValueKind::kFloat32:
          ASSERT_EQ(e.f32[i - n0], static_cast<float>(spec.values[i]));
          break;
        case ValueKind::kFloat64:
          ASSERT_EQ(e.f64[i - n0], spec.values[i]);
          break;
      }
    }
  }
}

std::vector<Case> AllCases() {
  std::vector<Case> out;
  for (ValueKind k : {ValueKind::kUInt32, ValueKind::kFloat32, ValueKind::kFloat64})
    for (bool row : {false, true})
      for (bool packed : {false, true})
        for (int v : {1, 2}) out.push_back({k, row, packed, v});
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, MatrixRoundTrip, ::testing::ValuesIn(AllCases()), Name);

class MatrixCorruption : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = testutil::MakeMatrixStore(
        testutil::RandomMatrix(50, 20, 0.2, ValueKind::kUInt32, false, false, 2, 5));
  }
  Status OpenStatus() { return Matrix::Open(testutil::ToMemoryStore(spec_)).status(); }
  testutil::StoreSpec spec_;
};

TEST_F(MatrixCorruption, UnknownVersionIsUnsupported) {
  spec_.version = "packed-uint-matrix-v9";
  EXPECT_EQ(OpenStatus().code(), ErrorCode::kUnsupported);
}

TEST_F(MatrixCorruption, BadStorageOrder) {
  spec_.PutStrings("storage_order", {"diag"});
  EXPECT_EQ(OpenStatus().code(), ErrorCode::kCorrupt);
}

TEST_F(MatrixCorruption, DecreasingIdxptr) {
  auto p = spec_.Get<uint64_t>("idxptr");
  std::swap(p[3], p[4]);
  if (p[3] == p[4]) p[4] = p[3] - 1;
  spec_.Put("idxptr", p);
  Status st = OpenStatus();
  EXPECT_EQ(st.code(), ErrorCode::kCorrupt);
  EXPECT_NE(st.message().find("idxptr"), std::string::npos);
}

TEST_F(MatrixCorruption, IdxptrNotEndingAtNnz) {
  auto p = spec_.Get<uint64_t>("idxptr");
  p.back() += 1;
  spec_.Put("idxptr", p);
  EXPECT_EQ(OpenStatus().code(), ErrorCode::kCorrupt);
}

TEST_F(MatrixCorruption, WrongIdxptrLength) {
  auto p = spec_.Get<uint64_t>("idxptr");
  p.pop_back();
  spec_.Put("idxptr", p);
  EXPECT_EQ(OpenStatus().code(), ErrorCode::kCorrupt);
}

TEST_F(MatrixCorruption, WrongNameCount) {
  spec_.PutStrings("row_names", {"only", "two"});
  EXPECT_EQ(OpenStatus().code(), ErrorCode::kCorrupt);
}

TEST_F(MatrixCorruption, RowIndexOutOfRangeFailsTheRead) {
  auto idx = spec_.Get<uint32_t>("index");
  idx[10] = 50;  // nrow
  spec_.Put("index", idx);
  auto m = Matrix::Open(testutil::ToMemoryStore(spec_));
  ASSERT_TRUE(m.ok());
  MatrixEntries e;
  Status st = (*m)->ReadEntries(0, (*m)->nnz(), &e);
  EXPECT_EQ(st.code(), ErrorCode::kCorrupt);
  EXPECT_NE(st.message().find("entry 10"), std::string::npos) << st.message();
  EXPECT_TRUE((*m)->ReadEntries(0, 10, &e).ok());
}

// Slices against a brute-force cut of the spec: every entry range, both axes, nested slices.
// 3000 x 40 at 0.5: minor-axis slices keep tens of thousands of entries (many checkpoints).
struct Dense {
  std::vector<std::vector<std::pair<uint32_t, double>>> major;  // per outer slice: (inner, value)
};

Dense Cut(const MatrixSpec& spec, bool row_major, const std::optional<std::vector<uint32_t>>& rows,
          const std::optional<std::vector<uint32_t>>& cols) {
  const auto& outer = row_major ? rows : cols;
  const auto& inner = row_major ? cols : rows;
  const uint32_t n_outer = row_major ? spec.rows : spec.cols,
                 n_inner = row_major ? spec.cols : spec.rows;
  std::vector<int64_t> at(n_inner, -1);
  for (uint32_t i = 0; i < n_inner; ++i) at[i] = inner ? int64_t{-1} : int64_t{i};
  if (inner) {
    for (size_t k = 0; k < inner->size(); ++k) at[(*inner)[k]] = static_cast<int64_t>(k);
  }
  std::vector<uint32_t> order;
  for (uint32_t j = 0; j < n_outer; ++j) order.push_back(j);
  if (outer) order = *outer;
  Dense d;
  for (uint32_t j : order) {
    d.major.emplace_back();
    for (uint64_t i = spec.idxptr[j]; i < spec.idxptr[j + 1]; ++i) {
      if (at[spec.inner[i]] >= 0)
        d.major.back().emplace_back(static_cast<uint32_t>(at[spec.inner[i]]), spec.values[i]);
    }
  }
  return d;
}

void ExpectEntries(const Matrix& m, const Dense& d) {
  std::vector<uint32_t> inner;
  std::vector<double> values;
  std::vector<uint64_t> ptr{0};
  for (const auto& slice : d.major) {
    for (const auto& [i, v] : slice) {
      inner.push_back(i);
      values.push_back(v);
    }
    ptr.push_back(inner.size());
  }
  ASSERT_EQ(m.idxptr(), ptr);
  ASSERT_EQ(m.nnz(), inner.size());
  const uint64_t nnz = m.nnz();
  for (uint64_t n0 :
       {uint64_t{0}, uint64_t{1}, uint64_t{4095}, uint64_t{4096}, uint64_t{4097}, nnz / 3, nnz}) {
    for (uint64_t len : {uint64_t{1}, uint64_t{200}, uint64_t{9000}, nnz}) {
      if (n0 > nnz) continue;
      const uint64_t n1 = std::min(nnz, n0 + len);
      MatrixEntries e;
      ASSERT_TRUE(m.ReadEntries(n0, n1, &e).ok()) << n0 << " " << n1;
      ASSERT_EQ(e.inner.size(), n1 - n0);
      for (uint64_t i = n0; i < n1; ++i) {
        ASSERT_EQ(e.inner[i - n0], inner[i]) << i;
        ASSERT_EQ(e.f64[i - n0], values[i]) << i;
      }
    }
  }
}

TEST(MatrixSlice, EveryRangeOfEveryAxisAndNested) {
  for (bool row_major : {false, true}) {
    SCOPED_TRACE(row_major ? "row-major" : "col-major");
    MatrixSpec spec =
        testutil::RandomMatrix(3000, 40, 0.5, ValueKind::kFloat64, row_major, true, 2, 3);
    auto m = Matrix::Open(testutil::ToMemoryStore(testutil::MakeMatrixStore(spec)));
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    std::vector<uint32_t> rows, cols = {39, 0, 7, 8, 9, 10, 2};
    for (uint32_t r = 2999; r >= 5; r -= 3) rows.push_back(r);  // most rows, reversed
    for (const auto& [rs, cs] : std::vector<
             std::pair<std::optional<std::vector<uint32_t>>, std::optional<std::vector<uint32_t>>>>{
             {rows, std::nullopt}, {std::nullopt, cols}, {rows, cols}}) {
      auto s = Matrix::Slice(*m, MatrixSubset{rs, cs});
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      EXPECT_EQ((*s)->rows(), rs ? rs->size() : 3000u);
      EXPECT_EQ((*s)->cols(), cs ? cs->size() : 40u);
      EXPECT_EQ((*s)->col_names().size(), (*s)->cols());
      if (cs) {
        EXPECT_EQ((*s)->col_names()[0], spec.col_names[39]);
      }
      ExpectEntries(**s, Cut(spec, row_major, rs, cs));
    }
    // A slice of a slice: cols {39, 0, 7, ...} then its columns {2, 0} = the store's {7, 39}.
    auto first = Matrix::Slice(*m, MatrixSubset{rows, cols});
    ASSERT_TRUE(first.ok());
    auto second = Matrix::Slice(
        *first, MatrixSubset{std::vector<uint32_t>{1, 0}, std::vector<uint32_t>{2, 0}});
    ASSERT_TRUE(second.ok());
    ExpectEntries(**second, Cut(spec, row_major, std::vector<uint32_t>{rows[1], rows[0]},
                                std::vector<uint32_t>{7, 39}));
  }
}

TEST(MatrixSlice, RefusesBadChoicesAndNamesStandIns) {
  MatrixSpec spec =
      testutil::RandomMatrix(20, 10, 0.3, ValueKind::kUInt32, false, true, 2, 4, /*names=*/false);
  auto m = Matrix::Open(testutil::ToMemoryStore(testutil::MakeMatrixStore(spec)));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(
      Matrix::Slice(*m, MatrixSubset{std::vector<uint32_t>{20}, std::nullopt}).status().code(),
      ErrorCode::kInvalidArgument);
  EXPECT_EQ(
      Matrix::Slice(*m, MatrixSubset{std::vector<uint32_t>{3, 3}, std::nullopt}).status().code(),
      ErrorCode::kInvalidArgument);
  EXPECT_EQ(Matrix::Slice(*m, MatrixSubset{std::nullopt, std::vector<uint32_t>{}}).status().code(),
            ErrorCode::kInvalidArgument);
  auto s = Matrix::Slice(*m, MatrixSubset{std::vector<uint32_t>{6, 2}, std::nullopt});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->row_names(), (std::vector<std::string>{"row7", "row3"}));
  EXPECT_TRUE((*s)->col_names().empty());  // the axis not chosen stays as the store's
}

TEST_F(MatrixCorruption, ASliceOfACorruptStoreFailsNamingTheArray) {
  auto idx = spec_.Get<uint32_t>("index");
  idx[10] = 50;  // nrow
  spec_.Put("index", idx);
  auto m = Matrix::Open(testutil::ToMemoryStore(spec_));
  ASSERT_TRUE(m.ok());
  // A minor-axis slice reads the index at Slice time.
  auto s = Matrix::Slice(*m, MatrixSubset{std::vector<uint32_t>{1, 0}, std::nullopt});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), ErrorCode::kCorrupt);
  EXPECT_NE(s.status().message().find("'index'"), std::string::npos) << s.status().message();
  // A major-axis slice reads it when its entries are read.
  auto c = Matrix::Slice(*m, MatrixSubset{std::nullopt, std::vector<uint32_t>{0, 1, 2}});
  ASSERT_TRUE(c.ok());
  MatrixEntries e;
  EXPECT_EQ((*c)->ReadEntries(0, (*c)->nnz(), &e).code(), ErrorCode::kCorrupt);
}

TEST_F(MatrixCorruption, MissingValArray) {
  spec_.arrays.erase("val");
  EXPECT_EQ(OpenStatus().code(), ErrorCode::kCorrupt);
}

}  // namespace
}  // namespace omicsfs::formats::bpcells

namespace omicsfs::formats::bpcells {
namespace {

TEST(VersionTest, ParsesEveryBpcellsVersion) {
  auto v = ParseVersion("packed-double-matrix-v1");
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->packed);
  EXPECT_EQ(v->value_type, ValueType::kFloat64);
  EXPECT_EQ(v->format, 1);
  v = ParseVersion("unpacked-fragments-v2");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->kind, StoreKind::kFragments);
  EXPECT_FALSE(v->packed);
  EXPECT_FALSE(ParseVersion("packed-uint-matrix-v3"));
  EXPECT_FALSE(ParseVersion("packed-int-matrix-v2"));
  EXPECT_FALSE(ParseVersion(""));
  EXPECT_TRUE(LooksLikeVersion("packed-uint-matrix-v3"));
  EXPECT_TRUE(LooksLikeVersion("unpacked-fragments-v10"));
  EXPECT_FALSE(LooksLikeVersion("2"));
  EXPECT_FALSE(LooksLikeVersion("packed-uint-matrix-vX"));
  EXPECT_FALSE(LooksLikeVersion("matrix"));
}

// Transposed(m): the same entries with the axes swapped (shape, order, names, pointers), its
// slices the transposes of m's; RowAccess over it reads m's columns (rows ascending in each),
// whole or as any range of records.
TEST(MatrixTransposed, AxesSwappedAndColumnsThroughRowAccess) {
  for (bool row_major : {true, false}) {
    MatrixSpec spec =
        testutil::RandomMatrix(57, 23, 0.15, ValueKind::kFloat32, row_major, true, 2, 9);
    auto opened = Matrix::Open(testutil::ToMemoryStore(testutil::MakeMatrixStore(spec)));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    std::shared_ptr<const MatrixReader> m = *opened;
    auto t = Transposed(m);
    EXPECT_EQ(t->rows(), 23u);
    EXPECT_EQ(t->cols(), 57u);
    EXPECT_EQ(t->row_major(), !row_major);
    EXPECT_EQ(t->nnz(), m->nnz());
    EXPECT_EQ(t->row_names(), m->col_names());
    EXPECT_EQ(t->col_names(), m->row_names());
    for (uint32_t j = 0; j <= m->outer_dim(); ++j) ASSERT_EQ(t->MajorBegin(j), m->MajorBegin(j));
    auto s = t->Slice({std::vector<uint32_t>{4, 1}, std::vector<uint32_t>{30, 2, 7}});
    auto want = m->Slice({std::vector<uint32_t>{30, 2, 7}, std::vector<uint32_t>{4, 1}});
    ASSERT_TRUE(s.ok() && want.ok());
    EXPECT_EQ((*s)->rows(), 2u);
    EXPECT_EQ((*s)->cols(), 3u);
    EXPECT_EQ((*s)->row_names(), (*want)->col_names());
    MatrixEntries a, b;
    ASSERT_TRUE((*s)->ReadEntries(0, (*s)->nnz(), &a).ok());
    ASSERT_TRUE((*want)->ReadEntries(0, (*want)->nnz(), &b).ok());
    EXPECT_EQ(a.inner, b.inner);
    EXPECT_EQ(a.f32, b.f32);
    // m's columns: (row, value) per column, rows ascending.
    std::vector<std::vector<std::pair<uint32_t, float>>> cols(m->cols());
    MatrixEntries e;
    ASSERT_TRUE(m->ReadEntries(0, m->nnz(), &e).ok());
    for (uint32_t j = 0; j < m->outer_dim(); ++j) {
      for (uint64_t k = m->MajorBegin(j); k < m->MajorBegin(j + 1); ++k) {
        const uint32_t r = row_major ? j : e.inner[k], c = row_major ? e.inner[k] : j;
        cols[c].push_back({r, e.f32[k]});
      }
    }
    for (auto& c : cols) std::sort(c.begin(), c.end());
    auto access = RowAccess::Build(t, {::testing::TempDir()});
    ASSERT_TRUE(access.ok()) << access.status().ToString();
    for (uint64_t n0 : {uint64_t{0}, uint64_t{5}, m->nnz() / 2}) {
      MatrixEntries got;
      ASSERT_TRUE((*access)->ReadRecords(n0, m->nnz(), &got).ok());
      std::vector<std::pair<uint32_t, float>> flat;
      for (uint32_t c = 0; c < m->cols(); ++c) {
        EXPECT_EQ((*access)->RowBegin(c + 1) - (*access)->RowBegin(c), cols[c].size());
        for (const auto& x : cols[c]) flat.push_back(x);
      }
      ASSERT_EQ(got.inner.size(), m->nnz() - n0);
      for (uint64_t i = 0; i < got.inner.size(); ++i) {
        ASSERT_EQ(got.inner[i], flat[n0 + i].first) << i;
        ASSERT_EQ(got.f32[i], flat[n0 + i].second) << i;
      }
    }
  }
}

}  // namespace
}  // namespace omicsfs::formats::bpcells
