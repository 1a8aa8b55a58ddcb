// obs.tsv / var.tsv of an AnnData store: a table (formats/anndata) exactly as pandas 1.5 writes
// `df.to_csv(sep='\t')` — the index first (its name, or nothing, heading it), categoricals as
// their labels, booleans True/False, floats as numpy prints the column's dtype (shortest digits;
// positional from 1e-4 to 1e16, else d.ddde±XX), missing values empty, a field holding a tab,
// quote or newline quoted ("" for a quote), and a line of one empty field written "".
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "formats/anndata/anndata.h"
#include "text/record_source.h"

namespace omicsfs::text {

class DataFrameSource : public RecordSource {
 public:
  static constexpr uint64_t kRowsPerChunk = 4096;
  using Loader = std::function<Result<std::shared_ptr<const formats::anndata::Table>>()>;
  // `rows`: the table's row count (known from the store's names before the table is read);
  // `load` reads the table, once, when first rendered.
  DataFrameSource(Loader load, uint64_t rows, std::string describe)
      : load_(std::move(load)), rows_(rows), describe_(std::move(describe)) {}
  uint64_t ChunkCount() const override { return 1 + (rows_ + kRowsPerChunk - 1) / kRowsPerChunk; }
  Status RenderChunk(uint64_t k, std::string* out) const override;
  std::string Describe() const override { return describe_; }

 private:
  Result<const formats::anndata::Table*> Loaded() const;

  Loader load_;
  uint64_t rows_;
  std::string describe_;
  mutable std::once_flag once_;
  mutable Result<std::shared_ptr<const formats::anndata::Table>> table_ = InternalError("not read");
};

// Row i of a column as obs.tsv writes it, before csv quoting ("" when missing).
void AppendCellText(std::string* out, const formats::anndata::Column& c, uint64_t i);

// numpy's text of a float (`str(np.float32(v))` when `single`, else of a float64), as pandas
// writes it; NaN is left to the caller (a missing value).
void AppendNumpyFloat(std::string* out, double v, bool single);

}  // namespace omicsfs::text
