// One file as the HDF5 store kinds (BPCells groups today; AnnData next) see it: its signature read
// and its probe run (io/h5_vet.h: the groups and their string attributes, by the vetting helper)
// once, when a kind first asks, however many HDF5 kinds then match on it. The walk makes one per
// entry it offers the kinds (vfs/walk.cc), so a file costs one helper run per walk.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "io/h5_vet.h"
#include "vfs/folder.h"

namespace omicsfs::vfs {

// Remote objects are probed for the HDF5 signature only when named like HDF5 files (.h5, .hdf5,
// .he5, .hdf, .h5ad, .loom): each probe is a request.
bool IsHdf5Name(const std::string& name);

class Hdf5File {
 public:
  Hdf5File(const Folder& folder, const Entry& entry, const io::H5Vetter& vetter)
      : folder_(folder), entry_(entry), vetter_(vetter) {}
  Hdf5File(const Hdf5File&) = delete;
  Hdf5File& operator=(const Hdf5File&) = delete;

  // The file's probe, its file opened under `stamp` (the first caller's: one entry has one).
  // nullptr when it is not an HDF5 file (no signature; or unreadable now: logged, then passed
  // through as a plain file would be); an error when it carries the signature but could not be
  // probed (shown as ERROR.txt). Only called from the walk's thread.
  Result<const io::H5Probe*> Probe(const StoreStamp& stamp) const;
  // One group of the probed file as an array store (`version` as the probe read it).
  Result<std::unique_ptr<io::ArrayStore>> OpenGroup(const std::string& group,
                                                    const std::string& version) const;
  // The index key of one group's store, from the file's stamp.
  std::string GroupIndexKey(const StoreStamp& stamp, const std::string& group) const {
    return folder_.PartIndexKey(entry_, stamp, group);
  }
  // The probed file's bytes (null before a probe found HDF5): for stores that open groups later.
  std::shared_ptr<const io::ByteSource> source() const { return source_; }
  // Where the file is, for messages.
  std::string Where() const { return folder_.Where(entry_.key); }

 private:
  const Folder& folder_;
  const Entry& entry_;
  const io::H5Vetter& vetter_;
  mutable std::shared_ptr<const io::ByteSource> source_;
  mutable std::optional<Result<std::optional<io::H5Probe>>> probe_;
};

}  // namespace omicsfs::vfs
