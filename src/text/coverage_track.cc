#include "text/coverage_track.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <queue>
#include <thread>

#include "text/bigwig_writer.h"
#include "text/number_format.h"
#include "text/raw_text.h"
#include "text/spans_pass.h"
#include "util/log.h"

namespace omicsfs::text {

// One track's sweep over a contig: depth changes are applied in position order; those not due
// yet wait in a heap (an end; an insertion's site and its end), keyed (position << 1) | rises.
struct Piler::Sweep {
  std::vector<TrackRun>* out = nullptr;
  uint64_t pos = 0;
  int64_t depth = 0;
  std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<>> due;

  void Apply(uint64_t p, int d) {
    if (p > pos) {
      if (depth > 0) Emit(pos, p);
      pos = p;
    }
    depth += d;
  }
  // Runs of equal depth are one line (an end and a start at one position change nothing).
  void Emit(uint64_t b, uint64_t e) {
    const auto d = static_cast<uint32_t>(depth);
    if (!out->empty() && out->back().end == b && out->back().depth == d) {
      out->back().end = static_cast<uint32_t>(e);
    } else {
      out->push_back({static_cast<uint32_t>(b), static_cast<uint32_t>(e), d});
    }
  }
  void DrainTo(uint64_t limit) {
    while (!due.empty() && (due.top() >> 1) <= limit) {
      const uint64_t v = due.top();
      due.pop();
      Apply(v >> 1, (v & 1) ? 1 : -1);
    }
  }
  void Reset(std::vector<TrackRun>* to) {
    DrainTo(UINT64_MAX);
    out = to;
    pos = 0;
    depth = 0;
  }
};

Piler::Piler(const std::vector<std::string>* contigs)
    : names_(contigs),
      coverage_(std::make_unique<Sweep>()),
      insertions_(std::make_unique<Sweep>()),
      seen_(contigs->size(), false) {
  piles_.contigs.resize(contigs->size());
}

Piler::~Piler() = default;

Status Piler::Switch(const std::string& contig) {
  // Chromosomes come in view order: a handful per view, so a scan beats a map.
  size_t c = 0;
  while (c < names_->size() && (*names_)[c] != contig) ++c;
  if (c == names_->size()) return InternalError("contig '" + contig + "' is not the store's");
  if (static_cast<int64_t>(c) == current_) return OkStatus();
  if (seen_[c]) return CorruptError("fragments of " + contig + " out of order");
  Close();
  seen_[c] = true;
  current_ = static_cast<int64_t>(c);
  coverage_->Reset(&piles_.contigs[c].coverage);
  insertions_->Reset(&piles_.contigs[c].insertions);
  last_start_ = 0;
  return OkStatus();
}

void Piler::Close() {
  if (current_ < 0) return;
  coverage_->DrainTo(UINT64_MAX);
  insertions_->DrainTo(UINT64_MAX);
}

Status Piler::Add(const ChunkSpans& spans) {
  uint32_t last = UINT32_MAX;
  PiledContig* pc = nullptr;
  Sweep& cov = *coverage_;
  Sweep& ins = *insertions_;
  for (const RecordSpan& r : spans.records) {
    if (r.contig != last || pc == nullptr) {
      last = r.contig;
      RETURN_IF_ERROR(Switch(spans.contigs[r.contig]));
      pc = &piles_.contigs[current_];
    }
    ++piles_.lines;
    const auto s = static_cast<uint64_t>(r.begin), e = static_cast<uint64_t>(r.end);
    if (s < last_start_) {
      return CorruptError("fragments of " + spans.contigs[r.contig] + " out of order (start " +
                          std::to_string(s) + " after " + std::to_string(last_start_) + ")");
    }
    last_start_ = static_cast<uint32_t>(s);
    pc->max_end = std::max(pc->max_end, e);
    if (e <= s) continue;  // covers nothing, cuts nothing
    cov.DrainTo(s);
    cov.Apply(s, 1);
    cov.due.push(e << 1);
    ins.DrainTo(s);
    ins.Apply(s, 1);
    if (e - 1 == s) {
      ins.Apply(s, 1);
      ins.due.push((s + 1) << 1);
      ins.due.push((s + 1) << 1);
    } else {
      ins.due.push((s + 1) << 1);
      ins.due.push(((e - 1) << 1) | 1);
      ins.due.push(e << 1);
    }
  }
  return OkStatus();
}

Result<Piles> Piler::Finish() {
  Close();
  return std::move(piles_);
}

float CpmValue(uint32_t depth, uint64_t lines) {
  return static_cast<float>(static_cast<double>(depth) * 1e6 / static_cast<double>(lines));
}

namespace {

constexpr const char* kNames[] = {"coverage.bedgraph", "insertions.bedgraph", "coverage.bw",
                                  "insertions.bw"};

bool Insertions(TrackFile f) {
  return f == TrackFile::kInsertionsBedGraph || f == TrackFile::kInsertionsBigWig;
}

size_t Slot(TrackFile f, bool cpm) { return static_cast<size_t>(f) + (cpm ? 4 : 0); }

std::string BedGraph(const std::vector<std::string>& names, const Piles& piles, bool insertions,
                     bool cpm) {
  std::string out;
  RawText text(&out);
  for (size_t c = 0; c < piles.contigs.size(); ++c) {
    const auto& runs = insertions ? piles.contigs[c].insertions : piles.contigs[c].coverage;
    const std::string& chrom = names[c];
    for (const TrackRun& r : runs) {
      char* p = text.Reserve(chrom.size() + 3 * 24 + 4);
      p = std::copy(chrom.begin(), chrom.end(), p);
      *p++ = '\t';
      p = std::to_chars(p, p + 24, r.begin).ptr;
      *p++ = '\t';
      p = std::to_chars(p, p + 24, r.end).ptr;
      *p++ = '\t';
      p = cpm ? std::to_chars(p, p + 24, CpmValue(r.depth, piles.lines)).ptr
              : std::to_chars(p, p + 24, r.depth).ptr;
      *p++ = '\n';
      text.Commit(p);
    }
  }
  return out;
}

// The bytes BedGraph writes, counted: a value's text once per depth (a few hundred differ).
uint64_t BedGraphLength(const std::vector<std::string>& names, const Piles& piles, bool insertions,
                        bool cpm) {
  std::vector<uint8_t> value_len;
  uint64_t total = 0;
  for (size_t c = 0; c < piles.contigs.size(); ++c) {
    const auto& runs = insertions ? piles.contigs[c].insertions : piles.contigs[c].coverage;
    total += (names[c].size() + 4) * runs.size();
    for (const TrackRun& r : runs) {
      if (r.depth >= value_len.size()) value_len.resize(r.depth + 1, 0);
      uint8_t& v = value_len[r.depth];
      if (v == 0) {
        char buf[32];
        v = static_cast<uint8_t>(
            cpm ? std::to_chars(buf, buf + sizeof buf, CpmValue(r.depth, piles.lines)).ptr - buf
                : DecimalDigits(r.depth));
      }
      total += DecimalDigits(r.begin) + DecimalDigits(r.end) + v;
    }
  }
  return total;
}

}  // namespace

const char* TrackSet::Name(TrackFile file) { return kNames[static_cast<size_t>(file)]; }

std::string TrackSet::Describe(TrackFile file, bool cpm) const {
  return std::string(cpm ? "scale=cpm/" : "") + Name(file) + " of " + where_;
}

std::string TrackSet::KeyOf(TrackFile file, bool cpm) const {
  return options_.key + "\ntrack " + (cpm ? "scale=cpm/" : "") + Name(file);
}

TrackSet::TrackSet(std::shared_ptr<const VirtualTextFile> bed, std::vector<std::string> contigs,
                   Options options, std::string where)
    : bed_(std::move(bed)),
      contigs_(std::move(contigs)),
      options_(std::move(options)),
      where_(std::move(where)) {}

// Piles fed by the view's sizing pass. A failure (a damaged chunk) is dropped here: the pass of
// the view reports it, and a track's own pass meets it again where the track is read.
class TrackSet::PassBuilder : public SpanBuilder {
 public:
  explicit PassBuilder(const TrackSet* set) : set_(set), piler_(&set->contigs_) {}
  Status Add(uint64_t, const ChunkSpans& spans) override {
    if (!failed_ && !piler_.Add(spans).ok()) failed_ = true;
    return OkStatus();
  }
  void Finish(uint64_t) override {
    if (failed_) return;
    auto piles = piler_.Finish();
    if (piles.ok()) set_->KeepPiles(*std::move(piles));
  }

 private:
  const TrackSet* set_;  // kept alive by the pass
  Piler piler_;
  bool failed_ = false;
};

std::unique_ptr<SpanBuilder> TrackSet::StartPass() const {
  std::lock_guard lock(mu_);
  if (piles_) return nullptr;
  bool all = true;
  for (size_t i = 0; i < 4; ++i) all = all && files_[i] != nullptr;
  if (all) return nullptr;
  return std::make_unique<PassBuilder>(this);
}

void TrackSet::KeepPiles(Piles piles) const {
  std::lock_guard lock(mu_);
  piles_ = std::make_shared<const Piles>(std::move(piles));
}

bool TrackSet::Known(TrackFile file, bool cpm) const {
  std::lock_guard lock(mu_);
  return sizes_[Slot(file, cpm)].has_value();
}

Result<uint64_t> TrackSet::Size(TrackFile file, bool cpm) const {
  const size_t slot = Slot(file, cpm);
  const bool bedgraph =
      file == TrackFile::kCoverageBedGraph || file == TrackFile::kInsertionsBedGraph;
  std::shared_ptr<const Piles> piles;
  {
    std::lock_guard lock(mu_);
    if (sizes_[slot]) return *sizes_[slot];
    piles = piles_;
  }
  // Kept in index_dir (a later mount), or no bedGraph: the bytes themselves.
  if (!bedgraph || (!piles && options_.store != nullptr && !options_.key.empty() &&
                    options_.store->LoadBlob(KeyOf(file, cpm)))) {
    ASSIGN_OR_RETURN(cache::Buffer b, Bytes(file, cpm));
    return b->size();
  }
  if (!piles) {
    std::lock_guard build(build_mu_);
    auto made = EnsurePiles();
    if (!made.ok()) {
      Status st = std::move(made).status().WithContext(Describe(file, cpm));
      LogError(st.message());
      return st;
    }
    piles = *std::move(made);
  }
  const uint64_t n = BedGraphLength(contigs_, *piles, Insertions(file), cpm);
  std::lock_guard lock(mu_);
  sizes_[slot] = n;
  return n;
}

Result<Piles> TrackSet::OwnPass() const {
  const RecordSource& source = bed_->source();
  RETURN_IF_ERROR(source.Prepare());
  Piler piler(&contigs_);
  RETURN_IF_ERROR(
      ForEachChunkSpans(source, options_.threads,
                        [&](uint64_t, const ChunkSpans& spans) { return piler.Add(spans); }));
  return piler.Finish();
}

Result<std::shared_ptr<const Piles>> TrackSet::EnsurePiles() const {
  {
    std::lock_guard lock(mu_);
    if (piles_) return piles_;
  }
  // The view sized first: when that runs its pass, the pass piles the tracks too.
  if (options_.fed && !bed_->sized()) {
    RETURN_IF_ERROR(bed_->Size().status());
    std::lock_guard lock(mu_);
    if (piles_) return piles_;
  }
  ASSIGN_OR_RETURN(Piles piles, OwnPass());
  KeepPiles(std::move(piles));
  std::lock_guard lock(mu_);
  return piles_;
}

Result<std::string> TrackSet::BigWig(const Piles& piles, bool insertions, bool cpm) const {
  std::vector<BigWigChrom> chroms(contigs_.size());
  for (size_t c = 0; c < contigs_.size(); ++c) {
    chroms[c].name = contigs_[c];
    chroms[c].size =
        static_cast<uint32_t>(std::clamp<uint64_t>(piles.contigs[c].max_end, 1, UINT32_MAX));
    const auto& runs = insertions ? piles.contigs[c].insertions : piles.contigs[c].coverage;
    chroms[c].runs.reserve(runs.size());
    for (const TrackRun& r : runs) {
      chroms[c].runs.push_back(
          {r.begin, r.end, cpm ? CpmValue(r.depth, piles.lines) : static_cast<float>(r.depth)});
    }
  }
  auto bytes = WriteBigWig(chroms);
  if (!bytes.ok()) {
    return std::move(bytes).status().WithContext(
        Describe(insertions ? TrackFile::kInsertionsBigWig : TrackFile::kCoverageBigWig, cpm));
  }
  return bytes;
}

Result<std::string> TrackSet::Render(const Piles& piles, TrackFile file, bool cpm) const {
  switch (file) {
    case TrackFile::kCoverageBedGraph:
    case TrackFile::kInsertionsBedGraph:
      return BedGraph(contigs_, piles, Insertions(file), cpm);
    case TrackFile::kCoverageBigWig:
    case TrackFile::kInsertionsBigWig:
      return BigWig(piles, Insertions(file), cpm);
  }
  return InternalError("no such track");
}

Result<cache::Buffer> TrackSet::Bytes(TrackFile file, bool cpm) const {
  const size_t slot = Slot(file, cpm);
  {
    std::lock_guard lock(mu_);
    if (files_[slot]) return files_[slot];
  }
  std::lock_guard build(build_mu_);
  {
    std::lock_guard lock(mu_);
    if (files_[slot]) return files_[slot];
  }
  const bool persist = options_.store != nullptr && !options_.key.empty();
  std::optional<std::string> bytes;
  if (persist) bytes = options_.store->LoadBlob(KeyOf(file, cpm));
  if (!bytes) {
    auto piles = EnsurePiles();
    if (!piles.ok()) {
      Status st = std::move(piles).status().WithContext(Describe(file, cpm));
      LogError(st.message());
      return st;
    }
    // A bigWig's twin (coverage, insertions) is wanted next (`ls -l` sizes both, and a bigWig's
    // size is its bytes): built beside it, on a second thread, from the same piles.
    const bool bigwig = file == TrackFile::kCoverageBigWig || file == TrackFile::kInsertionsBigWig;
    const TrackFile twin =
        Insertions(file) ? TrackFile::kCoverageBigWig : TrackFile::kInsertionsBigWig;
    const size_t twin_slot = Slot(twin, cpm);
    unsigned threads = options_.threads ? options_.threads : std::thread::hardware_concurrency();
    bool with_twin = bigwig && threads > 1;
    if (with_twin) {
      std::lock_guard lock(mu_);
      with_twin = files_[twin_slot] == nullptr;
    }
    Result<std::string> twin_bytes = InternalError("not built");
    std::thread twin_thread;
    if (with_twin) twin_thread = std::thread([&] { twin_bytes = Render(**piles, twin, cpm); });
    auto rendered = Render(**piles, file, cpm);
    if (twin_thread.joinable()) twin_thread.join();
    if (with_twin && twin_bytes.ok()) {
      if (persist) options_.store->SaveBlob(KeyOf(twin, cpm), *twin_bytes);
      auto b = std::make_shared<const std::string>(*std::move(twin_bytes));
      std::lock_guard lock(mu_);
      files_[twin_slot] = b;
      sizes_[twin_slot] = b->size();
    }
    if (!rendered.ok()) {
      LogError(rendered.status().message());
      return rendered.status();
    }
    bytes = *std::move(rendered);
    if (persist) options_.store->SaveBlob(KeyOf(file, cpm), *bytes);
  }
  auto buffer = std::make_shared<const std::string>(*std::move(bytes));
  std::lock_guard lock(mu_);
  files_[slot] = buffer;
  sizes_[slot] = buffer->size();
  return buffer;
}

Result<uint64_t> TrackView::Size() const { return set_->Size(file_, cpm_); }

Result<std::vector<Piece>> TrackView::Read(uint64_t offset, uint64_t length) const {
  ASSIGN_OR_RETURN(cache::Buffer b, set_->Bytes(file_, cpm_));
  std::vector<Piece> out;
  if (offset < b->size() && length > 0) {
    out.push_back({b, static_cast<size_t>(offset),
                   static_cast<size_t>(std::min<uint64_t>(length, b->size() - offset))});
  }
  return out;
}

}  // namespace omicsfs::text
