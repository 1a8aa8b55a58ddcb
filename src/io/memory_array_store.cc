#include "io/memory_array_store.h"

#include <cstring>

namespace omicsfs::io {

std::string_view ElemTypeName(ElemType t) {
  switch (t) {
    case ElemType::kUInt32:
      return "uint32";
    case ElemType::kUInt64:
      return "uint64";
    case ElemType::kFloat32:
      return "float32";
    case ElemType::kFloat64:
      return "float64";
    case ElemType::kString:
      return "string";
  }
  return "?";
}

size_t ElemSize(ElemType t) {
  switch (t) {
    case ElemType::kUInt32:
    case ElemType::kFloat32:
      return 4;
    case ElemType::kUInt64:
    case ElemType::kFloat64:
      return 8;
    case ElemType::kString:
      return 0;
  }
  return 0;
}

Status CheckRange(const std::string& where, const std::string& name, const ArrayInfo& info,
                  ElemType type, uint64_t first, uint64_t count) {
  if (info.type != type) {
    return CorruptError(where + ": array '" + name + "' has type " +
                        std::string(ElemTypeName(info.type)) + ", expected " +
                        std::string(ElemTypeName(type)));
  }
  if (first > info.length || count > info.length - first) {
    return CorruptError(where + ": array '" + name + "': range [" + std::to_string(first) + ", " +
                        std::to_string(first + count) + ") beyond its length " +
                        std::to_string(info.length));
  }
  return OkStatus();
}

Result<std::vector<uint64_t>> ArrayStore::ReadAllAsU64(const std::string& name) const {
  ASSIGN_OR_RETURN(std::optional<ArrayInfo> info, Info(name));
  if (!info) return NotFoundError(Describe() + ": array '" + name + "' is missing");
  if (info->type == ElemType::kUInt64) return ReadAll<uint64_t>(name);
  if (info->type != ElemType::kUInt32) {
    return CorruptError(Describe() + ": array '" + name + "' has type " +
                        std::string(ElemTypeName(info->type)) + ", expected an unsigned integer");
  }
  ASSIGN_OR_RETURN(std::vector<uint32_t> narrow, ReadAll<uint32_t>(name));
  return std::vector<uint64_t>(narrow.begin(), narrow.end());
}

Result<std::string> MemoryArrayStore::Version() const {
  if (!version_) return NotFoundError(name_ + ": no version");
  return *version_;
}

Result<std::optional<ArrayInfo>> MemoryArrayStore::Info(const std::string& name) const {
  auto it = arrays_.find(name);
  if (it == arrays_.end()) return std::optional<ArrayInfo>();
  return std::optional<ArrayInfo>(ArrayInfo{it->second.type, it->second.length});
}

Status MemoryArrayStore::Read(const std::string& name, ElemType type, uint64_t first,
                              uint64_t count, void* out) const {
  auto it = arrays_.find(name);
  if (it == arrays_.end()) return NotFoundError(name_ + ": array '" + name + "' is missing");
  RETURN_IF_ERROR(
      CheckRange(name_, name, {it->second.type, it->second.length}, type, first, count));
  size_t es = ElemSize(type);
  if (count) std::memcpy(out, it->second.bytes.data() + first * es, count * es);
  return OkStatus();
}

Result<std::vector<std::string>> MemoryArrayStore::ReadStrings(const std::string& name) const {
  auto it = arrays_.find(name);
  if (it == arrays_.end()) return NotFoundError(name_ + ": array '" + name + "' is missing");
  if (it->second.type != ElemType::kString) {
    return CorruptError(name_ + ": array '" + name + "' is not a string array");
  }
  return it->second.strings;
}

}  // namespace omicsfs::io
