#include "formats/row_access.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>

#include "codec/hash.h"
#include "util/log.h"

namespace omicsfs::formats {

TransposedCopy TransposedCopy::In(const std::string& dir, std::string key, bool rebuild) {
  TransposedCopy copy;
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.csr",
                static_cast<unsigned long long>(codec::Hash64(key.data(), key.size())));
  copy.path = dir + "/" + name;
  copy.key = std::move(key);
  copy.rebuild = rebuild;
  return copy;
}
namespace {

constexpr uint64_t kScanEntries = 1 << 20;   // entries decoded per step while transposing
constexpr uint64_t kBlockRecords = 1 << 16;  // records per verified block of a persisted copy
constexpr char kMagic[8] = {'O', 'M', 'X', 'C', 'S', 'R', '0', '1'};

uint64_t Align(uint64_t n) { return (n + 4095) / 4096 * 4096; }

template <typename V>
void Permute(const std::vector<uint32_t>& order, uint64_t a, std::vector<V>* values) {
  std::vector<V> moved(order.size());
  for (size_t i = 0; i < order.size(); ++i) moved[i] = (*values)[a + order[i]];
  std::copy(moved.begin(), moved.end(), values->begin() + static_cast<ptrdiff_t>(a));
}

// Sorts entries [a, b) of `e` by column, their values with them.
void SortRow(ValueType vt, uint64_t a, uint64_t b, RowEntries* e) {
  std::vector<uint32_t> order(b - a);
  std::iota(order.begin(), order.end(), 0u);
  const uint32_t* cols = e->cols.data() + a;
  std::stable_sort(order.begin(), order.end(),
                   [cols](uint32_t x, uint32_t y) { return cols[x] < cols[y]; });
  Permute(order, a, &e->cols);
  switch (vt) {
    case ValueType::kUInt32:
      Permute(order, a, &e->u32);
      break;
    case ValueType::kFloat32:
      Permute(order, a, &e->f32);
      break;
    case ValueType::kFloat64:
      Permute(order, a, &e->f64);
      break;
    case ValueType::kInt32:
      Permute(order, a, &e->i32);
      break;
    case ValueType::kInt64:
      Permute(order, a, &e->i64);
      break;
    case ValueType::kUInt64:
      Permute(order, a, &e->u64);
      break;
  }
}

}  // namespace

size_t RowAccess::ValueSize() const { return formats::ValueBytes(matrix_->value_type()); }

Result<std::shared_ptr<const RowAccess>> RowAccess::Build(
    std::shared_ptr<const MatrixReader> matrix, const std::vector<std::string>& scratch_dirs,
    uint64_t memory_budget, const Persist& persist) {
  std::shared_ptr<RowAccess> a(new RowAccess());
  a->matrix_ = std::move(matrix);
  if (a->matrix_->row_major()) {
    const MatrixReader& m = *a->matrix_;
    a->row_ptr_.resize(uint64_t{m.rows()} + 1);
    for (uint32_t r = 0; r <= m.rows(); ++r) a->row_ptr_[r] = m.MajorBegin(r);
  } else if (persist.path.empty() || persist.rebuild || !a->LoadPersisted(persist)) {
    RETURN_IF_ERROR(a->Transpose(scratch_dirs, memory_budget, persist));
  }
  return std::shared_ptr<const RowAccess>(std::move(a));
}

// Persisted layout: [header: magic, rows, nnz, record size, key length, key][row_ptr: rows + 1
// u64][block hashes][hash of everything before] padded to 4 KiB, then the records.
std::string RowAccess::Header(const Persist& persist) const {
  const uint64_t fields[4] = {matrix_->rows(), matrix_->nnz(), 4 + ValueSize(), persist.key.size()};
  std::string h(kMagic, 8);
  h.append(reinterpret_cast<const char*>(fields), sizeof fields);
  h += persist.key;
  h.append(reinterpret_cast<const char*>(row_ptr_.data()), row_ptr_.size() * 8);
  h.append(reinterpret_cast<const char*>(block_hash_.data()), block_hash_.size() * 8);
  const uint64_t sum = codec::Hash64(h.data(), h.size());
  h.append(reinterpret_cast<const char*>(&sum), 8);
  return h;
}

uint64_t RowAccess::HeaderSize(const Persist& persist) const {
  const uint64_t blocks = (matrix_->nnz() + kBlockRecords - 1) / kBlockRecords;
  return 8 + 32 + persist.key.size() + (uint64_t{matrix_->rows()} + 1) * 8 + blocks * 8 + 8;
}

bool RowAccess::LoadPersisted(const Persist& persist) {
  auto f = File::OpenReadOnly(persist.path);
  if (!f.ok()) return false;
  const MatrixReader& m = *matrix_;
  const uint64_t nnz = m.nnz(), blocks = (nnz + kBlockRecords - 1) / kBlockRecords;
  const uint64_t head = HeaderSize(persist);
  auto st = f->Stat();
  if (!st.ok() || static_cast<uint64_t>(st->st_size) != Align(head) + nnz * (4 + ValueSize()))
    return false;
  std::string h(head, '\0');
  if (!f->ReadExact(0, h.data(), head).ok()) return false;
  row_ptr_.resize(uint64_t{m.rows()} + 1);
  block_hash_.resize(blocks);
  const size_t at = 8 + 32 + persist.key.size();
  std::memcpy(row_ptr_.data(), h.data() + at, row_ptr_.size() * 8);
  std::memcpy(block_hash_.data(), h.data() + at + row_ptr_.size() * 8, blocks * 8);
  if (Header(persist) != h) {  // magic, shape, key, offsets and hashes all as expected
    row_ptr_.clear();
    block_hash_.clear();
    return false;
  }
  persisted_ = std::move(f).value();
  data_offset_ = Align(head);
  TouchFile(persist.path);  // mtime = last use, for index garbage collection
  LogDebug(m.Describe() + ": transposed copy reused from " + persist.path);
  return true;
}

// Best effort: hashes the records, writes the header and links the scratch file into place.
void RowAccess::SavePersisted(const Persist& persist) {
  const size_t rec = 4 + ValueSize();
  const uint64_t nnz = matrix_->nnz();
  std::vector<uint64_t> hashes;
  std::vector<char> buf;
  for (uint64_t b = 0; b * kBlockRecords < nnz; ++b) {
    const uint64_t n = std::min(kBlockRecords, nnz - b * kBlockRecords);
    buf.resize(n * rec);
    if (!csr_->file()
             .ReadExact(data_offset_ + b * kBlockRecords * rec, buf.data(), buf.size())
             .ok())
      return;
    hashes.push_back(codec::Hash64(buf.data(), buf.size()));
  }
  block_hash_ = std::move(hashes);
  const std::string h = Header(persist);
  if (Align(h.size()) != data_offset_ || !csr_->WriteAt(0, h.data(), h.size()).ok())
    return block_hash_.clear();
  const std::string tmp = persist.path + ".tmp" + std::to_string(::getpid());
  const std::string proc = "/proc/self/fd/" + std::to_string(csr_->file().fd());
  if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, tmp.c_str(), AT_SYMLINK_FOLLOW) != 0 ||
      std::rename(tmp.c_str(), persist.path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    LogDebug(matrix_->Describe() + ": transposed copy not persisted to " + persist.path);
    return;
  }
  LogDebug(matrix_->Describe() + ": transposed copy persisted to " + persist.path);
}

Status RowAccess::Transpose(const std::vector<std::string>& scratch_dirs, uint64_t memory_budget,
                            const Persist& persist) {
  const MatrixReader& m = *matrix_;
  const uint64_t nnz = m.nnz();
  const uint32_t rows = m.rows();
  // Pass 1: entries per row.
  row_ptr_.assign(uint64_t{rows} + 1, 0);
  MatrixEntries e;
  for (uint64_t n0 = 0; n0 < nnz; n0 += kScanEntries) {
    const uint64_t n1 = std::min(nnz, n0 + kScanEntries);
    RETURN_IF_ERROR(m.ReadEntries(n0, n1, &e));
    for (uint32_t r : e.inner) ++row_ptr_[r + 1];
  }
  std::partial_sum(row_ptr_.begin(), row_ptr_.end(), row_ptr_.begin());
  if (nnz == 0) return OkStatus();
  auto scratch = ScratchFile::Create(scratch_dirs);
  if (!scratch.ok())
    return std::move(scratch).status().WithContext(m.Describe() + ": transposed copy");
  csr_ = std::make_unique<ScratchFile>(std::move(scratch).value());
  // Room for the persisted header (rewritten once the block hashes are known).
  if (!persist.path.empty()) {
    data_offset_ = Align(HeaderSize(persist));
  }
  // Pass 2, per band of rows whose records fit the budget: scan every entry, keep the band's.
  const size_t rec = 4 + ValueSize();
  const uint64_t budget_entries = std::max<uint64_t>(1, memory_budget / rec);
  std::vector<char> band;
  std::vector<uint64_t> cursor;
  for (uint32_t a = 0; a < rows;) {
    uint32_t b = a + 1;
    while (b < rows && row_ptr_[b + 1] - row_ptr_[a] <= budget_entries) ++b;
    const uint64_t base = row_ptr_[a], count = row_ptr_[b] - base;
    if (count > 0) {
      band.assign(count * rec, 0);
      cursor.assign(row_ptr_.begin() + a, row_ptr_.begin() + b);
      uint32_t col = 0;
      uint64_t col_end = m.MajorBegin(1);  // nnz > 0: there is a column
      for (uint64_t n0 = 0; n0 < nnz; n0 += kScanEntries) {
        const uint64_t n1 = std::min(nnz, n0 + kScanEntries);
        RETURN_IF_ERROR(m.ReadEntries(n0, n1, &e));
        for (uint64_t i = n0; i < n1; ++i) {
          while (col_end <= i) col_end = m.MajorBegin(++col + 1);
          const uint32_t r = e.inner[i - n0];
          if (r < a || r >= b) continue;
          char* p = band.data() + (cursor[r - a]++ - base) * rec;
          std::memcpy(p, &col, 4);
          const size_t vb = ValueBytes(m.value_type());
          std::memcpy(p + 4, static_cast<const char*>(e.Values(m.value_type())) + (i - n0) * vb,
                      vb);
        }
      }
      RETURN_IF_ERROR(csr_->WriteAt(data_offset_ + base * rec, band.data(), band.size()));
    }
    a = b;
  }
  if (!persist.path.empty()) SavePersisted(persist);
  return OkStatus();
}

Result<const char*> RowAccess::CopyRecords(uint64_t base, uint64_t n,
                                           std::unique_ptr<char[]>* buf) const {
  const MatrixReader& m = *matrix_;
  const size_t rec = 4 + ValueSize();
  if (n == 0) return static_cast<const char*>(nullptr);
  if (block_hash_.empty()) {  // not zero-filled: the read overwrites all of it
    *buf = std::make_unique_for_overwrite<char[]>(n * rec);
    RETURN_IF_ERROR(Records().ReadExact(data_offset_ + base * rec, buf->get(), n * rec));
    return static_cast<const char*>(buf->get());
  }
  // Whole blocks, each verified.
  const uint64_t b0 = base / kBlockRecords, b1 = (base + n - 1) / kBlockRecords + 1;
  const uint64_t first = b0 * kBlockRecords, last = std::min(b1 * kBlockRecords, m.nnz());
  *buf = std::make_unique_for_overwrite<char[]>((last - first) * rec);
  RETURN_IF_ERROR(
      Records().ReadExact(data_offset_ + first * rec, buf->get(), (last - first) * rec));
  for (uint64_t b = b0; b < b1; ++b) {
    const uint64_t from = (b - b0) * kBlockRecords * rec;
    const uint64_t len = (std::min((b + 1) * kBlockRecords, m.nnz()) - b * kBlockRecords) * rec;
    if (codec::Hash64(buf->get() + from, len) != block_hash_[b]) {
      return CorruptError(Records().path() + ": block " + std::to_string(b) +
                          " of the persisted transposed copy fails its checksum (remove the file "
                          "or mount with rebuild_index)");
    }
  }
  return static_cast<const char*>(buf->get() + (base - first) * rec);
}

Status RowAccess::ReadRecords(uint64_t n0, uint64_t n1, MatrixEntries* out) const {
  const MatrixReader& m = *matrix_;
  if (n0 > n1 || n1 > m.nnz())
    return InternalError(m.Describe() + ": records [" + std::to_string(n0) + ", " +
                         std::to_string(n1) + ") of " + std::to_string(m.nnz()));
  if (csr_ == nullptr && !persisted_.valid()) return m.ReadEntries(n0, n1, out);
  const ValueType vt = m.value_type();
  const uint64_t n = n1 - n0;
  out->Resize(vt, n);
  std::unique_ptr<char[]> buf;
  ASSIGN_OR_RETURN(const char* records, CopyRecords(n0, n, &buf));
  const size_t rec = 4 + ValueSize(), vb = ValueSize();
  auto* values = static_cast<char*>(out->Values(vt));
  for (uint64_t i = 0; i < n; ++i) {
    const char* p = records + i * rec;
    std::memcpy(&out->inner[i], p, 4);
    std::memcpy(values + i * vb, p + 4, vb);
  }
  return OkStatus();
}

Status RowAccess::ReadRows(uint32_t r0, uint32_t r1, RowEntries* out) const {
  const MatrixReader& m = *matrix_;
  const uint64_t base = row_ptr_[r0], n = row_ptr_[r1] - base;
  out->row_ptr.assign(row_ptr_.begin() + r0, row_ptr_.begin() + r1 + 1);
  for (auto& p : out->row_ptr) p -= base;
  out->cols.resize(n);
  const ValueType vt = m.value_type();
  if (vt == ValueType::kUInt32) out->u32.resize(n);
  if (vt == ValueType::kFloat32) out->f32.resize(n);
  if (vt == ValueType::kFloat64) out->f64.resize(n);
  if (vt == ValueType::kInt32) out->i32.resize(n);
  if (vt == ValueType::kInt64) out->i64.resize(n);
  if (vt == ValueType::kUInt64) out->u64.resize(n);
  if (n == 0) return OkStatus();
  if (csr_ == nullptr && !persisted_.valid()) {  // row-major: the store is already CSR
    MatrixEntries e;
    RETURN_IF_ERROR(m.ReadEntries(base, base + n, &e));
    out->cols = std::move(e.inner);
    out->u32 = std::move(e.u32);
    out->f32 = std::move(e.f32);
    out->f64 = std::move(e.f64);
    out->i32 = std::move(e.i32);
    out->i64 = std::move(e.i64);
    out->u64 = std::move(e.u64);
    // A row-major slice's rows hold their entries in the store's column order, which is not
    // the slice's when its columns were chosen out of order: such rows are sorted here.
    for (uint32_t r = 0; r < r1 - r0; ++r) {
      const uint64_t a = out->row_ptr[r], b = out->row_ptr[r + 1];
      if (!std::is_sorted(out->cols.begin() + a, out->cols.begin() + b)) SortRow(vt, a, b, out);
    }
    return OkStatus();
  }
  const size_t rec = 4 + ValueSize();
  std::unique_ptr<char[]> buf;
  ASSIGN_OR_RETURN(const char* records, CopyRecords(base, n, &buf));
  for (uint64_t i = 0; i < n; ++i) {
    const char* p = records + i * rec;
    std::memcpy(&out->cols[i], p, 4);
    switch (vt) {
      case ValueType::kUInt32:
        std::memcpy(&out->u32[i], p + 4, 4);
        break;
      case ValueType::kFloat32:
        std::memcpy(&out->f32[i], p + 4, 4);
        break;
      case ValueType::kFloat64:
        std::memcpy(&out->f64[i], p + 4, 8);
        break;
      case ValueType::kInt32:
        std::memcpy(&out->i32[i], p + 4, 4);
        break;
      case ValueType::kInt64:
        std::memcpy(&out->i64[i], p + 4, 8);
        break;
      case ValueType::kUInt64:
        std::memcpy(&out->u64[i], p + 4, 8);
        break;
    }
  }
  return OkStatus();
}

}  // namespace omicsfs::formats
