// AnnData `.h5ad` files: NAME.h5ad/ shows X's matrix views (the matrix catalog of
// vfs/kinds/bpcells.h, through the matrix reader contract: whatever views a matrix folder has, an
// AnnData folder has), `layers/NAME/` and `raw/` the same for each layer and raw/X, and obs.tsv,
// var.tsv (raw/var.tsv) as pandas writes them. obsm, obsp, varm, varp and uns are not shown.
#include "vfs/kinds/anndata.h"

#include "formats/anndata/anndata.h"
#include "io/h5_vet.h"
#include "text/dataframe_source.h"
#include "util/log.h"
#include "vfs/kinds/bpcells.h"
#include "vfs/slices.h"

namespace omicsfs::vfs {
namespace {

namespace ad = formats::anndata;

class AnnDataStore : public OpenedStore {
 public:
  AnnDataStore(std::shared_ptr<const ad::AnnData> a, const Hdf5File& file, const StoreStamp& stamp)
      : a_(std::move(a)), file_(file), stamp_(stamp) {}

  void AddViews(ViewSink& sink) const override {
    bool x = false;
    for (const auto& m : a_->matrices()) {
      if (!m.folder.empty()) continue;
      x = true;
      if (!m.reader.ok()) {
        sink.AddError(m.reader.status());
      } else {
        ShowStore(*MatrixViewsOf(*m.reader), sink);
      }
    }
    if (!x) sink.SetContext({a_->Describe(), ""});
    AddTable(sink, "obs.tsv", "/obs");
    AddTable(sink, "var.tsv", "/var");
    for (const auto& m : a_->matrices()) {
      if (m.folder.empty()) continue;
      auto sub = sink.Sub(m.folder, file_.GroupIndexKey(stamp_, m.path));
      if (!sub) {
        LogWarning(a_->Describe() + ":" + m.path + ": its folder collides with a view; not shown");
        continue;
      }
      if (!m.reader.ok()) {
        sub->AddError(m.reader.status());
      } else {
        ShowStore(*MatrixViewsOf(*m.reader), *sub);
      }
    }
    if (a_->has_raw_var()) AddTable(sink, "raw/var.tsv", "/raw/var");
  }

 private:
  void AddTable(ViewSink& sink, const std::string& name, const std::string& group) const {
    const ad::Elements& e = a_->elements();
    const uint64_t rows = TableRows(group);
    auto elements = a_->shared_elements();
    auto source = std::make_shared<const text::DataFrameSource>(
        [elements, group]() -> Result<std::shared_ptr<const ad::Table>> {
          ASSIGN_OR_RETURN(ad::Table t, ad::ReadTable(*elements, group));
          return std::make_shared<const ad::Table>(std::move(t));
        },
        rows, name + " of " + e.Describe());
    sink.AddView(name, sink.MakeText(name, source));
  }

  uint64_t TableRows(const std::string& group) const { return a_->Rows(group); }

  std::shared_ptr<const ad::AnnData> a_;
  const Hdf5File& file_;
  const StoreStamp& stamp_;
};

class AnnDataKind : public StoreKind {
 public:
  std::string Name() const override { return "AnnData"; }
  std::string RecognisedBy() const override {
    return "HDF5 file whose root's encoding-type is anndata (NAME.h5ad)";
  }
  std::vector<std::string> ViewNames() const override {
    return {"the matrix views of X", "obs.tsv", "var.tsv", "layers/NAME/", "raw/", "raw/var.tsv"};
  }
  std::vector<std::pair<std::string, SelectorRows>> Slicing() const override {
    return {{"", MatrixSliceRows()}};
  }
  bool Recognize(const Probe& p) const override {
    if (p.entry.type != EntryType::kFile) return false;
    return p.folder.CheapPeek() || p.entry.name.empty() || IsHdf5Name(p.entry.base);
  }
  StampScope Scope() const override { return StampScope::kObject; }
  bool Guessed(const Folder&) const override { return true; }
  bool DatedByEntry() const override { return true; }
  std::vector<std::string> Hdf5StoreMarks() const override { return {"encoding-type"}; }
  Result<std::unique_ptr<OpenedStore>> Open(const Located& at) const override {
    ASSIGN_OR_RETURN(const io::H5Probe* probe, at.hdf5.Probe(at.stamp));
    if (probe == nullptr || probe->Root() == nullptr) return std::unique_ptr<OpenedStore>();
    const std::string* enc = probe->Root()->Attribute("encoding-type");
    if (enc == nullptr || *enc != "anndata") return std::unique_ptr<OpenedStore>();
    if (!probe->vetted.ok()) return probe->vetted;
    auto source = at.hdf5.source();
    auto elements = ad::Hdf5Elements(
        at.hdf5.Where(), *probe,
        [source](const std::string& group) -> Result<std::unique_ptr<io::H5ArrayStore>> {
          return io::OpenHdf5Group(source, group, std::string());
        });
    ASSIGN_OR_RETURN(auto a, ad::AnnData::Open(std::move(elements)));
    return std::unique_ptr<OpenedStore>(new AnnDataStore(std::move(a), at.hdf5, at.stamp));
  }
};

}  // namespace

const StoreKind& AnnDataHdf5Kind() {
  static const AnnDataKind kind;
  return kind;
}

}  // namespace omicsfs::vfs
