// The matrix reader contract: what every view of a matrix (matrix.mtx, the dense matrix.tsv,
// pseudobulk.tsv, the 10x names; next the binary views) reads, whatever the store (BPCells,
// datg; AnnData next). A matrix is rows × cols of one value type, stored major by major
// (row-major: a major is a row; col-major: a column). Its entries are numbered in storage
// order: major j holds entries [MajorBegin(j), MajorBegin(j + 1)), each with its minor ("inner")
// index, in the store's order within the major. A sparse store holds its non-zeros; a dense one
// every cell (dense(): major j holds every inner index in order). Names may be absent (empty):
// the views then write row1…/col1… or 1-based numbers, as each view's format wants.
//
// Shape, order, names and major pointers are plain fields set once by the implementation, read
// through non-virtual accessors: the views' per-entry and per-major loops make no virtual call.
// Reading entries and slicing are virtual (one call per chunk or batch). Readers never format.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace omicsfs::formats {

// The stored value types. kInt32, kInt64 and kUInt64 came with AnnData (issue 37): its int8 and
// int16 values are read as kInt32, its uint8, uint16 and bool values as kUInt32 (bool: 1/0).
enum class ValueType { kUInt32, kFloat32, kFloat64, kInt32, kInt64, kUInt64 };

// Integer types print as MatrixMarket `integer` and sum as integers.
inline bool IsInteger(ValueType t) { return t != ValueType::kFloat32 && t != ValueType::kFloat64; }
// Bytes of one value.
inline size_t ValueBytes(ValueType t) {
  return t == ValueType::kFloat64 || t == ValueType::kInt64 || t == ValueType::kUInt64 ? 8 : 4;
}

// A subset of a matrix: the chosen rows and columns (0-based, in the order given; each at most
// once); nullopt keeps the whole axis.
struct MatrixSubset {
  std::optional<std::vector<uint32_t>> rows;
  std::optional<std::vector<uint32_t>> cols;
};

// Entries [n0, n1) of a matrix in storage order: the vector of the matrix's value type is filled.
struct MatrixEntries {
  std::vector<uint32_t> inner;  // row index (col-major) or column index (row-major), 0-based
  std::vector<uint32_t> u32;    // values, for uint matrices
  std::vector<float> f32;       // values, for float matrices
  std::vector<double> f64;      // values, for double matrices
  std::vector<int32_t> i32;     // values, for int32 matrices
  std::vector<int64_t> i64;     // values, for int64 matrices
  std::vector<uint64_t> u64;    // values, for uint64 matrices
  // The value vector of type t as raw bytes (ValueBytes(t) each).
  const void* Values(ValueType t) const;
  void* Values(ValueType t);
  // Empties every vector and sizes the one of type t (and `inner`) to n.
  void Resize(ValueType t, uint64_t n);
  // Appends entries [a, b) of `from` (values of type t and inner indices, or `inner` given).
  void AppendRange(ValueType t, const MatrixEntries& from, uint64_t a, uint64_t b);
  void AppendOne(ValueType t, const MatrixEntries& from, uint64_t i, uint32_t inner);
};

class MatrixReader : public std::enable_shared_from_this<MatrixReader> {
 public:
  virtual ~MatrixReader() = default;

  // Names the store in messages.
  virtual const std::string& Describe() const = 0;
  // Decodes entries [n0, n1) (any range within nnz(), across majors or within one), each inner
  // index checked against inner_dim().
  virtual Status ReadEntries(uint64_t n0, uint64_t n1, MatrixEntries* out) const = 0;
  // The matrix over `subset` of this one, under the same contract: majors in selection order,
  // each major's entries in this matrix's order, indices renumbered to positions in the
  // selection. Absent names on a chosen axis become the chosen items' stand-ins (row7, col3), so
  // a slice's names still say which they were. Indices out of range or chosen twice, or an empty
  // choice, are InvalidArgument.
  virtual Result<std::shared_ptr<const MatrixReader>> Slice(MatrixSubset subset) const = 0;

  uint32_t rows() const { return rows_; }
  uint32_t cols() const { return cols_; }
  bool row_major() const { return row_major_; }
  ValueType value_type() const { return value_type_; }
  uint64_t nnz() const { return nnz_; }
  bool dense() const { return dense_; }
  uint32_t outer_dim() const { return row_major_ ? rows_ : cols_; }
  uint32_t inner_dim() const { return row_major_ ? cols_ : rows_; }
  // The first entry of major j (j ≤ outer_dim(); MajorBegin(outer_dim()) == nnz()).
  uint64_t MajorBegin(uint32_t j) const { return dense_ ? uint64_t{j} * inner_dim() : idxptr_[j]; }
  // The major holding entry n < nnz() (the last j with MajorBegin(j) <= n: never an empty one).
  uint32_t MajorOf(uint64_t n) const {
    if (dense_) return static_cast<uint32_t>(n / inner_dim());
    return static_cast<uint32_t>(std::upper_bound(idxptr_.begin(), idxptr_.end(), n) -
                                 idxptr_.begin() - 1);
  }
  // Entries of majors [j0, j1).
  Status ReadMajors(uint32_t j0, uint32_t j1, MatrixEntries* out) const {
    return ReadEntries(MajorBegin(j0), MajorBegin(j1), out);
  }
  // Empty when the store has none.
  const std::vector<std::string>& row_names() const { return *row_names_; }
  const std::vector<std::string>& col_names() const { return *col_names_; }

 protected:
  MatrixReader() = default;

  // Set by the implementation before the reader is shared; immutable afterwards.
  uint32_t rows_ = 0, cols_ = 0;
  bool row_major_ = false;
  ValueType value_type_ = ValueType::kUInt32;
  uint64_t nnz_ = 0;
  bool dense_ = false;            // true: idxptr_ is unused (major j starts at j·inner_dim())
  std::vector<uint64_t> idxptr_;  // sparse: outer_dim() + 1 monotone pointers
  // Shared by a slice with its parent along an axis it does not choose.
  std::shared_ptr<const std::vector<std::string>> row_names_, col_names_;
};

// The names of a chosen axis's items: the parent's, or PREFIX + the 1-based index where the
// parent has none (what a slice shows; see Slice).
std::shared_ptr<const std::vector<std::string>> ChosenNames(const std::vector<std::string>& names,
                                                            const std::vector<uint32_t>& chosen,
                                                            const char* prefix);

// The matrix over `subset` of any sparse (not dense()) reader, by the parent's ReadEntries: what
// a reader's Slice returns when it has no cheaper way (AnnData). Majors are read in place; a
// choice of the inner axis costs one pass over the chosen majors to count the kept entries
// (the same scheme as BPCells' slices, formats/bpcells/matrix.h).
Result<std::shared_ptr<const MatrixReader>> SliceByEntries(
    std::shared_ptr<const MatrixReader> parent, MatrixSubset subset);

// The transpose of `m` as a view of the same stored entries: rows and columns (and their names)
// swapped, so the other storage order (a row-major matrix becomes a col-major one whose majors
// are the same), no entry read or moved. What turns a column pass into a row pass: RowAccess of
// Transposed(m) gives a row-major m's columns (10x.h5 of a row-major store).
std::shared_ptr<const MatrixReader> Transposed(std::shared_ptr<const MatrixReader> m);

// Checks a chosen axis of `n` items: each below n, at most once, at least one (InvalidArgument,
// naming `where` and the axis, otherwise).
Status CheckChosen(const std::vector<uint32_t>& chosen, uint32_t n, const char* axis,
                   const std::string& where);

}  // namespace omicsfs::formats
