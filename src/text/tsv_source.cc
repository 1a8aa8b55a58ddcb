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
  uint64_t total = name.size() + 1;                                              // name, '\n'
  for (uint64_t c = 0; c < cols; ++c) total += 1 + JavaDoubleLength(values[c]);  // '\t', value
  return total;
}

}  // namespace

DatgTsvSource::DatgTsvSource(std::shared_ptr<const formats::datg::DatgMatrix> matrix,
                             std::string describe)
    : matrix_(std::move(matrix)), describe_(std::move(describe)) {
  const uint64_t rpb = matrix_->file().rows_per_block(),
                 row_text = RowTextEstimate(matrix_->cols());
  if (matrix_->whole()) {  // whole row blocks: small ones grouped into ~256 KiB of text
    rows_per_chunk_ =
        rpb * std::max<uint64_t>(1, kChunkText / std::max<uint64_t>(rpb * row_text, 1));
  } else {
    // As many rows as make ~256 KiB of text, and never fewer than a row block holds: rows in the
    // file's order then decode each block about once, as the full view does.
    rows_per_chunk_ = std::max<uint64_t>({1, rpb, kChunkText / row_text});
  }
}

uint64_t DatgTsvSource::ChunkCount() const {
  return 1 + (uint64_t{matrix_->rows()} + rows_per_chunk_ - 1) / rows_per_chunk_;
}

std::pair<uint64_t, uint64_t> DatgTsvSource::Rows(uint64_t k) const {
  const uint64_t first = (k - 1) * rows_per_chunk_;
  return {first, std::min<uint64_t>(first + rows_per_chunk_, matrix_->rows())};
}

Status DatgTsvSource::RenderChunk(uint64_t k, std::string* out) const {
  const auto& m = *matrix_;
  if (k == 0) {
    for (const auto& c : m.col_names()) {
      out->push_back('\t');
      out->append(c);
    }
    out->push_back('\n');
    return OkStatus();
  }
  const auto [first, last] = Rows(k);
  const uint64_t cols = m.cols();
  for (uint64_t a = first, b; a < last; a = b) {
    b = m.RunEnd(a, last);
    ASSIGN_OR_RETURN(std::vector<double> values, m.ReadRows(a, b));
    RawText text(out);
    for (uint64_t i = a; i < b; ++i)
      PutRow(text, m.row_names()[i], values.data() + (i - a) * cols, cols);
  }
  return OkStatus();
}

Result<std::optional<uint64_t>> DatgTsvSource::MeasureChunk(uint64_t k) const {
  if (k == 0) return std::optional<uint64_t>();  // the header is rendered
  const auto& m = *matrix_;
  const auto [first, last] = Rows(k);
  const uint64_t cols = m.cols();
  uint64_t total = 0;
  for (uint64_t a = first, b; a < last; a = b) {
    b = m.RunEnd(a, last);
    ASSIGN_OR_RETURN(std::vector<double> values, m.ReadRows(a, b));
    for (uint64_t i = a; i < b; ++i)
      total += RowLength(m.row_names()[i], values.data() + (i - a) * cols, cols);
  }
  return std::optional<uint64_t>(total);
}

}  // namespace omicsfs::text
