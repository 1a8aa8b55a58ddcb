// The uncompressed bytes of a coordinate view's tabix/CSI index as one chunk: loaded from
// index_dir when persisted there for this store (same fingerprint), else built in one pass over
// the view's record spans (chunks in parallel, records pushed in order) and saved. Served
// through a BgzfDeflatedView as `X.gz.tbi` / `X.gz.csi` beside the BGZF twin `X.gz`.
#pragma once

#include <memory>
#include <string>

#include "text/index_store.h"
#include "text/record_source.h"
#include "text/tabix_index.h"
#include "text/virtual_file.h"

namespace omicsfs::text {

class TabixIndexSource : public RecordSource {
 public:
  struct Options {
    TabixPreset preset = TabixPreset::kVcf;
    bool csi = false;
    const IndexStore* store = nullptr;  // persistence (optional)
    std::string key;                    // store fingerprint + view; empty = not persisted
    unsigned threads = 0;               // 0: hardware concurrency
  };
  TabixIndexSource(std::shared_ptr<const VirtualTextFile> plain, Options options, std::string name);

  uint64_t ChunkCount() const override { return 1; }
  Status RenderChunk(uint64_t k, std::string* out) const override;
  std::string Describe() const override { return name_; }

 private:
  Result<std::string> Build() const;
  Result<int64_t> MaxVcfContigLength() const;

  std::shared_ptr<const VirtualTextFile> plain_;
  Options options_;
  std::string name_;
};

}  // namespace omicsfs::text
