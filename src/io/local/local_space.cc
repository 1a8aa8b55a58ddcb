#include "io/local/local_space.h"

#include <dirent.h>
#include <fcntl.h>

#include <algorithm>
#include <cerrno>

namespace omicsfs::io {
namespace {

std::string Seconds(const struct timespec& t) {
  return std::to_string(t.tv_sec) + "." + std::to_string(t.tv_nsec);
}

bool Missing(int e) { return e == ENOENT || e == ENOTDIR; }

}  // namespace

ObjectInfo LocalObjectInfo(const struct stat& st) {
  ObjectInfo info;
  info.size = S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
  info.mtime = st.st_mtim;
  info.perm = st.st_mode & 0444;
  info.stamp = std::to_string(st.st_size) + " " + Seconds(st.st_mtim) + " " + Seconds(st.st_ctim) +
               " " + std::to_string(st.st_mode) + " " + std::to_string(st.st_ino);
  return info;
}

LocalByteSource::LocalByteSource(std::string path, const struct stat& st, ChangeGuard guard)
    : path_(std::move(path)), info_(LocalObjectInfo(st)), guard_(guard) {
  if (!guard_.active) guard_.Observe(st);
}

Result<std::shared_ptr<const LocalByteSource>> LocalByteSource::OpenPath(const std::string& path,
                                                                         ChangeGuard guard) {
  ASSIGN_OR_RETURN(File f, File::OpenReadOnly(path));
  ASSIGN_OR_RETURN(struct stat st, f.Stat());
  if (!S_ISREG(st.st_mode)) return NotFoundError(path + ": not a regular file");
  RETURN_IF_ERROR(guard.Check(f));
  return std::make_shared<const LocalByteSource>(path, st, guard);
}

Status LocalByteSource::ReadExact(uint64_t offset, void* out, size_t length) const {
  if (offset > info_.size || length > info_.size - offset) {
    return CorruptError(path_ + ": bytes " + std::to_string(offset) + "+" + std::to_string(length) +
                        " lie past its end (" + std::to_string(info_.size) + " bytes)");
  }
  if (length == 0) return OkStatus();
  auto opened = File::OpenReadOnly(path_);
  if (!opened.ok()) RETURN_IF_ERROR(guard_.CheckPath(path_));
  ASSIGN_OR_RETURN(File f, std::move(opened));
  auto n = f.ReadAt(offset, out, length);
  RETURN_IF_ERROR(guard_.Check(f));  // first: a file cut short by a rewrite is stale, not corrupt
  if (!n.ok()) return std::move(n).status();
  if (*n != length) {
    return CorruptError(path_ + ": file shrank to " + std::to_string(offset + *n) +
                        " bytes while mounted (was " + std::to_string(info_.size) + ")");
  }
  return OkStatus();
}

// The regular file under `key`, open, with its stat; nullopt when absent (or not a file).
Result<std::optional<std::pair<File, struct stat>>> LocalByteSpace::OpenFile(
    const std::string& key) const {
  using Found = std::optional<std::pair<File, struct stat>>;
  RETURN_IF_ERROR(CheckKey(*this, key));
  auto file = File::OpenReadOnly(Where(key));
  if (!file.ok()) {
    if (!Missing(file.status().sys_errno())) return std::move(file).status();
    RETURN_IF_ERROR(CheckAbsent(key));
    return Found();
  }
  ASSIGN_OR_RETURN(struct stat st, file->Stat());
  if (!S_ISREG(st.st_mode)) return Found();
  return Found(std::make_pair(std::move(file).value(), st));
}

Result<std::shared_ptr<const ByteSource>> LocalByteSpace::Open(const std::string& key) const {
  ASSIGN_OR_RETURN(auto found, OpenFile(key));
  if (!found) return std::shared_ptr<const ByteSource>();
  RETURN_IF_ERROR(guard_.Check(found->first));
  return std::shared_ptr<const ByteSource>(
      std::make_shared<const LocalByteSource>(Where(key), found->second, guard_));
}

// One open, one read, one check: the Zarr chunk path, which reads whole objects.
Result<std::optional<std::string>> LocalByteSpace::Get(const std::string& key,
                                                       uint64_t max_bytes) const {
  ASSIGN_OR_RETURN(auto found, OpenFile(key));
  if (!found) return std::optional<std::string>();
  const File& file = found->first;
  const struct stat& st = found->second;
  const std::string& path = file.path();
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return CorruptError(path + ": " + std::to_string(st.st_size) + " bytes is more than the " +
                        std::to_string(max_bytes) + " accepted for it");
  }
  std::string data(static_cast<size_t>(st.st_size), '\0');
  ASSIGN_OR_RETURN(size_t n, file.ReadAt(0, data.data(), data.size()));
  RETURN_IF_ERROR(guard_.Check(file));
  if (n != data.size()) return CorruptError(path + ": file shrank while being read");
  return std::optional<std::string>(std::move(data));
}

// Removing a file or directory changes its parent's ctime.
Status LocalByteSpace::CheckAbsent(const std::string& key) const {
  if (!guard_.active) return OkStatus();
  std::string rel = key;
  for (;;) {
    const size_t slash = rel.rfind('/');
    rel = slash == std::string::npos ? std::string() : rel.substr(0, slash);
    const std::string dir = Where(rel);
    struct stat st;
    if (::lstat(dir.c_str(), &st) == 0 || rel.empty()) return guard_.CheckPath(dir);
  }
}

Result<std::vector<ListEntry>> LocalByteSpace::List(const std::string& prefix) const {
  if (!prefix.empty()) RETURN_IF_ERROR(CheckKey(*this, prefix));
  const std::string path = Where(prefix);
  DIR* d = ::opendir(path.c_str());
  if (d == nullptr) {
    if (Missing(errno)) return std::vector<ListEntry>();
    return IoError("opendir " + path, errno);
  }
  std::vector<ListEntry> out;
  while (struct dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    struct stat st;
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;                                                  // gone meanwhile
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) continue;  // links, sockets: not objects
    out.push_back(ListEntry{n, S_ISDIR(st.st_mode) ? EntryKind::kDirectory : EntryKind::kFile,
                            LocalObjectInfo(st)});
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(),
            [](const ListEntry& a, const ListEntry& b) { return a.name < b.name; });
  return out;
}

}  // namespace omicsfs::io
