#include "text/mtx_source.h"

#include <algorithm>

#include "text/number_format.h"
#include "text/raw_text.h"

namespace omicsfs::text {

using formats::bpcells::MatrixEntries;
using formats::bpcells::ValueType;

MtxSource::MtxSource(std::shared_ptr<const formats::bpcells::Matrix> matrix, std::string name,
                     uint64_t entries_per_chunk)
    : matrix_(std::move(matrix)), per_chunk_(entries_per_chunk), name_(std::move(name)) {}

uint64_t MtxSource::ChunkCount() const {
  return 1 + (matrix_->nnz() + per_chunk_ - 1) / per_chunk_;
}

Status MtxSource::RenderChunk(uint64_t k, std::string* out) const {
  const auto& m = *matrix_;
  if (k == 0) {
    out->append(m.value_type() == ValueType::kUInt32
                    ? "%%MatrixMarket matrix coordinate integer general\n"
                    : "%%MatrixMarket matrix coordinate real general\n");
    AppendUInt(out, m.rows());
    out->push_back(' ');
    AppendUInt(out, m.cols());
    out->push_back(' ');
    AppendUInt(out, m.nnz());
    out->push_back('\n');
    return OkStatus();
  }
  const uint64_t n0 = (k - 1) * per_chunk_;
  const uint64_t n1 = std::min(n0 + per_chunk_, m.nnz());
  if (n0 >= n1) return OkStatus();
  MatrixEntries e;
  RETURN_IF_ERROR(m.ReadEntries(n0, n1, &e));

  const auto& ptr = m.idxptr();
  // Outer slice holding entry n0: idxptr[j] <= n0 < idxptr[j+1].
  uint64_t j = static_cast<uint64_t>(std::upper_bound(ptr.begin(), ptr.end(), n0) - ptr.begin()) - 1;
  const bool row_major = m.row_major();
  RawText text(out);
  char* p = text.Reserve((n1 - n0) * (3 * kMaxNumberChars));
  for (uint64_t i = n0; i < n1; ++i) {
    while (ptr[j + 1] <= i) ++j;
    const uint64_t outer = j + 1, inner = uint64_t{e.inner[i - n0]} + 1;
    p = WriteUInt(p, row_major ? outer : inner);
    *p++ = ' ';
    p = WriteUInt(p, row_major ? inner : outer);
    *p++ = ' ';
    switch (m.value_type()) {
      case ValueType::kUInt32: p = WriteUInt(p, e.u32[i - n0]); break;
      case ValueType::kFloat32: p = WriteFloat(p, e.f32[i - n0]); break;
      case ValueType::kFloat64: p = WriteDouble(p, e.f64[i - n0]); break;
    }
    *p++ = '\n';
  }
  text.Commit(p);
  return OkStatus();
}

}  // namespace omicsfs::text
