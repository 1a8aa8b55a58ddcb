// BGZF twins of byte views.
// - BgzfStoredView: the bytes `bgzip -l 0 -c` writes for the inner view: every 65 280 bytes of
//   it one gzip member holding one deflate stored block, then the EOF block; or, with another
//   layout (codec/bgzf.h: kBedtoolsLayout), the same with a shorter first block. Offsets are
//   arithmetic (codec/bgzf.h), so the size is known as soon as the inner size is, and a read
//   passes the inner view's pieces through without copying; only block headers and trailers are
//   made here. A block's CRC32 needs its whole payload: it is computed once, when a read first
//   covers the block's trailer, and kept (8 bytes per 64 KiB block read).
// - BgzfDeflatedView: real deflate (libdeflate, level 1) for small derived files such as
//   indexes: the whole inner view is compressed on first use and kept in the decode cache.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cache/cache_pool.h"
#include "codec/bgzf.h"
#include "text/byte_view.h"

namespace omicsfs::text {

class BgzfStoredView : public ByteView {
 public:
  BgzfStoredView(std::shared_ptr<const ByteView> plain, std::string name,
                 codec::bgzf::StoredLayout layout = codec::bgzf::kBgzipLayout);
  Result<uint64_t> Size() const override;
  bool SizeKnown() const override { return plain_->SizeKnown(); }
  Result<std::vector<Piece>> Read(uint64_t offset, uint64_t length) const override;
  std::string Describe() const override { return describe_; }

 private:
  // The cached CRC of block b, or nullopt.
  std::optional<uint32_t> CachedCrc(uint64_t b) const;
  void KeepCrc(uint64_t b, uint32_t crc) const;

  std::shared_ptr<const ByteView> plain_;
  std::string describe_;
  codec::bgzf::StoredLayout layout_;
  static constexpr uint64_t kCrcPage = 4096;  // blocks per page of the CRC table
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<uint64_t[]>> crc_pages_;  // 0 = unknown, else 1<<32 | crc
};

class BgzfDeflatedView : public ByteView {
 public:
  BgzfDeflatedView(std::shared_ptr<const ByteView> plain, cache::CachePool* pool, std::string name);
  Result<uint64_t> Size() const override;
  bool SizeKnown() const override;
  Result<std::vector<Piece>> Read(uint64_t offset, uint64_t length) const override;
  std::string Describe() const override { return describe_; }

 private:
  Result<cache::Buffer> Compressed() const;

  std::shared_ptr<const ByteView> plain_;
  cache::CachePool* pool_;
  uint64_t owner_;
  std::string describe_;
  mutable std::mutex mu_;
  mutable std::optional<uint64_t> size_;  // once compressed (deterministic: same every time)
};

}  // namespace omicsfs::text
