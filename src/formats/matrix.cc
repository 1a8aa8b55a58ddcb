#include "formats/matrix.h"

#include <cstring>

namespace omicsfs::formats {

const void* MatrixEntries::Values(ValueType t) const {
  return const_cast<MatrixEntries*>(this)->Values(t);
}

void* MatrixEntries::Values(ValueType t) {
  switch (t) {
    case ValueType::kUInt32:
      return u32.data();
    case ValueType::kFloat32:
      return f32.data();
    case ValueType::kFloat64:
      return f64.data();
    case ValueType::kInt32:
      return i32.data();
    case ValueType::kInt64:
      return i64.data();
    case ValueType::kUInt64:
      return u64.data();
  }
  return nullptr;
}

void MatrixEntries::Resize(ValueType t, uint64_t n) {
  u32.clear();
  f32.clear();
  f64.clear();
  i32.clear();
  i64.clear();
  u64.clear();
  inner.resize(n);
  switch (t) {
    case ValueType::kUInt32:
      return u32.resize(n);
    case ValueType::kFloat32:
      return f32.resize(n);
    case ValueType::kFloat64:
      return f64.resize(n);
    case ValueType::kInt32:
      return i32.resize(n);
    case ValueType::kInt64:
      return i64.resize(n);
    case ValueType::kUInt64:
      return u64.resize(n);
  }
}

namespace {

template <typename T>
void Append(std::vector<T>* to, const std::vector<T>& from, uint64_t a, uint64_t b) {
  to->insert(to->end(), from.begin() + static_cast<ptrdiff_t>(a),
             from.begin() + static_cast<ptrdiff_t>(b));
}

}  // namespace

void MatrixEntries::AppendRange(ValueType t, const MatrixEntries& from, uint64_t a, uint64_t b) {
  Append(&inner, from.inner, a, b);
  switch (t) {
    case ValueType::kUInt32:
      return Append(&u32, from.u32, a, b);
    case ValueType::kFloat32:
      return Append(&f32, from.f32, a, b);
    case ValueType::kFloat64:
      return Append(&f64, from.f64, a, b);
    case ValueType::kInt32:
      return Append(&i32, from.i32, a, b);
    case ValueType::kInt64:
      return Append(&i64, from.i64, a, b);
    case ValueType::kUInt64:
      return Append(&u64, from.u64, a, b);
  }
}

void MatrixEntries::AppendOne(ValueType t, const MatrixEntries& from, uint64_t i, uint32_t k) {
  inner.push_back(k);
  switch (t) {
    case ValueType::kUInt32:
      return u32.push_back(from.u32[i]);
    case ValueType::kFloat32:
      return f32.push_back(from.f32[i]);
    case ValueType::kFloat64:
      return f64.push_back(from.f64[i]);
    case ValueType::kInt32:
      return i32.push_back(from.i32[i]);
    case ValueType::kInt64:
      return i64.push_back(from.i64[i]);
    case ValueType::kUInt64:
      return u64.push_back(from.u64[i]);
  }
}

Status CheckChosen(const std::vector<uint32_t>& chosen, uint32_t n, const char* axis,
                   const std::string& where) {
  if (chosen.empty()) return InvalidArgumentError(where + ": no " + axis + " is chosen");
  std::vector<bool> seen(n);
  for (uint32_t i : chosen) {
    if (i >= n) {
      return InvalidArgumentError(where + ": " + axis + " " + std::to_string(i) +
                                  " is beyond the " + std::to_string(n) + " of the matrix");
    }
    if (seen[i])
      return InvalidArgumentError(where + ": " + axis + " " + std::to_string(i) +
                                  " is chosen twice");
    seen[i] = true;
  }
  return OkStatus();
}

std::shared_ptr<const std::vector<std::string>> ChosenNames(const std::vector<std::string>& names,
                                                            const std::vector<uint32_t>& chosen,
                                                            const char* prefix) {
  auto out = std::make_shared<std::vector<std::string>>();
  out->reserve(chosen.size());
  for (uint32_t i : chosen)
    out->push_back(names.empty() ? prefix + std::to_string(uint64_t{i} + 1) : names[i]);
  return out;
}

namespace {

constexpr uint64_t kSliceBatch = uint64_t{1} << 16;  // entries read at once while counting
constexpr uint64_t kCheckpoint = 4096;               // kept entries between remembered positions
constexpr uint32_t kDropped = UINT32_MAX;

class SlicedMatrix final : public MatrixReader {
 public:
  static Result<std::shared_ptr<const MatrixReader>> Make(std::shared_ptr<const MatrixReader> p,
                                                          MatrixSubset subset) {
    const MatrixReader& m = *p;
    const std::string& where = m.Describe();
    if (m.dense()) return InternalError(where + ": SliceByEntries of a dense matrix");
    if (subset.rows) RETURN_IF_ERROR(CheckChosen(*subset.rows, m.rows(), "row", where));
    if (subset.cols) RETURN_IF_ERROR(CheckChosen(*subset.cols, m.cols(), "column", where));
    std::shared_ptr<SlicedMatrix> s(new SlicedMatrix());
    s->describe_ = where;
    s->value_type_ = m.value_type();
    s->row_major_ = m.row_major();
    s->rows_ = subset.rows ? static_cast<uint32_t>(subset.rows->size()) : m.rows();
    s->cols_ = subset.cols ? static_cast<uint32_t>(subset.cols->size()) : m.cols();
    s->row_names_ = subset.rows
                        ? ChosenNames(m.row_names(), *subset.rows, "row")
                        : std::shared_ptr<const std::vector<std::string>>(p, &m.row_names());
    s->col_names_ = subset.cols
                        ? ChosenNames(m.col_names(), *subset.cols, "col")
                        : std::shared_ptr<const std::vector<std::string>>(p, &m.col_names());
    const auto& outer = m.row_major() ? subset.rows : subset.cols;
    const auto& inner = m.row_major() ? subset.cols : subset.rows;
    if (outer) {
      s->major_ = *outer;
    } else {
      s->major_.resize(m.outer_dim());
      for (uint32_t j = 0; j < m.outer_dim(); ++j) s->major_[j] = j;
    }
    auto& ptr = s->idxptr_;
    ptr.assign(s->major_.size() + 1, 0);
    const auto& major = s->major_;
    if (!inner) {
      for (size_t j = 0; j < major.size(); ++j)
        ptr[j + 1] = ptr[j] + (m.MajorBegin(major[j] + 1) - m.MajorBegin(major[j]));
    } else {
      s->minor_map_.assign(m.inner_dim(), kDropped);
      for (size_t k = 0; k < inner->size(); ++k)
        s->minor_map_[(*inner)[k]] = static_cast<uint32_t>(k);
      uint64_t kept = 0;
      MatrixEntries e;
      for (size_t j = 0; j < major.size();) {  // runs of consecutive parent majors read together
        size_t end = j + 1;
        while (end < major.size() && major[end] == major[end - 1] + 1) ++end;
        const uint64_t a = m.MajorBegin(major[j]), b = m.MajorBegin(major[end - 1] + 1);
        size_t jj = j;
        for (uint64_t n0 = a; n0 < b;) {
          const uint64_t n1 = std::min(b, n0 + kSliceBatch);
          RETURN_IF_ERROR(m.ReadEntries(n0, n1, &e));
          for (uint64_t i = n0; i < n1; ++i) {
            while (m.MajorBegin(major[jj] + 1) <= i) ptr[++jj] = kept;
            if (s->minor_map_[e.inner[i - n0]] == kDropped) continue;
            if (kept % kCheckpoint == 0) s->checkpoint_.push_back(i);
            ++kept;
          }
          n0 = n1;
        }
        while (jj < end) ptr[++jj] = kept;
        j = end;
      }
    }
    s->nnz_ = ptr.back();
    s->parent_ = std::move(p);
    return std::shared_ptr<const MatrixReader>(std::move(s));
  }

  const std::string& Describe() const override { return describe_; }
  Result<std::shared_ptr<const MatrixReader>> Slice(MatrixSubset subset) const override {
    return SliceByEntries(shared_from_this(), std::move(subset));
  }

  Status ReadEntries(uint64_t n0, uint64_t n1, MatrixEntries* out) const override {
    if (n0 > n1 || n1 > nnz_) {
      return InternalError(describe_ + ": entry range [" + std::to_string(n0) + ", " +
                           std::to_string(n1) + ") beyond the slice's nnz " + std::to_string(nnz_));
    }
    const MatrixReader& p = *parent_;
    const ValueType t = value_type_;
    out->Resize(t, 0);
    if (n0 == n1) return OkStatus();
    MatrixEntries got;
    size_t j = MajorOf(n0);
    if (minor_map_.empty()) {
      for (uint64_t pos = n0; pos < n1;) {  // runs of majors consecutive in the parent at once
        while (idxptr_[j + 1] <= pos) ++j;
        const uint64_t from = p.MajorBegin(major_[j]) + (pos - idxptr_[j]);
        uint64_t next = std::min(n1, idxptr_[j + 1]);
        uint64_t to = p.MajorBegin(major_[j]) + (next - idxptr_[j]);
        while (next < n1 && j + 1 < major_.size() && major_[j + 1] == major_[j] + 1) {
          ++j;
          next = std::min(n1, idxptr_[j + 1]);
          to = p.MajorBegin(major_[j]) + (next - idxptr_[j]);
        }
        RETURN_IF_ERROR(p.ReadEntries(from, to, &got));
        out->AppendRange(t, got, 0, to - from);
        pos = next;
      }
      return OkStatus();
    }
    uint64_t kept = (n0 / kCheckpoint) * kCheckpoint;
    uint64_t par = checkpoint_[n0 / kCheckpoint];
    j = MajorOf(kept);
    while (kept < n1) {
      if (kept == idxptr_[j + 1]) {  // this major's kept entries are all seen
        while (idxptr_[j + 1] == kept) ++j;
        par = p.MajorBegin(major_[j]);
      }
      const uint64_t end = p.MajorBegin(major_[j] + 1);
      if (par >= end) {
        return CorruptError(describe_ + ": major " + std::to_string(major_[j]) +
                            " holds fewer chosen entries than when it was counted");
      }
      const uint64_t b = std::min(end, par + kSliceBatch);
      RETURN_IF_ERROR(p.ReadEntries(par, b, &got));
      uint64_t i = 0;
      for (; i < b - par && kept < idxptr_[j + 1]; ++i) {
        const uint32_t k = minor_map_[got.inner[i]];
        if (k == kDropped) continue;
        if (kept >= n0) out->AppendOne(t, got, i, k);
        if (++kept == n1) break;
      }
      par += i;
    }
    return OkStatus();
  }

 private:
  SlicedMatrix() = default;
  std::string describe_;
  std::shared_ptr<const MatrixReader> parent_;
  std::vector<uint32_t> major_;       // the parent's major of each major
  std::vector<uint32_t> minor_map_;   // parent inner index → new one or kDropped; empty: all kept
  std::vector<uint64_t> checkpoint_;  // parent entry of kept entry c·kCheckpoint
};

}  // namespace

namespace {

class TransposedReader : public MatrixReader {
 public:
  explicit TransposedReader(std::shared_ptr<const MatrixReader> m) : m_(std::move(m)) {
    rows_ = m_->cols();
    cols_ = m_->rows();
    row_major_ = !m_->row_major();
    value_type_ = m_->value_type();
    nnz_ = m_->nnz();
    dense_ = m_->dense();
    if (!dense_) {
      idxptr_.resize(uint64_t{m_->outer_dim()} + 1);
      for (uint32_t j = 0; j <= m_->outer_dim(); ++j) idxptr_[j] = m_->MajorBegin(j);
    }
    row_names_ = std::shared_ptr<const std::vector<std::string>>(m_, &m_->col_names());
    col_names_ = std::shared_ptr<const std::vector<std::string>>(m_, &m_->row_names());
  }
  const std::string& Describe() const override { return m_->Describe(); }
  Status ReadEntries(uint64_t n0, uint64_t n1, MatrixEntries* out) const override {
    return m_->ReadEntries(n0, n1, out);
  }
  Result<std::shared_ptr<const MatrixReader>> Slice(MatrixSubset subset) const override {
    ASSIGN_OR_RETURN(auto s, m_->Slice({std::move(subset.cols), std::move(subset.rows)}));
    return Transposed(std::move(s));
  }

 private:
  std::shared_ptr<const MatrixReader> m_;
};

}  // namespace

std::shared_ptr<const MatrixReader> Transposed(std::shared_ptr<const MatrixReader> m) {
  return std::make_shared<const TransposedReader>(std::move(m));
}

Result<std::shared_ptr<const MatrixReader>> SliceByEntries(
    std::shared_ptr<const MatrixReader> parent, MatrixSubset subset) {
  return SlicedMatrix::Make(std::move(parent), std::move(subset));
}

}  // namespace omicsfs::formats
