#include "formats/anndata/anndata.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

namespace omicsfs::formats::anndata {
namespace {

// "/a/b" → {"/a", "b"}; "/a" → {"/", "a"}.
std::pair<std::string, std::string> Split(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == 0 || slash == std::string::npos) return {"/", path.substr(slash + 1)};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

std::string Join(const std::string& group, const std::string& name) {
  return group == "/" ? "/" + name : group + "/" + name;
}

class H5Elements final : public Elements {
 public:
  H5Elements(std::string describe, io::H5Probe probe, OpenH5Group open)
      : describe_(std::move(describe)), probe_(std::move(probe)), open_(std::move(open)) {
    for (const io::H5Group& g : probe_.groups) groups_[g.path] = &g;
  }
  const std::string& Describe() const override { return describe_; }
  const std::string* Attribute(const std::string& group, std::string_view name) const override {
    auto it = groups_.find(group);
    return it == groups_.end() ? nullptr : it->second->Attribute(name);
  }
  std::vector<std::string> AttributeList(const std::string& group,
                                         std::string_view name) const override {
    auto it = groups_.find(group);
    if (it == groups_.end()) return {};
    for (const auto& a : it->second->attributes) {
      if (a.name == name) return a.values;
    }
    return {};
  }
  bool IsGroup(const std::string& path) const override { return groups_.count(path) > 0; }
  Result<std::vector<std::string>> Children(const std::string& group) const override {
    ASSIGN_OR_RETURN(const io::H5ArrayStore* s, Store(group));
    ASSIGN_OR_RETURN(std::vector<std::string> out, s->DatasetNames());
    const std::string prefix = group == "/" ? "/" : group + "/";
    for (const auto& [path, g] : groups_) {
      if (path.size() > prefix.size() && path.starts_with(prefix) &&
          path.find('/', prefix.size()) == std::string::npos) {
        out.push_back(path.substr(prefix.size()));
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  Result<std::optional<ArrayDesc>> Array(const std::string& path) const override {
    auto [group, name] = Split(path);
    if (!IsGroup(group)) return std::optional<ArrayDesc>();
    ASSIGN_OR_RETURN(const io::H5ArrayStore* s, Store(group));
    ASSIGN_OR_RETURN(std::optional<io::H5DatasetDesc> d, s->DescribeDataset(name));
    if (!d) return std::optional<ArrayDesc>();
    return std::optional<ArrayDesc>(ArrayDesc{std::move(d->dims), d->is_string, d->number,
                                              std::move(d->type), std::move(d->missing_filter)});
  }
  Status Read(const std::string& path, Number as, uint64_t first, uint64_t count,
              void* out) const override {
    auto [group, name] = Split(path);
    ASSIGN_OR_RETURN(const io::H5ArrayStore* s, Store(group));
    return s->ReadNumbers(name, as, first, count, out);
  }
  Result<std::vector<std::string>> Strings(const std::string& path) const override {
    auto [group, name] = Split(path);
    ASSIGN_OR_RETURN(const io::H5ArrayStore* s, Store(group));
    return s->ReadStrings(name);
  }

 private:
  Result<const io::H5ArrayStore*> Store(const std::string& group) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = stores_.find(group);
    if (it != stores_.end()) return it->second.get();
    ASSIGN_OR_RETURN(auto s, open_(group));
    return stores_.emplace(group, std::move(s)).first->second.get();
  }

  std::string describe_;
  io::H5Probe probe_;
  OpenH5Group open_;
  std::map<std::string, const io::H5Group*> groups_;
  mutable std::mutex mu_;
  mutable std::map<std::string, std::unique_ptr<const io::H5ArrayStore>> stores_;
};

std::string Where(const Elements& e, const std::string& path) { return e.Describe() + ":" + path; }

// The array at `path`, which must exist, be numeric (or strings when `strings`), and decodable.
Result<ArrayDesc> NeedArray(const Elements& e, const std::string& path, bool strings = false) {
  ASSIGN_OR_RETURN(std::optional<ArrayDesc> d, e.Array(path));
  if (!d) return CorruptError(Where(e, path) + ": missing");
  if (!d->missing_filter.empty()) {
    return UnsupportedError(Where(e, path) + ": compressed with " + d->missing_filter +
                            ", which cannot be decoded here");
  }
  if (strings ? !d->is_string : !d->number) {
    return UnsupportedError(Where(e, path) + ": " + d->type + " values are not read (" +
                            (strings ? "strings" : "numbers") + " expected)");
  }
  return *d;
}

constexpr uint64_t kMaxElements = uint64_t{1} << 34;

// A 1-D numeric array whole, as int64 (integers) — for indptr and categorical codes.
Result<std::vector<int64_t>> ReadInts(const Elements& e, const std::string& path) {
  ASSIGN_OR_RETURN(ArrayDesc d, NeedArray(e, path));
  if (d.dims.size() != 1) return CorruptError(Where(e, path) + ": not a 1-D array");
  const Number t = *d.number;
  if (t == Number::kFloat32 || t == Number::kFloat64 || t == Number::kBool || t == Number::kUInt64)
    return UnsupportedError(Where(e, path) + ": " + d.type + " values where integers are expected");
  if (d.dims[0] > kMaxElements / 8) return CorruptError(Where(e, path) + ": implausibly long");
  std::vector<int64_t> out(d.dims[0]);
  RETURN_IF_ERROR(e.Read(path, Number::kInt64, 0, out.size(), out.data()));
  return out;
}

// ---- tables ----

Result<Column> ReadPlainColumn(const Elements& e, const std::string& path) {
  ASSIGN_OR_RETURN(std::optional<ArrayDesc> d, e.Array(path));
  if (!d) return CorruptError(Where(e, path) + ": missing");
  if (!d->missing_filter.empty()) {
    return UnsupportedError(Where(e, path) + ": compressed with " + d->missing_filter +
                            ", which cannot be decoded here");
  }
  if (d->dims.size() != 1) return UnsupportedError(Where(e, path) + ": not a 1-D column");
  Column c;
  if (d->is_string) {
    c.type = Column::Type::kString;
    ASSIGN_OR_RETURN(c.strings, e.Strings(path));
    return c;
  }
  if (!d->number) {
    return UnsupportedError(Where(e, path) + ": a column of " + d->type + " values is not read");
  }
  const uint64_t n = d->dims[0];
  if (n > kMaxElements / 8) return CorruptError(Where(e, path) + ": implausibly long");
  switch (*d->number) {
    case Number::kFloat32:
      c.type = Column::Type::kFloat32;
      c.f32.resize(n);
      RETURN_IF_ERROR(e.Read(path, Number::kFloat32, 0, n, c.f32.data()));
      break;
    case Number::kFloat64:
      c.type = Column::Type::kFloat64;
      c.f64.resize(n);
      RETURN_IF_ERROR(e.Read(path, Number::kFloat64, 0, n, c.f64.data()));
      break;
    case Number::kBool:
      c.type = Column::Type::kBool;
      c.bools.resize(n);
      RETURN_IF_ERROR(e.Read(path, Number::kBool, 0, n, c.bools.data()));
      break;
    case Number::kUInt64:
      c.type = Column::Type::kUInt;
      c.uints.resize(n);
      RETURN_IF_ERROR(e.Read(path, Number::kUInt64, 0, n, c.uints.data()));
      break;
    default:
      c.type = Column::Type::kInt;
      c.ints.resize(n);
      RETURN_IF_ERROR(e.Read(path, Number::kInt64, 0, n, c.ints.data()));
      break;
  }
  return c;
}

Result<Column> ReadColumn(const Elements& e, const std::string& path, uint64_t rows) {
  Column c;
  if (e.IsGroup(path)) {
    const std::string* enc = e.Attribute(path, "encoding-type");
    const std::string kind = enc ? *enc : "";
    if (kind == "categorical") {
      ASSIGN_OR_RETURN(c.codes, ReadInts(e, path + "/codes"));
      ASSIGN_OR_RETURN(Column cats, ReadPlainColumn(e, path + "/categories"));
      const uint64_t ncat = cats.size();
      for (int64_t code : c.codes) {
        if (code < -1 || (code >= 0 && static_cast<uint64_t>(code) >= ncat)) {
          return CorruptError(Where(e, path) + ": code " + std::to_string(code) + " of " +
                              std::to_string(ncat) + " categories");
        }
      }
      c.type = Column::Type::kCategorical;
      c.categories = std::make_shared<const Column>(std::move(cats));
    } else if (kind == "nullable-integer" || kind == "nullable-boolean") {
      ASSIGN_OR_RETURN(c, ReadPlainColumn(e, path + "/values"));
      ASSIGN_OR_RETURN(Column mask, ReadPlainColumn(e, path + "/mask"));
      if (mask.type != Column::Type::kBool || mask.size() != c.size())
        return CorruptError(Where(e, path) + ": its mask does not fit its values");
      c.missing = std::move(mask.bools);
    } else {
      return UnsupportedError(Where(e, path) + ": a column of encoding-type '" + kind +
                              "' is not read");
    }
  } else {
    ASSIGN_OR_RETURN(c, ReadPlainColumn(e, path));
  }
  if (c.size() != rows) {
    return CorruptError(Where(e, path) + ": " + std::to_string(c.size()) + " values for " +
                        std::to_string(rows) + " rows");
  }
  return c;
}

Result<std::shared_ptr<const std::vector<std::string>>> ReadIndex(const Elements& e,
                                                                  const std::string& group,
                                                                  std::string* name) {
  if (!e.IsGroup(group)) return CorruptError(Where(e, group) + ": missing");
  const std::string* enc = e.Attribute(group, "encoding-type");
  if (enc == nullptr || *enc != "dataframe") {
    return UnsupportedError(Where(e, group) + ": encoding-type '" + (enc ? *enc : "") +
                            "' where a dataframe is expected");
  }
  const std::string* idx = e.Attribute(group, "_index");
  const std::string key = idx ? *idx : "_index";
  if (name != nullptr) *name = key == "_index" ? "" : key;
  const std::string path = Join(group, key);
  ASSIGN_OR_RETURN(std::optional<ArrayDesc> d, e.Array(path));
  if (!d) return CorruptError(Where(e, path) + ": the index is missing");
  if (d->is_string) {
    ASSIGN_OR_RETURN(auto names, e.Strings(path));
    return std::make_shared<const std::vector<std::string>>(std::move(names));
  }
  return UnsupportedError(Where(e, path) + ": an index of " + d->type + " values is not read");
}

}  // namespace

uint64_t Column::size() const {
  switch (type) {
    case Type::kString:
      return strings.size();
    case Type::kInt:
      return ints.size();
    case Type::kUInt:
      return uints.size();
    case Type::kFloat32:
      return f32.size();
    case Type::kFloat64:
      return f64.size();
    case Type::kBool:
      return bools.size();
    case Type::kCategorical:
      return codes.size();
  }
  return 0;
}

Result<Table> ReadTable(const Elements& e, const std::string& group) {
  Table t;
  ASSIGN_OR_RETURN(t.index, ReadIndex(e, group, &t.index_name));
  for (const std::string& name : e.AttributeList(group, "column-order")) {
    ASSIGN_OR_RETURN(Column c, ReadColumn(e, Join(group, name), t.index->size()));
    c.name = name;
    t.columns.push_back(std::move(c));
  }
  return t;
}

namespace {

// ---- matrices ----

ValueType ValueTypeOf(Number t) {
  switch (t) {
    case Number::kInt8:
    case Number::kInt16:
    case Number::kInt32:
      return ValueType::kInt32;
    case Number::kInt64:
      return ValueType::kInt64;
    case Number::kUInt64:
      return ValueType::kUInt64;
    case Number::kFloat32:
      return ValueType::kFloat32;
    case Number::kFloat64:
      return ValueType::kFloat64;
    default:  // uint8, uint16, uint32, bool
      return ValueType::kUInt32;
  }
}

// The number type values of type t are read as (bool is read as itself, then widened).
Number ReadAs(ValueType t) {
  switch (t) {
    case ValueType::kUInt32:
      return Number::kUInt32;
    case ValueType::kFloat32:
      return Number::kFloat32;
    case ValueType::kFloat64:
      return Number::kFloat64;
    case ValueType::kInt32:
      return Number::kInt32;
    case ValueType::kInt64:
      return Number::kInt64;
    case ValueType::kUInt64:
      return Number::kUInt64;
  }
  return Number::kFloat64;
}

// Values [first, first + count) of `path` (stored as `stored`) into out's vector of type t.
Status ReadValues(const Elements& e, const std::string& path, Number stored, ValueType t,
                  uint64_t first, uint64_t count, MatrixEntries* out) {
  out->Resize(t, count);
  out->inner.clear();
  if (stored == Number::kBool) {
    std::vector<uint8_t> b(count);
    RETURN_IF_ERROR(e.Read(path, Number::kBool, first, count, b.data()));
    for (uint64_t i = 0; i < count; ++i) out->u32[i] = b[i] != 0;
    return OkStatus();
  }
  return e.Read(path, ReadAs(t), first, count, out->Values(t));
}

bool NonZero(ValueType t, const MatrixEntries& v, uint64_t i) {
  switch (t) {
    case ValueType::kUInt32:
      return v.u32[i] != 0;
    case ValueType::kFloat32:
      return v.f32[i] != 0;
    case ValueType::kFloat64:
      return v.f64[i] != 0;
    case ValueType::kInt32:
      return v.i32[i] != 0;
    case ValueType::kInt64:
      return v.i64[i] != 0;
    case ValueType::kUInt64:
      return v.u64[i] != 0;
  }
  return true;
}

using Names = std::shared_ptr<const std::vector<std::string>>;

class AnnMatrix final : public MatrixReader {
 public:
  // `obs`, `var`: the names (view columns, view rows).
  static Result<std::shared_ptr<const MatrixReader>> Open(std::shared_ptr<const Elements> e,
                                                          const std::string& path, Names obs,
                                                          Names var) {
    std::shared_ptr<AnnMatrix> m(new AnnMatrix());
    m->e_ = std::move(e);
    const Elements& el = *m->e_;
    m->describe_ = Where(el, path);
    m->rows_ = static_cast<uint32_t>(var->size());
    m->cols_ = static_cast<uint32_t>(obs->size());
    if (var->size() >= UINT32_MAX || obs->size() >= UINT32_MAX)
      return UnsupportedError(m->describe_ + ": more than 2^32 - 2 cells or genes");
    m->row_names_ = std::move(var);
    m->col_names_ = std::move(obs);
    if (el.IsGroup(path)) {
      const std::string* enc = el.Attribute(path, "encoding-type");
      if (enc == nullptr) enc = el.Attribute(path, "h5sparse_format");  // anndata < 0.7
      const std::string kind = enc ? *enc : "";
      if (kind != "csr_matrix" && kind != "csc_matrix" && kind != "csr" && kind != "csc") {
        return UnsupportedError(
            m->describe_ + ": encoding-type '" + kind +
            "' is not a matrix read here (csr_matrix, csc_matrix, a dense array)");
      }
      // CSR: cells are majors, which are the view's columns: col-major.
      m->row_major_ = kind.starts_with("csc");
      RETURN_IF_ERROR(m->OpenSparse(path));
    } else {
      RETURN_IF_ERROR(m->OpenDense(path));
    }
    return std::shared_ptr<const MatrixReader>(std::move(m));
  }

  const std::string& Describe() const override { return describe_; }
  Result<std::shared_ptr<const MatrixReader>> Slice(MatrixSubset subset) const override {
    return SliceByEntries(shared_from_this(), std::move(subset));
  }

  Status ReadEntries(uint64_t n0, uint64_t n1, MatrixEntries* out) const override {
    if (n0 > n1 || n1 > nnz_) {
      return InternalError(describe_ + ": entry range [" + std::to_string(n0) + ", " +
                           std::to_string(n1) + ") beyond its " + std::to_string(nnz_));
    }
    if (dense_rows_) return ReadDense(n0, n1, out);
    const uint64_t n = n1 - n0;
    RETURN_IF_ERROR(ReadValues(*e_, data_, stored_, value_type_, n0, n, out));
    out->inner.resize(n);
    if (n == 0) return OkStatus();
    const uint32_t limit = inner_dim();
    auto check = [&](auto* idx) -> Status {
      for (uint64_t i = 0; i < n; ++i) {
        if (idx[i] < 0 || static_cast<uint64_t>(idx[i]) >= limit) {
          return CorruptError(describe_ + "/indices: entry " + std::to_string(n0 + i) +
                              " has index " + std::to_string(idx[i]) + ", beyond the " +
                              std::to_string(limit) + (row_major_ ? " cells" : " genes"));
        }
        out->inner[i] = static_cast<uint32_t>(idx[i]);
      }
      return OkStatus();
    };
    if (index_wide_) {
      std::vector<int64_t> idx(n);
      RETURN_IF_ERROR(e_->Read(indices_, Number::kInt64, n0, n, idx.data()));
      return check(idx.data());
    }
    std::vector<int32_t> idx(n);
    RETURN_IF_ERROR(e_->Read(indices_, Number::kInt32, n0, n, idx.data()));
    return check(idx.data());
  }

 private:
  AnnMatrix() = default;

  Status OpenSparse(const std::string& path) {
    const Elements& e = *e_;
    data_ = Join(path, "data");
    indices_ = Join(path, "indices");
    ASSIGN_OR_RETURN(ArrayDesc data, NeedArray(e, data_));
    ASSIGN_OR_RETURN(ArrayDesc indices, NeedArray(e, indices_));
    if (data.dims.size() != 1 || indices.dims.size() != 1)
      return CorruptError(describe_ + ": data and indices must be 1-D");
    stored_ = *data.number;
    value_type_ = ValueTypeOf(stored_);
    const Number it = *indices.number;
    if (it == Number::kFloat32 || it == Number::kFloat64 || it == Number::kBool)
      return CorruptError(describe_ + "/indices: " + indices.type + " values");
    index_wide_ = it == Number::kInt64 || it == Number::kUInt64 || it == Number::kUInt32;
    if (data.dims[0] != indices.dims[0]) {
      return CorruptError(describe_ + ": " + std::to_string(data.dims[0]) + " values but " +
                          std::to_string(indices.dims[0]) + " indices");
    }
    ASSIGN_OR_RETURN(std::vector<int64_t> ptr, ReadInts(e, Join(path, "indptr")));
    if (ptr.size() != uint64_t{outer_dim()} + 1) {
      return CorruptError(describe_ + "/indptr: " + std::to_string(ptr.size()) + " pointers for " +
                          std::to_string(outer_dim()) + (row_major_ ? " genes" : " cells") +
                          " (obs x var is " + std::to_string(cols_) + " x " +
                          std::to_string(rows_) + ")");
    }
    idxptr_.resize(ptr.size());
    for (size_t j = 0; j < ptr.size(); ++j) {
      if (ptr[j] < 0 || (j > 0 && ptr[j] < ptr[j - 1]) ||
          static_cast<uint64_t>(ptr[j]) > data.dims[0] || (j == 0 && ptr[j] != 0)) {
        return CorruptError(describe_ + "/indptr: pointer " + std::to_string(j) + " (" +
                            std::to_string(ptr[j]) + ") is out of order or beyond the " +
                            std::to_string(data.dims[0]) + " values");
      }
      idxptr_[j] = static_cast<uint64_t>(ptr[j]);
    }
    if (idxptr_.back() != data.dims[0]) {
      return CorruptError(describe_ + "/indptr: ends at " + std::to_string(idxptr_.back()) +
                          ", not at the " + std::to_string(data.dims[0]) + " values");
    }
    nnz_ = idxptr_.back();
    return OkStatus();
  }

  // A dense X (cells × genes, C order) shows its non-zeros only: the view is col-major (a cell
  // is a major), and opening counts each cell's non-zeros (one pass over X).
  Status OpenDense(const std::string& path) {
    const Elements& e = *e_;
    data_ = path;
    ASSIGN_OR_RETURN(ArrayDesc d, NeedArray(e, path));
    if (d.dims.size() != 2 || d.dims[0] != cols_ || d.dims[1] != rows_) {
      std::string shape;
      for (uint64_t x : d.dims) shape += (shape.empty() ? "" : " x ") + std::to_string(x);
      return CorruptError(describe_ + ": a dense array of " + shape + ", not obs x var = " +
                          std::to_string(cols_) + " x " + std::to_string(rows_));
    }
    stored_ = *d.number;
    value_type_ = ValueTypeOf(stored_);
    row_major_ = false;
    dense_rows_ = true;
    idxptr_.assign(uint64_t{cols_} + 1, 0);
    const uint64_t genes = rows_;
    const uint64_t batch =
        std::max<uint64_t>(1, (uint64_t{1} << 20) / std::max<uint64_t>(genes, 1));
    MatrixEntries v;
    for (uint64_t c0 = 0; c0 < cols_; c0 += batch) {
      const uint64_t c1 = std::min<uint64_t>(cols_, c0 + batch);
      RETURN_IF_ERROR(
          ReadValues(e, data_, stored_, value_type_, c0 * genes, (c1 - c0) * genes, &v));
      for (uint64_t c = c0; c < c1; ++c) {
        uint64_t n = 0;
        for (uint64_t g = 0; g < genes; ++g) n += NonZero(value_type_, v, (c - c0) * genes + g);
        idxptr_[c + 1] = idxptr_[c] + n;
      }
    }
    nnz_ = idxptr_.back();
    return OkStatus();
  }

  Status ReadDense(uint64_t n0, uint64_t n1, MatrixEntries* out) const {
    out->Resize(value_type_, 0);
    if (n0 == n1) return OkStatus();
    const uint64_t genes = rows_;
    const uint32_t j0 = MajorOf(n0);
    const uint32_t j1 = MajorOf(n1 - 1) + 1;
    MatrixEntries v;
    RETURN_IF_ERROR(
        ReadValues(*e_, data_, stored_, value_type_, j0 * genes, (j1 - j0) * genes, &v));
    for (uint32_t j = j0; j < j1; ++j) {
      uint64_t n = idxptr_[j];
      uint64_t found = 0;
      for (uint64_t g = 0; g < genes; ++g) {
        const uint64_t i = (j - j0) * genes + g;
        if (!NonZero(value_type_, v, i)) continue;
        ++found;
        if (n >= n0 && n < n1) out->AppendOne(value_type_, v, i, static_cast<uint32_t>(g));
        ++n;
      }
      if (found != idxptr_[j + 1] - idxptr_[j]) {
        return CorruptError(describe_ + ": cell " + std::to_string(j) +
                            " holds another count of non-zero values than when it was opened");
      }
    }
    return OkStatus();
  }

  std::shared_ptr<const Elements> e_;
  std::string describe_;
  std::string data_, indices_;
  Number stored_ = Number::kFloat32;
  bool index_wide_ = false;
  bool dense_rows_ = false;
};

}  // namespace

Result<std::shared_ptr<const AnnData>> AnnData::Open(std::shared_ptr<const Elements> e) {
  const std::string* enc = e->Attribute("/", "encoding-type");
  if (enc == nullptr || *enc != "anndata")
    return UnsupportedError(e->Describe() + ": not an AnnData file (no encoding-type anndata)");
  std::shared_ptr<AnnData> a(new AnnData());
  a->e_ = e;
  ASSIGN_OR_RETURN(Names obs, ReadIndex(*e, "/obs", nullptr));
  ASSIGN_OR_RETURN(Names var, ReadIndex(*e, "/var", nullptr));
  a->obs_ = obs;
  a->var_ = var;
  auto add = [&](std::string folder, std::string path, Names rows) {
    Matrix m;
    m.folder = std::move(folder);
    m.path = path;
    m.reader = AnnMatrix::Open(e, path, obs, std::move(rows));
    a->matrices_.push_back(std::move(m));
  };
  ASSIGN_OR_RETURN(std::optional<ArrayDesc> dense_x, e->Array("/X"));
  if (e->IsGroup("/X") || dense_x) add("", "/X", var);
  if (e->IsGroup("/layers")) {
    ASSIGN_OR_RETURN(std::vector<std::string> layers, e->Children("/layers"));
    for (const auto& l : layers) add("layers/" + l, "/layers/" + l, var);
  }
  if (e->IsGroup("/raw")) {
    auto raw_var = ReadIndex(*e, "/raw/var", nullptr);
    if (raw_var.ok()) a->raw_var_ = *raw_var;
    ASSIGN_OR_RETURN(std::optional<ArrayDesc> raw_dense, e->Array("/raw/X"));
    if (e->IsGroup("/raw/X") || raw_dense) {
      if (!raw_var.ok()) {
        Matrix m;
        m.folder = "raw";
        m.path = "/raw/X";
        m.reader = raw_var.status();
        a->matrices_.push_back(std::move(m));
      } else {
        add("raw", "/raw/X", *raw_var);
      }
    }
  }
  return std::shared_ptr<const AnnData>(std::move(a));
}

Result<std::shared_ptr<const Table>> AnnData::Obs() const {
  std::call_once(obs_once_, [this] {
    auto t = ReadTable(*e_, "/obs");
    obs_table_ = t.ok() ? Result<std::shared_ptr<const Table>>(
                              std::make_shared<const Table>(std::move(t).value()))
                        : Result<std::shared_ptr<const Table>>(t.status());
  });
  return obs_table_;
}

uint64_t AnnData::Rows(const std::string& group) const {
  if (group == "/obs") return obs_->size();
  if (group == "/var") return var_->size();
  return raw_var_ ? raw_var_->size() : 0;
}

std::shared_ptr<const Elements> Hdf5Elements(std::string describe, io::H5Probe probe,
                                             OpenH5Group open) {
  return std::make_shared<const H5Elements>(std::move(describe), std::move(probe), std::move(open));
}

}  // namespace omicsfs::formats::anndata
