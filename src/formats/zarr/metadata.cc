#include "formats/zarr/metadata.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace omicsfs::formats::zarr {
namespace {

using json = nlohmann::json;

size_t NativeSize(DType t) {
  switch (t) {
    case DType::kBool:
    case DType::kInt8:
    case DType::kUInt8:
      return 1;
    case DType::kInt16:
    case DType::kUInt16:
      return 2;
    case DType::kInt32:
    case DType::kUInt32:
    case DType::kFloat32:
      return 4;
    case DType::kInt64:
    case DType::kUInt64:
    case DType::kFloat64:
      return 8;
    default:
      return 0;
  }
}

// numpy typestr: "<i4", "|b1", ">f8", "|S3", "<U1", "|O".
Status ParseTypestr(const std::string& s, ArrayMetadata* m) {
  if (s.size() < 2) return CorruptError("bad dtype '" + s + "'");
  const char order = s[0], kind = s[1];
  if (order != '<' && order != '>' && order != '|') return CorruptError("bad dtype '" + s + "'");
  m->big_endian = order == '>';
  if (kind == 'O') {
    m->dtype = DType::kVlenString;
    m->item_size = 0;
    return OkStatus();
  }
  size_t n = 0;
  for (size_t i = 2; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9' || n > 1000000) return CorruptError("bad dtype '" + s + "'");
    n = n * 10 + static_cast<size_t>(s[i] - '0');
  }
  switch (kind) {
    case 'b':
      if (n != 1) break;
      m->dtype = DType::kBool;
      m->item_size = 1;
      return OkStatus();
    case 'i':
      if (n == 1)
        m->dtype = DType::kInt8;
      else if (n == 2)
        m->dtype = DType::kInt16;
      else if (n == 4)
        m->dtype = DType::kInt32;
      else if (n == 8)
        m->dtype = DType::kInt64;
      else
        break;
      m->item_size = n;
      return OkStatus();
    case 'u':
      if (n == 1)
        m->dtype = DType::kUInt8;
      else if (n == 2)
        m->dtype = DType::kUInt16;
      else if (n == 4)
        m->dtype = DType::kUInt32;
      else if (n == 8)
        m->dtype = DType::kUInt64;
      else
        break;
      m->item_size = n;
      return OkStatus();
    case 'f':
      if (n == 4)
        m->dtype = DType::kFloat32;
      else if (n == 8)
        m->dtype = DType::kFloat64;
      else
        break;
      m->item_size = n;
      return OkStatus();
    case 'S':
      if (n == 0) break;
      m->dtype = DType::kFixedBytes;
      m->item_size = n;
      return OkStatus();
    case 'U':
      if (n == 0) break;
      m->dtype = DType::kFixedUnicode;
      m->item_size = 4 * n;
      return OkStatus();
    default:
      break;
  }
  return UnsupportedError("unsupported dtype '" + s + "'");
}

Status ParseV3Type(const std::string& s, ArrayMetadata* m) {
  static const std::pair<const char*, DType> kTypes[] = {
      {"bool", DType::kBool},       {"int8", DType::kInt8},       {"int16", DType::kInt16},
      {"int32", DType::kInt32},     {"int64", DType::kInt64},     {"uint8", DType::kUInt8},
      {"uint16", DType::kUInt16},   {"uint32", DType::kUInt32},   {"uint64", DType::kUInt64},
      {"float32", DType::kFloat32}, {"float64", DType::kFloat64}, {"string", DType::kVlenString}};
  for (const auto& [name, t] : kTypes) {
    if (s == name) {
      m->dtype = t;
      m->item_size = NativeSize(t);
      return OkStatus();
    }
  }
  return UnsupportedError("unsupported Zarr v3 data_type '" + s + "'");
}

template <typename T>
void Put(std::string* out, T v) {
  out->assign(reinterpret_cast<const char*>(&v), sizeof(T));
}

Status ParseFill(const json& f, ArrayMetadata* m) {
  if (IsString(m->dtype)) {
    m->fill_string = f.is_string() ? f.get<std::string>() : "";
    return OkStatus();
  }
  const size_t n = NativeSize(m->dtype);
  if (f.is_null()) {  // zarr-python 3 reads a null fill as zero
    m->fill.assign(n, '\0');
    return OkStatus();
  }
  double d = 0;
  bool is_float = m->dtype == DType::kFloat32 || m->dtype == DType::kFloat64;
  if (f.is_boolean()) {
    d = f.get<bool>() ? 1 : 0;
  } else if (f.is_number_integer() && !is_float) {
    int64_t v = f.is_number_unsigned() ? static_cast<int64_t>(f.get<uint64_t>()) : f.get<int64_t>();
    m->fill.assign(reinterpret_cast<const char*>(&v), n);  // little-endian truncation
    return OkStatus();
  } else if (f.is_number()) {
    d = f.get<double>();
    if (!is_float && !(d >= -9.2e18 && d <= 9.2e18))
      return CorruptError("fill_value " + f.dump() + " out of range");
  } else if (f.is_string()) {
    std::string s = f.get<std::string>();
    if (s == "NaN")
      d = std::numeric_limits<double>::quiet_NaN();
    else if (s == "Infinity")
      d = std::numeric_limits<double>::infinity();
    else if (s == "-Infinity")
      d = -std::numeric_limits<double>::infinity();
    else if (s.rfind("0x", 0) == 0 && is_float) {
      uint64_t bits = std::stoull(s.substr(2), nullptr, 16);
      m->fill.assign(reinterpret_cast<const char*>(&bits), n);
      return OkStatus();
    } else {
      return CorruptError("bad fill_value '" + s + "'");
    }
  } else {
    return CorruptError("bad fill_value " + f.dump());
  }
  switch (m->dtype) {
    case DType::kFloat32:
      Put(&m->fill, std::isfinite(d) && std::fabs(d) > 3.4028234663852886e38
                        ? (d > 0 ? HUGE_VALF : -HUGE_VALF)
                        : static_cast<float>(d));
      break;
    case DType::kFloat64:
      Put(&m->fill, d);
      break;
    default: {
      int64_t v = static_cast<int64_t>(d);
      m->fill.assign(reinterpret_cast<const char*>(&v), n);
    }
  }
  return OkStatus();
}

// A JSON list of non-negative integers (nlohmann's get<> would convert floats, with UB when out
// of range).
Result<std::vector<uint64_t>> UIntList(const json& j, const char* what) {
  if (!j.is_array()) return CorruptError(std::string(what) + " must be a list");
  std::vector<uint64_t> out;
  for (const auto& v : j) {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
      return CorruptError(std::string(what) + " must hold non-negative integers");
    }
    out.push_back(v.get<uint64_t>());
  }
  return out;
}

Status CheckShape(ArrayMetadata* m) {
  if (m->shape.size() != m->chunks.size()) return CorruptError("shape and chunks differ in rank");
  if (m->shape.empty()) return UnsupportedError("0-dimensional arrays are not supported");
  uint64_t elems = 1;
  for (size_t d = 0; d < m->shape.size(); ++d) {
    if (m->chunks[d] == 0) return CorruptError("chunk size 0");
    if (m->chunks[d] > (uint64_t{1} << 40) || elems > (uint64_t{1} << 40) / m->chunks[d]) {
      return CorruptError("chunks too large");
    }
    elems *= m->chunks[d];
  }
  if (elems > (uint64_t{1} << 31) || elems * std::max<uint64_t>(m->item_size, 1) > kMaxChunkBytes) {
    return UnsupportedError("a chunk of " + std::to_string(elems) + " elements exceeds the " +
                            std::to_string(kMaxChunkBytes >> 20) + " MiB chunk limit");
  }
  m->native_size = NativeSize(m->dtype);
  return OkStatus();
}

}  // namespace

bool IsString(DType t) {
  return t == DType::kFixedBytes || t == DType::kFixedUnicode || t == DType::kVlenString;
}
bool IsSignedInt(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64;
}
bool IsUnsignedInt(DType t) {
  return t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32 || t == DType::kUInt64;
}

std::string_view DTypeName(DType t) {
  switch (t) {
    case DType::kBool:
      return "bool";
    case DType::kInt8:
      return "int8";
    case DType::kInt16:
      return "int16";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kUInt8:
      return "uint8";
    case DType::kUInt16:
      return "uint16";
    case DType::kUInt32:
      return "uint32";
    case DType::kUInt64:
      return "uint64";
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kFixedBytes:
      return "fixed bytes";
    case DType::kFixedUnicode:
      return "fixed unicode";
    case DType::kVlenString:
      return "string";
  }
  return "?";
}

uint64_t ArrayMetadata::ChunkElements() const {
  uint64_t n = 1;
  for (uint64_t c : chunks) n *= c;
  return n;
}

std::string ArrayMetadata::ChunkKey(const std::vector<uint64_t>& grid) const {
  std::string key = v3_c_prefix ? "c" : "";
  for (size_t d = 0; d < grid.size(); ++d) {
    if (d > 0 || v3_c_prefix) key.push_back(separator);
    key += std::to_string(grid[d]);
  }
  return key;
}

Result<ArrayMetadata> ParseV2Metadata(const std::string& zarray, const std::string& zattrs) {
  try {
    json j = json::parse(zarray);
    ArrayMetadata m;
    m.zarr_format = 2;
    if (j.contains("zarr_format") &&
        !(j["zarr_format"].is_number_integer() && j["zarr_format"].get<int64_t>() == 2)) {
      return CorruptError(".zarray: zarr_format is not 2");
    }
    ASSIGN_OR_RETURN(m.shape, UIntList(j.at("shape"), "shape"));
    ASSIGN_OR_RETURN(m.chunks, UIntList(j.at("chunks"), "chunks"));
    if (!j.at("dtype").is_string()) return UnsupportedError("structured dtypes are not supported");
    RETURN_IF_ERROR(ParseTypestr(j.at("dtype").get<std::string>(), &m));
    if (j.value("order", "C") != "C")
      return UnsupportedError("Fortran-order (order \"F\") arrays are not supported");
    std::string sep = j.value("dimension_separator", ".");
    if (sep != "." && sep != "/") return CorruptError("bad dimension_separator '" + sep + "'");
    m.separator = sep[0];
    ASSIGN_OR_RETURN(m.codecs,
                     codec::ParseZarrV2Codecs(j.contains("compressor") ? j["compressor"] : json(),
                                              j.contains("filters") ? j["filters"] : json()));
    if (m.dtype == DType::kVlenString && !m.codecs.vlen_utf8)
      return UnsupportedError("object dtype without a vlen-utf8 filter");
    if (m.codecs.vlen_utf8 && m.dtype != DType::kVlenString)
      return CorruptError("vlen-utf8 filter on a non-object dtype");
    RETURN_IF_ERROR(CheckShape(&m));
    RETURN_IF_ERROR(ParseFill(j.contains("fill_value") ? j["fill_value"] : json(), &m));
    if (!zattrs.empty()) {
      m.attributes = json::parse(zattrs);
      if (m.attributes.contains("_ARRAY_DIMENSIONS")) {
        m.dimension_names = m.attributes["_ARRAY_DIMENSIONS"].get<std::vector<std::string>>();
      }
    }
    return m;
  } catch (const std::exception& e) {
    return CorruptError(std::string(".zarray/.zattrs: ") + e.what());
  }
}

Result<ArrayMetadata> ParseV3Metadata(const std::string& zarr_json) {
  try {
    json j = json::parse(zarr_json);
    ArrayMetadata m;
    m.zarr_format = 3;
    if (j.value("node_type", "") != "array") return CorruptError("zarr.json is not an array");
    ASSIGN_OR_RETURN(m.shape, UIntList(j.at("shape"), "shape"));
    const json& grid = j.at("chunk_grid");
    if (grid.value("name", "") != "regular")
      return UnsupportedError("chunk grid '" + grid.value("name", "") + "'");
    ASSIGN_OR_RETURN(m.chunks, UIntList(grid.at("configuration").at("chunk_shape"), "chunk_shape"));
    if (!j.at("data_type").is_string())
      return UnsupportedError("unsupported data_type " + j.at("data_type").dump());
    RETURN_IF_ERROR(ParseV3Type(j.at("data_type").get<std::string>(), &m));
    const json& keys = j.at("chunk_key_encoding");
    std::string enc = keys.value("name", "default");
    std::string sep = keys.contains("configuration")
                          ? keys["configuration"].value("separator", enc == "v2" ? "." : "/")
                          : (enc == "v2" ? "." : "/");
    if (sep != "." && sep != "/") return CorruptError("bad chunk key separator '" + sep + "'");
    if (enc != "default" && enc != "v2")
      return UnsupportedError("chunk_key_encoding '" + enc + "'");
    m.separator = sep[0];
    m.v3_c_prefix = enc == "default";
    ASSIGN_OR_RETURN(m.codecs, codec::ParseZarrV3Codecs(j.at("codecs")));
    m.big_endian = m.codecs.big_endian;
    if ((m.dtype == DType::kVlenString) != m.codecs.vlen_utf8)
      return CorruptError("string arrays need the vlen-utf8 codec");
    RETURN_IF_ERROR(CheckShape(&m));
    RETURN_IF_ERROR(ParseFill(j.contains("fill_value") ? j["fill_value"] : json(), &m));
    if (j.contains("attributes")) m.attributes = j["attributes"];
    if (j.contains("dimension_names") && j["dimension_names"].is_array()) {
      for (const auto& d : j["dimension_names"])
        m.dimension_names.push_back(d.is_string() ? d.get<std::string>() : "");
    }
    return m;
  } catch (const std::exception& e) {
    return CorruptError(std::string("zarr.json: ") + e.what());
  }
}

}  // namespace omicsfs::formats::zarr
