// The filesystem model, independent of libfuse: directories, virtual files, symlinks.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <map>
#include <memory>
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
};

enum class NodeKind { kDirectory, kFile, kSymlink };

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
};

struct Attr {
  Ino ino = 0;
  mode_t mode = 0;  // type | permissions
  uint64_t size = 0;
  uint32_t nlink = 1;
  struct timespec mtime {};
  uid_t uid = 0;
  gid_t gid = 0;
};

struct DirEntry {
  std::string name;
  Ino ino;
  NodeKind kind;
};

}  // namespace omicsfs::vfs
