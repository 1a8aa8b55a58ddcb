// Slices of BPCells fragments: region= (tabix's CHR, CHR:BEG, CHR:BEG-END) / regions=@NAME (a
// BED list), cells= (barcodes), groups=@NAME (a folder per group of an ITEM<TAB>GROUP table, its
// groups sized in one pass). Each resolves to a formats::bpcells::FragmentSubset of the store;
// the slice's views are the store's catalog over Fragments::Slice.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "text/bed_source.h"
#include "vfs/kinds/bpcells.h"

namespace omicsfs::vfs {
namespace {

namespace bp = formats::bpcells;
using bp::Interval;

// The store's barcodes → their cell IDs (a barcode the store holds twice has two).
using CellIndex = std::unordered_map<std::string_view, std::vector<uint32_t>>;

// As tabix reads a region: CHR (all of it), CHR:BEG (BEG to the end), CHR:BEG-END, 1-based and
// inclusive: the 0-based half-open [BEG-1, END).
Result<std::pair<size_t, Interval>> ParseRegion(const std::string& text, const std::map<std::string, size_t>& chrs,
                                               const std::string& store) {
  ASSIGN_OR_RETURN(RegionText t, ParseRegionText(text, [&](const std::string& c) { return chrs.count(c) != 0; }, "chromosome", store));
  if (!t.begin) return std::make_pair(chrs.at(t.chr), Interval{0, UINT64_MAX});
  return std::make_pair(chrs.at(t.chr), Interval{*t.begin - 1, t.end ? *t.end : UINT64_MAX});
}

// A BED line (0-based, half-open) of a known chromosome; nullopt for header lines.
Result<std::optional<std::pair<size_t, Interval>>> ParseBed(const std::string& line, const std::map<std::string, size_t>& chrs,
                                                            const std::string& list, const std::string& store) {
  ASSIGN_OR_RETURN(std::optional<BedLine> b, ParseBedLine(line, list));
  if (!b) return std::optional<std::pair<size_t, Interval>>();
  auto it = chrs.find(b->chrom);
  if (it == chrs.end()) return NotFoundError(list + ": no chromosome '" + b->chrom + "' in " + store);
  return std::make_optional(std::make_pair(it->second, Interval{b->start, b->end}));
}

class FragmentSliceable : public Sliceable {
 public:
  FragmentSliceable(std::shared_ptr<const bp::Fragments> f, std::string where, bool csi, std::string scratch_dir)
      : f_(std::move(f)), where_(std::move(where)), csi_(csi), scratch_dir_(std::move(scratch_dir)) {}

  std::string KeysHelp() const override { return "region=, regions=@NAME, cells=, groups=@NAME"; }
  bool Knows(const std::string& key) const override {
    return key == "region" || key == "regions" || key == "cells" || key == "groups";
  }
  std::string ListExtension(const std::string& key) const override {
    return key == "regions" ? ".bed" : key == "groups" ? ".tsv" : ".txt";
  }
  std::string GroupsSelect() const override { return "cells"; }

  Result<std::unique_ptr<OpenedStore>> Cut(const std::vector<Selection>& path, std::string* canonical) const override {
    ASSIGN_OR_RETURN(bp::FragmentSubset subset, Subset(path));
    *canonical = Canonical(subset);
    ASSIGN_OR_RETURN(auto slice, bp::Fragments::Slice(f_, std::move(subset)));
    return FragmentViewsOf(std::move(slice), /*sliceable=*/false, csi_);
  }

  // Every group a cells= slice of the same regions; one tally of the regions' fragments sizes
  // them all.
  Result<GroupCut> CutGroups(const std::vector<Selection>& path, const Selection& list, const Groups& groups) const override {
    ASSIGN_OR_RETURN(bp::FragmentSubset base, Subset(path));
    if (base.cells) return InvalidArgumentError(SelectionName(list) + ": cells= and groups= cannot both be given (a group is a cells= slice)");
    std::vector<int32_t> group_of_cell(f_->cell_names().size(), -1);
    std::vector<std::vector<uint32_t>> members;
    const CellIndex index = Index();
    // Every unknown barcode of the table at once, with the count (then each group's checks).
    std::vector<std::string> unknown;
    size_t listed = 0;
    for (const auto& m : groups.members) {
      listed += m.size();
      for (const std::string& id : m) {
        if (index.count(id) == 0) unknown.push_back(id);
      }
    }
    if (!unknown.empty()) {
      return NotFoundError(SelectionName(list) + ": " + std::to_string(unknown.size()) + " of " + std::to_string(listed) +
                           " cells are not in " + where_ + ": " + JoinSome(unknown));
    }
    for (size_t g = 0; g < groups.names.size(); ++g) {
      Selection sel = SelectionOf("cells", groups.members[g], list.selector.text + "/" + groups.names[g]);
      sel.selector.list = list.selector.list;
      ASSIGN_OR_RETURN(auto ids, Cells(sel, SelectionName(list) + " (group " + groups.names[g] + ")", index));
      for (uint32_t id : ids) group_of_cell[id] = static_cast<int32_t>(g);
      members.push_back(std::move(ids));
    }
    // The regions are sought once; each group is the cells of that slice.
    ASSIGN_OR_RETURN(auto base_slice, bp::Fragments::Slice(f_, base));
    std::vector<std::string> scratch;
    if (!scratch_dir_.empty()) scratch.push_back(scratch_dir_);
    auto tally = std::make_shared<const text::FragmentTally>(base_slice, std::move(group_of_cell), groups.names.size(),
                                                             std::move(scratch));
    GroupCut out;
    for (size_t g = 0; g < groups.names.size(); ++g) {
      bp::FragmentSubset subset = base;
      subset.cells = members[g];
      out.canonical.push_back(Canonical(subset));
      ASSIGN_OR_RETURN(auto slice, bp::Fragments::Slice(base_slice, bp::FragmentSubset{.regions = {}, .cells = std::move(members[g])}));
      out.groups.push_back(FragmentViewsOf(std::move(slice), /*sliceable=*/false, csi_, tally, g));
    }
    return out;
  }

 private:
  Result<bp::FragmentSubset> Subset(const std::vector<Selection>& path) const {
    bp::FragmentSubset subset;
    std::string regions_from;
    for (const Selection& sel : path) {
      const std::string& key = sel.selector.key;
      if (key == "region" || key == "regions") {
        if (sel.selector.exclude) return InvalidArgumentError(SelectionName(sel) + ": regions cannot be excluded (^)");
        if (key == "regions" && sel.selector.list.empty()) return InvalidArgumentError("regions= takes a BED list: regions=@NAME");
        if (key == "region" && !sel.selector.list.empty()) {
          return InvalidArgumentError("region= takes regions, not a list (for a BED list: regions=@NAME)");
        }
        if (!regions_from.empty()) return InvalidArgumentError(SelectionName(sel) + ": give region= or regions=, not both");
        regions_from = SelectionName(sel);
        std::map<std::string, size_t> chrs;
        for (size_t i = 0; i < f_->chr_names().size(); ++i) chrs.emplace(f_->chr_names()[i], i);
        std::vector<std::vector<Interval>> regions(f_->chr_names().size());
        size_t n = 0;
        for (const std::string& item : sel.items) {
          if (key == "region") {
            ASSIGN_OR_RETURN(auto r, ParseRegion(item, chrs, where_));
            regions[r.first].push_back(r.second);
            ++n;
          } else {
            ASSIGN_OR_RETURN(auto r, ParseBed(item, chrs, SelectionName(sel), where_));
            if (!r) continue;
            regions[r->first].push_back(r->second);
            ++n;
          }
        }
        if (n == 0) return InvalidArgumentError(SelectionName(sel) + ": no region given");
        subset.regions = std::move(regions);
      } else if (key == "cells") {
        ASSIGN_OR_RETURN(subset.cells, Cells(sel, SelectionName(sel), Index()));
      }
    }
    return subset;
  }

  CellIndex Index() const {
    CellIndex index;
    const auto& names = f_->cell_names();
    index.reserve(names.size());
    for (size_t i = 0; i < names.size(); ++i) index[names[i]].push_back(static_cast<uint32_t>(i));
    return index;
  }

  // The chosen cells in the order given; ^: the others, in store order. A barcode the store
  // gives to several cells is ambiguous: refused when chosen, all of them dropped by ^.
  Result<std::vector<uint32_t>> Cells(const Selection& sel, const std::string& named, const CellIndex& index) const {
    const auto& names = f_->cell_names();
    std::vector<std::string> unknown;
    std::vector<uint32_t> chosen;
    std::set<uint32_t> seen;
    for (const std::string& id : sel.items) {
      auto it = index.find(id);
      if (it == index.end()) {
        unknown.push_back(id);
        continue;
      }
      if (it->second.size() > 1 && !sel.selector.exclude) {
        return InvalidArgumentError(named + ": the barcode " + id + " names " + std::to_string(it->second.size()) +
                                    " cells of " + where_ + " (ambiguous)");
      }
      if (!seen.insert(it->second.front()).second) return InvalidArgumentError(named + ": cell " + id + " is listed twice");
      for (size_t i = 1; i < it->second.size(); ++i) seen.insert(it->second[i]);
      chosen.push_back(it->second.front());
    }
    if (!unknown.empty()) {
      return NotFoundError(named + ": " + std::to_string(unknown.size()) + " of " + std::to_string(sel.items.size()) +
                           " cells are not in " + where_ + ": " + JoinSome(unknown, kShownUnknown));
    }
    if (sel.selector.exclude) {
      std::vector<uint32_t> rest;
      for (uint32_t i = 0; i < names.size(); ++i) {
        if (seen.count(i) == 0) rest.push_back(i);
      }
      chosen = std::move(rest);
    }
    if (chosen.empty()) return InvalidArgumentError(named + ": no cell is left");
    return chosen;
  }

  // The subset's identity (any order of the same selectors gives the same).
  static std::string Canonical(const bp::FragmentSubset& s) {
    std::string out;
    if (s.regions) {
      std::string regions;
      for (size_t c = 0; c < s.regions->size(); ++c) {
        std::vector<Interval> r = (*s.regions)[c];
        std::sort(r.begin(), r.end(), [](const Interval& a, const Interval& b) {
          return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
        });
        for (const Interval& q : r) regions += std::to_string(c) + ":" + std::to_string(q.begin) + "-" + std::to_string(q.end) + ",";
      }
      out += "regions " + ShortIdentity(regions) + "\n";
    }
    if (s.cells) {
      std::string cells;
      for (uint32_t i : *s.cells) cells += std::to_string(i) + ",";
      out += "cells " + ShortIdentity(cells) + "\n";
    }
    return out;
  }

  std::shared_ptr<const bp::Fragments> f_;
  std::string where_;
  bool csi_;  // the store's choice of region index, taken by its slices
  std::string scratch_dir_;  // index_dir: where groups are regrouped (else $TMPDIR)
};

}  // namespace

std::shared_ptr<const Sliceable> FragmentSlices(std::shared_ptr<const bp::Fragments> f, std::string where, bool csi,
                                                std::string scratch_dir) {
  return std::make_shared<const FragmentSliceable>(std::move(f), std::move(where), csi, std::move(scratch_dir));
}

}  // namespace omicsfs::vfs
