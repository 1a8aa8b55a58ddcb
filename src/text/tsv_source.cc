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

namespace {

constexpr uint64_t kChunkText = 256 << 10;

uint64_t RowTextEstimate(uint64_t cols) { return cols * 20 + 16; }

// One TSV row: the name, then each value after a tab.
void PutRow(RawText& text, const std::string& name, const double* values, uint64_t cols) {
  text.Put(name);
  char* p = text.Reserve(cols * (kMaxJavaDoubleChars + 1) + 1);
  for (uint64_t c = 0; c < cols; ++c) {
    *p++ = '\t';
    p = WriteJavaDouble(p, values[c]);
  }
  *p++ = '\n';
  text.Commit(p);
}

uint64_t RowLength(const std::string& name, const double* values, uint64_t cols) {
  uint64_t total = name.size() + 1;  // name, '\n'
  for (uint64_t c = 0; c < cols; ++c) total += 1 + JavaDoubleLength(values[c]);  // '\t', value
  return total;
}

}  // namespace

DatgTsvSource::DatgTsvSource(std::shared_ptr<const formats::datg::DatgFile> file, std::string name)
    : file_(std::move(file)), name_(std::move(name)) {
  const uint64_t block_text = file_->rows_per_block() * RowTextEstimate(file_->cols());  // estimate
  blocks_per_chunk_ = std::max<uint64_t>(1, kChunkText / std::max<uint64_t>(block_text, 1));
}

DatgTsvSource::DatgTsvSource(std::shared_ptr<const formats::datg::DatgSlice> slice, std::string describe)
    : file_(std::shared_ptr<const formats::datg::DatgFile>(slice, &slice->file())),
      slice_(std::move(slice)),
      describe_(std::move(describe)) {
  // As many rows as make ~256 KiB of text, and never fewer than a row block holds: rows in the
  // file's order then decode each block about once, as the full view does.
  rows_per_chunk_ = std::max<uint64_t>({1, file_->rows_per_block(), kChunkText / RowTextEstimate(slice_->cols())});
}

uint64_t DatgTsvSource::ChunkCount() const {
  if (slice_) return 1 + (slice_->rows() + rows_per_chunk_ - 1) / rows_per_chunk_;
  return 1 + (file_->blocks() + blocks_per_chunk_ - 1) / blocks_per_chunk_;
}

std::string DatgTsvSource::Describe() const { return slice_ ? describe_ : name_ + " of " + file_->Describe(); }

Status DatgTsvSource::RenderHeader(std::string* out) const {
  for (const auto& c : slice_ ? slice_->col_names() : file_->col_names()) {
    out->push_back('\t');
    out->append(c);
  }
  out->push_back('\n');
  return OkStatus();
}

Status DatgTsvSource::RenderChunk(uint64_t k, std::string* out) const {
  if (k == 0) return RenderHeader(out);
  const auto& f = *file_;
  if (slice_) {
    const uint64_t first = (k - 1) * rows_per_chunk_, last = std::min(first + rows_per_chunk_, slice_->rows());
    ASSIGN_OR_RETURN(std::vector<double> values, slice_->ReadRows(first, last));
    const uint64_t cols = slice_->cols();
    RawText text(out);
    for (uint64_t i = first; i < last; ++i) PutRow(text, slice_->row_names()[i], values.data() + (i - first) * cols, cols);
    return OkStatus();
  }
  const uint64_t b0 = (k - 1) * blocks_per_chunk_,
                 b1 = std::min(b0 + blocks_per_chunk_, f.blocks());
  for (uint64_t b = b0; b < b1; ++b) {
    ASSIGN_OR_RETURN(std::vector<double> values, f.ReadBlock(b));
    const uint64_t first = f.BlockFirstRow(b), n = f.BlockRows(b), cols = f.cols();
    RawText text(out);
    for (uint64_t r = 0; r < n; ++r) PutRow(text, f.row_names()[first + r], values.data() + r * cols, cols);
  }
  return OkStatus();
}

Result<std::optional<uint64_t>> DatgTsvSource::MeasureChunk(uint64_t k) const {
  if (k == 0) return std::optional<uint64_t>();  // the header is rendered
  const auto& f = *file_;
  uint64_t total = 0;
  if (slice_) {
    const uint64_t first = (k - 1) * rows_per_chunk_, last = std::min(first + rows_per_chunk_, slice_->rows());
    ASSIGN_OR_RETURN(std::vector<double> values, slice_->ReadRows(first, last));
    const uint64_t cols = slice_->cols();
    for (uint64_t i = first; i < last; ++i) total += RowLength(slice_->row_names()[i], values.data() + (i - first) * cols, cols);
    return std::optional<uint64_t>(total);
  }
  const uint64_t b0 = (k - 1) * blocks_per_chunk_, b1 = std::min(b0 + blocks_per_chunk_, f.blocks());
  for (uint64_t b = b0; b < b1; ++b) {
    ASSIGN_OR_RETURN(std::vector<double> values, f.ReadBlock(b));
    const uint64_t first = f.BlockFirstRow(b), n = f.BlockRows(b), cols = f.cols();
    for (uint64_t r = 0; r < n; ++r) total += RowLength(f.row_names()[first + r], values.data() + r * cols, cols);
  }
  return std::optional<uint64_t>(total);
}

}  // namespace omicsfs::text
