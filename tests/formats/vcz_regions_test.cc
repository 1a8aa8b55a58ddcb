// Store::Regions() and MaxEnd(): bio2zarr's region_index read as stored (chunks counted as
// vcztools counts them), and the same rows computed from the variant arrays (every corpus store,
// with its region_index removed, and again with variant_length removed too: htslib's rlen from REF
// and INFO/END); small stores written here with contig runs inside chunks, END, a missing REF and
// edge chunks; a damaged or stale region_index is not used (a warning names the store) and never
// gives wrong rows.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "formats/vcz/store.h"
#include "formats/zarr/array.h"
#include "io/memory_blob_store.h"
#include "testutil/zarr_writer.h"
#include "util/fs.h"
#include "util/log.h"

namespace omicsfs::formats::vcz {

void PrintTo(const ChunkRegion& r, std::ostream* os) {
  *os << "[" << r.chunk << " " << r.contig << " " << r.first_pos << " " << r.last_pos << " "
      << r.max_end << " " << r.records << "]";
}

namespace {

using Rows = std::vector<ChunkRegion>;
using Blobs = std::map<std::string, std::string>;

Blobs LoadBlobs(const fs::path& root) {
  Blobs blobs;
  for (fs::recursive_directory_iterator it(root), end; it != end; ++it) {
    if (!fs::is_regular_file(it->path())) continue;
    std::ifstream in(it->path().string(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    blobs[fs::relative(it->path(), root).generic_string()] = bytes.str();
  }
  return blobs;
}

// Without the arrays named (their metadata and chunks; consolidated metadata dropped too).
Blobs Without(Blobs blobs, const std::vector<std::string>& arrays) {
  blobs.erase(".zmetadata");
  for (const auto& a : arrays)
    std::erase_if(blobs, [&](const auto& kv) { return kv.first.starts_with(a + "/"); });
  return blobs;
}

std::shared_ptr<const Store> OpenBlobs(Blobs blobs, const std::string& name) {
  auto s = Store::Open(std::make_shared<io::MemoryBlobStore>(std::move(blobs), name));
  EXPECT_TRUE(s.ok()) << name << ": " << s.status().ToString();
  return s.ok() ? *s : nullptr;
}

Rows RegionsOf(const Store& s) {
  auto r = s.Regions();
  EXPECT_TRUE(r.ok()) << s.Describe() << ": " << r.status().ToString();
  return r.ok() ? **r : Rows();
}

// The region_index array as stored, read without Store.
Rows StoredRows(const Blobs& blobs) {
  auto a = zarr::ZarrArray::Open(std::make_shared<io::MemoryBlobStore>(blobs), "region_index");
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  if (!a.ok()) return {};
  auto b = a->ReadAll();
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  Rows rows;
  for (uint64_t i = 0; b.ok() && i < b->rows; ++i) {
    auto v = [&](int k) { return zarr::IntAt(*b, i * 6 + k); };
    rows.push_back(
        {static_cast<uint64_t>(v(0)), v(1), v(2), v(3), v(4), static_cast<uint64_t>(v(5))});
  }
  return rows;
}

// The kept warnings (RecentProblems) that name `what`.
int WarningsNaming(const std::string& what) {
  int n = 0;
  for (const auto& line : RecentProblems()) n += line.find(what) != std::string::npos;
  return n;
}

// The last kept warning that names `what`.
std::string LastNaming(const std::string& what) {
  auto all = RecentProblems();
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (it->find(what) != std::string::npos) return *it;
  }
  return "";
}

std::string Print(const Rows& rows) {
  std::string out;
  for (const auto& r : rows) {
    out += std::string("[") + std::to_string(r.chunk) + " " + std::to_string(r.contig) + " " +
           std::to_string(r.first_pos) + " " + std::to_string(r.last_pos) + " " +
           std::to_string(r.max_end) + " " + std::to_string(r.records) + "] ";
  }
  return out;
}

TEST(VczRegions, EveryCorpusStoreStoredEqualsComputed) {
  const fs::path corpus = fs::path(OMICSFS_CORPUS_DIR) / "vcf-zarr";
  ASSERT_TRUE(fs::is_directory(corpus)) << corpus;
  SetLogLevel(LogLevel::kError);  // the fallbacks below warn by design
  int stores = 0, multi_row_chunks = 0, with_end = 0, rechunked = 0;
  for (fs::directory_iterator it(corpus), end; it != end; ++it) {
    if (!fs::is_directory(it->path())) continue;
    for (fs::directory_iterator jt(it->path()), jend; jt != jend; ++jt) {
      if (jt->path().extension() != ".vcz") continue;
      SCOPED_TRACE(jt->path().string());
      const Blobs blobs = LoadBlobs(jt->path());
      const bool has_index =
          blobs.count("region_index/.zarray") || blobs.count("region_index/zarr.json");
      ASSERT_TRUE(has_index);  // every corpus store has one (field notes)
      const std::string name = jt->path().filename().string();
      const int before = WarningsNaming(name + " (stored)");
      auto stored = OpenBlobs(blobs, name + " (stored)");
      auto computed = OpenBlobs(Without(blobs, {"region_index"}), name + " (computed)");
      auto from_ref =
          OpenBlobs(Without(blobs, {"region_index", "variant_length"}), name + " (from REF)");
      ASSERT_TRUE(stored && computed && from_ref);
      const Rows rows = RegionsOf(*stored);
      EXPECT_EQ(WarningsNaming(name + " (stored)"), before)
          << LastNaming(name + " (stored)");  // used as it is
      EXPECT_EQ(rows, StoredRows(blobs)) << Print(rows);
      EXPECT_EQ(RegionsOf(*computed), rows)
          << Print(RegionsOf(*computed)) << "\nstored: " << Print(rows);
      // htslib's rlen from REF and INFO/END gives bio2zarr's variant_length.
      EXPECT_EQ(RegionsOf(*from_ref), rows)
          << Print(RegionsOf(*from_ref)) << "\nstored: " << Print(rows);
      EXPECT_EQ(WarningsNaming(name + " (stored)"), before);
      uint64_t records = 0;
      int64_t max_end = INT64_MIN;
      for (size_t i = 0; i < rows.size(); ++i) {
        records += rows[i].records;
        max_end = std::max(max_end, rows[i].max_end);
        multi_row_chunks += i > 0 && rows[i].chunk == rows[i - 1].chunk;
      }
      EXPECT_EQ(records, stored->num_variants());
      auto m = stored->MaxEnd();
      ASSERT_TRUE(m.ok()) << m.status().ToString();
      ASSERT_TRUE(m->has_value());
      EXPECT_EQ(**m, max_end);
      EXPECT_EQ(stored->region_chunk_rows(), computed->region_chunk_rows());
      with_end += blobs.count("variant_END/.zarray") > 0;
      auto position =
          zarr::ZarrArray::Open(std::make_shared<io::MemoryBlobStore>(blobs), "variant_position");
      ASSERT_TRUE(position.ok());
      rechunked += position->meta().chunks[0] != stored->region_chunk_rows();
      ++stores;
    }
  }
  SetLogLevel(LogLevel::kInfo);
  EXPECT_EQ(stores, 23);
  EXPECT_GT(multi_row_chunks, 0);  // multi_contig_v500: contig changes inside chunks
  EXPECT_GT(with_end, 0);          // stores with INFO/END, whose rlen is not the REF length
  // vcztools' fixtures (upstream_*: variant_position chunked 3x coarser than call_*) count their
  // region_index chunks in call_* chunks, as vcztools reads it.
  EXPECT_EQ(rechunked, 4);
}

class VczRegionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fs::unique_path("omicsfs-regions-%%%%%%");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::shared_ptr<const Store> Write(const std::string& name, const testutil::VczSpec& spec) {
    const std::string path = (dir_ / name).string();
    Status st = testutil::WriteVczStore(path, spec);
    EXPECT_TRUE(st.ok()) << st.ToString();
    auto s = Store::Open(path);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : nullptr;
  }

  // Two contigs, chunks of 4: contig 0 runs into chunk 1, contig 1 starts inside it, contig 0
  // comes back in the last (edge) chunk; record 2 has INFO/END, record 5 a missing REF, record
  // 6 an END before POS (ignored, as htslib does), record 8 an END equal to POS.
  static testutil::VczSpec Base() {
    testutil::VczSpec v;
    v.contigs = {"chrA", "chrB"};
    v.contig = {0, 0, 0, 0, 0, 1, 1, 1, 0, 0};
    v.position = {100, 200, 300, 400, 500, 10, 20, 30, 900, 1000};
    v.ref = {"A", "ACGT", "G", "T", "CC", "", "A", "GGG", "T", "ACG"};
    v.end = {-1, -1, 5000, -1, -1, -1, 15, -1, 900, -1};
    v.length = {1, 4, 4701, 1, 2, 1, 1, 3, 1, 3};  // htslib's rlen of the same records
    v.chunk = 4;
    return v;
  }
  static Rows Expected() {
    return {{0, 0, 100, 400, 5000, 4},  // 300 + 4701 - 1
            {1, 0, 500, 500, 501, 1},
            {1, 1, 10, 30, 32, 3},  // 30 + 3 - 1
            {2, 0, 900, 1000, 1002, 2}};
  }

  fs::path dir_;
};

TEST_F(VczRegionsTest, ComputedFromLengthOrFromRefAndEnd) {
  auto with_length = Write("a.vcz", Base());
  testutil::VczSpec v = Base();
  v.length.clear();
  auto from_ref = Write("b.vcz", v);
  ASSERT_TRUE(with_length && from_ref);
  EXPECT_EQ(with_length->region_chunk_rows(), 4u);
  EXPECT_EQ(RegionsOf(*with_length), Expected()) << Print(RegionsOf(*with_length));
  EXPECT_EQ(RegionsOf(*from_ref), Expected()) << Print(RegionsOf(*from_ref));
  for (const auto& s : {with_length, from_ref}) {
    auto m = s->MaxEnd();
    ASSERT_TRUE(m.ok() && m->has_value());
    EXPECT_EQ(**m, 5000);
  }
  // Without END either: the REF lengths alone.
  v.end.clear();
  auto ref_only = Write("c.vcz", v);
  ASSERT_TRUE(ref_only);
  Rows rows = Expected();
  rows[0].max_end = 400;  // POS 400, REF T (200 + 4 - 1 is less)
  EXPECT_EQ(RegionsOf(*ref_only), rows) << Print(RegionsOf(*ref_only));
}

// A computed summary is handed to the keeper once; a later store given those bytes uses them
// without computing (here: rows it could not have computed), and bytes that do not account for
// every variant are set aside for a computation.
TEST_F(VczRegionsTest, AComputedSummaryIsKeptAndTakenBack) {
  auto first = Write("kept.vcz", Base());
  ASSERT_TRUE(first);
  std::string saved;
  int saves = 0;
  first->KeepRegionsWith({.load = [] { return std::optional<std::string>(); },
                          .save = [&](const std::string& b) { saved = b, ++saves; }});
  EXPECT_EQ(RegionsOf(*first), Expected());
  EXPECT_EQ(RegionsOf(*first), Expected());
  EXPECT_EQ(saves, 1);
  ASSERT_EQ(saved.size(), Expected().size() * 48);
  std::string marked = saved;
  const int64_t odd = 4242;
  std::memcpy(marked.data() + 1 * 48 + 4 * 8, &odd, 8);  // row 1's max_end
  auto second = Write("kept2.vcz", Base());
  ASSERT_TRUE(second);
  second->KeepRegionsWith({.load = [&] { return std::optional<std::string>(marked); },
                           .save = [&](const std::string&) { ++saves; }});
  Rows rows = Expected();
  rows[1].max_end = 4242;
  EXPECT_EQ(RegionsOf(*second), rows);
  EXPECT_EQ(saves, 1);
  auto third = Write("kept3.vcz", Base());
  ASSERT_TRUE(third);
  third->KeepRegionsWith(
      {.load = [&] { return std::optional<std::string>(saved.substr(48)); },  // a row short
       .save = [&](const std::string&) { ++saves; }});
  EXPECT_EQ(RegionsOf(*third), Expected());
  EXPECT_EQ(saves, 2);
}

// A region keeps the records it overlaps as bcftools -r does, END included where the store has
// no variant_length (record 2: POS 300, END 5000), contigs in the order named.
TEST_F(VczRegionsTest, RowsOverlappingUseEndWithoutVariantLength) {
  testutil::VczSpec v = Base();
  v.length.clear();
  for (const auto& s : {Write("len.vcz", Base()), Write("end.vcz", v)}) {
    ASSERT_TRUE(s);
    auto runs = s->RowsOverlapping({{0, 1000, 1100}, {1, 15, 25}});
    ASSERT_TRUE(runs.ok()) << runs.status().ToString();
    const std::vector<std::pair<uint64_t, uint64_t>> want = {{2, 3}, {9, 10}, {6, 7}};
    EXPECT_EQ(*runs, want);
  }
}

TEST_F(VczRegionsTest, AStoredIndexIsUsedAsItIs) {
  testutil::VczSpec v = Base();
  for (const auto& r : Expected()) {
    v.region_index.push_back(
        {int64_t(r.chunk), r.contig, r.first_pos, r.last_pos, r.max_end, int64_t(r.records)});
  }
  // A max_end in a middle chunk that the arrays do not give: only the first and last chunks are
  // checked against the arrays, so this row shows that the stored one is what Regions() returns.
  v.region_index[1][4] = 777;
  auto s = Write("stored.vcz", v);
  ASSERT_TRUE(s);
  Rows rows = Expected();
  rows[1].max_end = 777;
  EXPECT_EQ(RegionsOf(*s), rows) << Print(RegionsOf(*s));
  EXPECT_EQ(WarningsNaming((dir_ / "stored.vcz").string()), 0);
}

TEST_F(VczRegionsTest, ADamagedOrStaleIndexFallsBackWithAWarning) {
  struct Case {
    const char* name;
    std::function<void(testutil::VczSpec*)> damage;
    const char* why;
  };
  auto index = [](testutil::VczSpec* v) {
    for (const auto& r : Expected()) {
      v->region_index.push_back(
          {int64_t(r.chunk), r.contig, r.first_pos, r.last_pos, r.max_end, int64_t(r.records)});
    }
  };
  const std::vector<Case> cases = {
      {"chunk_out_of_range", [](testutil::VczSpec* v) { v->region_index[3][0] = 3; },
       "out of range"},
      {"negative_chunk", [](testutil::VczSpec* v) { v->region_index[0][0] = -1; }, "out of range"},
      {"contig_out_of_range", [](testutil::VczSpec* v) { v->region_index[2][1] = 2; },
       "contig 2 out of range"},
      {"records_short", [](testutil::VczSpec* v) { v->region_index[2][5] = 2; },
       "chunk 1: 3 records, the chunk holds 4"},
      {"records_long", [](testutil::VczSpec* v) { v->region_index[3][5] = 3; },
       "chunk 2: 3 records, the chunk holds 2"},
      {"row_missing", [](testutil::VczSpec* v) { v->region_index.pop_back(); },
       "chunk 2: 0 records"},
      {"out_of_order",
       [](testutil::VczSpec* v) { std::swap(v->region_index[0], v->region_index[3]); },
       "out of order"},
      {"stale_first_chunk", [](testutil::VczSpec* v) { v->region_index[0][4] = 400; },
       "chunk 0: rows"},
      {"stale_last_chunk", [](testutil::VczSpec* v) { v->region_index[3][2] = 901; },
       "chunk 2: rows"},
      {"too_many_rows",
       [](testutil::VczSpec* v) { v->region_index.resize(11, v->region_index[0]); },
       "11 rows for 10 variants"},
  };
  SetLogLevel(LogLevel::kError);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    testutil::VczSpec v = Base();
    index(&v);
    c.damage(&v);
    const std::string path = (dir_ / (std::string(c.name) + ".vcz")).string();
    auto s = Write(std::string(c.name) + ".vcz", v);
    ASSERT_TRUE(s);
    EXPECT_EQ(RegionsOf(*s), Expected()) << Print(RegionsOf(*s));
    EXPECT_EQ(WarningsNaming(path), 1);
    const std::string line = LastNaming(path);
    EXPECT_NE(line.find("region_index not used"), std::string::npos) << line;
    EXPECT_NE(line.find(c.why), std::string::npos) << line;
    // Kept: a second call neither recomputes nor warns again.
    auto first = s->Regions(), second = s->Regions();
    ASSERT_TRUE(first.ok() && second.ok());
    EXPECT_EQ(first->get(), second->get());
    EXPECT_EQ(WarningsNaming(path), 1);
  }
  // Wrong rank or columns; integers expected; a chunk that does not decode.
  const std::string wrong = (dir_ / "wrong.vcz").string();
  ASSERT_TRUE(testutil::WriteVczStore(wrong, Base()).ok());
  auto with_index = [&](const testutil::ZarrArraySpec& spec, const std::string& bytes,
                        const char* why) {
    SCOPED_TRACE(why);
    fs::remove_all(wrong + "/region_index");
    ASSERT_TRUE(testutil::WriteZarrArray(wrong, "region_index", spec, bytes).ok());
    const int before = WarningsNaming(wrong);
    auto s = Store::Open(wrong);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(RegionsOf(**s), Expected()) << Print(RegionsOf(**s));
    EXPECT_EQ(WarningsNaming(wrong), before + 1);
    EXPECT_NE(LastNaming(wrong).find(why), std::string::npos) << LastNaming(wrong);
  };
  testutil::ZarrArraySpec spec;
  spec.dtype = "<i4";
  spec.dimension_names = {"region_index_values", "region_index_fields"};
  spec.shape = spec.chunks = {4, 5};
  with_index(spec, std::string(4 * 5 * 4, '\0'), "shape 4 x 5, expected (rows, 6)");
  spec.shape = spec.chunks = {24};
  spec.dimension_names = {"region_index_values"};
  with_index(spec, std::string(24 * 4, '\0'), "shape 24, expected (rows, 6)");
  spec.dtype = "<f4";
  spec.shape = spec.chunks = {4, 6};
  spec.dimension_names = {"region_index_values", "region_index_fields"};
  with_index(spec, std::string(24 * 4, '\0'), "not integers");
  spec.dtype = "<i4";
  spec.compressor = "zstd";
  ASSERT_TRUE(
      testutil::WriteZarrArray(wrong, "region_index", spec, std::string(24 * 4, '\0')).ok());
  {
    std::ofstream garbage(wrong + "/region_index/0.0", std::ios::binary | std::ios::trunc);
    garbage << "not a zstd frame";
  }
  const int before = WarningsNaming(wrong);
  auto s = Store::Open(wrong);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(RegionsOf(**s), Expected());
  EXPECT_EQ(WarningsNaming(wrong), before + 1);
  SetLogLevel(LogLevel::kInfo);
}

TEST_F(VczRegionsTest, EmptyStoreHasNoMaxEnd) {
  testutil::VczSpec v;
  auto s = Write("empty.vcz", v);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->num_variants(), 0u);
  EXPECT_EQ(RegionsOf(*s), Rows());
  auto m = s->MaxEnd();
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_FALSE(m->has_value());
}

TEST_F(VczRegionsTest, OneComputationForConcurrentCallers) {
  auto s = Write("threads.vcz", Base());
  ASSERT_TRUE(s);
  std::vector<const Rows*> seen(8, nullptr);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] {
      auto r = s->Regions();
      if (r.ok()) seen[i] = r->get();
    });
  }
  for (auto& t : threads) t.join();
  for (const Rows* r : seen) {
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r, seen[0]);
  }
  EXPECT_EQ(*seen[0], Expected());
}

// A chunk of the arrays that cannot be read is an error naming the store, and is not kept: the
// next call computes again.
TEST_F(VczRegionsTest, AnUnreadableArrayIsAnErrorNotCached) {
  testutil::VczSpec v = Base();
  auto s = Write("unreadable.vcz", v);
  ASSERT_TRUE(s);
  const std::string chunk = (dir_ / "unreadable.vcz" / "variant_position" / "1").string();
  std::string good;
  {
    std::ifstream in(chunk, std::ios::binary);
    std::stringstream b;
    b << in.rdbuf();
    good = b.str();
  }
  {
    std::ofstream out(chunk, std::ios::binary | std::ios::trunc);
    out << "garbage";
  }
  auto bad = s->Regions();
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unreadable.vcz"), std::string::npos)
      << bad.status().ToString();
  {
    std::ofstream out(chunk, std::ios::binary | std::ios::trunc);
    out << good;
  }
  EXPECT_EQ(RegionsOf(*s), Expected());  // the failure was not kept
}

}  // namespace
}  // namespace omicsfs::formats::vcz
