#include "formats/bpcells/bitpacked_array.h"

#include <algorithm>
#include <cstring>

#include "formats/bpcells/version.h"

namespace omicsfs::formats::bpcells {

using codec::Bp128Variant;
using codec::kBp128BlockSize;

Result<BitpackedArray> BitpackedArray::Open(std::shared_ptr<const io::ArrayStore> store,
                                            std::string prefix, Bp128Variant variant,
                                            uint64_t length) {
  BitpackedArray a;
  a.store_ = std::move(store);
  a.prefix_ = std::move(prefix);
  a.variant_ = variant;
  a.length_ = length;
  a.blocks_ = length / kBp128BlockSize + (length % kBp128BlockSize != 0);  // no overflow
  const std::string where = a.store_->Describe();

  ASSIGN_OR_RETURN(const uint64_t data_length,
                   CheckArray(*a.store_, a.Name("_data"), io::ElemType::kUInt32));
  ASSIGN_OR_RETURN(const uint64_t idx_length,
                   CheckArray(*a.store_, a.Name("_idx"), io::ElemType::kUInt32));
  if (idx_length != a.blocks_ + 1) {
    return CorruptError(where + ": array '" + a.Name("_idx") + "' has " +
                        std::to_string(idx_length) + " entries, expected " +
                        std::to_string(a.blocks_ + 1) + " for " + std::to_string(length) +
                        " values");
  }
  ASSIGN_OR_RETURN(auto off_info, a.store_->Info(a.Name("_idx_offsets")));
  if (off_info) {
    ASSIGN_OR_RETURN(a.idx_offsets_, a.store_->ReadAllAsU64(a.Name("_idx_offsets")));
    const auto& o = a.idx_offsets_;
    bool ok = o.size() >= 2 && o.front() == 0 && o.back() == idx_length &&
              std::is_sorted(o.begin(), o.end());
    if (!ok) {
      return CorruptError(where + ": array '" + a.Name("_idx_offsets") +
                          "' is not a monotone partition of " + a.Name("_idx"));
    }
  } else {
    a.idx_offsets_ = {0, idx_length};  // v1
  }
  if (variant == Bp128Variant::kD1 || variant == Bp128Variant::kD1Z) {
    RETURN_IF_ERROR(
        CheckArray(*a.store_, a.Name("_starts"), io::ElemType::kUInt32, a.blocks_).status());
  }
  // The first and last idx entries bound the data array.
  uint32_t first_idx = 0, last_idx = 0;
  RETURN_IF_ERROR(a.store_->ReadRange(a.Name("_idx"), 0, 1, &first_idx));
  RETURN_IF_ERROR(a.store_->ReadRange(a.Name("_idx"), a.blocks_, 1, &last_idx));
  uint64_t end = a.HighPart(a.blocks_) + last_idx;
  if (first_idx != 0 || end != data_length) {
    return CorruptError(where + ": array '" + a.Name("_idx") + "' spans [" +
                        std::to_string(first_idx) + ", " + std::to_string(end) + ") but '" +
                        a.Name("_data") + "' holds " + std::to_string(data_length) + " words");
  }
  return a;
}

uint64_t BitpackedArray::HighPart(uint64_t idx_pos) const {
  // Segment k covers idx positions [offsets[k], offsets[k+1]) and adds k·2^32.
  auto it = std::upper_bound(idx_offsets_.begin(), idx_offsets_.end(), idx_pos);
  uint64_t k = static_cast<uint64_t>(it - idx_offsets_.begin()) - 1;
  if (idx_pos == idx_offsets_.back()) k = idx_offsets_.size() - 2;  // the final boundary
  return k << 32;
}

Status BitpackedArray::Read(uint64_t first, uint64_t count, uint32_t* out) const {
  const std::string& where = store_->Describe();
  if (first > length_ || count > length_ - first) {
    return InternalError(where + ": " + prefix_ + ": read beyond " + std::to_string(length_));
  }
  if (count == 0) return OkStatus();
  const uint64_t b0 = first / kBp128BlockSize;
  const uint64_t b1 = (first + count + kBp128BlockSize - 1) / kBp128BlockSize;
  const uint64_t nb = b1 - b0;
  std::vector<uint32_t> idx(nb + 1);
  RETURN_IF_ERROR(store_->ReadRange(Name("_idx"), b0, nb + 1, idx.data()));
  std::vector<uint64_t> abs(nb + 1);
  for (uint64_t i = 0; i <= nb; ++i) abs[i] = HighPart(b0 + i) + idx[i];
  for (uint64_t i = 0; i < nb; ++i) {
    uint64_t words = abs[i + 1] - abs[i];
    if (abs[i + 1] < abs[i] || words % 4 != 0 || words > 128) {
      return CorruptError(where + ": array '" + Name("_idx") + "' block " + std::to_string(b0 + i) +
                          ": invalid extent [" + std::to_string(abs[i]) + ", " +
                          std::to_string(abs[i + 1]) + ") (bit width must be 0..32)");
    }
  }
  std::vector<uint32_t> data(abs[nb] - abs[0]);
  RETURN_IF_ERROR(store_->ReadRange(Name("_data"), abs[0], data.size(), data.data()));
  std::vector<uint32_t> starts;
  if (variant_ == Bp128Variant::kD1 || variant_ == Bp128Variant::kD1Z) {
    starts.resize(nb);
    RETURN_IF_ERROR(store_->ReadRange(Name("_starts"), b0, nb, starts.data()));
  }
  uint32_t block[kBp128BlockSize];
  uint64_t pos = first;
  const uint64_t stop = first + count;
  for (uint64_t i = 0; i < nb; ++i) {
    const uint64_t b = b0 + i;
    const size_t words = abs[i + 1] - abs[i];
    Status st =
        codec::Bp128Unpack(data.data() + (abs[i] - abs[0]), words, static_cast<int>(words / 4),
                           variant_, starts.empty() ? 0 : starts[i], block);
    if (!st.ok())
      return std::move(st).WithContext(where + ": " + prefix_ + " block " + std::to_string(b));
    const uint64_t block_first = b * kBp128BlockSize;
    const uint64_t from = std::max(pos, block_first) - block_first;
    const uint64_t to = std::min(stop, block_first + kBp128BlockSize) - block_first;
    std::memcpy(out + (block_first + from - first), block + from, (to - from) * sizeof(uint32_t));
    pos = block_first + to;
  }
  return OkStatus();
}

}  // namespace omicsfs::formats::bpcells
