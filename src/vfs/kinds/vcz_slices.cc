// Slices of a VCF Zarr store: region= / regions=@NAME (bcftools view -r / -R), samples= (view -s,
// AC/AN recounted), format= (annotate -x ^FORMAT/…). Each resolves to a formats::vcz::Subset of
// the root store; the slice's views are the store's catalog over Store::Slice.
#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "codec/hash.h"
#include "formats/vcz/store.h"
#include "vfs/kinds/vcz.h"

namespace omicsfs::vfs {
namespace {

using formats::vcz::Region;
using formats::vcz::Store;
using formats::vcz::Subset;

constexpr size_t kShownUnknown = 10;  // unknown names listed in a message

Result<int64_t> Position(std::string_view text, const std::string& region) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1) {
    return InvalidArgumentError("region " + region + ": '" + std::string(text) + "' is not a position (1, 2, ...)");
  }
  return v;
}

// CHR, CHR:BEG (that position), CHR:BEG-END, CHR:BEG- (to the contig's end), as bcftools -r.
Result<Region> ParseRegion(const std::string& text, const std::map<std::string, int64_t>& contigs, const std::string& store) {
  if (auto it = contigs.find(text); it != contigs.end()) return Region{it->second, 1, INT64_MAX};
  const size_t colon = text.rfind(':');
  const std::string chr = colon == std::string::npos ? text : text.substr(0, colon);
  auto it = contigs.find(chr);
  if (it == contigs.end()) return NotFoundError("region " + text + ": no contig '" + chr + "' in " + store);
  if (colon == std::string::npos) return Region{it->second, 1, INT64_MAX};
  const std::string_view range = std::string_view(text).substr(colon + 1);
  const size_t dash = range.find('-');
  Region r{it->second, 1, INT64_MAX};
  ASSIGN_OR_RETURN(r.begin, Position(range.substr(0, dash), text));
  if (dash == std::string_view::npos) {
    r.end = r.begin;
  } else if (dash + 1 < range.size()) {
    ASSIGN_OR_RETURN(r.end, Position(range.substr(dash + 1), text));
    if (r.end < r.begin) return InvalidArgumentError("region " + text + ": the end is before the start");
  }
  return r;
}

// BED lines: CHROM, 0-based start, end (half-open), as bcftools -R reads a .bed; header lines
// (#, track, browser) skipped.
Result<Region> ParseBed(const std::string& line, const std::map<std::string, int64_t>& contigs, const std::string& list,
                        const std::string& store) {
  std::vector<std::string_view> f;
  for (size_t from = 0; from <= line.size() && f.size() < 3;) {
    size_t tab = line.find_first_of("\t ", from);
    if (tab == std::string::npos) tab = line.size();
    if (tab > from) f.emplace_back(line.data() + from, tab - from);
    from = tab + 1;
  }
  if (f.size() < 3) return InvalidArgumentError(list + ": a BED line needs CHROM, START and END: '" + line + "'");
  auto it = contigs.find(std::string(f[0]));
  if (it == contigs.end()) return NotFoundError(list + ": no contig '" + std::string(f[0]) + "' in " + store);
  int64_t start = 0, end = 0;
  auto a = std::from_chars(f[1].data(), f[1].data() + f[1].size(), start);
  auto b = std::from_chars(f[2].data(), f[2].data() + f[2].size(), end);
  if (a.ec != std::errc() || a.ptr != f[1].data() + f[1].size() || b.ec != std::errc() || b.ptr != f[2].data() + f[2].size() ||
      start < 0 || end < start || start == INT64_MAX) {
    return InvalidArgumentError(list + ": not a BED interval: '" + line + "'");
  }
  return Region{it->second, start + 1, end};
}

std::string Joined(const std::vector<std::string>& items, size_t most) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < most; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > most) out += ", ...";
  return out;
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

std::string Named(const Selection& s) { return s.selector.list.empty() ? s.selector.key + "=" : s.selector.key + "=@" + s.selector.list; }

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
        if (sel.selector.exclude) return InvalidArgumentError(Named(sel) + ": regions cannot be excluded (^)");
        if (key == "regions" && sel.selector.list.empty()) return InvalidArgumentError("regions= takes a BED list: regions=@NAME");
        if (key == "region" && !sel.selector.list.empty()) return InvalidArgumentError("region= takes regions, not a list (for a BED list: regions=@NAME)");
        std::map<std::string, int64_t> contigs;
        for (size_t i = 0; i < s.contigs().size(); ++i) contigs.emplace(s.contigs()[i], static_cast<int64_t>(i));
        std::vector<Region> regions;
        for (const std::string& item : sel.items) {
          if (key == "regions" && (item[0] == '#' || item.starts_with("track") || item.starts_with("browser"))) continue;
          ASSIGN_OR_RETURN(Region r, key == "region" ? ParseRegion(item, contigs, name) : ParseBed(item, contigs, Named(sel), name));
          regions.push_back(r);
        }
        if (regions.empty()) return InvalidArgumentError(Named(sel) + ": no region given");
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
        if (!missing.empty()) return NotFoundError(Named(sel) + ": no FORMAT field " + Joined(missing, kShownUnknown) + " in " + name);
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
      if (!seen.insert(it->second).second) return InvalidArgumentError(Named(sel) + ": sample " + id + " is listed twice");
      chosen.push_back(it->second);
    }
    if (!unknown.empty()) {
      return NotFoundError(Named(sel) + ": " + std::to_string(unknown.size()) + " of " + std::to_string(sel.items.size()) +
                           " IDs are not in " + name + ": " + Joined(unknown, kShownUnknown));
    }
    if (sel.selector.exclude) {
      std::vector<uint32_t> rest;
      for (uint32_t i = 0; i < ids.size(); ++i) {
        if (seen.count(i) == 0) rest.push_back(i);
      }
      chosen = std::move(rest);
    }
    if (chosen.empty()) return InvalidArgumentError(Named(sel) + ": no sample is left");
    return chosen;
  }

  // The subset's identity (any order of the same selectors gives the same): long parts hashed.
  static std::string Canonical(const Subset& s) {
    auto hashed = [](const std::string& text) {
      if (text.size() <= 200) return text;
      return std::to_string(text.size()) + " bytes, xxh3 " + std::to_string(codec::Hash64(text.data(), text.size()));
    };
    std::string out;
    if (s.runs) {
      std::string runs;
      for (const auto& [b, e] : *s.runs) runs += std::to_string(b) + "-" + std::to_string(e) + ",";
      out += "rows " + hashed(runs) + "\n";
    }
    if (s.samples) {
      std::string samples;
      for (uint32_t i : *s.samples) samples += std::to_string(i) + ",";
      out += "samples " + hashed(samples) + (s.recount ? " recount" : "") + "\n";
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
