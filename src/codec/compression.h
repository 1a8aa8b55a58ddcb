// Byte codecs used by Zarr chunks: blosc, zlib/gzip, zstd, numcodecs-lz4. Pure bytes → bytes:
// each validates its header and knows (or caps) the decoded size before allocating, and returns
// Corrupt — never UB — on truncated or hostile input.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace omicsfs::codec {

// Upper bound any decoder will allocate when the caller has no exact expectation.
inline constexpr size_t kMaxDecodedBytes = size_t{1} << 31;

// c-blosc 1.x frame (any inner codec, any shuffle). Size from the validated header.
Result<std::string> BloscDecode(std::string_view in, size_t max_out = kMaxDecodedBytes);

// What a c-blosc 1.x frame's validated header says: its decoded size, and the size of the blocks
// it was cut into (each compressed, and shuffled, on its own; the last may be shorter).
struct BloscLayout {
  uint64_t nbytes = 0;
  uint64_t blocksize = 0;
  uint64_t typesize = 1;
  uint64_t Blocks() const { return blocksize == 0 ? 0 : (nbytes + blocksize - 1) / blocksize; }
};
Result<BloscLayout> BloscInspect(std::string_view in, size_t max_out = kMaxDecodedBytes);
// Decoded bytes [offset, offset + length) of a frame, decoding only the blocks they lie in
// (blosc_getitem): a few rows of a large chunk cost their blocks, not the chunk. Offset and
// length are multiples of the frame's typesize, inside its decoded size.
Result<std::string> BloscDecodeRange(std::string_view in, uint64_t offset, uint64_t length);

// A frame read by parts (a local chunk file: its header and block table, then the compressed
// bytes of the blocks a read needs, never the whole). BloscHeadLength says, from the first 16
// bytes, how many to read for BloscIndex; BloscIndex validates them against the frame's size and
// says where each block's compressed bytes lie; BloscDecodeBlock decodes one block from them.
struct BloscFrameIndex {
  BloscLayout layout;
  bool memcpyed = false;        // stored uncompressed: block b is bytes 16 + b·blocksize on
  std::vector<uint64_t> start;  // per block: its compressed bytes [start, end) in the frame
  std::vector<uint64_t> end;
  uint64_t BlockBytes(uint64_t b) const {  // decoded
    return std::min(layout.blocksize, layout.nbytes - b * layout.blocksize);
  }
};
Result<uint64_t> BloscHeadLength(std::string_view first16, uint64_t frame_size);
Result<BloscFrameIndex> BloscIndex(std::string_view head, uint64_t frame_size,
                                   size_t max_out = kMaxDecodedBytes);
// Block b from its compressed bytes (index.start[b] .. index.end[b] of the frame) and the head.
Result<std::string> BloscDecodeBlock(const BloscFrameIndex& index, std::string_view head,
                                     std::string_view block, uint64_t b);

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
