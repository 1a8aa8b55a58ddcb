// Discovery's one walk, the same for every folder (vfs/folder.h): for each entry, the store kinds
// are asked in order (vfs/kinds/registry.h); the first that recognises it is stamped, reused when
// a rescan finds it unchanged, opened, and its views made from its catalog; an entry no kind takes
// is passed through (directories mirrored, or built when first looked into where listings cost
// requests; files and symlinks as they are).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/h5_vet.h"
#include "vfs/catalog.h"
#include "vfs/folder.h"
#include "vfs/tree.h"
#include "vfs/tree_writer.h"

namespace omicsfs::vfs {

class StoreKind;

struct WalkSettings {
  ViewSettings views;
  io::H5Vetter h5vet;  // HDF5 files are vetted by this helper before libhdf5 parses them here
};

class Walker {
 public:
  // `previous`: on a rescan, the tree being served (unchanged stores are copied from it).
  Walker(Tree* tree, std::shared_ptr<const WalkSettings> settings, const Tree* previous = nullptr)
      : out_(tree), settings_(std::move(settings)), previous_(previous) {}

  // SOURCE, the entry `e` (name "") of `folder`, at the root. Fails when SOURCE cannot be used at
  // all (a root that cannot be listed; a file no kind takes); problems inside become ERROR.txt.
  Status AddSource(const Folder& folder, const Entry& e);

 private:
  void AddEntry(Ino parent, const Folder& folder, const Entry& e);
  // A directory seen from inside (`folder` is it, `self` its entry) as parent/self.name, or the
  // root when self.name is empty: a store when a kind takes it, else mirrored.
  void AddFolder(Ino parent, const Folder& folder, const Entry& self,
                 const Result<std::vector<Entry>>& listed);
  void AddLazyFolder(Ino parent, std::shared_ptr<const Folder> folder, const Entry& self);
  void Mirror(Ino dir, const Folder& folder, const std::vector<Entry>& listed);
  // True when a kind took `e` (its folder, or ERROR.txt), or a rescan copied it unchanged.
  // `object` (optional): set to the entry's one-object stamp if a kind took it, for the
  // pass-through.
  bool AddStore(Ino parent, const Folder& folder, const Entry& e, const std::vector<Entry>* listing,
                std::optional<StoreStamp>* object = nullptr);
  void AddPassThrough(Ino parent, const Folder& folder, const Entry& e, const StoreStamp* stamp);
  bool Reuse(Ino parent, const std::string& name, const std::string& change);
  std::string PathOf(Ino parent, const std::string& name) const;

  TreeWriter out_;
  std::shared_ptr<const WalkSettings> settings_;
  const Tree* previous_;
};

}  // namespace omicsfs::vfs
