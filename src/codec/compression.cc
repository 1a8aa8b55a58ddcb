#include "codec/compression.h"

#include <blosc.h>
#include <libdeflate.h>
#include <lz4.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <memory>
#include <mutex>

namespace omicsfs::codec {

Result<std::string> BloscDecode(std::string_view in, size_t max_out) {
  static std::once_flag init;
  std::call_once(init, [] { blosc_init(); });
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
  std::string out(nbytes, '\0');
  if (nbytes == 0) return out;
  int n = blosc_decompress_ctx(in.data(), out.data(), out.size(), 1);
  if (n < 0 || static_cast<size_t>(n) != nbytes) {
    return CorruptError("blosc: decompression failed (code " + std::to_string(n) + ")");
  }
  return out;
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
