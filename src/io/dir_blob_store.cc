#include "io/dir_blob_store.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "util/file.h"

namespace omicsfs::io {

Result<std::optional<std::string>> DirBlobStore::Get(const std::string& key) const {
  if (key.find("..") != std::string::npos) return InvalidArgumentError("bad key '" + key + "'");
  const std::string path = root_ + "/" + key;
  auto file = File::OpenReadOnly(path);
  if (!file.ok()) {
    int e = file.status().sys_errno();
    if (e == ENOENT || e == ENOTDIR) {
      RETURN_IF_ERROR(CheckAbsent(key));
      return std::optional<std::string>();
    }
    return std::move(file).status();
  }
  ASSIGN_OR_RETURN(struct stat st, file->Stat());
  if (!S_ISREG(st.st_mode)) return std::optional<std::string>();
  if (static_cast<uint64_t>(st.st_size) > max_blob_) {
    return CorruptError(path + ": " + std::to_string(st.st_size) + " bytes is larger than any chunk we accept");
  }
  std::string data(static_cast<size_t>(st.st_size), '\0');
  ASSIGN_OR_RETURN(size_t n, file->ReadAt(0, data.data(), data.size()));
  RETURN_IF_ERROR(guard_.Check(*file));
  if (n != data.size()) return CorruptError(path + ": file shrank while being read");
  return std::optional<std::string>(std::move(data));
}

// Absent means "fill value" only if the nearest existing directory above the key is as it was
// when the store was opened (removing a file or directory changes its parent's ctime).
Status DirBlobStore::CheckAbsent(const std::string& key) const {
  if (!guard_.active) return OkStatus();
  std::string rel = key;
  for (;;) {
    const size_t slash = rel.rfind('/');
    rel = slash == std::string::npos ? std::string() : rel.substr(0, slash);
    const std::string dir = rel.empty() ? root_ : root_ + "/" + rel;
    struct stat st;
    if (::lstat(dir.c_str(), &st) == 0 || rel.empty()) return guard_.CheckPath(dir);
  }
}

Result<std::vector<std::string>> DirBlobStore::List(const std::string& prefix) const {
  const std::string path = prefix.empty() ? root_ : root_ + "/" + prefix;
  DIR* d = ::opendir(path.c_str());
  if (d == nullptr) {
    if (errno == ENOENT || errno == ENOTDIR) return std::vector<std::string>();
    return IoError("opendir " + path, errno);
  }
  std::vector<std::string> out;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(std::move(n));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace omicsfs::io
