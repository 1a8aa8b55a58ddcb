#include "codec/bp128.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "testutil/store_writer.h"

namespace omicsfs::codec {
namespace {

using testutil::Bp128PackBlock;

// 128 transformed values needing exactly `bits` bits.
std::vector<uint32_t> RandomWords(std::mt19937& rng, int bits) {
  std::vector<uint32_t> t(128, 0);
  if (bits == 0) return t;
  const uint32_t mask = bits == 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
  for (auto& v : t) v = rng() & mask;
  t[rng() % 128] |= 1u << (bits - 1);
  return t;
}

TEST(Bp128Test, RawUnpackRoundTripsEveryWidth) {
  std::mt19937 rng(42);
  for (int bits = 0; bits <= 32; ++bits) {
    auto values = RandomWords(rng, bits);
    auto packed = Bp128PackBlock(values.data(), bits);
    ASSERT_EQ(packed.size(), Bp128Words(bits));
    uint32_t out[128];
    Bp128UnpackRaw(packed.data(), bits, out);
    for (int i = 0; i < 128; ++i) ASSERT_EQ(out[i], values[i]) << "bits " << bits << " i " << i;
  }
}

TEST(Bp128Test, InterleavedLayoutOfOneBit) {
  // At 1 bit, value i is bit (i / 4) of word (i % 4).
  std::vector<uint32_t> words = {0x1u, 0x2u, 0x80000000u, 0x0u};
  uint32_t out[128];
  ASSERT_TRUE(Bp128Unpack(words.data(), 4, 1, Bp128Variant::kPlain, 0, out).ok());
  for (int i = 0; i < 128; ++i) {
    uint32_t expect = (i == 0 || i == 5 || i == 4 * 31 + 2) ? 1u : 0u;
    EXPECT_EQ(out[i], expect) << i;
  }
}

class Bp128VariantTest : public ::testing::TestWithParam<Bp128Variant> {};

TEST_P(Bp128VariantTest, EveryWidthDecodes) {
  const Bp128Variant variant = GetParam();
  std::mt19937 rng(7 + static_cast<int>(variant));
  for (int bits = 0; bits < 32; ++bits) {
    auto t = RandomWords(rng, bits);
    const uint32_t start = rng();
    std::vector<uint32_t> expect(128);
    uint32_t acc = start;
    for (int i = 0; i < 128; ++i) {
      switch (variant) {
        case Bp128Variant::kPlain:
          expect[i] = t[i];
          break;
        case Bp128Variant::kM1:
          expect[i] = t[i] + 1;
          break;
        case Bp128Variant::kD1:
          expect[i] = acc += t[i];
          break;
        case Bp128Variant::kD1Z:
          expect[i] = acc += (t[i] >> 1) ^ (0u - (t[i] & 1u));
          break;
      }
    }
    auto packed = Bp128PackBlock(t.data(), bits);
    uint32_t out[128];
    Status st = Bp128Unpack(packed.data(), packed.size(), bits, variant, start, out);
    ASSERT_TRUE(st.ok()) << st.ToString();
    for (int i = 0; i < 128; ++i) ASSERT_EQ(out[i], expect[i]) << "bits " << bits << " i " << i;
  }
}

TEST_P(Bp128VariantTest, ThirtyTwoBitBlocksAreRawUntransformed) {
  std::mt19937 rng(99);
  std::vector<uint32_t> raw(128);
  for (auto& v : raw) v = rng();
  uint32_t out[128];
  ASSERT_TRUE(Bp128Unpack(raw.data(), 128, 32, GetParam(), 12345, out).ok());
  for (int i = 0; i < 128; ++i) ASSERT_EQ(out[i], raw[i]);
}

TEST_P(Bp128VariantTest, EncoderRoundTripsThroughArrayLayout) {
  // The test encoder picks the width per block (including 0 and 32); decoding restores values.
  std::mt19937 rng(5);
  std::vector<uint32_t> values(1000);
  uint32_t acc = 10;
  for (size_t i = 0; i < values.size(); ++i) {
    if (GetParam() == Bp128Variant::kD1) {
      values[i] = acc += rng() % 1000;  // sorted
    } else if (GetParam() == Bp128Variant::kM1) {
      values[i] = 1 + (i < 256 ? 0 : rng() % 50);  // blocks of all-ones: 0-bit
    } else {
      values[i] = i >= 512 && i < 640 ? rng() | 0x80000000u : rng() % 300;  // one 32-bit block
    }
  }
  testutil::StoreSpec spec;
  testutil::PutBitpacked(&spec, "x", values, GetParam(), 2);
  auto data = spec.Get<uint32_t>("x_data");
  auto idx = spec.Get<uint32_t>("x_idx");
  std::vector<uint32_t> starts;
  if (spec.arrays.count("x_starts")) starts = spec.Get<uint32_t>("x_starts");
  for (size_t b = 0; b + 1 < idx.size(); ++b) {
    uint32_t out[128];
    size_t words = idx[b + 1] - idx[b];
    ASSERT_TRUE(Bp128Unpack(data.data() + idx[b], words, static_cast<int>(words / 4), GetParam(),
                            starts.empty() ? 0 : starts[b], out)
                    .ok());
    for (size_t i = 0; i < 128 && b * 128 + i < values.size(); ++i) {
      ASSERT_EQ(out[i], values[b * 128 + i]) << "block " << b << " i " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllVariants, Bp128VariantTest,
                         ::testing::Values(Bp128Variant::kPlain, Bp128Variant::kM1,
                                           Bp128Variant::kD1, Bp128Variant::kD1Z));

TEST(Bp128Test, RejectsBadWidthsAndSizes) {
  std::vector<uint32_t> words(200, 0);
  uint32_t out[128];
  EXPECT_EQ(Bp128Unpack(words.data(), 132, 33, Bp128Variant::kPlain, 0, out).code(),
            ErrorCode::kCorrupt);
  EXPECT_EQ(Bp128Unpack(words.data(), 7, 2, Bp128Variant::kPlain, 0, out).code(),
            ErrorCode::kCorrupt);
  EXPECT_EQ(Bp128Unpack(words.data(), 4, -1, Bp128Variant::kPlain, 0, out).code(),
            ErrorCode::kCorrupt);
}

}  // namespace
}  // namespace omicsfs::codec
