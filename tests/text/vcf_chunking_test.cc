// VCF chunking: rendering a corpus store in many small record ranges (sharing decoded Zarr
// chunks through the cache) gives exactly the bytes of rendering it in whole variants-chunks.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "cache/cache_pool.h"
#include "formats/vcz/store.h"
#include "io/local/local_space.h"
#include "io/memory_blob_store.h"
#include "io/space_blob_store.h"
#include "text/vcf_source.h"
#include "util/fs.h"

namespace omicsfs::text {
namespace {

// Every chunk rendered; and measured by the sizing pass to exactly its rendered length.
std::string RenderAll(const VcfSource& s) {
  std::string out;
  for (uint64_t k = 0; k < s.ChunkCount(); ++k) {
    std::string chunk;
    Status st = s.RenderChunk(k, &chunk);
    EXPECT_TRUE(st.ok()) << st.ToString();
    auto measured = s.MeasureChunk(k);
    EXPECT_TRUE(measured.ok()) << measured.status().ToString();
    if (measured.ok() && measured->has_value()) {
      EXPECT_EQ(**measured, chunk.size()) << s.Describe() << " chunk " << k;
    }
    out += chunk;
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

// A uint64 FORMAT field (vcf2zarr writes signed types; other writers need not) is written as
// integers, its full range included: it was once written through the float path.
TEST(VcfTypes, UnsignedSixtyFourBitFieldsAreIntegers) {
  const fs::path root = fs::path(OMICSFS_CORPUS_DIR) / "vcf-zarr/sample/sample.vcz";
  std::map<std::string, std::string> blobs;
  for (fs::recursive_directory_iterator it(root), end; it != end; ++it) {
    if (!fs::is_regular_file(it->path())) continue;
    std::ifstream in(it->path().string(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    blobs[fs::relative(it->path(), root).generic_string()] = bytes.str();
  }
  blobs.erase(".zmetadata");  // consolidated metadata would not list the new array
  blobs["call_XU/.zarray"] =
      R"({"chunks":[9,3],"compressor":null,"dimension_separator":"/","dtype":"<u8",)"
      R"("fill_value":0,"filters":null,"order":"C","shape":[9,3],"zarr_format":2})";
  blobs["call_XU/.zattrs"] =
      R"({"_ARRAY_DIMENSIONS":["variants","samples"],"description":"unsigned"})";
  std::string chunk(27 * 8, '\0');
  for (uint64_t i = 0; i < 27; ++i) {
    const uint64_t v = i == 26 ? UINT64_MAX : i * 1000 + 7;
    std::memcpy(&chunk[i * 8], &v, 8);
  }
  blobs["call_XU/0/0"] = chunk;
  // And a signed field with negatives, missing (-1) and fill (-2) values: lengths of every kind.
  blobs["call_XS/.zarray"] =
      R"({"chunks":[9,3,2],"compressor":null,"dimension_separator":"/","dtype":"<i4",)"
      R"("fill_value":-2,"filters":null,"order":"C","shape":[9,3,2],"zarr_format":2})";
  blobs["call_XS/.zattrs"] =
      R"({"_ARRAY_DIMENSIONS":["variants","samples","FORMAT_XS_dim"],"description":"signed"})";
  const int32_t kinds[] = {-1, -7777, 123456789, -2, 10000, INT32_MIN, 100000000, 0, 9999};
  std::string signed_chunk(54 * 4, '\0');
  for (int i = 0; i < 54; ++i) std::memcpy(&signed_chunk[i * 4], &kinds[(i * 5) % 9], 4);
  blobs["call_XS/0/0/0"] = signed_chunk;
  blobs["call_XT/.zarray"] =
      R"({"chunks":[9,3],"compressor":null,"dimension_separator":"/","dtype":"<i2",)"
      R"("fill_value":-2,"filters":null,"order":"C","shape":[9,3],"zarr_format":2})";
  blobs["call_XT/.zattrs"] =
      R"({"_ARRAY_DIMENSIONS":["variants","samples"],"description":"one signed value"})";
  const int16_t one[] = {-2, -1, -32768, 10000, 7, -2, 9999, 0, -300};
  std::string one_chunk(27 * 2, '\0');
  for (int i = 0; i < 27; ++i) std::memcpy(&one_chunk[i * 2], &one[(i * 7) % 9], 2);
  blobs["call_XT/0/0"] = one_chunk;
  auto store = formats::vcz::Store::Open(std::make_shared<io::MemoryBlobStore>(std::move(blobs)));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const std::string vcf = RenderAll(VcfSource(*store, VcfSource::View::kFull, "v"));
  EXPECT_NE(vcf.find("##FORMAT=<ID=XU,Number=1,Type=Integer"), std::string::npos);
  EXPECT_NE(vcf.find(":1007\t"), std::string::npos);
  EXPECT_NE(vcf.find(":2007\n"), std::string::npos);
  EXPECT_NE(vcf.find(":18446744073709551615\n"), std::string::npos) << vcf.substr(vcf.size() - 300);
  EXPECT_NE(vcf.find("-2147483648"), std::string::npos);
  EXPECT_NE(vcf.find(",-7777"), std::string::npos);
  EXPECT_NE(vcf.find(":-32768"), std::string::npos);
}

// A blob store that asks for parallel reads (as remote ones do) over a corpus store: each chunk
// Get waits (up to 1 s) for a second Get to be in flight, and the highest number in flight is
// kept; one chunk key can be made to fail.
class ConcurrentBlobs : public io::BlobStore {
 public:
  explicit ConcurrentBlobs(const std::string& dir)
      : base_(std::make_shared<io::LocalByteSpace>(dir)) {}
  const std::string& Describe() const override { return base_.Describe(); }
  Result<std::vector<std::string>> List(const std::string& prefix) const override {
    return base_.List(prefix);
  }
  unsigned Parallelism() const override { return 8; }
  Result<std::optional<std::string>> Get(const std::string& key) const override {
    const bool chunk = key.find("/.") == std::string::npos && key.find('/') != std::string::npos;
    if (chunk) {
      std::unique_lock<std::mutex> lock(mu_);
      max_in_flight_ = std::max(max_in_flight_, ++in_flight_);
      cv_.notify_all();
      cv_.wait_for(lock, std::chrono::seconds(1), [&] { return max_in_flight_ >= 2; });
      --in_flight_;
    }
    if (key == fail_) return IoError("injected failure of " + key, EIO);
    return base_.Get(key);
  }
  int max_in_flight() const {
    std::lock_guard<std::mutex> lock(mu_);
    return max_in_flight_;
  }
  std::string fail_;

 private:
  io::SpaceBlobStore base_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable int in_flight_ = 0, max_in_flight_ = 0;
};

TEST(VcfChunking, ARemoteStoreFetchesARangesArraysConcurrently) {
  const std::string dir = std::string(OMICSFS_CORPUS_DIR) + "/vcf-zarr/sample/sample.vcz";
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  auto plain = formats::vcz::Store::Open(dir);
  auto blobs = std::make_shared<ConcurrentBlobs>(dir);
  auto parallel = formats::vcz::Store::Open(blobs);
  ASSERT_TRUE(plain.ok() && parallel.ok()) << parallel.status().ToString();
  const std::string text = RenderAll(VcfSource(*plain, VcfSource::View::kFull, "v"));
  EXPECT_EQ(RenderAll(VcfSource(*parallel, VcfSource::View::kFull, "v")), text);
  EXPECT_GE(blobs->max_in_flight(), 2);

  // A failed array fails the range with its own error; the others' reads are waited for.
  auto failing = std::make_shared<ConcurrentBlobs>(dir);
  failing->fail_ = "call_DP/0/0";
  auto broken = formats::vcz::Store::Open(failing);
  ASSERT_TRUE(broken.ok()) << broken.status().ToString();
  std::string chunk;
  Status st =
      VcfSource(*broken, VcfSource::View::kFull, "v").RenderChunk(1, &chunk);  // 0: the header
  EXPECT_EQ(st.code(), ErrorCode::kIo) << st.ToString();
  EXPECT_NE(st.message().find("injected failure of call_DP/0/0"), std::string::npos)
      << st.ToString();
}

}  // namespace
}  // namespace omicsfs::text
