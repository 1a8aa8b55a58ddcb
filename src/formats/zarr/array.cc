#include "formats/zarr/array.h"

#include <algorithm>
#include <cstring>

#include "codec/vlen_utf8.h"

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
      for (uint64_t i = 0; i < n; ++i) std::memcpy(out.bytes.data() + i * meta.native_size, meta.fill.data(), meta.native_size);
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
    return CorruptError("decoded " + std::to_string(bytes.size()) + " bytes, a chunk holds " + std::to_string(n * meta.item_size));
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
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000)) return CorruptError("invalid UTF-32 code point");
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
    for (char& c : bytes) {
      if (c != 0 && c != 1) return CorruptError("bool value other than 0/1");
    }
  }
  out.bytes = std::move(bytes);
  return out;
}

Result<ZarrArray> ZarrArray::Open(std::shared_ptr<const io::BlobStore> store, const std::string& path) {
  ASSIGN_OR_RETURN(auto v3, store->Get(path + "/zarr.json"));
  if (v3) {
    auto meta = ParseV3Metadata(*v3);
    if (!meta.ok()) return std::move(meta).status().WithContext("array " + path);
    return FromMetadata(std::move(store), path, std::move(meta).value());
  }
  ASSIGN_OR_RETURN(auto zarray, store->Get(path + "/.zarray"));
  if (!zarray) return NotFoundError("array " + path + ": no .zarray or zarr.json");
  ASSIGN_OR_RETURN(auto zattrs, store->Get(path + "/.zattrs"));
  auto meta = ParseV2Metadata(*zarray, zattrs ? *zattrs : "");
  if (!meta.ok()) return std::move(meta).status().WithContext("array " + path);
  return FromMetadata(std::move(store), path, std::move(meta).value());
}

ZarrArray ZarrArray::FromMetadata(std::shared_ptr<const io::BlobStore> store, const std::string& path, ArrayMetadata meta) {
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

// The part of a full decoded chunk inside the array: edge chunks are stored at full size (a
// 10 000-sample chunk of a 500-sample cohort is 95 % padding), so crop before keeping them.
DecodedChunk Crop(const ArrayMetadata& m, const std::vector<uint64_t>& grid, DecodedChunk full) {
  const size_t nd = m.shape.size();
  std::vector<uint64_t> extent(nd);
  bool edge = false;
  for (size_t d = 0; d < nd; ++d) {
    extent[d] = std::min(m.chunks[d], m.shape[d] - grid[d] * m.chunks[d]);
    edge = edge || extent[d] != m.chunks[d];
  }
  full.shape = m.chunks;
  if (!edge || nd == 0) return full;
  const bool str = IsString(m.dtype);
  uint64_t total = 1;
  for (uint64_t e : extent) total *= e;
  DecodedChunk out;
  out.shape = extent;
  if (str) out.strings.resize(total); else out.bytes.resize(total * m.native_size);
  if (total == 0) return out;
  // Odometer over dims 0..nd-2; runs of extent[nd-1] elements.
  std::vector<uint64_t> src_stride(nd, 1), dst_stride(nd, 1), idx(nd, 0);
  for (size_t d = nd - 1; d > 0; --d) {
    src_stride[d - 1] = src_stride[d] * m.chunks[d];
    dst_stride[d - 1] = dst_stride[d] * extent[d];
  }
  const uint64_t run = extent[nd - 1];
  for (;;) {
    uint64_t src = 0, dst = 0;
    for (size_t d = 0; d + 1 < nd; ++d) {
      src += idx[d] * src_stride[d];
      dst += idx[d] * dst_stride[d];
    }
    if (str) {
      for (uint64_t k = 0; k < run; ++k) out.strings[dst + k] = std::move(full.strings[src + k]);
    } else {
      std::memcpy(out.bytes.data() + dst * m.native_size, full.bytes.data() + src * m.native_size, run * m.native_size);
    }
    size_t d = nd - 1;
    while (d > 0) {
      --d;
      if (++idx[d] < extent[d]) break;
      idx[d] = 0;
      if (d == 0) return out;
    }
    if (nd == 1) return out;
  }
}

}  // namespace

Result<std::shared_ptr<const DecodedChunk>> ZarrArray::Chunk(const std::vector<uint64_t>& grid) const {
  auto decode = [&]() -> Result<DecodedChunk> {
    auto raw = store_->Get(path_ + "/" + meta_.ChunkKey(grid));
    if (!raw.ok()) return std::move(raw).status().WithContext("array " + path_ + " chunk " + meta_.ChunkKey(grid));
    auto chunk = DecodeChunk(meta_, *raw);
    if (!chunk.ok()) return std::move(chunk).status().WithContext(store_->Describe() + ": array " + path_ + " chunk " + meta_.ChunkKey(grid));
    return Crop(meta_, grid, std::move(chunk).value());
  };
  if (pool_ == nullptr) {
    ASSIGN_OR_RETURN(DecodedChunk c, decode());
    return std::make_shared<const DecodedChunk>(std::move(c));
  }
  uint64_t linear = 0;
  for (size_t d = 0; d < grid.size(); ++d) linear = linear * meta_.GridSize(d) + grid[d];
  return pool_->GetOrComputeAs<DecodedChunk>({owner_, cache::CacheKind::kSourceBlock, linear}, [&]() -> Result<cache::Sized> {
    ASSIGN_OR_RETURN(DecodedChunk c, decode());
    uint64_t bytes = c.bytes.size() + sizeof(DecodedChunk);
    for (const auto& str : c.strings) bytes += sizeof(std::string) + (str.size() > 15 ? str.size() : 0);
    return cache::Sized{std::make_shared<const DecodedChunk>(std::move(c)), bytes};
  });
}

Result<DenseBlock> ZarrArray::ReadRows(uint64_t r0, uint64_t r1) const {
  const auto& m = meta_;
  const size_t nd = m.shape.size();
  if (r0 > r1 || r1 > m.shape[0]) return InternalError("array " + path_ + ": rows beyond the shape");
  DenseBlock out;
  out.dtype = m.dtype;
  out.elem_size = m.native_size;
  out.rows = r1 - r0;
  for (size_t d = 1; d < nd; ++d) out.row_elems *= m.shape[d];
  const bool str = IsString(m.dtype);
  const uint64_t total = out.rows * out.row_elems;
  if (str) out.strings.resize(total); else out.bytes.resize(total * m.native_size);
  if (total == 0) return out;

  // Row strides of the output (over dims 1..nd-1) and of a chunk (over all dims).
  std::vector<uint64_t> out_stride(nd, 1), chunk_stride(nd, 1);
  for (size_t d = nd - 1; d > 0; --d) {
    out_stride[d - 1] = out_stride[d] * m.shape[d];
    chunk_stride[d - 1] = chunk_stride[d] * m.chunks[d];
  }
  // Arrays of rank ≥ 3 whose trailing dimensions (ploidy, alleles, …) fit in one chunk (cropped
  // to the shape): everything a row holds inside a chunk is contiguous in chunk and output.
  bool inner_whole = nd >= 3;
  for (size_t d = 2; d < nd; ++d) inner_whole = inner_whole && m.chunks[d] >= m.shape[d];
  std::vector<uint64_t> grid(nd, 0);
  const uint64_t g0_first = r0 / m.chunks[0], g0_last = (r1 - 1) / m.chunks[0];
  for (uint64_t g0 = g0_first; g0 <= g0_last; ++g0) {
    grid.assign(nd, 0);
    grid[0] = g0;
    for (;;) {  // every chunk of the other dimensions
      ASSIGN_OR_RETURN(std::shared_ptr<const DecodedChunk> chunk, Chunk(grid));
      for (size_t d = nd - 1; d > 0; --d) chunk_stride[d - 1] = chunk_stride[d] * chunk->shape[d];
      // Extent of this chunk inside the array (edge chunks are cropped).
      std::vector<uint64_t> origin(nd), extent(nd);
      for (size_t d = 0; d < nd; ++d) {
        origin[d] = grid[d] * m.chunks[d];
        extent[d] = std::min(m.chunks[d], m.shape[d] - origin[d]);
      }
      const uint64_t row_lo = std::max(r0, origin[0]), row_hi = std::min(r1, origin[0] + extent[0]);
      if (inner_whole) {  // dims 2.. are whole in every chunk: one copy per row (e.g. GT, AD)
        const uint64_t run = extent[1] * out_stride[1];
        for (uint64_t row = row_lo; row < row_hi; ++row) {
          const uint64_t src = (row - origin[0]) * chunk_stride[0];
          const uint64_t dst = (row - r0) * out_stride[0] + origin[1] * out_stride[1];
          if (str) {
            std::copy_n(chunk->strings.begin() + src, run, out.strings.begin() + dst);
          } else {
            std::memcpy(out.bytes.data() + dst * m.native_size, chunk->bytes.data() + src * m.native_size, run * m.native_size);
          }
        }
      }
      std::vector<uint64_t> idx(nd, 0);  // position inside the chunk over dims 1..nd-2
      for (uint64_t row = inner_whole ? row_hi : row_lo; row < row_hi; ++row) {
        std::fill(idx.begin(), idx.end(), 0);
        for (;;) {
          uint64_t src = (row - origin[0]) * chunk_stride[0];
          uint64_t dst = (row - r0) * out_stride[0];
          for (size_t d = 1; d + 1 < nd; ++d) {
            src += idx[d] * chunk_stride[d];
            dst += (origin[d] + idx[d]) * out_stride[d];
          }
          const uint64_t run = nd > 1 ? extent[nd - 1] : 1;
          if (nd > 1) dst += origin[nd - 1];
          if (str) {
            for (uint64_t k = 0; k < run; ++k) out.strings[dst + k] = chunk->strings[src + k];
          } else {
            std::memcpy(out.bytes.data() + dst * m.native_size, chunk->bytes.data() + src * m.native_size, run * m.native_size);
          }
          // Advance the odometer over dims 1..nd-2.
          size_t d = nd >= 2 ? nd - 2 : 0;
          while (d >= 1) {
            if (++idx[d] < extent[d]) break;
            idx[d] = 0;
            --d;
          }
          if (d == 0) break;
        }
      }
      // Next chunk over dims 1..nd-1.
      size_t d = nd - 1;
      while (d >= 1) {
        if (++grid[d] < m.GridSize(d)) break;
        grid[d] = 0;
        --d;
      }
      if (d == 0) break;
    }
  }
  return out;
}

}  // namespace omicsfs::formats::zarr
