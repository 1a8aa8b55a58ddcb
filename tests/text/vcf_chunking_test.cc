// VCF chunking: rendering a corpus store in many small record ranges (sharing decoded Zarr
// chunks through the cache) gives exactly the bytes of rendering it in whole variants-chunks.
#include <gtest/gtest.h>

#include "cache/cache_pool.h"
#include "formats/vcz/store.h"
#include "text/vcf_source.h"
#include "util/fs.h"

namespace omicsfs::text {
namespace {

std::string RenderAll(const VcfSource& s) {
  std::string out;
  for (uint64_t k = 0; k < s.ChunkCount(); ++k) {
    Status st = s.RenderChunk(k, &out);
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  return out;
}

TEST(VcfChunking, SmallRangesEqualWholeChunks) {
  const fs::path corpus = fs::path(OMICSFS_CORPUS_DIR) / "vcf-zarr";
  ASSERT_TRUE(fs::is_directory(corpus)) << corpus;
  int stores = 0, splits = 0;
  for (fs::directory_iterator it(corpus), end; it != end; ++it) {
    if (!fs::is_directory(it->path())) continue;
    for (fs::directory_iterator jt(it->path()), jend; jt != jend; ++jt) {
      if (jt->path().extension() != ".vcz") continue;
      cache::CachePool pool(64 << 20);
      auto plain = formats::vcz::Store::Open(jt->path().string());
      auto cached = formats::vcz::Store::Open(jt->path().string(), {}, &pool);
      ASSERT_TRUE(plain.ok() && cached.ok()) << jt->path();
      bool split = false;
      for (auto view : {VcfSource::View::kFull, VcfSource::View::kSites}) {
        VcfSource whole(*plain, view, "v", uint64_t{1} << 40);
        VcfSource small(*cached, view, "v", 256);
        split = split || small.ChunkCount() > whole.ChunkCount();
        EXPECT_EQ(RenderAll(small), RenderAll(whole)) << jt->path();
      }
      if (split) {
        EXPECT_GT(pool.Stats().hits, 0u) << jt->path();  // ranges shared decoded chunks
      }
      splits += split;
      ++stores;
    }
  }
  EXPECT_GE(stores, 20);
  EXPECT_GE(splits, 15);  // most corpus stores have variants-chunks of more than one record
}

}  // namespace
}  // namespace omicsfs::text
