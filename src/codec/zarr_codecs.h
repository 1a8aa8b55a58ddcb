// The one registry of Zarr codec ids (numcodecs JSON for v2, codec lists for v3) → a decode
// pipeline of the byte codecs above. Unknown ids and filters are refused with their name.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace omicsfs::codec {

enum class ByteCodecKind { kBlosc, kZlib, kGzip, kZstd, kLz4 };

struct ZarrCodecPipeline {
  std::vector<ByteCodecKind> bytes_codecs;  // in encoding order; decoding runs them backwards
  bool vlen_utf8 = false;                   // variable-length strings (numcodecs VLenUTF8)
  bool big_endian = false;                  // v3 "bytes" codec endian (v2 takes it from dtype)

  // Undoes the byte codecs; `max_out` caps every intermediate size.
  Result<std::string> DecodeBytes(std::string_view in, size_t max_out) const;
  // True when the chunk is one blosc frame of fixed-size items: a byte range of it can be
  // decoded alone (BloscDecodeRange).
  bool DecodesRanges() const {
    return !vlen_utf8 && bytes_codecs.size() == 1 && bytes_codecs[0] == ByteCodecKind::kBlosc;
  }
  std::string Describe() const;
};

// Zarr v2: `compressor` (object or null) and `filters` (null or a list; only vlen-utf8 known).
Result<ZarrCodecPipeline> ParseZarrV2Codecs(const nlohmann::json& compressor,
                                            const nlohmann::json& filters);
// Zarr v3: the `codecs` list (bytes | vlen-utf8, then blosc/gzip/zstd/crc32c…).
Result<ZarrCodecPipeline> ParseZarrV3Codecs(const nlohmann::json& codecs);

}  // namespace omicsfs::codec
