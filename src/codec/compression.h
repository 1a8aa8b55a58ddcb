// Byte codecs used by Zarr chunks: blosc, zlib/gzip, zstd, numcodecs-lz4. Pure bytes → bytes:
// each validates its header and knows (or caps) the decoded size before allocating, and returns
// Corrupt — never UB — on truncated or hostile input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace omicsfs::codec {

// Upper bound any decoder will allocate when the caller has no exact expectation.
inline constexpr size_t kMaxDecodedBytes = size_t{1} << 31;

// c-blosc 1.x frame (any inner codec, any shuffle). Size from the validated header.
Result<std::string> BloscDecode(std::string_view in, size_t max_out = kMaxDecodedBytes);

enum class ZlibFormat { kZlib, kGzip };
// zlib stream or gzip member(s); output capped at `max_out`.
Result<std::string> ZlibDecode(std::string_view in, ZlibFormat format,
                               size_t max_out = kMaxDecodedBytes);

// Raw DEFLATE (RFC 1951, no header or trailer: what zip members hold) decoded to exactly `size`
// bytes, which the caller knows (a zip central directory records it): Corrupt when the stream is
// damaged, or ends before or after `size` bytes. The size comes first so no guess is allocated.
Result<std::string> InflateRaw(std::string_view in, size_t size);

// One or more zstd frames; frame content sizes are checked against `max_out`.
Result<std::string> ZstdDecode(std::string_view in, size_t max_out = kMaxDecodedBytes);

// numcodecs LZ4: 4-byte little-endian decoded size, then one raw LZ4 block.
Result<std::string> Lz4PrefixedDecode(std::string_view in, size_t max_out = kMaxDecodedBytes);

}  // namespace omicsfs::codec
