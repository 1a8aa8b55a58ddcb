#include "text/h5ad_source.h"

#include <limits>

namespace omicsfs::text {
namespace {

using formats::ValueType;
using io::h5::H5Attribute;
using io::h5::H5Type;
using io::h5::H5Value;

constexpr uint64_t kInt32Max = std::numeric_limits<int32_t>::max();

std::vector<H5Attribute> Encoding(const char* type, const char* version) {
  return {{"encoding-type", H5Value::String(type)}, {"encoding-version", H5Value::String(version)}};
}

}  // namespace

Result<H5Type> H5adValueType(ValueType t) { return H5ValueType(t, "matrix.h5ad"); }

Result<io::h5::H5Plan> H5adPlan(const formats::MatrixReader& m) {
  ASSIGN_OR_RETURN(const H5Type value_type, H5adValueType(m.value_type()));
  io::h5::H5Plan p;
  p.AddGroup("/", Encoding("anndata", "0.1.0"));
  // Cells are obs: a column-major store's majors are cells (CSR of cells × genes), a row-major
  // one's are genes (CSC).
  auto x = Encoding(m.row_major() ? "csc_matrix" : "csr_matrix", "0.1.0");
  x.push_back({"shape", H5Value::Int64s({int64_t{m.cols()}, int64_t{m.rows()}})});
  p.AddGroup("/X", std::move(x));
  for (const char* g : {"/layers", "/obsm", "/obsp", "/uns", "/varm", "/varp"})
    p.AddGroup(g, Encoding("dict", "0.1.0"));
  for (const char* g : {"/obs", "/var"}) {
    auto frame = Encoding("dataframe", "0.2.0");
    frame.push_back({"_index", H5Value::String("_index")});
    frame.push_back({"column-order", H5Value::Float64s({})});  // h5py's type for an empty list
    p.AddGroup(g, std::move(frame));
  }
  p.AddDataset("/obs/_index", H5Value::Strings(NamesOrStandIns(m.col_names(), m.cols(), "col")),
               Encoding("string-array", "0.2.0"));
  p.AddDataset("/var/_index", H5Value::Strings(NamesOrStandIns(m.row_names(), m.rows(), "row")),
               Encoding("string-array", "0.2.0"));
  // Last, so that the arrays lie after the metadata (allocated when made).
  p.AddExternal("/X/indptr", m.nnz() > kInt32Max ? H5Type::kInt64 : H5Type::kInt32,
                uint64_t{m.outer_dim()} + 1);
  p.AddExternal("/X/indices", m.inner_dim() > kInt32Max ? H5Type::kInt64 : H5Type::kInt32, m.nnz());
  p.AddExternal("/X/data", value_type, m.nnz());
  return p;
}

H5adRenderer::H5adRenderer(std::shared_ptr<const formats::MatrixReader> m, cache::CachePool* pool,
                           uint64_t entries_per_chunk)
    : SparseArraysRenderer(
          StoredMajors(m), pool,
          {.indptr64 = m->nnz() > kInt32Max, .indices64 = m->inner_dim() > kInt32Max},
          entries_per_chunk) {}

}  // namespace omicsfs::text
