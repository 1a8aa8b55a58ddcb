// LZ4 frames made by the real lz4frame library; legacy LZ4Block streams assembled here from
// real LZ4 blocks and the packaged xxHash.
#include "codec/lz4.h"

#include <gtest/gtest.h>
#include <lz4.h>
#include <lz4frame.h>
#include <xxhash.h>

#include <cstring>
#include <random>

namespace omicsfs::codec {
namespace {

std::string Doubles(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n * 8, '\0');
  for (size_t i = 0; i < n; ++i) {
    double d = static_cast<double>(rng() % 1000) / 7.0;
    std::memcpy(s.data() + 8 * i, &d, 8);
  }
  return s;
}

std::string Frame(const std::string& in, bool checksum, LZ4F_blockSizeID_t block = LZ4F_max4MB,
                  bool block_checksums = false) {
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof(prefs));
  prefs.frameInfo.contentChecksumFlag =
      checksum ? LZ4F_contentChecksumEnabled : LZ4F_noContentChecksum;
  prefs.frameInfo.blockChecksumFlag =
      block_checksums ? LZ4F_blockChecksumEnabled : LZ4F_noBlockChecksum;
  prefs.frameInfo.blockSizeID = block;
  std::string out(LZ4F_compressFrameBound(in.size(), &prefs), '\0');
  size_t n = LZ4F_compressFrame(out.data(), out.size(), in.data(), in.size(), &prefs);
  EXPECT_FALSE(LZ4F_isError(n));
  out.resize(n);
  return out;
}

TEST(Lz4FrameTest, DecodesAndChecksTheContentChecksum) {
  const std::string in = Doubles(200000, 1);  // 1.6 MB: several 64 KiB blocks
  std::string f = Frame(in, true, LZ4F_max64KB);
  auto out = Lz4FrameDecode(f, in.size());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(*out == in);
  std::string bad = f;
  bad[bad.size() - 2] ^= 0x01;  // content checksum
  EXPECT_EQ(Lz4FrameDecode(bad, in.size()).status().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(Lz4FrameDecode(f.substr(0, f.size() - 9), in.size()).status().code(),
            ErrorCode::kCorrupt);
  EXPECT_EQ(Lz4FrameDecode(f, in.size() - 8).status().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(Lz4FrameDecode(f, in.size() + 8).status().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(Lz4FrameDecode(f + "x", in.size()).status().code(), ErrorCode::kCorrupt);
  auto empty = Lz4FrameDecode(Frame("", true), 0);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->empty());
}

// Random bytes do not compress: the frame stores them as raw blocks, so a flipped byte inside one
// still decodes, and only a checksum can tell.
TEST(Lz4FrameTest, ChecksumsCatchDamageThatStillDecodes) {
  std::mt19937 rng(5);
  std::string in(200000, '\0');
  for (auto& c : in) c = static_cast<char>(rng());
  auto damaged = [](std::string f) {
    f[1000] ^= 0x40;  // inside the first block's data
    return f;
  };
  const std::string content = damaged(Frame(in, true, LZ4F_max64KB));
  EXPECT_EQ(Lz4FrameDecode(content, in.size()).status().code(), ErrorCode::kCorrupt);
  const std::string blocks = damaged(Frame(in, false, LZ4F_max64KB, true));
  EXPECT_EQ(Lz4FrameDecode(blocks, in.size()).status().code(), ErrorCode::kCorrupt);
  const std::string both = Frame(in, true, LZ4F_max64KB, true);
  auto good = Lz4FrameDecode(both, in.size());
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_TRUE(*good == in);
  EXPECT_EQ(Lz4FrameDecode(damaged(both), in.size()).status().code(), ErrorCode::kCorrupt);
  // Without checksums the damage goes through: what the checks above stand on.
  auto unchecked = Lz4FrameDecode(damaged(Frame(in, false, LZ4F_max64KB)), in.size());
  ASSERT_TRUE(unchecked.ok());
  EXPECT_FALSE(*unchecked == in);
}

std::string Chunk(const std::string& data, bool compress, uint8_t level) {
  std::string payload = data;
  uint8_t method = 0x10;
  if (compress) {
    payload.assign(LZ4_compressBound(static_cast<int>(data.size())), '\0');
    payload.resize(LZ4_compress_default(data.data(), payload.data(), static_cast<int>(data.size()),
                                        static_cast<int>(payload.size())));
    method = 0x20;
  }
  std::string h = "LZ4Block";
  h.push_back(static_cast<char>(method | level));
  auto u32 = [&](uint32_t v) { h.append(reinterpret_cast<const char*>(&v), 4); };
  u32(static_cast<uint32_t>(payload.size()));
  u32(static_cast<uint32_t>(data.size()));
  u32(data.empty() ? 0 : XXH32(data.data(), data.size(), 0x9747B28Cu) & 0x0FFFFFFFu);
  return h + (data.empty() ? "" : payload);
}

TEST(Lz4BlockStreamTest, RawAndCompressedChunksWithChecks) {
  const std::string a = Doubles(1000, 2), b = Doubles(700, 3);
  std::string stream = Chunk(a, true, 3) + Chunk(b, false, 3) + Chunk("", false, 0);
  auto out = Lz4BlockStreamDecode(stream, a.size() + b.size());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(*out == a + b);
  std::string bad = stream;
  bad[21 + 30] ^= 0x40;  // inside the first chunk's data
  EXPECT_EQ(Lz4BlockStreamDecode(bad, a.size() + b.size()).status().code(), ErrorCode::kCorrupt);
  std::string badcheck = stream;
  badcheck[17] ^= 0x01;
  auto r = Lz4BlockStreamDecode(badcheck, a.size() + b.size());
  EXPECT_NE(r.status().message().find("checksum"), std::string::npos);
  EXPECT_FALSE(Lz4BlockStreamDecode(stream.substr(0, stream.size() - 21), a.size() + b.size())
                   .ok());  // no end chunk
  EXPECT_FALSE(Lz4BlockStreamDecode(stream, a.size()).ok());
  std::string magic = stream;
  magic[0] = 'X';
  EXPECT_FALSE(Lz4BlockStreamDecode(magic, a.size() + b.size()).ok());
}

}  // namespace
}  // namespace omicsfs::codec
