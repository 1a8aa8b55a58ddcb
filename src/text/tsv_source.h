// Name lists as text: one name per line (rownames.txt, colnames.txt, barcodes.tsv),
// `name\tname` per line (10x v2 genes.tsv), or `name\tname\tGene Expression` per line (10x v3
// features.tsv). Optionally PREFIX1..PREFIXn stand in for absent names.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "text/record_source.h"

namespace omicsfs::text {

class NamesSource : public RecordSource {
 public:
  enum class Layout { kOnePerLine, kTwoColumns, kFeatures };
  static constexpr uint64_t kNamesPerChunk = 8192;

  // `names` is kept alive by the caller's shared pointer (aliasing the owning reader is fine).
  // When `names` is empty and `fallback_count` > 0, PREFIX1..PREFIXn are written (n =
  // fallback_count; the 10x files use "row"/"col": R's Read10X refuses numbers as names).
  NamesSource(std::shared_ptr<const std::vector<std::string>> names, Layout layout,
              uint64_t fallback_count, std::string describe, std::string fallback_prefix = {});
  uint64_t ChunkCount() const override;
  Status RenderChunk(uint64_t k, std::string* out) const override;
  std::string Describe() const override { return describe_; }

 private:
  uint64_t count() const { return names_->empty() ? fallback_ : names_->size(); }

  std::shared_ptr<const std::vector<std::string>> names_;
  Layout layout_;
  uint64_t fallback_;
  std::string describe_;
  std::string fallback_prefix_;
};

}  // namespace omicsfs::text

namespace omicsfs::formats::datg {
class DatgMatrix;
}

namespace omicsfs::text {

// The dense TSV of a datg matrix, as systemsgenetics' DATG_2_TXT writes it: `\t` + column names,
// then per row the name and the values in Java Double.toString form. Chunk 0 is the header,
// chunk k ≥ 1 a run of rows: of the whole file, whole row blocks of about 256 KiB of text (as
// sizes persisted by earlier versions expect); of a slice (a sub-matrix), at least a row block's
// count of its rows and about 256 KiB of text, decoding each row block its rows are in once.
// A slice's cells are the full view's, cell for cell.
class DatgTsvSource : public RecordSource {
 public:
  // `describe` names the view in messages ("matrix.tsv of /data/x.datg/rows=@genes").
  DatgTsvSource(std::shared_ptr<const formats::datg::DatgMatrix> matrix, std::string describe);
  uint64_t ChunkCount() const override;
  Status RenderChunk(uint64_t k, std::string* out) const override;
  // From digit counts: the values' shortest decimals, not their text (sizing ~1/3 cheaper).
  Result<std::optional<uint64_t>> MeasureChunk(uint64_t k) const override;
  std::string Describe() const override { return describe_; }

 private:
  std::pair<uint64_t, uint64_t> Rows(uint64_t k) const;  // rows of chunk k ≥ 1

  std::shared_ptr<const formats::datg::DatgMatrix> matrix_;
  std::string describe_;
  uint64_t rows_per_chunk_ = 1;
};

}  // namespace omicsfs::text
