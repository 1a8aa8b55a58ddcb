#include "formats/bpcells/fragments.h"

#include <gtest/gtest.h>

#include <random>
#include <tuple>

#include "testutil/store_writer.h"
#include "text/bed_source.h"

namespace omicsfs::formats::bpcells {
namespace {

using testutil::Fragment;
using testutil::FragmentsSpec;

FragmentsSpec Sample(bool packed, int version) {
  FragmentsSpec f;
  f.chr_names = {"chr1", "chr2", "chrEmpty", "chrX"};
  f.cell_names = {"c0", "cell with space", "célula", "c3"};
  std::mt19937 rng(4);
  f.by_chr.resize(4);
  for (size_t c : {0u, 1u, 3u}) {
    uint32_t pos = c == 3 ? 4000000000u : 0u;  // coordinates beyond 2^31 on chrX
    for (int i = 0; i < (c == 0 ? 1000 : 300); ++i) {
      pos += rng() % 200;
      uint32_t len = rng() % 10 == 0 ? 0 : 50 + rng() % 500;
      f.by_chr[c].push_back({pos, pos + len, static_cast<uint32_t>(rng() % 4)});
    }
  }
  f.by_chr[1].insert(f.by_chr[1].begin(), Fragment{0, 0, 1});  // zero-length at 0
  f.physical_order = {3, 1, 0, 2};                             // not ID order
  f.packed = packed;
  f.format_version = version;
  return f;
}

class FragmentsTest : public ::testing::TestWithParam<std::pair<bool, int>> {};

TEST_P(FragmentsTest, ReadsEveryChromosomeRange) {
  auto spec = Sample(GetParam().first, GetParam().second);
  auto f = Fragments::Open(testutil::ToMemoryStore(testutil::MakeFragmentsStore(spec)));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ((*f)->chr_names(), spec.chr_names);
  EXPECT_EQ((*f)->cell_names(), spec.cell_names);
  for (size_t c = 0; c < spec.chr_names.size(); ++c) {
    auto [b, e] = (*f)->ChrRange(c);
    ASSERT_EQ(e - b, spec.by_chr[c].size());
    FragmentRange r;
    ASSERT_TRUE((*f)->Read(b, e, &r).ok());
    for (size_t i = 0; i < spec.by_chr[c].size(); ++i) {
      ASSERT_EQ(r.start[i], spec.by_chr[c][i].start);
      ASSERT_EQ(r.end[i], spec.by_chr[c][i].end);
      ASSERT_EQ(r.cell[i], spec.by_chr[c][i].cell);
    }
  }
}

TEST_P(FragmentsTest, BedAndTenXViewsMatchAReferenceRendering) {
  auto spec = Sample(GetParam().first, GetParam().second);
  auto f = Fragments::Open(testutil::ToMemoryStore(testutil::MakeFragmentsStore(spec)));
  ASSERT_TRUE(f.ok());
  for (auto style : {text::BedSource::Style::kBed, text::BedSource::Style::kTenX}) {
    std::string want;
    for (size_t c = 0; c < spec.chr_names.size(); ++c) {
      for (const Fragment& fr : spec.by_chr[c]) {
        uint32_t end = style == text::BedSource::Style::kTenX ? fr.end - 1 : fr.end;  // unsigned
        want += spec.chr_names[c] + "\t" + std::to_string(fr.start) + "\t" + std::to_string(end) +
                "\t" + spec.cell_names[fr.cell] + "\n";
      }
    }
    text::BedSource src(*f, style, "fragments.bed");
    std::string got;
    for (uint64_t k = 0; k < src.ChunkCount(); ++k) ASSERT_TRUE(src.RenderChunk(k, &got).ok());
    EXPECT_TRUE(got == want);
    EXPECT_NE(got.find("chr2\t0\t" +
                       std::string(style == text::BedSource::Style::kTenX ? "4294967295" : "0")),
              std::string::npos);
  }
}

// A region slice keeps exactly the fragments overlapping a region as tabix sees it, found by the
// seek on start and end_max: random regions (deep into chromosomes, touching, past 2^32) against
// a brute-force filter of the spec, with cells chosen too.
TEST_P(FragmentsTest, RegionSlicesAreTheOverlappingFragments) {
  auto spec = Sample(GetParam().first, GetParam().second);
  for (int i = 0; i < 40; ++i) {  // long fragments reaching over later blocks
    spec.by_chr[0][100 + 13 * i].end = spec.by_chr[0][100 + 13 * i].start + 20000 + 1000 * i;
  }
  auto root = Fragments::Open(testutil::ToMemoryStore(testutil::MakeFragmentsStore(spec)));
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    FragmentSubset subset;
    subset.regions.emplace(spec.chr_names.size());
    const int n = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < n; ++k) {
      const size_t c = rng() % spec.chr_names.size();
      const auto& v = spec.by_chr[c];
      uint64_t at = v.empty() ? 0 : v[rng() % v.size()].start;
      uint64_t b = at > 3000 ? at - rng() % 3000 : 0, e = at + rng() % 3000;
      if (trial % 17 == 0) e = UINT64_MAX;  // CHR:BEG, to the end
      (*subset.regions)[c].push_back({b, e});
      if (trial % 5 == 0) (*subset.regions)[c].push_back({e, e + 100});  // touching
    }
    if (trial % 3 == 0) subset.cells = std::vector<uint32_t>{2, 0};
    auto slice = Fragments::Slice(*root, subset);
    ASSERT_TRUE(slice.ok()) << slice.status().ToString();
    std::vector<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>> got, want;
    for (const auto& run : (*slice)->runs()) {
      FragmentRange r;
      ASSERT_TRUE((*slice)->Read(run.begin, run.end, &r).ok());
      for (size_t i = 0; i < r.start.size(); ++i)
        got.emplace_back(run.chr, r.start[i], r.end[i], r.cell[i]);
    }
    for (size_t c = 0; c < spec.chr_names.size(); ++c) {
      for (const auto& fr : spec.by_chr[c]) {
        bool hit = false;
        for (const auto& q : (*subset.regions)[c])
          hit = hit || (fr.start < q.end && fr.end > q.begin);
        int32_t cell = static_cast<int32_t>(fr.cell);
        if (subset.cells) cell = fr.cell == 2 ? 0 : fr.cell == 0 ? 1 : -1;
        if (hit && cell >= 0) want.emplace_back(c, fr.start, fr.end, static_cast<uint32_t>(cell));
      }
    }
    ASSERT_EQ(got, want) << "trial " << trial;
  }
}

INSTANTIATE_TEST_SUITE_P(All, FragmentsTest,
                         ::testing::Values(std::make_pair(true, 2), std::make_pair(true, 1),
                                           std::make_pair(false, 2), std::make_pair(false, 1)));

TEST(FragmentsCorruption, BadCellChrPtrAndCounts) {
  auto spec = Sample(false, 2);
  auto store = testutil::MakeFragmentsStore(spec);
  auto cells = store.Get<uint32_t>("cell");
  cells[7] = 99;
  store.Put("cell", cells);
  auto f = Fragments::Open(testutil::ToMemoryStore(store));
  ASSERT_TRUE(f.ok());
  FragmentRange r;
  Status st = (*f)->Read(0, (*f)->size(), &r);
  EXPECT_EQ(st.code(), ErrorCode::kCorrupt);
  EXPECT_NE(st.message().find("fragment 7"), std::string::npos) << st.message();

  auto bad_ptr = testutil::MakeFragmentsStore(spec);
  auto ptr = bad_ptr.Get<uint64_t>("chr_ptr");
  ptr[1] = 1u << 30;
  bad_ptr.Put("chr_ptr", ptr);
  EXPECT_EQ(Fragments::Open(testutil::ToMemoryStore(bad_ptr)).status().code(), ErrorCode::kCorrupt);

  auto odd = testutil::MakeFragmentsStore(spec);
  ptr = odd.Get<uint64_t>("chr_ptr");
  ptr.pop_back();
  odd.Put("chr_ptr", ptr);
  EXPECT_EQ(Fragments::Open(testutil::ToMemoryStore(odd)).status().code(), ErrorCode::kCorrupt);

  auto packed = testutil::MakeFragmentsStore(Sample(true, 2));
  packed.arrays.erase("start_starts");
  EXPECT_EQ(Fragments::Open(testutil::ToMemoryStore(packed)).status().code(), ErrorCode::kCorrupt);
}

}  // namespace
}  // namespace omicsfs::formats::bpcells

namespace omicsfs::formats::bpcells {
namespace {

// Found by fuzz_bpcells: a packed store whose chr_ptr claims ~2^64 fragments made the block
// count overflow to 0, so Open accepted it and Read tried to allocate 2^64 values.
TEST(FragmentsCorruption, HugeChrPtrDoesNotOverflowTheBlockCount) {
  auto store = testutil::MakeFragmentsStore(Sample(true, 2));
  auto ptr = store.Get<uint64_t>("chr_ptr");
  ptr[1] = UINT64_MAX - 5;
  store.Put("chr_ptr", ptr);
  EXPECT_EQ(Fragments::Open(testutil::ToMemoryStore(store)).status().code(), ErrorCode::kCorrupt);
}

}  // namespace
}  // namespace omicsfs::formats::bpcells
