// MatrixMarket coordinate view of a matrix (formats/matrix.h): chunk 0 is the header, chunk
// k ≥ 1 holds entries [(k-1)·E, k·E) in storage order (E a multiple of 128).
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "formats/matrix.h"
#include "text/record_source.h"

namespace omicsfs::text {

class MtxSource : public RecordSource {
 public:
  static constexpr uint64_t kEntriesPerChunk = 128 * 128;

  // The inner axis's slots are kept when it has at most `max_inner_slots` indices (16 B each).
  static constexpr uint32_t kMaxInnerSlots = 1u << 18;

  MtxSource(std::shared_ptr<const formats::MatrixReader> matrix, std::string name,
            uint64_t entries_per_chunk = kEntriesPerChunk,
            uint32_t max_inner_slots = kMaxInnerSlots);
  uint64_t ChunkCount() const override;
  Status RenderChunk(uint64_t k, std::string* out) const override;
  std::string Describe() const override { return name_ + " of " + matrix_->Describe(); }

  // An index's 1-based text and the ' ' after it, in 16 bytes (uint32 indices: ≤ 11 bytes).
  struct IndexSlot {
    char text[15];
    uint8_t len;
  };

  static IndexSlot Slot(uint64_t index);  // index's text and ' '

 private:
  // The inner axis's slots, made on first use; nullptr when the axis is longer than the cap.
  const std::vector<IndexSlot>* InnerSlots() const;
  template <typename V>
  char* Lines(uint64_t n0, uint64_t n1, const uint32_t* inner, const V* values, char* p) const;

  std::shared_ptr<const formats::MatrixReader> matrix_;
  uint64_t per_chunk_;
  std::string name_;
  uint32_t max_inner_slots_;
  mutable std::once_flag inner_once_;
  mutable std::vector<IndexSlot> inner_slots_;
};

}  // namespace omicsfs::text
