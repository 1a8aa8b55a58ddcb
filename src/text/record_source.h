// A RecordSource describes one output text file as N chunks (a header, when there is one, is
// chunk 0). RenderChunk(k) appends the exact bytes of chunk k: deterministic (no locale, clock or
// thread dependence), const and thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "util/status.h"

namespace omicsfs::text {

class RecordSource {
 public:
  virtual ~RecordSource() = default;
  virtual uint64_t ChunkCount() const = 0;
  virtual Status RenderChunk(uint64_t k, std::string* out) const = 0;
  // One-time work before sizing (e.g. building a transposed copy); called once, before any
  // ChunkLength/RenderChunk, by the sizing pass.
  virtual Status Prepare() const { return OkStatus(); }
  // A chunk's exact length computed without rendering it, by sources that can do that cheaper
  // (dense views: arithmetic on row lengths; datg: digit counts); nullopt: the sizing pass renders
  // the chunk. Errors are the chunk's errors.
  virtual Result<std::optional<uint64_t>> MeasureChunk(uint64_t k) const { return std::optional<uint64_t>(); }
  // For messages: "matrix.mtx of /data/counts".
  virtual std::string Describe() const = 0;
};

// A fixed text (e.g. ERROR.txt): one chunk.
class StaticTextSource : public RecordSource {
 public:
  StaticTextSource(std::string text, std::string describe)
      : text_(std::move(text)), describe_(std::move(describe)) {}
  uint64_t ChunkCount() const override { return 1; }
  Status RenderChunk(uint64_t, std::string* out) const override {
    out->append(text_);
    return OkStatus();
  }
  std::string Describe() const override { return describe_; }

 private:
  std::string text_;
  std::string describe_;
};

}  // namespace omicsfs::text
