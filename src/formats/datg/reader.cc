#include "formats/datg/reader.h"

#include <algorithm>
#include <cstring>

#include "codec/compression.h"
#include "codec/lz4.h"

namespace omicsfs::formats::datg {
namespace {

constexpr size_t kTrailer = 44;

uint64_t BE(const char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

Result<std::vector<std::string>> ReadNames(const io::ByteSource& source) {
  ASSIGN_OR_RETURN(std::string gz, source.ReadAll(uint64_t{1} << 31));
  auto text = codec::ZlibDecode(gz, codec::ZlibFormat::kGzip, size_t{1} << 32);
  if (!text.ok()) return std::move(text).status().WithContext(source.Describe());
  std::vector<std::string> out;
  size_t pos = 0;
  const std::string& t = *text;
  while (pos < t.size()) {
    size_t nl = t.find('\n', pos);
    size_t end = nl == std::string::npos ? t.size() : nl;
    out.emplace_back(t, pos, end - pos);
    pos = end + 1;
  }
  return out;
}

}  // namespace

Result<std::string> ModifiedUtf8ToUtf8(std::string_view in) {
  std::string out;
  size_t i = 0;
  auto cont = [&](size_t k) {
    return k < in.size() && (static_cast<uint8_t>(in[k]) & 0xC0) == 0x80;
  };
  while (i < in.size()) {
    const uint8_t c = static_cast<uint8_t>(in[i]);
    if (c < 0x80 && c != 0) {
      out.push_back(static_cast<char>(c));
      ++i;
    } else if ((c & 0xE0) == 0xC0 && cont(i + 1)) {
      uint32_t cp = ((c & 0x1Fu) << 6) | (static_cast<uint8_t>(in[i + 1]) & 0x3Fu);
      if (cp == 0)
        out.push_back('\0');
      else
        out.append(in.substr(i, 2));
      i += 2;
    } else if ((c & 0xF0) == 0xE0 && cont(i + 1) && cont(i + 2)) {
      uint32_t cp = ((c & 0x0Fu) << 12) | ((static_cast<uint8_t>(in[i + 1]) & 0x3Fu) << 6) |
                    (static_cast<uint8_t>(in[i + 2]) & 0x3Fu);
      if (cp >= 0xD800 && cp < 0xDC00) {  // high surrogate: expect the low one next
        if (i + 5 >= in.size() + 0 || static_cast<uint8_t>(in[i + 3]) != 0xED || !cont(i + 4) ||
            !cont(i + 5)) {
          return CorruptError("modified UTF-8: unpaired surrogate");
        }
        uint32_t lo = ((static_cast<uint8_t>(in[i + 4]) & 0x3Fu) << 6) |
                      (static_cast<uint8_t>(in[i + 5]) & 0x3Fu) | 0xD000u;
        if (lo < 0xDC00 || lo > 0xDFFF) return CorruptError("modified UTF-8: unpaired surrogate");
        uint32_t full = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        out.push_back(static_cast<char>(0xF0 | (full >> 18)));
        out.push_back(static_cast<char>(0x80 | ((full >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((full >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (full & 0x3F)));
        i += 6;
      } else if (cp >= 0xDC00 && cp < 0xE000) {
        return CorruptError("modified UTF-8: unpaired surrogate");
      } else {
        out.append(in.substr(i, 3));
        i += 3;
      }
    } else {
      return CorruptError("modified UTF-8: invalid byte sequence");
    }
  }
  return out;
}

Result<std::shared_ptr<const DatgFile>> DatgFile::Open(std::shared_ptr<const io::ByteSource> source,
                                                       const io::ByteSource& rows_gz,
                                                       const io::ByteSource& cols_gz) {
  std::shared_ptr<DatgFile> d(new DatgFile());
  const std::string& datg = source->Describe();
  d->path_ = datg;
  d->file_ = std::move(source);
  const uint64_t size = d->file_->Size();
  if (size < kTrailer)
    return CorruptError(datg + ": " + std::to_string(size) +
                        " bytes is shorter than the 44-byte trailer");
  char t[kTrailer];
  RETURN_IF_ERROR(d->file_->ReadExact(size - kTrailer, t, kTrailer));
  if (std::memcmp(t + 40, "UMCG", 4) != 0)
    return CorruptError(datg + ": trailer magic is not UMCG");
  if (t[36] != 0 || t[37] != 0 || t[38] != 0)
    return UnsupportedError(datg + ": reserved trailer bytes are not zero (a newer format?)");
  const uint8_t flags = static_cast<uint8_t>(t[39]);
  if ((flags & 0xFE) != 0)
    return UnsupportedError(datg + ": unknown trailer flag bits " + std::to_string(flags));
  d->lz4_frames_ = (flags & 1) != 0;
  const int64_t rows = static_cast<int32_t>(BE(t + 8, 4)),
                cols = static_cast<int32_t>(BE(t + 12, 4));
  const uint64_t index_offset = BE(t + 16, 8), meta_offset = BE(t + 24, 8);
  const int64_t rpb = static_cast<int32_t>(BE(t + 32, 4));
  if (rows < 0 || cols < 0 || rpb < 1) {
    return CorruptError(datg + ": trailer holds rows " + std::to_string(rows) + ", cols " +
                        std::to_string(cols) + ", rows per block " + std::to_string(rpb));
  }
  if (index_offset > meta_offset || meta_offset > size - kTrailer)
    return CorruptError(datg + ": trailer offsets out of order or beyond the file");
  if (static_cast<uint64_t>(rpb) * static_cast<uint64_t>(cols) * 8 > (uint64_t{1} << 31))
    return CorruptError(datg + ": a row block would exceed 2 GiB");
  d->rows_ = static_cast<uint64_t>(rows);
  d->cols_ = static_cast<uint64_t>(cols);
  d->rpb_ = static_cast<uint64_t>(rpb);
  d->index_offset_ = index_offset;

  // Metadata: three writeUTF strings spanning [meta_offset, size - 44) exactly.
  std::string meta(size - kTrailer - meta_offset, '\0');
  RETURN_IF_ERROR(d->file_->ReadExact(meta_offset, meta.data(), meta.size()));
  size_t pos = 0;
  std::string* fields[] = {&d->dataset_name_, &d->data_on_rows_, &d->data_on_cols_};
  for (std::string* f : fields) {
    if (meta.size() - pos < 2) return CorruptError(datg + ": metadata strings truncated");
    size_t len = BE(meta.data() + pos, 2);
    pos += 2;
    if (meta.size() - pos < len) return CorruptError(datg + ": metadata strings truncated");
    auto s = ModifiedUtf8ToUtf8(std::string_view(meta).substr(pos, len));
    if (!s.ok()) return std::move(s).status().WithContext(datg + ": metadata");
    *f = std::move(s).value();
    pos += len;
  }
  if (pos != meta.size())
    return CorruptError(datg + ": " + std::to_string(meta.size() - pos) +
                        " unexpected bytes after the metadata strings");

  // Block index.
  const uint64_t nblocks = (d->rows_ + d->rpb_ - 1) / d->rpb_;
  std::string raw(meta_offset - index_offset, '\0');
  RETURN_IF_ERROR(d->file_->ReadExact(index_offset, raw.data(), raw.size()));
  auto index = d->lz4_frames_ ? codec::Lz4FrameDecode(raw, nblocks * 8)
                              : codec::Lz4BlockStreamDecode(raw, nblocks * 8);
  if (!index.ok()) return std::move(index).status().WithContext(datg + ": block index");
  d->offsets_.resize(nblocks);
  for (uint64_t b = 0; b < nblocks; ++b) {
    d->offsets_[b] = BE(index->data() + 8 * b, 8);
    const uint64_t end = b + 1 < nblocks ? BE(index->data() + 8 * (b + 1), 8) : index_offset;
    if ((b == 0 && d->offsets_[b] != 0) || d->offsets_[b] >= end || end > index_offset) {
      return CorruptError(datg + ": block index entry " + std::to_string(b) + " (" +
                          std::to_string(d->offsets_[b]) +
                          ") is out of order or beyond the index frame");
    }
  }
  if (nblocks == 0 && index_offset != 0)
    return CorruptError(datg + ": data before the index frame of an empty matrix");

  // Names.
  ASSIGN_OR_RETURN(d->row_names_, ReadNames(rows_gz));
  ASSIGN_OR_RETURN(d->col_names_, ReadNames(cols_gz));
  if (d->row_names_.size() != d->rows_) {
    return CorruptError(rows_gz.Describe() + ": " + std::to_string(d->row_names_.size()) +
                        " names, the matrix has " + std::to_string(d->rows_) + " rows");
  }
  if (d->col_names_.size() != d->cols_) {
    return CorruptError(cols_gz.Describe() + ": " + std::to_string(d->col_names_.size()) +
                        " names, the matrix has " + std::to_string(d->cols_) + " columns");
  }
  return std::shared_ptr<const DatgFile>(std::move(d));
}

Result<std::vector<double>> DatgFile::ReadBlock(uint64_t b) const {
  if (b >= offsets_.size()) return InternalError(path_ + ": no block " + std::to_string(b));
  const uint64_t start = offsets_[b],
                 end = b + 1 < offsets_.size() ? offsets_[b + 1] : index_offset_;
  std::string raw(end - start, '\0');
  RETURN_IF_ERROR(file_->ReadExact(start, raw.data(), raw.size()));
  const uint64_t n = BlockRows(b) * cols_;
  auto bytes =
      lz4_frames_ ? codec::Lz4FrameDecode(raw, n * 8) : codec::Lz4BlockStreamDecode(raw, n * 8);
  if (!bytes.ok())
    return std::move(bytes).status().WithContext(path_ + ": row block " + std::to_string(b) +
                                                 " at offset " + std::to_string(start));
  std::vector<double> out(n);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t bits = __builtin_bswap64([&] {
      uint64_t v;
      std::memcpy(&v, bytes->data() + 8 * i, 8);
      return v;
    }());
    std::memcpy(&out[i], &bits, 8);
  }
  return out;
}

Result<std::shared_ptr<const DatgMatrix>> DatgMatrix::Make(
    std::shared_ptr<const DatgFile> file, std::optional<std::vector<uint64_t>> rows,
    std::optional<std::vector<uint64_t>> cols) {
  using Names = std::shared_ptr<const std::vector<std::string>>;
  auto chosen = [&](const std::optional<std::vector<uint64_t>>& picked,
                    const std::vector<std::string>& names, const char* what, Names* out) -> Status {
    if (!picked) {
      *out = Names(file, &names);  // the file's own
      return OkStatus();
    }
    const uint64_t n = names.size();
    std::vector<bool> seen(n);
    auto kept = std::make_shared<std::vector<std::string>>();
    kept->reserve(picked->size());
    for (uint64_t i : *picked) {
      if (i >= n || seen[i]) {
        return InvalidArgumentError(file->Describe() + ": " + what + " " + std::to_string(i) +
                                    (i >= n ? " is out of range" : " is chosen twice"));
      }
      seen[i] = true;
      kept->push_back(names[i]);
    }
    *out = std::move(kept);
    return OkStatus();
  };
  std::shared_ptr<DatgMatrix> m(new DatgMatrix());
  RETURN_IF_ERROR(chosen(rows, file->row_names(), "row", &m->row_names_));
  RETURN_IF_ERROR(chosen(cols, file->col_names(), "column", &m->col_names_));
  m->rows_ = static_cast<uint32_t>(rows ? rows->size() : file->rows());  // the trailer's are int32
  m->cols_ = static_cast<uint32_t>(cols ? cols->size() : file->cols());
  m->row_major_ = true;
  m->value_type_ = ValueType::kFloat64;
  m->dense_ = true;
  m->nnz_ = uint64_t{m->rows_} * m->cols_;
  m->file_ = std::move(file);
  m->chosen_rows_ = std::move(rows);
  m->chosen_cols_ = std::move(cols);
  return std::shared_ptr<const DatgMatrix>(std::move(m));
}

std::shared_ptr<const DatgMatrix> DatgMatrix::Whole(std::shared_ptr<const DatgFile> file) {
  return *Make(std::move(file), std::nullopt, std::nullopt);  // nothing chosen: cannot fail
}

Result<std::shared_ptr<const MatrixReader>> DatgMatrix::Slice(MatrixSubset subset) const {
  // Chosen positions of this matrix → the file's indices (distinct stays distinct).
  auto compose = [&](const std::optional<std::vector<uint32_t>>& picked, uint32_t n,
                     const char* what, const std::optional<std::vector<uint64_t>>& mine,
                     std::optional<std::vector<uint64_t>>* out) -> Status {
    if (!picked) {
      *out = mine;
      return OkStatus();
    }
    RETURN_IF_ERROR(CheckChosen(*picked, n, what, Describe()));
    out->emplace();
    (*out)->reserve(picked->size());
    for (uint32_t i : *picked) (*out)->push_back(mine ? (*mine)[i] : i);
    return OkStatus();
  };
  std::optional<std::vector<uint64_t>> rows, cols;
  RETURN_IF_ERROR(compose(subset.rows, rows_, "row", chosen_rows_, &rows));
  RETURN_IF_ERROR(compose(subset.cols, cols_, "column", chosen_cols_, &cols));
  ASSIGN_OR_RETURN(auto slice, Make(file_, std::move(rows), std::move(cols)));
  return std::shared_ptr<const MatrixReader>(std::move(slice));
}

Status DatgMatrix::ReadEntries(uint64_t n0, uint64_t n1, MatrixEntries* out) const {
  if (n0 > n1 || n1 > nnz_) {
    return InternalError(Describe() + ": entry range [" + std::to_string(n0) + ", " +
                         std::to_string(n1) + ") beyond nnz " + std::to_string(nnz_));
  }
  out->inner.clear();
  out->u32.clear();
  out->f32.clear();
  out->f64.clear();
  if (n0 == n1) return OkStatus();
  const uint64_t width = cols_, r0 = n0 / width, r1 = (n1 + width - 1) / width;
  ASSIGN_OR_RETURN(std::vector<double> values, ReadRows(r0, r1));
  const uint64_t skip = n0 - r0 * width;
  out->f64.assign(values.begin() + static_cast<ptrdiff_t>(skip),
                  values.begin() + static_cast<ptrdiff_t>(skip + n1 - n0));
  out->inner.resize(n1 - n0);
  uint32_t c = static_cast<uint32_t>(skip);
  for (uint32_t& inner : out->inner) {
    inner = c;
    if (++c == width) c = 0;
  }
  return OkStatus();
}

uint64_t DatgMatrix::RunEnd(uint64_t first, uint64_t last) const {
  if (!whole()) return last;
  const uint64_t rpb = file_->rows_per_block();
  return std::min(last, (first / rpb + 1) * rpb);
}

Result<std::vector<double>> DatgMatrix::ReadRows(uint64_t first, uint64_t last) const {
  const DatgFile& f = *file_;
  last = std::min<uint64_t>(last, rows_);
  if (first >= last) return std::vector<double>();
  const uint64_t n = last - first, width = cols_, stride = f.cols();
  if (whole() && first % f.rows_per_block() == 0 && f.BlockRows(first / f.rows_per_block()) == n) {
    return f.ReadBlock(first / f.rows_per_block());  // one whole block: its values as they are
  }
  std::vector<double> out(n * width);
  // The rows by block (then by position): one decode per block, whatever the rows' order.
  std::vector<std::pair<uint64_t, uint64_t>> by_block(n);  // (file row, row - first)
  for (uint64_t i = 0; i < n; ++i) by_block[i] = {FileRow(first + i), i};
  if (chosen_rows_) std::sort(by_block.begin(), by_block.end());
  for (size_t at = 0; at < by_block.size();) {
    const uint64_t b = by_block[at].first / f.rows_per_block(), block_first = f.BlockFirstRow(b);
    ASSIGN_OR_RETURN(std::vector<double> values, f.ReadBlock(b));
    for (; at < by_block.size() && by_block[at].first / f.rows_per_block() == b; ++at) {
      const double* from = values.data() + (by_block[at].first - block_first) * stride;
      double* to = out.data() + by_block[at].second * width;
      if (!chosen_cols_) {
        std::copy(from, from + width, to);
      } else {
        for (uint64_t j = 0; j < width; ++j) to[j] = from[(*chosen_cols_)[j]];
      }
    }
  }
  return out;
}

}  // namespace omicsfs::formats::datg
