// The uncompressed bytes of a coordinate view's tabix/CSI index as one chunk: loaded from
// index_dir when persisted there for this store (same fingerprint); else built by the view's own
// sizing pass when that pass runs (the source is a SpanConsumer of the view: one decode gives the
// sizes and every index); else built in a pass of its own over the view's record spans (chunks
// in parallel, records pushed in order). Saved once built. Served through a BgzfDeflatedView as
// `X.gz.tbi` / `X.gz.csi` beside the BGZF twin `X.gz`.
//
// When tabix refuses the view's records (TabixRefuses: an end before its begin, records out of
// order, a position the format cannot hold) the index cannot exist: that verdict, about these
// bytes alone, is kept (Refusal), told once (Options::on_refused) and saved in index_dir beside
// the indexes (RefusalKey), so that a later mount does not list the index at all. A failure to
// read the records (I/O, a damaged chunk) is no verdict: it is returned, never kept.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "text/index_store.h"
#include "text/record_source.h"
#include "text/tabix_index.h"
#include "text/virtual_file.h"

namespace omicsfs::text {

// Records pushed chunk by chunk, in text order, into a TabixIndexBuilder: the index of a view
// whose total length is known only at the end (each record's virtual offset is arithmetic on its
// end offset, except where it ends the text: the last record is held back until Finish).
class TabixPass {
 public:
  // `contigs` (kBcf): the header's, in order.
  TabixPass(TabixPreset preset, bool csi, int64_t max_ref_len,
            codec::bgzf::StoredLayout layout = codec::bgzf::kBgzipLayout,
            std::vector<std::string> contigs = {})
      : preset_(preset),
        csi_(csi),
        max_ref_len_(max_ref_len),
        layout_(layout),
        contigs_(std::move(contigs)) {}
  Status Add(uint64_t chunk_start, const ChunkSpans& spans);
  Result<std::string> Finish(uint64_t text_size);

 private:
  Status PushHeld(uint64_t text_size);  // the record held back, ending at or before text_size
  // Where htslib's bgzf_tell stands after reading up to text offset `pos` of a `text`-byte twin.
  uint64_t TellAfter(uint64_t pos, uint64_t text) const;

  TabixPreset preset_;
  bool csi_;
  int64_t max_ref_len_;
  codec::bgzf::StoredLayout layout_;
  std::vector<std::string> contigs_;
  std::unique_ptr<TabixIndexBuilder> builder_;
  std::optional<uint64_t> offset0_;  // where the first record starts, once known
  uint64_t meta_end_ = 0;            // past the header lines seen so far
  uint64_t records_ = 0;
  bool held_ = false;
  std::string held_contig_;
  bool held_same_contig_ = false;  // held_contig_ is the contig of the record pushed last
  int64_t held_begin_ = 0, held_end_ = 0;
  uint64_t held_end_offset_ = 0;
};

class TabixIndexSource : public RecordSource, public SpanConsumer {
 public:
  struct Options {
    TabixPreset preset = TabixPreset::kVcf;
    bool csi = false;
    const IndexStore* store = nullptr;  // persistence (optional)
    std::string key;                    // store fingerprint + view; empty = not persisted
    unsigned threads = 0;               // 0: hardware concurrency
    codec::bgzf::StoredLayout layout;   // the twin's blocks
    // Called once, when tabix is found to refuse the records (with why; on the thread of the pass
    // that found it, no lock of this source held).
    std::function<void(const Status&)> on_refused;
  };
  TabixIndexSource(std::shared_ptr<const VirtualTextFile> plain, Options options, std::string name);

  uint64_t ChunkCount() const override { return 1; }
  Status RenderChunk(uint64_t k, std::string* out) const override;
  std::string Describe() const override { return name_; }
  std::unique_ptr<SpanBuilder> StartPass() const override;

  // Why tabix refuses the records, once a pass found it (the index cannot exist); else nullopt.
  std::optional<Status> Refusal() const;
  // Whether a pass built the index or found that it cannot exist (in this process).
  bool Decided() const;
  // Why tabix refuses the records of the index `options` names, as index_dir keeps it from an
  // earlier pass (the refusal's message); nullopt when it keeps none (or is not to be read).
  static std::optional<std::string> PersistedRefusal(const Options& options);
  // Where index_dir keeps that verdict: the index's key and a line of its own.
  static std::string RefusalKey(const std::string& key) { return key + "\nrefused by tabix"; }

 private:
  class PassBuilder;
  Result<std::string> Build() const;
  // What sizes the index: a CSI of VCF records, the longest ##contig length; of a BCF, the
  // longest contig of its header, and the header's contigs (their order numbers them).
  struct Shape {
    int64_t max_ref_len = 0;
    std::vector<std::string> contigs;
  };
  Result<Shape> IndexShape() const;
  TabixPass NewPass(Shape shape) const;
  std::optional<std::string> Known() const;  // persisted, or built by the view's sizing pass
  void Keep(std::string index) const;
  // A pass's failure: kept, saved and told when it is tabix refusing the records; returned as is.
  Status Failed(Status st) const;

  std::shared_ptr<const VirtualTextFile> plain_;
  Options options_;
  std::string name_;
  mutable std::mutex mu_;
  mutable std::optional<std::string> built_;  // by a sizing pass (kept: small, and maybe unsaved)
  mutable std::optional<Status> refused_;     // the verdict that the index cannot exist
};

}  // namespace omicsfs::text
