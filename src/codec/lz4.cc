#include "codec/lz4.h"

#include <lz4.h>
#include <lz4frame.h>
#include <xxhash.h>

#include <cstring>

namespace omicsfs::codec {

Result<std::string> Lz4FrameDecode(std::string_view in, size_t expected) {
  LZ4F_dctx* ctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx, LZ4F_VERSION))) {
    return InternalError("lz4 frame: cannot create a decompression context");
  }
  std::string out(expected, '\0');
  // The content checksum is verified below with libxxhash: liblz4's own XXH32 (as Debian builds
  // it) ran ~5× slower and was 12 % of a datg cat. Only for frames without block checksums, which
  // liblz4 must go on checking (skipping turns off both kinds).
  const bool frame =
      in.size() > 4 && std::memcmp(in.data(), "\x04\x22\x4d\x18", 4) == 0;  // not a skippable one
  const uint8_t flags = frame ? static_cast<uint8_t>(in[4]) : 0;
  const bool block_checksums = (flags & 0x10) != 0, content_checksum = (flags & 0x04) != 0;
  LZ4F_decompressOptions_t options;
  std::memset(&options, 0, sizeof(options));
  options.skipChecksums = block_checksums ? 0 : 1;
  size_t in_pos = 0, out_pos = 0;
  size_t hint = 1;
  while (hint != 0) {
    if (in_pos == in.size()) {
      LZ4F_freeDecompressionContext(ctx);
      return CorruptError("lz4 frame: truncated (frame not finished after " +
                          std::to_string(in.size()) + " bytes)");
    }
    size_t src = in.size() - in_pos;
    // Leave one spare byte of room so that more content than expected is detected.
    size_t dst = out.size() - out_pos;
    char* dst_ptr = out.data() + out_pos;
    char guard[64];
    if (dst == 0) {
      dst_ptr = guard;
      dst = sizeof(guard);
    }
    hint = LZ4F_decompress(ctx, dst_ptr, &dst, in.data() + in_pos, &src, &options);
    if (LZ4F_isError(hint)) {
      std::string why = LZ4F_getErrorName(hint);
      LZ4F_freeDecompressionContext(ctx);
      return CorruptError("lz4 frame: " + why);
    }
    if (dst_ptr == guard && dst > 0) {
      LZ4F_freeDecompressionContext(ctx);
      return CorruptError("lz4 frame: decodes to more than the expected " +
                          std::to_string(expected) + " bytes");
    }
    if (dst_ptr != guard) out_pos += dst;
    in_pos += src;
    if (src == 0 && dst == 0 && hint != 0) {
      LZ4F_freeDecompressionContext(ctx);
      return CorruptError("lz4 frame: no progress");
    }
  }
  LZ4F_freeDecompressionContext(ctx);
  if (out_pos != expected) {
    return CorruptError("lz4 frame: decoded " + std::to_string(out_pos) + " bytes, expected " +
                        std::to_string(expected));
  }
  if (in_pos != in.size()) {
    return CorruptError("lz4 frame: " + std::to_string(in.size() - in_pos) +
                        " trailing bytes after the frame");
  }
  if (options.skipChecksums && content_checksum) {  // the frame spans `in`: its last 4 bytes
    uint32_t stored;
    std::memcpy(&stored, in.data() + in.size() - 4, 4);  // little-endian host
    if (XXH32(out.data(), out.size(), 0) != stored)
      return CorruptError("lz4 frame: content checksum mismatch");
  }
  return out;
}

Result<std::string> Lz4BlockStreamDecode(std::string_view in, size_t expected) {
  constexpr size_t kHeader = 21;
  constexpr uint32_t kSeed = 0x9747B28Cu;
  std::string out;
  out.reserve(expected);
  size_t pos = 0;
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, in.data() + at, 4);
    return v;  // little-endian host
  };
  for (int chunk = 0;; ++chunk) {
    const std::string where = "LZ4Block chunk " + std::to_string(chunk);
    if (in.size() - pos < kHeader) return CorruptError(where + ": truncated header");
    if (std::memcmp(in.data() + pos, "LZ4Block", 8) != 0)
      return CorruptError(where + ": bad magic");
    const uint8_t token = static_cast<uint8_t>(in[pos + 8]);
    const uint32_t clen = u32(pos + 9), olen = u32(pos + 13), check = u32(pos + 17);
    const uint8_t method = token & 0xF0, level = token & 0x0F;
    pos += kHeader;
    if (method != 0x10 && method != 0x20)
      return CorruptError(where + ": unknown method token " + std::to_string(token));
    if (olen > (uint32_t{1} << (level + 10)) && olen != 0)
      return CorruptError(where + ": length beyond its level");
    if (olen == 0) {  // end of stream
      if (clen != 0 || check != 0) return CorruptError(where + ": malformed end chunk");
      break;
    }
    if (in.size() - pos < clen) return CorruptError(where + ": truncated data");
    if (out.size() + olen > expected)
      return CorruptError(where + ": decodes beyond the expected " + std::to_string(expected) +
                          " bytes");
    const size_t at = out.size();
    out.resize(at + olen);
    if (method == 0x10) {
      if (clen != olen) return CorruptError(where + ": raw chunk with different lengths");
      std::memcpy(out.data() + at, in.data() + pos, olen);
    } else {
      int n = LZ4_decompress_safe(in.data() + pos, out.data() + at, static_cast<int>(clen),
                                  static_cast<int>(olen));
      if (n < 0 || static_cast<uint32_t>(n) != olen)
        return CorruptError(where + ": corrupt LZ4 data");
    }
    if ((XXH32(out.data() + at, olen, kSeed) & 0x0FFFFFFFu) != check)
      return CorruptError(where + ": checksum mismatch");
    pos += clen;
  }
  if (pos != in.size())
    return CorruptError("LZ4Block stream: " + std::to_string(in.size() - pos) + " trailing bytes");
  if (out.size() != expected) {
    return CorruptError("LZ4Block stream: decoded " + std::to_string(out.size()) +
                        " bytes, expected " + std::to_string(expected));
  }
  return out;
}

}  // namespace omicsfs::codec
