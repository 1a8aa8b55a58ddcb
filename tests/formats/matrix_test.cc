#include "formats/bpcells/matrix.h"

#include <gtest/gtest.h>

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
  return std::string(c.kind == ValueKind::kUInt32 ? "uint" : c.kind == ValueKind::kFloat32 ? "float" : "double") +
         (c.row_major ? "_row" : "_col") + (c.packed ? "_packed" : "_unpacked") + "_v" + std::to_string(c.format);
}

class MatrixRoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(MatrixRoundTrip, EntriesNamesAndShape) {
  const Case& c = GetParam();
  MatrixSpec spec = testutil::RandomMatrix(173, 61, 0.08, c.kind, c.row_major, c.packed, c.format, 17);
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
        case ValueKind::kUInt32: ASSERT_EQ(e.u32[i - n0], static_cast<uint32_t>(spec.values[i])); break;
        case ValueKind::kFloat32: ASSERT_EQ(e.f32[i - n0], static_cast<float>(spec.values[i])); break;
        case ValueKind::kFloat64: ASSERT_EQ(e.f64[i - n0], spec.values[i]); break;
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

}  // namespace
}  // namespace omicsfs::formats::bpcells
