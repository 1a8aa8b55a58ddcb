// VCF Zarr store kinds: a directory store and a zipped one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/vcz/store.h"
#include "vfs/kinds/kind.h"
#include "vfs/slices.h"

namespace omicsfs::vfs {

const StoreKind& VczDirKind();
const StoreKind& VczZipKind();

// The stem views are named by: the store's name without .zip, then .vcz or .zarr.
std::string VczStem(std::string base);
std::vector<std::string> VczViewNames();

// The views of an opened store (or of a slice of one); its Slices() are region=, samples=,
// format= (vcz_slices.cc).
std::unique_ptr<OpenedStore> VczViewsOf(std::shared_ptr<const formats::vcz::Store> store,
                                        std::string where, std::string base);
// The selectors of its slices (for --help).
const SelectorRows& VczSliceRows();
// What the slices of `store` select.
std::shared_ptr<const Sliceable> VczSlices(std::shared_ptr<const formats::vcz::Store> store,
                                           std::string where, std::string base);

}  // namespace omicsfs::vfs
