// FileContent implementations: any byte view of text/ (rendered text, BGZF twins, indexes) and a
// plain source file passed through.
#pragma once

#include <memory>
#include <string>

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
  const text::ByteView& view() const { return *view_; }

 private:
  std::shared_ptr<const text::ByteView> view_;
};

// A source file served byte for byte. Opened per read (stateless; no descriptor per file).
class PassthroughFileContent : public FileContent {
 public:
  // With an active guard, reads refuse the file once it changed (never old size, new bytes).
  PassthroughFileContent(std::string path, uint64_t size, ChangeGuard guard = {}, bool uncached = false)
      : path_(std::move(path)), size_(size), guard_(guard), uncached_(uncached) {}
  Result<uint64_t> Size() const override { return size_; }
  bool SizeKnown() const override { return true; }
  Result<std::vector<text::Piece>> Read(uint64_t offset, uint64_t length) const override;
  // Rewritten since it was discovered: a new open reads the file as it is now (the next rescan
  // gives it a new inode); only files already open refuse with ESTALE.
  std::shared_ptr<const FileContent> Fresh() const override;
  bool Uncached() const override { return uncached_; }

 private:
  std::string path_;
  uint64_t size_;
  ChangeGuard guard_;
  bool uncached_;
};

}  // namespace omicsfs::vfs
