// Discovery: walks SOURCE once and builds the virtual tree — which stores exist and which views
// each yields; everything else is mirrored (directories, plain files, symlinks). The walk is
// vfs/walk.h, the store kinds vfs/kinds/, their views vfs/catalog.h.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cache/cache_pool.h"
#include "io/byte_source.h"
#include "io/h5_vet.h"
#include "text/virtual_file.h"
#include "vfs/tree.h"
#include "vfs/withdrawals.h"

namespace omicsfs::vfs {

struct DiscoverOptions {
  cache::CachePool* pool = nullptr;  // required; must outlive the tree
  text::SizingOptions sizing;
  std::string index_dir;  // derived data (e.g. transposed copies for dense views)
  std::string lists_dir;  // -o lists=DIR: the lists slices name (@NAME); empty: none
  io::H5Vetter h5vet;     // HDF5 files are vetted by this helper before libhdf5 parses them here
  // A rescan: the tree being served. Stores and files whose fingerprint is unchanged are copied
  // from it (same contents, no reopening); only changed ones are opened again.
  const Tree* previous = nullptr;
  // Symlinks are shown as their targets (stores if they are), not as links; loops stay links.
  bool follow_symlinks = false;
  // Files of the hidden control folder `.omicsfs/` at the root (the same contents on every
  // scan, so a rescan keeps them); none: no folder.
  std::vector<std::pair<std::string, std::shared_ptr<const FileContent>>> control_files;
  // A SOURCE that is not a local path (s3://, https://): its storage, then mirrored as a local
  // folder is. `space_key` empty: the space's root is SOURCE (a folder of stores, or one store);
  // otherwise SOURCE is that object of the space (a datg matrix).
  std::shared_ptr<const io::ByteSpace> space;
  std::string space_key;
  // The files not listed because they cannot exist (optional; must outlive the tree).
  Withdrawals* withdrawals = nullptr;
};

inline constexpr const char* kControlDir = ".omicsfs";

// SOURCE may be a directory (mirrored), a BPCells directory store, or an HDF5 file. Returns
// NotFound/Io when SOURCE cannot be used at all; problems with single stores become ERROR.txt.
Result<std::shared_ptr<Tree>> Discover(const std::string& source, const DiscoverOptions& options);

// Every key a store of any kind may hold, for backends without listings (plain HTTP).
std::vector<std::string> FixedKeys();
// The stores section of --help, from the store kinds and their view catalogs.
std::string StoresHelp();

}  // namespace omicsfs::vfs
