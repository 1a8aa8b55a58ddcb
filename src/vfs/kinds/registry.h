// The store kinds, in the order the walk asks them (an explicit list: objects of a static
// library that register themselves are dropped by the linker when nothing names them).
#pragma once

#include <string>
#include <vector>

#include "vfs/kinds/kind.h"

namespace omicsfs::vfs {

const std::vector<const StoreKind*>& Kinds();

// Every key a store of any kind may hold where the backend has no listing (plain HTTP).
std::vector<std::string> FixedStoreKeys();

// The attributes that mark the HDF5 groups some kind opens (the vetting helper reads those).
std::vector<std::string> Hdf5StoreMarks();

// The stores section of --help: each kind, what it is recognised by and its views.
std::string KindsHelp();

}  // namespace omicsfs::vfs
