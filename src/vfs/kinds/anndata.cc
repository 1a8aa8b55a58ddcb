// AnnData `.h5ad` files: NAME.h5ad/ shows X's matrix views (the matrix catalog of
// vfs/kinds/bpcells.h, through the matrix reader contract: whatever views a matrix folder has, an
// AnnData folder has), `layers/NAME/` and `raw/` the same for each layer and raw/X, and obs.tsv,
// var.tsv (raw/var.tsv) as pandas writes them. obsm, obsp, varm, varp and uns are not shown.
#include "vfs/kinds/anndata.h"

#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "formats/anndata/anndata.h"
#include "io/h5_vet.h"
#include "io/space_blob_store.h"
#include "io/zip/zip_space.h"
#include "text/dataframe_source.h"
#include "util/log.h"
#include "vfs/kinds/bpcells.h"
#include "vfs/slices.h"

namespace omicsfs::vfs {
namespace {

namespace ad = formats::anndata;

// The persisted-index key of a folder below the store's ("/layers/counts", "/raw/X").
using SubKey = std::function<std::string(const std::string& path)>;

class AnnDataStore : public OpenedStore {
 public:
  AnnDataStore(std::shared_ptr<const ad::AnnData> a, SubKey sub_key)
      : a_(std::move(a)), sub_key_(std::move(sub_key)) {}

  void AddViews(ViewSink& sink) const override {
    bool x = false;
    for (const auto& m : a_->matrices()) {
      if (!m.folder.empty()) continue;
      x = true;
      if (!m.reader.ok()) {
        sink.AddError(m.reader.status());
      } else {
        ShowStore(*MatrixViewsOf(*m.reader, GroupsOfObs()), sink);
      }
    }
    if (!x) sink.SetContext({a_->Describe(), ""});
    AddTable(sink, "obs.tsv", "/obs");
    AddTable(sink, "var.tsv", "/var");
    for (const auto& m : a_->matrices()) {
      if (m.folder.empty()) continue;
      auto sub = sink.Sub(m.folder, sink.index_key().empty() ? "" : sub_key_(m.path));
      if (!sub) {
        LogWarning(a_->Describe() + ":" + m.path + ": its folder collides with a view; not shown");
        continue;
      }
      if (!m.reader.ok()) {
        sub->AddError(m.reader.status());
      } else {
        ShowStore(*MatrixViewsOf(*m.reader, m.folder == "raw" ? nullptr : GroupsOfObs()), *sub);
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

  // groups=obs:COLUMN: a group per value of the column, named by its text in obs.tsv (a `/`
  // written %2F), in bytewise order; cells whose value is missing (or empty, or `.`/`..`,
  // which cannot name a folder) are in none. Members are obs names.
  InlineGroupsFn GroupsOfObs() const {
    return [a = a_](const std::string& value) -> Result<Groups> {
      if (!value.starts_with("obs:")) {
        return InvalidArgumentError("groups=" + value +
                                    ": groups of this store are obs:COLUMN, or @NAME for a table");
      }
      const std::string column = value.substr(4);
      ASSIGN_OR_RETURN(auto obs, a->Obs());
      const ad::Column* c = nullptr;
      for (const auto& col : obs->columns) {
        if (col.name == column) c = &col;
      }
      if (c == nullptr) {
        std::string known;
        for (const auto& col : obs->columns) known += (known.empty() ? "" : ", ") + col.name;
        return NotFoundError("groups=" + value + ": obs has no column " + Quote(column) +
                             " (its columns: " + (known.empty() ? "none" : known) + ")");
      }
      std::map<std::string, std::vector<std::string>> by;
      std::string text;
      for (uint64_t i = 0; i < obs->index->size(); ++i) {
        text.clear();
        text::AppendCellText(&text, *c, i);
        if (text.empty() || text == "." || text == "..") continue;
        std::string name;
        for (char ch : text) name += ch == '/' ? std::string("%2F") : std::string(1, ch);
        by[name].push_back((*obs->index)[i]);
      }
      Groups g;
      for (auto& [name, members] : by) {
        g.names.push_back(name);
        g.members.push_back(std::move(members));
      }
      return g;
    };
  }

  std::shared_ptr<const ad::AnnData> a_;
  SubKey sub_key_;  // called only while the walk shows the store
};

Result<std::unique_ptr<OpenedStore>> OpenZarr(std::shared_ptr<const io::ByteSpace> space,
                                              const Located& at) {
  auto elements = ad::ZarrElements(std::make_shared<io::SpaceBlobStore>(std::move(space)), at.pool);
  ASSIGN_OR_RETURN(auto a, ad::AnnData::Open(std::move(elements)));
  // A Zarr store's key covers its tree: a matrix below it is keyed by the store's key and path.
  return std::unique_ptr<OpenedStore>(new AnnDataStore(
      std::move(a),
      [key = at.stamp.index_key](const std::string& path) { return key + "\nmatrix " + path; }));
}

// Whether a Zarr store's root attributes (v2 .zattrs, v3 zarr.json) say encoding-type anndata.
bool LooksAnnData(std::shared_ptr<const io::ByteSpace> space) {
  io::SpaceBlobStore store(std::move(space), 1 << 20);
  for (const char* key : {".zattrs", "zarr.json"}) {
    auto bytes = store.Get(key);
    if (!bytes.ok() || !*bytes) continue;
    auto j = nlohmann::json::parse(**bytes, nullptr, false);
    if (!j.is_object()) continue;
    const nlohmann::json attrs = key[0] == '.' ? j : j.value("attributes", nlohmann::json());
    if (attrs.is_object() && attrs.value("encoding-type", "") == "anndata") return true;
  }
  return false;
}

class ZarrDirKind : public StoreKind {
 public:
  std::string Name() const override { return "AnnData Zarr (v2 or v3)"; }
  std::string RecognisedBy() const override {
    return "directory whose .zattrs/zarr.json say encoding-type anndata";
  }
  std::vector<std::string> ViewNames() const override { return {"as an .h5ad file's"}; }
  bool Recognize(const Probe& p) const override {
    if (p.entry.type != EntryType::kDirectory || !(p.Lists(".zattrs") || p.Lists("zarr.json")))
      return false;
    return !p.folder.CheapPeek() || LooksAnnData(p.folder.Space(p.entry, nullptr));
  }
  StampScope Scope() const override { return StampScope::kTree; }
  bool Guessed(const Folder& folder) const override { return !folder.CheapPeek(); }
  Result<std::unique_ptr<OpenedStore>> Open(const Located& at) const override {
    auto space = at.folder.Space(at.entry, &at.stamp);
    if (!LooksAnnData(space)) return std::unique_ptr<OpenedStore>();
    return OpenZarr(std::move(space), at);
  }
};

// NAME.zarr.zip holding an AnnData Zarr store at the archive's root (after VCF Zarr declined it).
class ZarrZipKind : public StoreKind {
 public:
  std::string Name() const override { return "zipped AnnData Zarr"; }
  std::string RecognisedBy() const override { return "NAME.zarr.zip (keys at the archive root)"; }
  std::vector<std::string> ViewNames() const override { return {"NAME.zarr/ as an .h5ad's"}; }
  bool Recognize(const Probe& p) const override {
    return p.entry.type == EntryType::kFile && p.entry.base.ends_with(".zarr.zip");
  }
  StampScope Scope() const override { return StampScope::kFiles; }
  bool Guessed(const Folder&) const override { return true; }
  std::string NodeName(const std::string& name) const override {
    return name.substr(0, name.size() - 4);
  }
  Result<std::unique_ptr<OpenedStore>> Open(const Located& at) const override {
    ASSIGN_OR_RETURN(auto archive, at.folder.Open(at.entry.key, &at.stamp));
    if (archive == nullptr)
      return NotFoundError(at.folder.Where(at.entry.key) + ": gone since the listing");
    ASSIGN_OR_RETURN(auto space, io::OpenZipSpace(std::move(archive)));
    if (!LooksAnnData(space)) return std::unique_ptr<OpenedStore>();
    return OpenZarr(std::move(space), at);
  }
};

class AnnDataKind : public StoreKind {
 public:
  std::string Name() const override { return "AnnData"; }
  std::string RecognisedBy() const override {
    return "HDF5 file whose root's encoding-type is anndata (NAME.h5ad)";
  }
  std::vector<std::string> ViewNames() const override {
    return {"X's matrix views (as a BPCells matrix's),",
            "obs.tsv,",
            "var.tsv,",
            "layers/NAME/,",
            "raw/ (+ raw/var.tsv);",
            "obsm, obsp, varm, varp, uns not shown"};
  }
  std::vector<std::pair<std::string, SelectorRows>> Slicing() const override {
    return {{"", MatrixSliceRowsWithOwnGroups()}};
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
    const Hdf5File& file = at.hdf5;
    const StoreStamp& stamp = at.stamp;
    return std::unique_ptr<OpenedStore>(new AnnDataStore(
        std::move(a),
        [&file, &stamp](const std::string& path) { return file.GroupIndexKey(stamp, path); }));
  }
};

}  // namespace

const StoreKind& AnnDataHdf5Kind() {
  static const AnnDataKind kind;
  return kind;
}

const StoreKind& AnnDataZarrDirKind() {
  static const ZarrDirKind kind;
  return kind;
}

const StoreKind& AnnDataZarrZipKind() {
  static const ZarrZipKind kind;
  return kind;
}

}  // namespace omicsfs::vfs
