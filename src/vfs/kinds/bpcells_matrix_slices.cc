// Slices of a BPCells matrix: rows= / cols= by name (the stand-ins row1…/col1… of genes.tsv and
// barcodes.tsv where the store has no names), `@NAME` lists, `^` to exclude; groups=@NAME over
// columns, whose folder holds pseudobulk.tsv (rows of the selector table, vfs/selectors.h). Each
// path resolves to a formats::bpcells:: MatrixSubset of the store; the slice's views are the matrix
// catalog over Matrix::Slice.

#include "text/pseudobulk_source.h"
#include "vfs/kinds/bpcells.h"

namespace omicsfs::vfs {
namespace {

namespace bp = formats::bpcells;
using Matrix = formats::MatrixReader;
using bp::MatrixSubset;

// The subset's identity: the same for any order of the same selectors.
std::string Canonical(const MatrixSubset& s) {
  std::string out;
  if (s.rows) out += "rows " + IndicesIdentity(*s.rows) + "\n";
  if (s.cols) out += "cols " + IndicesIdentity(*s.cols) + "\n";
  return out;
}

class MatrixSliceable : public Sliceable {
 public:
  MatrixSliceable(std::shared_ptr<const Matrix> m, std::string where, InlineGroupsFn groups)
      : m_(std::move(m)),
        where_(std::move(where)),
        groups_(std::move(groups)),
        rows_([m = m_] { return NameChooser(m, &m->row_names(), m->rows(), "row"); }),
        cols_([m = m_] { return NameChooser(m, &m->col_names(), m->cols(), "col"); }) {}

  const SelectorRows& Rows() const override {
    return groups_ ? MatrixSliceRowsWithOwnGroups() : MatrixSliceRows();
  }
  Result<Groups> InlineGroups(const std::string& value) const override {
    if (!groups_) return Sliceable::InlineGroups(value);
    return groups_(value);
  }
  const NameChooser& Chooser(const SelectorRow& row) const override {
    return (row.key == "rows" ? rows_ : cols_).get();
  }
  const std::string& Where() const override { return where_; }

  Result<std::unique_ptr<OpenedStore>> Cut(const std::vector<Chosen>& path,
                                           std::string* canonical) const override {
    MatrixSubset subset = Subset(path);
    *canonical = Canonical(subset);
    ASSIGN_OR_RETURN(auto slice, m_->Slice(std::move(subset)));
    return MatrixViewsOf(std::move(slice));
  }

  Result<GroupCut> CutGroups(const std::vector<Chosen>& path, const Groups& groups,
                             const std::vector<Chosen>& members) const override {
    const MatrixSubset subset = Subset(path);
    GroupCut out;
    std::vector<int32_t> group_of_col(m_->cols(), -1);
    std::string identity;
    for (size_t g = 0; g < groups.names.size(); ++g) {
      for (uint32_t c : members[g].indices)
        group_of_col[c] = static_cast<int32_t>(g);  // an item is in one group at most
      identity += groups.names[g] + ":" + IndicesIdentity(members[g].indices) + "\n";
      MatrixSubset group{subset.rows, members[g].indices};
      out.canonical.push_back(Canonical(group));
      ASSIGN_OR_RETURN(auto slice, m_->Slice(std::move(group)));
      out.groups.push_back(MatrixViewsOf(std::move(slice)));
    }
    std::shared_ptr<const Matrix> base = m_;
    if (subset.rows) {
      ASSIGN_OR_RETURN(base, m_->Slice(MatrixSubset{subset.rows, std::nullopt}));
    }
    out.here = std::make_unique<Pseudobulk>(std::make_shared<const text::PseudobulkSource>(
        std::move(base), std::move(group_of_col), groups.names, "pseudobulk.tsv"));
    out.here_canonical = Canonical(subset) + "pseudobulk " + ShortIdentity(identity) + "\n";
    return out;
  }

 private:
  // The groups folder's own view.
  class Pseudobulk : public OpenedStore {
   public:
    explicit Pseudobulk(std::shared_ptr<const text::PseudobulkSource> source)
        : source_(std::move(source)) {}
    void AddViews(ViewSink& sink) const override {
      sink.AddView("pseudobulk.tsv", sink.MakeText("pseudobulk.tsv", source_));
    }

   private:
    std::shared_ptr<const text::PseudobulkSource> source_;
  };

  static MatrixSubset Subset(const std::vector<Chosen>& path) {
    MatrixSubset subset;
    for (const Chosen& c : path) (c.row->key == "rows" ? subset.rows : subset.cols) = c.indices;
    return subset;
  }

  std::shared_ptr<const Matrix> m_;
  std::string where_;
  InlineGroupsFn groups_;
  LazyChooser rows_, cols_;
};

}  // namespace

const SelectorRows& MatrixSliceRows() {
  static const SelectorRows rows{&selectors::kRows, &selectors::kCols, &selectors::kGroupsCols};
  return rows;
}

const SelectorRows& MatrixSliceRowsWithOwnGroups() {
  static const SelectorRows rows{&selectors::kRows, &selectors::kCols, &selectors::kGroupsObs};
  return rows;
}

std::shared_ptr<const Sliceable> MatrixSlices(std::shared_ptr<const formats::MatrixReader> m,
                                              std::string where, InlineGroupsFn groups) {
  return std::make_shared<const MatrixSliceable>(std::move(m), std::move(where), std::move(groups));
}

}  // namespace omicsfs::vfs
