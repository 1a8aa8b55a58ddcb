// Coverage tracks of a fragments view: coverage.bedgraph (fragment pile-up, what `bedtools
// genomecov -bg` writes for the view's BED lines), insertions.bedgraph (Tn5 cut sites: each
// fragment's `start` and `end − 1`, as BPCells, ArchR and Signac count them) and their bigWig
// twins (text/bigwig_writer.h, with zoom levels), raw or scaled to counts per million lines.
//
// The four files of a folder come from one pile-up of the view's record spans (its BED form's
// [start, end)), built by the view's sizing pass when that runs (a TrackSet is a SpanConsumer
// of fragments.bed), else by a pass of its own over the spans (a group's, read from its
// regrouped fragments; a view sized from index_dir). A file's bytes, once rendered, are kept in
// index_dir like a region index: a bigWig's compressed size is known only once it is built.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache_pool.h"
#include "text/byte_view.h"
#include "text/index_store.h"
#include "text/record_source.h"
#include "text/virtual_file.h"

namespace omicsfs::text {

// Runs of equal depth (zero depth not kept), per contig of a view, in text order.
struct TrackRun {
  uint32_t begin = 0, end = 0, depth = 0;
  bool operator==(const TrackRun&) const = default;
};
struct PiledContig {
  std::vector<TrackRun> coverage, insertions;
  uint64_t max_end = 0;  // the largest end of the contig's fragments (0: none)
};
struct Piles {
  std::vector<PiledContig> contigs;  // as TrackSet's contig names
  uint64_t lines = 0;                // the view's lines (zero-length fragments included)
};

// The pile-up of spans fed in text order: within a contig, starts never decrease (a BED view
// of fragments). A zero-length fragment ([s, s)) covers nothing and has no cut sites.
class Piler {
 public:
  explicit Piler(const std::vector<std::string>* contigs);
  ~Piler();
  Status Add(const ChunkSpans& spans);
  // The piles; Add no more after it.
  Result<Piles> Finish();

 private:
  struct Sweep;  // one track's pile-up of the current contig
  Status Switch(const std::string& contig);
  void Close();

  const std::vector<std::string>* names_;
  Piles piles_;
  std::unique_ptr<Sweep> coverage_, insertions_;
  int64_t current_ = -1;  // the contig being piled
  std::vector<bool> seen_;
  uint32_t last_start_ = 0;
};

enum class TrackFile { kCoverageBedGraph, kInsertionsBedGraph, kCoverageBigWig, kInsertionsBigWig };

// The four (or, scaled, four more) files of one folder, from one pile-up.
class TrackSet : public SpanConsumer, public std::enable_shared_from_this<TrackSet> {
 public:
  struct Options {
    const IndexStore* store = nullptr;  // persistence (optional)
    std::string key;                    // the folder's persisted-index key; empty = not persisted
    unsigned threads = 0;               // the own pass's (0: hardware concurrency)
    // A SpanConsumer of `bed`: its sizing pass, when it runs, piles the tracks (else `bed` is
    // never sized for them: its text would be rendered for nothing).
    bool fed = false;
  };
  // `bed`: the folder's BED view (its record spans are [start, end) of the stored fragments);
  // `contigs`: the store's chromosomes, in view order (every one is in a bigWig's header).
  TrackSet(std::shared_ptr<const VirtualTextFile> bed, std::vector<std::string> contigs,
           Options options, std::string where);

  std::unique_ptr<SpanBuilder> StartPass() const override;
  // A file's bytes; `cpm`: its values × 10^6 / lines, as float32.
  Result<cache::Buffer> Bytes(TrackFile file, bool cpm) const;
  // A file's size: a bedGraph's counted from the piles (no text rendered: `ls -l` of a folder
  // renders none), a bigWig's once built.
  Result<uint64_t> Size(TrackFile file, bool cpm) const;
  bool Known(TrackFile file, bool cpm) const;
  static const char* Name(TrackFile file);
  std::string Describe(TrackFile file, bool cpm) const;

 private:
  class PassBuilder;
  Result<std::shared_ptr<const Piles>> EnsurePiles() const;
  Result<Piles> OwnPass() const;
  void KeepPiles(Piles piles) const;
  Result<std::string> Render(const Piles& piles, TrackFile file, bool cpm) const;
  Result<std::string> BigWig(const Piles& piles, bool insertions, bool cpm) const;
  std::string KeyOf(TrackFile file, bool cpm) const;

  std::shared_ptr<const VirtualTextFile> bed_;
  std::vector<std::string> contigs_;
  Options options_;
  std::string where_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<const Piles> piles_;  // by a pass (under mu_)
  mutable cache::Buffer files_[8];              // rendered (under mu_)
  mutable std::optional<uint64_t> sizes_[8];    // counted or rendered (under mu_)
  mutable std::mutex build_mu_;                 // one own pass or render at a time
};

// One file of a TrackSet as a byte view.
class TrackView : public ByteView {
 public:
  TrackView(std::shared_ptr<const TrackSet> set, TrackFile file, bool cpm)
      : set_(std::move(set)), file_(file), cpm_(cpm) {}
  Result<uint64_t> Size() const override;
  bool SizeKnown() const override { return set_->Known(file_, cpm_); }
  Result<std::vector<Piece>> Read(uint64_t offset, uint64_t length) const override;
  std::string Describe() const override { return set_->Describe(file_, cpm_); }

 private:
  std::shared_ptr<const TrackSet> set_;
  TrackFile file_;
  bool cpm_;
};

// A bedGraph value of a scaled track: the float32 nearest to depth × 10^6 / lines (in double).
float CpmValue(uint32_t depth, uint64_t lines);

}  // namespace omicsfs::text
