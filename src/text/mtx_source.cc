#include "text/mtx_source.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "text/number_format.h"
#include "text/raw_text.h"

namespace omicsfs::text {

using formats::MatrixEntries;
using formats::ValueType;

MtxSource::MtxSource(std::shared_ptr<const formats::MatrixReader> matrix, std::string name,
                     uint64_t entries_per_chunk, uint32_t max_inner_slots)
    : matrix_(std::move(matrix)),
      per_chunk_(entries_per_chunk),
      name_(std::move(name)),
      max_inner_slots_(max_inner_slots) {}

uint64_t MtxSource::ChunkCount() const {
  return 1 + (matrix_->nnz() + per_chunk_ - 1) / per_chunk_;
}

MtxSource::IndexSlot MtxSource::Slot(uint64_t index) {
  IndexSlot s{};
  char* end = WriteUInt(s.text, index);
  *end++ = ' ';
  s.len = static_cast<uint8_t>(end - s.text);
  return s;
}

const std::vector<MtxSource::IndexSlot>* MtxSource::InnerSlots() const {
  const uint32_t n = matrix_->inner_dim();
  if (n > max_inner_slots_) return nullptr;
  std::call_once(inner_once_, [&] {
    inner_slots_.resize(n);
    for (uint32_t i = 0; i < n; ++i) inner_slots_[i] = Slot(uint64_t{i} + 1);
  });
  return &inner_slots_;
}

namespace {

// A value and its '\n' in an 8-byte slot (7 bytes of text, the length last): uint values < 1000.
struct ValueSlot {
  char text[7];
  uint8_t len;
};
constexpr uint32_t kValueSlots = 1000;
const ValueSlot* SmallValueSlots() {
  static const auto* table = [] {
    auto* t = new ValueSlot[kValueSlots]{};
    for (uint32_t v = 0; v < kValueSlots; ++v) {
      char* end = WriteUInt(t[v].text, v);
      *end++ = '\n';
      t[v].len = static_cast<uint8_t>(end - t[v].text);
    }
    return t;
  }();
  return table;
}

inline char* PutValue(char* p, uint32_t v, const ValueSlot* small) {
  if (v < kValueSlots) [[likely]] {
    const ValueSlot& s = small[v];
    std::memcpy(p, s.text, sizeof(ValueSlot));
    return p + s.len;
  }
  p = WriteUInt(p, v);
  *p = '\n';
  return p + 1;
}
inline char* PutValue(char* p, uint64_t v, const ValueSlot* small) {
  if (v < kValueSlots) return PutValue(p, static_cast<uint32_t>(v), small);
  p = WriteUInt(p, v);
  *p = '\n';
  return p + 1;
}
inline char* PutValue(char* p, int64_t v, const ValueSlot* small) {
  if (v >= 0) return PutValue(p, static_cast<uint64_t>(v), small);
  p = WriteInt(p, v);
  *p = '\n';
  return p + 1;
}
inline char* PutValue(char* p, int32_t v, const ValueSlot* small) {
  return PutValue(p, int64_t{v}, small);
}
// A real holding a small whole number (counts kept as floats, as scanpy keeps raw counts) is
// the integer's text: the shortest round-trip form of 0 ≤ v < 1000 is its digits ("-0" aside).
template <typename R>
inline bool SmallWhole(R v, uint32_t* u) {
  if (!(v >= 0 && v < R(kValueSlots)) || std::signbit(v)) return false;
  *u = static_cast<uint32_t>(v);
  return static_cast<R>(*u) == v;
}
inline char* PutValue(char* p, float v, const ValueSlot* small) {
  if (uint32_t u; SmallWhole(v, &u)) return PutValue(p, u, small);
  p = WriteFloat(p, v);
  *p = '\n';
  return p + 1;
}
inline char* PutValue(char* p, double v, const ValueSlot* small) {
  if (uint32_t u; SmallWhole(v, &u)) return PutValue(p, u, small);
  p = WriteDouble(p, v);
  *p = '\n';
  return p + 1;
}

// A slot's text, with up to 16 bytes stored (the buffer has that slack).
inline char* PutSlot(char* p, const MtxSource::IndexSlot& s) {
  std::memcpy(p, &s, sizeof(s));
  return p + s.len;
}

// One outer slice's lines [i, end): kRowMajor puts the outer index first; `slots` (or, when
// null, a slot written per entry) gives the inner index's text.
template <bool kRowMajor, typename V>
char* SliceLines(char* p, const MtxSource::IndexSlot& outer, const MtxSource::IndexSlot* slots,
                 const uint32_t* inner, const V* values, uint64_t count, const ValueSlot* small) {
  for (uint64_t i = 0; i < count; ++i) {
    MtxSource::IndexSlot written;
    const MtxSource::IndexSlot* in;
    if (slots != nullptr) [[likely]] {
      in = &slots[inner[i]];
    } else {
      written = MtxSource::Slot(uint64_t{inner[i]} + 1);
      in = &written;
    }
    if constexpr (kRowMajor) {
      p = PutSlot(p, outer);
      p = PutSlot(p, *in);
    } else {
      p = PutSlot(p, *in);
      p = PutSlot(p, outer);
    }
    p = PutValue(p, values[i], small);
  }
  return p;
}

}  // namespace

// Lines of entries [n0, n1): outer slice by outer slice, the outer index's text made once per
// slice, the inner index's from the source's table (or written), the value from the small table.
template <typename V>
char* MtxSource::Lines(uint64_t n0, uint64_t n1, const uint32_t* inner, const V* values,
                       char* p) const {
  const formats::MatrixReader& m = *matrix_;
  const std::vector<IndexSlot>* table = InnerSlots();
  const IndexSlot* slots = table != nullptr ? table->data() : nullptr;
  const ValueSlot* small = SmallValueSlots();
  const bool row_major = m.row_major();
  // Outer slice holding entry n0: MajorBegin(j) <= n0 < MajorBegin(j+1).
  uint32_t j = m.MajorOf(n0);
  for (uint64_t i = n0; i < n1; ++j) {
    const uint64_t end = std::min<uint64_t>(m.MajorBegin(j + 1), n1);
    if (i >= end) continue;  // an empty outer slice
    const IndexSlot outer = Slot(uint64_t{j} + 1);
    p = row_major
            ? SliceLines<true>(p, outer, slots, inner + (i - n0), values + (i - n0), end - i, small)
            : SliceLines<false>(p, outer, slots, inner + (i - n0), values + (i - n0), end - i,
                                small);
    i = end;
  }
  return p;
}

Status MtxSource::RenderChunk(uint64_t k, std::string* out) const {
  const auto& m = *matrix_;
  if (k == 0) {
    out->append(formats::IsInteger(m.value_type())
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
  RawText text(out);
  // Room for every line at its longest plus the slack of the 16-byte slot stores.
  char* p = text.Reserve((n1 - n0) * (3 * kMaxNumberChars) + sizeof(IndexSlot));
  switch (m.value_type()) {
    case ValueType::kUInt32:
      p = Lines(n0, n1, e.inner.data(), e.u32.data(), p);
      break;
    case ValueType::kFloat32:
      p = Lines(n0, n1, e.inner.data(), e.f32.data(), p);
      break;
    case ValueType::kFloat64:
      p = Lines(n0, n1, e.inner.data(), e.f64.data(), p);
      break;
    case ValueType::kInt32:
      p = Lines(n0, n1, e.inner.data(), e.i32.data(), p);
      break;
    case ValueType::kInt64:
      p = Lines(n0, n1, e.inner.data(), e.i64.data(), p);
      break;
    case ValueType::kUInt64:
      p = Lines(n0, n1, e.inner.data(), e.u64.data(), p);
      break;
  }
  text.Commit(p);
  return OkStatus();
}

}  // namespace omicsfs::text
