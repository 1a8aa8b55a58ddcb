#include "util/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace omicsfs {

File::~File() {
  if (fd_ >= 0) ::close(fd_);
}

File& File::operator=(File&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    path_ = std::move(o.path_);
    o.fd_ = -1;
  }
  return *this;
}

Result<File> File::OpenReadOnly(const std::string& path, bool nofollow, bool nonblocking) {
  int flags = O_RDONLY | O_CLOEXEC;
  if (nofollow) flags |= O_NOFOLLOW;
  if (nonblocking) flags |= O_NONBLOCK;
  int fd;
  do {
    fd = ::open(path.c_str(), flags);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return IoError("open " + path, errno);
  File f;
  f.fd_ = fd;
  f.path_ = path;
  return f;
}

Result<size_t> File::ReadAt(uint64_t offset, void* out, size_t length) const {
  auto* p = static_cast<char*>(out);
  size_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd_, p + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("read " + path_ + " at " + std::to_string(offset + done), errno);
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

Status File::ReadExact(uint64_t offset, void* out, size_t length) const {
  ASSIGN_OR_RETURN(size_t n, ReadAt(offset, out, length));
  if (n != length) {
    return CorruptError(path_ + ": truncated: wanted " + std::to_string(length) + " bytes at " +
                        std::to_string(offset) + ", file ends after " + std::to_string(n));
  }
  return OkStatus();
}

Result<struct stat> File::Stat() const {
  struct stat st;
  if (::fstat(fd_, &st) != 0) return IoError("stat " + path_, errno);
  return st;
}

Result<ScratchFile> ScratchFile::Create(const std::vector<std::string>& dirs) {
  std::vector<std::string> candidates = dirs;
  if (const char* t = std::getenv("TMPDIR"); t && *t) candidates.push_back(t);
  candidates.push_back("/tmp");
  int last_errno = 0;
  for (const std::string& d : candidates) {
    if (d.empty()) continue;
    ::mkdir(d.c_str(), 0700);  // index_dir may not exist yet
    int fd = ::open(d.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
      last_errno = errno;
      continue;
    }
    ScratchFile s;
    s.file_ = File::Adopt(fd, d + "/(scratch)");
    return s;
  }
  return IoError("no writable directory for scratch data", last_errno);
}

Status ScratchFile::WriteAt(uint64_t offset, const void* data, size_t length) {
  const char* p = static_cast<const char*>(data);
  size_t done = 0;
  while (done < length) {
    ssize_t n = ::pwrite(file_.fd(), p + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("write " + file_.path(), errno);
    }
    done += static_cast<size_t>(n);
  }
  return OkStatus();
}

namespace {

Status Changed(const std::string& path) {
  return IoError(path + ": changed on disk since the store was opened (reopen the file)", ESTALE);
}

}  // namespace

void TouchFile(const std::string& path) { ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0); }

void ChangeGuard::Observe(const struct stat& st) {
  active = true;
  if (Later(st.st_ctim, since)) since = st.st_ctim;
  if (Later(st.st_mtim, since)) since = st.st_mtim;
}

bool ChangeGuard::ChangedSince(const struct stat& st) const {
  return Later(st.st_ctim, since) || Later(st.st_mtim, since);
}

Status ChangeGuard::Check(const File& f) const {
  if (!active) return OkStatus();
  ASSIGN_OR_RETURN(struct stat st, f.Stat());
  return ChangedSince(st) ? Changed(f.path()) : OkStatus();
}

Status ChangeGuard::CheckPath(const std::string& path) const {
  if (!active) return OkStatus();
  struct stat st;
  return ::lstat(path.c_str(), &st) != 0 || ChangedSince(st) ? Changed(path) : OkStatus();
}

Result<std::string> ReadWholeFile(const std::string& path, size_t max_bytes,
                                  const ChangeGuard* guard, struct stat* st_out) {
  auto opened = File::OpenReadOnly(path, /*nofollow=*/false, /*nonblocking=*/true);
  if (!opened.ok() && guard != nullptr) RETURN_IF_ERROR(guard->CheckPath(path));
  ASSIGN_OR_RETURN(File f, std::move(opened));
  ASSIGN_OR_RETURN(struct stat st, f.Stat());
  if (!S_ISREG(st.st_mode)) return InvalidArgumentError(path + ": not a regular file");
  if (st_out != nullptr) *st_out = st;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes)
    return CorruptError(path + ": larger than " + std::to_string(max_bytes) + " bytes");
  std::string out(size, '\0');
  ASSIGN_OR_RETURN(size_t n, f.ReadAt(0, out.data(), out.size()));
  out.resize(n);  // a file that shrank meanwhile reads short; the caller validates content
  if (guard != nullptr) RETURN_IF_ERROR(guard->Check(f));
  return out;
}

}  // namespace omicsfs
