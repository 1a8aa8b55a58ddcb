// Slices of a datg matrix: rows= and cols= by the names of rownames.txt and colnames.txt (inline,
// @NAME lists, ^ to exclude: rows of the selector table, vfs/selectors.h). Each resolves to a
// formats::datg::DatgMatrix of the root file (the chosen row and column indices, in the order
// given; store order for ^); the slice's views are the store's catalog over it.
#include "vfs/kinds/datg.h"

namespace omicsfs::vfs {
namespace {

using formats::datg::DatgFile;
using formats::datg::DatgMatrix;

class DatgSliceable : public Sliceable {
 public:
  DatgSliceable(std::shared_ptr<const DatgFile> file, std::string where, std::string base)
      : file_(std::move(file)),
        where_(std::move(where)),
        base_(std::move(base)),
        rows_([f = file_] { return NameChooser(f, &f->row_names()); }),
        cols_([f = file_] { return NameChooser(f, &f->col_names()); }) {}

  const SelectorRows& Rows() const override { return DatgSliceRows(); }
  const NameChooser& Chooser(const SelectorRow& row) const override {
    return (row.key == "rows" ? rows_ : cols_).get();
  }
  const std::string& Where() const override { return base_; }

  Result<std::unique_ptr<OpenedStore>> Cut(const std::vector<Chosen>& path,
                                           std::string* canonical) const override {
    std::optional<std::vector<uint64_t>> rows, cols;
    for (const Chosen& c : path) {
      (c.row->key == "rows" ? rows : cols) =
          std::vector<uint64_t>(c.indices.begin(), c.indices.end());
    }
    // The slice's identity (any order of the same selectors gives the same): long parts hashed.
    canonical->clear();
    for (const Chosen& c : path) {
      if (c.row->key == "rows")
        *canonical = "rows " + IndicesIdentity(c.indices) + "\n" + *canonical;
      if (c.row->key == "cols") *canonical += "cols " + IndicesIdentity(c.indices) + "\n";
    }
    ASSIGN_OR_RETURN(auto slice, DatgMatrix::Make(file_, std::move(rows), std::move(cols)));
    return DatgViewsOf(std::move(slice), where_, base_);
  }

 private:
  std::shared_ptr<const DatgFile> file_;
  std::string where_, base_;
  LazyChooser rows_, cols_;
};

}  // namespace

const SelectorRows& DatgSliceRows() {
  static const SelectorRows rows{&selectors::kRows, &selectors::kCols};
  return rows;
}

std::shared_ptr<const Sliceable> DatgSlices(std::shared_ptr<const DatgFile> file, std::string where,
                                            std::string base) {
  return std::make_shared<const DatgSliceable>(std::move(file), std::move(where), std::move(base));
}

}  // namespace omicsfs::vfs
