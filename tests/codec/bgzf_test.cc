// BGZF layout arithmetic against htslib's bgzip: stored blocks are byte for byte what
// `bgzip -l 0` writes (header, sizes, trailer, EOF block); real deflate round-trips through zlib.
#include "codec/bgzf.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

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

// The same, cut where `cuts` says (text offsets of the blocks' starts after the first).
std::string StoredCut(const std::string& text, const std::vector<uint64_t>& cuts) {
  std::string out;
  for (size_t b = 0; b <= cuts.size() && !text.empty(); ++b) {
    const uint64_t from = b == 0 ? 0 : cuts[b - 1], to = b == cuts.size() ? text.size() : cuts[b];
    const uint32_t n = static_cast<uint32_t>(to - from);
    const auto h = StoredHeader(n);
    out.append(reinterpret_cast<const char*>(h.data()), h.size());
    out.append(text, from, n);
    const auto t = Trailer(Crc32(0, text.data() + from, n), n);
    out.append(reinterpret_cast<const char*>(t.data()), t.size());
  }
  out.append(reinterpret_cast<const char*>(kEofBlock.data()), kEofSize);
  return out;
}

// The blocks' starts after the first, for a first block of `first` bytes and 65 280 after it.
std::vector<uint64_t> Cuts(uint64_t size, uint64_t first) {
  std::vector<uint64_t> cuts;
  for (uint64_t at = first; at < size; at += kBlockPayload) cuts.push_back(at);
  return cuts;
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
  for (uint64_t size : {uint64_t{0}, uint64_t{1}, kBlockPayload - 1, kBlockPayload,
                        kBlockPayload + 1, 3 * kBlockPayload, uint64_t{155048}}) {
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

// The layout of bgzip -l 0 is the functions above; the bedtools layout cuts its first block at
// 32 640 bytes: its sizes, block starts and virtual offsets point where the bytes are.
TEST(Bgzf, StoredLayouts) {
  std::mt19937 rng(9);
  const uint64_t half = kBlockPayload / 2;
  EXPECT_EQ(kBedtoolsLayout.first, half);
  for (uint64_t size : {uint64_t{0}, uint64_t{1}, half - 1, half, half + 1, kBlockPayload,
                        half + kBlockPayload, half + kBlockPayload + 1, 3 * kBlockPayload + 17}) {
    SCOPED_TRACE(size);
    EXPECT_EQ(kBgzipLayout.Blocks(size), StoredBlocks(size));
    EXPECT_EQ(kBgzipLayout.FileSize(size), StoredFileSize(size));
    EXPECT_EQ(kBgzipLayout.DataEnd(size), StoredDataEnd(size));
    std::string text(size, '\0');
    for (auto& c : text) c = static_cast<char>('A' + rng() % 26);
    EXPECT_TRUE(StoredCut(text, Cuts(size, kBlockPayload)) == Stored(text));
    const StoredLayout& lay = kBedtoolsLayout;
    const std::string file = StoredCut(text, Cuts(size, half));
    EXPECT_EQ(file.size(), lay.FileSize(size));
    EXPECT_EQ(lay.DataEnd(size) + kEofSize, file.size());
    EXPECT_EQ(lay.Blocks(size), Cuts(size, half).size() + (size > 0));
    // The first block fits the 32 768 bytes bedtools sees again.
    if (size > 0) {
      EXPECT_LE(((uint8_t(file[17]) << 8) | uint8_t(file[16])) + 1, 32768);
    }
    for (uint64_t b = 0; b < lay.Blocks(size); ++b) {
      EXPECT_EQ(lay.BlockAt(lay.BlockStart(b)), b);
      EXPECT_EQ(lay.BlockAt(lay.BlockStart(b) + kStoredOverhead + lay.Payload(b, size) - 1), b);
      EXPECT_EQ(lay.BlockOfText(lay.BlockText(b)), b);
      EXPECT_EQ(file.substr(lay.BlockStart(b) + kStoredHeaderSize, lay.Payload(b, size)),
                text.substr(lay.BlockText(b), lay.Payload(b, size)));
    }
    if (size > half) {
      EXPECT_EQ(lay.VirtualOffset(half), lay.BlockStart(1) << 16);
    }
    for (int i = 0; i < 50 && size > 0; ++i) {
      const uint64_t pos = rng() % size;
      const uint64_t v = lay.VirtualOffset(pos);
      EXPECT_EQ(file[(v >> 16) + kStoredHeaderSize + (v & 0xffff)], text[pos]) << pos;
    }
  }
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
  EXPECT_EQ(gz->substr(gz->size() - kEofSize),
            std::string(reinterpret_cast<const char*>(kEofBlock.data()), kEofSize));
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
