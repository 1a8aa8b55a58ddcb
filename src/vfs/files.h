// FileContent implementations: a rendered text view and a plain source file passed through.
#pragma once

#include <memory>
#include <string>

#include "text/virtual_file.h"
#include "util/file.h"
#include "vfs/node.h"

namespace omicsfs::vfs {

class TextFileContent : public FileContent {
 public:
  explicit TextFileContent(std::shared_ptr<const text::VirtualTextFile> file) : file_(std::move(file)) {}
  Result<uint64_t> Size() const override { return file_->Size(); }
  bool SizeKnown() const override { return file_->sized(); }
  Result<std::vector<text::Piece>> Read(uint64_t offset, uint64_t length) const override {
    return file_->Read(offset, length);
  }
  const text::VirtualTextFile& file() const { return *file_; }

 private:
  std::shared_ptr<const text::VirtualTextFile> file_;
};

// A source file served byte for byte. Opened per read (stateless; no descriptor per file).
class PassthroughFileContent : public FileContent {
 public:
  // With an active guard, reads refuse the file once it changed (never old size, new bytes).
  PassthroughFileContent(std::string path, uint64_t size, ChangeGuard guard = {})
      : path_(std::move(path)), size_(size), guard_(guard) {}
  Result<uint64_t> Size() const override { return size_; }
  bool SizeKnown() const override { return true; }
  Result<std::vector<text::Piece>> Read(uint64_t offset, uint64_t length) const override;

 private:
  std::string path_;
  uint64_t size_;
  ChangeGuard guard_;
};

}  // namespace omicsfs::vfs
