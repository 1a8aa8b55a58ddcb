#include "text/bed_source.h"

#include "text/number_format.h"

namespace omicsfs::text {

BedSource::BedSource(std::shared_ptr<const formats::bpcells::Fragments> fragments, Style style, std::string name)
    : fragments_(std::move(fragments)), style_(style), name_(std::move(name)) {
  for (size_t c = 0; c < fragments_->chr_names().size(); ++c) {
    auto [b, e] = fragments_->ChrRange(c);
    for (uint64_t i = b; i < e;) {
      const uint64_t next = std::min(e, (i / kFragmentsPerChunk + 1) * kFragmentsPerChunk);
      chunks_.push_back({static_cast<uint32_t>(c), i, next});
      i = next;
    }
  }
}

std::string BedSource::Describe() const {
  return name_ + " of " + fragments_->Describe();
}

namespace {

uint64_t Digits(uint32_t v) {
  uint64_t n = 1;
  for (; v >= 10; v /= 10) ++n;
  return n;
}

}  // namespace

Status BedSource::RecordSpans(uint64_t k, ChunkSpans* out) const {
  const Range& r = chunks_[k];
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
    at += chrom.size() + Digits(f.start[i]) + Digits(end) + cells[f.cell[i]].size() + 4;
    out->records.push_back({0, f.start[i], end, at});
  }
  return OkStatus();
}

Status BedSource::RenderChunk(uint64_t k, std::string* out) const {
  const Range& r = chunks_[k];
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

}  // namespace omicsfs::text
