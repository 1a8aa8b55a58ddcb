// BGZF (SAM specification §4.1) layout arithmetic in one place, as htslib keeps it in bgzf.h:
// block constants, the header and trailer of a block whose payload is one deflate *stored* block
// (what `bgzip -l 0` writes), sizes and virtual offsets of such a file, the 28-byte EOF block,
// CRC32, and real per-block compression (libdeflate) for small derived files such as indexes.
// Pure functions of their arguments: no I/O.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace omicsfs::codec::bgzf {

// Payload bytes per block: htslib's BGZF_BLOCK_SIZE (0xff00), so that a block's deflate output
// always fits the 64 KiB a block may hold.
inline constexpr uint64_t kBlockPayload = 0xff00;                   // 65 280
inline constexpr uint64_t kGzipHeaderSize = 18;                     // gzip header + BC extra field
inline constexpr uint64_t kStoredHeaderSize = kGzipHeaderSize + 5;  // + stored-block header
inline constexpr uint64_t kTrailerSize = 8;                         // CRC32 + ISIZE
inline constexpr uint64_t kStoredOverhead = kStoredHeaderSize + kTrailerSize;  // 31
inline constexpr uint64_t kFullBlockSize = kBlockPayload + kStoredOverhead;    // 65 311
inline constexpr size_t kEofSize = 28;
inline constexpr std::array<uint8_t, kEofSize> kEofBlock = {
    0x1f, 0x8b, 0x08, 0x04, 0,    0, 0, 0, 0, 0xff, 0x06, 0, 0x42, 0x43,
    0x02, 0,    0x1b, 0,    0x03, 0, 0, 0, 0, 0,    0,    0, 0,    0};

// Blocks holding `text` bytes in stored layout: ceil(text / 65280).
inline constexpr uint64_t StoredBlocks(uint64_t text) {
  return (text + kBlockPayload - 1) / kBlockPayload;
}
// The whole stored-layout file: text + 31 per block + the EOF block.
inline constexpr uint64_t StoredFileSize(uint64_t text) {
  return text + kStoredOverhead * StoredBlocks(text) + kEofSize;
}
// Where the EOF block starts: after the data blocks (the last one may be short).
inline constexpr uint64_t StoredDataEnd(uint64_t text) {
  return text + kStoredOverhead * StoredBlocks(text);
}
// Where block b starts in a stored-layout file.
inline constexpr uint64_t StoredBlockStart(uint64_t b) { return b * kFullBlockSize; }
// Payload length of block b of `text` bytes.
inline constexpr uint64_t StoredPayload(uint64_t b, uint64_t text) {
  const uint64_t begin = b * kBlockPayload;
  return text - begin < kBlockPayload ? text - begin : kBlockPayload;
}
// The BGZF virtual offset (block address << 16 | offset in block) of uncompressed offset `pos`,
// as htslib's bgzf_tell reports it while reading: at a block's end it is already the next block.
inline constexpr uint64_t StoredVirtualOffset(uint64_t pos) {
  return (StoredBlockStart(pos / kBlockPayload) << 16) | (pos % kBlockPayload);
}

// A file of stored blocks whose first block holds at most `first` (1 to 65 280) bytes of text and
// every later block 65 280: `bgzip -l 0` writes first = 65 280 (the functions above). Every
// offset stays arithmetic, so a twin of this layout is sized as soon as its text is.
struct StoredLayout {
  uint64_t first = kBlockPayload;

  constexpr uint64_t Blocks(uint64_t text) const {
    return text <= first ? (text > 0 ? 1 : 0) : 1 + StoredBlocks(text - first);
  }
  // Where block b's text starts, and the block holding text offset `pos`.
  constexpr uint64_t BlockText(uint64_t b) const {
    return b == 0 ? 0 : first + (b - 1) * kBlockPayload;
  }
  constexpr uint64_t BlockOfText(uint64_t pos) const {
    return pos < first ? 0 : 1 + (pos - first) / kBlockPayload;
  }
  // Where block b starts in the file, and the block holding file offset `at` (of the data blocks).
  constexpr uint64_t BlockStart(uint64_t b) const {
    return b == 0 ? 0 : first + kStoredOverhead + (b - 1) * kFullBlockSize;
  }
  constexpr uint64_t BlockAt(uint64_t at) const {
    return at < first + kStoredOverhead ? 0 : 1 + (at - first - kStoredOverhead) / kFullBlockSize;
  }
  constexpr uint64_t Payload(uint64_t b, uint64_t text) const {
    const uint64_t begin = BlockText(b), most = b == 0 ? first : kBlockPayload;
    return text - begin < most ? text - begin : most;
  }
  constexpr uint64_t DataEnd(uint64_t text) const { return text + kStoredOverhead * Blocks(text); }
  constexpr uint64_t FileSize(uint64_t text) const { return DataEnd(text) + kEofSize; }
  // As StoredVirtualOffset: at a block's end, already the next block.
  constexpr uint64_t VirtualOffset(uint64_t pos) const {
    const uint64_t b = BlockOfText(pos);
    return (BlockStart(b) << 16) | (pos - BlockText(b));
  }
};
inline constexpr StoredLayout kBgzipLayout{};
// bedtools 2.30 reads a BGZF file through a probe for BAM that sees only the first 32 KiB of the
// file again (InputStreamMgr::detectBamOrBgzip pushes back 32 768 bytes, BAM_SCAN_BUFFER_SIZE,
// while the probe's htslib reader takes a whole block): when the first block is longer, the rest
// of the stream is misaligned and bedtools reads nothing from BED text, exiting 0 (measured: first
// blocks of 32 768 bytes read, of 32 769 not; stored or deflated alike; `bgzip -l 0` of VCF text
// reads fine). A first block of half the payload (32 671 bytes on disk) keeps BED-like twins
// readable by bedtools, whatever the text.
inline constexpr StoredLayout kBedtoolsLayout{kBlockPayload / 2};

// The 23 bytes before a stored block's payload of `payload` (≤ 65 280) bytes.
std::array<uint8_t, kStoredHeaderSize> StoredHeader(uint32_t payload);
// The 8 bytes after a block's payload.
std::array<uint8_t, kTrailerSize> Trailer(uint32_t crc, uint32_t payload);

// CRC-32 (gzip's), continued from `crc` (0 to start).
uint32_t Crc32(uint32_t crc, const void* data, size_t size);

// `data` as BGZF with real deflate at `level` (libdeflate: deterministic at a fixed level), the
// EOF block included. For small derived files (indexes); each block holds ≤ 65 280 bytes.
Result<std::string> Compress(std::string_view data, int level = 6);

}  // namespace omicsfs::codec::bgzf
