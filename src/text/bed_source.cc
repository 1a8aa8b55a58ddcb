#include "text/bed_source.h"

#include "text/number_format.h"

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

BedSource::BedSource(std::shared_ptr<const formats::bpcells::Fragments> fragments, Style style, std::string name,
                     std::shared_ptr<const FragmentTally> tally, size_t group)
    : fragments_(std::move(fragments)), style_(style), name_(std::move(name)), chunks_(Chunks(*fragments_)),
      tally_(std::move(tally)), group_(group) {}

std::string BedSource::Describe() const {
  return name_ + " of " + fragments_->Describe();
}

namespace {

uint64_t Digits(uint32_t v) {
  uint64_t n = 1;
  for (; v >= 10; v /= 10) ++n;
  return n;
}

// One line's bytes: CHROM \t START \t END \t BARCODE \n.
uint64_t LineLength(const std::string& chrom, uint32_t start, uint32_t end, const std::string& cell) {
  return chrom.size() + Digits(start) + Digits(end) + cell.size() + 4;
}

}  // namespace

Result<std::optional<uint64_t>> BedSource::MeasureChunk(uint64_t k) const {
  if (tally_ == nullptr) return std::optional<uint64_t>();
  ASSIGN_OR_RETURN(uint64_t n, tally_->Length(group_, k, style_));
  return std::optional<uint64_t>(n);
}

Status BedSource::RecordSpans(uint64_t k, ChunkSpans* out) const {
  const Chunk& r = chunks_[k];
  formats::bpcells::FragmentRange f;
  RETURN_IF_ERROR(fragments_->Read(r.begin, r.end, &f));
  const std::string& chrom = fragments_->chr_names()[r.chr];
  if (!chrom.empty() && chrom[0] == '#') return OkStatus();  // tabix reads such lines as headers
  const auto& cells = fragments_->cell_names();
  const uint32_t minus = style_ == Style::kTenX ? 1 : 0;
  out->contigs.push_back(chrom);
  out->records.reserve(f.start.size());
  uint64_t at = 0;
  for (size_t i = 0; i < f.start.size(); ++i) {
    const uint32_t end = static_cast<uint32_t>(f.end[i] - minus);
    at += LineLength(chrom, f.start[i], end, cells[f.cell[i]]);
    out->records.push_back({0, f.start[i], end, at});
  }
  return OkStatus();
}

Status BedSource::RenderChunk(uint64_t k, std::string* out) const {
  const Chunk& r = chunks_[k];
  formats::bpcells::FragmentRange f;
  RETURN_IF_ERROR(fragments_->Read(r.begin, r.end, &f));
  const std::string& chrom = fragments_->chr_names()[r.chr];
  const auto& cells = fragments_->cell_names();
  const uint32_t minus = style_ == Style::kTenX ? 1 : 0;
  for (size_t i = 0; i < f.start.size(); ++i) {
    out->append(chrom);
    char buf[48];
    char* p = buf;
    *p++ = '\t';
    p = WriteUInt(p, f.start[i]);
    *p++ = '\t';
    p = WriteUInt(p, static_cast<uint32_t>(f.end[i] - minus));
    *p++ = '\t';
    out->append(buf, p);
    out->append(cells[f.cell[i]]);
    out->push_back('\n');
  }
  return OkStatus();
}


FragmentTally::FragmentTally(std::shared_ptr<const formats::bpcells::Fragments> base, std::vector<int32_t> group_of_cell,
                             size_t groups)
    : base_(std::move(base)), group_of_cell_(std::move(group_of_cell)), groups_(groups), chunks_(BedSource::Chunks(*base_)) {}

Result<uint64_t> FragmentTally::Length(size_t group, uint64_t chunk, BedSource::Style style) const {
  std::lock_guard<std::mutex> lock(mu_);  // the first caller computes; the others wait for it
  if (!done_) RETURN_IF_ERROR(Compute());
  if (group >= groups_ || chunk >= chunks_.size()) return InternalError(base_->Describe() + ": no such group or chunk");
  return lengths_[(chunk * groups_ + group) * 2 + (style == BedSource::Style::kTenX ? 1 : 0)];
}

Status FragmentTally::Compute() const {
  std::vector<uint64_t> lengths(chunks_.size() * groups_ * 2, 0);
  const auto& cells = base_->cell_names();
  formats::bpcells::FragmentRange f;
  for (size_t k = 0; k < chunks_.size(); ++k) {
    const auto& r = chunks_[k];
    RETURN_IF_ERROR(base_->Read(r.begin, r.end, &f));
    const std::string& chrom = base_->chr_names()[r.chr];
    uint64_t* at = &lengths[k * groups_ * 2];
    for (size_t i = 0; i < f.start.size(); ++i) {
      const int32_t g = f.cell[i] < group_of_cell_.size() ? group_of_cell_[f.cell[i]] : -1;
      if (g < 0) continue;
      const std::string& cell = cells[f.cell[i]];
      at[2 * g] += LineLength(chrom, f.start[i], f.end[i], cell);
      at[2 * g + 1] += LineLength(chrom, f.start[i], f.end[i] - 1, cell);
    }
  }
  lengths_ = std::move(lengths);
  done_ = true;
  return OkStatus();
}

}  // namespace omicsfs::text
