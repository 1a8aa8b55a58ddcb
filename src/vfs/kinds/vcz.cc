// VCF Zarr stores: a directory (Zarr v2 or v3) and a zipped store (NAME.vcz.zip / NAME.zarr.zip,
// bio2zarr's layout and zarr's ZipStore: the store's keys at the archive root), shown as NAME.vcz/.
#include "vfs/kinds/vcz.h"

#include "formats/vcz/store.h"
#include "io/space_blob_store.h"
#include "io/zip/zip_space.h"
#include "text/bcf_source.h"
#include "text/bgen_source.h"
#include "text/index_store.h"
#include "text/plink_source.h"
#include "text/tabix_index.h"
#include "text/tsv_source.h"
#include "text/vcf_source.h"

namespace omicsfs::vfs {
namespace {

using formats::vcz::Store;
using text::VcfSource;

struct VczViews {
  std::shared_ptr<const Store> store;
  std::shared_ptr<const text::PlinkPlan> plan;
  text::GwasViewOptions gwas;  // the .bgi's persistence
  std::string where;
  RegionIndexes indexes = RegionIndexes::kTbiAndCsi;  // kCsi where an end passes 2^29
  std::shared_ptr<const text::BgenSource> bgen;       // STEM.bgen, which STEM.bgen.bgi indexes
  std::string bgen_name;
  std::string Describe() const { return store->Describe(); }
  std::shared_ptr<const VcfSource> Vcf(VcfSource::View view, const std::string& n) const {
    return std::make_shared<const VcfSource>(store, view, n);
  }
};

constexpr int kPlink = 0, kBgen = 1;

// PLINK views are absent for stores plink2 refuses; BGEN views also where BGEN cannot express
// the store (the reasons logged, naming the store).
const Catalog<VczViews>& VczCatalog() {
  using S = VczViews;
  using N = std::string;
  static const Catalog<VczViews> c{
      .views =
          {
              {.name = "STEM.vcf",
               .size = SizeBy::kRendered,
               .make = [](const S& s, const N& n) { return s.Vcf(VcfSource::View::kFull, n); },
               .gz = "STEM.vcf.gz",
               .indexed = true},
              // BCF: its uncompressed bytes (not shown) are served BGZF-compressed as STEM.bcf.
              {.name = "STEM.ubcf",
               .size = SizeBy::kRendered,
               .make =
                   [](const S& s, const N& n) {
                     return std::make_shared<const text::BcfSource>(
                         s.Vcf(VcfSource::View::kFull, n), n.substr(0, n.size() - 5) + ".bcf");
                   },
               .gz = "STEM.bcf",
               .indexed = true,
               .preset = text::TabixPreset::kBcf,
               .shown = false,
               .sized_with = "STEM.vcf"},
              {.name = "sites.vcf",
               .size = SizeBy::kRendered,
               .make = [](const S& s, const N& n) { return s.Vcf(VcfSource::View::kSites, n); },
               .gz = "sites.vcf.gz",
               .indexed = true},
              {.name = "samples.txt",
               .size = SizeBy::kFixed,
               .make =
                   [](const S& s, const N& n) {
                     return std::make_shared<const text::NamesSource>(
                         std::shared_ptr<const std::vector<std::string>>(s.store,
                                                                         &s.store->samples()),
                         text::NamesSource::Layout::kOnePerLine, 0, n + " of " + s.where);
                   }},
              {.name = "STEM.bed",
               .size = SizeBy::kArithmetic,
               .make =
                   [](const S& s, const N& n) {
                     return std::make_shared<const text::PlinkBedSource>(s.plan, n);
                   },
               .gate = kPlink},
              {.name = "STEM.bim",
               .size = SizeBy::kRendered,
               .make =
                   [](const S& s, const N& n) {
                     return std::make_shared<const text::PlinkBimSource>(s.plan, n);
                   },
               .gate = kPlink},
              {.name = "STEM.fam",
               .size = SizeBy::kRendered,
               .make =
                   [](const S& s, const N& n) {
                     return std::make_shared<const text::PlinkFamSource>(s.store, n);
                   },
               .gate = kPlink},
              {.name = "STEM.bgen",
               .size = SizeBy::kArithmetic,
               .make = [](const S& s, const N&) { return s.bgen; },
               .gate = kBgen},
              {.name = "STEM.sample",
               .size = SizeBy::kRendered,
               .make =
                   [](const S& s, const N& n) {
                     return std::make_shared<const text::BgenSampleSource>(s.store, n);
                   },
               .gate = kBgen},
              {.name = "STEM.bgen.bgi",
               .size = SizeBy::kRendered,
               .make =
                   [](const S& s, const N& n) {
                     return std::make_shared<const text::BgenIndexSource>(s.bgen, s.gwas,
                                                                          s.bgen_name, n);
                   },
               .gate = kBgen},
          },
      .gates = {{.check = [](const S& s) { return text::PlinkRefusal(*s.store); }},
                {.check = [](const S& s) { return text::BgenRefusal(*s.store); }, .after = kPlink}},
      .preset = text::TabixPreset::kVcf};
  return c;
}

class VczStore : public OpenedStore {
 public:
  VczStore(std::shared_ptr<const Store> store, std::string where, std::string base)
      : store_(std::move(store)), where_(std::move(where)), base_(std::move(base)) {}
  StoreContext Context() const override { return {where_, VczStem(base_)}; }
  std::shared_ptr<const Sliceable> Slices(const ViewSink& sink) const override {
    return VczSlices(store_, where_, base_, {sink.settings().sizing.index, sink.index_key()});
  }
  void AddViews(ViewSink& sink) const override {
    if (!sink.context().slice) {
      // A region summary computed from the arrays (no region_index) is kept in index_dir: the
      // pass over the identifying arrays is paid once per store, not once per mount.
      const text::IndexStore* index = sink.settings().sizing.index;
      if (index != nullptr && index->enabled() && !sink.index_key().empty() &&
          !store_->has_region_index()) {
        const std::string key = sink.index_key() + "\nregion summary";
        store_->KeepRegionsWith(
            {.load = [index, key] { return index->LoadBlob(key); },
             .save = [index, key](const std::string& bytes) { index->SaveBlob(key, bytes); }});
      }
    }
    VczViews s;
    s.store = store_;
    s.plan = std::make_shared<const text::PlinkPlan>(store_);
    s.gwas = {sink.settings().sizing.index, sink.index_key(), sink.meta().mtime.tv_sec};
    s.where = sink.context().where;
    // Made here, not by its catalog row: STEM.bgen.bgi indexes this one whatever the rows' order.
    s.bgen_name = ViewName("STEM.bgen", sink.context().stem);
    s.bgen = std::make_shared<const text::BgenSource>(s.plan, s.bgen_name);
    // .tbi wherever tabix writes one (every end at or before 2^29, whatever contig_length says),
    // .csi beside it always. The largest end comes from region_index; without one, a store
    // whose every contig_length is below 2^29 is taken at its word (a record past its contig's
    // declared end is malformed: its .tbi then fails to build, EOPNOTSUPP), else one pass over
    // the identifying arrays finds it (kept). Not at every mount over every chunk: a cohort of
    // 10^8 variants would wait for it. A slice's ends are its root's at most.
    bool short_contigs = store_->contig_lengths().has_value() && !store_->contig_lengths()->empty();
    if (short_contigs) {
      for (int64_t len : *store_->contig_lengths())
        short_contigs = short_contigs && len < text::kTbiMaxPosition;
    }
    if (store_->has_region_index() || !short_contigs) {
      if (auto max_end = store_->root().MaxEnd(); !max_end.ok()) {
        LogWarning(max_end.status().message());  // the indexes' builds will fail alike
      } else if (*max_end && **max_end > text::kTbiMaxPosition) {
        s.indexes = RegionIndexes::kCsi;
      }
    }
    vfs::AddViews(VczCatalog(), s, sink);
  }

 private:
  std::shared_ptr<const Store> store_;
  std::string where_, base_;
};

bool LooksVcz(std::shared_ptr<const io::ByteSpace> space) {
  return Store::Looks(io::SpaceBlobStore(std::move(space), 64 << 20));
}

// The store's views, or nullptr where the space holds no VCF Zarr store.
Result<std::unique_ptr<OpenedStore>> OpenVcz(std::shared_ptr<const io::ByteSpace> space,
                                             const Located& at) {
  const std::string where = space->Describe();
  ASSIGN_OR_RETURN(
      auto store,
      Store::OpenIfVcz(std::make_shared<io::SpaceBlobStore>(std::move(space)), at.pool));
  if (store == nullptr) return std::unique_ptr<OpenedStore>();
  return VczViewsOf(std::move(store), where, at.entry.base);
}

class VczDirectory : public StoreKind {
 public:
  std::string Name() const override { return "VCF Zarr (Zarr v2 or v3)"; }
  std::string RecognisedBy() const override { return "directory with .zgroup/zarr.json"; }
  std::vector<std::string> ViewNames() const override { return VczViewNames(); }
  std::vector<std::pair<std::string, SelectorRows>> Slicing() const override {
    return {{"", VczSliceRows()}};
  }
  bool Recognize(const Probe& p) const override {
    if (p.entry.type != EntryType::kDirectory || !(p.Lists(".zgroup") || p.Lists("zarr.json")))
      return false;
    return !p.folder.CheapPeek() || LooksVcz(p.folder.Space(p.entry, nullptr));
  }
  StampScope Scope() const override { return StampScope::kTree; }
  bool Guessed(const Folder& folder) const override { return !folder.CheapPeek(); }
  Result<std::unique_ptr<OpenedStore>> Open(const Located& at) const override {
    return OpenVcz(at.folder.Space(at.entry, &at.stamp), at);
  }
};

bool IsZipStoreName(const std::string& n) {
  return n.ends_with(".vcz.zip") || n.ends_with(".zarr.zip");
}

// A damaged archive is ERROR.txt; one that holds no VCF Zarr store is an ordinary file.
class ZipKind : public StoreKind {
 public:
  std::string Name() const override { return "zipped VCF Zarr"; }
  std::string RecognisedBy() const override { return "NAME.vcz.zip (keys at the archive root)"; }
  std::vector<std::string> ViewNames() const override {
    return {"NAME.vcz/ with the VCF Zarr views and slices"};
  }
  bool Recognize(const Probe& p) const override {
    return p.entry.type == EntryType::kFile && IsZipStoreName(p.entry.base);
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
    return OpenVcz(std::move(space), at);
  }
};

}  // namespace

std::string VczStem(std::string base) {
  if (base.ends_with(".zip")) base.resize(base.size() - 4);
  for (const std::string ext : {".vcz", ".zarr"}) {
    if (base.size() > ext.size() && base.ends_with(ext)) base.resize(base.size() - ext.size());
  }
  return base;
}

std::vector<std::string> VczViewNames() { return CatalogNames(VczCatalog()); }

std::unique_ptr<OpenedStore> VczViewsOf(std::shared_ptr<const Store> store, std::string where,
                                        std::string base) {
  return std::make_unique<VczStore>(std::move(store), std::move(where), std::move(base));
}

const StoreKind& VczDirKind() {
  static const VczDirectory kind;
  return kind;
}

const StoreKind& VczZipKind() {
  static const ZipKind kind;
  return kind;
}

}  // namespace omicsfs::vfs
