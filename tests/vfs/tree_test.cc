#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "testutil/store_writer.h"
#include "util/fs.h"
#include "vfs/discover.h"

namespace omicsfs::vfs {
namespace {

using testutil::ValueKind;

class DiscoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    src_ = fs::temp_directory_path() / fs::unique_path("omicsfs-vfs-%%%%%%");
    fs::create_directories(src_ / "sub");
    std::ofstream(src_ / "notes.txt") << "hello\n";
    fs::create_symlink("notes.txt", src_ / "link");
    auto spec = testutil::RandomMatrix(40, 12, 0.2, ValueKind::kUInt32, false, true, 2, 1);
    ASSERT_TRUE(testutil::WriteDirStore(testutil::MakeMatrixStore(spec), (src_ / "sub" / "m.packed").string()).ok());
    ASSERT_TRUE(testutil::WriteH5Store(testutil::MakeMatrixStore(spec), (src_ / "x.h5").string(), "/g1/m").ok());
    ASSERT_TRUE(testutil::WriteH5Store(testutil::MakeMatrixStore(spec), (src_ / "x.h5").string(), "/g2").ok());
    testutil::StoreSpec bad = testutil::MakeMatrixStore(spec);
    bad.version = "packed-uint-matrix-v2";
    bad.arrays.erase("idxptr");
    ASSERT_TRUE(testutil::WriteDirStore(bad, (src_ / "broken").string()).ok());
    pool_ = std::make_unique<cache::CachePool>(1 << 20);
    auto tree = Discover(src_.string(), DiscoverOptions{pool_.get(), {}});
    ASSERT_TRUE(tree.ok()) << tree.status().ToString();
    tree_ = *tree;
  }
  void TearDown() override { fs::remove_all(src_); }

  std::vector<std::string> Names(const std::string& path) {
    auto ino = tree_->Resolve(path);
    EXPECT_TRUE(ino.ok()) << path;
    std::vector<std::string> out;
    if (!ino.ok()) return out;
    auto entries = tree_->ReadDir(*ino);
    for (const auto& e : *entries) if (e.name != "." && e.name != "..") out.push_back(e.name);
    return out;
  }
  std::string ReadAll(const std::string& path) {
    auto ino = tree_->Resolve(path);
    EXPECT_TRUE(ino.ok()) << path;
    auto pieces = tree_->Read(*ino, 0, 1 << 30);
    EXPECT_TRUE(pieces.ok()) << pieces.status().ToString();
    std::string s;
    for (const auto& p : *pieces) s.append(p.buffer->data() + p.offset, p.length);
    return s;
  }

  fs::path src_;
  std::unique_ptr<cache::CachePool> pool_;
  std::shared_ptr<const Tree> tree_;
};

TEST_F(DiscoverTest, MirrorsSourceAndReplacesStores) {
  EXPECT_EQ(Names(""), (std::vector<std::string>{"broken", "link", "notes.txt", "sub", "x.h5"}));
  EXPECT_EQ(Names("sub/m.packed"),
            (std::vector<std::string>{"barcodes.tsv", "colnames.txt", "genes.tsv", "matrix.mtx", "matrix.tsv", "rownames.txt"}));
  EXPECT_EQ(Names("x.h5"), (std::vector<std::string>{"g1", "g2"}));
  EXPECT_EQ(Names("x.h5/g1"), (std::vector<std::string>{"m"}));
  EXPECT_EQ(Names("x.h5/g1/m").size(), 6u);
  EXPECT_EQ(Names("broken"), (std::vector<std::string>{"ERROR.txt"}));
  EXPECT_NE(ReadAll("broken/ERROR.txt").find("idxptr"), std::string::npos);
  EXPECT_EQ(ReadAll("notes.txt"), "hello\n");
  EXPECT_EQ(ReadAll("sub/m.packed/matrix.mtx"), ReadAll("x.h5/g2/matrix.mtx"));
}

TEST_F(DiscoverTest, AttributesAndReadOnly) {
  auto ino = tree_->Resolve("sub/m.packed/matrix.mtx");
  ASSERT_TRUE(ino.ok());
  auto attr = tree_->GetAttr(*ino);
  ASSERT_TRUE(attr.ok());
  EXPECT_TRUE(S_ISREG(attr->mode));
  EXPECT_EQ(attr->mode & 0222, 0u);
  EXPECT_EQ(attr->size, ReadAll("sub/m.packed/matrix.mtx").size());
  EXPECT_EQ(tree_->Open(*ino, O_WRONLY).code(), ErrorCode::kReadOnly);
  EXPECT_EQ(tree_->Open(*ino, O_RDWR).code(), ErrorCode::kReadOnly);
  EXPECT_EQ(tree_->Open(*ino, O_RDONLY | O_TRUNC).code(), ErrorCode::kReadOnly);
  EXPECT_TRUE(tree_->Open(*ino, O_RDONLY).ok());
  auto link = tree_->Resolve("link");
  ASSERT_TRUE(link.ok());
  EXPECT_EQ(*tree_->ReadLink(*link), "notes.txt");
  EXPECT_TRUE(S_ISLNK(tree_->GetAttr(*link)->mode));
  auto dir = tree_->Resolve("sub");
  ASSERT_TRUE(dir.ok());
  EXPECT_TRUE(S_ISDIR(tree_->GetAttr(*dir)->mode));
  EXPECT_EQ(tree_->Lookup(*dir, "nope").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(*tree_->Lookup(*dir, ".."), kRootIno);
}

TEST_F(DiscoverTest, SingleStoreAsSource) {
  auto tree = Discover((src_ / "sub" / "m.packed").string(), DiscoverOptions{pool_.get(), {}});
  ASSERT_TRUE(tree.ok());
  EXPECT_TRUE((*tree)->Resolve("matrix.mtx").ok());
  auto h5 = Discover((src_ / "x.h5").string(), DiscoverOptions{pool_.get(), {}});
  ASSERT_TRUE(h5.ok());
  EXPECT_TRUE((*h5)->Resolve("g1/m/genes.tsv").ok());
  EXPECT_FALSE(Discover((src_ / "missing").string(), DiscoverOptions{pool_.get(), {}}).ok());
  EXPECT_FALSE(Discover((src_ / "notes.txt").string(), DiscoverOptions{pool_.get(), {}}).ok());
}

}  // namespace
}  // namespace omicsfs::vfs

namespace omicsfs::vfs {
namespace {

TEST_F(DiscoverTest, ListingNeverSizes) {
  EXPECT_EQ(Names("sub/m.packed").size(), 6u);
  EXPECT_EQ(Names("x.h5/g1/m").size(), 6u);
  EXPECT_EQ(pool_->Stats().entries, 0u);  // nothing rendered yet
  auto ino = tree_->Resolve("sub/m.packed/matrix.mtx");
  ASSERT_TRUE(ino.ok());
  EXPECT_FALSE(tree_->Get(*ino)->content->SizeKnown());
  ASSERT_TRUE(tree_->GetAttr(*ino).ok());
  EXPECT_TRUE(tree_->Get(*ino)->content->SizeKnown());
  EXPECT_GT(pool_->Stats().entries, 0u);  // the sizing pass seeded the cache
}

}  // namespace
}  // namespace omicsfs::vfs
