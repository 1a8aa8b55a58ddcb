// Slices of a VCF Zarr store: region= / regions=@NAME (bcftools view -r / -R), samples= (view -s,
// AC/AN recounted), format= (annotate -x ^FORMAT/…), rows of the selector table
// (vfs/selectors.h). Each path resolves to a formats::vcz::Subset of the root store; the slice's
// views are the store's catalog over Store::Slice.
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
  VczSliceable(std::shared_ptr<const Store> store, std::string where, std::string base)
      : store_(std::move(store)),
        where_(std::move(where)),
        base_(std::move(base)),
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
      }
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

  std::shared_ptr<const Store> store_;
  std::string where_, base_, name_;
  LazyChooser samples_, contigs_, fields_;
};

}  // namespace

const SelectorRows& VczSliceRows() {
  namespace s = selectors;
  static const SelectorRows rows{&s::kRegionBcftools, &s::kRegionsBcftools, &s::kSamples,
                                 &s::kFormat};
  return rows;
}

std::shared_ptr<const Sliceable> VczSlices(std::shared_ptr<const Store> store, std::string where,
                                           std::string base) {
  return std::make_shared<const VczSliceable>(std::move(store), std::move(where), std::move(base));
}

}  // namespace omicsfs::vfs
