// BGZF layout arithmetic against htslib's bgzip: stored blocks are byte for byte what
// `bgzip -l 0` writes (header, sizes, trailer, EOF block); real deflate round-trips through zlib.
#include "codec/bgzf.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>

namespace omicsfs::codec::bgzf {
namespace {

// What this layout writes for `text`: the reference of the mount's stored view.
std::string Stored(const std::string& text) {
  std::string out;
  for (uint64_t b = 0; b < StoredBlocks(text.size()); ++b) {
    const uint32_t n = static_cast<uint32_t>(StoredPayload(b, text.size()));
    const auto h = StoredHeader(n);
    out.append(reinterpret_cast<const char*>(h.data()), h.size());
    out.append(text, b * kBlockPayload, n);
    const auto t = Trailer(Crc32(0, text.data() + b * kBlockPayload, n), n);
    out.append(reinterpret_cast<const char*>(t.data()), t.size());
  }
  out.append(reinterpret_cast<const char*>(kEofBlock.data()), kEofSize);
  return out;
}

std::string Bgzip0(const std::string& text) {
  char path[] = "/tmp/omicsfs-bgzf-unit-XXXXXX";
  const int fd = ::mkstemp(path);
  EXPECT_GE(fd, 0);
  ::close(fd);
  std::ofstream(path, std::ios::binary) << text;
  std::string out;
  FILE* p = ::popen((std::string("bgzip -l 0 -c ") + path).c_str(), "r");
  char buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  EXPECT_EQ(::pclose(p), 0);
  std::remove(path);
  return out;
}

TEST(Bgzf, StoredLayoutIsBgzipLevel0) {
  std::mt19937 rng(7);
  for (uint64_t size : {uint64_t{0}, uint64_t{1}, kBlockPayload - 1, kBlockPayload, kBlockPayload + 1,
                        3 * kBlockPayload, uint64_t{155048}}) {
    std::string text(size, '\0');
    for (auto& c : text) c = static_cast<char>('A' + rng() % 26);
    const std::string mine = Stored(text);
    EXPECT_EQ(mine.size(), StoredFileSize(size));
    EXPECT_EQ(mine.size(), size + 31 * ((size + 65279) / 65280) + 28);
    EXPECT_EQ(StoredDataEnd(size) + kEofSize, mine.size());
    EXPECT_TRUE(mine == Bgzip0(text)) << "size " << size;
  }
  EXPECT_EQ(StoredFileSize(155048), 155169u);  // the corpus VCF
}

TEST(Bgzf, VirtualOffsets) {
  EXPECT_EQ(StoredVirtualOffset(0), 0u);
  EXPECT_EQ(StoredVirtualOffset(10), 10u);
  EXPECT_EQ(StoredVirtualOffset(kBlockPayload), kFullBlockSize << 16);
  EXPECT_EQ(StoredVirtualOffset(2 * kBlockPayload + 5), ((2 * kFullBlockSize) << 16) | 5);
}

TEST(Bgzf, CompressRoundTrips) {
  std::string text;
  for (int i = 0; i < 200000; ++i) text += "chr1\t" + std::to_string(i * 7) + "\n";
  auto gz = Compress(text);
  ASSERT_TRUE(gz.ok());
  EXPECT_LT(gz->size(), text.size() / 3);
  EXPECT_EQ(gz->substr(gz->size() - kEofSize), std::string(reinterpret_cast<const char*>(kEofBlock.data()), kEofSize));
  // Every member is a BGZF block (BSIZE consistent) and the whole inflates to the text.
  size_t at = 0;
  std::string back;
  while (at < gz->size()) {
    const auto* p = reinterpret_cast<const uint8_t*>(gz->data() + at);
    ASSERT_EQ(p[12], 'B');
    ASSERT_EQ(p[13], 'C');
    const size_t bsize = (p[16] | (p[17] << 8)) + 1;
    z_stream z{};
    ASSERT_EQ(inflateInit2(&z, 16 + 15), Z_OK);
    std::string out(65536, '\0');
    z.next_in = const_cast<Bytef*>(p);
    z.avail_in = static_cast<uInt>(bsize);
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    ASSERT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
    back.append(out.data(), z.total_out);
    inflateEnd(&z);
    at += bsize;
  }
  EXPECT_TRUE(back == text);
  EXPECT_EQ(*gz, *Compress(text));  // deterministic
}

}  // namespace
}  // namespace omicsfs::codec::bgzf
