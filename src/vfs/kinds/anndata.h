// AnnData store kind (issue 37): an HDF5 file whose root's encoding-type is "anndata" (`.h5ad`).
#pragma once

#include "vfs/kinds/kind.h"

namespace omicsfs::vfs {

const StoreKind& AnnDataHdf5Kind();
// A directory whose Zarr root attributes say encoding-type anndata; NAME.zarr.zip of one.
const StoreKind& AnnDataZarrDirKind();
const StoreKind& AnnDataZarrZipKind();

}  // namespace omicsfs::vfs
