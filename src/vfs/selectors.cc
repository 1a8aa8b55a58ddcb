#include "vfs/selectors.h"

#include <charconv>
#include <functional>

namespace omicsfs::vfs {

namespace selectors {
// clang-format off
const SelectorRow kRegionBcftools{
    .key = "region", .selects = Selects::kRegions, .item = "region", .list_ext = "", .exclude = false,
    .style = RegionStyle::kBcftools,
    .help = "records overlapping CHR, CHR:POS, CHR:BEG-END, CHR:BEG-, ... (bcftools view -r)",
    .example = "region=20:1-2000000"};
const SelectorRow kRegionsBcftools{
    .key = "regions", .selects = Selects::kBed, .item = "region", .list_ext = ".bed", .inline_items = false,
    .exclude = false,
    .help = "records overlapping LISTS/NAME.bed (bcftools view -R); with region=: both",
    .example = "regions=@exons"};
const SelectorRow kSamples{
    .key = "samples", .selects = Selects::kNames, .item = "sample", .list_ext = ".txt",
    .help = "these samples in this order, AC/AN recounted (bcftools view -s); ^ the others",
    .example = "samples=NA00001,NA00003"};
const SelectorRow kFormat{
    .key = "format", .selects = Selects::kFields, .item = "FORMAT field", .list_ext = ".txt",
    .help = "only these FORMAT fields (bcftools annotate -x ^FORMAT/...); ^ all but these",
    .example = "format=GT,DP"};
const SelectorRow kTypes{
    .key = "types", .selects = Selects::kCondition, .item = "type", .list_ext = "",
    .help = "records of these types: snps, indels, mnps, other (bcftools view -v); ^ the others (-V)",
    .example = "types=snps"};
const SelectorRow kAlleles{
    .key = "alleles", .selects = Selects::kCondition, .item = "allele count", .list_ext = "",
    .exclude = false,
    .help = "records of N, N to M, or at least N alleles, REF included (bcftools view -m N -M M)",
    .example = "alleles=2"};
const SelectorRow kFilterNames{
    .key = "filter", .selects = Selects::kCondition, .item = "FILTER name", .list_ext = "",
    .exclude = false,
    .help = "records with any of these FILTERs, . for none (bcftools view -f)",
    .example = "filter=PASS"};
const SelectorRow kMinAf{
    .key = "min-af", .selects = Selects::kCondition, .item = "frequency", .list_ext = "",
    .exclude = false,
    .help = "records of allele frequency >= X, of nref|alt1|minor|major|nonmajor (bcftools view -q)",
    .example = "min-af=0.01:minor"};
const SelectorRow kMaxAf{
    .key = "max-af", .selects = Selects::kCondition, .item = "frequency", .list_ext = "",
    .exclude = false,
    .help = "records of allele frequency <= X, of nref|alt1|minor|major|nonmajor (bcftools view -Q)",
    .example = "max-af=0.05"};
const SelectorRow kInclude{
    .key = "include", .selects = Selects::kCondition, .item = "expression", .list_ext = ".expr",
    .exclude = false, .rival = "exclude",
    .help = "records an expression keeps (bcftools view -i); %2F for /, %25 for %",
    .example = "include=QUAL>30&&INFO%2FDP>10"};
const SelectorRow kExclude{
    .key = "exclude", .selects = Selects::kCondition, .item = "expression", .list_ext = ".expr",
    .exclude = false, .rival = "include",
    .help = "records but those an expression names (bcftools view -e), written as for include=",
    .example = "exclude=GT=\"mis\""};
const SelectorRow kRegionTabix{
    .key = "region", .selects = Selects::kRegions, .item = "region", .list_ext = "", .exclude = false,
    .style = RegionStyle::kTabix, .rival = "regions",
    .help = "fragments overlapping CHR, CHR:BEG (to its end), CHR:BEG-END, ... (tabix)",
    .example = "region=chr1:1-1000000"};
const SelectorRow kRegionsTabix{
    .key = "regions", .selects = Selects::kBed, .item = "region", .list_ext = ".bed", .inline_items = false,
    .exclude = false, .rival = "region",
    .help = "fragments overlapping LISTS/NAME.bed (tabix -R)",
    .example = "regions=@peaks"};
const SelectorRow kCells{
    .key = "cells", .selects = Selects::kNames, .item = "cell", .list_ext = ".txt", .rival = "groups",
    .help = "fragments of these cells (barcodes); ^ of the others",
    .example = "cells=@tcells"};
const SelectorRow kGroupsCells{
    .key = "groups", .selects = Selects::kGroups, .item = "cell", .list_ext = ".tsv", .inline_items = false,
    .exclude = false, .rival = "cells", .group_key = "cells",
    .help = "a folder per group of LISTS/NAME.tsv (BARCODE<TAB>GROUP), each a cells= slice",
    .example = "groups=@clusters"};
const SelectorRow kScaleTracks{
    .key = "scale", .selects = Selects::kFields, .item = "scale", .list_ext = "", .exclude = false,
    .help = "only the coverage tracks, scaled: cpm (depth x 10^6 / lines of fragments.bed)",
    .example = "scale=cpm"};
const SelectorRow kRows{
    .key = "rows", .selects = Selects::kNames, .item = "row", .list_ext = ".txt",
    .help = "these rows (rownames.txt) in this order; ^ the others",
    .example = "rows=CD3E,MS4A1"};
const SelectorRow kCols{
    .key = "cols", .selects = Selects::kNames, .item = "column", .list_ext = ".txt", .rival = "groups",
    .help = "these columns (colnames.txt) in this order; ^ the others",
    .example = "cols=@bcells"};
const SelectorRow kGroupsCols{
    .key = "groups", .selects = Selects::kGroups, .item = "column", .list_ext = ".tsv", .inline_items = false,
    .exclude = false, .rival = "cols", .group_key = "cols",
    .help = "a folder per group of LISTS/NAME.tsv (COLUMN<TAB>GROUP): cols= slices, pseudobulk.tsv",
    .example = "groups=@clusters"};
const SelectorRow kGroupsObs{
    .key = "groups", .selects = Selects::kGroups, .item = "column", .list_ext = ".tsv", .inline_items = true,
    .exclude = false, .rival = "cols", .group_key = "cols",
    .help = "a folder per value of obs:COLUMN or group of LISTS/NAME.tsv: cols=, pseudobulk.tsv",
    .example = "groups=obs:leiden"};
// clang-format on
}  // namespace selectors

namespace {

std::string Written(const SelectorRow& r) {
  return std::string(r.key) + (r.inline_items ? "=" : "=@NAME");
}

}  // namespace

std::string KeysHelp(const SelectorRows& rows) {
  std::string out;
  for (const SelectorRow* r : rows) out += (out.empty() ? "" : ", ") + Written(*r);
  return out;
}

std::string RowsHelp(const SelectorRows& rows, std::string_view indent) {
  std::string out;
  for (const SelectorRow* r : rows) {
    std::string head = Written(*r);
    if (r->inline_items && !r->list_ext.empty()) head += ", " + std::string(r->key) + "=@NAME";
    const std::string pad(head.size() < 26 ? 26 - head.size() : 1, ' ');
    out += std::string(indent) + head + pad + "e.g. " + std::string(r->example) + "\n" +
           std::string(indent) + "    " + std::string(r->help) + "\n";
  }
  return out;
}

const SelectorRow* FindRow(const SelectorRows& rows, std::string_view key) {
  for (const SelectorRow* r : rows) {
    if (r->key == key) return r;
  }
  return nullptr;
}

std::string Quote(std::string_view name) {
  std::string out = "'";
  const size_t lead = name.find_first_not_of(' ');
  const size_t trail = name.find_last_not_of(' ');
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    const bool edge_space = c == ' ' && (lead == std::string_view::npos || i < lead || i > trail);
    if (name.substr(i, 3) == "\xEF\xBB\xBF") {
      out += "\\xef\\xbb\\xbf";
      i += 2;
    } else if (c < 0x20 || c == 0x7f || edge_space) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    } else if (c == '\'' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "'";
}

std::string QuoteSome(const std::vector<std::string>& names, size_t most) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < most; ++i) out += (i ? ", " : "") + Quote(names[i]);
  if (names.size() > most) out += ", ...";
  return out;
}

NameChooser::NameChooser(std::shared_ptr<const void> owner, const std::vector<std::string>* names,
                         uint32_t n, std::string_view stand_in)
    : owner_(std::move(owner)) {
  if (names == nullptr || (names->empty() && n > 0)) {
    own_.reserve(n);
    for (uint32_t i = 0; i < n; ++i)
      own_.push_back(std::string(stand_in) + std::to_string(uint64_t{i} + 1));
  } else {
    names_ = names;
  }
  Index();
}

NameChooser::NameChooser(std::vector<std::string> names) : own_(std::move(names)) { Index(); }

void NameChooser::Index() {
  const std::vector<std::string>& k = keys();
  size_t slots = 16;
  while (slots < 2 * k.size()) slots <<= 1;
  slots_.assign(slots, At{});
  for (uint32_t i = 0; i < k.size(); ++i) {
    size_t h = Slot(k[i]);
    while (slots_[h].count != 0 && k[slots_[h].first] != k[i]) h = (h + 1) & (slots_.size() - 1);
    if (slots_[h].count++ == 0) slots_[h].first = i;
  }
}

size_t NameChooser::Slot(std::string_view s) const {
  return std::hash<std::string_view>()(s) & (slots_.size() - 1);
}

std::optional<NameChooser::At> NameChooser::Find(std::string_view name) const {
  const std::vector<std::string>& k = keys();
  for (size_t h = Slot(name); slots_[h].count != 0; h = (h + 1) & (slots_.size() - 1)) {
    if (k[slots_[h].first] == name) return slots_[h];
  }
  return std::nullopt;
}

std::vector<std::string> NameChooser::Unknown(const std::vector<std::string>& items) const {
  std::vector<std::string> out;
  for (const std::string& s : items) {
    if (!Find(s)) out.push_back(s);
  }
  return out;
}

Status NameChooser::UnknownError(const std::vector<std::string>& unknown, size_t given,
                                 const Phrase& p) const {
  return NotFoundError(p.named + ": " + std::to_string(unknown.size()) + " of " +
                       std::to_string(given) + " " + std::string(p.item) + "s are not in " +
                       p.where + ": " + QuoteSome(unknown));
}

Result<std::vector<uint32_t>> NameChooser::Choose(const std::vector<std::string>& items,
                                                  bool exclude, const Phrase& p) const {
  const std::string item(p.item);
  if (items.empty()) return InvalidArgumentError(p.named + ": no " + item + " given");
  std::vector<std::string> unknown;
  std::vector<uint32_t> chosen;
  std::vector<bool> seen(size());
  bool shared_excluded = false;  // ^ of a name more than one bears
  for (const std::string& id : items) {
    const std::optional<At> at = Find(id);
    if (!at) {
      unknown.push_back(id);
      continue;
    }
    if (seen[at->first])
      return InvalidArgumentError(p.named + ": " + item + " " + Quote(id) + " is listed twice");
    if (at->count > 1 && !exclude) {
      return InvalidArgumentError(p.named + ": " + item + " " + Quote(id) +
                                  " is ambiguous: " + std::to_string(at->count) + " " + item +
                                  "s of " + p.where + " bear that name (exclude them with ^)");
    }
    seen[at->first] = true;
    shared_excluded = shared_excluded || at->count > 1;
    chosen.push_back(at->first);
  }
  if (!unknown.empty()) return UnknownError(unknown, items.size(), p);
  if (exclude) {
    std::vector<uint32_t> rest;
    for (uint32_t i = 0; i < size(); ++i) {
      const bool dropped = seen[i] || (shared_excluded && seen[Find(name(i))->first]);
      if (!dropped) rest.push_back(i);
    }
    chosen = std::move(rest);
  }
  if (chosen.empty())
    return InvalidArgumentError(p.named + ": no " + item + " is " + (exclude ? "left" : "chosen"));
  return chosen;
}

Result<std::vector<uint32_t>> NameChooser::Keep(const std::vector<std::string>& items, bool exclude,
                                                const Phrase& p) const {
  const std::string item(p.item);
  if (items.empty()) return InvalidArgumentError(p.named + ": no " + item + " given");
  std::vector<std::string> unknown;
  std::vector<bool> named(size());
  for (const std::string& id : items) {
    const std::optional<At> at = Find(id);
    if (!at) {
      unknown.push_back(id);
    } else if (named[at->first]) {
      return InvalidArgumentError(p.named + ": " + item + " " + Quote(id) + " is listed twice");
    } else {
      named[at->first] = true;
    }
  }
  if (!unknown.empty()) return UnknownError(unknown, items.size(), p);
  std::vector<uint32_t> kept;  // may be none (format=^GT of a store with GT alone)
  for (uint32_t i = 0; i < size(); ++i) {
    if (named[i] != exclude) kept.push_back(i);
  }
  return kept;
}

namespace {

Result<uint64_t> Position(std::string_view text, const std::string& region) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1) {
    return InvalidArgumentError("region " + Quote(region) + ": " + Quote(text) +
                                " is not a position (1, 2, ...)");
  }
  return v;
}

}  // namespace

Result<RegionAt> ParseRegion(const std::string& text, RegionStyle style, const NameChooser& contigs,
                             const std::string& where) {
  auto contig = [&](std::string_view name) -> Result<uint32_t> {
    const std::optional<NameChooser::At> at = contigs.Find(name);
    if (!at)
      return NotFoundError("region " + Quote(text) + ": no contig " + Quote(name) + " in " + where);
    return at->first;
  };
  RegionAt r;
  std::string_view range;
  if (!text.empty() && text[0] == '{') {  // htslib: {NAME} or {NAME}:RANGE, for names holding ':'
    const size_t close = text.find('}');
    if (close == std::string::npos || (close + 1 < text.size() && text[close + 1] != ':')) {
      return InvalidArgumentError("region " + Quote(text) + ": not {CONTIG} or {CONTIG}:RANGE");
    }
    ASSIGN_OR_RETURN(r.contig, contig(std::string_view(text).substr(1, close - 1)));
    if (close + 1 == text.size()) return r;
    range = std::string_view(text).substr(close + 2);
  } else if (contigs.Find(text)) {
    r.contig = contigs.Find(text)->first;
    return r;
  } else {
    const size_t colon = text.rfind(':');
    ASSIGN_OR_RETURN(r.contig, contig(std::string_view(text).substr(0, colon)));
    if (colon == std::string::npos) return r;
    range = std::string_view(text).substr(colon + 1);
  }
  const size_t dash = range.find('-');
  ASSIGN_OR_RETURN(const uint64_t begin, Position(range.substr(0, dash), text));
  r.begin = begin - 1;
  if (dash == std::string_view::npos) {
    r.end = style == RegionStyle::kBcftools ? begin : UINT64_MAX;
  } else if (dash + 1 < range.size()) {
    ASSIGN_OR_RETURN(r.end, Position(range.substr(dash + 1), text));
    if (r.end < begin)
      return InvalidArgumentError("region " + Quote(text) + ": the end is before the start");
  }
  return r;
}

Result<std::optional<RegionAt>> ParseBedRegion(const std::string& line, const NameChooser& contigs,
                                               const std::string& list, const std::string& where) {
  if (line.empty() || line[0] == '#' || line.starts_with("track") || line.starts_with("browser")) {
    return std::optional<RegionAt>();
  }
  std::vector<std::string_view> f;
  for (size_t from = 0; from <= line.size() && f.size() < 3;) {
    size_t tab = line.find_first_of("\t ", from);
    if (tab == std::string::npos) tab = line.size();
    if (tab > from) f.emplace_back(line.data() + from, tab - from);
    from = tab + 1;
  }
  if (f.size() < 3)
    return InvalidArgumentError(list + ": a BED line needs CHROM, START and END: " + Quote(line));
  RegionAt r;
  auto x = std::from_chars(f[1].data(), f[1].data() + f[1].size(), r.begin);
  auto y = std::from_chars(f[2].data(), f[2].data() + f[2].size(), r.end);
  if (x.ec != std::errc() || x.ptr != f[1].data() + f[1].size() || y.ec != std::errc() ||
      y.ptr != f[2].data() + f[2].size() || r.end < r.begin || r.end == UINT64_MAX) {
    return InvalidArgumentError(list + ": not a BED interval: " + Quote(line));
  }
  const std::optional<NameChooser::At> at = contigs.Find(f[0]);
  if (!at) return NotFoundError(list + ": no contig " + Quote(f[0]) + " in " + where);
  r.contig = at->first;
  return std::make_optional(r);
}

}  // namespace omicsfs::vfs
