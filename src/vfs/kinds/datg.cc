// datg matrices: NAME.datg with NAME.rows.txt.gz and NAME.cols.txt.gz beside it (the
// systemsgenetics Java writer's layout), shown as NAME.datg/. Its companions and checksums are not
// shown beside it. Its folder makes slice folders on lookup (rows=, cols=: datg_slices.cc).
#include "vfs/kinds/datg.h"

#include "formats/datg/reader.h"
#include "text/tsv_source.h"

namespace omicsfs::vfs {
namespace {

using formats::datg::DatgFile;
using formats::datg::DatgMatrix;
using Names = std::shared_ptr<const std::vector<std::string>>;

// The views of a datg matrix reader: the whole file or a slice of it. `m` is a formats::
// MatrixReader: the matrix views of other kinds (text/mtx_source.h, the 10x names) take it as
// they are.
struct DatgViews {
  std::shared_ptr<const DatgMatrix> m;
  std::string where;  // the store, and a slice's selectors
  RegionIndexes indexes = RegionIndexes::kTbi;
  std::string Describe() const { return m->Describe(); }
  std::shared_ptr<const text::NamesSource> Listed(bool rows, const std::string& n) const {
    Names names(m, rows ? &m->row_names() : &m->col_names());
    return std::make_shared<const text::NamesSource>(
        std::move(names), text::NamesSource::Layout::kOnePerLine, 0, n + " of " + where);
  }
  std::shared_ptr<const text::DatgTsvSource> Matrix(const std::string& n) const {
    return std::make_shared<const text::DatgTsvSource>(m, n + " of " + where);
  }
};

const Catalog<DatgViews>& DatgCatalog() {
  static const Catalog<DatgViews> c{
      .views =
          {
              {.name = "matrix.tsv",
               .size = SizeBy::kRendered,
               .make = [](const DatgViews& s, const std::string& n) { return s.Matrix(n); }},
              {.name = "rownames.txt",
               .size = SizeBy::kFixed,
               .make = [](const DatgViews& s,
                          const std::string& n) { return s.Listed(/*rows=*/true, n); }},
              {.name = "colnames.txt",
               .size = SizeBy::kFixed,
               .make = [](const DatgViews& s,
                          const std::string& n) { return s.Listed(/*rows=*/false, n); }},
          },
      .gates = {}};
  return c;
}

constexpr const char* kNames[] = {".rows.txt.gz", ".cols.txt.gz"};  // read, and stamped
constexpr const char* kChecksums[] = {".sha256", ".md5"};           // only hidden

std::string Stem(const std::string& base) { return base.substr(0, base.size() - 5); }

class DatgStore : public OpenedStore {
 public:
  DatgStore(std::shared_ptr<const DatgMatrix> m, std::string where, std::string base)
      : m_(std::move(m)), where_(std::move(where)), base_(std::move(base)) {}
  StoreContext Context() const override { return {where_, ""}; }
  std::shared_ptr<const Sliceable> Slices(const ViewSink&) const override {
    return DatgSlices(m_->shared_file(), where_, base_);
  }
  void AddViews(ViewSink& sink) const override {
    DatgViews s;
    s.m = m_;
    s.where = sink.context().where;  // a slice's: the store and its selectors
    vfs::AddViews(DatgCatalog(), s, sink);
  }

 private:
  std::shared_ptr<const DatgMatrix> m_;
  std::string where_, base_;
};

class Kind : public StoreKind {
 public:
  std::string Name() const override { return "datg"; }
  std::string RecognisedBy() const override {
    return "NAME.datg + NAME.rows.txt.gz + NAME.cols.txt.gz";
  }
  std::vector<std::string> ViewNames() const override { return CatalogNames(DatgCatalog()); }
  std::vector<std::pair<std::string, SelectorRows>> Slicing() const override {
    return {{"", DatgSliceRows()}};
  }
  bool Recognize(const Probe& p) const override {
    return p.entry.type == EntryType::kFile && p.entry.base.size() > 5 &&
           p.entry.base.ends_with(".datg");
  }
  StampScope Scope() const override { return StampScope::kFiles; }
  std::vector<std::string> Companions(const std::string& base) const override {
    std::vector<std::string> out;
    for (const char* ext : kNames) out.push_back(Stem(base) + ext);
    return out;
  }
  std::vector<std::string> Consumed(const Entry& e) const override {
    if (e.type != EntryType::kFile || !(e.base.size() > 5 && e.base.ends_with(".datg"))) return {};
    std::vector<std::string> out = Companions(e.base);
    for (const char* ext : kChecksums) out.push_back(Stem(e.base) + ext);
    return out;
  }
  bool DatedByEntry() const override { return true; }
  Result<std::unique_ptr<OpenedStore>> Open(const Located& at) const override {
    const std::string where = at.folder.Where(at.entry.key);
    const std::string stem = Stem(at.entry.key);
    std::vector<std::string> parts{at.entry.key};
    for (const char* ext : kNames) parts.push_back(stem + ext);
    std::shared_ptr<const io::ByteSource> opened[3];
    std::string missing;
    for (size_t i = 0; i < parts.size(); ++i) {
      auto part = at.folder.Open(parts[i], &at.stamp);
      if (!part.ok() && part.status().sys_errno() != ENOENT &&
          part.status().code() != ErrorCode::kNotFound) {
        return part.status();
      }
      if (part.ok()) opened[i] = std::move(part).value();
      if (opened[i] == nullptr)
        missing += (missing.empty() ? "" : ", ") + Stem(at.entry.base) +
                   (i == 0 ? ".datg" : kNames[i - 1]);
    }
    if (!missing.empty()) {
      return NotFoundError(where + ": a datg matrix needs its name files beside it; missing " +
                           missing);
    }
    ASSIGN_OR_RETURN(auto file, DatgFile::Open(opened[0], *opened[1], *opened[2]));
    return DatgViewsOf(DatgMatrix::Whole(std::move(file)), where, at.entry.base);
  }
};

}  // namespace

std::unique_ptr<OpenedStore> DatgViewsOf(std::shared_ptr<const DatgMatrix> m, std::string where,
                                         std::string base) {
  return std::make_unique<DatgStore>(std::move(m), std::move(where), std::move(base));
}

const StoreKind& DatgKind() {
  static const Kind kind;
  return kind;
}

}  // namespace omicsfs::vfs
