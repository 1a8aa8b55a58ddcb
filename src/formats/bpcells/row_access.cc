#include "formats/bpcells/row_access.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace omicsfs::formats::bpcells {
namespace {

constexpr uint64_t kScanEntries = 1 << 20;  // entries decoded per step while transposing

}  // namespace

size_t RowAccess::ValueSize() const {
  return matrix_->value_type() == ValueType::kFloat64 ? 8 : 4;
}

Result<std::shared_ptr<const RowAccess>> RowAccess::Build(std::shared_ptr<const Matrix> matrix,
                                                          const std::vector<std::string>& scratch_dirs,
                                                          uint64_t memory_budget) {
  std::shared_ptr<RowAccess> a(new RowAccess());
  a->matrix_ = std::move(matrix);
  if (a->matrix_->row_major()) {
    a->row_ptr_ = a->matrix_->idxptr();
  } else {
    RETURN_IF_ERROR(a->Transpose(scratch_dirs, memory_budget));
  }
  return std::shared_ptr<const RowAccess>(std::move(a));
}

Status RowAccess::Transpose(const std::vector<std::string>& scratch_dirs, uint64_t memory_budget) {
  const Matrix& m = *matrix_;
  const uint64_t nnz = m.nnz();
  const uint32_t rows = m.rows();
  const auto& colptr = m.idxptr();
  // Pass 1: entries per row.
  row_ptr_.assign(uint64_t{rows} + 1, 0);
  MatrixEntries e;
  for (uint64_t n0 = 0; n0 < nnz; n0 += kScanEntries) {
    const uint64_t n1 = std::min(nnz, n0 + kScanEntries);
    RETURN_IF_ERROR(m.ReadEntries(n0, n1, &e));
    for (uint32_t r : e.inner) ++row_ptr_[r + 1];
  }
  std::partial_sum(row_ptr_.begin(), row_ptr_.end(), row_ptr_.begin());
  if (nnz == 0) return OkStatus();
  auto scratch = ScratchFile::Create(scratch_dirs);
  if (!scratch.ok()) return std::move(scratch).status().WithContext(m.Describe() + ": transposed copy");
  csr_ = std::make_unique<ScratchFile>(std::move(scratch).value());
  // Pass 2, per band of rows whose records fit the budget: scan every entry, keep the band's.
  const size_t rec = 4 + ValueSize();
  const uint64_t budget_entries = std::max<uint64_t>(1, memory_budget / rec);
  std::vector<char> band;
  std::vector<uint64_t> cursor;
  for (uint32_t a = 0; a < rows;) {
    uint32_t b = a + 1;
    while (b < rows && row_ptr_[b + 1] - row_ptr_[a] <= budget_entries) ++b;
    const uint64_t base = row_ptr_[a], count = row_ptr_[b] - base;
    if (count > 0) {
      band.assign(count * rec, 0);
      cursor.assign(row_ptr_.begin() + a, row_ptr_.begin() + b);
      uint64_t col = 0;
      for (uint64_t n0 = 0; n0 < nnz; n0 += kScanEntries) {
        const uint64_t n1 = std::min(nnz, n0 + kScanEntries);
        RETURN_IF_ERROR(m.ReadEntries(n0, n1, &e));
        for (uint64_t i = n0; i < n1; ++i) {
          while (colptr[col + 1] <= i) ++col;
          const uint32_t r = e.inner[i - n0];
          if (r < a || r >= b) continue;
          char* p = band.data() + (cursor[r - a]++ - base) * rec;
          const uint32_t c = static_cast<uint32_t>(col);
          std::memcpy(p, &c, 4);
          switch (m.value_type()) {
            case ValueType::kUInt32: std::memcpy(p + 4, &e.u32[i - n0], 4); break;
            case ValueType::kFloat32: std::memcpy(p + 4, &e.f32[i - n0], 4); break;
            case ValueType::kFloat64: std::memcpy(p + 4, &e.f64[i - n0], 8); break;
          }
        }
      }
      RETURN_IF_ERROR(csr_->WriteAt(base * rec, band.data(), band.size()));
    }
    a = b;
  }
  return OkStatus();
}

Status RowAccess::ReadRows(uint32_t r0, uint32_t r1, RowEntries* out) const {
  const Matrix& m = *matrix_;
  const uint64_t base = row_ptr_[r0], n = row_ptr_[r1] - base;
  out->row_ptr.assign(row_ptr_.begin() + r0, row_ptr_.begin() + r1 + 1);
  for (auto& p : out->row_ptr) p -= base;
  out->cols.resize(n);
  const ValueType vt = m.value_type();
  if (vt == ValueType::kUInt32) out->u32.resize(n);
  if (vt == ValueType::kFloat32) out->f32.resize(n);
  if (vt == ValueType::kFloat64) out->f64.resize(n);
  if (n == 0) return OkStatus();
  if (csr_ == nullptr) {  // row-major: the store is already CSR
    MatrixEntries e;
    RETURN_IF_ERROR(m.ReadEntries(base, base + n, &e));
    out->cols = std::move(e.inner);
    out->u32 = std::move(e.u32);
    out->f32 = std::move(e.f32);
    out->f64 = std::move(e.f64);
    for (uint32_t r = 0; r < r1 - r0; ++r) {
      const uint64_t a = out->row_ptr[r], b = out->row_ptr[r + 1];
      if (!std::is_sorted(out->cols.begin() + a, out->cols.begin() + b)) {
        return UnsupportedError(m.Describe() + ": row " + std::to_string(r0 + r) + " has unsorted column indices");
      }
    }
    return OkStatus();
  }
  const size_t rec = 4 + ValueSize();
  std::vector<char> buf(n * rec);
  RETURN_IF_ERROR(csr_->file().ReadExact(base * rec, buf.data(), buf.size()));
  for (uint64_t i = 0; i < n; ++i) {
    const char* p = buf.data() + i * rec;
    std::memcpy(&out->cols[i], p, 4);
    switch (vt) {
      case ValueType::kUInt32: std::memcpy(&out->u32[i], p + 4, 4); break;
      case ValueType::kFloat32: std::memcpy(&out->f32[i], p + 4, 4); break;
      case ValueType::kFloat64: std::memcpy(&out->f64[i], p + 4, 8); break;
    }
  }
  return OkStatus();
}

}  // namespace omicsfs::formats::bpcells
