// Zarr array metadata (v2 `.zarray` + `.zattrs`, v3 `zarr.json`), parsed and validated once into
// an immutable struct. Nothing VCF-specific here.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "codec/zarr_codecs.h"
#include "util/status.h"

namespace omicsfs::formats::zarr {

// Largest decoded chunk accepted (numeric: elements × item size; strings: decoded vlen bytes).
inline constexpr uint64_t kMaxChunkBytes = uint64_t{512} << 20;

enum class DType {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat32,
  kFloat64,
  kFixedBytes,    // |S<n>: n bytes, trailing NULs stripped
  kFixedUnicode,  // <U<n>: n UTF-32 code units, converted to UTF-8
  kVlenString,    // |O with vlen-utf8 (v2) or "string" (v3)
};

bool IsString(DType t);
bool IsSignedInt(DType t);
bool IsUnsignedInt(DType t);
std::string_view DTypeName(DType t);

struct ArrayMetadata {
  int zarr_format = 2;
  std::vector<uint64_t> shape;
  std::vector<uint64_t> chunks;
  DType dtype = DType::kInt8;
  size_t item_size = 1;    // bytes per element in a decoded chunk (0 for vlen strings)
  size_t native_size = 1;  // bytes per element handed to callers (strings: 0)
  bool big_endian = false;
  std::string fill;         // one element's fill, native layout (numeric types)
  std::string fill_string;  // string types
  codec::ZarrCodecPipeline codecs;
  char separator = '.';
  bool v3_c_prefix = false;  // v3 default chunk keys: "c/0/1"
  std::vector<std::string> dimension_names;
  nlohmann::json attributes = nlohmann::json::object();

  uint64_t ChunkElements() const;
  uint64_t GridSize(size_t dim) const { return (shape[dim] + chunks[dim] - 1) / chunks[dim]; }
  std::string ChunkKey(const std::vector<uint64_t>& grid) const;
};

Result<ArrayMetadata> ParseV2Metadata(const std::string& zarray, const std::string& zattrs);
Result<ArrayMetadata> ParseV3Metadata(const std::string& zarr_json);

}  // namespace omicsfs::formats::zarr
