#include "text/tsv_source.h"

#include <algorithm>

#include "text/number_format.h"
#include "text/raw_text.h"

namespace omicsfs::text {

NamesSource::NamesSource(std::shared_ptr<const std::vector<std::string>> names, Layout layout,
                         uint64_t fallback_count, std::string describe, std::string fallback_prefix)
    : names_(std::move(names)),
      layout_(layout),
      fallback_(fallback_count),
      describe_(std::move(describe)),
      fallback_prefix_(std::move(fallback_prefix)) {}

uint64_t NamesSource::ChunkCount() const { return (count() + kNamesPerChunk - 1) / kNamesPerChunk; }

Status NamesSource::RenderChunk(uint64_t k, std::string* out) const {
  const uint64_t first = k * kNamesPerChunk;
  const uint64_t last = std::min(first + kNamesPerChunk, count());
  std::string number;
  for (uint64_t i = first; i < last; ++i) {
    const std::string* name;
    if (names_->empty()) {
      number = fallback_prefix_;
      AppendUInt(&number, i + 1);
      name = &number;
    } else {
      name = &(*names_)[i];
    }
    out->append(*name);
    if (layout_ != Layout::kOnePerLine) {
      out->push_back('\t');
      out->append(*name);
    }
    if (layout_ == Layout::kFeatures) out->append("\tGene Expression");
    out->push_back('\n');
  }
  return OkStatus();
}

}  // namespace omicsfs::text

#include "formats/datg/reader.h"

namespace omicsfs::text {

DatgTsvSource::DatgTsvSource(std::shared_ptr<const formats::datg::DatgFile> file, std::string name)
    : file_(std::move(file)), name_(std::move(name)) {
  const uint64_t block_text = file_->rows_per_block() * (file_->cols() * 20 + 16);  // estimate
  blocks_per_chunk_ = std::max<uint64_t>(1, (256 << 10) / std::max<uint64_t>(block_text, 1));
}

uint64_t DatgTsvSource::ChunkCount() const {
  return 1 + (file_->blocks() + blocks_per_chunk_ - 1) / blocks_per_chunk_;
}

std::string DatgTsvSource::Describe() const { return name_ + " of " + file_->Describe(); }

Status DatgTsvSource::RenderChunk(uint64_t k, std::string* out) const {
  const auto& f = *file_;
  if (k == 0) {
    for (const auto& c : f.col_names()) {
      out->push_back('\t');
      out->append(c);
    }
    out->push_back('\n');
    return OkStatus();
  }
  const uint64_t b0 = (k - 1) * blocks_per_chunk_,
                 b1 = std::min(b0 + blocks_per_chunk_, f.blocks());
  for (uint64_t b = b0; b < b1; ++b) {
    ASSIGN_OR_RETURN(std::vector<double> values, f.ReadBlock(b));
    const uint64_t first = f.BlockFirstRow(b), n = f.BlockRows(b), cols = f.cols();
    RawText text(out);
    for (uint64_t r = 0; r < n; ++r) {
      text.Put(f.row_names()[first + r]);
      char* p = text.Reserve(cols * (kMaxJavaDoubleChars + 1) + 1);
      for (uint64_t c = 0; c < cols; ++c) {
        *p++ = '\t';
        p = WriteJavaDouble(p, values[r * cols + c]);
      }
      *p++ = '\n';
      text.Commit(p);
    }
  }
  return OkStatus();
}

Result<std::optional<uint64_t>> DatgTsvSource::MeasureChunk(uint64_t k) const {
  if (k == 0) return std::optional<uint64_t>();  // the header is rendered
  const auto& f = *file_;
  const uint64_t b0 = (k - 1) * blocks_per_chunk_, b1 = std::min(b0 + blocks_per_chunk_, f.blocks());
  uint64_t total = 0;
  for (uint64_t b = b0; b < b1; ++b) {
    ASSIGN_OR_RETURN(std::vector<double> values, f.ReadBlock(b));
    const uint64_t first = f.BlockFirstRow(b), n = f.BlockRows(b);
    for (uint64_t r = 0; r < n; ++r) total += f.row_names()[first + r].size() + 1;  // name, '\n'
    for (double v : values) total += 1 + JavaDoubleLength(v);                      // '\t', value
  }
  return std::optional<uint64_t>(total);
}

}  // namespace omicsfs::text
