#include "io/space_array_store.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace omicsfs::io {
namespace {

constexpr size_t kMagicSize = 8;

std::optional<ElemType> ParseMagic(const char* m) {
  if (std::memcmp(m, "UINT32v1", 8) == 0) return ElemType::kUInt32;
  if (std::memcmp(m, "UINT64v1", 8) == 0) return ElemType::kUInt64;
  if (std::memcmp(m, "FLOATSv1", 8) == 0) return ElemType::kFloat32;
  if (std::memcmp(m, "DOUBLEv1", 8) == 0) return ElemType::kFloat64;
  return std::nullopt;
}

}  // namespace

Result<std::string> ReadFirstLine(const ByteSpace& space, const std::string& key) {
  ASSIGN_OR_RETURN(std::optional<std::string> text, space.Get(key, 4096));
  if (!text) return NotFoundError(space.Where(key) + ": no " + key + " file");
  size_t nl = text->find('\n');
  if (nl != std::string::npos) text->resize(nl);
  if (!text->empty() && text->back() == '\r') text->pop_back();
  return std::move(*text);
}

Result<std::unique_ptr<SpaceArrayStore>> SpaceArrayStore::Open(
    std::shared_ptr<const ByteSpace> space) {
  std::unique_ptr<SpaceArrayStore> store(new SpaceArrayStore(std::move(space)));
  const ByteSpace& sp = *store->space_;
  ASSIGN_OR_RETURN(std::vector<ListEntry> listed, sp.List(""));
  for (const ListEntry& l : listed) {
    if (l.kind != EntryKind::kFile) continue;
    ASSIGN_OR_RETURN(std::shared_ptr<const ByteSource> source, sp.Open(l.name));
    if (source == nullptr) continue;  // gone since the listing
    Entry entry;
    if (source->Size() >= kMagicSize) {
      char magic[kMagicSize];
      RETURN_IF_ERROR(source->ReadExact(0, magic, kMagicSize));
      if (auto t = ParseMagic(magic)) {
        entry.numeric = true;
        entry.type = *t;
      } else if (std::any_of(magic, magic + kMagicSize, [](char c) {
                   const auto u = static_cast<unsigned char>(c);
                   return u < 0x09 || (u > 0x0d && u < 0x20) || u == 0x7f;
                 })) {
        static constexpr char kHex[] = "0123456789abcdef";
        for (char c : magic) {
          entry.bad_header += kHex[static_cast<unsigned char>(c) >> 4];
          entry.bad_header += kHex[static_cast<unsigned char>(c) & 15];
        }
      }
    }
    entry.source = std::move(source);
    store->entries_[l.name] = std::move(entry);
  }
  return store;
}

Result<std::string> SpaceArrayStore::Version() const { return ReadFirstLine(*space_, "version"); }

Result<std::optional<ArrayInfo>> SpaceArrayStore::Info(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) return std::optional<ArrayInfo>();
  const Entry& e = it->second;
  if (!e.bad_header.empty()) {
    return CorruptError(e.source->Describe() + ": array '" + name + "' is damaged: its header is " +
                        e.bad_header +
                        ", not UINT32v1, UINT64v1, FLOATSv1 or DOUBLEv1, and it is no text");
  }
  if (!e.numeric) {
    ASSIGN_OR_RETURN(std::vector<std::string> v, ReadStrings(name));
    return std::optional<ArrayInfo>(ArrayInfo{ElemType::kString, v.size()});
  }
  const uint64_t file_size = e.source->Size();
  uint64_t payload = file_size - kMagicSize;
  size_t es = ElemSize(e.type);
  if (payload % es != 0) {
    return CorruptError(e.source->Describe() + ": size " + std::to_string(file_size) +
                        " is not 8 + a multiple of " + std::to_string(es));
  }
  return std::optional<ArrayInfo>(ArrayInfo{e.type, payload / es});
}

Status SpaceArrayStore::Read(const std::string& name, ElemType type, uint64_t first, uint64_t count,
                             void* out) const {
  ASSIGN_OR_RETURN(std::optional<ArrayInfo> info, Info(name));
  if (!info) return NotFoundError(Describe() + ": array '" + name + "' is missing");
  RETURN_IF_ERROR(CheckRange(Describe(), name, *info, type, first, count));
  if (count == 0) return OkStatus();
  static_assert(std::endian::native == std::endian::little, "big-endian hosts need byte swaps");
  const size_t es = ElemSize(type);
  return entries_.at(name).source->ReadExact(kMagicSize + first * es, out, count * es);
}

Result<std::vector<std::string>> SpaceArrayStore::ReadStrings(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) return NotFoundError(Describe() + ": array '" + name + "' is missing");
  if (it->second.numeric)
    return CorruptError(it->second.source->Describe() + ": expected a string array");
  ASSIGN_OR_RETURN(std::string text, it->second.source->ReadAll(uint64_t{1} << 32));
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string::npos ? text.size() : nl;
    size_t vend = end;
    if (vend > pos && text[vend - 1] == '\r') --vend;
    out.emplace_back(text, pos, vend - pos);
    pos = end + 1;
  }
  return out;
}

}  // namespace omicsfs::io
