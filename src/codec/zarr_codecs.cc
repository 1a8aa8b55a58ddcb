#include "codec/zarr_codecs.h"

#include <nlohmann/json.hpp>

#include "codec/compression.h"

namespace omicsfs::codec {
namespace {

Result<ByteCodecKind> ByName(const std::string& id) {
  if (id == "blosc") return ByteCodecKind::kBlosc;
  if (id == "zlib") return ByteCodecKind::kZlib;
  if (id == "gzip") return ByteCodecKind::kGzip;
  if (id == "zstd") return ByteCodecKind::kZstd;
  if (id == "lz4") return ByteCodecKind::kLz4;
  return UnsupportedError("unsupported Zarr compressor '" + id + "'");
}

const char* Name(ByteCodecKind k) {
  switch (k) {
    case ByteCodecKind::kBlosc:
      return "blosc";
    case ByteCodecKind::kZlib:
      return "zlib";
    case ByteCodecKind::kGzip:
      return "gzip";
    case ByteCodecKind::kZstd:
      return "zstd";
    case ByteCodecKind::kLz4:
      return "lz4";
  }
  return "?";
}

}  // namespace

Result<std::string> ZarrCodecPipeline::DecodeBytes(std::string_view in, size_t max_out) const {
  if (bytes_codecs.empty()) return std::string(in);
  std::string cur;  // the last codec's output (the first one reads `in` itself: no copy)
  for (auto it = bytes_codecs.rbegin(); it != bytes_codecs.rend(); ++it) {
    const std::string_view from = it == bytes_codecs.rbegin() ? in : std::string_view(cur);
    Result<std::string> next = InternalError("no codec");
    switch (*it) {
      case ByteCodecKind::kBlosc:
        next = BloscDecode(from, max_out);
        break;
      case ByteCodecKind::kZlib:
        next = ZlibDecode(from, ZlibFormat::kZlib, max_out);
        break;
      case ByteCodecKind::kGzip:
        next = ZlibDecode(from, ZlibFormat::kGzip, max_out);
        break;
      case ByteCodecKind::kZstd:
        next = ZstdDecode(from, max_out);
        break;
      case ByteCodecKind::kLz4:
        next = Lz4PrefixedDecode(from, max_out);
        break;
    }
    if (!next.ok()) return std::move(next).status();
    cur = std::move(next).value();
  }
  return cur;
}

std::string ZarrCodecPipeline::Describe() const {
  std::string s = vlen_utf8 ? "vlen-utf8" : "raw";
  for (auto k : bytes_codecs) s += std::string("+") + Name(k);
  return s;
}

Result<ZarrCodecPipeline> ParseZarrV2Codecs(const nlohmann::json& compressor,
                                            const nlohmann::json& filters) {
  try {
    ZarrCodecPipeline p;
    if (!filters.is_null()) {
      if (!filters.is_array()) return CorruptError("Zarr filters must be a list or null");
      for (const auto& f : filters) {
        std::string id = f.value("id", "");
        if (id == "vlen-utf8") {
          p.vlen_utf8 = true;
        } else {
          return UnsupportedError("unsupported Zarr filter '" + id + "'");
        }
      }
    }
    if (!compressor.is_null()) {
      if (!compressor.is_object()) return CorruptError("Zarr compressor must be an object or null");
      ASSIGN_OR_RETURN(ByteCodecKind k, ByName(compressor.value("id", "")));
      p.bytes_codecs.push_back(k);
    }
    return p;
  } catch (const std::exception& e) {
    return CorruptError(std::string("Zarr codec metadata: ") + e.what());
  }
}

Result<ZarrCodecPipeline> ParseZarrV3Codecs(const nlohmann::json& codecs) {
  try {
    if (!codecs.is_array()) return CorruptError("Zarr v3 codecs must be a list");
    ZarrCodecPipeline p;
    bool array_to_bytes = false;
    for (const auto& c : codecs) {
      std::string name = c.value("name", "");
      const nlohmann::json config =
          c.contains("configuration") ? c["configuration"] : nlohmann::json::object();
      if (!array_to_bytes) {
        if (name == "bytes") {
          p.big_endian = config.value("endian", "little") == "big";
        } else if (name == "vlen-utf8") {
          p.vlen_utf8 = true;
        } else if (name == "sharding_indexed") {
          return UnsupportedError("Zarr v3 sharding is not supported yet");
        } else {
          return UnsupportedError("unsupported Zarr v3 codec '" + name + "'");
        }
        array_to_bytes = true;
        continue;
      }
      if (name == "crc32c") return UnsupportedError("unsupported Zarr v3 codec 'crc32c'");
      ASSIGN_OR_RETURN(ByteCodecKind k, ByName(name));
      p.bytes_codecs.push_back(k);
    }
    if (!array_to_bytes) return CorruptError("Zarr v3 codecs lack an array-to-bytes codec");
    return p;
  } catch (const std::exception& e) {
    return CorruptError(std::string("Zarr v3 codec metadata: ") + e.what());
  }
}

}  // namespace omicsfs::codec
