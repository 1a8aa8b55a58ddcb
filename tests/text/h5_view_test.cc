// The HDF5 file view (text/h5_view.h): its bytes are the image with the renderer's chunks at the
// external extents (read whole and in odd pieces, across chunk and extent boundaries); the image
// is saved in index_dir and served from there by later views; a failing chunk fails only the
// reads that need it.
#include "text/h5_view.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <thread>

#include "testutil/mount_fixture.h"
#include "text/index_store.h"
#include "text/prefetcher.h"

namespace omicsfs::text {
namespace {

using io::h5::H5Plan;
using io::h5::H5Type;
using io::h5::H5Value;

H5Plan Plan(uint64_t n) {
  H5Plan p;
  p.AddGroup("/", {{"kind", H5Value::String("test")}});
  p.AddGroup("/m");
  p.AddExternal("/m/a", H5Type::kInt64, n);
  p.AddDataset("/m/names", H5Value::Strings({"x", "y", "z"}));
  p.AddExternal("/m/b", H5Type::kUInt32, 3 * n);
  return p;
}

// Dataset 0: element i is i·3 (int64); dataset 1: element i is i ^ 0x5a5a (uint32). Chunk 2 of
// dataset 1 fails when `fail` is set.
class TestRenderer : public CachingH5Renderer {
 public:
  TestRenderer(cache::CachePool* pool, uint64_t n) : CachingH5Renderer(pool), n_(n) {}
  uint64_t ChunkElements(size_t d) const override { return d == 0 ? 1000 : 777; }
  std::atomic<bool> fail{false};
  mutable std::atomic<int> renders{0};

 protected:
  Status Render(size_t d, uint64_t e0, uint64_t e1, std::string* out) const override {
    ++renders;
    if (fail && d == 1 && e0 == 2 * 777) return CorruptError("store damaged here");
    e1 = std::min(e1, d == 0 ? n_ : 3 * n_);
    for (uint64_t i = e0; i < e1; ++i) {
      if (d == 0) {
        const int64_t v = int64_t(i) * 3;
        out->append(reinterpret_cast<const char*>(&v), 8);
      } else {
        const uint32_t v = uint32_t(i) ^ 0x5a5a;
        out->append(reinterpret_cast<const char*>(&v), 4);
      }
    }
    return OkStatus();
  }

 private:
  uint64_t n_;
};

std::string Expected(uint64_t n) {
  auto im = io::h5::BuildImage(Plan(n), "t.h5");
  EXPECT_TRUE(im.ok()) << im.status().ToString();
  std::string f(im->size, '\0');
  for (const auto& s : im->segments)
    std::memcpy(f.data() + s.offset, s.bytes.data(), s.bytes.size());
  for (uint64_t i = 0; i < n; ++i) {
    const int64_t v = int64_t(i) * 3;
    std::memcpy(f.data() + im->external[0].offset + 8 * i, &v, 8);
  }
  for (uint64_t i = 0; i < 3 * n; ++i) {
    const uint32_t v = uint32_t(i) ^ 0x5a5a;
    std::memcpy(f.data() + im->external[1].offset + 4 * i, &v, 4);
  }
  return f;
}

std::string ReadAll(const ByteView& v, uint64_t offset, uint64_t length) {
  auto pieces = v.Read(offset, length);
  EXPECT_TRUE(pieces.ok()) << pieces.status().ToString();
  std::string out;
  if (!pieces.ok()) return out;
  for (const auto& p : *pieces) out.append(p.buffer->data() + p.offset, p.length);
  return out;
}

TEST(H5FileView, ServesTheImageAndTheRenderedArrays) {
  const uint64_t n = 10000;
  cache::CachePool pool(64 << 20);
  auto r = std::make_shared<TestRenderer>(&pool, n);
  auto view = std::make_shared<const H5FileView>([] { return Plan(n); }, r, SizingOptions{},
                                                 "t.h5 of here");
  EXPECT_FALSE(view->SizeKnown());
  const std::string want = Expected(n);
  auto size = view->Size();
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  EXPECT_TRUE(view->SizeKnown());
  ASSERT_EQ(*size, want.size());
  EXPECT_EQ(r->renders, 0);  // sized with no array rendered
  EXPECT_EQ(ReadAll(*view, 0, want.size() + 100), want);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 300; ++i) {
    const uint64_t at = rng() % want.size();
    const uint64_t len = 1 + rng() % 20000;
    ASSERT_EQ(ReadAll(*view, at, len), want.substr(at, len)) << at << " +" << len;
  }
  EXPECT_TRUE(ReadAll(*view, want.size(), 10).empty());
}

// A reader going through an array in order has the next chunks made in the background; the
// bytes are the same.
TEST(H5FileView, ReadAheadForSequentialReaders) {
  const uint64_t n = 10000;
  cache::CachePool pool(64 << 20);
  Prefetcher prefetcher;
  prefetcher.Start(2);
  auto r = std::make_shared<TestRenderer>(&pool, n);
  SizingOptions sizing;
  sizing.prefetcher = &prefetcher;
  sizing.readahead_bytes = 4 * 777 * 4;  // four chunks of dataset 1
  auto view = std::make_shared<const H5FileView>([] { return Plan(n); }, r, sizing, "t.h5");
  const std::string want = Expected(n);
  auto b = view->Extent(1);
  ASSERT_TRUE(b.ok());
  const uint64_t chunk = 777 * 4;
  for (uint64_t k = 0; k < 2; ++k)
    EXPECT_EQ(ReadAll(*view, b->offset + k * chunk, chunk),
              want.substr(b->offset + k * chunk, chunk));
  // Chunks 2..5 are made without being asked for.
  for (int i = 0; i < 200 && r->renders < 6; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GE(r->renders, 6);
  const int before = r->renders;
  EXPECT_EQ(ReadAll(*view, b->offset + 2 * chunk, 3 * chunk),
            want.substr(b->offset + 2 * chunk, 3 * chunk));
  EXPECT_LE(r->renders - before, 4);  // at most the read-ahead of later chunks, none of these
}

TEST(H5FileView, AFailingChunkFailsOnlyItsReads) {
  const uint64_t n = 10000;
  cache::CachePool pool(64 << 20);
  auto r = std::make_shared<TestRenderer>(&pool, n);
  r->fail = true;
  auto view = std::make_shared<const H5FileView>([] { return Plan(n); }, r, SizingOptions{},
                                                 "t.h5 of here");
  const std::string want = Expected(n);
  auto b = view->Extent(1);
  ASSERT_TRUE(b.ok());
  const uint64_t bad = b->offset + 2 * 777 * 4;
  auto failed = view->Read(bad + 10, 100);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("/m/b elements [1554, 2331)"), std::string::npos)
      << failed.status().message();
  EXPECT_NE(failed.status().message().find("store damaged here"), std::string::npos);
  // The metadata and the other chunks are still served.
  auto a = view->Extent(0);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(ReadAll(*view, 0, a->offset), want.substr(0, a->offset));
  EXPECT_EQ(ReadAll(*view, b->offset, 2 * 777 * 4), want.substr(b->offset, 2 * 777 * 4));
}

TEST(H5FileView, TheImagePersistsAndIsReused) {
  const uint64_t n = 500;
  testutil::TempDir dir;
  IndexStore index(dir.path());
  cache::CachePool pool(64 << 20);
  SizingOptions sizing;
  sizing.index = &index;
  sizing.index_key = "store X\nview t.h5";
  auto r = std::make_shared<TestRenderer>(&pool, n);
  auto first = std::make_shared<const H5FileView>([] { return Plan(n); }, r, sizing, "t.h5");
  auto key = first->PersistedKey();
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  EXPECT_TRUE(key->starts_with("store X\nview t.h5\nh5 plan ")) << *key;
  auto blob = index.LoadBlob(*key);
  ASSERT_TRUE(blob.has_value());
  auto image = io::h5::H5Image::Parse(*blob);
  ASSERT_TRUE(image.ok());
  // A later view serves what index_dir holds (here a marked copy), not an image made anew.
  image->segments[0].bytes[0] ^= 1;
  index.SaveBlob(*key, image->Serialize());
  auto second = std::make_shared<const H5FileView>([] { return Plan(n); }, r, sizing, "t.h5");
  const std::string want = Expected(n);
  const std::string got = ReadAll(*second, 0, want.size());
  ASSERT_EQ(got.size(), want.size());
  EXPECT_NE(got[image->segments[0].offset], want[image->segments[0].offset]);
  // Another plan is another key: never served the image of this one.
  auto other = std::make_shared<const H5FileView>([] { return Plan(n + 1); }, r, sizing, "t.h5");
  auto other_key = other->PersistedKey();
  ASSERT_TRUE(other_key.ok());
  EXPECT_NE(*other_key, *key);
  EXPECT_EQ(*other->Size(), Expected(n + 1).size());
}

}  // namespace
}  // namespace omicsfs::text
