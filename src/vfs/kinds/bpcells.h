// BPCells store kinds (a directory store; store groups in an HDF5 file) and their views.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/array_store.h"
#include "vfs/kinds/kind.h"

namespace omicsfs::vfs {

const StoreKind& BpcellsDirKind();
const StoreKind& BpcellsHdf5Kind();

// The views of one BPCells store (matrix or fragments, by its version) into `sink`; a store that
// cannot be opened is ERROR.txt there.
void AddBpcellsViews(Result<std::shared_ptr<const io::ArrayStore>> store, ViewSink& sink);
std::vector<std::string> BpcellsViewNames();

}  // namespace omicsfs::vfs
