// Slices of BPCells fragments: region= (tabix's CHR, CHR:BEG, CHR:BEG-END) / regions=@NAME (a
// BED list), cells= (barcodes), groups=@NAME (a folder per group of an ITEM<TAB>GROUP table, its
// groups sized in one pass): rows of the selector table (vfs/selectors.h). Each resolves to a
// formats::bpcells::FragmentSubset of the store; the slice's views are the store's catalog over
// Fragments::Slice.
#include <algorithm>

#include "text/bed_source.h"
#include "vfs/kinds/bpcells.h"

namespace omicsfs::vfs {
namespace {

namespace bp = formats::bpcells;
using bp::Interval;

class FragmentSliceable : public Sliceable {
 public:
  FragmentSliceable(std::shared_ptr<const bp::Fragments> f, std::string where, bool csi,
                    std::string scratch_dir)
      : f_(std::move(f)),
        where_(std::move(where)),
        csi_(csi),
        scratch_dir_(std::move(scratch_dir)),
        cells_([f = f_] { return NameChooser(f, &f->cell_names()); }),
        chrs_([f = f_] { return NameChooser(f, &f->chr_names()); }),
        scales_(std::vector<std::string>{"cpm"}) {}

  const SelectorRows& Rows() const override { return FragmentSliceRows(); }
  const NameChooser& Chooser(const SelectorRow& row) const override {
    if (&row == &selectors::kScaleTracks) return scales_;
    return (row.selects == Selects::kRegions || row.selects == Selects::kBed ? chrs_ : cells_)
        .get();
  }
  const std::string& Where() const override { return where_; }

  Result<std::unique_ptr<OpenedStore>> Cut(const std::vector<Chosen>& path,
                                           std::string* canonical) const override {
    bp::FragmentSubset subset = Subset(path);
    const bool cpm = Scaled(path);
    *canonical = Canonical(subset, cpm);
    ASSIGN_OR_RETURN(auto slice, bp::Fragments::Slice(f_, std::move(subset)));
    return FragmentViewsOf(std::move(slice), csi_, nullptr, 0, cpm);
  }

  // Every group a cells= slice of the same regions; one tally of the regions' fragments sizes
  // them all.
  Result<GroupCut> CutGroups(const std::vector<Chosen>& path, const Groups& groups,
                             const std::vector<Chosen>& members) const override {
    const bp::FragmentSubset base = Subset(path);
    const bool cpm = Scaled(path);
    std::vector<int32_t> group_of_cell(f_->cell_names().size(), -1);
    for (size_t g = 0; g < members.size(); ++g) {
      for (uint32_t id : members[g].indices) group_of_cell[id] = static_cast<int32_t>(g);
    }
    // The regions are sought once; each group is the cells of that slice.
    ASSIGN_OR_RETURN(auto base_slice, bp::Fragments::Slice(f_, base));
    std::vector<std::string> scratch;
    if (!scratch_dir_.empty()) scratch.push_back(scratch_dir_);
    auto tally = std::make_shared<const text::FragmentTally>(
        base_slice, std::move(group_of_cell), groups.names.size(), std::move(scratch));
    GroupCut out;
    for (size_t g = 0; g < groups.names.size(); ++g) {
      bp::FragmentSubset subset = base;
      subset.cells = members[g].indices;
      out.canonical.push_back(Canonical(subset, cpm));
      ASSIGN_OR_RETURN(
          auto slice,
          bp::Fragments::Slice(base_slice,
                               bp::FragmentSubset{.regions = {}, .cells = members[g].indices}));
      out.groups.push_back(FragmentViewsOf(std::move(slice), csi_, tally, g, cpm));
    }
    return out;
  }

 private:
  bp::FragmentSubset Subset(const std::vector<Chosen>& path) const {
    bp::FragmentSubset subset;
    for (const Chosen& c : path) {
      if (c.row == &selectors::kScaleTracks) continue;  // what is shown, not which fragments
      if (c.row->selects == Selects::kNames) {
        subset.cells = c.indices;
        continue;
      }
      std::vector<std::vector<Interval>> regions(f_->chr_names().size());
      for (const RegionAt& r : c.regions) regions[r.contig].push_back(Interval{r.begin, r.end});
      subset.regions = std::move(regions);
    }
    return subset;
  }

  // scale=cpm/ on the path: only the tracks, scaled (cpm is its one value).
  static bool Scaled(const std::vector<Chosen>& path) {
    return std::any_of(path.begin(), path.end(),
                       [](const Chosen& c) { return c.row == &selectors::kScaleTracks; });
  }

  // The subset's identity (any order of the same selectors gives the same). Without scale=, the
  // texts of earlier releases (persisted sizes and indexes stay valid).
  static std::string Canonical(const bp::FragmentSubset& s, bool cpm) {
    std::string out;
    if (s.regions) {
      std::string regions;
      for (size_t c = 0; c < s.regions->size(); ++c) {
        std::vector<Interval> r = (*s.regions)[c];
        std::sort(r.begin(), r.end(), [](const Interval& a, const Interval& b) {
          return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
        });
        for (const Interval& q : r)
          regions +=
              std::to_string(c) + ":" + std::to_string(q.begin) + "-" + std::to_string(q.end) + ",";
      }
      out += "regions " + ShortIdentity(regions) + "\n";
    }
    if (s.cells) out += "cells " + IndicesIdentity(*s.cells) + "\n";
    if (cpm) out += "scale cpm\n";
    return out;
  }

  std::shared_ptr<const bp::Fragments> f_;
  std::string where_;
  bool csi_;                 // the store's choice of region index, taken by its slices
  std::string scratch_dir_;  // index_dir: where groups are regrouped (else $TMPDIR)
  LazyChooser cells_, chrs_;
  NameChooser scales_;
};

}  // namespace

const SelectorRows& FragmentSliceRows() {
  namespace s = selectors;
  static const SelectorRows rows{&s::kRegionTabix, &s::kRegionsTabix, &s::kCells, &s::kGroupsCells,
                                 &s::kScaleTracks};
  return rows;
}

std::shared_ptr<const Sliceable> FragmentSlices(std::shared_ptr<const bp::Fragments> f,
                                                std::string where, bool csi,
                                                std::string scratch_dir) {
  return std::make_shared<const FragmentSliceable>(std::move(f), std::move(where), csi,
                                                   std::move(scratch_dir));
}

}  // namespace omicsfs::vfs
