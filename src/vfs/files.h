// FileContent implementations: any byte view of text/ (rendered text, BGZF twins, indexes) and a
// plain source file passed through.
#pragma once

#include <memory>
#include <string>

#include "io/byte_source.h"
#include "text/byte_view.h"
#include "util/file.h"
#include "vfs/node.h"

namespace omicsfs::vfs {

class ByteViewContent : public FileContent {
 public:
  explicit ByteViewContent(std::shared_ptr<const text::ByteView> view) : view_(std::move(view)) {}
  Result<uint64_t> Size() const override { return view_->Size(); }
  bool SizeKnown() const override { return view_->SizeKnown(); }
  Result<std::vector<text::Piece>> Read(uint64_t offset, uint64_t length) const override {
    return view_->Read(offset, length);
  }
  bool DirectIo() const override { return view_->ReadsPastPageCache(); }
  const text::ByteView& view() const { return *view_; }

 private:
  std::shared_ptr<const text::ByteView> view_;
};

// A text fixed when the tree is built (ERROR.txt): its size is known, nothing to persist.
class FixedTextContent : public FileContent {
 public:
  explicit FixedTextContent(std::string text)
      : text_(std::make_shared<const std::string>(std::move(text))) {}
  Result<uint64_t> Size() const override { return text_->size(); }
  bool SizeKnown() const override { return true; }
  Result<std::vector<text::Piece>> Read(uint64_t offset, uint64_t length) const override;

 private:
  std::shared_ptr<const std::string> text_;
};

// An object of any backend (a local file, an HTTP or S3 object, a zip entry) served byte for
// byte. Its source refuses bytes changed since it was opened (ESTALE), never mixes them.
class ByteSourceContent : public FileContent {
 public:
  explicit ByteSourceContent(std::shared_ptr<const io::ByteSource> source, bool uncached = false)
      : source_(std::move(source)), uncached_(uncached) {}
  Result<uint64_t> Size() const override { return source_->Size(); }
  bool SizeKnown() const override { return true; }
  Result<std::vector<text::Piece>> Read(uint64_t offset, uint64_t length) const override;
  bool Uncached() const override { return uncached_; }

 protected:
  std::shared_ptr<const io::ByteSource> source_;
  bool uncached_;
};

// A local plain file. Rewritten since it was discovered, a new open reads the file as it is now
// (the next rescan gives it a new inode); only files already open refuse with ESTALE.
class LocalFileContent : public ByteSourceContent {
 public:
  LocalFileContent(std::string path, const struct stat& st, ChangeGuard guard,
                   bool uncached = false);
  std::shared_ptr<const FileContent> Fresh() const override;

 private:
  ChangeGuard guard_;
};

}  // namespace omicsfs::vfs
