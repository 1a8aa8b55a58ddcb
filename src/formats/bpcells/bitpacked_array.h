// Random access to a BP-128 bitpacked array stored as `<prefix>_data`, `<prefix>_idx`,
// `<prefix>_idx_offsets` (v2; absent in v1 = [0, nchunks+1]) and `<prefix>_starts` (d1 variants).
// Every on-disk number used as a size or index is validated before use.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codec/bp128.h"
#include "io/array_store.h"
#include "util/status.h"

namespace omicsfs::formats::bpcells {

class BitpackedArray {
 public:
  // `length`: logical number of values (known from elsewhere in the store, e.g. nnz).
  static Result<BitpackedArray> Open(std::shared_ptr<const io::ArrayStore> store,
                                     std::string prefix, codec::Bp128Variant variant,
                                     uint64_t length);

  uint64_t size() const { return length_; }
  uint64_t block_count() const { return blocks_; }

  // Decodes values [first, first + count) into `out`. Thread-safe (reads are positional).
  Status Read(uint64_t first, uint64_t count, uint32_t* out) const;

 private:
  std::string Name(const char* suffix) const { return prefix_ + suffix; }
  // idx value i (absolute, 64-bit) given the offsets segments.
  uint64_t HighPart(uint64_t idx_pos) const;

  std::shared_ptr<const io::ArrayStore> store_;
  std::string prefix_;
  codec::Bp128Variant variant_ = codec::Bp128Variant::kPlain;
  uint64_t length_ = 0;
  uint64_t blocks_ = 0;
  std::vector<uint64_t> idx_offsets_;  // segment boundaries over idx positions
};

}  // namespace omicsfs::formats::bpcells
