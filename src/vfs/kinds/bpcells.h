// BPCells store kinds (a directory store; store groups in an HDF5 file) and their views.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "formats/bpcells/fragments.h"
#include "formats/bpcells/matrix.h"
#include "formats/matrix.h"
#include "io/array_store.h"
#include "vfs/kinds/kind.h"
#include "vfs/slices.h"

namespace omicsfs::text {
class FragmentTally;
}

namespace omicsfs::vfs {

const StoreKind& BpcellsDirKind();
const StoreKind& BpcellsHdf5Kind();

// The views of one BPCells store (matrix or fragments, by its version) into `sink`; a store that
// cannot be opened is ERROR.txt there.
void AddBpcellsViews(Result<std::shared_ptr<const io::ArrayStore>> store, ViewSink& sink);
std::vector<std::string> BpcellsViewNames();

// The views of an opened matrix or fragments store, or of a slice of one; their Slices() are
// bpcells_matrix_slices.cc (rows=, cols=, groups=) and bpcells_fragment_slices.cc (region=,
// regions=, cells=, groups=). The matrix views take any matrix reader (formats/matrix.h), and
// the slices cut it through the reader's Slice.
// `groups`: the store's own groups of columns for groups=VALUE (AnnData's obs:COLUMN; null: none,
// and groups= takes only a table).
using InlineGroupsFn = std::function<Result<Groups>(const std::string& value)>;
std::unique_ptr<OpenedStore> MatrixViewsOf(std::shared_ptr<const formats::MatrixReader> m,
                                           InlineGroupsFn groups = nullptr);
// `tally`: a group's of a groups=@NAME folder (its text sizes, found for every group at once).
// `csi`: a slice's region index (its store's choice); nullopt: found from the store's end_max.
// `cpm`: a scale=cpm/ folder (only the coverage tracks, scaled).
std::unique_ptr<OpenedStore> FragmentViewsOf(
    std::shared_ptr<const formats::bpcells::Fragments> f, std::optional<bool> csi = std::nullopt,
    std::shared_ptr<const text::FragmentTally> tally = nullptr, size_t group = 0, bool cpm = false);
// The selectors of their slices (for --help).
const SelectorRows& MatrixSliceRows();
const SelectorRows& MatrixSliceRowsWithOwnGroups();  // groups= of a table or the store's own
const SelectorRows& FragmentSliceRows();
// What the slices of a store select; `where` names the store in messages.
std::shared_ptr<const Sliceable> MatrixSlices(std::shared_ptr<const formats::MatrixReader> m,
                                              std::string where, InlineGroupsFn groups = nullptr);
// `csi`: the store's region index choice; `scratch_dir`: where groups are regrouped ("": $TMPDIR).
std::shared_ptr<const Sliceable> FragmentSlices(
    std::shared_ptr<const formats::bpcells::Fragments> f, std::string where, bool csi,
    std::string scratch_dir);

}  // namespace omicsfs::vfs
