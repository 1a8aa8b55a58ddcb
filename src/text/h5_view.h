// Binary views that are HDF5 files (matrix.h5ad, 10x.h5): the metadata image of a plan
// (io/h5_image.h: groups, attributes, names written whole), and for each external dataset's
// extent the bytes a renderer makes from the store, chunk by chunk (little-endian). Zeros fill
// the rest. The size is the image's: known from the plan, with no pass over the data.
//
// The image is made once per store and view: on first use (a stat or a read) the plan is made
// (names in memory), its key (the view's persisted key + the plan's hash) looked up in index_dir
// and, when absent, the image built with libhdf5 and saved there; every later mount, and every
// node sharing index_dir, serves the saved image. Any change of the plan (a code change, a new
// attribute) is a new key, so an image never serves another plan.
//
// To serve an HDF5 file:
//   1. describe it as an io::h5::H5Plan (groups, attributes, inline datasets; the large arrays
//      AddExternal(path, type, length));
//   2. implement H5ArrayRenderer for the external datasets (in the order the plan adds them):
//      CachingH5Renderer caches what Render appends in the decode cache; a renderer whose
//      datasets share a decode (a matrix's indices and values) implements Chunk itself;
//   3. make the view: vfs::ViewSink::MakeH5File(name, plan function, renderer), and AddView it.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache_pool.h"
#include "io/h5_image.h"
#include "text/byte_view.h"
#include "text/virtual_file.h"

namespace omicsfs::text {

// The bytes of a view's external datasets. `d` numbers them in the order the plan adds them.
class H5ArrayRenderer {
 public:
  virtual ~H5ArrayRenderer() = default;
  // Elements per chunk of dataset d (≥ 1): reads ask for whole chunks.
  virtual uint64_t ChunkElements(size_t d) const = 0;
  // Chunk k of dataset d: the little-endian bytes of its elements [k·E, min((k+1)·E, length)),
  // E = ChunkElements(d). Deterministic, const, thread-safe; an error fails the read (EIO).
  virtual Result<cache::Buffer> Chunk(size_t d, uint64_t k) const = 0;
  // Read-ahead: makes chunk k of dataset d ready in the background's thread; best effort.
  virtual void Warm(size_t d, uint64_t k) const { (void)Chunk(d, k); }
};

// A renderer whose chunks are what Render appends, kept in the decode cache (one owner id per
// renderer; the key's index is d · 2^48 + k).
class CachingH5Renderer : public H5ArrayRenderer {
 public:
  explicit CachingH5Renderer(cache::CachePool* pool) : pool_(pool), owner_(pool->NewOwnerId()) {}
  Result<cache::Buffer> Chunk(size_t d, uint64_t k) const override;
  void Warm(size_t d, uint64_t k) const override;

 protected:
  // Appends the little-endian bytes of elements [e0, e1) of dataset d (one chunk) to `out`.
  virtual Status Render(size_t d, uint64_t e0, uint64_t e1, std::string* out) const = 0;

 private:
  cache::CacheKey Key(size_t d, uint64_t k) const {
    return {owner_, cache::CacheKind::kTextChunk, (uint64_t{d} << 48) | k};
  }
  cache::CachePool* pool_;
  uint64_t owner_;
};

class H5FileView : public ByteView, public std::enable_shared_from_this<H5FileView> {
 public:
  using PlanFn = std::function<Result<io::h5::H5Plan>()>;
  // `sizing`: index (index_dir; optional), index_key (the view's key, vfs::ViewSink::MakeH5File
  // sets it; empty: not persisted), prefetcher and readahead_bytes (read-ahead of the external
  // datasets for sequential readers; optional). `describe`: "matrix.h5ad of WHERE".
  H5FileView(PlanFn plan, std::shared_ptr<const H5ArrayRenderer> renderer, SizingOptions sizing,
             std::string describe);

  Result<uint64_t> Size() const override;
  bool SizeKnown() const override { return ready_.load(std::memory_order_acquire) != nullptr; }
  Result<std::vector<Piece>> Read(uint64_t offset, uint64_t length) const override;
  std::string Describe() const override { return describe_; }
  // anndata and h5py read each array whole, in one large read: past the page cache, its first
  // read costs no fresh page per 4 KiB (bench/h5ad).
  bool ReadsPastPageCache() const override { return true; }

  // Where external dataset d lies in the file (the image first; for tests and tools).
  Result<io::h5::H5Image::Extent> Extent(size_t d) const;
  // The key the image is persisted under ("" when not persisted; the image first).
  Result<std::string> PersistedKey() const;

 private:
  struct External {
    std::string path;
    uint64_t offset = 0, bytes = 0;
    uint64_t width = 0;        // bytes per element
    uint64_t chunk_bytes = 0;  // ChunkElements · width
  };
  struct Image {
    uint64_t size = 0;
    cache::Buffer serialized;  // the image as index_dir keeps it; segments are served from it
    std::vector<io::h5::H5Image::Located::At> segments;  // sorted, disjoint
    std::vector<External> externals;                     // in plan order
    std::vector<size_t> by_offset;                       // externals with bytes, sorted by offset
    std::string key;
  };

  Result<const Image*> EnsureImage() const;
  Result<std::unique_ptr<Image>> MakeImage() const;
  Status ReadExternal(const Image& im, size_t d, uint64_t pos, uint64_t end,
                      std::vector<Piece>* out, uint64_t* next) const;
  void ReadAhead(const Image& im, size_t d, uint64_t k) const;

  PlanFn plan_;
  std::shared_ptr<const H5ArrayRenderer> renderer_;
  SizingOptions sizing_;
  std::string describe_;
  mutable std::mutex mu_;
  mutable std::unique_ptr<const Image> image_;  // set once under mu_
  mutable std::atomic<const Image*> ready_{nullptr};
  mutable Status failed_;  // a lasting failure to make the image
  // Read-ahead: the last chunk read per external dataset, and how far ahead was queued.
  mutable std::mutex ahead_mu_;
  mutable std::vector<std::pair<uint64_t, uint64_t>> ahead_;  // (last chunk read, queued up to)
};

}  // namespace omicsfs::text
