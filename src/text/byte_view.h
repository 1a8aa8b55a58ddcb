// The byte-view contract of text/: a file's exact size and positional reads that return pinned
// slices of immutable buffers. A rendered text view (VirtualTextFile) is one; a BGZF twin is a
// view over another view (text/bgzf_view.h). Implementations are const and thread-safe: reads
// arrive concurrently and in any order, so there is no per-reader position.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cache/cache_pool.h"
#include "util/status.h"

namespace omicsfs::text {

// `length` bytes at `offset` of `buffer`; the shared buffer keeps the bytes alive.
struct Piece {
  cache::Buffer buffer;
  size_t offset = 0;
  size_t length = 0;
};

class ByteView {
 public:
  virtual ~ByteView() = default;
  // Exact size; may run a one-time pass (a sizing pass, an index build).
  virtual Result<uint64_t> Size() const = 0;
  // True when Size() returns without work (listings never wait for a pass).
  virtual bool SizeKnown() const = 0;
  // Up to `length` bytes at `offset` (fewer only at the end).
  virtual Result<std::vector<Piece>> Read(uint64_t offset, uint64_t length) const = 0;
  // For messages: "sites.vcf.gz of /data/x.vcz".
  virtual std::string Describe() const = 0;
  // True for a binary file its readers take in large reads once (an HDF5 file's arrays): served
  // past the kernel's page cache (direct I/O), which would otherwise cost a fresh page per 4 KiB
  // on the first read and a copy; its chunks stay in the decode cache for a re-read.
  virtual bool ReadsPastPageCache() const { return false; }
};

}  // namespace omicsfs::text
