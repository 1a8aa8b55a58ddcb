#include "formats/bpcells/fragments.h"

#include <algorithm>

namespace omicsfs::formats::bpcells {

Result<std::shared_ptr<const Fragments>> Fragments::Open(
    std::shared_ptr<const io::ArrayStore> store) {
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
  ASSIGN_OR_RETURN(auto cell_names, store->ReadStrings("cell_names"));
  f->store_cells_ = cell_names.size();
  f->cell_names_ = std::make_shared<const std::vector<std::string>>(std::move(cell_names));
  ASSIGN_OR_RETURN(f->chr_ptr_, store->ReadAllAsU64("chr_ptr"));
  if (f->chr_ptr_.size() != 2 * f->chr_names_.size()) {
    return CorruptError(where + ": array 'chr_ptr' has " + std::to_string(f->chr_ptr_.size()) +
                        " entries, expected 2 per chromosome (" +
                        std::to_string(f->chr_names_.size()) + ")");
  }
  if (v->packed) {
    f->count_ = f->chr_ptr_.empty() ? 0 : *std::max_element(f->chr_ptr_.begin(), f->chr_ptr_.end());
    ASSIGN_OR_RETURN(auto cell,
                     BitpackedArray::Open(store, "cell", codec::Bp128Variant::kPlain, f->count_));
    ASSIGN_OR_RETURN(auto start,
                     BitpackedArray::Open(store, "start", codec::Bp128Variant::kD1, f->count_));
    ASSIGN_OR_RETURN(auto end,
                     BitpackedArray::Open(store, "end", codec::Bp128Variant::kPlain, f->count_));
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
      return CorruptError(where + ": chr_ptr of chromosome " + std::to_string(c) + " is [" +
                          std::to_string(b) + ", " + std::to_string(e) + "), outside the " +
                          std::to_string(f->count_) + " fragments");
    }
  }
  for (size_t c = 0; c < f->chr_names_.size(); ++c) {
    auto [b, e] = f->ChrRange(c);
    f->runs_.push_back({static_cast<uint32_t>(c), b, e});
  }
  return std::shared_ptr<const Fragments>(std::move(f));
}

Result<uint32_t> Fragments::StartAt(uint64_t i) const {
  uint32_t v = 0;
  if (version_.packed) {
    RETURN_IF_ERROR(start_->Read(i, 1, &v));
  } else {
    RETURN_IF_ERROR(store_->ReadRange("start", i, 1, &v));
  }
  return v;
}

Result<std::pair<uint64_t, uint64_t>> Fragments::Seek(size_t c, uint64_t b, uint64_t e) const {
  auto [lo, hi] = ChrRange(c);
  if (lo == hi || b >= e) return std::make_pair(lo, lo);
  // hi: the first fragment starting at or after e (fragments are sorted by start within a
  // chromosome); every later one starts too late to overlap.
  for (uint64_t n = hi - lo; n > 0;) {
    const uint64_t half = n / 2, mid = lo + half;
    ASSIGN_OR_RETURN(uint32_t start, StartAt(mid));
    if (start < e) {
      lo = mid + 1;
      n -= half + 1;
    } else {
      n = half;
    }
  }
  hi = lo;
  lo = ChrRange(c).first;
  // lo: end_max[k] is the largest end from the chromosome's first fragment to block k's last
  // (block kb, where the chromosome starts, may also hold the previous one's ends): the first
  // block whose end_max passes b holds the first fragment that may reach into [b, e).
  ASSIGN_OR_RETURN(auto info, store_->Info("end_max"));
  if (!info || lo >= hi) return std::make_pair(lo, std::max(lo, hi));
  constexpr uint64_t kBlock = 128;
  const uint64_t kb = lo / kBlock, ke = (hi - 1) / kBlock;
  if (ke >= info->length) {
    return CorruptError(Describe() + ": array 'end_max' has " + std::to_string(info->length) +
                        " entries, fewer than the " + std::to_string(count_) +
                        " fragments' blocks");
  }
  auto end_max = [&](uint64_t k) -> Result<uint32_t> {
    uint32_t v = 0;
    RETURN_IF_ERROR(store_->ReadRange("end_max", k, 1, &v));
    return v;
  };
  ASSIGN_OR_RETURN(uint32_t first, end_max(kb));
  if (first > b) return std::make_pair(lo, hi);
  uint64_t k = kb + 1;
  for (uint64_t n = ke + 1 - k; n > 0;) {
    const uint64_t half = n / 2;
    ASSIGN_OR_RETURN(uint32_t v, end_max(k + half));
    if (v <= b) {
      k += half + 1;
      n -= half + 1;
    } else {
      n = half;
    }
  }
  lo = std::min(hi, std::max(lo, k * kBlock));
  return std::make_pair(lo, hi);
}

Result<std::shared_ptr<const Fragments>> Fragments::Slice(std::shared_ptr<const Fragments> root,
                                                          FragmentSubset subset) {
  std::shared_ptr<Fragments> f(new Fragments(*root));
  f->sliced_ = true;
  if (subset.regions) {
    if (root->sliced_) return InternalError(f->Describe() + ": regions chosen twice");
    if (subset.regions->size() > f->chr_names_.size())
      return InternalError(f->Describe() + ": regions of unknown chromosomes");
    f->regions_.assign(f->chr_names_.size(), {});
    f->runs_.clear();
    for (size_t c = 0; c < subset.regions->size(); ++c) {
      std::vector<Interval> asked = (*subset.regions)[c];
      std::sort(asked.begin(), asked.end(),
                [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
      auto& merged = f->regions_[c];
      for (const Interval& q : asked) {
        if (q.begin >= q.end) continue;
        // Only overlapping regions merge: two that touch ([a, m) and [m, b)) stay apart, as a
        // zero-length fragment at m overlaps neither (tabix) but would lie inside [a, b).
        if (!merged.empty() && q.begin < merged.back().end) {
          merged.back().end = std::max(merged.back().end, q.end);
        } else {
          merged.push_back(q);
        }
      }
      for (const Interval& q : merged) {
        ASSIGN_OR_RETURN(auto range, f->Seek(c, q.begin, q.end));
        if (range.first >= range.second) continue;
        auto& runs = f->runs_;
        if (!runs.empty() && runs.back().chr == c && range.first <= runs.back().end) {
          runs.back().end = std::max(runs.back().end, range.second);
        } else {
          runs.push_back({static_cast<uint32_t>(c), range.first, range.second});
        }
      }
    }
  }
  if (subset.cells) {
    if (!root->cell_map_.empty()) return InternalError(f->Describe() + ": cells chosen twice");
    f->cell_map_.assign(root->store_cells_, -1);
    auto names = std::make_shared<std::vector<std::string>>();
    names->reserve(subset.cells->size());
    for (uint32_t id : *subset.cells) {
      if (id >= f->cell_map_.size() || f->cell_map_[id] >= 0)
        return InternalError(f->Describe() + ": a cell chosen twice or unknown");
      f->cell_map_[id] = static_cast<int32_t>(names->size());
      names->push_back((*root->cell_names_)[id]);
    }
    f->cell_names_ = std::move(names);
  }
  return std::shared_ptr<const Fragments>(std::move(f));
}

void Fragments::Filter(uint64_t i0, FragmentRange* f) const {
  size_t kept = 0;
  size_t c = chr_names_.size();  // the chromosome of fragment i0 + i (regions only)
  for (size_t i = 0; i < f->start.size(); ++i) {
    if (!cell_map_.empty()) {
      const int32_t cell = cell_map_[f->cell[i]];
      if (cell < 0) continue;
      f->cell[i] = static_cast<uint32_t>(cell);
    }
    if (!regions_.empty()) {
      const uint64_t at = i0 + i;
      if (c == chr_names_.size() || at < ChrRange(c).first || at >= ChrRange(c).second) {
        for (c = 0; c < chr_names_.size() && !(at >= ChrRange(c).first && at < ChrRange(c).second);
             ++c) {
        }
        if (c == chr_names_.size()) continue;
      }
      // The first region ending after the start (regions are disjoint and sorted) is the only
      // one that may overlap.
      const auto& q = regions_[c];
      auto it = std::upper_bound(q.begin(), q.end(), uint64_t{f->start[i]},
                                 [](uint64_t s, const Interval& r) { return s < r.end; });
      if (it == q.end() || it->begin >= f->end[i]) continue;
    }
    f->start[kept] = f->start[i];
    f->end[kept] = f->end[i];
    f->cell[kept] = f->cell[i];
    ++kept;
  }
  f->start.resize(kept);
  f->end.resize(kept);
  f->cell.resize(kept);
}

Result<std::optional<uint64_t>> Fragments::MaxEnd() const {
  ASSIGN_OR_RETURN(auto info, store_->Info("end_max"));
  if (!info) return std::optional<uint64_t>();
  ASSIGN_OR_RETURN(std::vector<uint64_t> v, store_->ReadAllAsU64("end_max"));
  return std::optional<uint64_t>(v.empty() ? 0 : *std::max_element(v.begin(), v.end()));
}

Status Fragments::Read(uint64_t i0, uint64_t i1, FragmentRange* out) const {
  if (i0 > i1 || i1 > count_)
    return InternalError(Describe() + ": fragment range beyond the store");
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
                            std::to_string((i0 + i) / codec::kBp128BlockSize) +
                            ") ends beyond 2^32");
      }
      out->end[i] = static_cast<uint32_t>(end);
    }
  } else {
    RETURN_IF_ERROR(store_->ReadRange("start", i0, n, out->start.data()));
    RETURN_IF_ERROR(store_->ReadRange("end", i0, n, out->end.data()));
    RETURN_IF_ERROR(store_->ReadRange("cell", i0, n, out->cell.data()));
  }
  const uint64_t cells = store_cells_;
  for (uint64_t i = 0; i < n; ++i) {
    if (out->cell[i] >= cells || out->end[i] < out->start[i]) {
      return CorruptError(Describe() + ": fragment " + std::to_string(i0 + i) + " (block " +
                          std::to_string((i0 + i) / codec::kBp128BlockSize) + ") has cell " +
                          std::to_string(out->cell[i]) + " of " + std::to_string(cells) +
                          ", start " + std::to_string(out->start[i]) + ", end " +
                          std::to_string(out->end[i]));
    }
  }
  if (sliced_) Filter(i0, out);
  return OkStatus();
}

}  // namespace omicsfs::formats::bpcells
