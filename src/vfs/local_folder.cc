#include "vfs/local_folder.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "io/local/local_space.h"
#include "util/fs.h"
#include "util/log.h"
#include "vfs/files.h"

namespace omicsfs::vfs {
namespace {

Meta MetaOf(const struct stat& st) {
  Meta m;
  m.perm = st.st_mode & 0555;
  m.mtime = st.st_mtim;
  m.uid = st.st_uid;
  m.gid = st.st_gid;
  return m;
}

std::string TimeText(const struct timespec& t) {
  return std::to_string(t.tv_sec) + "." + std::to_string(t.tv_nsec);
}

// A store's stamps from its files (absent ones skipped): the index key is "store NAME" then
// "PATH SIZE MTIME" per file; the change stamp adds ctimes and modes.
StoreStamp StampOfFiles(const std::string& name, const std::vector<std::string>& files) {
  StoreStamp s;
  s.index_key = "store " + name + "\n";
  s.change = s.index_key;
  for (const auto& f : files) {
    struct stat st;
    if (::stat(f.c_str(), &st) != 0) continue;
    const std::string line = f + " " + std::to_string(st.st_size) + " " + TimeText(st.st_mtim);
    s.index_key += line + "\n";
    s.change += line + " " + TimeText(st.st_ctim) + " " + std::to_string(st.st_mode) + "\n";
    s.guard.Observe(st);
    // A store reached through a symbolic link (follow_symlinks): a missing key is checked
    // against the store root's own lstat, so the link's times are part of the guard too (a link
    // made after the store's files is not a change).
    struct stat link;
    if (::lstat(f.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) s.guard.Observe(link);
    s.readable &= st.st_mode;
    if (Later(st.st_mtim, s.newest_mtime)) s.newest_mtime = st.st_mtim;
  }
  s.guard.active = true;
  return s;
}

}  // namespace

LocalWalk LocalWalk::For(const std::string& index_dir, bool follow_symlinks) {
  LocalWalk w;
  w.follow_symlinks = follow_symlinks;
  struct stat st;
  if (!index_dir.empty() && ::stat(index_dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    w.index_dev = st.st_dev;
    w.index_ino = st.st_ino;
    const fs::path p = fs::path(index_dir).lexically_normal();
    w.index_name = p.filename().string();
    if (w.index_name.empty() || w.index_name == ".")
      w.index_name = p.parent_path().filename().string();
  }
  return w;
}

bool LocalWalk::IsIndexDir(const std::string& name, const std::string& path) const {
  if (index_name.empty() || name != index_name) return false;
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev == index_dev &&
         st.st_ino == index_ino;
}

LocalFolder::LocalFolder(std::string path, const LocalWalk& walk,
                         std::vector<std::pair<dev_t, ino_t>> ancestors)
    : path_(std::move(path)), walk_(walk), ancestors_(std::move(ancestors)) {}

Result<std::pair<std::unique_ptr<LocalFolder>, Entry>> LocalFolder::Source(const std::string& path,
                                                                           const LocalWalk& walk) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return IoError(path, errno);
  if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
    return InvalidArgumentError(path + ": not a directory or regular file");
  const fs::path p(path);
  Entry e;
  e.base = p.filename().string();
  e.key = e.base;
  e.type = S_ISDIR(st.st_mode) ? EntryType::kDirectory : EntryType::kFile;
  e.meta = MetaOf(st);
  std::string parent = p.parent_path().string();
  if (parent.empty()) parent = "/";
  return std::make_pair(std::make_unique<LocalFolder>(parent, walk), std::move(e));
}

std::string LocalFolder::PathOf(const std::string& key) const {
  if (key.empty()) return path_;
  return path_ == "/" ? "/" + key : path_ + "/" + key;
}

Result<std::vector<Entry>> LocalFolder::List() const {
  fs_error ec;
  std::vector<std::string> names;
  for (fs::directory_iterator it(path_, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  if (ec) LogWarning(path_ + ": cannot list: " + ec.message());
  std::sort(names.begin(), names.end());
  std::vector<Entry> out;
  for (const std::string& n : names) {
    const std::string path = PathOf(n);
    if (walk_.IsIndexDir(n, path)) {
      LogDebug(path + ": the index directory, not mirrored");
      continue;
    }
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
      LogWarning(path + ": cannot stat; not shown");
      continue;
    }
    if (S_ISLNK(st.st_mode) && walk_.follow_symlinks) {
      // Shown as its target, unless the target is missing or a directory being walked (a loop).
      struct stat target;
      const bool found = ::stat(path.c_str(), &target) == 0;
      if (found && std::none_of(ancestors_.begin(), ancestors_.end(), [&](const auto& d) {
            return d.first == target.st_dev && d.second == target.st_ino;
          })) {
        st = target;
      } else {
        LogDebug(path + ": a dangling or looping symlink; shown as the link");
      }
    }
    Entry e;
    e.name = e.base = e.key = n;
    e.meta = MetaOf(st);
    if (S_ISLNK(st.st_mode)) {
      fs::path target = fs::read_symlink(path, ec);
      if (ec) continue;
      e.type = EntryType::kSymlink;
      e.link_target = target.string();
    } else if (S_ISDIR(st.st_mode)) {
      e.type = EntryType::kDirectory;
    } else if (S_ISREG(st.st_mode)) {
      e.type = EntryType::kFile;
    } else {
      continue;  // sockets, FIFOs and devices are not served
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::unique_ptr<Folder> LocalFolder::Enter(const Entry& e) const {
  const std::string path = PathOf(e.key);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    LogWarning(path + ": cannot stat; not shown");
    return nullptr;
  }
  auto ancestors = ancestors_;
  ancestors.emplace_back(st.st_dev, st.st_ino);
  return std::make_unique<LocalFolder>(path, walk_, std::move(ancestors));
}

std::vector<std::string> LocalFolder::FilesBelow(const std::string& dir) const {
  std::vector<std::string> out{dir};
  fs_error ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (walk_.IsIndexDir(it->path().filename().string(), it->path().string())) {
      it.disable_recursion_pending();
      continue;
    }
    out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<StoreStamp> LocalFolder::Stamp(const Entry& e, StampScope scope,
                                      const std::vector<std::string>& companions) const {
  const std::string path = PathOf(e.key);
  if (scope == StampScope::kTree) return StampOfFiles(path, FilesBelow(path));
  std::vector<std::string> files{path};
  for (const auto& c : companions) files.push_back(PathOf(c));
  return StampOfFiles(path, files);
}

std::shared_ptr<const io::ByteSpace> LocalFolder::Space(const Entry& e,
                                                        const StoreStamp* stamp) const {
  return std::make_shared<io::LocalByteSpace>(PathOf(e.key),
                                              stamp != nullptr ? stamp->guard : ChangeGuard());
}

Result<std::shared_ptr<const io::ByteSource>> LocalFolder::Open(const std::string& name,
                                                                const StoreStamp* stamp) const {
  auto source =
      io::LocalByteSource::OpenPath(PathOf(name), stamp != nullptr ? stamp->guard : ChangeGuard());
  if (!source.ok()) {
    if (source.status().sys_errno() == ENOENT || source.status().code() == ErrorCode::kNotFound) {
      return std::shared_ptr<const io::ByteSource>();
    }
    return source.status();
  }
  return std::shared_ptr<const io::ByteSource>(std::move(source).value());
}

std::shared_ptr<const FileContent> LocalFolder::PassThrough(const Entry& e, const StoreStamp* stamp,
                                                            std::string* change) const {
  const std::string path = PathOf(e.key);
  const StoreStamp own = stamp != nullptr ? StoreStamp() : StampOfFiles(path, {path});
  if (stamp == nullptr) stamp = &own;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return nullptr;
  *change = stamp->change;
  return std::make_shared<const LocalFileContent>(path, st, stamp->guard);
}

std::string LocalFolder::PartIndexKey(const Entry& e, const StoreStamp& stamp,
                                      const std::string& part) const {
  // "store FILE:PART" in place of the file's own first line.
  const std::string path = PathOf(e.key);
  return "store " + path + ":" + part + "\n" +
         stamp.index_key.substr(stamp.index_key.find('\n') + 1);
}

}  // namespace omicsfs::vfs
