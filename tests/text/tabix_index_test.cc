// TabixIndexBuilder against htslib 1.16's tabix on texts large enough to grow htslib's bin hash
// many times, merge bins into parents, fill linear-index gaps and span many BGZF blocks: the
// uncompressed index bytes must be equal, for TBI and CSI, VCF and BED rules.
#include "text/tabix_index.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include "cache/cache_pool.h"
#include "codec/bgzf.h"
#include "formats/bpcells/fragments.h"
#include "testutil/mount_fixture.h"
#include "testutil/store_writer.h"
#include "text/bed_source.h"
#include "text/index_store.h"
#include "text/tabix_source.h"
#include "text/virtual_file.h"
#include "util/fs.h"

namespace omicsfs::text {
namespace {

namespace bgzf = codec::bgzf;

std::string Run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  char buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  EXPECT_EQ(::pclose(p), 0) << cmd;
  return out;
}

// What tabix writes for `text` (bgzip -l 0 first), decompressed. With `layout`'s short first
// block: bgzip -l 0 of the first block's text (its EOF block cut off), then of the rest.
std::string Tabix(const std::string& text, bool vcf, bool csi,
                  bgzf::StoredLayout layout = bgzf::kBgzipLayout) {
  char dir[] = "/tmp/omicsfs-tabix-unit-XXXXXX";
  EXPECT_NE(::mkdtemp(dir), nullptr);
  const std::string plain = std::string(dir) + "/t", gz = plain + ".gz";
  if (layout.first == bgzf::kBlockPayload || text.size() <= layout.first) {
    std::ofstream(plain, std::ios::binary) << text;
    Run("bgzip -l 0 " + plain);
  } else {
    std::ofstream(plain + "1", std::ios::binary) << text.substr(0, layout.first);
    std::ofstream(plain + "2", std::ios::binary) << text.substr(layout.first);
    const std::string head = Run("bgzip -l 0 -c " + plain + "1");
    std::ofstream(gz, std::ios::binary)
        << head.substr(0, head.size() - bgzf::kEofSize) << Run("bgzip -l 0 -c " + plain + "2");
  }
  Run(std::string("tabix ") + (csi ? "-C " : "") + (vcf ? "-p vcf " : "-p bed ") + gz);
  std::string index = Run("bgzip -dc " + gz + (csi ? ".csi" : ".tbi"));
  Run(std::string("rm -rf ") + dir);
  return index;
}

// The builder fed line by line, as TabixIndexSource feeds it from record spans.
std::string Mine(const std::string& text, bool vcf, bool csi) {
  const TabixPreset preset = vcf ? TabixPreset::kVcf : TabixPreset::kBed;
  auto tell = [&](uint64_t pos) {
    return pos == text.size() ? bgzf::StoredDataEnd(text.size()) << 16
                              : bgzf::StoredVirtualOffset(pos);
  };
  uint64_t at = 0, offset0 = 0;
  int64_t max_len = 0;
  std::unique_ptr<TabixIndexBuilder> b;
  while (at < text.size()) {
    const size_t nl = text.find('\n', at);
    const std::string_view line(text.data() + at, nl - at);
    at = nl + 1;
    if (line[0] == '#') {
      if (csi && vcf) NoteVcfContigLength(line, &max_len);
      if (!b) offset0 = at;
      continue;
    }
    if (!b) b = std::make_unique<TabixIndexBuilder>(preset, csi, tell(offset0), max_len);
    std::string_view contig;
    int64_t beg, end;
    if (!ParseTabixLine(preset, line, &contig, &beg, &end)) continue;
    Status st = b->Push(contig, beg, end, tell(at));
    EXPECT_TRUE(st.ok()) << st.message();
  }
  if (!b) b = std::make_unique<TabixIndexBuilder>(preset, csi, tell(offset0), max_len);
  return b->Finish(tell(text.size()));
}

std::string BedText(uint32_t seed, int records, int64_t spread) {
  std::mt19937_64 rng(seed);
  std::string t;
  for (int c = 0; c < 4; ++c) {
    int64_t pos = rng() % 1000;
    for (int i = 0; i < records; ++i) {
      pos += rng() % spread;
      const int64_t len = rng() % 8 == 0 ? rng() % 3000000 : rng() % 700;  // some span many bins
      t += "chr" + std::to_string(c + 1) + "\t" + std::to_string(pos) + "\t" +
           std::to_string(pos + len) + "\tCELL" + std::to_string(rng() % 5000) + "\n";
    }
  }
  return t;
}

std::string VcfText(uint32_t seed, int records, bool big) {
  std::mt19937_64 rng(seed);
  std::string t = "##fileformat=VCFv4.3\n";
  t += std::string("##contig=<ID=1,length=") + (big ? "3000000000" : "250000000") + ">\n";
  t += "##contig=<ID=2,length=240000000>\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n";
  for (int c = 1; c <= 2; ++c) {
    int64_t pos = big && c == 1 ? 600000000 : 1;
    for (int i = 0; i < records; ++i) {
      pos += rng() % 20000;
      std::string ref(1 + rng() % 4, 'A');
      std::string info = "DP=" + std::to_string(rng() % 100);
      switch (rng() % 10) {
        case 0:
          info = "END=" + std::to_string(pos + rng() % 100000) + ";" + info;
          break;
        case 1:
          info += ";END=" + std::to_string(pos + rng() % 5000);
          break;
        case 2:
          info += ";XEND=" + std::to_string(pos + 50);
          break;  // not an END
        case 3:
          info = ".";
          break;
        default:
          break;
      }
      t += std::to_string(c) + "\t" + std::to_string(pos) + "\t.\t" + ref + "\tT\t.\tPASS\t" +
           info + "\n";
    }
  }
  return t;
}

TEST(TabixIndex, BedTbiLikeTabix) {
  for (uint32_t seed : {1u, 2u}) {
    const std::string text = BedText(seed, 40000, 3000);
    EXPECT_TRUE(Mine(text, false, false) == Tabix(text, false, false)) << "seed " << seed;
  }
}

TEST(TabixIndex, BedCsiLikeTabix) {
  const std::string text = BedText(3, 30000, 30000);
  EXPECT_TRUE(Mine(text, false, true) == Tabix(text, false, true));
}

TEST(TabixIndex, VcfTbiAndCsiLikeTabix) {
  const std::string text = VcfText(4, 30000, false);
  EXPECT_TRUE(Mine(text, true, false) == Tabix(text, true, false));
  EXPECT_TRUE(Mine(text, true, true) == Tabix(text, true, true));
  const std::string big = VcfText(5, 20000, true);
  EXPECT_TRUE(Mine(big, true, true) == Tabix(big, true, true));
}

TEST(TabixIndex, EmptyLikeTabix) {
  const std::string header =
      "##fileformat=VCFv4.3\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n";
  EXPECT_TRUE(Mine(header, true, false) == Tabix(header, true, false));
}

TEST(TabixIndex, RefusesWhatTabixRefuses) {
  TabixIndexBuilder b(TabixPreset::kBed, false, 0);
  ASSERT_TRUE(b.Push("chr1", 100, 200, 10).ok());
  EXPECT_FALSE(b.Push("chr1", 50, 60, 20).ok());  // unsorted
  TabixIndexBuilder c(TabixPreset::kBed, false, 0);
  ASSERT_TRUE(c.Push("chr1", 100, 200, 10).ok());
  ASSERT_TRUE(c.Push("chr2", 100, 200, 20).ok());
  EXPECT_FALSE(c.Push("chr1", 300, 400, 30).ok());  // chr1 in two blocks
  TabixIndexBuilder d(TabixPreset::kBed, false, 0);
  EXPECT_FALSE(d.Push("chr1", 100, 99, 10).ok());  // end before begin
  TabixIndexBuilder e(TabixPreset::kBed, false, 0);
  EXPECT_FALSE(e.Push("chr1", 600000000, 600000100, 10).ok());  // past 2^29: CSI only
  TabixIndexBuilder f(TabixPreset::kBed, true, 0);
  EXPECT_TRUE(f.Push("chr1", 600000000, 600000100, 10).ok());
}

// A pass fed chunks of spans refuses what the builder refuses wherever the record lies in a
// chunk (the held first record, the run after it, the chunk's last), naming its contig, number
// and position.
TEST(TabixIndex, APassNamesTheRecordItRefuses) {
  for (size_t bad : {0u, 1u, 5u, 9u}) {  // the record of chunk 2 out of order
    ChunkSpans one, two;
    one.contigs = two.contigs = {"chr7"};
    for (int i = 0; i < 10; ++i)
      one.records.push_back({0, 100 + 10 * i, 105 + 10 * i, uint64_t(20 * (i + 1))});
    one.length = 200;
    for (int i = 0; i < 10; ++i)
      two.records.push_back({0, 300 + 10 * i, 305 + 10 * i, uint64_t(20 * (i + 1))});
    two.records[bad].begin = 150;  // before the record ahead of it
    two.records[bad].end = 155;
    two.length = 200;
    TabixPass pass(TabixPreset::kBed, false, 0);
    ASSERT_TRUE(pass.Add(0, one).ok());
    Status st = pass.Add(200, two);
    if (st.ok()) st = pass.Finish(400).status();
    ASSERT_FALSE(st.ok()) << bad;
    EXPECT_NE(
        st.message().find("contig chr7, record " + std::to_string(11 + bad) + " (position 151)"),
        std::string::npos)
        << bad << ": " << st.message();
  }
}

TEST(TabixIndex, ParsesLinesAsTbxParse1) {
  std::string_view contig;
  int64_t b, e;
  ASSERT_TRUE(
      ParseTabixLine(TabixPreset::kVcf, "20\t100\t.\tACG\tT\t.\t.\tDP=3;END=500", &contig, &b, &e));
  EXPECT_EQ(contig, "20");
  EXPECT_EQ(b, 99);
  EXPECT_EQ(e, 500);
  ASSERT_TRUE(
      ParseTabixLine(TabixPreset::kVcf, "20\t100\t.\tACG\tT\t.\t.\tXEND=900", &contig, &b, &e));
  EXPECT_EQ(e, 102);
  ASSERT_TRUE(
      ParseTabixLine(TabixPreset::kVcf, "20\t100\t.\tACG\tT\t.\t.\tEND=50", &contig, &b, &e));
  EXPECT_EQ(e, 102);  // an END before POS is ignored
  EXPECT_FALSE(ParseTabixLine(TabixPreset::kVcf, "20\t.\t.\tA\tT\t.\t.\t.", &contig, &b, &e));
  ASSERT_TRUE(ParseTabixLine(TabixPreset::kBed, "chr1\t5\t9\tx", &contig, &b, &e));
  EXPECT_EQ(b, 5);
  EXPECT_EQ(e, 9);
}

// A text in chunks of `per_chunk` lines, with record spans as tabix reads its lines; counts how
// often its chunks' spans are taken.
class LinesSource : public RecordSource {
 public:
  // `first_delay`: chunk 0's spans take that long (a slow first chunk holds up the feed).
  LinesSource(const std::string& text, size_t per_chunk, TabixPreset preset,
              std::chrono::milliseconds first_delay = {})
      : preset_(preset), first_delay_(first_delay) {
    size_t at = 0;
    while (at < text.size()) {
      size_t end = at;
      for (size_t i = 0; i < per_chunk && end < text.size(); ++i) end = text.find('\n', end) + 1;
      chunks_.push_back(text.substr(at, end - at));
      at = end;
    }
    chunks_.emplace_back();  // an empty last chunk
  }
  uint64_t ChunkCount() const override { return chunks_.size(); }
  Status RenderChunk(uint64_t k, std::string* out) const override {
    out->append(chunks_[k]);
    return OkStatus();
  }
  Result<std::optional<uint64_t>> MeasureChunk(uint64_t k) const override {
    if (!tallied) return std::optional<uint64_t>();
    return std::optional<uint64_t>(chunks_[k].size());
  }
  bool MeasuresWithoutReading() const override { return tallied; }
  bool tallied = false;  // lengths known without reading (as a fragments group's tally)
  std::atomic<bool> unreadable{false};  // chunk 1's records cannot be read (EIO): no verdict
  bool HasRecordSpans() const override { return true; }
  Status RecordSpans(uint64_t k, ChunkSpans* out) const override {
    ++span_calls;
    if (k == 1 && unreadable) return IoError("lines: chunk 1: read failed", EIO);
    if (!first_done) {
      uint64_t seen = started_before_first.load();
      while (k > seen && !started_before_first.compare_exchange_weak(seen, k)) {
      }
    }
    if (k == 0) {
      std::this_thread::sleep_for(first_delay_);
      first_done = true;
    }
    const std::string& c = chunks_[k];
    out->length = c.size();
    for (size_t at = 0; at < c.size();) {
      const size_t nl = c.find('\n', at);
      const std::string_view line(c.data() + at, nl - at);
      at = nl + 1;
      if (line[0] == '#') {
        if (out->records.empty()) out->meta_end = at;
        continue;
      }
      std::string_view contig;
      RecordSpan r;
      if (!ParseTabixLine(preset_, line, &contig, &r.begin, &r.end)) continue;
      if (out->contigs.empty() || out->contigs.back() != contig) out->contigs.emplace_back(contig);
      r.contig = static_cast<uint32_t>(out->contigs.size() - 1);
      r.end_in_chunk = at;
      out->records.push_back(r);
    }
    return OkStatus();
  }
  std::string Describe() const override { return "lines"; }
  mutable std::atomic<int> span_calls{0};
  mutable std::atomic<uint64_t> started_before_first{
      0};  // the last chunk begun before chunk 0 ended
  mutable std::atomic<bool> first_done{false};

 private:
  TabixPreset preset_;
  std::chrono::milliseconds first_delay_;
  std::vector<std::string> chunks_;
};

// The view's .tbi and .csi, read after its size (`passes`: its sizing pass builds them) or alone.
std::pair<std::string, std::string> Indexes(const std::string& text, bool vcf, bool one_pass,
                                            int* span_calls,
                                            bgzf::StoredLayout layout = bgzf::kBgzipLayout) {
  const TabixPreset preset = vcf ? TabixPreset::kVcf : TabixPreset::kBed;
  cache::CachePool pool(64 << 20);
  auto source = std::make_shared<const LinesSource>(text, 997, preset);
  auto plain = std::make_shared<const VirtualTextFile>(source, &pool);
  std::vector<std::shared_ptr<const TabixIndexSource>> indexes;
  for (bool csi : {false, true}) {
    TabixIndexSource::Options o;
    o.preset = preset;
    o.csi = csi;
    o.layout = layout;
    indexes.push_back(std::make_shared<const TabixIndexSource>(plain, o, csi ? "t.csi" : "t.tbi"));
    if (one_pass) plain->AddSpanConsumer(indexes.back());
  }
  EXPECT_TRUE(plain->Size().ok());
  std::string tbi, csi;
  EXPECT_TRUE(indexes[0]->RenderChunk(0, &tbi).ok());
  EXPECT_TRUE(indexes[1]->RenderChunk(0, &csi).ok());
  *span_calls = source->span_calls;
  return {tbi, csi};
}

TEST(TabixIndex, ViewSizingPassBuildsItsIndexes) {
  for (bool vcf : {false, true}) {
    const std::string text = vcf ? VcfText(6, 20000, false) : BedText(7, 15000, 3000);
    const int chunks = static_cast<int>(LinesSource(text, 997, TabixPreset::kBed).ChunkCount());
    int one = 0, apart = 0;
    const auto [tbi, csi] = Indexes(text, vcf, true, &one);
    EXPECT_EQ(one, chunks) << "every chunk's spans taken once, by the sizing pass";
    const auto [tbi2, csi2] = Indexes(text, vcf, false, &apart);
    EXPECT_EQ(apart, 2 * chunks) << "each index's own pass";
    EXPECT_TRUE(tbi == tbi2 && csi == csi2) << "vcf " << vcf;
    EXPECT_TRUE(tbi == Tabix(text, vcf, false)) << "vcf " << vcf;
    EXPECT_TRUE(csi == Tabix(text, vcf, true)) << "vcf " << vcf;
  }
}

// The fragments twins' layout (a first block of 32 640 bytes): the indexes of a view's sizing
// pass and of their own passes are what tabix writes for the twin in that layout.
TEST(TabixIndex, BedtoolsLayoutLikeTabix) {
  const std::string text = BedText(8, 15000, 3000);
  for (bool one_pass : {true, false}) {
    int calls = 0;
    const auto [tbi, csi] = Indexes(text, false, one_pass, &calls, bgzf::kBedtoolsLayout);
    EXPECT_TRUE(tbi == Tabix(text, false, false, bgzf::kBedtoolsLayout)) << one_pass;
    EXPECT_TRUE(csi == Tabix(text, false, true, bgzf::kBedtoolsLayout)) << one_pass;
    EXPECT_FALSE(tbi == Tabix(text, false, false)) << "not bgzip -l 0's offsets";
  }
}

// A view whose lengths are tallied elsewhere is sized without reading its records; its index
// is built by its own pass when asked for, the same bytes as tabix's.
TEST(TabixIndex, TalliedViewIsSizedWithoutItsSpans) {
  const std::string text = BedText(5, 8000, 3000);
  cache::CachePool pool(64 << 20);
  auto source = std::make_shared<LinesSource>(text, 997, TabixPreset::kBed);
  source->tallied = true;
  auto plain = std::make_shared<const VirtualTextFile>(source, &pool);
  TabixIndexSource::Options io;
  io.preset = TabixPreset::kBed;
  auto tbi = std::make_shared<const TabixIndexSource>(plain, io, "t.tbi");
  plain->AddSpanConsumer(tbi);
  auto size = plain->Size();
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, text.size());
  EXPECT_EQ(source->span_calls.load(), 0) << "sized from the tally alone";
  std::string index;
  ASSERT_TRUE(tbi->RenderChunk(0, &index).ok());
  EXPECT_EQ(source->span_calls.load(), static_cast<int>(source->ChunkCount()))
      << "the index's own pass";
  EXPECT_TRUE(index == Tabix(text, false, false));
}

// Records tabix refuses (a zero-length fragment in the 10x form: end before begin) are a verdict
// about these bytes, found once by whichever pass meets them first (the view's sizing pass, or
// the index's own): kept, told once, saved in index_dir under the index's key and a line of its
// own, and answered without another pass. A failure to read the records is none of that.
TEST(TabixIndex, ARefusalIsAVerdictKeptToldAndSavedOnce) {
  std::string text = BedText(3, 5000, 3000);
  // A line of a later chunk ends before it begins (its end becomes begin - 1).
  const size_t at = text.find('\n', text.size() / 2) + 1;
  const size_t tab1 = text.find('\t', at), tab2 = text.find('\t', tab1 + 1),
               tab3 = text.find('\t', tab2 + 1);
  const int64_t begin = std::stoll(text.substr(tab1 + 1, tab2 - tab1 - 1));
  text.replace(tab2 + 1, tab3 - tab2 - 1, std::to_string(begin - 1));
  const std::string refused =
      "end " + std::to_string(begin - 1) + " before begin " + std::to_string(begin + 1);
  const std::string scratch = testutil::MakeTempDir("tabix-verdict-");
  ASSERT_FALSE(scratch.empty());
  for (bool by_view_pass : {true, false}) {
    SCOPED_TRACE(by_view_pass ? "the view's sizing pass" : "the index's own pass");
    const IndexStore store(scratch + (by_view_pass ? "/view" : "/own"));
    cache::CachePool pool(64 << 20);
    auto source = std::make_shared<LinesSource>(text, 997, TabixPreset::kBed);
    source->tallied = !by_view_pass;  // sized from lengths alone: the index's own pass meets it
    auto plain = std::make_shared<const VirtualTextFile>(source, &pool);
    TabixIndexSource::Options o;
    o.preset = TabixPreset::kBed;
    o.store = &store;
    o.key = "store /x\n\nregion index f.bed.gz.tbi";
    int told = 0;
    std::string why;
    o.on_refused = [&](const Status& st) {
      ++told;
      why = st.message();
    };
    auto tbi = std::make_shared<const TabixIndexSource>(plain, o, "f.bed.gz.tbi");
    plain->AddSpanConsumer(tbi);
    EXPECT_FALSE(TabixIndexSource::PersistedRefusal(o).has_value());
    ASSERT_TRUE(plain->Size().ok()) << "the view itself reads fine";
    EXPECT_EQ(tbi->Refusal().has_value(), by_view_pass);
    std::string index;
    Status st = tbi->RenderChunk(0, &index);
    ASSERT_FALSE(st.ok());
    EXPECT_TRUE(TabixRefuses(st)) << st.ToString();
    EXPECT_NE(st.message().find(refused), std::string::npos) << st.message();
    ASSERT_TRUE(tbi->Refusal().has_value());
    EXPECT_EQ(tbi->Refusal()->message(), st.message());
    EXPECT_EQ(told, 1);
    EXPECT_EQ(why, st.message());
    const int calls = source->span_calls.load();
    EXPECT_EQ(calls, static_cast<int>(source->ChunkCount())) << "one pass met it";
    EXPECT_FALSE(tbi->RenderChunk(0, &index).ok());
    EXPECT_EQ(source->span_calls.load(), calls)
        << "answered from the verdict, without another pass";
    EXPECT_EQ(told, 1);
    auto saved = TabixIndexSource::PersistedRefusal(o);
    ASSERT_TRUE(saved.has_value());
    EXPECT_EQ(*saved, st.message());
    EXPECT_TRUE(store.LoadBlob(TabixIndexSource::RefusalKey(o.key)).has_value());
    EXPECT_FALSE(store.LoadBlob(o.key).has_value()) << "no index saved";
    EXPECT_FALSE(IndexStore(scratch + "/view", /*rebuild=*/true)
                     .LoadBlob(TabixIndexSource::RefusalKey(o.key)))
        << "rebuild_index reads no verdict either";
  }
  {  // unreadable records: an error, not kept, saved nor told; once readable, the index is built
    const IndexStore store(scratch + "/eio");
    cache::CachePool pool(64 << 20);
    const std::string sorted = BedText(3, 5000, 3000);
    auto source = std::make_shared<LinesSource>(sorted, 997, TabixPreset::kBed);
    source->tallied = true;
    source->unreadable = true;
    auto plain = std::make_shared<const VirtualTextFile>(source, &pool);
    TabixIndexSource::Options o;
    o.preset = TabixPreset::kBed;
    o.store = &store;
    o.key = "store /y\n\nregion index f.bed.gz.tbi";
    int told = 0;
    o.on_refused = [&](const Status&) { ++told; };
    auto tbi = std::make_shared<const TabixIndexSource>(plain, o, "f.bed.gz.tbi");
    std::string index;
    Status st = tbi->RenderChunk(0, &index);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), ErrorCode::kIo) << st.ToString();
    EXPECT_FALSE(TabixRefuses(st));
    EXPECT_FALSE(tbi->Refusal().has_value());
    EXPECT_FALSE(TabixIndexSource::PersistedRefusal(o).has_value());
    EXPECT_EQ(told, 0);
    source->unreadable = false;
    ASSERT_TRUE(tbi->RenderChunk(0, &index).ok());
    EXPECT_TRUE(index == Tabix(sorted, false, false));
  }
  fs::remove_all(scratch);
}

// The sizing pass feeds spans in text order on one thread at a time; while the first chunk is
// slow, the other workers stop a few chunks ahead instead of decoding the whole view into
// spans waiting in memory (on many cores that backlog was the store's records).
TEST(TabixIndex, SizingPassDecodesOnlyAFewChunksAheadOfItsFeed) {
  const std::string text = BedText(3, 30000, 3000);
  cache::CachePool pool(64 << 20);
  auto source = std::make_shared<const LinesSource>(text, 50, TabixPreset::kBed,
                                                    std::chrono::milliseconds(300));
  ASSERT_GT(source->ChunkCount(), 400u);
  SizingOptions o;
  o.threads = 4;
  auto plain = std::make_shared<const VirtualTextFile>(source, &pool, o);
  TabixIndexSource::Options io;
  io.preset = TabixPreset::kBed;
  auto tbi = std::make_shared<const TabixIndexSource>(plain, io, "t.tbi");
  plain->AddSpanConsumer(tbi);
  ASSERT_TRUE(plain->Size().ok());
  EXPECT_LT(source->started_before_first.load(), 4u * 4 + 4)
      << "chunks begun while chunk 0 was held up";
  std::string index;
  ASSERT_TRUE(tbi->RenderChunk(0, &index).ok());
  EXPECT_TRUE(index == Tabix(text, false, false));
}

// A fragments view that counts the chunks whose fragments it reads for spans.
class CountingBed : public BedSource {
 public:
  using BedSource::BedSource;
  Status RecordSpans(uint64_t k, ChunkSpans* out) const override {
    ++span_calls;
    return BedSource::RecordSpans(k, out);
  }
  mutable std::atomic<int> span_calls{0};
};

// Fragments whose ends sit on and beside powers of ten (a 10x line is a byte shorter than its
// BED line there) and at 0 (its 10x end is 4294967295), over several chunks of two chromosomes.
testutil::FragmentsSpec PowersOfTenFragments(const std::string& first_chrom) {
  testutil::FragmentsSpec f;
  f.chr_names = {first_chrom, "chr2"};
  f.cell_names = {"AAAC-1", "TTTG-1", "GGGA-1"};
  f.by_chr.resize(2);
  f.by_chr[0].push_back({0, 0, 0});
  for (uint32_t p = 10; p <= 1000000000u; p *= 10) {
    for (uint32_t end : {p - 1, p, p + 1})
      f.by_chr[0].push_back({end - 1, end, static_cast<uint32_t>(end % 3)});
  }
  std::mt19937 rng(8);
  uint32_t pos = 0;
  for (int i = 0; i < 20000; ++i) {
    pos += rng() % 300;
    const uint32_t len =
        rng() % 7 == 0 ? 1000 - pos % 1000 : 1 + rng() % 600;  // some end on a thousand
    f.by_chr[1].push_back({pos, pos + len, static_cast<uint32_t>(rng() % 3)});
  }
  return f;
}

// A fragments store's BED and 10x views sized together (VirtualTextFile::SizeTogether): the
// first one asked reads each chunk's fragments once and sizes both and builds both .csi; sizes,
// chunk lengths and indexes are what each view renders and what tabix writes for it. A view
// whose partner's spans say too little (a chromosome tabix reads as header lines) sizes itself.
TEST(TabixIndex, PartnerViewsAreSizedAndIndexedByOnePass) {
  for (const std::string first_chrom : {"chr1", "#meta"}) {
    const bool derivable = first_chrom[0] != '#';
    auto fragments = formats::bpcells::Fragments::Open(
        testutil::ToMemoryStore(testutil::MakeFragmentsStore(PowersOfTenFragments(first_chrom))));
    ASSERT_TRUE(fragments.ok()) << fragments.status().ToString();
    for (int asked_first : {0, 1}) {
      cache::CachePool pool(64 << 20);
      std::vector<std::shared_ptr<const CountingBed>> sources;
      std::vector<std::shared_ptr<const VirtualTextFile>> views;
      std::vector<std::shared_ptr<const TabixIndexSource>> indexes;
      for (auto style : {BedSource::Style::kBed, BedSource::Style::kTenX}) {
        sources.push_back(std::make_shared<const CountingBed>(*fragments, style, "f"));
        SizingOptions sizing;
        sizing.threads = 4;  // the two views' indexes fed side by side
        views.push_back(std::make_shared<const VirtualTextFile>(sources.back(), &pool, sizing));
        TabixIndexSource::Options o;
        o.preset = TabixPreset::kBed;
        o.csi = true;  // ends past 2^29
        indexes.push_back(std::make_shared<const TabixIndexSource>(views.back(), o, "f.csi"));
        views.back()->AddSpanConsumer(indexes.back());
      }
      VirtualTextFile::SizeTogether(*views[0], *views[1]);
      const int chunks = static_cast<int>(sources[0]->ChunkCount());
      ASSERT_GT(chunks, 2);
      ASSERT_TRUE(views[asked_first]->Size().ok());
      EXPECT_EQ(views[1 - asked_first]->sized(), derivable) << first_chrom;
      EXPECT_EQ(sources[asked_first]->span_calls.load(), chunks);
      EXPECT_EQ(sources[1 - asked_first]->span_calls.load(), 0);
      for (int v : {0, 1}) {
        std::string text;
        for (uint64_t k = 0; k < sources[v]->ChunkCount(); ++k) {
          const size_t before = text.size();
          ASSERT_TRUE(sources[v]->RenderChunk(k, &text).ok());
          auto span = views[v]->ChunkSpan(k);
          ASSERT_TRUE(span.ok());
          ASSERT_EQ(span->first, before) << "view " << v << " chunk " << k;
          ASSERT_EQ(span->second, text.size() - before) << "view " << v << " chunk " << k;
        }
        EXPECT_EQ(*views[v]->Size(), text.size());
        std::string csi;
        Status st = indexes[v]->RenderChunk(0, &csi);
        ASSERT_TRUE(st.ok()) << st.ToString();
        EXPECT_TRUE(csi == Tabix(text, false, true)) << first_chrom << " view " << v;
      }
      // Derived: nothing read again, for the sizes or the indexes; else the partner's own pass
      // read its chunks once.
      EXPECT_EQ(sources[1 - asked_first]->span_calls.load(), derivable ? 0 : chunks) << first_chrom;
      EXPECT_EQ(sources[asked_first]->span_calls.load(), chunks) << first_chrom;
    }
  }
}

}  // namespace
}  // namespace omicsfs::text
