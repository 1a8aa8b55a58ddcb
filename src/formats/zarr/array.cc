#include "formats/zarr/array.h"

#include <algorithm>
#include <cstring>

#include "codec/compression.h"
#include "codec/vlen_utf8.h"
#include "util/huge_arena.h"

namespace omicsfs::formats::zarr {
namespace {

void AppendUtf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace

Result<DecodedChunk> DecodeChunk(const ArrayMetadata& meta, const std::optional<std::string>& raw) {
  const uint64_t n = meta.ChunkElements();
  DecodedChunk out;
  if (!raw) {
    if (IsString(meta.dtype)) {
      out.strings.assign(n, meta.fill_string);
    } else {
      out.bytes.resize(n * meta.native_size);
      for (uint64_t i = 0; i < n; ++i)
        std::memcpy(out.bytes.data() + i * meta.native_size, meta.fill.data(), meta.native_size);
    }
    return out;
  }
  const size_t expect = meta.dtype == DType::kVlenString ? kMaxChunkBytes : n * meta.item_size;
  ASSIGN_OR_RETURN(std::string bytes, meta.codecs.DecodeBytes(*raw, expect));
  if (meta.dtype == DType::kVlenString) {
    ASSIGN_OR_RETURN(out.strings, codec::VlenUtf8Decode(bytes, n));
    return out;
  }
  if (bytes.size() != n * meta.item_size) {
    return CorruptError("decoded " + std::to_string(bytes.size()) + " bytes, a chunk holds " +
                        std::to_string(n * meta.item_size));
  }
  if (meta.dtype == DType::kFixedBytes) {
    out.strings.reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      const char* p = bytes.data() + i * meta.item_size;
      size_t len = meta.item_size;
      while (len > 0 && p[len - 1] == '\0') --len;
      out.strings.emplace_back(p, len);
    }
    return out;
  }
  if (meta.dtype == DType::kFixedUnicode) {
    out.strings.reserve(n);
    const size_t units = meta.item_size / 4;
    for (uint64_t i = 0; i < n; ++i) {
      std::string s;
      size_t len = units;
      auto unit = [&](size_t k) {
        uint32_t cp;
        std::memcpy(&cp, bytes.data() + i * meta.item_size + 4 * k, 4);
        if (meta.big_endian) cp = __builtin_bswap32(cp);
        return cp;
      };
      while (len > 0 && unit(len - 1) == 0) --len;
      for (size_t k = 0; k < len; ++k) {
        uint32_t cp = unit(k);
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000))
          return CorruptError("invalid UTF-32 code point");
        AppendUtf8(&s, cp);
      }
      out.strings.push_back(std::move(s));
    }
    return out;
  }
  if (meta.big_endian && meta.item_size > 1) {
    for (uint64_t i = 0; i < n; ++i) {
      char* p = bytes.data() + i * meta.item_size;
      std::reverse(p, p + meta.item_size);
    }
  }
  if (meta.dtype == DType::kBool) {
    unsigned char other = 0;  // any bit but the lowest, in any byte (a vectorised pass)
    for (char c : bytes) other |= static_cast<unsigned char>(c) & 0xFEu;
    if (other != 0) return CorruptError("bool value other than 0/1");
  }
  out.bytes = std::move(bytes);
  return out;
}

Result<ZarrArray> ZarrArray::Open(std::shared_ptr<const io::BlobStore> store,
                                  const std::string& path) {
  // v3's zarr.json, else v2's two, one after another.
  MetadataObjects got{store->Get(path + "/zarr.json"), std::optional<std::string>(),
                      std::optional<std::string>()};
  if (got[0].ok() && !*got[0]) {
    got[1] = store->Get(path + "/.zarray");
    if (got[1].ok() && *got[1]) got[2] = store->Get(path + "/.zattrs");
  }
  return FromMetadataObjects(std::move(store), path, std::move(got));
}

Result<ZarrArray> ZarrArray::FromMetadataObjects(std::shared_ptr<const io::BlobStore> store,
                                                 const std::string& path, MetadataObjects got) {
  ASSIGN_OR_RETURN(auto v3, std::move(got[0]));
  if (v3) {
    auto meta = ParseV3Metadata(*v3);
    if (!meta.ok()) return std::move(meta).status().WithContext("array " + path);
    return FromMetadata(std::move(store), path, std::move(meta).value());
  }
  ASSIGN_OR_RETURN(auto zarray, std::move(got[1]));
  if (!zarray) return NotFoundError("array " + path + ": no .zarray or zarr.json");
  ASSIGN_OR_RETURN(auto zattrs, std::move(got[2]));
  auto meta = ParseV2Metadata(*zarray, zattrs ? *zattrs : "");
  if (!meta.ok()) return std::move(meta).status().WithContext("array " + path);
  return FromMetadata(std::move(store), path, std::move(meta).value());
}

ZarrArray ZarrArray::FromMetadata(std::shared_ptr<const io::BlobStore> store,
                                  const std::string& path, ArrayMetadata meta) {
  ZarrArray a;
  a.store_ = std::move(store);
  a.path_ = path;
  a.meta_ = std::move(meta);
  return a;
}

void ZarrArray::UseCache(cache::CachePool* pool) {
  pool_ = pool;
  if (pool_ != nullptr) owner_ = pool_->NewOwnerId();
}

namespace {

// Strides (in elements) of a C-order layout of `dims`.
std::vector<uint64_t> Strides(const std::vector<uint64_t>& dims) {
  std::vector<uint64_t> st(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) st[d - 1] = st[d] * dims[d];
  return st;
}

// Copies the box `extent` from one C-order layout to another (strides in elements, starting at
// src0 / dst0). Trailing dimensions contiguous in both layouts are merged into one run, so a
// whole row of a (variants, samples, ploidy) chunk is one copy; `copy(src, dst, n)` moves a run.
template <typename CopyRun>
void CopyBox(const std::vector<uint64_t>& extent, const std::vector<uint64_t>& src_stride,
             uint64_t src0, const std::vector<uint64_t>& dst_stride, uint64_t dst0, CopyRun copy) {
  const size_t nd = extent.size();
  for (uint64_t e : extent) {
    if (e == 0) return;
  }
  size_t m = nd - 1;  // dims m.. form the run
  uint64_t run = extent[m];
  while (m > 0 && src_stride[m - 1] == run && dst_stride[m - 1] == run) run *= extent[--m];
  std::vector<uint64_t> idx(m, 0);  // odometer over dims 0..m-1
  for (;;) {
    uint64_t src = src0, dst = dst0;
    for (size_t d = 0; d < m; ++d) {
      src += idx[d] * src_stride[d];
      dst += idx[d] * dst_stride[d];
    }
    copy(src, dst, run);
    size_t d = m;
    while (d > 0 && ++idx[d - 1] == extent[d - 1]) idx[--d] = 0;
    if (d == 0) return;
  }
}

// Copies elements of `from` to `to` (bytes of `size` each, or strings).
auto RunCopier(const DecodedChunk& from, char* to_bytes, std::vector<std::string>* to_strings,
               size_t size, bool str) {
  return [&from, to_bytes, to_strings, size, str](uint64_t src, uint64_t dst, uint64_t n) {
    if (str) {
      std::copy_n(from.strings.begin() + src, n, to_strings->begin() + dst);
    } else {
      std::memcpy(to_bytes + dst * size, from.bytes.data() + src * size, n * size);
    }
  };
}

// The part of a full decoded chunk inside the array: edge chunks are stored at full size (a
// 10 000-sample chunk of a 500-sample cohort is 95 % padding), so crop before keeping them.
DecodedChunk Crop(const ArrayMetadata& m, const std::vector<uint64_t>& grid, DecodedChunk full) {
  std::vector<uint64_t> extent(m.shape.size());
  for (size_t d = 0; d < extent.size(); ++d)
    extent[d] = std::min(m.chunks[d], m.shape[d] - grid[d] * m.chunks[d]);
  full.shape = m.chunks;
  if (extent == m.chunks) return full;
  const bool str = IsString(m.dtype);
  uint64_t total = 1;
  for (uint64_t e : extent) total *= e;
  DecodedChunk out;
  out.shape = extent;
  if (str)
    out.strings.resize(total);
  else
    out.bytes.resize(total * m.native_size);
  CopyBox(extent, Strides(m.chunks), 0, Strides(extent), 0,
          RunCopier(full, out.bytes.data(), &out.strings, m.native_size, str));
  return out;
}

}  // namespace

struct ZarrArray::RawChunk {
  std::optional<std::string> bytes;  // the stored chunk whole (stores without reads of parts)
  // Or the stored chunk to read by parts (local files): its blosc header and block table.
  std::shared_ptr<const io::ByteSource> source;
  std::string head;
  codec::BloscFrameIndex index;  // of `bytes` or of `source`'s frame
  bool absent() const { return !bytes && !source; }
};

std::string ZarrArray::Where(const std::vector<uint64_t>& grid) const {
  return store_->Describe() + ": " + ChunkName(grid);
}

std::string ZarrArray::ChunkName(const std::vector<uint64_t>& grid) const {
  return "array " + path_ + " chunk " + meta_.ChunkKey(grid);
}

Result<std::shared_ptr<const DecodedChunk>> ZarrArray::Chunk(
    const std::vector<uint64_t>& grid) const {
  auto decode = [&]() -> Result<DecodedChunk> {
    std::shared_ptr<const RawChunk> kept;  // stored bytes already in the cache (read by blocks)
    std::optional<std::string> read;
    if (pool_ != nullptr &&
        pool_->ContainsOrPending({owner_, cache::CacheKind::kSourceRaw, Linear(grid)})) {
      ASSIGN_OR_RETURN(kept, Raw(grid, Linear(grid)));
      if (!kept->bytes) kept.reset();  // read by parts: the whole is read below
    }
    if (!kept) {
      auto raw = store_->Get(path_ + "/" + meta_.ChunkKey(grid));
      if (!raw.ok()) return std::move(raw).status().WithContext(ChunkName(grid));
      read = std::move(raw).value();
    }
    auto chunk = DecodeChunk(meta_, kept ? kept->bytes : read);
    if (!chunk.ok()) return std::move(chunk).status().WithContext(Where(grid));
    return Crop(meta_, grid, std::move(chunk).value());
  };
  if (pool_ == nullptr) {
    ASSIGN_OR_RETURN(DecodedChunk c, decode());
    return std::make_shared<const DecodedChunk>(std::move(c));
  }
  return pool_->GetOrComputeAs<DecodedChunk>(
      {owner_, cache::CacheKind::kSourceBlock, Linear(grid)}, [&]() -> Result<cache::Sized> {
        ASSIGN_OR_RETURN(DecodedChunk c, decode());
        uint64_t bytes = arena::Footprint(c.bytes.data(), c.bytes.size()) + sizeof(DecodedChunk);
        for (const auto& str : c.strings)
          bytes += sizeof(std::string) + (str.size() > 15 ? str.size() : 0);
        return cache::Sized{std::make_shared<const DecodedChunk>(std::move(c)), bytes};
      });
}

namespace {

// The blosc header and block table of a stored chunk read by parts (into *head), and where its
// blocks lie. The first read takes room for the table of a chunk of up to ~1 000 blocks, so
// that a remote chunk's costs one request, not two (the header, then the table it announces).
Result<codec::BloscFrameIndex> ReadFrameIndex(const io::ByteSource& source, uint64_t expect,
                                              std::string* head) {
  constexpr uint64_t kFirstRead = 4096;
  const uint64_t size = source.Size();
  head->resize(std::min<uint64_t>(size, kFirstRead));
  RETURN_IF_ERROR(source.ReadExact(0, head->data(), head->size()));
  ASSIGN_OR_RETURN(uint64_t length, codec::BloscHeadLength(*head, size));
  const uint64_t have = head->size();
  head->resize(length);
  if (length > have) RETURN_IF_ERROR(source.ReadExact(have, head->data() + have, length - have));
  return codec::BloscIndex(*head, size, expect);
}

}  // namespace

Result<std::shared_ptr<const ZarrArray::RawChunk>> ZarrArray::Raw(const std::vector<uint64_t>& grid,
                                                                  uint64_t linear) const {
  return pool_->GetOrComputeAs<RawChunk>(
      {owner_, cache::CacheKind::kSourceRaw, linear}, [&]() -> Result<cache::Sized> {
        const std::string key = path_ + "/" + meta_.ChunkKey(grid);
        const uint64_t expect = meta_.ChunkElements() * meta_.item_size;
        RawChunk r;
        auto parts = store_->OpenForParts(key);
        if (parts.ok()) {
          r.source = std::move(parts).value();
          if (r.source) {  // the header, then the block table it announces
            auto index = ReadFrameIndex(*r.source, expect, &r.head);
            if (!index.ok()) return std::move(index).status().WithContext(Where(grid));
            r.index = std::move(index).value();
          }
        } else if (parts.status().code() == ErrorCode::kUnsupported) {
          auto got = store_->Get(key);
          if (!got.ok()) return std::move(got).status().WithContext(ChunkName(grid));
          r.bytes = std::move(got).value();
          if (r.bytes) {
            auto layout = codec::BloscInspect(*r.bytes, expect);
            if (!layout.ok()) return std::move(layout).status().WithContext(Where(grid));
            r.index.layout = layout.value();
          }
        } else {
          return std::move(parts).status().WithContext(ChunkName(grid));
        }
        if (!r.absent() && r.index.layout.nbytes != expect) {
          return CorruptError("decoded " + std::to_string(r.index.layout.nbytes) +
                              " bytes, a chunk holds " + std::to_string(expect))
              .WithContext(Where(grid));
        }
        uint64_t bytes = sizeof(RawChunk) + r.head.size() +
                         (r.index.start.size() + r.index.end.size()) * sizeof(uint64_t);
        if (r.bytes) bytes += arena::Footprint(r.bytes->data(), r.bytes->size());
        if (r.source) bytes += r.source->ResidentBytes();
        return cache::Sized{std::make_shared<const RawChunk>(std::move(r)), bytes};
      });
}

Result<cache::Buffer> ZarrArray::Block(const std::vector<uint64_t>& grid, uint64_t linear,
                                       const RawChunk& raw, uint64_t b,
                                       const PackedSpan& span) const {
  return pool_->GetOrCompute(
      {owner_, cache::CacheKind::kSourcePart, (linear << kBlockBits) | b},
      [&]() -> Result<std::string> {
        Result<std::string> bytes = std::string();
        if (raw.bytes) {
          bytes = codec::BloscDecodeRange(*raw.bytes, b * raw.index.layout.blocksize,
                                          raw.index.BlockBytes(b));
        } else {
          const uint64_t start = raw.index.start[b], end = raw.index.end[b];
          std::string own;
          std::string_view packed;
          Status read;
          if (start >= span.at && end <= span.at + span.bytes.size()) {  // read with its neighbours
            packed = std::string_view(span.bytes).substr(start - span.at, end - start);
          } else {
            own.resize(end - start);
            read = raw.source->ReadExact(start, own.data(), own.size());
            packed = own;
          }
          bytes = read.ok() ? codec::BloscDecodeBlock(raw.index, raw.head, packed, b)
                            : Result<std::string>(read);
        }
        if (!bytes.ok())
          return std::move(bytes).status().WithContext(Where(grid) + " block " + std::to_string(b));
        if (meta_.dtype == DType::kBool) {
          unsigned char other = 0;
          for (char c : *bytes) other |= static_cast<unsigned char>(c) & 0xFEu;
          if (other != 0) return CorruptError("bool value other than 0/1").WithContext(Where(grid));
        }
        return std::move(bytes).value();
      });
}

bool ZarrArray::PartsFit(uint64_t linear, uint64_t rows, uint64_t extent0) const {
  const auto& m = meta_;
  if (pool_ == nullptr || rows >= extent0 || !m.codecs.DecodesRanges() || IsString(m.dtype) ||
      m.item_size != m.native_size || (m.big_endian && m.item_size != 1) ||
      linear >= (uint64_t{1} << (64 - kBlockBits))) {
    return false;
  }
  // A pass or a long sequential run needs every row, a chunk's rows a few at a time: it decodes
  // the chunk whole (less work per byte) where the cache keeps the decoded chunk while the run
  // goes through it, by its blocks where it cannot — else every few rows decoded (remote: fetched)
  // the whole chunk again (a 64M cache's pass over an 8 000 × 400 chunk of AD, 19 MB decoded,
  // fetched it ~130 times from S3).
  if (cache::CachePool::InNotReads() || cache::CachePool::InStreaming())
    return m.ChunkElements() * m.native_size > pool_->budget() / kWholeChunkShare;
  return true;
}

Result<ZarrArray::ChunkRowsView> ZarrArray::ChunkRows(const std::vector<uint64_t>& grid,
                                                      uint64_t lo, uint64_t hi) const {
  const auto& m = meta_;
  const uint64_t linear = Linear(grid);
  const uint64_t extent0 = std::min(m.chunks[0], m.shape[0] - grid[0] * m.chunks[0]);
  ChunkRowsView v;
  if (PartsFit(linear, hi - lo, extent0) &&
      !pool_->ContainsOrPending({owner_, cache::CacheKind::kSourceBlock, linear})) {
    ASSIGN_OR_RETURN(std::shared_ptr<const RawChunk> raw, Raw(grid, linear));
    const uint64_t bs = raw->index.layout.blocksize;
    if (!raw->absent() && raw->index.layout.Blocks() > 1 && bs % m.item_size == 0 &&
        raw->index.layout.Blocks() <= (uint64_t{1} << kBlockBits)) {
      const uint64_t row_bytes = m.ChunkElements() / m.chunks[0] * m.item_size;
      const uint64_t b0 = lo * row_bytes, b1 = hi * row_bytes;
      const uint64_t first = b0 / bs, last = (b1 - 1) / bs;
      v.dims = m.chunks;
      if (first == last) {
        ASSIGN_OR_RETURN(cache::Buffer block, Block(grid, linear, *raw, first, PackedSpan()));
        v.at = block->data() + (b0 - first * bs);
        v.keep = std::move(block);
        return v;
      }
      // Read by parts: the compressed bytes of the blocks not held yet in one read where they
      // lie together (c-blosc writes them in order, unless its threads did), not one each (a
      // remote chunk: one ranged GET).
      PackedSpan span;
      if (raw->source) {
        uint64_t lo_at = UINT64_MAX, hi_at = 0, wanted = 0;
        for (uint64_t b = first; b <= last; ++b) {
          if (pool_->ContainsOrPending(
                  {owner_, cache::CacheKind::kSourcePart, (linear << kBlockBits) | b}))
            continue;
          lo_at = std::min(lo_at, raw->index.start[b]);
          hi_at = std::max(hi_at, raw->index.end[b]);
          wanted += raw->index.end[b] - raw->index.start[b];
        }
        if (wanted > 0 && hi_at - lo_at <= 2 * wanted) {
          span.at = lo_at;
          span.bytes.resize(hi_at - lo_at);
          Status read = raw->source->ReadExact(lo_at, span.bytes.data(), span.bytes.size());
          if (!read.ok()) return std::move(read).WithContext(Where(grid));
        }
      }
      auto joined = std::make_shared<std::string>(b1 - b0, '\0');
      for (uint64_t b = first; b <= last; ++b) {
        ASSIGN_OR_RETURN(cache::Buffer block, Block(grid, linear, *raw, b, span));
        const uint64_t from = std::max(b0, b * bs), to = std::min(b1, b * bs + block->size());
        std::memcpy(joined->data() + (from - b0), block->data() + (from - b * bs), to - from);
      }
      v.at = joined->data();
      v.keep = std::move(joined);
      return v;
    }
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const DecodedChunk> chunk, Chunk(grid));
  uint64_t row_elems = 1;
  for (size_t d = 1; d < chunk->shape.size(); ++d) row_elems *= chunk->shape[d];
  if (chunk->bytes.size() < hi * row_elems * m.native_size)
    return InternalError("array " + path_ + ": chunk smaller than its rows");
  v.dims = chunk->shape;
  v.at = chunk->bytes.data() + lo * row_elems * m.native_size;
  v.keep = std::move(chunk);
  return v;
}

uint64_t ZarrArray::Linear(const std::vector<uint64_t>& grid) const {
  uint64_t linear = 0;
  for (size_t d = 0; d < grid.size(); ++d) linear = linear * meta_.GridSize(d) + grid[d];
  return linear;
}

bool ZarrArray::Cached(uint64_t r0, uint64_t r1) const {
  const auto& m = meta_;
  const size_t nd = m.shape.size();
  if (pool_ == nullptr || r1 > m.shape[0]) return false;
  if (r0 >= r1) return true;
  for (size_t d = 1; d < nd; ++d) {
    if (m.GridSize(d) == 0) return true;
  }
  std::vector<uint64_t> grid(nd, 0);
  for (grid[0] = r0 / m.chunks[0]; grid[0] <= (r1 - 1) / m.chunks[0]; ++grid[0]) {
    const uint64_t origin = grid[0] * m.chunks[0];
    const uint64_t rows = std::min(r1, origin + m.chunks[0]) - std::max(r0, origin);
    for (;;) {  // every chunk of the other dimensions
      const uint64_t linear = Linear(grid);
      // Held, or read by its blosc blocks once its stored bytes are at hand (a few blocks: no
      // more work than a read of cached rows is worth spreading over threads).
      const bool cheap =
          pool_->ContainsOrPending({owner_, cache::CacheKind::kSourceBlock, linear}) ||
          (PartsFit(linear, rows, std::min(m.chunks[0], m.shape[0] - origin)) &&
           pool_->ContainsOrPending({owner_, cache::CacheKind::kSourceRaw, linear}));
      if (!cheap) return false;
      size_t d = nd - 1;
      while (d >= 1 && ++grid[d] == m.GridSize(d)) grid[d--] = 0;
      if (d == 0) break;
    }
  }
  return true;
}

Result<DenseBlock> ZarrArray::ReadRows(uint64_t r0, uint64_t r1) const {
  return ReadRows(r0, r1, 0, meta_.shape.size() > 1 ? meta_.shape[1] : 1);
}

Result<DenseBlock> ZarrArray::ReadRows(uint64_t r0, uint64_t r1, uint64_t c0, uint64_t c1) const {
  const auto& m = meta_;
  const size_t nd = m.shape.size();
  if (r0 > r1 || r1 > m.shape[0])
    return InternalError("array " + path_ + ": rows beyond the shape");
  const bool all_columns = nd < 2 || (c0 == 0 && c1 == m.shape[1]);
  if (nd >= 2 && (c0 > c1 || c1 > m.shape[1]))
    return InternalError("array " + path_ + ": columns beyond the shape");
  DenseBlock out;
  out.dtype = m.dtype;
  out.elem_size = m.native_size;
  out.rows = r1 - r0;
  std::vector<uint64_t> out_dims = m.shape;  // the block's shape
  out_dims[0] = out.rows;
  if (nd >= 2) out_dims[1] = c1 - c0;
  for (size_t d = 1; d < nd; ++d) out.row_elems *= out_dims[d];
  const bool str = IsString(m.dtype);
  const uint64_t total = out.rows * out.row_elems;
  if (total == 0) return out;
  const uint64_t g0_first = r0 / m.chunks[0], g0_last = (r1 - 1) / m.chunks[0];
  bool one_chunk = !str && all_columns && g0_first == g0_last;
  for (size_t d = 1; d < nd; ++d) one_chunk = one_chunk && m.GridSize(d) == 1;
  std::optional<ChunkRowsView> first_rows;
  if (one_chunk) {  // rows of one chunk, which holds whole rows: point into it (no copy)
    std::vector<uint64_t> grid(nd, 0);
    grid[0] = g0_first;
    const uint64_t origin = g0_first * m.chunks[0];
    ASSIGN_OR_RETURN(first_rows, ChunkRows(grid, r0 - origin, r1 - origin));
    if (std::equal(first_rows->dims.begin() + 1, first_rows->dims.end(), out_dims.begin() + 1)) {
      out.owner = std::move(first_rows->keep);
      out.at = first_rows->at;
      return out;
    }  // else blocks of an edge chunk, stored wider than the array: copied below
  }
  char* to = nullptr;
  if (str)
    out.strings.resize(total);
  else
    to = out.Allocate(total * m.native_size);

  const std::vector<uint64_t> out_stride = Strides(out_dims);
  // Chunks along dimension 1 that hold columns [c0, c1) (all chunks of the other dimensions).
  const uint64_t g1_first = nd >= 2 ? c0 / m.chunks[1] : 0,
                 g1_last = nd >= 2 ? (c1 - 1) / m.chunks[1] : 0;
  std::vector<uint64_t> grid(nd, 0);
  for (uint64_t g0 = g0_first; g0 <= g0_last; ++g0) {
    grid.assign(nd, 0);
    grid[0] = g0;
    if (nd >= 2) grid[1] = g1_first;
    for (;;) {  // every chunk of the other dimensions
      // The rows [r0, r1) (and columns [c0, c1)) of this chunk (cropped to the array), placed at
      // its origin in the output.
      std::vector<uint64_t> box(nd);
      for (size_t d = 0; d < nd; ++d)
        box[d] = std::min(m.chunks[d], m.shape[d] - grid[d] * m.chunks[d]);
      const uint64_t origin0 = grid[0] * m.chunks[0];
      const uint64_t row_lo = std::max(r0, origin0), row_hi = std::min(r1, origin0 + box[0]);
      box[0] = row_hi - row_lo;
      uint64_t src0 = 0;
      uint64_t dst0 = (row_lo - r0) * out_stride[0];
      std::vector<uint64_t> chunk_stride;
      if (nd >= 2) {
        const uint64_t origin1 = grid[1] * m.chunks[1];
        const uint64_t col_lo = std::max(c0, origin1), col_hi = std::min(c1, origin1 + box[1]);
        box[1] = col_hi - col_lo;
        src0 = col_lo - origin1;  // times the stride of dimension 1, below
        dst0 += (col_lo - c0) * out_stride[1];
      }
      for (size_t d = 2; d < nd; ++d) dst0 += grid[d] * m.chunks[d] * out_stride[d];
      if (str) {
        ASSIGN_OR_RETURN(std::shared_ptr<const DecodedChunk> chunk, Chunk(grid));
        chunk_stride = Strides(chunk->shape);
        src0 = (row_lo - origin0) * chunk_stride[0] + (nd >= 2 ? src0 * chunk_stride[1] : 0);
        CopyBox(box, chunk_stride, src0, out_stride, dst0,
                RunCopier(*chunk, nullptr, &out.strings, m.native_size, str));
      } else {
        ChunkRowsView rows;
        if (first_rows) {
          rows = std::move(*first_rows);
          first_rows.reset();
        } else {
          ASSIGN_OR_RETURN(rows, ChunkRows(grid, row_lo - origin0, row_hi - origin0));
        }
        chunk_stride = Strides(rows.dims);
        if (nd >= 2) src0 *= chunk_stride[1];
        const size_t size = m.native_size;
        const char* from = rows.at;
        CopyBox(box, chunk_stride, src0, out_stride, dst0,
                [to, from, size](uint64_t src, uint64_t dst, uint64_t n) {
                  std::memcpy(to + dst * size, from + src * size, n * size);
                });
      }
      // Next chunk over dims 1..nd-1 (dimension 1 within [g1_first, g1_last]).
      size_t d = nd - 1;
      while (d >= 1) {
        const uint64_t last = d == 1 ? g1_last : m.GridSize(d) - 1;
        if (++grid[d] <= last) break;
        grid[d] = d == 1 ? g1_first : 0;
        --d;
      }
      if (d == 0) break;
    }
  }
  return out;
}

}  // namespace omicsfs::formats::zarr
