#include "vfs/files.h"

#include <sys/stat.h>

#include <algorithm>

#include "io/local/local_space.h"
#include "util/file.h"

namespace omicsfs::vfs {

Result<std::vector<text::Piece>> ByteSourceContent::Read(uint64_t offset, uint64_t length) const {
  std::vector<text::Piece> pieces;
  const uint64_t size = source_->Size();
  if (offset >= size || length == 0) return pieces;
  const uint64_t want = std::min<uint64_t>(length, size - offset);
  std::string buf(want, '\0');
  RETURN_IF_ERROR(source_->ReadExact(offset, buf.data(), want));
  pieces.push_back(text::Piece{std::make_shared<const std::string>(std::move(buf)), 0, want});
  return pieces;
}

Result<std::vector<text::Piece>> FixedTextContent::Read(uint64_t offset, uint64_t length) const {
  std::vector<text::Piece> out;
  if (offset < text_->size() && length > 0) {
    out.push_back({text_, static_cast<size_t>(offset),
                   static_cast<size_t>(std::min<uint64_t>(length, text_->size() - offset))});
  }
  return out;
}

LocalFileContent::LocalFileContent(std::string path, const struct stat& st, ChangeGuard guard,
                                   bool uncached)
    : ByteSourceContent(std::make_shared<const io::LocalByteSource>(std::move(path), st, guard),
                        uncached),
      guard_(guard) {}

std::shared_ptr<const FileContent> LocalFileContent::Fresh() const {
  const std::string& path = source_->Describe();
  struct stat st;
  if (!guard_.active || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      !guard_.ChangedSince(st)) {
    return nullptr;  // unchanged, or gone (reads then fail as they would have)
  }
  ChangeGuard now;
  now.Observe(st);
  return std::make_shared<const LocalFileContent>(path, st, now, true);
}

}  // namespace omicsfs::vfs
