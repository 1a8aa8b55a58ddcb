// VCF Zarr store kinds: a directory store and a zipped one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/vcz/store.h"
#include "vfs/kinds/kind.h"
#include "vfs/slices.h"

namespace omicsfs::text {
class IndexStore;
}

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
// Where the rows a filter keeps persist: index_dir, under the store's key (empty: memory only).
struct FilterKeeper {
  const text::IndexStore* index = nullptr;
  std::string key;
};
// What the slices of `store` select.
std::shared_ptr<const Sliceable> VczSlices(std::shared_ptr<const formats::vcz::Store> store,
                                           std::string where, std::string base,
                                           FilterKeeper keeper = {});

}  // namespace omicsfs::vfs
