#include "text/sparse_arrays.h"

#include <algorithm>
#include <mutex>

#include "util/settled.h"

namespace omicsfs::text {
namespace {

using formats::MatrixEntries;
using formats::ValueType;
using io::h5::H5Type;

class Stored : public SparseMajors {
 public:
  explicit Stored(std::shared_ptr<const formats::MatrixReader> m) : m_(std::move(m)) {}
  std::string Describe() const override { return m_->Describe(); }
  uint64_t majors() const override { return m_->outer_dim(); }
  uint64_t nnz() const override { return m_->nnz(); }
  ValueType value_type() const override { return m_->value_type(); }
  Status Begins(uint64_t j0, uint64_t j1, std::vector<uint64_t>* out) const override {
    for (uint64_t j = j0; j < j1; ++j) out->push_back(m_->MajorBegin(static_cast<uint32_t>(j)));
    return OkStatus();
  }
  Status Read(uint64_t n0, uint64_t n1, MatrixEntries* out) const override {
    return m_->ReadEntries(n0, n1, out);
  }

 private:
  std::shared_ptr<const formats::MatrixReader> m_;
};

// A row-major matrix's columns: the rows of its transpose, from RowAccess's copy (made once,
// on first use, under the SettledStatus: a lasting failure is remembered, a transient one
// retried).
class Copied : public SparseMajors {
 public:
  Copied(std::shared_ptr<const formats::MatrixReader> m, std::vector<std::string> scratch_dirs,
         formats::TransposedCopy persist)
      : m_(std::move(m)), scratch_dirs_(std::move(scratch_dirs)), persist_(std::move(persist)) {}
  std::string Describe() const override { return m_->Describe(); }
  uint64_t majors() const override { return m_->cols(); }
  uint64_t nnz() const override { return m_->nnz(); }
  ValueType value_type() const override { return m_->value_type(); }
  Status Begins(uint64_t j0, uint64_t j1, std::vector<uint64_t>* out) const override {
    RETURN_IF_ERROR(Ready());
    for (uint64_t j = j0; j < j1; ++j) out->push_back(rows_->RowBegin(static_cast<uint32_t>(j)));
    return OkStatus();
  }
  Status Read(uint64_t n0, uint64_t n1, MatrixEntries* out) const override {
    RETURN_IF_ERROR(Ready());
    return rows_->ReadRecords(n0, n1, out);
  }

 private:
  Status Ready() const {
    return built_.Get([this]() -> Status {
      ASSIGN_OR_RETURN(rows_, formats::RowAccess::Build(formats::Transposed(m_), scratch_dirs_,
                                                        64 << 20, persist_));
      return OkStatus();
    });
  }

  std::shared_ptr<const formats::MatrixReader> m_;
  std::vector<std::string> scratch_dirs_;
  formats::TransposedCopy persist_;
  SettledStatus built_;
  mutable std::shared_ptr<const formats::RowAccess> rows_;  // set once by Ready
};

template <typename T>
std::string BytesOf(const std::vector<T>& v) {
  // The host is little-endian (x86-64, aarch64), as the file: the vector's bytes are the file's.
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

}  // namespace

std::shared_ptr<const SparseMajors> StoredMajors(std::shared_ptr<const formats::MatrixReader> m) {
  return std::make_shared<const Stored>(std::move(m));
}

std::shared_ptr<const SparseMajors> ColumnsOf(std::shared_ptr<const formats::MatrixReader> m,
                                              std::vector<std::string> scratch_dirs,
                                              formats::TransposedCopy persist) {
  if (!m->row_major()) return StoredMajors(std::move(m));
  return std::make_shared<const Copied>(std::move(m), std::move(scratch_dirs), std::move(persist));
}

std::vector<std::string> NamesOrStandIns(const std::vector<std::string>& names, uint32_t n,
                                         const char* prefix) {
  if (!names.empty()) return names;
  std::vector<std::string> out;
  out.reserve(n);
  for (uint32_t i = 0; i < n; ++i) out.push_back(prefix + std::to_string(uint64_t{i} + 1));
  return out;
}

Result<H5Type> H5ValueType(ValueType t, const char* view) {
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
  return UnsupportedError(std::string(view) + ": no HDF5 type for value type " +
                          std::to_string(static_cast<int>(t)));
}

struct SparseArraysRenderer::Entries {
  cache::Buffer indices;
  cache::Buffer values;
};

SparseArraysRenderer::SparseArraysRenderer(std::shared_ptr<const SparseMajors> source,
                                           cache::CachePool* pool, Widths widths,
                                           uint64_t entries_per_chunk)
    : source_(std::move(source)),
      pool_(pool),
      owner_(pool->NewOwnerId()),
      per_chunk_(entries_per_chunk),
      widths_(widths) {}

uint64_t SparseArraysRenderer::ChunkElements(size_t) const { return per_chunk_; }

Result<std::string> SparseArraysRenderer::Indptr(uint64_t k) const {
  const uint64_t n = source_->majors() + 1;
  const uint64_t e0 = k * per_chunk_, e1 = std::min(n, e0 + per_chunk_);
  if (e0 >= e1)
    return InternalError(source_->Describe() + ": no indptr chunk " + std::to_string(k));
  std::vector<uint64_t> begins;
  begins.reserve(e1 - e0);
  RETURN_IF_ERROR(source_->Begins(e0, e1, &begins));
  if (begins.size() != e1 - e0)
    return InternalError(source_->Describe() + ": " + std::to_string(begins.size()) +
                         " pointers for " + std::to_string(e1 - e0));
  if (widths_.indptr64) return BytesOf(begins);
  std::vector<uint32_t> narrow(begins.begin(), begins.end());
  return BytesOf(narrow);
}

Result<std::shared_ptr<const SparseArraysRenderer::Entries>> SparseArraysRenderer::Block(
    uint64_t k) const {
  return pool_->GetOrComputeAs<Entries>(
      {owner_, cache::CacheKind::kSourceBlock, k}, [&]() -> Result<cache::Sized> {
        const uint64_t n0 = k * per_chunk_, n1 = std::min(source_->nnz(), n0 + per_chunk_);
        if (n0 >= n1)
          return InternalError(source_->Describe() + ": no entry chunk " + std::to_string(k));
        // Decoded into this thread's scratch (its vectors keep their capacity: no fresh pages
        // per block), then copied once into the buffers the cache keeps.
        thread_local MatrixEntries e;
        RETURN_IF_ERROR(source_->Read(n0, n1, &e));
        const uint64_t n = n1 - n0;
        const ValueType t = source_->value_type();
        if (e.inner.size() != n)
          return InternalError(source_->Describe() + ": decoded " + std::to_string(e.inner.size()) +
                               " entries of " + std::to_string(n));
        auto block = std::make_shared<Entries>();
        if (widths_.indices64) {
          std::vector<int64_t> wide(e.inner.begin(), e.inner.end());
          block->indices = std::make_shared<const std::string>(BytesOf(wide));
        } else {
          block->indices = std::make_shared<const std::string>(BytesOf(e.inner));
        }
        block->values = std::make_shared<const std::string>(static_cast<const char*>(e.Values(t)),
                                                            n * formats::ValueBytes(t));
        const uint64_t bytes = block->indices->size() + block->values->size();
        return cache::Sized{std::move(block), bytes};
      });
}

Result<cache::Buffer> SparseArraysRenderer::Chunk(size_t d, uint64_t k) const {
  switch (d) {
    case 0:
      return pool_->GetOrCompute({owner_, cache::CacheKind::kTextChunk, k},
                                 [&] { return Indptr(k); });
    case 1:
    case 2: {
      ASSIGN_OR_RETURN(auto block, Block(k));
      return d == 1 ? block->indices : block->values;
    }
    default:
      return InternalError(source_->Describe() + ": no external dataset " + std::to_string(d));
  }
}

}  // namespace omicsfs::text
