// The view catalog: per store kind, one table listing each view once — its file name, how its
// size is known, its twins, when it is absent — and one loop (AddViews) that turns a table and an
// opened store into nodes. A view's file name is written only in its table; sources take it as
// a parameter. `--help` lists the views from the same tables (KindsHelp in vfs/kinds/registry.h).
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache_pool.h"
#include "codec/bgzf.h"
#include "text/byte_view.h"
#include "text/h5_view.h"
#include "text/record_source.h"
#include "text/tabix_source.h"
#include "text/virtual_file.h"
#include "util/log.h"
#include "vfs/folder.h"
#include "vfs/resolver.h"
#include "vfs/tree_writer.h"
#include "vfs/withdrawals.h"

namespace omicsfs::vfs {

// What every view of a mount shares.
struct ViewSettings {
  cache::CachePool* pool = nullptr;
  text::SizingOptions sizing;
  std::string index_dir;               // transposed copies live here too
  std::string lists_dir;               // -o lists=DIR: the lists slices name (@NAME); empty: none
  Withdrawals* withdrawals = nullptr;  // the mount's (optional; must outlive the views)
};

// Where a folder's views come from, one read-only value the walk and the slice builder give the
// sink: the store as messages name it ("matrix.mtx of WHERE"; a slice's: the store and its
// selectors), the stem views are named by (STEM.vcf), and whether the folder is a slice's.
struct StoreContext {
  std::string where;
  std::string stem;
  bool slice = false;
};

// A store's folder being filled with views. `index_key` (the store's persisted-index key; empty:
// nothing persisted) keys each view's size index as index_key + "\nview " + its name, and each
// region index as index_key + "\nregion index " + its name.
class ViewSink {
 public:
  ViewSink(TreeWriter& out, Ino dir, Meta meta, std::string index_key, const ViewSettings& settings)
      : out_(&out),
        dir_(dir),
        meta_(meta),
        index_key_(std::move(index_key)),
        settings_(&settings) {}

  const Meta& meta() const { return meta_; }
  const std::string& index_key() const { return index_key_; }
  const ViewSettings& settings() const { return *settings_; }
  const StoreContext& context() const { return context_; }
  // Set by whoever shows a store here (vfs/slices.h ShowStore, the slice builder) before its views.
  void SetContext(StoreContext context) { context_ = std::move(context); }

  std::shared_ptr<const text::VirtualTextFile> MakeText(
      const std::string& view, std::shared_ptr<const text::RecordSource> source) const;
  // An HDF5 file of this store (text/h5_view.h), its image persisted under the view's key
  // (index_key + "\nview " + view, then the plan's hash); named "VIEW of WHERE" in messages.
  std::shared_ptr<const text::H5FileView> MakeH5File(
      const std::string& view, text::H5FileView::PlanFn plan,
      std::shared_ptr<const text::H5ArrayRenderer> renderer) const;
  // `path` may name a sub-folder ("10x/matrix.mtx.gz"), made on first use.
  void AddView(const std::string& path, std::shared_ptr<const text::ByteView> view);
  // PATH: `bgzip -l 0` of `plain` (stored blocks, no index), or the same in another layout.
  void AddStoredGz(const std::string& path, std::shared_ptr<const text::ByteView> plain,
                   codec::bgzf::StoredLayout layout = codec::bgzf::kBgzipLayout);
  // GZ.tbi, or GZ.csi with `csi`: what `tabix [-C]` writes for the twin GZ of `plain` (of that
  // layout). Not added when index_dir records that tabix refuses the records; withdrawn when a
  // pass finds it.
  void AddRegionIndex(const std::string& gz, std::shared_ptr<const text::VirtualTextFile> plain,
                      text::TabixPreset preset, bool csi,
                      codec::bgzf::StoredLayout layout = codec::bgzf::kBgzipLayout);
  // Folders made on lookup in this folder (slices: vfs/slices.h).
  void SetResolver(std::shared_ptr<const DirResolver> resolver);
  // ERROR.txt with the status, which is logged. Its text is at hand: nothing is sized or persisted
  // (it was keyed by whichever store the walk had stamped last: two damaged zips in one folder
  // shared a size index).
  void AddError(const Status& status);
  // The folder `path` below this one (HDF5 groups), for another store with its own key; nullopt
  // when a file of that name is in the way.
  std::optional<ViewSink> Sub(const std::string& path, std::string index_key) const;

 private:
  // The folder `path` below this one, made as needed; 0 when a file is in the way.
  Ino MakeDirs(const std::string& path) const;
  void AddContent(const std::string& path, std::shared_ptr<const FileContent> content);

  TreeWriter* out_;
  Ino dir_;
  Meta meta_;
  std::string index_key_;
  const ViewSettings* settings_;
  StoreContext context_;
};

// How a view's size is known before it is read whole (documentation and --help).
enum class SizeBy {
  kFixed,       // in memory at open (names)
  kArithmetic,  // from counts alone (a .bed: 3 + variants × ceil(samples/4))
  kMeasured,    // summed from per-chunk measures without rendering (MTX from its digits)
  kRendered,    // a pass renders it once; the lengths persist in index_dir
};

// The region indexes beside a store's indexed twins: `.tbi` where tabix would write one (every
// record ends at or before 2^29), `.csi` (`tabix -C`) where it would not, or both (VCF Zarr:
// htsjdk, IGV and R's TabixFile read only `.tbi`; htslib takes the `.csi` when both are there).
enum class RegionIndexes { kTbi, kCsi, kTbiAndCsi };

template <class Store>
struct ViewSpec {
  // The file name; a leading "STEM" stands for the store's stem, a '/' puts it in a sub-folder.
  std::string_view name;
  SizeBy size;
  std::function<std::shared_ptr<const text::RecordSource>(const Store&, const std::string& name)>
      make;
  // ("" rather than {}: with {} g++ 12 left string_view's constructor undefined at link time.)
  std::string_view gz = "";  // its BGZF twin (`bgzip -l 0`), "" none
  // The twin's blocks: `bgzip -l 0`'s, or kBedtoolsLayout for text bedtools reads (BED-like).
  codec::bgzf::StoredLayout gz_layout = codec::bgzf::kBgzipLayout;
  bool indexed = false;  // the twin has region indexes (Store::indexes says which)
  // The index of an indexed twin when not the catalog's: kBcf, a `.csi` alone (bcftools index).
  std::optional<text::TabixPreset> preset = std::nullopt;
  bool shown = true;  // false: only the twin is shown (10x/features.tsv)
  int gate = -1;      // present only when the catalog's gate of this number passes
  // A view listed before this one whose sizing pass sizes this one too, and builds its region
  // indexes (the same records in another form: RecordSource::SpansFromPartner); "" none.
  std::string_view sized_with = "";
  // Files derived from this view (fragments' coverage tracks): added beside it by `derive`, which
  // may make them SpanConsumers of the view (built by its sizing pass); `derived` names them, a
  // line each. (Plain types: a defaulted std::function or vector member here made g++ 12 fail
  // with an internal compiler error.)
  void (*derive)(const Store&, const std::shared_ptr<const text::VirtualTextFile>&,
                 ViewSink&) = nullptr;
  std::string_view derived = "";
};

template <class Store>
struct Gate {
  std::function<Status(const Store&)> check;  // OK, or why the gated views are absent (logged)
  int after = -1;                             // a gate that must pass first (else absent, unlogged)
};

template <class Store>
struct Catalog {
  std::vector<ViewSpec<Store>> views;
  std::vector<Gate<Store>> gates;
  text::TabixPreset preset = text::TabixPreset::kVcf;  // of the indexed views
};

// "STEM.vcf" → "c20.vcf".
std::string ViewName(std::string_view pattern, const std::string& stem);
// The names of `views` as one log phrase: "c20.bed/.bim/.fam".
std::string GroupPhrase(const std::vector<std::string>& names, const std::string& stem);

// The file names a catalog shows (for --help): each view, its twin and the twin's index.
template <class Store>
std::vector<std::string> CatalogNames(const Catalog<Store>& catalog) {
  std::vector<std::string> out;
  for (const auto& v : catalog.views) {
    if (v.shown) out.emplace_back(v.name);
    if (!v.gz.empty()) out.emplace_back(v.gz);
    if (v.indexed) {
      const bool bcf = v.preset == text::TabixPreset::kBcf;
      out.push_back(std::string(v.gz) + (bcf ? ".csi" : ".tbi"));
    }
    for (size_t at = 0; at < v.derived.size();) {
      const size_t nl = std::min(v.derived.find('\n', at), v.derived.size());
      out.emplace_back(v.derived.substr(at, nl - at));
      at = nl + 1;
    }
  }
  return out;
}

// One loop for every kind: the views of `store` into `sink`. Store provides Describe() and
// `indexes` (a RegionIndexes).
template <class Store>
void AddViews(const Catalog<Store>& catalog, const Store& store, ViewSink& sink) {
  std::vector<int> passed(catalog.gates.size(), -1);  // -1 unknown, 0 absent, 1 present
  std::function<bool(int)> open = [&](int g) {
    if (g < 0) return true;
    if (passed[g] >= 0) return passed[g] == 1;
    passed[g] = 0;
    if (!open(catalog.gates[g].after)) return false;
    Status why = catalog.gates[g].check(store);
    if (!why.ok()) {
      std::vector<std::string> names;
      for (const auto& v : catalog.views) {
        if (v.gate == g) names.push_back(ViewName(v.name, sink.context().stem));
      }
      // A slice's absent views are no news about the store: said once per slice, quietly.
      const StoreContext& at = sink.context();
      (at.slice ? LogInfo : LogWarning)((at.slice ? at.where : store.Describe()) + ": no " +
                                        GroupPhrase(names, at.stem) + ": " + why.message());
      return false;
    }
    passed[g] = 1;
    return true;
  };
  std::vector<std::pair<std::string_view, std::shared_ptr<const text::VirtualTextFile>>> made;
  for (const auto& v : catalog.views) {
    if (!open(v.gate)) continue;
    const std::string name = ViewName(v.name, sink.context().stem);
    auto plain = sink.MakeText(name, v.make(store, name));
    for (const auto& [partner, file] : made) {
      if (partner == v.sized_with) text::VirtualTextFile::SizeTogether(*file, *plain);
    }
    made.emplace_back(v.name, plain);
    if (v.shown) sink.AddView(name, plain);
    if (v.derive) v.derive(store, plain, sink);
    if (v.gz.empty()) continue;
    const std::string gz = ViewName(v.gz, sink.context().stem);
    sink.AddStoredGz(gz, plain, v.gz_layout);
    if (!v.indexed) continue;
    if (v.preset == text::TabixPreset::kBcf) {
      sink.AddRegionIndex(gz, plain, *v.preset, true, v.gz_layout);
      continue;
    }
    if (store.indexes != RegionIndexes::kCsi) {
      sink.AddRegionIndex(gz, plain, catalog.preset, false, v.gz_layout);
    }
    if (store.indexes != RegionIndexes::kTbi) {
      sink.AddRegionIndex(gz, plain, catalog.preset, true, v.gz_layout);
    }
  }
}

}  // namespace omicsfs::vfs
