#include "io/dir_array_store.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>
#include <bit>
#include <algorithm>
#include <cstring>

#include "util/file.h"

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

Result<std::string> ReadVersionFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return NotFoundError(path + ": no version file");
    return IoError("stat " + path, errno);
  }
  if (!S_ISREG(st.st_mode)) return NotFoundError(path + ": not a regular file");
  ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path, 4096));
  size_t nl = text.find('\n');
  if (nl != std::string::npos) text.resize(nl);
  if (!text.empty() && text.back() == '\r') text.pop_back();
  return text;
}

Result<std::unique_ptr<DirArrayStore>> DirArrayStore::Open(const std::string& dir, ChangeGuard guard) {
  std::unique_ptr<DirArrayStore> store(new DirArrayStore(dir, guard));
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return IoError("opendir " + dir, errno);
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    names.push_back(std::move(n));
  }
  ::closedir(d);
  for (const std::string& n : names) {
    std::string path = store->PathOf(n);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    Entry entry;
    entry.file_size = static_cast<uint64_t>(st.st_size);
    if (st.st_size >= static_cast<off_t>(kMagicSize)) {
      ASSIGN_OR_RETURN(File f, File::OpenReadOnly(path));
      char magic[kMagicSize];
      RETURN_IF_ERROR(f.ReadExact(0, magic, kMagicSize));
      RETURN_IF_ERROR(guard.Check(f));
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
    store->entries_[n] = entry;
  }
  return store;
}

Result<std::string> DirArrayStore::Version() const { return ReadVersionFile(PathOf("version")); }

Result<std::optional<ArrayInfo>> DirArrayStore::Info(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) return std::optional<ArrayInfo>();
  const Entry& e = it->second;
  if (!e.bad_header.empty()) {
    return CorruptError(PathOf(name) + ": array '" + name + "' is damaged: its header is " + e.bad_header +
                        ", not UINT32v1, UINT64v1, FLOATSv1 or DOUBLEv1, and it is no text");
  }
  if (!e.numeric) {
    ASSIGN_OR_RETURN(std::vector<std::string> v, ReadStrings(name));
    return std::optional<ArrayInfo>(ArrayInfo{ElemType::kString, v.size()});
  }
  uint64_t payload = e.file_size - kMagicSize;
  size_t es = ElemSize(e.type);
  if (payload % es != 0) {
    return CorruptError(PathOf(name) + ": size " + std::to_string(e.file_size) +
                        " is not 8 + a multiple of " + std::to_string(es));
  }
  return std::optional<ArrayInfo>(ArrayInfo{e.type, payload / es});
}

Status DirArrayStore::Read(const std::string& name, ElemType type, uint64_t first, uint64_t count,
                           void* out) const {
  ASSIGN_OR_RETURN(std::optional<ArrayInfo> info, Info(name));
  if (!info) return NotFoundError(dir_ + ": array '" + name + "' is missing");
  RETURN_IF_ERROR(CheckRange(dir_, name, *info, type, first, count));
  if (count == 0) return OkStatus();
  size_t es = ElemSize(type);
  auto opened = File::OpenReadOnly(PathOf(name));
  if (!opened.ok()) RETURN_IF_ERROR(guard_.CheckPath(PathOf(name)));
  ASSIGN_OR_RETURN(File f, std::move(opened));
  Status read = f.ReadExact(kMagicSize + first * es, out, count * es);
  RETURN_IF_ERROR(guard_.Check(f));  // first: a file cut short by a rewrite is stale, not corrupt
  RETURN_IF_ERROR(read);
  static_assert(std::endian::native == std::endian::little, "big-endian hosts need byte swaps");
  return OkStatus();
}

Result<std::vector<std::string>> DirArrayStore::ReadStrings(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) return NotFoundError(dir_ + ": array '" + name + "' is missing");
  if (it->second.numeric) return CorruptError(PathOf(name) + ": expected a string array");
  ASSIGN_OR_RETURN(std::string text, ReadWholeFile(PathOf(name), size_t{1} << 32, &guard_));
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
