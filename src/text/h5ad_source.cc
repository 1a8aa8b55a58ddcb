#include "text/h5ad_source.h"

#include <cstring>
#include <limits>

namespace omicsfs::text {
namespace {

using formats::MatrixEntries;
using formats::ValueType;
using io::h5::H5Attribute;
using io::h5::H5Type;
using io::h5::H5Value;

constexpr uint64_t kInt32Max = std::numeric_limits<int32_t>::max();

// External datasets, in the order the plan adds them.
enum Dataset : size_t { kIndptr = 0, kIndices = 1, kData = 2 };

std::vector<H5Attribute> Encoding(const char* type, const char* version) {
  return {{"encoding-type", H5Value::String(type)}, {"encoding-version", H5Value::String(version)}};
}

// A names column: the names, or PREFIX1… where the store has none.
std::vector<std::string> NamesOr(const std::vector<std::string>& names, uint32_t n,
                                 const char* prefix) {
  if (!names.empty()) return names;
  std::vector<std::string> out;
  out.reserve(n);
  for (uint32_t i = 0; i < n; ++i) out.push_back(prefix + std::to_string(uint64_t{i} + 1));
  return out;
}

template <typename T>
std::string BytesOf(const std::vector<T>& v) {
  // The host is little-endian (x86-64, aarch64), as the file: the vector's bytes are the file's.
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// The values of a decoded block as the file stores them (the host is little-endian, as the file).
Result<std::string> ValueBytes(const MatrixEntries& e, ValueType t, uint64_t n) {
  ASSIGN_OR_RETURN(const H5Type type, H5adValueType(t));
  const size_t bytes = n * io::h5::TypeSize(type);
  if (n != e.inner.size() || bytes != n * formats::ValueBytes(t))
    return InternalError("matrix.h5ad: decoded " + std::to_string(e.inner.size()) +
                         " entries of values for " + std::to_string(n));
  return std::string(static_cast<const char*>(e.Values(t)), bytes);
}

}  // namespace

Result<H5Type> H5adValueType(ValueType t) {
  switch (t) {
    case ValueType::kUInt32:
      return H5Type::kUInt32;
    case ValueType::kFloat32:
      return H5Type::kFloat32;
    case ValueType::kFloat64:
      return H5Type::kFloat64;
    case ValueType::kInt32:
      return H5Type::kInt32;
    case ValueType::kInt64:
      return H5Type::kInt64;
    case ValueType::kUInt64:
      return H5Type::kUInt64;
    default:
      break;  // a value type added later: its case goes above
  }
  return UnsupportedError("matrix.h5ad: no HDF5 type for value type " +
                          std::to_string(static_cast<int>(t)));
}

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
  p.AddDataset("/obs/_index", H5Value::Strings(NamesOr(m.col_names(), m.cols(), "col")),
               Encoding("string-array", "0.2.0"));
  p.AddDataset("/var/_index", H5Value::Strings(NamesOr(m.row_names(), m.rows(), "row")),
               Encoding("string-array", "0.2.0"));
  // Last, so that the arrays lie after the metadata (allocated when made).
  p.AddExternal("/X/indptr", m.nnz() > kInt32Max ? H5Type::kInt64 : H5Type::kInt32,
                uint64_t{m.outer_dim()} + 1);
  p.AddExternal("/X/indices", m.inner_dim() > kInt32Max ? H5Type::kInt64 : H5Type::kInt32, m.nnz());
  p.AddExternal("/X/data", value_type, m.nnz());
  return p;
}

struct H5adRenderer::Entries {
  cache::Buffer indices;
  cache::Buffer values;
};

H5adRenderer::H5adRenderer(std::shared_ptr<const formats::MatrixReader> m, cache::CachePool* pool,
                           uint64_t entries_per_chunk)
    : m_(std::move(m)),
      pool_(pool),
      owner_(pool->NewOwnerId()),
      per_chunk_(entries_per_chunk),
      wide_indptr_(m_->nnz() > kInt32Max),
      wide_indices_(m_->inner_dim() > kInt32Max) {}

uint64_t H5adRenderer::ChunkElements(size_t) const { return per_chunk_; }

Result<std::string> H5adRenderer::Indptr(uint64_t k) const {
  const uint64_t n = uint64_t{m_->outer_dim()} + 1;
  const uint64_t e0 = k * per_chunk_, e1 = std::min(n, e0 + per_chunk_);
  if (e0 >= e1) return InternalError(m_->Describe() + ": no indptr chunk " + std::to_string(k));
  std::string out;
  out.reserve((e1 - e0) * (wide_indptr_ ? 8 : 4));
  for (uint64_t j = e0; j < e1; ++j) {
    const uint64_t v = m_->MajorBegin(static_cast<uint32_t>(j));
    if (wide_indptr_) {
      out.append(reinterpret_cast<const char*>(&v), 8);
    } else {
      const auto w = static_cast<uint32_t>(v);
      out.append(reinterpret_cast<const char*>(&w), 4);
    }
  }
  return out;
}

Result<std::shared_ptr<const H5adRenderer::Entries>> H5adRenderer::Block(uint64_t k) const {
  return pool_->GetOrComputeAs<Entries>(
      {owner_, cache::CacheKind::kSourceBlock, k}, [&]() -> Result<cache::Sized> {
        const uint64_t n0 = k * per_chunk_, n1 = std::min(m_->nnz(), n0 + per_chunk_);
        if (n0 >= n1)
          return InternalError(m_->Describe() + ": no entry chunk " + std::to_string(k));
        // Decoded into this thread's scratch (its vectors keep their capacity: no fresh pages
        // per block), then copied once into the buffers the cache keeps.
        thread_local MatrixEntries e;
        RETURN_IF_ERROR(m_->ReadEntries(n0, n1, &e));
        const uint64_t n = n1 - n0;
        if (e.inner.size() != n)
          return InternalError(m_->Describe() + ": decoded " + std::to_string(e.inner.size()) +
                               " entries of " + std::to_string(n));
        auto block = std::make_shared<Entries>();
        if (wide_indices_) {
          std::vector<int64_t> wide(e.inner.begin(), e.inner.end());
          block->indices = std::make_shared<const std::string>(BytesOf(wide));
        } else {
          block->indices = std::make_shared<const std::string>(BytesOf(e.inner));
        }
        ASSIGN_OR_RETURN(std::string values, ValueBytes(e, m_->value_type(), n));
        block->values = std::make_shared<const std::string>(std::move(values));
        const uint64_t bytes = block->indices->size() + block->values->size();
        return cache::Sized{std::move(block), bytes};
      });
}

Result<cache::Buffer> H5adRenderer::Chunk(size_t d, uint64_t k) const {
  switch (d) {
    case kIndptr:
      return pool_->GetOrCompute({owner_, cache::CacheKind::kTextChunk, k},
                                 [&] { return Indptr(k); });
    case kIndices:
    case kData: {
      ASSIGN_OR_RETURN(auto block, Block(k));
      return d == kIndices ? block->indices : block->values;
    }
    default:
      return InternalError(m_->Describe() + ": matrix.h5ad has no external dataset " +
                           std::to_string(d));
  }
}

}  // namespace omicsfs::text
