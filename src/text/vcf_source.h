// VCF view of a VCF Zarr store: chunk 0 is the header, chunk k ≥ 1 the records of one variant
// range. Text convention: vcztools `view --no-version` (header order, INFO keys sorted, FORMAT =
// GT then sorted, keys missing everywhere dropped) with lossless floats; a stored spec-0.3
// `vcf_header` is emitted verbatim. The sites view drops FORMAT and sample columns (`-G`).
#pragma once

#include <memory>

#include "formats/vcz/store.h"
#include "text/record_source.h"

namespace omicsfs::text {

class VcfSource : public RecordSource {
 public:
  enum class View { kFull, kSites };
  static constexpr uint64_t kTargetChunkBytes = 512 << 10;
  // Chunks hold about `target_chunk_bytes` of text (whole records, equal parts of a
  // variants-chunk).
  VcfSource(std::shared_ptr<const formats::vcz::Store> store, View view, std::string name,
            uint64_t target_chunk_bytes = kTargetChunkBytes);

  uint64_t ChunkCount() const override;
  Status RenderChunk(uint64_t k, std::string* out) const override;
  // Records are rendered but their per-sample integer columns only counted.
  Result<std::optional<uint64_t>> MeasureChunk(uint64_t k) const override;
  std::string Describe() const override { return name_ + " of " + store_->Describe(); }
  // Each record's interval as tabix reads its line, from the measuring render (sample columns
  // counted, not written): the index pass costs no more than a sizing pass.
  bool HasRecordSpans() const override { return true; }
  Status RecordSpans(uint64_t k, ChunkSpans* out) const override;

  std::string Header() const;
  // What other views of the same records share (text/bcf_source.h): the store, the view, and the
  // records of chunk k ≥ 1: [(k − 1)·rows_per_chunk, k·rows_per_chunk).
  const std::shared_ptr<const formats::vcz::Store>& store() const { return store_; }
  View view() const { return view_; }
  bool with_samples() const { return view_ == View::kFull && !store_->samples().empty(); }
  uint64_t rows_per_chunk() const { return rows_per_chunk_; }

 private:
  // Records of chunk k ≥ 1 into out; with `measured`, the all-integer sample columns are not
  // written but their length added to *measured. With `rows`, each record's end in `out` and
  // the bytes measured until then.
  Status Render(uint64_t k, std::string* out, uint64_t* measured,
                std::vector<std::pair<uint64_t, uint64_t>>* rows = nullptr) const;

  std::shared_ptr<const formats::vcz::Store> store_;
  View view_;
  std::string name_;
  uint64_t rows_per_chunk_ = 1;
};

}  // namespace omicsfs::text
