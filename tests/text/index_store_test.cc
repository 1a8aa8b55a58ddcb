// Persisted size indexes: round trip, rejection of foreign/damaged files, and garbage collection
// of files unused for longer than the limit (every load refreshes a file's mtime).
#include "text/index_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "util/fs.h"

namespace omicsfs::text {
namespace {

class IndexStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fs::unique_path("omicsfs-idx-%%%%%%");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static void Age(const fs::path& p, int days) {
    struct timespec t[2];
    t[0].tv_sec = t[1].tv_sec = ::time(nullptr) - days * 86400;
    t[0].tv_nsec = t[1].tv_nsec = 0;
    ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), t, 0), 0);
  }
  std::vector<std::string> Files() const {
    std::vector<std::string> out;
    for (auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  fs::path dir_;
};

TEST_F(IndexStoreTest, RoundTripAndRejections) {
  IndexStore s(dir_.string());
  s.Save("key a", {1, 2, 3});
  EXPECT_EQ(s.Load("key a", 3), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_FALSE(s.Load("key a", 4).has_value());  // another chunk count
  EXPECT_FALSE(s.Load("key b", 3).has_value());
  EXPECT_FALSE(IndexStore(dir_.string(), /*rebuild=*/true).Load("key a", 3).has_value());
  for (const auto& f : Files()) std::ofstream(dir_ / f, std::ios::binary | std::ios::app) << "x";
  EXPECT_FALSE(s.Load("key a", 3).has_value());  // checksum/length
}

// Files written before the XXH3 framing (magic OMXIDX01, FNV-1a checksum) still load; a byte of
// either framing flipped in the payload is rejected.
TEST_F(IndexStoreTest, EarlierFnvFramingStillLoadsAndBothRejectDamage) {
  IndexStore s(dir_.string());
  s.SaveBlob("blob key", "payload bytes");
  ASSERT_EQ(Files().size(), 1u);
  const fs::path path = dir_ / Files()[0];
  std::string d;
  {
    std::ifstream in(path, std::ios::binary);
    d.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_EQ(d.compare(0, 8, "OMXIDX02"), 0);
  auto write = [&](const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  };
  std::string old = d;
  old[7] = '1';
  const uint64_t sum = Fnv1a(std::string_view(old).substr(0, old.size() - 8));
  std::memcpy(old.data() + old.size() - 8, &sum, 8);
  write(old);
  EXPECT_EQ(s.LoadBlob("blob key"), std::optional<std::string>("payload bytes"));
  for (std::string bytes : {old, d}) {
    bytes[bytes.size() - 10] ^= 1;  // the payload's last byte but one
    write(bytes);
    EXPECT_FALSE(s.LoadBlob("blob key").has_value());
  }
  write(d);
  EXPECT_EQ(s.LoadBlob("blob key"), std::optional<std::string>("payload bytes"));
}

TEST_F(IndexStoreTest, GarbageCollectionRemovesOnlyOldIndexFiles) {
  IndexStore s(dir_.string());
  s.Save("used", {7});
  s.Save("stale", {8});
  std::ofstream(dir_ / "0123456789abcdef.csr") << "old transposed copy";
  std::ofstream(dir_ / "notes.txt") << "not ours";
  ASSERT_EQ(Files().size(), 4u);
  for (const auto& f : Files()) Age(dir_ / f, 40);
  ASSERT_TRUE(s.Load("used", 1).has_value());  // a use refreshes it
  EXPECT_EQ(s.CollectGarbage(std::chrono::hours(24 * 30)), 2u);
  EXPECT_EQ(Files().size(), 2u);
  EXPECT_TRUE(s.Load("used", 1).has_value());
  EXPECT_FALSE(s.Load("stale", 1).has_value());
  EXPECT_TRUE(fs::exists(dir_ / "notes.txt"));
  EXPECT_EQ(s.CollectGarbage(std::chrono::seconds(0)), 0u);  // 0: never
}

}  // namespace
}  // namespace omicsfs::text
