#include "formats/bpcells/bitpacked_array.h"

#include <gtest/gtest.h>

#include <random>

#include "testutil/store_writer.h"

namespace omicsfs::formats::bpcells {
namespace {

using codec::Bp128Variant;

std::vector<uint32_t> Values(Bp128Variant v, size_t n, std::mt19937& rng) {
  std::vector<uint32_t> out(n);
  uint32_t acc = 5;
  for (size_t i = 0; i < n; ++i) {
    switch (v) {
      case Bp128Variant::kD1:
        out[i] = acc += rng() % 5000;
        break;
      case Bp128Variant::kD1Z:
        out[i] = (i % 300 == 0) ? rng() % 100 : acc += rng() % 64;
        break;
      case Bp128Variant::kM1:
        out[i] = 1 + (i > 700 && i < 900 ? 0xFFFFFFFEu : rng() % 9);
        break;
      case Bp128Variant::kPlain:
        out[i] = i < 128 ? 0 : rng() % 70000;
        break;
    }
  }
  return out;
}

struct Case {
  Bp128Variant variant;
  int format;
};

class BitpackedArrayTest : public ::testing::TestWithParam<Case> {};

TEST_P(BitpackedArrayTest, RandomRangesMatch) {
  std::mt19937 rng(11);
  for (size_t n : {0u, 1u, 127u, 128u, 129u, 3001u}) {
    auto values = Values(GetParam().variant, n, rng);
    testutil::StoreSpec spec;
    testutil::PutBitpacked(&spec, "x", values, GetParam().variant, GetParam().format);
    auto arr = BitpackedArray::Open(testutil::ToMemoryStore(spec), "x", GetParam().variant, n);
    ASSERT_TRUE(arr.ok()) << arr.status().ToString();
    std::vector<uint32_t> all(n);
    ASSERT_TRUE(arr->Read(0, n, all.data()).ok());
    ASSERT_EQ(all, values);
    for (int r = 0; r < 200 && n > 0; ++r) {
      uint64_t a = rng() % n, len = rng() % (n - a + 1);
      std::vector<uint32_t> got(len);
      ASSERT_TRUE(arr->Read(a, len, got.data()).ok());
      for (uint64_t i = 0; i < len; ++i) ASSERT_EQ(got[i], values[a + i]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, BitpackedArrayTest,
                         ::testing::Values(Case{Bp128Variant::kPlain, 1},
                                           Case{Bp128Variant::kPlain, 2},
                                           Case{Bp128Variant::kM1, 1}, Case{Bp128Variant::kM1, 2},
                                           Case{Bp128Variant::kD1, 2}, Case{Bp128Variant::kD1Z, 1},
                                           Case{Bp128Variant::kD1Z, 2}));

class BitpackedCorruption : public ::testing::Test {
 protected:
  void SetUp() override {
    std::mt19937 rng(3);
    values_ = Values(Bp128Variant::kD1Z, 1000, rng);
    testutil::PutBitpacked(&spec_, "x", values_, Bp128Variant::kD1Z, 2);
  }
  Result<BitpackedArray> Open() {
    return BitpackedArray::Open(testutil::ToMemoryStore(spec_), "x", Bp128Variant::kD1Z, 1000);
  }
  std::vector<uint32_t> values_;
  testutil::StoreSpec spec_;
};

TEST_F(BitpackedCorruption, BitWidthAbove32NamesArrayAndBlock) {
  auto idx = spec_.Get<uint32_t>("x_idx");
  auto data = spec_.Get<uint32_t>("x_data");
  // Make block 3 claim 33 bits (132 words) and keep later blocks consistent.
  uint32_t grow = 132 - (idx[4] - idx[3]);
  for (size_t i = 4; i < idx.size(); ++i) idx[i] += grow;
  data.resize(data.size() + grow, 0);
  spec_.Put("x_idx", idx);
  spec_.Put("x_data", data);
  auto arr = Open();
  ASSERT_TRUE(arr.ok()) << arr.status().ToString();
  std::vector<uint32_t> out(1000);
  Status st = arr->Read(0, 1000, out.data());
  EXPECT_EQ(st.code(), ErrorCode::kCorrupt);
  EXPECT_NE(st.message().find("x_idx"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("block 3"), std::string::npos) << st.message();
  EXPECT_TRUE(arr->Read(0, 3 * 128, out.data()).ok());  // blocks before it still decode
}

TEST_F(BitpackedCorruption, DecreasingIdxIsCorrupt) {
  auto idx = spec_.Get<uint32_t>("x_idx");
  std::swap(idx[2], idx[3]);
  spec_.Put("x_idx", idx);
  auto arr = Open();
  ASSERT_TRUE(arr.ok());
  std::vector<uint32_t> out(1000);
  EXPECT_EQ(arr->Read(0, 1000, out.data()).code(), ErrorCode::kCorrupt);
}

TEST_F(BitpackedCorruption, WrongIdxLengthFailsOpen) {
  auto idx = spec_.Get<uint32_t>("x_idx");
  idx.pop_back();
  spec_.Put("x_idx", idx);
  EXPECT_EQ(Open().status().code(), ErrorCode::kCorrupt);
}

TEST_F(BitpackedCorruption, TruncatedDataFailsOpen) {
  auto data = spec_.Get<uint32_t>("x_data");
  data.resize(data.size() - 4);
  spec_.Put("x_data", data);
  Status st = Open().status();
  EXPECT_EQ(st.code(), ErrorCode::kCorrupt);
  EXPECT_NE(st.message().find("x_data"), std::string::npos);
}

TEST_F(BitpackedCorruption, MissingStartsFailsOpen) {
  spec_.arrays.erase("x_starts");
  EXPECT_EQ(Open().status().code(), ErrorCode::kCorrupt);
}

TEST_F(BitpackedCorruption, BadIdxOffsetsFailOpen) {
  spec_.Put("x_idx_offsets", std::vector<uint64_t>{0, 3});
  EXPECT_EQ(Open().status().code(), ErrorCode::kCorrupt);
}

}  // namespace
}  // namespace omicsfs::formats::bpcells
