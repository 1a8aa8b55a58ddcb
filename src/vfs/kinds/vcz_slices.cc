// Slices of a VCF Zarr store: region= / regions=@NAME (bcftools view -r / -R), samples= (view -s,
// AC/AN recounted), format= (annotate -x ^FORMAT/…). Each resolves to a formats::vcz::Subset of
// the root store; the slice's views are the store's catalog over Store::Slice.
#include <algorithm>
#include <map>
#include <set>

#include "formats/vcz/store.h"
#include "vfs/kinds/vcz.h"

namespace omicsfs::vfs {
namespace {

using formats::vcz::Region;
using formats::vcz::Store;
using formats::vcz::Subset;

// CHR, CHR:BEG (that position), CHR:BEG-END, CHR:BEG- (to the contig's end), as bcftools -r.
Result<Region> ParseRegion(const std::string& text, const std::map<std::string, int64_t>& contigs, const std::string& store) {
  ASSIGN_OR_RETURN(RegionText t, ParseRegionText(text, [&](const std::string& c) { return contigs.count(c) != 0; }, "contig", store));
  Region r{contigs.at(t.chr), 1, INT64_MAX};
  if (!t.begin) return r;
  if (*t.begin > uint64_t{INT64_MAX} || (t.end && *t.end > uint64_t{INT64_MAX})) {
    return InvalidArgumentError("region " + text + ": a position past 2^63");
  }
  r.begin = static_cast<int64_t>(*t.begin);
  r.end = !t.dash ? r.begin : t.end ? static_cast<int64_t>(*t.end) : INT64_MAX;
  return r;
}

// BED lines: CHROM, 0-based start, end (half-open), as bcftools -R reads a .bed; header lines
// (#, track, browser) skipped (nullopt).
Result<std::optional<Region>> ParseBed(const std::string& line, const std::map<std::string, int64_t>& contigs,
                                       const std::string& list, const std::string& store) {
  ASSIGN_OR_RETURN(std::optional<BedLine> b, ParseBedLine(line, list));
  if (!b) return std::optional<Region>();
  auto it = contigs.find(b->chrom);
  if (it == contigs.end()) return NotFoundError(list + ": no contig '" + b->chrom + "' in " + store);
  if (b->start >= uint64_t{INT64_MAX} || b->end > uint64_t{INT64_MAX}) {
    return InvalidArgumentError(list + ": not a BED interval: '" + line + "'");
  }
  return std::make_optional(Region{it->second, static_cast<int64_t>(b->start) + 1, static_cast<int64_t>(b->end)});
}

// The rows of `first` (runs, in its order) that `second` holds too.
std::vector<std::pair<uint64_t, uint64_t>> Intersect(const std::vector<std::pair<uint64_t, uint64_t>>& first,
                                                     std::vector<std::pair<uint64_t, uint64_t>> second) {
  std::sort(second.begin(), second.end());
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const auto& [b, e] : first) {
    // The runs of `second` that may meet [b, e): from the last one starting at or before b.
    auto it = std::upper_bound(second.begin(), second.end(), std::make_pair(b, UINT64_MAX));
    if (it != second.begin()) --it;
    for (; it != second.end() && it->first < e; ++it) {
      const uint64_t lo = std::max(b, it->first), hi = std::min(e, it->second);
      if (lo < hi) out.emplace_back(lo, hi);
    }
  }
  return out;
}

class VczSliceable : public Sliceable {
 public:
  VczSliceable(std::shared_ptr<const Store> store, std::string where, std::string base)
      : store_(std::move(store)), where_(std::move(where)), base_(std::move(base)) {}

  std::string KeysHelp() const override { return "region=, regions=@NAME, samples=, format="; }
  bool Knows(const std::string& key) const override {
    return key == "region" || key == "regions" || key == "samples" || key == "format";
  }
  std::string ListExtension(const std::string& key) const override { return key == "regions" ? ".bed" : ".txt"; }

  Result<std::unique_ptr<OpenedStore>> Cut(const std::vector<Selection>& path, std::string* canonical) const override {
    const Store& s = *store_;
    const std::string name = VczStem(base_) + ".vcz";
    Subset subset;
    bool gt_dropped = false;  // format= without GT came before samples=: nothing to recount
    for (const Selection& sel : path) {
      const std::string& key = sel.selector.key;
      if (key == "region" || key == "regions") {
        if (sel.selector.exclude) return InvalidArgumentError(SelectionName(sel) + ": regions cannot be excluded (^)");
        if (key == "regions" && sel.selector.list.empty()) return InvalidArgumentError("regions= takes a BED list: regions=@NAME");
        if (key == "region" && !sel.selector.list.empty()) return InvalidArgumentError("region= takes regions, not a list (for a BED list: regions=@NAME)");
        std::map<std::string, int64_t> contigs;
        for (size_t i = 0; i < s.contigs().size(); ++i) contigs.emplace(s.contigs()[i], static_cast<int64_t>(i));
        std::vector<Region> regions;
        for (const std::string& item : sel.items) {
          if (key == "region") {
            ASSIGN_OR_RETURN(Region r, ParseRegion(item, contigs, name));
            regions.push_back(r);
          } else {
            ASSIGN_OR_RETURN(std::optional<Region> r, ParseBed(item, contigs, SelectionName(sel), name));
            if (r) regions.push_back(*r);
          }
        }
        if (regions.empty()) return InvalidArgumentError(SelectionName(sel) + ": no region given");
        ASSIGN_OR_RETURN(auto runs, s.RowsOverlapping(regions));
        // region= then regions= (or the reverse): the second filters the first's records, in
        // the first's order, as bcftools -r … | bcftools -R … does.
        subset.runs = subset.runs ? Intersect(*subset.runs, std::move(runs)) : std::move(runs);
      } else if (key == "samples") {
        ASSIGN_OR_RETURN(subset.samples, Samples(sel, name));
        subset.recount = s.has_genotype() && !gt_dropped;
      } else if (key == "format") {
        std::vector<std::string> all;
        if (s.has_genotype()) all.push_back("GT");
        for (const auto& f : s.format()) all.push_back(f.key);
        std::vector<std::string> missing;
        std::set<std::string> named;
        for (const std::string& k : sel.items) {
          if (std::find(all.begin(), all.end(), k) == all.end()) missing.push_back(k);
          named.insert(k);
        }
        if (!missing.empty()) return NotFoundError(SelectionName(sel) + ": no FORMAT field " + JoinSome(missing, kShownUnknown) + " in " + name);
        std::vector<std::string> keep;
        for (const std::string& k : all) {
          if (named.count(k) != 0 ? !sel.selector.exclude : sel.selector.exclude) keep.push_back(k);
        }
        gt_dropped = !subset.samples && std::find(keep.begin(), keep.end(), "GT") == keep.end();
        subset.format = std::move(keep);
      }
    }
    ASSIGN_OR_RETURN(std::shared_ptr<const Store> slice, Store::Slice(store_, subset));
    *canonical = Canonical(*slice->subset());
    return VczViewsOf(std::move(slice), where_, base_, /*sliceable=*/false);
  }

 private:
  // bcftools view -s: the chosen samples in the order given; ^: the others, in store order.
  Result<std::vector<uint32_t>> Samples(const Selection& sel, const std::string& name) const {
    const auto& ids = store_->samples();
    std::map<std::string, uint32_t> index;
    for (size_t i = 0; i < ids.size(); ++i) index.emplace(ids[i], static_cast<uint32_t>(i));
    std::vector<std::string> unknown;
    std::vector<uint32_t> chosen;
    std::set<uint32_t> seen;
    for (const std::string& id : sel.items) {
      auto it = index.find(id);
      if (it == index.end()) {
        unknown.push_back(id);
        continue;
      }
      if (!seen.insert(it->second).second) return InvalidArgumentError(SelectionName(sel) + ": sample " + id + " is listed twice");
      chosen.push_back(it->second);
    }
    if (!unknown.empty()) {
      return NotFoundError(SelectionName(sel) + ": " + std::to_string(unknown.size()) + " of " + std::to_string(sel.items.size()) +
                           " IDs are not in " + name + ": " + JoinSome(unknown, kShownUnknown));
    }
    if (sel.selector.exclude) {
      std::vector<uint32_t> rest;
      for (uint32_t i = 0; i < ids.size(); ++i) {
        if (seen.count(i) == 0) rest.push_back(i);
      }
      chosen = std::move(rest);
    }
    if (chosen.empty()) return InvalidArgumentError(SelectionName(sel) + ": no sample is left");
    return chosen;
  }

  // The subset's identity (any order of the same selectors gives the same): long parts hashed.
  static std::string Canonical(const Subset& s) {
    std::string out;
    if (s.runs) {
      std::string runs;
      for (const auto& [b, e] : *s.runs) runs += std::to_string(b) + "-" + std::to_string(e) + ",";
      out += "rows " + ShortIdentity(runs) + "\n";
    }
    if (s.samples) {
      std::string samples;
      for (uint32_t i : *s.samples) samples += std::to_string(i) + ",";
      out += "samples " + ShortIdentity(samples) + (s.recount ? " recount" : "") + "\n";
    }
    if (s.format) {
      std::string format;
      for (const auto& k : *s.format) format += k + ",";
      out += "format " + format + "\n";
    }
    return out;
  }

  std::shared_ptr<const Store> store_;
  std::string where_, base_;
};

}  // namespace

std::shared_ptr<const Sliceable> VczSlices(std::shared_ptr<const Store> store, std::string where, std::string base) {
  return std::make_shared<const VczSliceable>(std::move(store), std::move(where), std::move(base));
}

}  // namespace omicsfs::vfs
