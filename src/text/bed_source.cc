#include "text/bed_source.h"

#include "text/number_format.h"

namespace omicsfs::text {

BedSource::BedSource(std::shared_ptr<const formats::bpcells::Fragments> fragments, Style style)
    : fragments_(std::move(fragments)), style_(style) {
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
  return std::string(style_ == Style::kBed ? "fragments.bed" : "fragments.tsv") + " of " + fragments_->Describe();
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
