#include "formats/bpcells/matrix.h"

#include <algorithm>

namespace omicsfs::formats::bpcells {
namespace {

io::ElemType ElemOf(ValueType t) {
  switch (t) {
    case ValueType::kUInt32: return io::ElemType::kUInt32;
    case ValueType::kFloat32: return io::ElemType::kFloat32;
    case ValueType::kFloat64: return io::ElemType::kFloat64;
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
    ASSIGN_OR_RETURN(auto idx, BitpackedArray::Open(store, "index", codec::Bp128Variant::kD1Z, m->nnz_));
    m->packed_index_ = std::move(idx);
    if (v->value_type == ValueType::kUInt32) {
      ASSIGN_OR_RETURN(auto val, BitpackedArray::Open(store, "val", codec::Bp128Variant::kM1, m->nnz_));
      m->packed_val_ = std::move(val);
    } else {
      RETURN_IF_ERROR(CheckArray(*store, "val", vt, m->nnz_).status());
    }
  } else {
    RETURN_IF_ERROR(CheckArray(*store, "index", io::ElemType::kUInt32, m->nnz_).status());
    RETURN_IF_ERROR(CheckArray(*store, "val", vt, m->nnz_).status());
  }

  ASSIGN_OR_RETURN(m->row_names_, ReadNames(*store, "row_names", m->rows_));
  ASSIGN_OR_RETURN(m->col_names_, ReadNames(*store, "col_names", m->cols_));
  return std::shared_ptr<const Matrix>(std::move(m));
}

Status Matrix::ReadEntries(uint64_t n0, uint64_t n1, MatrixEntries* out) const {
  if (n0 > n1 || n1 > nnz_) {
    return InternalError(Describe() + ": entry range [" + std::to_string(n0) + ", " +
                         std::to_string(n1) + ") beyond nnz " + std::to_string(nnz_));
  }
  const uint64_t n = n1 - n0;
  out->inner.resize(n);
  if (packed_index_) {
    RETURN_IF_ERROR(packed_index_->Read(n0, n, out->inner.data()));
  } else {
    RETURN_IF_ERROR(store_->ReadRange("index", n0, n, out->inner.data()));
  }
  const uint32_t limit = inner_dim();
  for (uint64_t i = 0; i < n; ++i) {
    if (out->inner[i] >= limit) {
      return CorruptError(Describe() + ": entry " + std::to_string(n0 + i) + " (index block " +
                          std::to_string((n0 + i) / codec::kBp128BlockSize) + "): index " +
                          std::to_string(out->inner[i]) + " is not below " + std::to_string(limit));
    }
  }
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
  }
  return OkStatus();
}

}  // namespace omicsfs::formats::bpcells
