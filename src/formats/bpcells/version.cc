#include "formats/bpcells/version.h"

#include "io/space_array_store.h"

namespace omicsfs::formats::bpcells {

std::optional<StoreVersion> ParseVersion(std::string_view v) {
  StoreVersion out;
  if (v.starts_with("packed-")) {
    out.packed = true;
    v.remove_prefix(7);
  } else if (v.starts_with("unpacked-")) {
    v.remove_prefix(9);
  } else {
    return std::nullopt;
  }
  if (v.ends_with("-v1")) {
    out.format = 1;
  } else if (v.ends_with("-v2")) {
    out.format = 2;
  } else {
    return std::nullopt;
  }
  v.remove_suffix(3);
  if (v == "fragments") {
    out.kind = StoreKind::kFragments;
    return out;
  }
  if (v == "uint-matrix") {
    out.value_type = ValueType::kUInt32;
  } else if (v == "float-matrix") {
    out.value_type = ValueType::kFloat32;
  } else if (v == "double-matrix") {
    out.value_type = ValueType::kFloat64;
  } else {
    return std::nullopt;
  }
  return out;
}

bool LooksLikeVersion(std::string_view v) {
  if (!v.starts_with("packed-") && !v.starts_with("unpacked-")) return false;
  size_t dash = v.rfind("-v");
  if (dash == std::string_view::npos || dash + 2 >= v.size()) return false;
  for (char c : v.substr(dash + 2)) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

Result<uint64_t> CheckArray(const io::ArrayStore& s, const std::string& name, io::ElemType type,
                            uint64_t length) {
  ASSIGN_OR_RETURN(auto info, s.Info(name));
  if (!info) return CorruptError(s.Describe() + ": array '" + name + "' is missing");
  if (info->type != type || (length != UINT64_MAX && info->length != length)) {
    // GCC 12 at -O3 warns that "[" + std::string&& (an insert at 0) may memcpy overlapping ranges
    // of 2^63 bytes: a false positive of its -Wrestrict through std::string (GCC bug 105651),
    // silenced here only.
#pragma GCC diagnostic push
#ifndef __clang__  // a GCC warning; clang (the fuzz build) has none of that name
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
    const std::string want = length == UINT64_MAX ? "" : "[" + std::to_string(length) + "]";
#pragma GCC diagnostic pop
    return CorruptError(s.Describe() + ": array '" + name + "' is " +
                        std::string(io::ElemTypeName(info->type)) + "[" +
                        std::to_string(info->length) + "], expected " +
                        std::string(io::ElemTypeName(type)) + want);
  }
  return info->length;
}

const std::vector<std::string>& ArrayNames() {
  static const std::vector<std::string> names = {
      "version",
      "shape",
      "storage_order",
      "idxptr",
      "row_names",
      "col_names",
      "index",
      "index_data",
      "index_idx",
      "index_idx_offsets",
      "index_starts",
      "val",
      "val_data",
      "val_idx",
      "val_idx_offsets",
      "chr_names",
      "cell_names",
      "chr_ptr",
      "end_max",
      "cell",
      "cell_data",
      "cell_idx",
      "cell_idx_offsets",
      "start",
      "start_data",
      "start_idx",
      "start_idx_offsets",
      "start_starts",
      "end",
      "end_data",
      "end_idx",
      "end_idx_offsets",
  };
  return names;
}

Result<std::string> ReadVersion(const io::ByteSpace& space) {
  return io::ReadFirstLine(space, "version");
}

}  // namespace omicsfs::formats::bpcells
