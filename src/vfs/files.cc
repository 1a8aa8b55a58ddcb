#include "vfs/files.h"

#include <sys/stat.h>

#include <algorithm>

#include "util/file.h"

namespace omicsfs::vfs {

Result<std::vector<text::Piece>> PassthroughFileContent::Read(uint64_t offset, uint64_t length) const {
  std::vector<text::Piece> pieces;
  if (offset >= size_ || length == 0) return pieces;
  const uint64_t want = std::min<uint64_t>(length, size_ - offset);
  auto opened = File::OpenReadOnly(path_);
  if (!opened.ok()) RETURN_IF_ERROR(guard_.CheckPath(path_));
  ASSIGN_OR_RETURN(File f, std::move(opened));
  std::string buf(want, '\0');
  ASSIGN_OR_RETURN(size_t n, f.ReadAt(offset, buf.data(), want));
  RETURN_IF_ERROR(guard_.Check(f));
  if (n != want) {
    return CorruptError(path_ + ": file shrank to " + std::to_string(offset + n) +
                        " bytes while mounted (was " + std::to_string(size_) + ")");
  }
  pieces.push_back(text::Piece{std::make_shared<const std::string>(std::move(buf)), 0, want});
  return pieces;
}

std::shared_ptr<const FileContent> PassthroughFileContent::Fresh() const {
  struct stat st;
  if (!guard_.active || ::stat(path_.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || !guard_.ChangedSince(st)) {
    return nullptr;  // unchanged, or gone (reads then fail as they would have)
  }
  ChangeGuard now;
  now.Observe(st);
  return std::make_shared<const PassthroughFileContent>(path_, static_cast<uint64_t>(st.st_size), now, true);
}

}  // namespace omicsfs::vfs
