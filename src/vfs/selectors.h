// The slicing vocabulary, written once: the selector table (each selector's key, list file,
// what it selects and how it composes, its help line), the NameChooser that turns names into
// positions of one axis, and the region parsers (bcftools' and tabix' readings of CHR:BEG, BED
// lists). A kind lists the rows it knows (Sliceable::Rows) and gets each selector of a path in
// its typed form (Chosen), parsed once at lookup; it only applies it. A new selector is a row.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace omicsfs::vfs {

// What a selector's items name.
enum class Selects {
  kNames,    // names of an axis (samples, cells, rows, columns), in the order given; ^: the others
  kFields,   // names of fields (FORMAT keys), kept in store order; ^: the others
  kRegions,  // CHR, CHR:BEG, CHR:BEG-END, CHR:BEG- and {CHR}:…, in the row's RegionStyle
  kBed,      // regions from a BED list (0-based, half-open)
  kGroups,   // an ITEM<TAB>GROUP table: a folder per group, each a kNames choice of `axis`
  kCondition,  // a condition on records (types=snps, min-af=0.01, include=EXPR): the value as
               // written (or the list's text), read by the kind; the records that pass
};

// How CHR:BEG reads: bcftools -r (that one position) or tabix (from BEG to the contig's end).
enum class RegionStyle { kBcftools, kTabix };

struct SelectorRow {
  std::string_view key;  // "samples"
  Selects selects;
  std::string_view item;      // what one item is, in messages: "sample", "cell", "row", "region"
  std::string_view list_ext;  // the list file of KEY=@NAME: LISTS/NAME + list_ext; "" none
  bool inline_items = true;   // KEY=a,b,c (else only @NAME)
  bool exclude = true;        // KEY=^… allowed
  RegionStyle style = RegionStyle::kBcftools;  // kRegions
  // Another key that chooses the same thing (region=/regions=, cols=/groups=): not both on a path.
  std::string_view rival = "";
  // For a kGroups row: the key (a kNames row of the same kind) a group's folder selects by.
  std::string_view group_key = "";
  std::string_view help;     // one line for --help and messages
  std::string_view example;  // "samples=NA00001,NA00002"
};

// The rows, one per selector; a kind lists those it knows.
namespace selectors {
extern const SelectorRow kRegionBcftools, kRegionsBcftools, kSamples, kFormat;  // VCF Zarr
extern const SelectorRow kTypes, kAlleles, kFilterNames, kMinAf, kMaxAf;        // VCF Zarr
extern const SelectorRow kInclude, kExclude;                                    // VCF Zarr
extern const SelectorRow kRegionTabix, kRegionsTabix, kCells, kGroupsCells;     // fragments
extern const SelectorRow kScaleTracks;                                          // fragments
extern const SelectorRow kRows, kCols, kGroupsCols;                             // matrices
extern const SelectorRow kGroupsObs;  // AnnData: groups=obs:COLUMN, or a table as kGroupsCols
}  // namespace selectors

using SelectorRows = std::vector<const SelectorRow*>;

// "region=, regions=@NAME, samples=, format=": the keys as written.
std::string KeysHelp(const SelectorRows& rows);
// Two lines per row: "KEY=, KEY=@NAME   e.g. EXAMPLE", then its help indented.
std::string RowsHelp(const SelectorRows& rows, std::string_view indent);
const SelectorRow* FindRow(const SelectorRows& rows, std::string_view key);

// A name quoted for a message, with what a terminal would not show escaped: control bytes, a
// byte-order mark, spaces at either end ('NA00001\x20'), quotes and backslashes.
std::string Quote(std::string_view name);
// At most `most` names, each quoted, joined by ", ", then ", ..." when there are more.
std::string QuoteSome(const std::vector<std::string>& names, size_t most = 10);

// One axis's names → positions: built once per store and axis, shared by every lookup. A name
// the store holds more than once is ambiguous. Names may be stand-ins (PREFIX1, PREFIX2, …)
// where the store has none.
class NameChooser {
 public:
  struct At {
    uint32_t first = 0;  // its first position
    uint32_t count = 0;  // how many positions bear it
  };
  // `names` is kept alive by `owner`; empty with `n` > 0: the stand-ins `stand_in`1…`stand_in`n.
  NameChooser(std::shared_ptr<const void> owner, const std::vector<std::string>* names,
              uint32_t n = 0, std::string_view stand_in = "");
  explicit NameChooser(std::vector<std::string> names);  // its own names
  uint32_t size() const { return static_cast<uint32_t>(keys().size()); }
  const std::string& name(uint32_t i) const { return keys()[i]; }
  std::optional<At> Find(std::string_view name) const;

  // How a choice is named in messages.
  struct Phrase {
    std::string named;      // "samples=@cases"
    std::string_view item;  // "sample"
    std::string where;      // "sample.vcz"
  };
  // The positions `items` name, in the order given; with `exclude` every other position, in
  // store order (^NAME of a name several bear drops them all). Refused, in one message shape:
  // unknown names (all of them, with their count), a name given twice, an ambiguous name chosen,
  // nothing given, nothing left.
  Result<std::vector<uint32_t>> Choose(const std::vector<std::string>& items, bool exclude,
                                       const Phrase& p) const;
  // kFields: the positions kept, in store order (named ones; with `exclude` the others).
  Result<std::vector<uint32_t>> Keep(const std::vector<std::string>& items, bool exclude,
                                     const Phrase& p) const;
  // Every unknown name of `items` (for one report over many groups).
  std::vector<std::string> Unknown(const std::vector<std::string>& items) const;

 private:
  const std::vector<std::string>& keys() const { return names_ != nullptr ? *names_ : own_; }
  void Index();
  size_t Slot(std::string_view s) const;
  Status UnknownError(const std::vector<std::string>& unknown, size_t given, const Phrase& p) const;

  std::shared_ptr<const void> owner_;
  const std::vector<std::string>* names_ = nullptr;  // null: own_
  std::vector<std::string> own_;                     // stand-ins, or names given to keep
  std::vector<At> slots_;                            // open addressing; count 0: empty
};

// A NameChooser made on first use and kept: a store's folder is shown long before anyone
// slices it, and every lookup of a slice folder chooses again (a million cells are indexed
// once, not per lookup, nor per mount of a store never sliced).
class LazyChooser {
 public:
  explicit LazyChooser(std::function<NameChooser()> make) : make_(std::move(make)) {}
  const NameChooser& get() const {
    std::call_once(once_, [this] { made_.emplace(make_()); });
    return *made_;
  }

 private:
  std::function<NameChooser()> make_;
  mutable std::once_flag once_;
  mutable std::optional<NameChooser> made_;
};

// A region chosen: a contig's position and 0-based half-open [begin, end); end UINT64_MAX: to
// the contig's end.
struct RegionAt {
  uint32_t contig = 0;
  uint64_t begin = 0;
  uint64_t end = UINT64_MAX;
};
// A region as written, read in `style` (1-based inclusive positions; END >= BEG). The contig
// is the whole text when the store knows it (names holding ':'), `{NAME}:…` as htslib reads
// it, else what precedes the last ':'.
Result<RegionAt> ParseRegion(const std::string& text, RegionStyle style, const NameChooser& contigs,
                             const std::string& where);
// A BED line (CHROM START END, tabs or spaces; 0-based, half-open) of a known contig; nullopt
// for the header lines bcftools and tabix skip (#, track, browser).
Result<std::optional<RegionAt>> ParseBedRegion(const std::string& line, const NameChooser& contigs,
                                               const std::string& list, const std::string& where);

}  // namespace omicsfs::vfs
