#include "text/dense_source.h"

#include <algorithm>
#include <cstring>

#include "text/number_format.h"
#include "text/raw_text.h"

namespace omicsfs::text {

using formats::RowEntries;
using formats::ValueType;

DenseTsvSource::DenseTsvSource(std::shared_ptr<const formats::MatrixReader> matrix,
                               std::string name, std::vector<std::string> scratch_dirs,
                               formats::TransposedCopy persist)
    : matrix_(std::move(matrix)),
      scratch_dirs_(std::move(scratch_dirs)),
      persist_(std::move(persist)),
      name_(std::move(name)) {
  const uint64_t row_bytes = 2 * uint64_t{matrix_->cols()} + 16;
  rows_per_chunk_ = std::max<uint64_t>(1, (256 << 10) / row_bytes);
}

uint64_t DenseTsvSource::ChunkCount() const {
  return 1 + (uint64_t{matrix_->rows()} + rows_per_chunk_ - 1) / rows_per_chunk_;
}

std::pair<uint32_t, uint32_t> DenseTsvSource::Rows(uint64_t k) const {
  const uint64_t r0 = (k - 1) * rows_per_chunk_;
  return {static_cast<uint32_t>(r0),
          static_cast<uint32_t>(std::min<uint64_t>(r0 + rows_per_chunk_, matrix_->rows()))};
}

std::string_view DenseTsvSource::RowName(uint32_t r, char* buf) const {
  if (!matrix_->row_names().empty()) return matrix_->row_names()[r];
  return std::string_view(buf, static_cast<size_t>(WriteUInt(buf, uint64_t{r} + 1) - buf));
}

namespace {

char* WriteValue(const RowEntries& e, ValueType t, uint64_t i, char* p) {
  switch (t) {
    case ValueType::kUInt32:
      return WriteUInt(p, e.u32[i]);
    case ValueType::kFloat32:
      return WriteFloat(p, e.f32[i]);
    case ValueType::kFloat64:
      return WriteDouble(p, e.f64[i]);
    case ValueType::kInt32:
      return WriteInt(p, e.i32[i]);
    case ValueType::kInt64:
      return WriteInt(p, e.i64[i]);
    case ValueType::kUInt64:
      return WriteUInt(p, e.u64[i]);
  }
  return p;
}

// n empty cells ("\t0" each), written kZeroRun bytes at a time from a pattern: a run may
// store up to kZeroRun - 2 bytes past its end (the reservation has that slack; what follows
// overwrites them).
constexpr size_t kZeroRun = 32;
char* PutZeros(char* p, uint64_t n) {
  static constexpr char kPattern[kZeroRun + 1] = "\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0";
  const uint64_t bytes = 2 * n;
  for (uint64_t at = 0; at < bytes; at += kZeroRun) std::memcpy(p + at, kPattern, kZeroRun);
  return p + bytes;
}

}  // namespace

Status DenseTsvSource::Prepare() const {
  ASSIGN_OR_RETURN(rows_, formats::RowAccess::Build(matrix_, scratch_dirs_, 64 << 20, persist_));
  return OkStatus();
}

Status DenseTsvSource::ComputeRowLengths() const {
  // Row lengths from the stored entries: one pass over rows in bands.
  const uint32_t rows = matrix_->rows();
  const uint64_t cols = matrix_->cols();
  row_len_.assign(rows, 0);
  RowEntries e;
  char buf[kMaxNumberChars];
  for (uint32_t a = 0; a < rows;) {
    uint32_t b = a + 1;
    uint64_t band = rows_->RowNnz(a);
    while (b < rows && band + rows_->RowNnz(b) <= (1u << 22)) band += rows_->RowNnz(b++);
    RETURN_IF_ERROR(rows_->ReadRows(a, b, &e));
    for (uint32_t r = a; r < b; ++r) {
      uint64_t len = RowName(r, buf).size() + 2 * cols + 1;
      for (uint64_t i = e.row_ptr[r - a]; i < e.row_ptr[r - a + 1]; ++i) {
        if (e.cols[i] >= cols)
          return CorruptError(matrix_->Describe() + ": column index beyond the shape");
        len += static_cast<uint64_t>(WriteValue(e, matrix_->value_type(), i, buf) - buf) - 1;
      }
      row_len_[r] = len;
    }
    a = b;
  }
  return OkStatus();
}

Result<std::optional<uint64_t>> DenseTsvSource::MeasureChunk(uint64_t k) const {
  if (k == 0) return std::optional<uint64_t>();  // the header is rendered
  if (!row_lengths_.Get([this] { return ComputeRowLengths(); }).ok()) {
    return std::optional<uint64_t>();  // the chunk is rendered instead (and fails)
  }
  auto [r0, r1] = Rows(k);
  uint64_t total = 0;
  for (uint32_t r = r0; r < r1; ++r) total += row_len_[r];
  return std::optional<uint64_t>(total);
}

Status DenseTsvSource::RenderChunk(uint64_t k, std::string* out) const {
  const uint64_t cols = matrix_->cols();
  if (k == 0) {
    for (uint64_t c = 0; c < cols; ++c) {
      out->push_back('\t');
      if (matrix_->col_names().empty())
        AppendUInt(out, c + 1);
      else
        out->append(matrix_->col_names()[c]);
    }
    out->push_back('\n');
    return OkStatus();
  }
  auto [r0, r1] = Rows(k);
  RowEntries e;
  RETURN_IF_ERROR(rows_->ReadRows(r0, r1, &e));
  RawText text(out);
  for (uint32_t r = r0; r < r1; ++r) {
    char num[kMaxNumberChars];
    text.Put(RowName(r, num));
    char* p = text.Reserve(
        2 * cols + 1 + (e.row_ptr[r - r0 + 1] - e.row_ptr[r - r0]) * kMaxNumberChars + kZeroRun);
    uint64_t i = e.row_ptr[r - r0];
    const uint64_t end = e.row_ptr[r - r0 + 1];
    uint64_t c = 0;  // the next column to write
    for (; i < end; ++i) {
      const uint64_t col = e.cols[i];
      if (col < c || col >= cols) break;  // unsorted, repeated or beyond the shape: an error below
      p = PutZeros(p, col - c);
      *p++ = '\t';
      p = WriteValue(e, matrix_->value_type(), i, p);
      c = col + 1;
    }
    p = PutZeros(p, cols - c);
    *p++ = '\n';
    text.Commit(p);
    if (i != end)
      return CorruptError(matrix_->Describe() + ": row " + std::to_string(r) +
                          " has a column index beyond the shape");
  }
  return OkStatus();
}

}  // namespace omicsfs::text
