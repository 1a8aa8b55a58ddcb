#include "text/pseudobulk_source.h"

#include <algorithm>

#include "text/number_format.h"
#include "text/raw_text.h"

namespace omicsfs::text {

using formats::MatrixEntries;
using formats::ValueType;

namespace {
constexpr uint64_t kBatchEntries = uint64_t{1} << 18;  // entries decoded at once by the pass
}  // namespace

PseudobulkSource::PseudobulkSource(std::shared_ptr<const formats::MatrixReader> matrix,
                                   std::vector<int32_t> group_of_col,
                                   std::vector<std::string> groups, std::string name)
    : matrix_(std::move(matrix)),
      group_of_col_(std::move(group_of_col)),
      groups_(std::move(groups)),
      name_(std::move(name)) {}

uint64_t PseudobulkSource::ChunkCount() const {
  return 1 + (uint64_t{matrix_->rows()} + kRowsPerChunk - 1) / kRowsPerChunk;
}

Status PseudobulkSource::Sum() const {
  const auto& m = *matrix_;
  if (group_of_col_.size() != m.cols())
    return InternalError(Describe() + ": the groups do not match the columns");
  const uint64_t g_count = groups_.size();
  // Unsigned values sum as uint64, signed ones (AnnData's) as int64, reals as double.
  const ValueType vt = m.value_type();
  const bool is_signed = vt == ValueType::kInt32 || vt == ValueType::kInt64;
  std::vector<uint64_t> su;
  std::vector<int64_t> si;
  std::vector<double> sf;
  if (is_signed) {
    si.assign(uint64_t{m.rows()} * g_count, 0);
  } else if (formats::IsInteger(vt)) {
    su.assign(uint64_t{m.rows()} * g_count, 0);
  } else {
    sf.assign(uint64_t{m.rows()} * g_count, 0.0);
  }
  const bool row_major = m.row_major();
  auto wanted = [&](uint32_t j) { return row_major || group_of_col_[j] >= 0; };
  MatrixEntries e;
  for (uint32_t j0 = 0; j0 < m.outer_dim();) {
    if (!wanted(j0) || m.MajorBegin(j0 + 1) == m.MajorBegin(j0)) {
      ++j0;
      continue;
    }
    // A run of wanted outer slices of about kBatchEntries entries (one slice at least).
    uint32_t j1 = j0 + 1;
    const uint64_t base = m.MajorBegin(j0);
    while (j1 < m.outer_dim() && wanted(j1) && m.MajorBegin(j1 + 1) - base <= kBatchEntries) ++j1;
    RETURN_IF_ERROR(m.ReadMajors(j0, j1, &e));
    for (uint32_t j = j0; j < j1; ++j) {
      const uint64_t end = m.MajorBegin(j + 1) - base;
      for (uint64_t i = m.MajorBegin(j) - base; i < end; ++i) {
        const uint32_t row = row_major ? j : e.inner[i];
        const int32_t g = group_of_col_[row_major ? e.inner[i] : j];
        if (g < 0) continue;
        const uint64_t at = uint64_t{row} * g_count + static_cast<uint64_t>(g);
        switch (m.value_type()) {
          case ValueType::kUInt32:
            su[at] += e.u32[i];
            break;
          case ValueType::kFloat32:
            sf[at] += static_cast<double>(e.f32[i]);
            break;
          case ValueType::kFloat64:
            sf[at] += e.f64[i];
            break;
          case ValueType::kInt32:
            si[at] += e.i32[i];
            break;
          case ValueType::kInt64:
            si[at] += e.i64[i];
            break;
          case ValueType::kUInt64:
            su[at] += e.u64[i];
            break;
        }
      }
    }
    j0 = j1;
  }
  sum_u64_ = std::move(su);
  sum_i64_ = std::move(si);
  sum_f64_ = std::move(sf);
  return OkStatus();
}

Status PseudobulkSource::RenderChunk(uint64_t k, std::string* out) const {
  if (k == 0) {
    for (const auto& g : groups_) {
      out->push_back('\t');
      out->append(g);
    }
    out->push_back('\n');
    return OkStatus();
  }
  RETURN_IF_ERROR(summed_.Get([this] { return Sum(); }));
  const auto& m = *matrix_;
  const uint64_t r0 = (k - 1) * kRowsPerChunk;
  const uint64_t r1 = std::min<uint64_t>(r0 + kRowsPerChunk, m.rows());
  const uint64_t g_count = groups_.size();
  const bool is_signed = m.value_type() == ValueType::kInt32 || m.value_type() == ValueType::kInt64;
  const bool integer = formats::IsInteger(m.value_type());
  RawText text(out);
  for (uint64_t r = r0; r < r1; ++r) {
    if (m.row_names().empty()) {
      char* p = text.Reserve(kMaxNumberChars);
      text.Commit(WriteUInt(p, r + 1));
    } else {
      text.Put(m.row_names()[r]);
    }
    char* p = text.Reserve(g_count * (kMaxNumberChars + 1) + 1);
    for (uint64_t g = 0; g < g_count; ++g) {
      *p++ = '\t';
      p = !integer    ? WriteDouble(p, sum_f64_[r * g_count + g])
          : is_signed ? WriteInt(p, sum_i64_[r * g_count + g])
                      : WriteUInt(p, sum_u64_[r * g_count + g]);
    }
    *p++ = '\n';
    text.Commit(p);
  }
  return OkStatus();
}

}  // namespace omicsfs::text
