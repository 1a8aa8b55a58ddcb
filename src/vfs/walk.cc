#include "vfs/walk.h"

#include <optional>
#include <set>
#include <utility>

#include "util/log.h"
#include "vfs/kinds/kind.h"
#include "vfs/kinds/registry.h"
#include "vfs/slices.h"

namespace omicsfs::vfs {

bool Probe::Lists(const std::string& name, EntryType type) const {
  if (listing == nullptr) return false;
  for (const Entry& e : *listing) {
    // A symlink may stand for the file (git-annex and DataLad datasets are all links): opening
    // it follows the link, as reading the store will.
    if (e.name == name && (e.type == type || e.type == EntryType::kSymlink)) return true;
  }
  return false;
}

Status Walker::AddSource(const Folder& folder, const Entry& e) {
  out_.SetRoot(e.meta, /*from_file=*/e.synthetic || e.type != EntryType::kDirectory);
  if (e.type == EntryType::kDirectory) {
    auto self_folder = folder.Enter(e);
    if (self_folder == nullptr)
      return InvalidArgumentError(folder.Where(e.key) + ": cannot be entered");
    Entry self = e;
    self.key.clear();
    auto listed = self_folder->List();
    if (!listed.ok()) return listed.status();
    AddFolder(kRootIno, *self_folder, self, listed);
    return OkStatus();
  }
  if (AddStore(kRootIno, folder, e, nullptr)) return OkStatus();
  return InvalidArgumentError(
      folder.Where(e.key) +
      ": not a directory or a store (a datg matrix, a zipped VCF Zarr store, an HDF5 file "
      "with BPCells stores)");
}

std::string Walker::PathOf(Ino parent, const std::string& name) const {
  const std::string at = out_.tree().PathOf(parent);
  return at.empty() ? name : at + "/" + name;
}

bool Walker::Reuse(Ino parent, const std::string& name, const std::string& change) {
  return previous_ != nullptr &&
         previous_->CopyInto(PathOf(parent, name), change, out_.tree(), parent);
}

void Walker::AddEntry(Ino parent, const Folder& folder, const Entry& e) {
  switch (e.type) {
    case EntryType::kSymlink:
      out_.AddSymlink(parent, e.name, e.meta, e.link_target);
      return;
    case EntryType::kFile: {
      std::optional<StoreStamp> object;
      if (!AddStore(parent, folder, e, nullptr, &object))
        AddPassThrough(parent, folder, e, object ? &*object : nullptr);
      return;
    }
    case EntryType::kDirectory: {
      std::shared_ptr<const Folder> sub = folder.Enter(e);
      if (sub == nullptr) return;
      Entry self = e;
      self.key.clear();
      // Lazy unless the served tree had built it (a rescan compares what was opened).
      if (sub->Lazy() && !(previous_ != nullptr && previous_->Loaded(PathOf(parent, e.name)))) {
        return AddLazyFolder(parent, std::move(sub), self);
      }
      AddFolder(parent, *sub, self, sub->List());
      return;
    }
  }
}

void Walker::AddFolder(Ino parent, const Folder& folder, const Entry& self,
                       const Result<std::vector<Entry>>& listed) {
  if (listed.ok() && AddStore(parent, folder, self, &*listed)) return;
  const Ino dir =
      self.name.empty() ? kRootIno : out_.AddDir(parent, self.name, self.meta, self.synthetic);
  if (dir == 0) return;
  if (!listed.ok()) {
    ViewSink sink(out_, dir, self.meta, "", settings_->views);
    return sink.AddError(listed.status());
  }
  Mirror(dir, folder, *listed);
}

// Built by AddFolder when first looked into (Tree::Load): a mount of a bucket answers after one
// listing of its root instead of opening every store first (the corpus: ~50 stores, 28 s over
// Swift). Built afresh, without the served tree.
void Walker::AddLazyFolder(Ino parent, std::shared_ptr<const Folder> folder, const Entry& self) {
  const Ino dir = out_.AddDir(parent, self.name, self.meta, self.synthetic);
  if (dir == 0) return;
  auto loader = std::make_shared<DirLoader>();
  loader->load = [settings = settings_, folder = std::move(folder), self] {
    auto sub = std::make_unique<Tree>();
    Entry root = self;
    root.name.clear();
    Walker(sub.get(), settings).AddFolder(kRootIno, *folder, root, folder->List());
    return sub;
  };
  out_.tree().node(dir).loader = std::move(loader);
}

void Walker::Mirror(Ino dir, const Folder& folder, const std::vector<Entry>& listed) {
  std::set<std::string> consumed, consumers;  // datg matrices consume their companions
  for (const Entry& e : listed) {
    for (const StoreKind* kind : Kinds()) {
      auto names = kind->Consumed(e);
      if (!names.empty()) consumers.insert(e.name);
      consumed.insert(names.begin(), names.end());
    }
  }
  for (const Entry& e : listed) {
    if (consumed.count(e.name) && !consumers.count(e.name)) continue;
    AddEntry(dir, folder, e);
  }
}

bool Walker::AddStore(Ino parent, const Folder& folder, const Entry& e,
                      const std::vector<Entry>* listing, std::optional<StoreStamp>* object) {
  const Probe probe{folder, e, listing};
  // One stamp per scope: a kind that declines leaves it to the next (a remote tree's stamp is a
  // recursive listing).
  std::optional<std::pair<std::pair<StampScope, std::vector<std::string>>, Result<StoreStamp>>>
      taken;
  const Hdf5File hdf5(folder, e, settings_->h5vet);  // one probe, whichever HDF5 kinds ask
  for (const StoreKind* kind : Kinds()) {
    if (!kind->Recognize(probe)) continue;
    const bool from_file = kind->Scope() != StampScope::kTree;
    auto what = std::make_pair(kind->Scope(), kind->Companions(e.base));
    if (!taken || taken->first != what)
      taken.emplace(what, folder.Stamp(e, what.first, what.second));
    const Result<StoreStamp>& stamp = taken->second;
    if (object != nullptr && what.first == StampScope::kObject && stamp.ok()) *object = *stamp;
    const std::string name = e.name.empty() ? "" : kind->NodeName(e.name);
    if (stamp.ok() && Reuse(parent, name, stamp->change)) return true;
    Result<std::unique_ptr<OpenedStore>> opened = std::unique_ptr<OpenedStore>();
    if (stamp.ok()) {
      opened = kind->Open(Located{folder, e, *stamp, hdf5, settings_->views.pool});
    } else {
      // A guess the stamp cannot back is claimed only if opening confirms it (the stamp's error
      // is then shown); an object that cannot be opened is passed over as a plain one would be.
      if (kind->Guessed(folder)) {
        auto confirmed = kind->Open(Located{folder, e, StoreStamp{}, hdf5, settings_->views.pool});
        if (!confirmed.ok() || *confirmed == nullptr) continue;
      }
      opened = stamp.status();
    }
    if (opened.ok() && *opened == nullptr) continue;  // not of this kind after all
    Meta meta = e.meta;
    if (stamp.ok()) meta.perm &= stamp->readable;
    Ino dir = kRootIno;
    if (!name.empty()) {
      dir = out_.AddDir(parent, name, from_file ? meta : e.meta, from_file || e.synthetic);
      if (dir == 0) {
        LogWarning(PathOf(parent, name) + ": a " + kind->Name() +
                   " store and a file of that name; the store is not shown");
        return true;
      }
    }
    if (stamp.ok() && !kind->DatedByEntry()) meta.mtime = stamp->newest_mtime;
    out_.tree().node(dir).fingerprint = stamp.ok() ? stamp->change : "";
    ViewSink sink(out_, dir, meta, stamp.ok() ? stamp->index_key : "", settings_->views);
    if (!opened.ok()) {
      sink.AddError(opened.status());
    } else {
      ShowStore(**opened, sink);
    }
    return true;
  }
  return false;
}

void Walker::AddPassThrough(Ino parent, const Folder& folder, const Entry& e,
                            const StoreStamp* stamp) {
  std::string change;
  auto content = folder.PassThrough(e, stamp, &change);
  if (content == nullptr) return;
  if (Reuse(parent, e.name, change)) return;
  const Ino file = out_.AddFile(parent, e.name, e.meta, std::move(content));
  if (file != 0) out_.tree().node(file).fingerprint = change;
}

}  // namespace omicsfs::vfs
