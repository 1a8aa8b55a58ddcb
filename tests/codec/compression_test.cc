// Codec vectors are produced in the test by the real C libraries (c-blosc, zlib, zstd, lz4).
#include "codec/compression.h"

#include <blosc.h>
#include <gtest/gtest.h>
#include <lz4.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "codec/vlen_utf8.h"
#include "codec/zarr_codecs.h"

namespace omicsfs::codec {
namespace {

std::string Sample(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i)
    s[i] = static_cast<char>(i % 7 == 0 ? rng() : i / 13);  // compressible
  return s;
}

std::string BloscEncode(const std::string& in, const char* cname, int shuffle, size_t typesize) {
  blosc_init();
  std::string out(in.size() + BLOSC_MAX_OVERHEAD, '\0');
  blosc_set_compressor(cname);
  int n = blosc_compress(5, shuffle, typesize, in.size(), in.data(), out.data(), out.size());
  EXPECT_GT(n, 0);
  out.resize(static_cast<size_t>(n));
  return out;
}

TEST(BloscTest, EveryInnerCodecAndShuffle) {
  const std::string in = Sample(100000, 1);
  for (const char* cname : {"blosclz", "lz4", "lz4hc", "zlib", "zstd"}) {
    for (int shuffle : {BLOSC_NOSHUFFLE, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE}) {
      for (size_t typesize : {1, 4}) {
        auto out = BloscDecode(BloscEncode(in, cname, shuffle, typesize));
        ASSERT_TRUE(out.ok()) << cname << " " << shuffle << ": " << out.status().ToString();
        EXPECT_TRUE(*out == in) << cname << " " << shuffle << " " << typesize;
      }
    }
  }
}

TEST(BloscTest, RejectsTruncatedCorruptAndOversized) {
  const std::string in = Sample(50000, 2);
  std::string enc = BloscEncode(in, "lz4", BLOSC_SHUFFLE, 4);
  EXPECT_EQ(BloscDecode(enc.substr(0, enc.size() - 10)).status().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(BloscDecode(enc.substr(0, 8)).status().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(BloscDecode(enc, 1000).status().code(), ErrorCode::kCorrupt);  // header says 50000
  std::string flipped = enc;
  for (size_t i = 16; i < flipped.size(); i += 7) flipped[i] ^= 0x5A;
  auto r = BloscDecode(flipped);
  EXPECT_TRUE(!r.ok() ||
              r->size() == in.size());  // never UB; data may decode to garbage-free error
}

// A frame read by parts: every block decoded from the header, the block table and its own bytes
// alone equals the same bytes of the whole frame decoded; ranges likewise. Every typesize,
// shuffle, a last block shorter than the others, frames written by two threads (blocks out of
// order) and frames stored uncompressed.
TEST(BloscTest, BlocksAndRangesReadByParts) {
  blosc_init();
  for (size_t typesize : {1, 2, 4, 8}) {
    for (int shuffle : {BLOSC_NOSHUFFLE, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE}) {
      for (int threads : {1, 2}) {
        for (int clevel : {0, 5}) {
          const std::string in = Sample(typesize * 10007, static_cast<uint32_t>(typesize));
          std::string enc(in.size() + BLOSC_MAX_OVERHEAD, '\0');
          blosc_set_compressor("zstd");
          blosc_set_blocksize(4096);
          blosc_set_nthreads(threads);
          const int n = blosc_compress(clevel, shuffle, typesize, in.size(), in.data(), enc.data(),
                                       enc.size());
          blosc_set_blocksize(0);
          blosc_set_nthreads(1);
          ASSERT_GT(n, 0);
          enc.resize(static_cast<size_t>(n));
          const std::string what = std::to_string(typesize) + "/" + std::to_string(shuffle) + "/" +
                                   std::to_string(threads) + "/" + std::to_string(clevel);
          auto head_length = BloscHeadLength(enc.substr(0, 16), enc.size());
          ASSERT_TRUE(head_length.ok()) << what << ": " << head_length.status().ToString();
          const std::string head = enc.substr(0, *head_length);
          auto index = BloscIndex(head, enc.size());
          ASSERT_TRUE(index.ok()) << what << ": " << index.status().ToString();
          EXPECT_EQ(index->memcpyed, clevel == 0) << what;
          const uint64_t bs = index->layout.blocksize, blocks = index->layout.Blocks();
          ASSERT_GT(blocks, 2u) << what;
          ASSERT_NE(in.size() % bs, 0u) << what;  // a short last block
          uint64_t packed = 0;
          for (uint64_t b = 0; b < blocks; ++b) {
            packed += index->end[b] - index->start[b];
            auto block = BloscDecodeBlock(
                *index, head,
                std::string_view(enc).substr(index->start[b], index->end[b] - index->start[b]), b);
            ASSERT_TRUE(block.ok()) << what << " block " << b << ": " << block.status().ToString();
            ASSERT_TRUE(*block == in.substr(b * bs, bs)) << what << " block " << b;
          }
          EXPECT_EQ(packed + *head_length, enc.size()) << what;  // back to back, all of them
          std::mt19937 rng(7);
          for (int k = 0; k < 20; ++k) {
            const uint64_t items = in.size() / typesize;
            const uint64_t a = rng() % items, len = rng() % (items - a + 1);
            auto range = BloscDecodeRange(enc, a * typesize, len * typesize);
            ASSERT_TRUE(range.ok()) << what << ": " << range.status().ToString();
            ASSERT_TRUE(*range == in.substr(a * typesize, len * typesize)) << what;
          }
          if (typesize > 1) {  // not in whole items
            EXPECT_EQ(BloscDecodeRange(enc, 1, typesize).status().code(), ErrorCode::kCorrupt);
          }
          EXPECT_EQ(BloscDecodeRange(enc, 0, in.size() + typesize).status().code(),
                    ErrorCode::kCorrupt);
        }
      }
    }
  }
}

// Damage in a frame read by parts is an error, never a crash or bytes from outside the block.
TEST(BloscTest, DamagedFramesReadByPartsAreCorrupt) {
  const std::string in = Sample(4 * 9001, 9);
  std::string enc(in.size() + BLOSC_MAX_OVERHEAD, '\0');
  blosc_set_compressor("zstd");
  blosc_set_blocksize(2048);
  const int n = blosc_compress(5, BLOSC_SHUFFLE, 4, in.size(), in.data(), enc.data(), enc.size());
  blosc_set_blocksize(0);
  ASSERT_GT(n, 0);
  enc.resize(static_cast<size_t>(n));
  ASSERT_EQ(static_cast<uint8_t>(enc[2]) & BLOSC_MEMCPYED, 0);
  const uint64_t head_length = BloscHeadLength(enc.substr(0, 16), enc.size()).value();
  const std::string head = enc.substr(0, head_length);
  ASSERT_GT(BloscIndex(head, enc.size())->layout.Blocks(), 2u);
  // The frame's size must be the header's; a table that does not fit is refused.
  EXPECT_EQ(BloscIndex(head, enc.size() - 1).status().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(BloscHeadLength(enc.substr(0, 16), 40).status().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(BloscHeadLength(enc.substr(0, 8), enc.size()).status().code(), ErrorCode::kCorrupt);
  // A block starting inside the table, past the end, or where another starts.
  for (uint32_t at : {uint32_t{20}, static_cast<uint32_t>(enc.size()), uint32_t{0}}) {
    std::string bad = head;
    const uint32_t v = at == 0 ? static_cast<uint32_t>(BloscIndex(head, enc.size())->start[1]) : at;
    std::memcpy(bad.data() + 16, &v, 4);
    EXPECT_EQ(BloscIndex(bad, enc.size()).status().code(), ErrorCode::kCorrupt) << at;
  }
  // A damaged block: its split sizes lie; the decode stays inside the block's own bytes.
  auto index = BloscIndex(head, enc.size());
  ASSERT_TRUE(index.ok());
  std::string block = enc.substr(index->start[2], index->end[2] - index->start[2]);
  for (size_t i = 0; i < block.size(); i += 5) block[i] = static_cast<char>(0xFF);
  auto r = BloscDecodeBlock(*index, head, block, 2);
  EXPECT_TRUE(!r.ok() || r->size() == index->BlockBytes(2));
  if (!r.ok()) {
    EXPECT_EQ(r.status().code(), ErrorCode::kCorrupt);
  }
  EXPECT_EQ(BloscDecodeBlock(*index, head, block.substr(1), 2).status().code(),
            ErrorCode::kInternal);  // the caller's bytes are not the block's
}

TEST(ZlibTest, ZlibAndGzip) {
  const std::string in = Sample(70000, 3);
  uLongf n = compressBound(in.size());
  std::string z(n, '\0');
  ASSERT_EQ(compress2(reinterpret_cast<Bytef*>(z.data()), &n,
                      reinterpret_cast<const Bytef*>(in.data()), in.size(), 6),
            Z_OK);
  z.resize(n);
  auto out = ZlibDecode(z, ZlibFormat::kZlib);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(*out == in);
  EXPECT_EQ(ZlibDecode(z.substr(0, z.size() / 2), ZlibFormat::kZlib).status().code(),
            ErrorCode::kCorrupt);
  EXPECT_EQ(ZlibDecode(z, ZlibFormat::kZlib, 1000).status().code(), ErrorCode::kCorrupt);

  z_stream zs{};
  ASSERT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string g(deflateBound(&zs, in.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(g.data());
  zs.avail_out = static_cast<uInt>(g.size());
  ASSERT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  g.resize(zs.total_out);
  deflateEnd(&zs);
  auto gout = ZlibDecode(g, ZlibFormat::kGzip);
  ASSERT_TRUE(gout.ok()) << gout.status().ToString();
  EXPECT_TRUE(*gout == in);
  EXPECT_FALSE(ZlibDecode(g, ZlibFormat::kZlib).ok());
}

// Raw deflate as zip members hold it (zlib with windowBits -15, as Python's zipfile writes it).
std::string RawDeflate(const std::string& in) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, in.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

TEST(InflateRawTest, ExactSizeOnly) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, size_t{300000}}) {
    const std::string in = Sample(n, 3);
    const std::string packed = RawDeflate(in);
    auto out = InflateRaw(packed, in.size());
    ASSERT_TRUE(out.ok()) << n << ": " << out.status().ToString();
    EXPECT_EQ(*out, in);
    if (n == 0) continue;
    EXPECT_EQ(InflateRaw(packed, n - 1).status().code(), ErrorCode::kCorrupt) << n;  // runs past
    EXPECT_EQ(InflateRaw(packed, n + 1).status().code(), ErrorCode::kCorrupt) << n;  // ends short
    EXPECT_EQ(InflateRaw(packed.substr(0, packed.size() / 2), n).status().code(),
              ErrorCode::kCorrupt);
  }
  EXPECT_EQ(InflateRaw("\xff\xff\xff\xff", 10).status().code(), ErrorCode::kCorrupt);
}

TEST(ZstdTest, KnownAndUnknownContentSize) {
  const std::string in = Sample(90000, 4);
  std::string z(ZSTD_compressBound(in.size()), '\0');
  size_t n = ZSTD_compress(z.data(), z.size(), in.data(), in.size(), 3);
  ASSERT_FALSE(ZSTD_isError(n));
  z.resize(n);
  auto out = ZstdDecode(z);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(*out == in);
  EXPECT_EQ(ZstdDecode(z, 100).status().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(ZstdDecode(z.substr(0, z.size() - 5)).status().code(), ErrorCode::kCorrupt);
  // Streaming compression leaves the content size out of the frame header.
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  std::string s(ZSTD_compressBound(in.size()) + 64, '\0');
  ZSTD_outBuffer ob{s.data(), s.size(), 0};
  ZSTD_inBuffer ib{in.data(), in.size(), 0};
  ZSTD_CCtx_setPledgedSrcSize(cctx, ZSTD_CONTENTSIZE_UNKNOWN);
  ASSERT_EQ(ZSTD_compressStream2(cctx, &ob, &ib, ZSTD_e_end), 0u);
  ZSTD_freeCCtx(cctx);
  s.resize(ob.pos);
  auto sout = ZstdDecode(s);
  ASSERT_TRUE(sout.ok()) << sout.status().ToString();
  EXPECT_TRUE(*sout == in);
}

TEST(Lz4Test, NumcodecsSizePrefix) {
  const std::string in = Sample(60000, 5);
  std::string z(4 + LZ4_compressBound(static_cast<int>(in.size())), '\0');
  uint32_t size = static_cast<uint32_t>(in.size());
  std::memcpy(z.data(), &size, 4);
  int n = LZ4_compress_default(in.data(), z.data() + 4, static_cast<int>(in.size()),
                               static_cast<int>(z.size() - 4));
  ASSERT_GT(n, 0);
  z.resize(4 + static_cast<size_t>(n));
  auto out = Lz4PrefixedDecode(z);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(*out == in);
  EXPECT_EQ(Lz4PrefixedDecode(z.substr(0, z.size() - 3)).status().code(), ErrorCode::kCorrupt);
  std::string lie = z;
  uint32_t bigger = size + 1;
  std::memcpy(lie.data(), &bigger, 4);
  EXPECT_EQ(Lz4PrefixedDecode(lie).status().code(), ErrorCode::kCorrupt);
}

TEST(VlenUtf8Test, DecodesAndBoundsChecks) {
  std::string enc;
  auto u32 = [&](uint32_t v) { enc.append(reinterpret_cast<const char*>(&v), 4); };
  u32(3);
  for (std::string s : {"", "A", "ü 细胞"}) {
    u32(static_cast<uint32_t>(s.size()));
    enc += s;
  }
  auto out = VlenUtf8Decode(enc, 3);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, (std::vector<std::string>{"", "A", "ü 细胞"}));
  EXPECT_FALSE(VlenUtf8Decode(enc, 4).ok());
  EXPECT_FALSE(VlenUtf8Decode(enc.substr(0, enc.size() - 1), 3).ok());
  EXPECT_FALSE(VlenUtf8Decode(enc + "x", 3).ok());
  std::string huge = enc;
  uint32_t big = 0xFFFFFFF0u;
  std::memcpy(huge.data() + 4, &big, 4);
  EXPECT_FALSE(VlenUtf8Decode(huge, 3).ok());
}

TEST(ZarrCodecsTest, RegistryRefusesUnknownIdsByName) {
  using nlohmann::json;
  auto ok = ParseZarrV2Codecs(json{{"id", "blosc"}, {"cname", "lz4"}},
                              json::array({json{{"id", "vlen-utf8"}}}));
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->vlen_utf8);
  auto bad = ParseZarrV2Codecs(json{{"id", "bz2"}}, json());
  EXPECT_EQ(bad.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(bad.status().message().find("bz2"), std::string::npos);
  auto filt = ParseZarrV2Codecs(json(), json::array({json{{"id", "delta"}}}));
  EXPECT_NE(filt.status().message().find("delta"), std::string::npos);
  auto v3 = ParseZarrV3Codecs(json::array(
      {json{{"name", "bytes"}, {"configuration", {{"endian", "big"}}}}, json{{"name", "zstd"}}}));
  ASSERT_TRUE(v3.ok());
  EXPECT_TRUE(v3->big_endian);
  EXPECT_EQ(ParseZarrV3Codecs(json::array({json{{"name", "sharding_indexed"}}})).status().code(),
            ErrorCode::kUnsupported);
}

}  // namespace
}  // namespace omicsfs::codec
