// The folder seam: what discovery's one walk (vfs/walk.h) sees of a folder of SOURCE, whatever
// holds it. Two implementations: a local directory (vfs/local_folder.h: symlinks, loops, owners,
// HDF5 by path, the index directory kept out) and a folder of a ByteSpace (vfs/space_folder.h: S3
// prefixes, HTTP stores, zip archives; lazy sub-folders, HDF5 through the ByteSource driver).
// vfs/ reaches storage only through this seam; store kinds (vfs/kinds/) open what it hands them.
#pragma once

#include <sys/types.h>

#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "io/byte_source.h"
#include "util/file.h"
#include "util/status.h"
#include "vfs/node.h"

namespace omicsfs::vfs {

// What a node shows of its origin.
struct Meta {
  mode_t perm = 0444;
  struct timespec mtime {};
  uid_t uid = 0;
  gid_t gid = 0;
};

enum class EntryType { kDirectory, kFile, kSymlink };

// One entry of a folder, as the walk classifies it (a followed symlink is its target's type).
struct Entry {
  // The node's name in its parent; empty for SOURCE itself (its views or entries at the root).
  std::string name;
  // The entry's own file name (SOURCE's base name at the root): stems are cut from it.
  std::string base;
  // How the folder reaches it: its name there; empty for a directory seen from inside itself.
  std::string key;
  EntryType type = EntryType::kFile;
  Meta meta;
  std::string link_target;  // symlinks shown as links
  // A directory with no execute bits of its own (remote folders): made searchable where readable.
  bool synthetic = false;
};

// A store's two identities, passed explicitly to whoever needs them.
struct StoreStamp {
  // The persisted-index key: every size index, region index and transposed copy of the store is
  // keyed by it plus the view's own words. Never changes for the same bytes (a user's index_dir
  // is hours of work). Local: the store's path, then each file's path, size and mtime.
  std::string index_key;
  // The change stamp a rescan compares (a node's fingerprint): the index key plus ctimes and
  // modes where the backend has them.
  std::string change;
  ChangeGuard guard;  // readers refuse files changed after the stamp was taken
  struct timespec newest_mtime {};
  mode_t readable = 0444;  // the read bits every file of the store has
};

// Which objects a stamp covers.
enum class StampScope {
  kTree,    // everything below a directory entry
  kFiles,   // a file entry and the named companions beside it (absent ones are skipped)
  kObject,  // one object, stamped as a single object (remote HDF5 keys its groups by it)
};

class Folder {
 public:
  virtual ~Folder() = default;

  // The entries, sorted by name.
  virtual Result<std::vector<Entry>> List() const = 0;
  // The folder `e` (a directory entry, or SOURCE when e.name is empty); nullptr when it cannot or
  // must not be entered (gone; too deep: logged). Symlinks that would loop are links already.
  virtual std::unique_ptr<Folder> Enter(const Entry& e) const = 0;
  // Whether sub-folders are built when first looked into (remote: a listing costs a request).
  virtual bool Lazy() const = 0;
  // Whether reading a few bytes of an entry costs no request: recognition may look at them.
  virtual bool CheapPeek() const = 0;
  // Path or URL of an entry (or of a companion named beside it), for messages.
  virtual std::string Where(const std::string& name) const = 0;

  virtual Result<StoreStamp> Stamp(const Entry& e, StampScope scope,
                                   const std::vector<std::string>& companions) const = 0;
  // A directory entry's objects; `stamp` (may be null) guards them.
  virtual std::shared_ptr<const io::ByteSpace> Space(const Entry& e,
                                                     const StoreStamp* stamp) const = 0;
  // The file `name` of this folder (an entry or a companion); nullptr when absent.
  virtual Result<std::shared_ptr<const io::ByteSource>> Open(const std::string& name,
                                                             const StoreStamp* stamp) const = 0;
  // A plain file entry served byte for byte, and its change stamp; nullptr when it cannot be.
  // `stamp`: the entry's kObject stamp when a kind that declined took one (not taken again).
  virtual std::shared_ptr<const FileContent> PassThrough(const Entry& e, const StoreStamp* stamp,
                                                         std::string* change) const = 0;

  // The index key of one part of a one-file store (an HDF5 file's group, vfs/kinds/hdf5.h), from
  // the file's kObject stamp. Persisted: never changes for the same bytes.
  virtual std::string PartIndexKey(const Entry& e, const StoreStamp& stamp,
                                   const std::string& part) const = 0;
};

}  // namespace omicsfs::vfs
