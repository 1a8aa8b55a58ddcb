#include "formats/bpcells/fragments.h"

#include <algorithm>

namespace omicsfs::formats::bpcells {

Result<std::shared_ptr<const Fragments>> Fragments::Open(std::shared_ptr<const io::ArrayStore> store) {
  const std::string where = store->Describe();
  ASSIGN_OR_RETURN(std::string version, store->Version());
  std::optional<StoreVersion> v = ParseVersion(version);
  if (!v || v->kind != StoreKind::kFragments) {
    return UnsupportedError(where + ": unrecognised BPCells fragments version '" + version + "'");
  }
  std::shared_ptr<Fragments> f(new Fragments());
  f->store_ = store;
  f->version_ = *v;
  ASSIGN_OR_RETURN(f->chr_names_, store->ReadStrings("chr_names"));
  ASSIGN_OR_RETURN(f->cell_names_, store->ReadStrings("cell_names"));
  ASSIGN_OR_RETURN(f->chr_ptr_, store->ReadAllAsU64("chr_ptr"));
  if (f->chr_ptr_.size() != 2 * f->chr_names_.size()) {
    return CorruptError(where + ": array 'chr_ptr' has " + std::to_string(f->chr_ptr_.size()) +
                        " entries, expected 2 per chromosome (" + std::to_string(f->chr_names_.size()) + ")");
  }
  if (v->packed) {
    f->count_ = f->chr_ptr_.empty() ? 0 : *std::max_element(f->chr_ptr_.begin(), f->chr_ptr_.end());
    ASSIGN_OR_RETURN(auto cell, BitpackedArray::Open(store, "cell", codec::Bp128Variant::kPlain, f->count_));
    ASSIGN_OR_RETURN(auto start, BitpackedArray::Open(store, "start", codec::Bp128Variant::kD1, f->count_));
    ASSIGN_OR_RETURN(auto end, BitpackedArray::Open(store, "end", codec::Bp128Variant::kPlain, f->count_));
    f->cell_ = std::move(cell);
    f->start_ = std::move(start);
    f->end_ = std::move(end);
  } else {
    ASSIGN_OR_RETURN(f->count_, CheckArray(*store, "start", io::ElemType::kUInt32));
    for (const char* name : {"end", "cell"}) {
      RETURN_IF_ERROR(CheckArray(*store, name, io::ElemType::kUInt32, f->count_).status());
    }
  }
  for (size_t c = 0; c < f->chr_names_.size(); ++c) {
    auto [b, e] = f->ChrRange(c);
    if (b > e || e > f->count_) {
      return CorruptError(where + ": chr_ptr of chromosome " + std::to_string(c) + " is [" + std::to_string(b) + ", " +
                          std::to_string(e) + "), outside the " + std::to_string(f->count_) + " fragments");
    }
  }
  return std::shared_ptr<const Fragments>(std::move(f));
}

Result<std::optional<uint64_t>> Fragments::MaxEnd() const {
  ASSIGN_OR_RETURN(auto info, store_->Info("end_max"));
  if (!info) return std::optional<uint64_t>();
  ASSIGN_OR_RETURN(std::vector<uint64_t> v, store_->ReadAllAsU64("end_max"));
  return std::optional<uint64_t>(v.empty() ? 0 : *std::max_element(v.begin(), v.end()));
}

Status Fragments::Read(uint64_t i0, uint64_t i1, FragmentRange* out) const {
  if (i0 > i1 || i1 > count_) return InternalError(Describe() + ": fragment range beyond the store");
  const uint64_t n = i1 - i0;
  out->start.resize(n);
  out->end.resize(n);
  out->cell.resize(n);
  if (version_.packed) {
    RETURN_IF_ERROR(start_->Read(i0, n, out->start.data()));
    RETURN_IF_ERROR(end_->Read(i0, n, out->end.data()));
    RETURN_IF_ERROR(cell_->Read(i0, n, out->cell.data()));
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t end = uint64_t{out->start[i]} + out->end[i];  // stored as end - start
      if (end > UINT32_MAX) {
        return CorruptError(Describe() + ": fragment " + std::to_string(i0 + i) + " (block " +
                            std::to_string((i0 + i) / codec::kBp128BlockSize) + ") ends beyond 2^32");
      }
      out->end[i] = static_cast<uint32_t>(end);
    }
  } else {
    RETURN_IF_ERROR(store_->ReadRange("start", i0, n, out->start.data()));
    RETURN_IF_ERROR(store_->ReadRange("end", i0, n, out->end.data()));
    RETURN_IF_ERROR(store_->ReadRange("cell", i0, n, out->cell.data()));
  }
  for (uint64_t i = 0; i < n; ++i) {
    if (out->cell[i] >= cell_names_.size() || out->end[i] < out->start[i]) {
      return CorruptError(Describe() + ": fragment " + std::to_string(i0 + i) + " (block " +
                          std::to_string((i0 + i) / codec::kBp128BlockSize) + ") has cell " +
                          std::to_string(out->cell[i]) + " of " + std::to_string(cell_names_.size()) +
                          ", start " + std::to_string(out->start[i]) + ", end " + std::to_string(out->end[i]));
    }
  }
  return OkStatus();
}

}  // namespace omicsfs::formats::bpcells
