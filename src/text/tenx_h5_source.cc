#include "text/tenx_h5_source.h"

#include <limits>

#include "text/sparse_arrays.h"

namespace omicsfs::text {
namespace {

using io::h5::H5Type;
using io::h5::H5Value;

constexpr uint64_t kInt32Max = std::numeric_limits<int32_t>::max();
// Fixed-length names cost width × count bytes in the image: one very long name among a million
// would make gigabytes of padding.
constexpr uint64_t kMaxNamesBytes = uint64_t{1} << 30;

Result<H5Value> Names(std::vector<std::string> names, const char* what) {
  H5Value v = H5Value::FixedStrings(std::move(names));
  const uint64_t bytes = uint64_t{v.strings_as.fixed} * v.strings.size();
  if (bytes > kMaxNamesBytes)
    return UnsupportedError(
        "10x.h5: " + std::string(what) + ": " + std::to_string(v.strings.size()) + " names of " +
        std::to_string(v.strings_as.fixed) + " bytes each (as wide as the longest) would take " +
        std::to_string(bytes) + " bytes");
  return v;
}

std::string Le64(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(v >> (8 * i));
  return out;
}

}  // namespace

Result<io::h5::H5Plan> TenxH5Plan(const formats::MatrixReader& m) {
  ASSIGN_OR_RETURN(const H5Type value_type, H5ValueType(m.value_type(), "10x.h5"));
  io::h5::H5Plan p;
  p.AddGroup("/", {{"filetype", H5Value::String("matrix", {.fixed = 6, .utf8 = false})},
                   {"version", H5Value::Numbers(H5Type::kInt64, {}, Le64(2))}});
  p.AddGroup("/matrix");
  p.AddGroup("/matrix/features");
  const std::vector<std::string> rows = NamesOrStandIns(m.row_names(), m.rows(), "row");
  ASSIGN_OR_RETURN(H5Value barcodes,
                   Names(NamesOrStandIns(m.col_names(), m.cols(), "col"), "barcodes"));
  p.AddDataset("/matrix/barcodes", std::move(barcodes));
  p.AddDataset("/matrix/features/_all_tag_keys", H5Value::FixedStrings({"genome"}));
  p.AddDataset("/matrix/features/feature_type",
               H5Value::FixedStrings(std::vector<std::string>(m.rows(), "Gene Expression")));
  p.AddDataset("/matrix/features/genome",
               H5Value::FixedStrings(std::vector<std::string>(m.rows(), "")));
  ASSIGN_OR_RETURN(H5Value ids, Names(rows, "features"));
  p.AddDataset("/matrix/features/id", ids);
  p.AddDataset("/matrix/features/name", std::move(ids));
  if (m.rows() > kInt32Max || m.cols() > kInt32Max) {
    p.AddDataset("/matrix/shape", H5Value::Int64s({int64_t{m.rows()}, int64_t{m.cols()}}));
  } else {
    p.AddDataset("/matrix/shape",
                 H5Value::Int32s({static_cast<int32_t>(m.rows()), static_cast<int32_t>(m.cols())}));
  }
  // Last, so that the arrays lie after the metadata (allocated when made).
  p.AddExternal("/matrix/indptr", H5Type::kInt64, uint64_t{m.cols()} + 1);
  p.AddExternal("/matrix/indices", H5Type::kInt64, m.nnz());
  p.AddExternal("/matrix/data", value_type, m.nnz());
  return p;
}

std::shared_ptr<const H5ArrayRenderer> TenxH5Renderer(
    std::shared_ptr<const formats::MatrixReader> m, cache::CachePool* pool,
    std::vector<std::string> scratch_dirs, formats::TransposedCopy persist,
    uint64_t entries_per_chunk) {
  return std::make_shared<const SparseArraysRenderer>(
      ColumnsOf(std::move(m), std::move(scratch_dirs), std::move(persist)), pool,
      SparseArraysRenderer::Widths{.indptr64 = true, .indices64 = true}, entries_per_chunk);
}

}  // namespace omicsfs::text
