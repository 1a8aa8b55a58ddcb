// Slices of a BPCells matrix: rows= / cols= by name, groups=@NAME over columns (pseudobulk.tsv).
#include "vfs/kinds/bpcells.h"

namespace omicsfs::vfs {

std::shared_ptr<const Sliceable> MatrixSlices(std::shared_ptr<const formats::bpcells::Matrix> m, std::string where) {
  return nullptr;  // not yet: the folder makes no slices
}

}  // namespace omicsfs::vfs
