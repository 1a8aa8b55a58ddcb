#include "codec/compression.h"

#include <blosc.h>
#include <libdeflate.h>
#include <lz4.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>

namespace omicsfs::codec {

namespace {

void BloscInit() {
  static std::once_flag init;
  std::call_once(init, [] { blosc_init(); });
}

}  // namespace

Result<BloscLayout> BloscInspect(std::string_view in, size_t max_out) {
  BloscInit();
  if (in.size() < BLOSC_MIN_HEADER_LENGTH) {
    return CorruptError("blosc: " + std::to_string(in.size()) + " bytes is shorter than a header");
  }
  size_t nbytes = 0;
  if (blosc_cbuffer_validate(in.data(), in.size(), &nbytes) != 0) {
    return CorruptError("blosc: invalid header (sizes do not match the " +
                        std::to_string(in.size()) + " bytes given)");
  }
  if (nbytes > max_out) {
    return CorruptError("blosc: header claims " + std::to_string(nbytes) +
                        " decoded bytes, more than " + std::to_string(max_out));
  }
  size_t nb = 0, cb = 0, blocksize = 0, typesize = 0;
  int flags = 0;
  blosc_cbuffer_sizes(in.data(), &nb, &cb, &blocksize);
  blosc_cbuffer_metainfo(in.data(), &typesize, &flags);
  BloscLayout l;
  l.nbytes = nbytes;
  l.blocksize = blocksize;
  l.typesize = typesize;
  return l;
}

Result<std::string> BloscDecode(std::string_view in, size_t max_out) {
  ASSIGN_OR_RETURN(BloscLayout l, BloscInspect(in, max_out));
  std::string out(l.nbytes, '\0');
  if (l.nbytes == 0) return out;
  int n = blosc_decompress_ctx(in.data(), out.data(), out.size(), 1);
  if (n < 0 || static_cast<size_t>(n) != l.nbytes) {
    return CorruptError("blosc: decompression failed (code " + std::to_string(n) + ")");
  }
  return out;
}

Result<std::string> BloscDecodeRange(std::string_view in, uint64_t offset, uint64_t length) {
  ASSIGN_OR_RETURN(BloscLayout l, BloscInspect(in));
  // blosc_getitem checks its own bounds only by printing; refuse what it would refuse, and
  // ranges it would take in another unit than ours.
  if (l.typesize == 0 || l.blocksize == 0 || l.blocksize > l.nbytes || offset % l.typesize != 0 ||
      length % l.typesize != 0 || offset > l.nbytes || length > l.nbytes - offset ||
      l.nbytes / l.typesize > static_cast<uint64_t>(INT32_MAX)) {
    return CorruptError(
        "blosc: bytes [" + std::to_string(offset) + ", " + std::to_string(offset + length) +
        ") cannot be taken from a frame of " + std::to_string(l.nbytes) + " bytes in blocks of " +
        std::to_string(l.blocksize) + " (items of " + std::to_string(l.typesize) + ")");
  }
  std::string out(length, '\0');
  if (length == 0) return out;
  const int n = blosc_getitem(in.data(), static_cast<int>(offset / l.typesize),
                              static_cast<int>(length / l.typesize), out.data());
  if (n < 0 || static_cast<uint64_t>(n) != length) {
    return CorruptError("blosc: decompression of bytes [" + std::to_string(offset) + ", " +
                        std::to_string(offset + length) + ") failed (code " + std::to_string(n) +
                        ")");
  }
  return out;
}

namespace {

uint32_t Le32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // blosc frames are little-endian; so are the machines this builds for
}

}  // namespace

Result<uint64_t> BloscHeadLength(std::string_view first16, uint64_t frame_size) {
  if (first16.size() < BLOSC_MIN_HEADER_LENGTH || frame_size < BLOSC_MIN_HEADER_LENGTH)
    return CorruptError("blosc: " + std::to_string(frame_size) + " bytes is shorter than a header");
  const uint64_t nbytes = Le32(first16.data() + 4), blocksize = Le32(first16.data() + 8);
  if ((static_cast<uint8_t>(first16[2]) & BLOSC_MEMCPYED) != 0 || nbytes == 0)
    return uint64_t{BLOSC_MIN_HEADER_LENGTH};
  if (blocksize == 0) return CorruptError("blosc: block size 0");
  const uint64_t blocks = (nbytes + blocksize - 1) / blocksize;
  if (BLOSC_MIN_HEADER_LENGTH + 4 * blocks > frame_size) {
    return CorruptError("blosc: a table of " + std::to_string(blocks) + " blocks does not fit in " +
                        std::to_string(frame_size) + " bytes");
  }
  return BLOSC_MIN_HEADER_LENGTH + 4 * blocks;
}

Result<BloscFrameIndex> BloscIndex(std::string_view head, uint64_t frame_size, size_t max_out) {
  BloscInit();
  size_t nbytes = 0;
  if (head.size() < BLOSC_MIN_HEADER_LENGTH ||
      blosc_cbuffer_validate(head.data(), frame_size, &nbytes) != 0) {
    return CorruptError("blosc: invalid header (sizes do not match the " +
                        std::to_string(frame_size) + " bytes of the frame)");
  }
  if (nbytes > max_out) {
    return CorruptError("blosc: header claims " + std::to_string(nbytes) +
                        " decoded bytes, more than " + std::to_string(max_out));
  }
  BloscFrameIndex x;
  x.layout.nbytes = nbytes;
  x.layout.blocksize = Le32(head.data() + 8);
  x.layout.typesize = static_cast<uint8_t>(head[3]);
  x.memcpyed = (static_cast<uint8_t>(head[2]) & BLOSC_MEMCPYED) != 0;
  if (static_cast<uint8_t>(head[0]) != BLOSC_VERSION_FORMAT || x.layout.typesize == 0 ||
      (nbytes > 0 && (x.layout.blocksize == 0 || x.layout.blocksize > nbytes ||
                      x.layout.blocksize % x.layout.typesize != 0))) {
    return CorruptError("blosc: header of version " +
                        std::to_string(static_cast<uint8_t>(head[0])) + ", blocks of " +
                        std::to_string(x.layout.blocksize) + " bytes, items of " +
                        std::to_string(x.layout.typesize) + " cannot be read by parts");
  }
  const uint64_t blocks = x.layout.Blocks();
  if (x.memcpyed) {
    if (nbytes + BLOSC_MIN_HEADER_LENGTH != frame_size)
      return CorruptError("blosc: an uncompressed frame of " + std::to_string(frame_size) +
                          " bytes claims " + std::to_string(nbytes));
    for (uint64_t b = 0; b < blocks; ++b) {
      x.start.push_back(BLOSC_MIN_HEADER_LENGTH + b * x.layout.blocksize);
      x.end.push_back(x.start.back() + x.BlockBytes(b));
    }
    return x;
  }
  const uint64_t table_end = BLOSC_MIN_HEADER_LENGTH + 4 * blocks;
  if (head.size() < table_end) return CorruptError("blosc: block table cut short");
  // Blocks lie back to back but not always in order (c-blosc's threads write them as they
  // finish): a block ends where the next one in the frame starts.
  std::vector<uint64_t> sorted;
  for (uint64_t b = 0; b < blocks; ++b) {
    const uint64_t at = Le32(head.data() + BLOSC_MIN_HEADER_LENGTH + 4 * b);
    if (at < table_end || at + 4 > frame_size) {
      return CorruptError("blosc: block " + std::to_string(b) + " starts at " + std::to_string(at) +
                          ", outside the frame's " + std::to_string(frame_size) + " bytes");
    }
    x.start.push_back(at);
    sorted.push_back(at);
  }
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    return CorruptError("blosc: two blocks start at the same byte");
  for (uint64_t b = 0; b < blocks; ++b) {
    auto next = std::upper_bound(sorted.begin(), sorted.end(), x.start[b]);
    x.end.push_back(next == sorted.end() ? frame_size : *next);
  }
  return x;
}

Result<std::string> BloscDecodeBlock(const BloscFrameIndex& index, std::string_view head,
                                     std::string_view block, uint64_t b) {
  const uint64_t blocks = index.layout.Blocks();
  if (b >= blocks || block.size() != index.end[b] - index.start[b])
    return InternalError("blosc: block " + std::to_string(b) + " asked with the wrong bytes");
  if (index.memcpyed) return std::string(block);
  // A frame of the header, the block table and this one block, its start and the frame's
  // size rewritten: blosc_getitem decodes block b from it, bounded by its own bytes (a damaged
  // block cannot make it read past them).
  const uint64_t table_end = BLOSC_MIN_HEADER_LENGTH + 4 * blocks;
  std::string frame;
  frame.reserve(table_end + block.size());
  frame.append(head.substr(0, table_end));
  frame.append(block);
  if (frame.size() > static_cast<uint64_t>(INT32_MAX))
    return CorruptError("blosc: a block of " + std::to_string(block.size()) + " bytes");
  const uint32_t size = static_cast<uint32_t>(frame.size()), at = static_cast<uint32_t>(table_end);
  std::memcpy(frame.data() + 12, &size, 4);
  std::memcpy(frame.data() + BLOSC_MIN_HEADER_LENGTH + 4 * b, &at, 4);
  return BloscDecodeRange(frame, b * index.layout.blocksize, index.BlockBytes(b));
}

Result<std::string> ZlibDecode(std::string_view in, ZlibFormat format, size_t max_out) {
  const char* name = format == ZlibFormat::kGzip ? "gzip" : "zlib";
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, format == ZlibFormat::kGzip ? 15 + 16 : 15) != Z_OK) {
    return InternalError(std::string(name) + ": inflateInit failed");
  }
  std::string out;
  out.resize(std::min<size_t>(max_out, std::max<size_t>(in.size() * 4, 4096)));
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  size_t produced = 0;
  int rc = Z_OK;
  for (;;) {
    if (produced == out.size()) {
      if (out.size() >= max_out) {
        inflateEnd(&zs);
        return CorruptError(std::string(name) + ": decoded data exceeds " +
                            std::to_string(max_out) + " bytes");
      }
      out.resize(std::min(max_out, out.size() * 2));
    }
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    zs.avail_out = static_cast<uInt>(std::min<size_t>(out.size() - produced, UINT32_MAX));
    const uInt before = zs.avail_out;
    rc = inflate(&zs, Z_NO_FLUSH);
    produced += before - zs.avail_out;
    if (rc == Z_STREAM_END) {
      // gzip: further members may follow (numcodecs writes one; accept several).
      if (format == ZlibFormat::kGzip && zs.avail_in > 0) {
        if (inflateReset(&zs) != Z_OK) break;
        continue;
      }
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) break;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) break;  // truncated input
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    return CorruptError(std::string(name) + ": corrupt or truncated stream (" +
                        (zs.msg ? zs.msg : "zlib code " + std::to_string(rc)) + ")");
  }
  out.resize(produced);
  return out;
}

// libdeflate rather than zlib: the decoded size is known, so one whole-buffer call with no
// growing output, and it refuses a stream that ends short of or runs past that size by itself.
Result<std::string> InflateRaw(std::string_view in, size_t size) {
  struct Free {
    void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
  };
  std::unique_ptr<libdeflate_decompressor, Free> d(libdeflate_alloc_decompressor());
  if (!d) return Status(ErrorCode::kOutOfMemory, "libdeflate_alloc_decompressor failed");
  std::string out(size, '\0');
  const libdeflate_result rc =
      libdeflate_deflate_decompress(d.get(), in.data(), in.size(), out.data(), size, nullptr);
  switch (rc) {
    case LIBDEFLATE_SUCCESS:
      return out;
    case LIBDEFLATE_SHORT_OUTPUT:
      return CorruptError("deflate: the stream ends before the " + std::to_string(size) +
                          " bytes expected");
    case LIBDEFLATE_INSUFFICIENT_SPACE:
      return CorruptError("deflate: the stream holds more than the " + std::to_string(size) +
                          " bytes expected");
    default:
      return CorruptError("deflate: corrupt or truncated stream");
  }
}

Result<std::string> ZstdDecode(std::string_view in, size_t max_out) {
  std::string out;
  const char* p = in.data();
  size_t left = in.size();
  while (left > 0) {
    size_t frame = ZSTD_findFrameCompressedSize(p, left);
    if (ZSTD_isError(frame)) return CorruptError(std::string("zstd: ") + ZSTD_getErrorName(frame));
    unsigned long long content = ZSTD_getFrameContentSize(p, frame);
    if (content == ZSTD_CONTENTSIZE_ERROR) return CorruptError("zstd: invalid frame header");
    size_t old = out.size();
    if (content != ZSTD_CONTENTSIZE_UNKNOWN) {
      if (content > max_out - old)
        return CorruptError("zstd: frame claims " + std::to_string(content) +
                            " bytes, beyond the limit");
      out.resize(old + content);
      size_t n = ZSTD_decompress(out.data() + old, content, p, frame);
      if (ZSTD_isError(n)) return CorruptError(std::string("zstd: ") + ZSTD_getErrorName(n));
      if (n != content)
        return CorruptError("zstd: frame decoded to " + std::to_string(n) + " bytes, header said " +
                            std::to_string(content));
    } else {
      ZSTD_DStream* ds = ZSTD_createDStream();
      ZSTD_initDStream(ds);
      ZSTD_inBuffer ib{p, frame, 0};
      size_t rc = 1;
      while (rc != 0) {
        if (out.size() - old >= max_out) {
          ZSTD_freeDStream(ds);
          return CorruptError("zstd: decoded data beyond the limit");
        }
        size_t produced = out.size();
        out.resize(produced + 65536);
        ZSTD_outBuffer ob{out.data() + produced, 65536, 0};
        rc = ZSTD_decompressStream(ds, &ob, &ib);
        out.resize(produced + ob.pos);
        if (ZSTD_isError(rc)) {
          ZSTD_freeDStream(ds);
          return CorruptError(std::string("zstd: ") + ZSTD_getErrorName(rc));
        }
        if (rc != 0 && ib.pos == ib.size && ob.pos == 0) {
          ZSTD_freeDStream(ds);
          return CorruptError("zstd: truncated frame");
        }
      }
      ZSTD_freeDStream(ds);
    }
    p += frame;
    left -= frame;
  }
  return out;
}

Result<std::string> Lz4PrefixedDecode(std::string_view in, size_t max_out) {
  if (in.size() < 4) return CorruptError("lz4: missing the 4-byte size prefix");
  uint32_t n;
  std::memcpy(&n, in.data(), 4);  // little-endian host
  if (n > max_out || n > static_cast<uint32_t>(INT32_MAX))
    return CorruptError("lz4: size prefix " + std::to_string(n) + " beyond the limit");
  std::string out(n, '\0');
  if (in.size() - 4 > static_cast<size_t>(INT32_MAX)) return CorruptError("lz4: input too large");
  int got = LZ4_decompress_safe(in.data() + 4, out.data(), static_cast<int>(in.size() - 4),
                                static_cast<int>(n));
  if (got < 0 || static_cast<uint32_t>(got) != n) {
    return CorruptError("lz4: corrupt block (decoded " + std::to_string(got) + " of " +
                        std::to_string(n) + " bytes)");
  }
  return out;
}

}  // namespace omicsfs::codec
