// Slices of BPCells fragments: region= / regions=@NAME (tabix), cells=, groups=@NAME.
#include "vfs/kinds/bpcells.h"

namespace omicsfs::vfs {

std::shared_ptr<const Sliceable> FragmentSlices(std::shared_ptr<const formats::bpcells::Fragments> f, std::string where) {
  return nullptr;  // not yet: the folder makes no slices
}

}  // namespace omicsfs::vfs
