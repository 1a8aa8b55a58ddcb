// The filesystem model, independent of libfuse: directories, virtual files, symlinks.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "text/byte_view.h"
#include "util/status.h"

namespace omicsfs::vfs {

using Ino = uint64_t;
inline constexpr Ino kRootIno = 1;

// What a file node serves: an exact size and positional reads.
class FileContent {
 public:
  virtual ~FileContent() = default;
  virtual Result<uint64_t> Size() const = 0;
  // True when Size() is known without work (listing never waits for a sizing pass).
  virtual bool SizeKnown() const = 0;
  virtual Result<std::vector<text::Piece>> Read(uint64_t offset, uint64_t length) const = 0;
  // The content as it is now, when it may differ from what the node was discovered with (the
  // .omicsfs/ files; a pass-through file rewritten since the last scan): a new open reads from
  // it. nullptr: unchanged.
  virtual std::shared_ptr<const FileContent> Fresh() const { return nullptr; }
  // True for content the kernel must not cache (pages or size): what Fresh() returns.
  virtual bool Uncached() const { return false; }
  // True for content read past the kernel's page cache (direct I/O) while its pages and size may
  // still be cached as usual (text::ByteView::ReadsPastPageCache).
  virtual bool DirectIo() const { return false; }
  // Why the content turned out, once worked out, not to exist (a region index tabix refuses for
  // its view's records); nullopt while it may. A withdrawn file is neither listed nor found by
  // lookup, and leaves the tree at Tree::TakeWithdrawn.
  virtual std::optional<std::string> Withdrawn() const { return std::nullopt; }
  // True while it may still be withdrawn (a region index neither built nor refused yet): the
  // kernel must not keep its folder's listing meanwhile (Tree::ListingSettled).
  virtual bool MayBeWithdrawn() const { return false; }
};

// A fixed text, served uncached (a snapshot of changing content).
class SnapshotContent : public FileContent {
 public:
  explicit SnapshotContent(std::string text)
      : text_(std::make_shared<const std::string>(std::move(text))) {}
  Result<uint64_t> Size() const override { return text_->size(); }
  bool SizeKnown() const override { return true; }
  Result<std::vector<text::Piece>> Read(uint64_t offset, uint64_t length) const override {
    std::vector<text::Piece> out;
    if (offset < text_->size() && length > 0) {
      out.push_back({text_, static_cast<size_t>(offset),
                     static_cast<size_t>(std::min<uint64_t>(length, text_->size() - offset))});
    }
    return out;
  }
  bool Uncached() const override { return true; }

 private:
  std::shared_ptr<const std::string> text_;
};

// Content generated when read (the .omicsfs/ files): every open takes a snapshot.
class GeneratedContent : public FileContent {
 public:
  explicit GeneratedContent(std::function<std::string()> generate)
      : generate_(std::move(generate)) {}
  Result<uint64_t> Size() const override { return generate_().size(); }
  bool SizeKnown() const override { return true; }
  Result<std::vector<text::Piece>> Read(uint64_t offset, uint64_t length) const override {
    return SnapshotContent(generate_()).Read(offset, length);
  }
  std::shared_ptr<const FileContent> Fresh() const override {
    return std::make_shared<const SnapshotContent>(generate_());
  }
  bool Uncached() const override { return true; }

 private:
  std::function<std::string()> generate_;
};

enum class NodeKind { kDirectory, kFile, kSymlink };

class Tree;
class DirResolver;  // vfs/resolver.h

// A directory whose children are built when first needed (lazy discovery of a remote SOURCE:
// opening a store over S3 takes ~40 requests, so a mount opens none before it answers). `load`
// builds them into a fresh tree whose root stands for the directory; it never fails (problems
// become ERROR.txt there) and runs without any tree lock held. `mu` makes it single-flight.
struct DirLoader {
  std::function<std::unique_ptr<Tree>()> load;
  std::mutex mu;
};

struct Node {
  std::string name;
  Ino parent = kRootIno;
  NodeKind kind = NodeKind::kDirectory;
  mode_t perm = 0;  // permission bits only (read-only: no write bits)
  struct timespec mtime {};
  uid_t uid = 0;
  gid_t gid = 0;
  std::map<std::string, Ino, std::less<>> children;  // directories
  std::shared_ptr<const FileContent> content;        // files
  std::string link_target;                           // symlinks
  // What a later scan compares to reuse this node's subtree unchanged (stores and plain files:
  // paths, sizes, mtimes, ctimes and modes of their source files); empty for other nodes.
  std::string fingerprint;
  bool detached = false;  // removed from the tree by a rescan; alive while the kernel knows it
  bool hidden = false;    // found by lookup, not listed (the .omicsfs/ control folder)
  // Set while a directory's children are not built yet (Tree::Lookup/ReadDir build them).
  std::shared_ptr<DirLoader> loader;
  // Asked when a lookup in this directory misses (folders made on lookup, vfs/resolver.h).
  std::shared_ptr<const DirResolver> resolver;
  bool made = false;  // made by its parent's resolver (hidden too; never copied by CopyFrom)
  Ino made_in = 0;    // the innermost made folder this node is in (itself when made); 0: none
  // Made folders built from inputs that may change (a slice's lists): whether they still hold
  // what was read; a stale one is made anew on its next lookup (ResolvedDir::current).
  std::function<bool()> current;
  bool freed = false;  // a detached node nobody refers to any more: its inode waits for reuse
};

struct Attr {
  Ino ino = 0;
  mode_t mode = 0;  // type | permissions
  uint64_t size = 0;
  uint32_t nlink = 1;
  struct timespec mtime {};
  uid_t uid = 0;
  gid_t gid = 0;
  bool uncached = false;  // the kernel must not keep it (content that changes while mounted)
};

struct DirEntry {
  std::string name;
  Ino ino;
  NodeKind kind;
};

}  // namespace omicsfs::vfs
