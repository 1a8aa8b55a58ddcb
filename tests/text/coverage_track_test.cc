// The pile-up of the coverage tracks (text/coverage_track.h) against a per-base count: random
// fragments with tied starts, 1-bp and zero-length fragments, long ones, chunks cut anywhere
// and several contigs; runs of equal depth merged, zero depth absent. Fragments out of order,
// and a contig met again after another, are refused.
#include "text/coverage_track.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace omicsfs::text {
namespace {

struct Frag {
  uint32_t contig;
  int64_t begin, end;
};

// Runs of a per-base depth map (position → depth), equal depths merged, zeros dropped.
std::vector<TrackRun> Runs(const std::map<int64_t, uint32_t>& depth) {
  std::vector<TrackRun> out;
  for (const auto& [pos, d] : depth) {
    if (d == 0) continue;
    if (!out.empty() && out.back().end == pos && out.back().depth == d) {
      out.back().end = static_cast<uint32_t>(pos + 1);
    } else {
      out.push_back({static_cast<uint32_t>(pos), static_cast<uint32_t>(pos + 1), d});
    }
  }
  return out;
}

Result<Piles> Pile(const std::vector<std::string>& names, const std::vector<Frag>& frags,
                   std::mt19937_64& rng) {
  Piler piler(&names);
  for (size_t i = 0; i < frags.size();) {
    ChunkSpans chunk;  // a chunk of one contig, as BedSource cuts them, of random length
    const uint32_t c = frags[i].contig;
    chunk.contigs.push_back(names[c]);
    const size_t n = 1 + rng() % 7;
    for (size_t k = 0; k < n && i < frags.size() && frags[i].contig == c; ++k, ++i)
      chunk.records.push_back({0, frags[i].begin, frags[i].end, 0});
    if (Status st = piler.Add(chunk); !st.ok()) return st;
  }
  return piler.Finish();
}

TEST(Piler, EqualsAPerBaseCount) {
  const std::vector<std::string> names{"chr1", "chr2", "chrEmpty", "chrX"};
  std::mt19937_64 rng(38);
  for (int round = 0; round < 200; ++round) {
    std::vector<Frag> frags;
    for (uint32_t c : {0u, 1u, 3u}) {
      int64_t pos = rng() % 3;
      const int n = static_cast<int>(rng() % 40);
      for (int i = 0; i < n; ++i) {
        pos += rng() % 4;                                                        // ties
        const int64_t len = rng() % 10 == 0 ? static_cast<int64_t>(rng() % 200)  // long
                                            : static_cast<int64_t>(rng() % 4);   // 0, 1-bp, short
        frags.push_back({c, pos, pos + len});
      }
    }
    std::vector<std::map<int64_t, uint32_t>> cov(names.size()), ins(names.size());
    uint64_t lines = 0;
    for (const Frag& f : frags) {
      ++lines;
      if (f.end <= f.begin) continue;
      for (int64_t p = f.begin; p < f.end; ++p) ++cov[f.contig][p];
      ++ins[f.contig][f.begin];
      ++ins[f.contig][f.end - 1];
    }
    auto piles = Pile(names, frags, rng);
    ASSERT_TRUE(piles.ok()) << piles.status().ToString();
    EXPECT_EQ(piles->lines, lines);
    for (size_t c = 0; c < names.size(); ++c) {
      EXPECT_EQ(piles->contigs[c].coverage, Runs(cov[c])) << "round " << round << " " << names[c];
      EXPECT_EQ(piles->contigs[c].insertions, Runs(ins[c])) << "round " << round << " " << names[c];
    }
    EXPECT_TRUE(piles->contigs[2].coverage.empty());
  }
}

TEST(Piler, AZeroLengthFragmentCountsAsALineOnly) {
  const std::vector<std::string> names{"chr1"};
  std::mt19937_64 rng(1);
  auto piles = Pile(names, {{0, 0, 0}, {0, 5, 5}, {0, 5, 6}}, rng);
  ASSERT_TRUE(piles.ok());
  EXPECT_EQ(piles->lines, 3u);
  EXPECT_EQ(piles->contigs[0].max_end, 6u);
  EXPECT_EQ(piles->contigs[0].coverage, (std::vector<TrackRun>{{5, 6, 1}}));
  EXPECT_EQ(piles->contigs[0].insertions, (std::vector<TrackRun>{{5, 6, 2}}));  // both cuts
}

TEST(Piler, RefusesFragmentsOutOfOrder) {
  const std::vector<std::string> names{"chr1", "chr2"};
  std::mt19937_64 rng(2);
  auto unsorted = Pile(names, {{0, 10, 20}, {0, 5, 8}}, rng);
  ASSERT_FALSE(unsorted.ok());
  EXPECT_NE(unsorted.status().message().find("out of order"), std::string::npos);
  Piler piler(&names);
  ChunkSpans a, b;
  a.contigs = {"chr1"};
  a.records = {{0, 1, 2, 0}};
  b.contigs = {"chr2"};
  b.records = {{0, 1, 2, 0}};
  ASSERT_TRUE(piler.Add(a).ok());
  ASSERT_TRUE(piler.Add(b).ok());
  EXPECT_FALSE(piler.Add(a).ok());  // chr1 again, after chr2
}

TEST(CpmValue, IsTheFloatNearestTheDoubleQuotient) {
  EXPECT_EQ(CpmValue(3, 7), static_cast<float>(3e6 / 7.0));
  EXPECT_EQ(CpmValue(1, 1000000), 1.0f);
  EXPECT_EQ(CpmValue(UINT32_MAX, 3), static_cast<float>(double{UINT32_MAX} * 1e6 / 3));
}

}  // namespace
}  // namespace omicsfs::text
