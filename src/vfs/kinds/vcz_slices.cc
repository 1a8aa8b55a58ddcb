// Slices of a VCF Zarr store: region= / regions=@NAME (bcftools view -r / -R), samples= (view -s,
// AC/AN recounted), format= (annotate -x ^FORMAT/…), rows of the selector table
// (vfs/selectors.h). Each path resolves to a formats::vcz::Subset of the root store; the slice's
// views are the store's catalog over Store::Slice.
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "formats/vcz/expr.h"
#include "formats/vcz/filter.h"
#include "formats/vcz/store.h"
#include "text/index_store.h"
#include "vfs/kinds/vcz.h"

namespace omicsfs::vfs {
namespace {

using formats::vcz::Region;
using formats::vcz::Store;
using formats::vcz::Subset;

// The rows of `first` (runs, in its order) that `second` holds too.
std::vector<std::pair<uint64_t, uint64_t>> Intersect(
    const std::vector<std::pair<uint64_t, uint64_t>>& first,
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
  VczSliceable(std::shared_ptr<const Store> store, std::string where, std::string base,
               FilterKeeper keeper)
      : store_(std::move(store)),
        where_(std::move(where)),
        base_(std::move(base)),
        keeper_(std::move(keeper)),
        name_(VczStem(base_) + ".vcz"),
        samples_([s = store_] { return NameChooser(s, &s->samples()); }),
        contigs_([s = store_] { return NameChooser(s, &s->contigs()); }),
        fields_([s = store_] { return NameChooser(Fields(*s)); }) {}

  const SelectorRows& Rows() const override { return VczSliceRows(); }
  const NameChooser& Chooser(const SelectorRow& row) const override {
    if (row.key == "samples") return samples_.get();
    if (row.key == "format") return fields_.get();
    return contigs_.get();
  }
  const std::string& Where() const override { return name_; }

  Result<std::unique_ptr<OpenedStore>> Cut(const std::vector<Chosen>& path,
                                           std::string* canonical) const override {
    const Store& s = *store_;
    Subset subset;
    bool gt_dropped = false;  // format= without GT came before samples=: nothing to recount
    std::vector<const Chosen*> conditions;
    for (const Chosen& c : path) {
      switch (c.row->selects) {
        case Selects::kRegions:
        case Selects::kBed: {
          std::vector<Region> regions;
          for (const RegionAt& r : c.regions) {
            if (r.begin >= uint64_t{INT64_MAX} ||
                (r.end != UINT64_MAX && r.end > uint64_t{INT64_MAX})) {
              return InvalidArgumentError(c.name + ": a position past 2^63");
            }
            regions.push_back(
                Region{r.contig, static_cast<int64_t>(r.begin) + 1,
                       r.end == UINT64_MAX ? INT64_MAX : static_cast<int64_t>(r.end)});
          }
          ASSIGN_OR_RETURN(auto runs, s.RowsOverlapping(regions));
          // region= then regions= (or the reverse): the second filters the first's records, in
          // the first's order, as bcftools -r … | bcftools -R … does.
          subset.runs = subset.runs ? Intersect(*subset.runs, std::move(runs)) : std::move(runs);
          break;
        }
        case Selects::kNames:
          subset.samples = c.indices;
          subset.recount = s.has_genotype() && !gt_dropped;
          break;
        case Selects::kFields: {
          std::vector<std::string> keep;
          for (uint32_t i : c.indices) keep.push_back(fields_.get().name(i));
          gt_dropped = !subset.samples && std::find(keep.begin(), keep.end(), "GT") == keep.end();
          subset.format = std::move(keep);
          break;
        }
        case Selects::kGroups:
          return InternalError(c.name + ": VCF Zarr has no groups");
        case Selects::kCondition:
          conditions.push_back(&c);
          break;
      }
    }
    // Conditions, in any order on the path, see the records the regions chose, the chosen
    // samples and their recounted AC/AN (bcftools view -s L | bcftools view FILTER), and keep
    // the records that pass, in the regions' order.
    if (!conditions.empty()) {
      ASSIGN_OR_RETURN(subset.runs, Matching(subset, conditions));
    }
    ASSIGN_OR_RETURN(std::shared_ptr<const Store> slice, Store::Slice(store_, subset));
    *canonical = Canonical(*slice->subset());
    return VczViewsOf(std::move(slice), where_, base_);
  }

 private:
  // The FORMAT fields a format= slice keeps or drops: GT (where the store has genotypes), then
  // the others in store order.
  static std::vector<std::string> Fields(const Store& s) {
    std::vector<std::string> all;
    if (s.has_genotype()) all.push_back("GT");
    for (const auto& f : s.format()) all.push_back(f.key);
    return all;
  }

  // The subset's identity (any order of the same selectors gives the same): long parts hashed.
  static std::string Canonical(const Subset& s) {
    std::string out;
    if (s.runs) {
      std::string runs;
      for (const auto& [b, e] : *s.runs) runs += std::to_string(b) + "-" + std::to_string(e) + ",";
      out += "rows " + ShortIdentity(runs) + "\n";
    }
    if (s.samples)
      out += "samples " + IndicesIdentity(*s.samples) + (s.recount ? " recount" : "") + "\n";
    if (s.format) {
      std::string format;
      for (const auto& k : *s.format) format += k + ",";
      out += "format " + format + "\n";
    }
    return out;
  }

  using Runs = std::vector<std::pair<uint64_t, uint64_t>>;

  Result<std::unique_ptr<formats::vcz::RecordTest>> Test(const Chosen& c) const {
    using namespace formats::vcz;
    const std::string_view key = c.row->key;
    if (key == "types") return ParseTypes(c.value, c.exclude);
    if (key == "alleles") return ParseAlleles(c.value);
    if (key == "filter") return ParseFilterNames(c.value, *store_);
    if (key == "min-af" || key == "max-af") return ParseAlleleFrequency(c.value, key == "min-af");
    if (key == "include" || key == "exclude") {
      ASSIGN_OR_RETURN(std::string text, ExpressionText(c));
      return ParseExpression(text, key == "exclude", *store_);
    }
    return InternalError(c.name + ": no such condition");
  }

  // An expression as written: inline with %2F for '/' and %25 for '%' (a path cannot hold '/'),
  // or a list's text as it is (its line ends dropped).
  static Result<std::string> ExpressionText(const Chosen& c) {
    if (c.name.find('@') != std::string::npos) {
      std::string text = c.value;
      if (text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);
      for (char& ch : text)
        if (ch == '\r' || ch == '\n') ch = ' ';
      while (!text.empty() && text.back() == ' ') text.pop_back();
      if (text.empty()) return InvalidArgumentError("the expression is empty");
      return text;
    }
    std::string out;
    for (size_t i = 0; i < c.value.size(); ++i) {
      if (c.value[i] == '%' && i + 2 < c.value.size() + 0 &&
          (c.value.compare(i, 3, "%2F") == 0 || c.value.compare(i, 3, "%2f") == 0)) {
        out += '/';
        i += 2;
      } else if (c.value.compare(i, 3, "%25") == 0) {
        out += '%';
        i += 2;
      } else {
        out += c.value[i];
      }
    }
    return out;
  }

  // The root rows of `subset`'s records that pass every condition, in its order: computed once
  // per store, records, samples and conditions (kept in memory and index_dir), shared by every
  // slice that asks the same (format= and the order of the path play no part).
  Result<Runs> Matching(const Subset& subset, const std::vector<const Chosen*>& conditions) const {
    std::vector<std::unique_ptr<formats::vcz::RecordTest>> tests;
    std::vector<std::string> names;
    for (const Chosen* c : conditions) {
      auto t = Test(*c);
      if (!t.ok()) {
        const std::string m = t.status().message();
        return Status(t.status().code(), m.starts_with(c->row->key) ? m : c->name + ": " + m);
      }
      names.push_back((*t)->Canonical());
      tests.push_back(std::move(t).value());
    }
    std::sort(names.begin(), names.end());
    Subset seen = subset;
    seen.format.reset();
    std::string key = Canonical(seen) + "conditions\n";
    for (const std::string& n : names) key += n + "\n";
    {
      std::lock_guard<std::mutex> lock(memo_mu_);
      if (auto it = memo_.find(key); it != memo_.end()) return *it->second;
    }
    std::optional<Runs> runs;
    const std::string index_key =
        keeper_.key.empty() ? "" : keeper_.key + "\nfilter rows 3\n" + key;
    if (!index_key.empty() && keeper_.index != nullptr && keeper_.index->enabled()) {
      if (auto bytes = keeper_.index->LoadBlob(index_key); bytes && bytes->size() % 16 == 0) {
        Runs r(bytes->size() / 16);
        for (size_t i = 0; i < r.size(); ++i) {
          std::memcpy(&r[i].first, bytes->data() + 16 * i, 8);
          std::memcpy(&r[i].second, bytes->data() + 16 * i + 8, 8);
        }
        bool sane = true;
        for (const auto& [b, e] : r) sane = sane && b < e && e <= store_->num_variants();
        if (sane) runs = std::move(r);
      }
    }
    if (!runs) {
      ASSIGN_OR_RETURN(std::shared_ptr<const Store> view, Store::Slice(store_, seen));
      std::vector<const formats::vcz::RecordTest*> raw;
      for (const auto& t : tests) raw.push_back(t.get());
      ASSIGN_OR_RETURN(runs, formats::vcz::MatchingRows(*view, raw, name_));
      if (!index_key.empty() && keeper_.index != nullptr && keeper_.index->enabled()) {
        std::string bytes(runs->size() * 16, '\0');
        for (size_t i = 0; i < runs->size(); ++i) {
          std::memcpy(bytes.data() + 16 * i, &(*runs)[i].first, 8);
          std::memcpy(bytes.data() + 16 * i + 8, &(*runs)[i].second, 8);
        }
        keeper_.index->SaveBlob(index_key, bytes);
      }
    }
    std::lock_guard<std::mutex> lock(memo_mu_);
    memo_.emplace(key, std::make_shared<const Runs>(*runs));
    return std::move(*runs);
  }

  std::shared_ptr<const Store> store_;
  std::string where_, base_;
  FilterKeeper keeper_;
  std::string name_;
  LazyChooser samples_, contigs_, fields_;
  mutable std::mutex memo_mu_;
  mutable std::map<std::string, std::shared_ptr<const Runs>> memo_;
};

}  // namespace

const SelectorRows& VczSliceRows() {
  namespace s = selectors;
  static const SelectorRows rows{&s::kRegionBcftools, &s::kRegionsBcftools, &s::kSamples,
                                 &s::kFormat,         &s::kTypes,           &s::kAlleles,
                                 &s::kFilterNames,    &s::kMinAf,           &s::kMaxAf,
                                 &s::kInclude,        &s::kExclude};
  return rows;
}

std::shared_ptr<const Sliceable> VczSlices(std::shared_ptr<const Store> store, std::string where,
                                           std::string base, FilterKeeper keeper) {
  return std::make_shared<const VczSliceable>(std::move(store), std::move(where), std::move(base),
                                              std::move(keeper));
}

}  // namespace omicsfs::vfs
