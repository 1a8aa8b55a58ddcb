// A store kind: one small unit per kind of store (vfs/kinds/*.cc), listed in order in
// vfs/kinds/registry.cc. The walk (vfs/walk.h) asks each kind in turn whether an entry is its
// own — cheaply, from names and the folder's listing, plus small marker files (a `version`, Zarr
// attributes) only where the folder says reads cost no request — then stamps
// the entry, reuses the node a rescan finds unchanged, and only then opens it; opening may still
// decline ("not mine after all": the next kind is asked, and at the end the entry is passed
// through). Adding a kind (AnnData, a BPCells store in Zarr) is one file and one line.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "vfs/catalog.h"
#include "vfs/folder.h"
#include "vfs/kinds/hdf5.h"
#include "vfs/selectors.h"

namespace omicsfs::vfs {

// What recognition sees of a candidate entry.
struct Probe {
  const Folder& folder;  // the entry's folder (a directory entry: its own folder, entry key "")
  const Entry& entry;
  const std::vector<Entry>* listing = nullptr;  // a directory's entries; null for files

  // Whether the listing holds `name` of that type (or a symlink, which may stand for it).
  bool Lists(const std::string& name, EntryType type = EntryType::kFile) const;
};

// What opening a store needs: where it is and its stamp.
struct Located {
  const Folder& folder;
  const Entry& entry;
  const StoreStamp& stamp;
  const Hdf5File& hdf5;  // the entry as HDF5 kinds match on it: probed once, when first asked
  cache::CachePool* pool;
};

class Sliceable;

// An opened store: fills its folder (the sink's meta, key and settings are set by the walk; its
// context by ShowStore, vfs/slices.h, from Context()).
class OpenedStore {
 public:
  virtual ~OpenedStore() = default;
  // Where and stem of its views (a slice's `where` is made by the slice builder).
  virtual StoreContext Context() const { return {}; }
  virtual void AddViews(ViewSink& sink) const = 0;
  // What its folder slices into (vfs/slices.h); null: no slices. Asked of a store shown in its
  // own place (a slice's folders are cut from its store's Sliceable), after AddViews.
  virtual std::shared_ptr<const Sliceable> Slices(const ViewSink& sink) const { return nullptr; }
};

class StoreKind {
 public:
  virtual ~StoreKind() = default;
  // For --help: what the kind is recognised by, and the views it shows.
  virtual std::string Name() const = 0;
  virtual std::string RecognisedBy() const = 0;
  virtual std::vector<std::string> ViewNames() const = 0;

  virtual bool Recognize(const Probe& probe) const = 0;
  // What the stamp covers, and the companions beside a file entry it reads (stamped too).
  virtual StampScope Scope() const = 0;
  virtual std::vector<std::string> Companions(const std::string& base) const { return {}; }
  // Names beside a file entry that belong to it and are not shown (companions, checksums).
  virtual std::vector<std::string> Consumed(const Entry& e) const { return {}; }
  // The node's name for an entry of this kind (NAME.vcz.zip → NAME.vcz).
  virtual std::string NodeName(const std::string& name) const { return name; }
  // Recognised by a guess (a file's name, a remote folder's listing) that only opening confirms:
  // when the stamp cannot be taken, the entry is not claimed on the guess alone.
  virtual bool Guessed(const Folder& folder) const { return false; }
  // Views dated by the entry's own mtime rather than the newest file of the store.
  virtual bool DatedByEntry() const { return false; }
  // For --help: the selectors of its slices, per sort of store ("matrix", "fragments"; "" one).
  virtual std::vector<std::pair<std::string, SelectorRows>> Slicing() const { return {}; }
  // Keys a store of this kind may hold where a backend has no listing (plain HTTP).
  virtual std::vector<std::string> FixedKeys() const { return {}; }
  // HDF5 kinds: the string attributes that mark the groups they open (BPCells' `version`). The
  // vetting helper reads those groups' datasets before the daemon may (io/h5_vet.h); the kinds
  // match on the file's probe (Located::hdf5), which reports every group.
  virtual std::vector<std::string> Hdf5StoreMarks() const { return {}; }

  // The store, an error (shown as ERROR.txt), or nullptr: not of this kind after all.
  virtual Result<std::unique_ptr<OpenedStore>> Open(const Located& at) const = 0;
};

}  // namespace omicsfs::vfs
