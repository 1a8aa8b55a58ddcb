// One Zarr array over a BlobStore: chunk keys, chunk decoding (absent chunk = fill; edge chunks
// are stored full size and cropped), and dense reads of row ranges (rows = dimension 0) across
// every chunk of the other dimensions.
#pragma once

#include <array>
#include <cstddef>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache_pool.h"
#include "formats/zarr/metadata.h"
#include "io/blob_store.h"

namespace omicsfs::formats::zarr {

// Rows [r0, r1) of an array, C order, native little-endian numbers or UTF-8 strings.
struct DecodedChunk;

struct DenseBlock {
  DType dtype = DType::kInt8;
  size_t elem_size = 0;  // bytes per numeric element (0 for strings)
  uint64_t rows = 0;
  uint64_t row_elems = 1;            // product of the dimensions after the first
  std::vector<std::string> strings;  // string types
  // Numbers: rows that lie inside one decoded chunk (or one decoded blosc block of it) spanning
  // every other dimension are not copied: the block points into it (`owner`, kept alive here);
  // other rows are gathered into a buffer of the block's own (Allocate).
  std::shared_ptr<const void> owner;
  const char* at = nullptr;

  const char* raw() const { return at; }
  // The numbers' bytes (empty for strings).
  std::string_view bytes() const { return {at, at ? rows * row_elems * elem_size : 0}; }
  // `n` bytes of the block's own, not zero-filled: the caller writes every one (a zero fill of
  // the rows gathered across samples-chunks cost ~4 % of a VCF view's read). Aligned for any
  // dtype; returns where to write them.
  char* Allocate(size_t n) {
    auto buffer = std::make_shared_for_overwrite<std::max_align_t[]>(
        (n + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t));
    at = reinterpret_cast<char*>(buffer.get());
    owner = std::move(buffer);
    return const_cast<char*>(at);
  }
  template <typename T>
  const T* data() const {
    return reinterpret_cast<const T*>(raw());
  }
};

// The integer at element i of a block of any integer (or bool) dtype.
inline int64_t IntAt(const DenseBlock& b, uint64_t i) {
  const char* p = b.raw() + i * b.elem_size;
  switch (b.dtype) {
    case DType::kBool:
    case DType::kUInt8:
      return static_cast<uint8_t>(*p);
    case DType::kInt8:
      return static_cast<int8_t>(*p);
    case DType::kInt16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case DType::kUInt16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case DType::kInt32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::kUInt32: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

// A decoded chunk, the unit the decode cache can hold. DecodeChunk gives the full chunk shape;
// ZarrArray crops edge chunks to the part inside the array (`shape`, empty = the full chunk).
struct DecodedChunk {
  std::string bytes;
  std::vector<std::string> strings;
  std::vector<uint64_t> shape;
};

// Pure function of (metadata, optional bytes): absent bytes give the fill value.
Result<DecodedChunk> DecodeChunk(const ArrayMetadata& meta, const std::optional<std::string>& raw);

class ZarrArray {
 public:
  // `path` is the array's key prefix in the store ("call_DP"); metadata is read from it.
  static Result<ZarrArray> Open(std::shared_ptr<const io::BlobStore> store,
                                const std::string& path);
  static ZarrArray FromMetadata(std::shared_ptr<const io::BlobStore> store, const std::string& path,
                                ArrayMetadata meta);
  // The objects an array is opened from, under its path: v3's zarr.json, else v2's .zarray and
  // .zattrs (Open reads them in that order; a caller opening many arrays of a remote store
  // fetches all of theirs at once).
  static constexpr const char* kMetadataKeys[3] = {"zarr.json", ".zarray", ".zattrs"};
  using MetadataObjects = std::array<Result<std::optional<std::string>>, 3>;
  // Open from those objects as fetched (absent: nullopt; an error of one not needed is ignored).
  static Result<ZarrArray> FromMetadataObjects(std::shared_ptr<const io::BlobStore> store,
                                               const std::string& path, MetadataObjects got);

  const ArrayMetadata& meta() const { return meta_; }
  const std::string& path() const { return path_; }
  uint64_t rows() const { return meta_.shape[0]; }

  Result<DenseBlock> ReadRows(uint64_t r0, uint64_t r1) const;
  Result<DenseBlock> ReadAll() const { return ReadRows(0, rows()); }
  // Rows [r0, r1) of columns [c0, c1) along dimension 1 (all of the later dimensions): only the
  // chunks holding those columns are read. The block's row_elems counts the chosen columns.
  Result<DenseBlock> ReadRows(uint64_t r0, uint64_t r1, uint64_t c0, uint64_t c1) const;

  // Keeps decoded chunks in the daemon's decode cache (neighbouring record ranges share them).
  void UseCache(cache::CachePool* pool);

  // Whether the decode cache holds (or is computing) every chunk ReadRows(r0, r1) needs, or, for
  // a read of a few rows, the stored bytes whose blocks it decodes; false without a cache.
  // Callers read a record range's arrays on several cores when it does not.
  bool Cached(uint64_t r0, uint64_t r1) const;

 private:
  // A chunk's stored bytes and their blosc layout (no bytes: the chunk is absent, all fill).
  struct RawChunk;
  // Rows of one chunk, C order: `at` is the first asked for, in a layout of shape `dims` (the
  // cropped chunk's, or the stored chunk's when they come from its blosc blocks; dims[0] unused).
  struct ChunkRowsView {
    std::shared_ptr<const void> keep;
    const char* at = nullptr;
    std::vector<uint64_t> dims;
  };
  // Bits of a part's cache index that number the blosc block within its chunk.
  static constexpr int kBlockBits = 24;

  Result<std::shared_ptr<const DecodedChunk>> Chunk(const std::vector<uint64_t>& grid) const;
  // Rows [lo, hi) (chunk-local) of a numeric chunk: from the decoded chunk, or, for a read of
  // fewer rows than the chunk holds while the chunk is not decoded, from its blosc blocks alone
  // (each decoded once and kept in the cache): a region query, `head` or `tail` of a view costs
  // the blocks of its records, not whole chunks of every array.
  Result<ChunkRowsView> ChunkRows(const std::vector<uint64_t>& grid, uint64_t lo,
                                  uint64_t hi) const;
  // Whether a read of `rows` rows of chunk `linear` (of `extent0` rows) may decode its blosc
  // blocks alone (it does when the chunk is not decoded whole already).
  bool PartsFit(uint64_t linear, uint64_t rows, uint64_t extent0) const;
  // A pass or a sequential run decodes chunks whole up to this share of the cache's budget.
  static constexpr uint64_t kWholeChunkShare = 16;
  Result<std::shared_ptr<const RawChunk>> Raw(const std::vector<uint64_t>& grid,
                                              uint64_t linear) const;
  // Compressed bytes of a chunk read by parts, [at, at + bytes.size()) of the stored chunk.
  struct PackedSpan {
    uint64_t at = 0;
    std::string bytes;
  };
  // Block b decoded (cached), its compressed bytes taken from `span` when it holds them.
  Result<cache::Buffer> Block(const std::vector<uint64_t>& grid, uint64_t linear,
                              const RawChunk& raw, uint64_t b, const PackedSpan& span) const;
  std::string Where(const std::vector<uint64_t>& grid) const;      // store: array A chunk K
  std::string ChunkName(const std::vector<uint64_t>& grid) const;  // array A chunk K
  uint64_t Linear(const std::vector<uint64_t>& grid) const;

  std::shared_ptr<const io::BlobStore> store_;
  std::string path_;
  ArrayMetadata meta_;
  cache::CachePool* pool_ = nullptr;
  uint64_t owner_ = 0;
};

}  // namespace omicsfs::formats::zarr
