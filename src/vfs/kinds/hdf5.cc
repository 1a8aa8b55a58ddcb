#include "vfs/kinds/hdf5.h"

#include "util/log.h"

namespace omicsfs::vfs {
namespace {

Result<std::optional<io::H5Probe>> Look(const Folder& folder, const Entry& entry,
                                        const StoreStamp& stamp, const io::H5Vetter& vetter,
                                        std::shared_ptr<const io::ByteSource>* source) {
  auto opened = folder.Open(entry.key, &stamp);
  if (!opened.ok() || *opened == nullptr) {
    LogWarning((opened.ok() ? folder.Where(entry.key) + ": gone since the listing"
                            : opened.status().message()) +
               "; shown as a plain file");
    return std::optional<io::H5Probe>();
  }
  auto hdf5 = io::HasHdf5Signature(**opened);
  if (!hdf5.ok()) {
    LogWarning((*opened)->Describe() + ": " + hdf5.status().message() + "; shown as a plain file");
    return std::optional<io::H5Probe>();
  }
  if (!*hdf5) return std::optional<io::H5Probe>();
  *source = *opened;
  ASSIGN_OR_RETURN(io::H5Probe probe, io::ProbeHdf5File(vetter, *source));
  if (probe.cut) {
    LogWarning((*source)->Describe() +
               ": more groups or attributes than a probe reports; those past its bounds "
               "are not looked at");
  }
  return std::optional<io::H5Probe>(std::move(probe));
}

}  // namespace

bool IsHdf5Name(const std::string& n) {
  for (const char* ext : {".h5", ".hdf5", ".he5", ".hdf", ".h5ad", ".loom"}) {
    if (n.ends_with(ext)) return true;
  }
  return false;
}

Result<const io::H5Probe*> Hdf5File::Probe(const StoreStamp& stamp) const {
  if (!probe_) probe_.emplace(Look(folder_, entry_, stamp, vetter_, &source_));
  if (!probe_->ok()) return probe_->status();
  return **probe_ ? &***probe_ : nullptr;
}

Result<std::unique_ptr<io::ArrayStore>> Hdf5File::OpenGroup(const std::string& group,
                                                            const std::string& version) const {
  if (source_ == nullptr) return InternalError(Where() + ": not probed");
  ASSIGN_OR_RETURN(auto store, io::OpenHdf5Group(source_, group, version));
  return std::unique_ptr<io::ArrayStore>(std::move(store));
}

}  // namespace omicsfs::vfs
