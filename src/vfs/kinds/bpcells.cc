// BPCells stores: a directory of arrays with a `version` file, and store groups inside HDF5
// files. Both open to an io::ArrayStore whose version says matrix or fragments; one catalog each.
#include "vfs/kinds/bpcells.h"

#include "formats/bpcells/fragments.h"
#include "formats/bpcells/matrix.h"
#include "formats/bpcells/version.h"
#include "formats/row_access.h"
#include "io/space_array_store.h"
#include "text/bed_source.h"
#include "text/coverage_track.h"
#include "text/dense_source.h"
#include "text/h5ad_source.h"
#include "text/mtx_source.h"
#include "text/tabix_index.h"
#include "text/tenx_h5_source.h"
#include "text/tsv_source.h"

namespace omicsfs::vfs {
namespace {

namespace bp = formats::bpcells;
using text::NamesSource;
using Layout = NamesSource::Layout;
using Names = std::shared_ptr<const std::vector<std::string>>;

// The views of any matrix reader (formats/matrix.h): a BPCells store or a slice of one.
struct MatrixViews {
  std::shared_ptr<const formats::MatrixReader> m;
  formats::TransposedCopy persist;  // col-major stores: where matrix.tsv's transposed copy persists
  std::string index_dir;
  RegionIndexes indexes = RegionIndexes::kTbi;
  std::string Describe() const { return m->Describe(); }
  Names rows() const { return Names(m, &m->row_names()); }
  Names cols() const { return Names(m, &m->col_names()); }
  std::shared_ptr<const NamesSource> Listed(Names names, Layout layout, uint64_t n,
                                            const std::string& name,
                                            const char* prefix = "") const {
    return std::make_shared<const NamesSource>(std::move(names), layout, n,
                                               name + " of " + Describe(), prefix);
  }
};

// Cell Ranger v2 files beside matrix.mtx, and the v3 folder `10x/` (what scanpy's read_10x_mtx and
// Seurat's Read10X read when no genes.tsv lies beside the matrix): the BGZF twins of matrix.mtx and
// barcodes.tsv (the same views: sizes and cached chunks shared) and of `name\tname\tGene
// Expression` per row. Absent names: row1…/col1… (Read10X refuses numbers as names).
const Catalog<MatrixViews>& MatrixCatalog() {
  static const Catalog<MatrixViews> c{
      .views =
          {
              {.name = "matrix.mtx",
               .size = SizeBy::kMeasured,
               .make =
                   [](const MatrixViews& s, const std::string& n) {
                     return std::make_shared<const text::MtxSource>(s.m, n);
                   },
               .gz = "10x/matrix.mtx.gz"},
              {.name = "matrix.tsv",
               .size = SizeBy::kRendered,
               .make =
                   [](const MatrixViews& s, const std::string& n) {
                     return std::make_shared<const text::DenseTsvSource>(
                         s.m, n, std::vector<std::string>{s.index_dir}, s.persist);
                   }},
              {.name = "rownames.txt",
               .size = SizeBy::kFixed,
               .make =
                   [](const MatrixViews& s, const std::string& n) {
                     return s.Listed(s.rows(), Layout::kOnePerLine, 0, n);
                   }},
              {.name = "colnames.txt",
               .size = SizeBy::kFixed,
               .make =
                   [](const MatrixViews& s, const std::string& n) {
                     return s.Listed(s.cols(), Layout::kOnePerLine, 0, n);
                   }},
              {.name = "barcodes.tsv",
               .size = SizeBy::kFixed,
               .make =
                   [](const MatrixViews& s, const std::string& n) {
                     return s.Listed(s.cols(), Layout::kOnePerLine, s.m->cols(), n, "col");
                   },
               .gz = "10x/barcodes.tsv.gz"},
              {.name = "genes.tsv",
               .size = SizeBy::kFixed,
               .make =
                   [](const MatrixViews& s, const std::string& n) {
                     return s.Listed(s.rows(), Layout::kTwoColumns, s.m->rows(), n, "row");
                   }},
              {.name = "10x/features.tsv",
               .size = SizeBy::kFixed,
               .make =
                   [](const MatrixViews& s, const std::string& n) {
                     return s.Listed(s.rows(), Layout::kFeatures, s.m->rows(), n, "row");
                   },
               .gz = "10x/features.tsv.gz",
               .shown = false},
          },
      .gates = {}};
  return c;
}

struct FragmentViews {
  std::shared_ptr<const bp::Fragments> f;
  std::shared_ptr<const text::FragmentTally>
      tally;  // a group's: sizes found for all groups at once
  size_t group = 0;
  RegionIndexes indexes = RegionIndexes::kTbi;     // kCsi when an end reaches 2^29
  std::shared_ptr<const text::PackedNames> cells;  // one table for both BED views
  std::string Describe() const { return f->Describe(); }
  // The coverage tracks of `bed` (this folder's fragments.bed): `fed`, built by its sizing pass
  // when that runs; else by a pass of their own over its record spans (a scale=cpm/ folder's).
  static void AddTracks(const FragmentViews& s,
                        const std::shared_ptr<const text::VirtualTextFile>& bed, ViewSink& sink,
                        bool cpm, bool fed) {
    text::TrackSet::Options o;
    o.store = sink.settings().sizing.index;
    o.key = sink.index_key();
    o.threads = sink.settings().sizing.threads;
    o.fed = fed;
    auto set = std::make_shared<const text::TrackSet>(bed, s.f->chr_names(), std::move(o),
                                                      sink.context().where);
    if (fed) bed->AddSpanConsumer(set);
    for (auto file : {text::TrackFile::kCoverageBedGraph, text::TrackFile::kInsertionsBedGraph,
                      text::TrackFile::kCoverageBigWig, text::TrackFile::kInsertionsBigWig}) {
      sink.AddView(text::TrackSet::Name(file),
                   std::make_shared<const text::TrackView>(set, file, cpm));
    }
  }
  std::shared_ptr<const text::BedSource> Bed(text::BedSource::Style style,
                                             const std::string& n) const {
    return std::make_shared<const text::BedSource>(f, style, n, tally, group, cells);
  }
  std::shared_ptr<const NamesSource> Listed(const std::vector<std::string>& names,
                                            const std::string& n) const {
    return std::make_shared<const NamesSource>(Names(f, &names), Layout::kOnePerLine, 0,
                                               n + " of " + Describe());
  }
};

// The twins have a short first block (codec/bgzf.h, kBedtoolsLayout): `bgzip -l 0` bytes of a
// fragments file are empty to bedtools 2.30.
const Catalog<FragmentViews>& FragmentCatalog() {
  static const Catalog<FragmentViews> c{
      .views =
          {
              {.name = "fragments.bed",
               .size = SizeBy::kRendered,
               .make = [](const FragmentViews& s,
                          const std::string& n) { return s.Bed(text::BedSource::Style::kBed, n); },
               .gz = "fragments.bed.gz",
               .gz_layout = codec::bgzf::kBedtoolsLayout,
               .indexed = true,
               .derive =
                   [](const FragmentViews& s,
                      const std::shared_ptr<const text::VirtualTextFile>& bed, ViewSink& sink) {
                     FragmentViews::AddTracks(s, bed, sink, /*cpm=*/false, /*fed=*/true);
                   },
               .derived = "coverage.bedgraph\ninsertions.bedgraph\ncoverage.bw\ninsertions.bw\n"
                          "scale=cpm/"},
              {.name = "fragments.tsv",
               .size = SizeBy::kRendered,
               .make = [](const FragmentViews& s,
                          const std::string& n) { return s.Bed(text::BedSource::Style::kTenX, n); },
               .gz = "fragments.tsv.gz",
               .gz_layout = codec::bgzf::kBedtoolsLayout,
               .indexed = true,
               .sized_with = "fragments.bed"},
              {.name = "chromosomes.txt",
               .size = SizeBy::kFixed,
               .make = [](const FragmentViews& s,
                          const std::string& n) { return s.Listed(s.f->chr_names(), n); }},
              {.name = "cells.txt",
               .size = SizeBy::kFixed,
               .make = [](const FragmentViews& s,
                          const std::string& n) { return s.Listed(s.f->cell_names(), n); }},
          },
      .gates = {},
      .preset = text::TabixPreset::kBed};
  return c;
}

// The binary views beside the catalog's text views (text/h5ad_source.h, text/tenx_h5_source.h):
// their bytes are an HDF5 image and the store's arrays, not text (ByteViews, not RecordSources).
constexpr const char* kH5adView = "matrix.h5ad";
constexpr const char* kTenxH5View = "10x.h5";

class MatrixStore : public OpenedStore {
 public:
  MatrixStore(std::shared_ptr<const formats::MatrixReader> m, InlineGroupsFn groups)
      : m_(std::move(m)), groups_(std::move(groups)) {}
  StoreContext Context() const override { return {m_->Describe(), ""}; }
  std::shared_ptr<const Sliceable> Slices(const ViewSink& sink) const override {
    return MatrixSlices(m_, sink.context().where, groups_);
  }
  void AddViews(ViewSink& sink) const override {
    MatrixViews s;
    s.m = m_;
    s.index_dir = sink.settings().index_dir;
    if (!s.index_dir.empty() && !sink.index_key().empty() && !s.m->row_major()) {
      const auto* index = sink.settings().sizing.index;
      s.persist = formats::TransposedCopy::In(s.index_dir, sink.index_key(),
                                              index != nullptr && index->rebuild());
    }
    vfs::AddViews(MatrixCatalog(), s, sink);
    auto m = m_;
    sink.AddView(kH5adView,
                 sink.MakeH5File(
                     kH5adView, [m] { return text::H5adPlan(*m); },
                     std::make_shared<const text::H5adRenderer>(m_, sink.settings().pool)));
    // A row-major store's columns: the transposed copy of its transpose, persisted under the
    // view's key (a col-major store's 10x.h5 reads the store's own arrays).
    formats::TransposedCopy columns;
    if (!s.index_dir.empty() && !sink.index_key().empty() && m_->row_major()) {
      const auto* index = sink.settings().sizing.index;
      columns = formats::TransposedCopy::In(s.index_dir, sink.index_key() + "\nview " + kTenxH5View,
                                            index != nullptr && index->rebuild());
    }
    sink.AddView(kTenxH5View,
                 sink.MakeH5File(
                     kTenxH5View, [m] { return text::TenxH5Plan(*m); },
                     text::TenxH5Renderer(m_, sink.settings().pool, {s.index_dir}, columns)));
  }

 private:
  std::shared_ptr<const formats::MatrixReader> m_;
  InlineGroupsFn groups_;
};

class FragmentStore : public OpenedStore {
 public:
  FragmentStore(std::shared_ptr<const bp::Fragments> f, std::optional<bool> csi,
                std::shared_ptr<const text::FragmentTally> tally, size_t group, bool cpm)
      : f_(std::move(f)),
        csi_(csi),
        tally_(std::move(tally)),
        group_(group),
        cpm_(cpm),
        cells_(std::make_shared<const text::PackedNames>(f_, &f_->cell_names(), '\n')) {}
  StoreContext Context() const override { return {f_->Describe(), ""}; }
  std::shared_ptr<const Sliceable> Slices(const ViewSink& sink) const override {
    return FragmentSlices(f_, sink.context().where, Csi(), sink.settings().index_dir);
  }
  void AddViews(ViewSink& sink) const override {
    FragmentViews s;
    s.f = f_;
    s.tally = tally_;
    s.group = group_;
    s.cells = cells_;
    if (cpm_) {
      // scale=cpm/: only the tracks, piled by a pass of their own over the (unlisted) BED view.
      const std::string bed = "fragments.bed";
      FragmentViews::AddTracks(s, sink.MakeText(bed, s.Bed(text::BedSource::Style::kBed, bed)),
                               sink, /*cpm=*/true, /*fed=*/false);
      return;
    }
    s.indexes = Csi() ? RegionIndexes::kCsi : RegionIndexes::kTbi;
    vfs::AddViews(FragmentCatalog(), s, sink);
  }

 private:
  // CSI when an end passes 2^29 (end_max: n/128 values, read once per store); without
  // end_max, .tbi, whose build then fails with EIO on such a position. A slice's ends are its
  // store's at most (it takes the store's choice).
  bool Csi() const {
    if (csi_) return *csi_;
    std::call_once(csi_once_, [this] {
      auto max_end = f_->MaxEnd();
      csi_found_ =
          max_end.ok() && max_end->has_value() && **max_end >= uint64_t{text::kTbiMaxPosition};
    });
    return csi_found_;
  }

  std::shared_ptr<const bp::Fragments> f_;
  std::optional<bool> csi_;
  std::shared_ptr<const text::FragmentTally> tally_;
  size_t group_;
  bool cpm_;  // a scale=cpm/ folder: the tracks alone, scaled
  std::shared_ptr<const text::PackedNames> cells_;
  mutable std::once_flag csi_once_;
  mutable bool csi_found_ = false;
};

class BpcellsStore : public OpenedStore {
 public:
  explicit BpcellsStore(std::shared_ptr<const io::ArrayStore> store) : store_(std::move(store)) {}
  void AddViews(ViewSink& sink) const override { AddBpcellsViews(store_, sink); }

 private:
  std::shared_ptr<const io::ArrayStore> store_;
};

class BpcellsDirectory : public StoreKind {
 public:
  std::string Name() const override { return "BPCells matrix or fragments"; }
  std::string RecognisedBy() const override { return "directory with a `version` file"; }
  std::vector<std::string> ViewNames() const override { return BpcellsViewNames(); }
  std::vector<std::pair<std::string, SelectorRows>> Slicing() const override {
    return {{"matrix", MatrixSliceRows()}, {"fragments", FragmentSliceRows()}};
  }
  bool Recognize(const Probe& p) const override {
    if (p.entry.type != EntryType::kDirectory || !p.Lists("version")) return false;
    return !p.folder.CheapPeek() || IsBpcells(*p.folder.Space(p.entry, nullptr));
  }
  StampScope Scope() const override { return StampScope::kTree; }
  bool Guessed(const Folder& folder) const override { return !folder.CheapPeek(); }
  std::vector<std::string> FixedKeys() const override { return bp::ArrayNames(); }
  Result<std::unique_ptr<OpenedStore>> Open(const Located& at) const override {
    auto space = at.folder.Space(at.entry, &at.stamp);
    if (!IsBpcells(*space)) return std::unique_ptr<OpenedStore>();
    ASSIGN_OR_RETURN(auto store, io::SpaceArrayStore::Open(std::move(space)));
    return std::unique_ptr<OpenedStore>(new BpcellsStore(std::move(store)));
  }

 private:
  static bool IsBpcells(const io::ByteSpace& space) {
    auto v = bp::ReadVersion(space);
    return v.ok() && bp::LooksLikeVersion(*v);
  }
};

// Remote objects are probed for the HDF5 signature only when named like HDF5 files (IsHdf5Name,
// vfs/kinds/hdf5.h): each probe is a request (with every object probed, the S3 corpus bucket of
// remote_test, 311 plain files beside its stores, took over 170 s to mount instead of ~10).
// SOURCE itself is always probed.

struct StoreGroup {
  std::string path;
  std::string version;  // as the probe read it: the daemon never reads attributes itself
};

// The BPCells store groups of an HDF5 file (FILE.h5/GROUP/...): groups whose `version` attribute
// looks like a BPCells version, as the file's probe reports them (vfs/kinds/hdf5.h). A file the
// helper could not probe or vet (truncated, damaged, crashing libhdf5) is a folder with ERROR.txt,
// never silently a plain file; one with no store group is a plain file.
class Hdf5Stores : public OpenedStore {
 public:
  Hdf5Stores(const Located& at, std::vector<StoreGroup> groups)
      : file_(at.hdf5), stamp_(at.stamp), groups_(std::move(groups)) {}
  void AddViews(ViewSink& sink) const override {
    for (const auto& g : groups_) {
      auto sub = sink.Sub(g.path.substr(1), file_.GroupIndexKey(stamp_, g.path));
      if (!sub) {
        LogWarning(file_.Where() + ":" + g.path + ": group name collides with a view; not shown");
        continue;
      }
      auto store = file_.OpenGroup(g.path, g.version);
      AddBpcellsViews(store.ok()
                          ? Result<std::shared_ptr<const io::ArrayStore>>(std::move(store).value())
                          : Result<std::shared_ptr<const io::ArrayStore>>(store.status()),
                      *sub);
    }
  }

 private:
  const Hdf5File& file_;
  const StoreStamp& stamp_;
  std::vector<StoreGroup> groups_;
};

class Hdf5Kind : public StoreKind {
 public:
  std::string Name() const override { return "BPCells inside HDF5"; }
  std::string RecognisedBy() const override { return "FILE.h5 with store groups"; }
  std::vector<std::string> ViewNames() const override {
    return {"FILE.h5/GROUP/ with the BPCells views and slices"};
  }
  // Locally every regular file is a candidate: its signature is read only after the reuse check,
  // so a rescan of unchanged plain files costs a stat each, as before kinds existed.
  bool Recognize(const Probe& p) const override {
    if (p.entry.type != EntryType::kFile) return false;
    return p.folder.CheapPeek() || p.entry.name.empty() || IsHdf5Name(p.entry.base);
  }
  StampScope Scope() const override { return StampScope::kObject; }
  bool Guessed(const Folder&) const override { return true; }
  bool DatedByEntry() const override { return true; }
  std::vector<std::string> Hdf5StoreMarks() const override { return {"version"}; }
  Result<std::unique_ptr<OpenedStore>> Open(const Located& at) const override {
    ASSIGN_OR_RETURN(const io::H5Probe* probe, at.hdf5.Probe(at.stamp));
    if (probe == nullptr) return std::unique_ptr<OpenedStore>();  // not HDF5
    std::vector<StoreGroup> stores;
    for (const io::H5Group& g : probe->groups) {
      const std::string* version = g.Attribute("version");
      if (version != nullptr && bp::LooksLikeVersion(*version))
        stores.push_back({g.path, *version});
    }
    if (stores.empty())
      return std::unique_ptr<OpenedStore>();  // HDF5, not BPCells: the next kind's
    if (!probe->vetted.ok()) return probe->vetted;
    return std::unique_ptr<OpenedStore>(new Hdf5Stores(at, std::move(stores)));
  }
};

}  // namespace

void AddBpcellsViews(Result<std::shared_ptr<const io::ArrayStore>> store, ViewSink& sink) {
  if (!store.ok()) return sink.AddError(store.status());
  auto version = (*store)->Version();
  if (!version.ok()) return sink.AddError(version.status());
  auto v = bp::ParseVersion(*version);
  if (!v) {
    return sink.AddError(UnsupportedError((*store)->Describe() +
                                          ": unrecognised BPCells version '" + *version + "'"));
  }
  if (v->kind == bp::StoreKind::kFragments) {
    auto fragments = bp::Fragments::Open(*store);
    if (!fragments.ok()) return sink.AddError(fragments.status());
    return ShowStore(*FragmentViewsOf(*fragments), sink);
  }
  auto matrix = bp::Matrix::Open(*store);
  if (!matrix.ok()) return sink.AddError(matrix.status());
  ShowStore(*MatrixViewsOf(*matrix), sink);
}

std::unique_ptr<OpenedStore> MatrixViewsOf(std::shared_ptr<const formats::MatrixReader> m,
                                           InlineGroupsFn groups) {
  return std::make_unique<MatrixStore>(std::move(m), std::move(groups));
}

std::unique_ptr<OpenedStore> FragmentViewsOf(std::shared_ptr<const bp::Fragments> f,
                                             std::optional<bool> csi,
                                             std::shared_ptr<const text::FragmentTally> tally,
                                             size_t group, bool cpm) {
  return std::make_unique<FragmentStore>(std::move(f), csi, std::move(tally), group, cpm);
}

std::vector<std::string> BpcellsViewNames() {
  std::vector<std::string> out{"matrix:"};
  for (auto& n : CatalogNames(MatrixCatalog())) out.push_back(std::move(n));
  out.emplace_back(kH5adView);
  out.emplace_back(kTenxH5View);
  out.emplace_back("fragments:");
  for (auto& n : CatalogNames(FragmentCatalog())) out.push_back(std::move(n));
  return out;
}

const StoreKind& BpcellsDirKind() {
  static const BpcellsDirectory kind;
  return kind;
}

const StoreKind& BpcellsHdf5Kind() {
  static const Hdf5Kind kind;
  return kind;
}

}  // namespace omicsfs::vfs
