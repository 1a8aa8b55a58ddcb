#include "text/bed_source.h"

#include "text/number_format.h"
#include "text/raw_text.h"

namespace omicsfs::text {

std::vector<BedSource::Chunk> BedSource::Chunks(const formats::bpcells::Fragments& f) {
  std::vector<Chunk> out;
  for (const auto& run : f.runs()) {
    for (uint64_t i = run.begin; i < run.end;) {
      const uint64_t next = std::min(run.end, (i / kFragmentsPerChunk + 1) * kFragmentsPerChunk);
      out.push_back({run.chr, i, next});
      i = next;
    }
  }
  return out;
}

BedSource::BedSource(std::shared_ptr<const formats::bpcells::Fragments> fragments, Style style,
                     std::string name, std::shared_ptr<const FragmentTally> tally, size_t group,
                     std::shared_ptr<const PackedNames> cells)
    : fragments_(std::move(fragments)),
      style_(style),
      name_(std::move(name)),
      chunks_(Chunks(*fragments_)),
      tally_(std::move(tally)),
      group_(group),
      cells_(std::move(cells)) {
  if (tally_ != nullptr) {
    cells_ = tally_->packed_cell_names();
  } else if (cells_ == nullptr) {
    cells_ = std::make_shared<const PackedNames>(fragments_, &fragments_->cell_names(), '\n');
  }
}

std::string BedSource::Describe() const { return name_ + " of " + fragments_->Describe(); }

namespace {

// One line's bytes: CHROM \t START \t END \t BARCODE \n.
uint64_t LineLength(const std::string& chrom, uint32_t start, uint32_t end,
                    const std::string& cell) {
  return chrom.size() + DecimalDigits(start) + DecimalDigits(end) + cell.size() + 4;
}

}  // namespace

Result<std::optional<uint64_t>> BedSource::MeasureChunk(uint64_t k) const {
  if (tally_ == nullptr) return std::optional<uint64_t>();
  ASSIGN_OR_RETURN(uint64_t n, tally_->Length(group_, k, style_));
  return std::optional<uint64_t>(n);
}

Status BedSource::Fetch(uint64_t k, formats::bpcells::FragmentRange* f,
                        const std::vector<std::string>** cells) const {
  if (tally_ != nullptr) {
    *cells = &tally_->cell_names();
    return tally_->Read(group_, k, f);
  }
  *cells = &fragments_->cell_names();
  return fragments_->Read(chunks_[k].begin, chunks_[k].end, f);
}

Status BedSource::RecordSpans(uint64_t k, ChunkSpans* out) const {
  const Chunk& r = chunks_[k];
  formats::bpcells::FragmentRange f;
  const std::vector<std::string>* names = nullptr;
  RETURN_IF_ERROR(Fetch(k, &f, &names));
  const std::string& chrom = fragments_->chr_names()[r.chr];
  const bool header = !chrom.empty() && chrom[0] == '#';  // tabix reads such lines as headers
  const auto& cells = *names;
  const uint32_t minus = style_ == Style::kTenX ? 1 : 0;
  if (!header) {
    out->contigs.push_back(chrom);
    out->records.reserve(f.start.size());
  }
  uint64_t at = 0;
  for (size_t i = 0; i < f.start.size(); ++i) {
    const uint32_t end = static_cast<uint32_t>(f.end[i] - minus);
    at += LineLength(chrom, f.start[i], end, cells[f.cell[i]]);
    if (!header) out->records.push_back({0, f.start[i], end, at});
  }
  out->length = at;
  if (header) out->meta_end = at;  // all meta lines: where tabix's first record could start
  return OkStatus();
}

bool BedSource::SpansFromPartner(const RecordSource& partner, uint64_t k, const ChunkSpans& from,
                                 ChunkSpans* out) const {
  const auto* p = dynamic_cast<const BedSource*>(&partner);
  if (p == nullptr || p->fragments_ != fragments_ || p->tally_ != tally_ || p->group_ != group_ ||
      k >= chunks_.size())
    return false;
  // A chromosome tabix reads as header lines has no spans to derive from.
  if (from.meta_end != 0 || (from.records.empty() && from.length != 0)) return false;
  // The same lines but for the end: the 10x form's is the BED form's − 1 (unsigned 32-bit), so a
  // line is a byte shorter where a BED end is a power of ten (and 0's 10x end has ten digits).
  const uint32_t delta = style_ == p->style_ ? 0 : style_ == Style::kTenX ? UINT32_MAX : 1;
  out->contigs = from.contigs;
  out->meta_end = 0;
  out->records.resize(from.records.size());
  int64_t shift = 0;
  for (size_t i = 0; i < from.records.size(); ++i) {
    const RecordSpan& r = from.records[i];
    const uint32_t end = static_cast<uint32_t>(r.end), mine = end + delta;
    shift += static_cast<int64_t>(DecimalDigits(mine)) - static_cast<int64_t>(DecimalDigits(end));
    out->records[i] = {r.contig, r.begin, mine, r.end_in_chunk + shift};
  }
  out->length = from.length + shift;
  return true;
}

Status BedSource::RenderChunk(uint64_t k, std::string* out) const {
  const Chunk& r = chunks_[k];
  formats::bpcells::FragmentRange f;
  const std::vector<std::string>* names = nullptr;
  RETURN_IF_ERROR(Fetch(k, &f, &names));
  const std::string& chrom = fragments_->chr_names()[r.chr];
  const PackedNames::Table& cells = cells_->Get();
  const uint32_t minus = style_ == Style::kTenX ? 1 : 0;
  RawText text(out);
  // Starts are sorted and ends a few hundred past them: both texts are mostly their last digits.
  SteppedDecimal start;
  for (size_t i = 0; i < f.start.size(); ++i) {
    const std::string_view cell = cells.Line(f.cell[i]);  // with its '\n'
    char* p = text.Reserve(chrom.size() + cell.size() + 2 * kMaxNumberChars + 3);
    p = PutShort(p, chrom.data(), chrom.size());
    *p++ = '\t';
    start.Step(f.start[i]);
    p = start.Put(p);
    *p++ = '\t';
    p = start.PutNear(p, static_cast<uint32_t>(f.end[i] - minus));
    *p++ = '\t';
    p = PutShort(p, cell.data(), cell.size());
    text.Commit(p);
  }
  return OkStatus();
}

namespace {

std::vector<std::pair<uint64_t, uint64_t>> Ranges(const std::vector<BedSource::Chunk>& chunks) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const auto& c : chunks) out.emplace_back(c.begin, c.end);
  return out;
}

}  // namespace

FragmentTally::FragmentTally(std::shared_ptr<const formats::bpcells::Fragments> base,
                             std::vector<int32_t> group_of_cell, size_t groups,
                             std::vector<std::string> scratch_dirs)
    : partition_(base, Ranges(BedSource::Chunks(*base)), std::move(group_of_cell), groups,
                 std::move(scratch_dirs)),
      chunks_(BedSource::Chunks(*base)),
      packed_cells_(std::make_shared<const PackedNames>(base, &base->cell_names(), '\n')) {}

Result<uint64_t> FragmentTally::Length(size_t group, uint64_t chunk, BedSource::Style style) const {
  std::lock_guard<std::mutex> lock(mu_);  // the first caller computes; the others wait for it
  if (!done_) RETURN_IF_ERROR(Compute());
  if (group >= partition_.groups() || chunk >= chunks_.size())
    return InternalError(partition_.base().Describe() + ": no such group or chunk");
  return lengths_[(chunk * partition_.groups() + group) * 2 +
                  (style == BedSource::Style::kTenX ? 1 : 0)];
}

Status FragmentTally::Compute() const {
  const size_t groups = partition_.groups();
  std::vector<uint64_t> lengths(chunks_.size() * groups * 2, 0);
  const auto& cells = cell_names();
  formats::bpcells::FragmentRange f;
  for (size_t k = 0; k < chunks_.size(); ++k) {
    const std::string& chrom = partition_.base().chr_names()[chunks_[k].chr];
    for (size_t g = 0; g < groups; ++g) {
      RETURN_IF_ERROR(partition_.Read(g, k, &f));
      uint64_t* at = &lengths[(k * groups + g) * 2];
      for (size_t i = 0; i < f.start.size(); ++i) {
        const std::string& cell = cells[f.cell[i]];
        at[0] += LineLength(chrom, f.start[i], f.end[i], cell);
        at[1] += LineLength(chrom, f.start[i], f.end[i] - 1, cell);
      }
    }
  }
  lengths_ = std::move(lengths);
  done_ = true;
  return OkStatus();
}

}  // namespace omicsfs::text
