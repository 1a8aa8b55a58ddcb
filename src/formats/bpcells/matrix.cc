#include "formats/bpcells/matrix.h"

#include <algorithm>

namespace omicsfs::formats::bpcells {
namespace {

io::ElemType ElemOf(ValueType t) {
  switch (t) {
    case ValueType::kUInt32:
      return io::ElemType::kUInt32;
    case ValueType::kFloat32:
      return io::ElemType::kFloat32;
    case ValueType::kFloat64:
      return io::ElemType::kFloat64;
    default:  // BPCells stores hold only the three types above
      break;
  }
  return io::ElemType::kUInt32;
}

Result<std::vector<std::string>> ReadNames(const io::ArrayStore& s, const std::string& name,
                                           uint32_t expected) {
  auto names = s.ReadStrings(name);
  if (!names.ok()) {
    if (names.status().code() == ErrorCode::kNotFound) return std::vector<std::string>();
    return std::move(names).status();
  }
  if (!names->empty() && names->size() != expected) {
    return CorruptError(s.Describe() + ": array '" + name + "' holds " +
                        std::to_string(names->size()) + " names, expected 0 or " +
                        std::to_string(expected));
  }
  return std::move(names).value();
}

}  // namespace

Result<std::shared_ptr<const Matrix>> Matrix::Open(std::shared_ptr<const io::ArrayStore> store) {
  const std::string where = store->Describe();
  ASSIGN_OR_RETURN(std::string version, store->Version());
  std::optional<StoreVersion> v = ParseVersion(version);
  if (!v || v->kind != StoreKind::kMatrix) {
    return UnsupportedError(where + ": unrecognised BPCells matrix version '" + version + "'");
  }
  std::shared_ptr<Matrix> m(new Matrix());
  m->store_ = store;
  m->version_ = *v;
  m->value_type_ = v->value_type;

  ASSIGN_OR_RETURN(std::vector<uint64_t> shape, store->ReadAllAsU64("shape"));
  if (shape.size() != 2 || shape[0] > UINT32_MAX || shape[1] > UINT32_MAX) {
    return CorruptError(where + ": array 'shape' must hold two uint32 values");
  }
  m->rows_ = static_cast<uint32_t>(shape[0]);
  m->cols_ = static_cast<uint32_t>(shape[1]);

  ASSIGN_OR_RETURN(std::vector<std::string> order, store->ReadStrings("storage_order"));
  if (order.size() != 1 || (order[0] != "col" && order[0] != "row")) {
    return CorruptError(where + ": array 'storage_order' must be \"col\" or \"row\"");
  }
  m->row_major_ = order[0] == "row";

  ASSIGN_OR_RETURN(m->idxptr_, store->ReadAllAsU64("idxptr"));
  const auto& p = m->idxptr_;
  if (p.size() != uint64_t{m->outer_dim()} + 1) {
    return CorruptError(where + ": array 'idxptr' has " + std::to_string(p.size()) +
                        " entries, expected " + std::to_string(uint64_t{m->outer_dim()} + 1));
  }
  if (p.front() != 0) return CorruptError(where + ": array 'idxptr' does not start at 0");
  for (size_t j = 0; j + 1 < p.size(); ++j) {
    if (p[j + 1] < p[j]) {
      return CorruptError(where + ": array 'idxptr' decreases at " + std::to_string(j + 1));
    }
  }
  m->nnz_ = p.back();
  if (m->nnz_ > uint64_t{m->rows_} * m->cols_) {
    return CorruptError(where + ": idxptr claims " + std::to_string(m->nnz_) +
                        " entries, more than rows × cols");
  }

  const io::ElemType vt = ElemOf(v->value_type);
  if (v->packed) {
    ASSIGN_OR_RETURN(auto idx,
                     BitpackedArray::Open(store, "index", codec::Bp128Variant::kD1Z, m->nnz_));
    m->packed_index_ = std::move(idx);
    if (v->value_type == ValueType::kUInt32) {
      ASSIGN_OR_RETURN(auto val,
                       BitpackedArray::Open(store, "val", codec::Bp128Variant::kM1, m->nnz_));
      m->packed_val_ = std::move(val);
    } else {
      RETURN_IF_ERROR(CheckArray(*store, "val", vt, m->nnz_).status());
    }
  } else {
    RETURN_IF_ERROR(CheckArray(*store, "index", io::ElemType::kUInt32, m->nnz_).status());
    RETURN_IF_ERROR(CheckArray(*store, "val", vt, m->nnz_).status());
  }

  ASSIGN_OR_RETURN(auto row_names, ReadNames(*store, "row_names", m->rows_));
  ASSIGN_OR_RETURN(auto col_names, ReadNames(*store, "col_names", m->cols_));
  m->row_names_ = std::make_shared<const std::vector<std::string>>(std::move(row_names));
  m->col_names_ = std::make_shared<const std::vector<std::string>>(std::move(col_names));
  return std::shared_ptr<const Matrix>(std::move(m));
}

Status Matrix::ReadEntries(uint64_t n0, uint64_t n1, MatrixEntries* out) const {
  return slice_ ? ReadSliced(n0, n1, out) : ReadStored(n0, n1, out);
}

Status Matrix::ReadInner(uint64_t n0, uint64_t n1, std::vector<uint32_t>* out) const {
  if (slice_) {
    MatrixEntries e;
    RETURN_IF_ERROR(ReadSliced(n0, n1, &e));
    *out = std::move(e.inner);
    return OkStatus();
  }
  if (n0 > n1 || n1 > nnz_) {
    return InternalError(Describe() + ": entry range [" + std::to_string(n0) + ", " +
                         std::to_string(n1) + ") beyond nnz " + std::to_string(nnz_));
  }
  const uint64_t n = n1 - n0;
  out->resize(n);
  if (packed_index_) {
    RETURN_IF_ERROR(packed_index_->Read(n0, n, out->data()));
  } else {
    RETURN_IF_ERROR(store_->ReadRange("index", n0, n, out->data()));
  }
  const uint32_t limit = inner_dim();
  uint32_t largest = 0;  // a vectorised pass; the offender is looked for only when there is one
  for (uint64_t i = 0; i < n; ++i) largest = std::max(largest, (*out)[i]);
  for (uint64_t i = 0; largest >= limit && i < n; ++i) {
    if ((*out)[i] >= limit) {
      return CorruptError(Describe() + ": array 'index': entry " + std::to_string(n0 + i) +
                          " (index block " + std::to_string((n0 + i) / codec::kBp128BlockSize) +
                          "): index " + std::to_string((*out)[i]) + " is not below " +
                          std::to_string(limit));
    }
  }
  return OkStatus();
}

Status Matrix::ReadStored(uint64_t n0, uint64_t n1, MatrixEntries* out) const {
  RETURN_IF_ERROR(
      ReadInner(n0, n1, &out->inner));  // the store's own (ReadStored is never a slice's)
  const uint64_t n = n1 - n0;
  switch (version_.value_type) {
    case ValueType::kUInt32:
      out->u32.resize(n);
      if (packed_val_) return packed_val_->Read(n0, n, out->u32.data());
      return store_->ReadRange("val", n0, n, out->u32.data());
    case ValueType::kFloat32:
      out->f32.resize(n);
      return store_->ReadRange("val", n0, n, out->f32.data());
    case ValueType::kFloat64:
      out->f64.resize(n);
      return store_->ReadRange("val", n0, n, out->f64.data());
    default:  // BPCells stores hold only the three types above
      break;
  }
  return OkStatus();
}

namespace {

constexpr uint64_t kBatch = uint64_t{1} << 16;  // parent entries read at once by a slice

// Keeps `out`'s vectors for `t` only, emptied, with room for `n` entries.
void Reset(ValueType t, uint64_t n, MatrixEntries* out) {
  out->inner.clear();
  out->u32.clear();
  out->f32.clear();
  out->f64.clear();
  out->inner.reserve(n);
  switch (t) {
    case ValueType::kUInt32:
      out->u32.reserve(n);
      break;
    case ValueType::kFloat32:
      out->f32.reserve(n);
      break;
    case ValueType::kFloat64:
      out->f64.reserve(n);
      break;
    default:  // BPCells stores hold only the three types above
      break;
  }
}

// Appends entries [a, b) of `from` (their inner indices as they are).
void AppendRange(ValueType t, const MatrixEntries& from, uint64_t a, uint64_t b,
                 MatrixEntries* to) {
  to->inner.insert(to->inner.end(), from.inner.begin() + a, from.inner.begin() + b);
  switch (t) {
    case ValueType::kUInt32:
      to->u32.insert(to->u32.end(), from.u32.begin() + a, from.u32.begin() + b);
      break;
    case ValueType::kFloat32:
      to->f32.insert(to->f32.end(), from.f32.begin() + a, from.f32.begin() + b);
      break;
    case ValueType::kFloat64:
      to->f64.insert(to->f64.end(), from.f64.begin() + a, from.f64.begin() + b);
      break;
    default:  // BPCells stores hold only the three types above
      break;
  }
}

void AppendOne(ValueType t, const MatrixEntries& from, uint64_t i, uint32_t inner,
               MatrixEntries* to) {
  to->inner.push_back(inner);
  switch (t) {
    case ValueType::kUInt32:
      to->u32.push_back(from.u32[i]);
      break;
    case ValueType::kFloat32:
      to->f32.push_back(from.f32[i]);
      break;
    case ValueType::kFloat64:
      to->f64.push_back(from.f64[i]);
      break;
    default:  // BPCells stores hold only the three types above
      break;
  }
}

}  // namespace

Result<std::shared_ptr<const Matrix>> Matrix::Slice(std::shared_ptr<const Matrix> parent,
                                                    MatrixSubset subset) {
  const Matrix& p = *parent;
  const std::string& where = p.Describe();
  if (subset.rows) RETURN_IF_ERROR(CheckChosen(*subset.rows, p.rows_, "row", where));
  if (subset.cols) RETURN_IF_ERROR(CheckChosen(*subset.cols, p.cols_, "column", where));

  std::shared_ptr<Matrix> m(new Matrix());
  m->store_ = p.store_;
  m->version_ = p.version_;
  m->value_type_ = p.value_type_;
  m->row_major_ = p.row_major_;
  m->rows_ = subset.rows ? static_cast<uint32_t>(subset.rows->size()) : p.rows_;
  m->cols_ = subset.cols ? static_cast<uint32_t>(subset.cols->size()) : p.cols_;
  m->row_names_ = subset.rows ? ChosenNames(*p.row_names_, *subset.rows, "row") : p.row_names_;
  m->col_names_ = subset.cols ? ChosenNames(*p.col_names_, *subset.cols, "col") : p.col_names_;

  auto data = std::make_shared<SliceData>();
  data->parent = parent;
  const auto& outer = p.row_major_ ? subset.rows : subset.cols;
  const auto& inner = p.row_major_ ? subset.cols : subset.rows;
  if (outer) {
    data->major = *outer;
  } else {
    data->major.resize(p.outer_dim());
    for (uint32_t j = 0; j < p.outer_dim(); ++j) data->major[j] = j;
  }
  const auto& pp = p.idxptr_;
  const auto& major = data->major;
  auto& ptr = m->idxptr_;
  ptr.assign(major.size() + 1, 0);
  if (!inner) {
    for (size_t j = 0; j < major.size(); ++j)
      ptr[j + 1] = ptr[j] + (pp[major[j] + 1] - pp[major[j]]);
  } else {
    data->minor_map.assign(p.inner_dim(), kDropped);
    for (size_t k = 0; k < inner->size(); ++k)
      data->minor_map[(*inner)[k]] = static_cast<uint32_t>(k);
    // The counting pass: runs of consecutive parent major slices are read together.
    uint64_t kept = 0;
    std::vector<uint32_t> index;
    for (size_t j = 0; j < major.size();) {
      size_t e = j + 1;
      while (e < major.size() && major[e] == major[e - 1] + 1) ++e;
      const uint64_t a = pp[major[j]], b = pp[major[e - 1] + 1];
      size_t jj = j;
      for (uint64_t n0 = a; n0 < b;) {
        const uint64_t n1 = std::min(b, n0 + kBatch);
        RETURN_IF_ERROR(p.ReadInner(n0, n1, &index));
        for (uint64_t i = n0; i < n1; ++i) {
          while (pp[major[jj] + 1] <= i) ptr[++jj] = kept;
          if (data->minor_map[index[i - n0]] == kDropped) continue;
          if (kept % kCheckpoint == 0) data->checkpoint.push_back(i);
          ++kept;
        }
        n0 = n1;
      }
      while (jj < e) ptr[++jj] = kept;
      j = e;
    }
  }
  m->nnz_ = ptr.back();
  m->slice_ = std::move(data);
  return std::shared_ptr<const Matrix>(std::move(m));
}

Result<std::shared_ptr<const MatrixReader>> Matrix::Slice(MatrixSubset subset) const {
  ASSIGN_OR_RETURN(auto slice, Slice(std::static_pointer_cast<const Matrix>(shared_from_this()),
                                     std::move(subset)));
  return std::shared_ptr<const MatrixReader>(std::move(slice));
}

Status Matrix::ReadSliced(uint64_t n0, uint64_t n1, MatrixEntries* out) const {
  if (n0 > n1 || n1 > nnz_) {
    return InternalError(Describe() + ": entry range [" + std::to_string(n0) + ", " +
                         std::to_string(n1) + ") beyond the slice's nnz " + std::to_string(nnz_));
  }
  const SliceData& s = *slice_;
  const Matrix& p = *s.parent;
  const auto& pp = p.idxptr_;
  const ValueType t = version_.value_type;
  Reset(t, n1 - n0, out);
  if (n0 == n1) return OkStatus();
  MatrixEntries got;
  // The outer slice holding entry n0 (the last j with idxptr[j] <= n0: never an empty one).
  size_t j =
      static_cast<size_t>(std::upper_bound(idxptr_.begin(), idxptr_.end(), n0) - idxptr_.begin()) -
      1;
  if (s.minor_map.empty()) {
    // Whole major slices: runs of them consecutive in the parent are read at once.
    for (uint64_t pos = n0; pos < n1;) {
      while (idxptr_[j + 1] <= pos) ++j;
      const uint64_t from = pp[s.major[j]] + (pos - idxptr_[j]);
      uint64_t to = pp[s.major[j]] + (std::min(n1, idxptr_[j + 1]) - idxptr_[j]);
      uint64_t next = std::min(n1, idxptr_[j + 1]);
      while (next < n1 && j + 1 < s.major.size() && s.major[j + 1] == s.major[j] + 1) {
        ++j;
        to = pp[s.major[j]] + (std::min(n1, idxptr_[j + 1]) - idxptr_[j]);
        next = std::min(n1, idxptr_[j + 1]);
      }
      RETURN_IF_ERROR(p.ReadEntries(from, to, &got));
      AppendRange(t, got, 0, to - from, out);
      pos = next;
    }
    return OkStatus();
  }
  // A minor-axis filter: from the checkpoint at or before n0, the parent's entries are read and
  // the kept ones counted until n1.
  uint64_t kept = (n0 / kCheckpoint) * kCheckpoint;
  uint64_t par = s.checkpoint[n0 / kCheckpoint];
  j = static_cast<size_t>(std::upper_bound(idxptr_.begin(), idxptr_.end(), kept) -
                          idxptr_.begin()) -
      1;
  while (kept < n1) {
    if (kept == idxptr_[j + 1]) {  // this major slice's kept entries are all seen
      while (idxptr_[j + 1] == kept) ++j;
      par = pp[s.major[j]];
    }
    const uint64_t end = pp[s.major[j] + 1];
    if (par >= end) {
      return CorruptError(Describe() + ": outer slice " + std::to_string(s.major[j]) +
                          " holds fewer chosen entries than when it was counted");
    }
    const uint64_t b = std::min(end, par + kBatch);
    RETURN_IF_ERROR(p.ReadEntries(par, b, &got));
    uint64_t i = 0;
    for (; i < b - par && kept < idxptr_[j + 1]; ++i) {
      const uint32_t k = s.minor_map[got.inner[i]];
      if (k == kDropped) continue;
      if (kept >= n0) AppendOne(t, got, i, k, out);
      if (++kept == n1) break;
    }
    par += i;
  }
  return OkStatus();
}

}  // namespace omicsfs::formats::bpcells
