// VCF Zarr store kinds: a directory store and a zipped one.
#pragma once

#include <string>
#include <vector>

#include "vfs/kinds/kind.h"

namespace omicsfs::vfs {

const StoreKind& VczDirKind();
const StoreKind& VczZipKind();

// The stem views are named by: the store's name without .zip, then .vcz or .zarr.
std::string VczStem(std::string base);
std::vector<std::string> VczViewNames();

}  // namespace omicsfs::vfs
