// Cache keys: (owner id, kind, index). Owner ids are handed out by the pool, one per virtual
// file or decoded source, at mount time.
#pragma once

#include <cstdint>
#include <functional>

namespace omicsfs::cache {

enum class CacheKind : uint32_t {
  kTextChunk = 1,    // rendered bytes of one virtual-file chunk
  kSourceBlock = 2,  // decoded bytes of a source block
  kMetadata = 3,     // small decoded metadata arrays
  kRemoteBlock = 4,  // one block of a remote object, as fetched (io/cached_byte_source.h)
  kSourceRaw = 5,    // a source block's stored (compressed) bytes, kept while parts are decoded
  kSourcePart = 6,   // decoded bytes of one part of a source block (a blosc block of a chunk)
};

struct CacheKey {
  uint64_t owner = 0;
  CacheKind kind = CacheKind::kTextChunk;
  uint64_t index = 0;
  bool operator==(const CacheKey&) const = default;
};

struct CacheKeyHash {
  size_t operator()(const CacheKey& k) const {
    uint64_t h = k.owner * 0x9E3779B97F4A7C15ull;
    h ^= (static_cast<uint64_t>(k.kind) << 56) ^ (k.index * 0xC2B2AE3D27D4EB4Full);
    h ^= h >> 31;
    return static_cast<size_t>(h);
  }
};

}  // namespace omicsfs::cache
