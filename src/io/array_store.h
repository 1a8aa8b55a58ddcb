// Storage layer: named typed 1-D arrays + string arrays + a version string. Knows no format.
// Reads are positional and stateless; every implementation is safe to call from many threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace omicsfs::io {

enum class ElemType { kUInt32, kUInt64, kFloat32, kFloat64, kString };

std::string_view ElemTypeName(ElemType t);
size_t ElemSize(ElemType t);  // 0 for strings

template <typename T>
constexpr ElemType ElemTypeOf();
template <>
constexpr ElemType ElemTypeOf<uint32_t>() {
  return ElemType::kUInt32;
}
template <>
constexpr ElemType ElemTypeOf<uint64_t>() {
  return ElemType::kUInt64;
}
template <>
constexpr ElemType ElemTypeOf<float>() {
  return ElemType::kFloat32;
}
template <>
constexpr ElemType ElemTypeOf<double>() {
  return ElemType::kFloat64;
}

struct ArrayInfo {
  ElemType type;
  uint64_t length;
};

class ArrayStore {
 public:
  virtual ~ArrayStore() = default;

  // Human-readable location for error messages, e.g. "/data/x.h5:/group" or "/data/counts".
  virtual const std::string& Describe() const = 0;

  // The version string (directory: `version` file without its newline; HDF5: group attribute).
  virtual Result<std::string> Version() const = 0;

  // Absent arrays are a value (nullopt), not an error.
  virtual Result<std::optional<ArrayInfo>> Info(const std::string& name) const = 0;

  // Reads elements [first, first+count) of numeric array `name` into `out`. The element type must
  // equal `type` exactly; the range is checked against the length.
  virtual Status Read(const std::string& name, ElemType type, uint64_t first, uint64_t count,
                      void* out) const = 0;

  // Reads a whole string array.
  virtual Result<std::vector<std::string>> ReadStrings(const std::string& name) const = 0;

  // Typed convenience wrappers.
  template <typename T>
  Status ReadRange(const std::string& name, uint64_t first, uint64_t count, T* out) const {
    return Read(name, ElemTypeOf<T>(), first, count, out);
  }
  template <typename T>
  Result<std::vector<T>> ReadAll(const std::string& name) const;

  // Reads an unsigned integer array of either width (u32 or u64) widened to u64.
  Result<std::vector<uint64_t>> ReadAllAsU64(const std::string& name) const;
};

template <typename T>
Result<std::vector<T>> ArrayStore::ReadAll(const std::string& name) const {
  ASSIGN_OR_RETURN(std::optional<ArrayInfo> info, Info(name));
  if (!info) return NotFoundError(Describe() + ": array '" + name + "' is missing");
  std::vector<T> out;
  if (info->length > (uint64_t{1} << 34) / sizeof(T)) {
    return CorruptError(Describe() + ": array '" + name + "' is implausibly long (" +
                        std::to_string(info->length) + " elements)");
  }
  out.resize(info->length);
  RETURN_IF_ERROR(Read(name, ElemTypeOf<T>(), 0, info->length, out.data()));
  return out;
}

// Shared range check used by every backend.
Status CheckRange(const std::string& where, const std::string& name, const ArrayInfo& info,
                  ElemType type, uint64_t first, uint64_t count);

}  // namespace omicsfs::io
