// The datg store kind: NAME.datg beside NAME.rows.txt.gz and NAME.cols.txt.gz.
#pragma once

#include <memory>
#include <string>

#include "formats/datg/reader.h"
#include "vfs/kinds/kind.h"
#include "vfs/slices.h"

namespace omicsfs::vfs {

const StoreKind& DatgKind();

// The views of an opened matrix (DatgMatrix::Whole) or of a slice of it; its Slices() are rows=,
// cols= (datg_slices.cc). `where` names the store.
std::unique_ptr<OpenedStore> DatgViewsOf(std::shared_ptr<const formats::datg::DatgMatrix> m,
                                         std::string where, std::string base);
// The selectors of its slices (for --help).
const SelectorRows& DatgSliceRows();
// What the slices of `file` select; `base` (NAME.datg) names it in messages.
std::shared_ptr<const Sliceable> DatgSlices(std::shared_ptr<const formats::datg::DatgFile> file,
                                            std::string where, std::string base);

}  // namespace omicsfs::vfs
