#include "codec/bgzf.h"

#include <libdeflate.h>

#include <cstring>
#include <memory>

namespace omicsfs::codec::bgzf {
namespace {

void PutLe16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
void PutLe32(uint8_t* p, uint32_t v) {
  PutLe16(p, v);
  PutLe16(p + 2, v >> 16);
}

// gzip member header with the BC extra subfield; BSIZE (total block size − 1) at 16..17.
void GzipHeader(uint8_t* p, uint64_t block_size) {
  static constexpr uint8_t kMagic[16] = {0x1f, 0x8b, 0x08, 0x04, 0,    0,    0,    0,
                                         0,    0xff, 0x06, 0,    0x42, 0x43, 0x02, 0};
  std::memcpy(p, kMagic, sizeof kMagic);
  PutLe16(p + 16, static_cast<uint32_t>(block_size - 1));
}

struct CompressorDeleter {
  void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};

}  // namespace

std::array<uint8_t, kStoredHeaderSize> StoredHeader(uint32_t payload) {
  std::array<uint8_t, kStoredHeaderSize> h{};
  GzipHeader(h.data(), payload + kStoredOverhead);
  h[18] = 1;  // BFINAL = 1, BTYPE = 00 (stored), RFC 1951 §3.2.4
  PutLe16(&h[19], payload);
  PutLe16(&h[21], ~payload & 0xffff);
  return h;
}

std::array<uint8_t, kTrailerSize> Trailer(uint32_t crc, uint32_t payload) {
  std::array<uint8_t, kTrailerSize> t{};
  PutLe32(&t[0], crc);
  PutLe32(&t[4], payload);
  return t;
}

// libdeflate 1.14's CRC-32 (PCLMULQDQ folding) against zlib 1.2.13's crc32, 64 MiB of random
// bytes in 65 280-byte blocks on this VM: 11.6-12.4 GB/s against 4.0-4.3 GB/s (2.9x); a BGZF
// twin computes one per block it serves, so libdeflate's.
uint32_t Crc32(uint32_t crc, const void* data, size_t size) {
  return libdeflate_crc32(crc, data, size);
}

Result<std::string> Compress(std::string_view data, int level) {
  std::unique_ptr<libdeflate_compressor, CompressorDeleter> c(libdeflate_alloc_compressor(level));
  if (!c) return Status(ErrorCode::kOutOfMemory, "libdeflate_alloc_compressor failed");
  std::string out;
  out.reserve(data.size() / 2 + kEofSize + 64);
  std::string block(0x10000, '\0');
  for (size_t at = 0; at < data.size(); at += kBlockPayload) {
    const size_t n = std::min<size_t>(kBlockPayload, data.size() - at);
    uint8_t* b = reinterpret_cast<uint8_t*>(block.data());
    size_t clen = libdeflate_deflate_compress(c.get(), data.data() + at, n, b + kGzipHeaderSize,
                                              0x10000 - kGzipHeaderSize - kTrailerSize);
    if (clen == 0) {  // incompressible: one stored block, as htslib falls back to
      std::memcpy(b, StoredHeader(static_cast<uint32_t>(n)).data(), kStoredHeaderSize);
      std::memcpy(b + kStoredHeaderSize, data.data() + at, n);
      clen = n + 5;
    }
    const size_t total = kGzipHeaderSize + clen + kTrailerSize;
    GzipHeader(b, total);
    const uint32_t crc = Crc32(0, data.data() + at, n);
    std::memcpy(b + kGzipHeaderSize + clen, Trailer(crc, static_cast<uint32_t>(n)).data(),
                kTrailerSize);
    out.append(block.data(), total);
  }
  out.append(reinterpret_cast<const char*>(kEofBlock.data()), kEofSize);
  return out;
}

}  // namespace omicsfs::codec::bgzf
