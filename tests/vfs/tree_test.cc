#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "testutil/store_writer.h"
#include "text/index_store.h"
#include "util/fs.h"
#include "vfs/discover.h"
#include "vfs/withdrawals.h"

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
    ASSERT_TRUE(testutil::WriteDirStore(testutil::MakeMatrixStore(spec),
                                        (src_ / "sub" / "m.packed").string())
                    .ok());
    ASSERT_TRUE(
        testutil::WriteH5Store(testutil::MakeMatrixStore(spec), (src_ / "x.h5").string(), "/g1/m")
            .ok());
    ASSERT_TRUE(
        testutil::WriteH5Store(testutil::MakeMatrixStore(spec), (src_ / "x.h5").string(), "/g2")
            .ok());
    testutil::StoreSpec bad = testutil::MakeMatrixStore(spec);
    bad.version = "packed-uint-matrix-v2";
    bad.arrays.erase("idxptr");
    ASSERT_TRUE(testutil::WriteDirStore(bad, (src_ / "broken").string()).ok());
    pool_ = std::make_unique<cache::CachePool>(1 << 20);
    auto tree = Discover(src_.string(), Options());
    ASSERT_TRUE(tree.ok()) << tree.status().ToString();
    tree_ = *tree;
  }
  void TearDown() override { fs::remove_all(src_); }
  DiscoverOptions Options() const {
    DiscoverOptions o;
    o.pool = pool_.get();
    return o;
  }

  std::vector<std::string> Names(const std::string& path) {
    auto ino = tree_->Resolve(path);
    EXPECT_TRUE(ino.ok()) << path;
    std::vector<std::string> out;
    if (!ino.ok()) return out;
    auto entries = tree_->ReadDir(*ino);
    for (const auto& e : *entries)
      if (e.name != "." && e.name != "..") out.push_back(e.name);
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
  std::shared_ptr<Tree> tree_;
};

TEST_F(DiscoverTest, MirrorsSourceAndReplacesStores) {
  EXPECT_EQ(Names(""), (std::vector<std::string>{"broken", "link", "notes.txt", "sub", "x.h5"}));
  EXPECT_EQ(Names("sub/m.packed"),
            (std::vector<std::string>{"10x", "10x.h5", "barcodes.tsv", "colnames.txt", "genes.tsv",
                                      "matrix.h5ad", "matrix.mtx", "matrix.tsv", "rownames.txt"}));
  EXPECT_EQ(Names("sub/m.packed/10x"),
            (std::vector<std::string>{"barcodes.tsv.gz", "features.tsv.gz", "matrix.mtx.gz"}));
  EXPECT_EQ(Names("x.h5/g1/m/10x").size(), 3u);
  EXPECT_EQ(Names("x.h5"), (std::vector<std::string>{"g1", "g2"}));
  EXPECT_EQ(Names("x.h5/g1"), (std::vector<std::string>{"m"}));
  EXPECT_EQ(Names("x.h5/g1/m").size(), 9u);
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
  EXPECT_EQ(tree_->Open(*ino, O_WRONLY).status().code(), ErrorCode::kReadOnly);
  EXPECT_EQ(tree_->Open(*ino, O_RDWR).status().code(), ErrorCode::kReadOnly);
  EXPECT_EQ(tree_->Open(*ino, O_RDONLY | O_TRUNC).status().code(), ErrorCode::kReadOnly);
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
  // The 10x folder can be entered by whoever reads the store's views.
  auto tenx = tree_->Resolve("sub/m.packed/10x");
  ASSERT_TRUE(tenx.ok());
  const mode_t mode = tree_->GetAttr(*tenx)->mode;
  EXPECT_TRUE(S_ISDIR(mode));
  EXPECT_EQ(mode & 0111, (attr->mode & 0444) >> 2);
}

TEST_F(DiscoverTest, SingleStoreAsSource) {
  auto tree = Discover((src_ / "sub" / "m.packed").string(), Options());
  ASSERT_TRUE(tree.ok());
  EXPECT_TRUE((*tree)->Resolve("matrix.mtx").ok());
  auto h5 = Discover((src_ / "x.h5").string(), Options());
  ASSERT_TRUE(h5.ok());
  EXPECT_TRUE((*h5)->Resolve("g1/m/genes.tsv").ok());
  EXPECT_FALSE(Discover((src_ / "missing").string(), Options()).ok());
  EXPECT_FALSE(Discover((src_ / "notes.txt").string(), Options()).ok());
}

// The walk's recognition (vfs/walk.h): a marker file that is a symlink still marks a store (a
// git-annex or DataLad dataset links every file); a folder with a `version` file that is not a
// BPCells version is mirrored, and so is a .vcz.zip that holds no store (a plain file).
TEST_F(DiscoverTest, KindsRecogniseLinkedMarkersAndDeclineLookalikes) {
  const fs::path store = src_ / "sub" / "m.packed";
  fs::rename(store / "version", src_ / "version.annexed");
  fs::create_symlink(src_ / "version.annexed", store / "version");
  fs::create_directories(src_ / "project");
  std::ofstream(src_ / "project" / "version") << "1.2.3\n";
  std::ofstream(src_ / "notazip.vcz.zip") << "not a zip archive\n";
  auto tree = Discover(src_.string(), Options());
  ASSERT_TRUE(tree.ok());
  tree_ = *tree;
  EXPECT_TRUE(tree_->Resolve("sub/m.packed/matrix.mtx").ok());
  EXPECT_EQ(Names("project"), std::vector<std::string>{"version"});
  // A damaged archive named like a zipped store is one: ERROR.txt says why.
  EXPECT_TRUE(tree_->Resolve("notazip.vcz/ERROR.txt").ok());
}

}  // namespace
}  // namespace omicsfs::vfs

namespace omicsfs::vfs {
namespace {

TEST_F(DiscoverTest, ListingNeverSizes) {
  EXPECT_EQ(Names("sub/m.packed").size(), 9u);
  EXPECT_EQ(Names("x.h5/g1/m").size(), 9u);
  EXPECT_EQ(pool_->Stats().entries, 0u);  // nothing rendered yet
  // The HDF5 views' images are not made by a listing either.
  for (const char* h5 : {"sub/m.packed/matrix.h5ad", "sub/m.packed/10x.h5"}) {
    auto ino = tree_->Resolve(h5);
    ASSERT_TRUE(ino.ok()) << h5;
    EXPECT_FALSE((*tree_->Open(*ino, O_RDONLY))->SizeKnown()) << h5;
  }
  auto ino = tree_->Resolve("sub/m.packed/matrix.mtx");
  ASSERT_TRUE(ino.ok());
  EXPECT_FALSE((*tree_->Open(*ino, O_RDONLY))->SizeKnown());
  ASSERT_TRUE(tree_->GetAttr(*ino).ok());
  EXPECT_TRUE((*tree_->Open(*ino, O_RDONLY))->SizeKnown());
  EXPECT_GT(pool_->Stats().entries, 0u);  // the sizing pass seeded the cache
}

}  // namespace
}  // namespace omicsfs::vfs

namespace omicsfs::vfs {
namespace {

// Live changes: a rescan reuses what did not change and replaces what did.
class RescanTest : public DiscoverTest {
 protected:
  Tree* Live() { return tree_.get(); }
  Tree::Changes Rescan() {
    DiscoverOptions options = Options();
    options.previous = tree_.get();
    auto fresh = Discover(src_.string(), options);
    EXPECT_TRUE(fresh.ok()) << fresh.status().ToString();
    return Live()->Merge(**fresh);
  }
  static void Settle() {  // file times tick coarsely: a change must land in a later tick
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
};

TEST_F(RescanTest, NothingChangedMeansNoChanges) {
  const size_t nodes = tree_->size();
  EXPECT_TRUE(Rescan().empty());
  EXPECT_TRUE(Rescan().empty());
  EXPECT_EQ(tree_->size(), nodes);  // unchanged subtrees are reused, not re-added
}

TEST_F(RescanTest, ChangedFileGetsNewInodeAndOldHandleNeverMixes) {
  const Ino before = *tree_->Resolve("notes.txt");
  auto old_content = tree_->Open(before, O_RDONLY);
  ASSERT_TRUE(old_content.ok());
  const Ino store_dir = *tree_->Resolve("sub/m.packed");
  const Ino mtx_before = *tree_->Resolve("sub/m.packed/matrix.mtx");
  auto old_mtx = tree_->Open(mtx_before, O_RDONLY);
  ASSERT_TRUE(old_mtx.ok());
  Settle();
  std::ofstream(src_ / "notes.txt") << "hello again\n";  // rewritten in place
  auto spec = testutil::RandomMatrix(30, 9, 0.3, ValueKind::kUInt32, false, true, 2, 7);
  fs::remove_all(src_ / "sub" / "m.packed");
  ASSERT_TRUE(
      testutil::WriteDirStore(testutil::MakeMatrixStore(spec), (src_ / "sub" / "m.packed").string())
          .ok());
  const Tree::Changes changes = Rescan();
  EXPECT_FALSE(changes.empty());
  const Ino after = *tree_->Resolve("notes.txt");
  EXPECT_NE(after, before);
  EXPECT_EQ(ReadAll("notes.txt"), "hello again\n");
  // The old handle: refused (ESTALE), never the new bytes under the old size.
  auto stale = (*old_content)->Read(0, 100);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().sys_errno(), ESTALE) << stale.status().ToString();
  // The store directory keeps its inode; its views are new.
  EXPECT_EQ(*tree_->Resolve("sub/m.packed"), store_dir);
  EXPECT_NE(*tree_->Resolve("sub/m.packed/matrix.mtx"), mtx_before);
  EXPECT_NE(ReadAll("sub/m.packed/matrix.mtx").find("30 9 "), std::string::npos);
  auto old_read = (*old_mtx)->Read(0, 1 << 20);
  EXPECT_FALSE(old_read.ok());  // its arrays are gone: refused, not rendered from the new store
  // Unchanged neighbours keep their inodes.
  EXPECT_TRUE(Rescan().empty());
}

TEST_F(RescanTest, RemovedAndAddedStores) {
  const Ino broken = *tree_->Resolve("broken");
  const Ino error_txt = *tree_->Resolve("broken/ERROR.txt");
  Live()->Remember(error_txt);  // the kernel knows it
  Settle();
  fs::remove_all(src_ / "broken");
  auto spec = testutil::RandomMatrix(10, 5, 0.5, ValueKind::kFloat32, true, true, 2, 3);
  ASSERT_TRUE(
      testutil::WriteDirStore(testutil::MakeMatrixStore(spec), (src_ / "new.packed").string())
          .ok());
  const Tree::Changes changes = Rescan();
  EXPECT_EQ(Names(""),
            (std::vector<std::string>{"link", "new.packed", "notes.txt", "sub", "x.h5"}));
  EXPECT_EQ(Names("new.packed").size(), 9u);
  bool dropped = false;
  for (const auto& [parent, name] : changes.entries)
    dropped |= parent == kRootIno && name == "broken";
  EXPECT_TRUE(dropped);
  // A detached node stays readable while the kernel holds it, and is released once forgotten.
  EXPECT_TRUE(tree_->GetAttr(error_txt).ok());
  Live()->Forget(error_txt, 1);
  EXPECT_FALSE(tree_->GetAttr(error_txt).ok());
  // Its folder, which the kernel never held, went with its last child: the inode is free for
  // reuse (after a quarantine).
  EXPECT_FALSE(tree_->GetAttr(broken).ok());
}

TEST_F(RescanTest, ReplacedHdf5FileIsRescanned) {
  const Ino m = *tree_->Resolve("x.h5/g2/matrix.mtx");
  const std::string old_text = ReadAll("x.h5/g2/matrix.mtx");
  auto old_content = tree_->Open(m, O_RDONLY);
  ASSERT_TRUE(old_content.ok());
  Settle();
  auto spec = testutil::RandomMatrix(8, 4, 0.5, ValueKind::kUInt32, false, true, 2, 5);
  fs::remove(src_ / "x.h5");
  ASSERT_TRUE(
      testutil::WriteH5Store(testutil::MakeMatrixStore(spec), (src_ / "x.h5").string(), "/g3")
          .ok());
  Rescan();
  EXPECT_EQ(Names("x.h5"), (std::vector<std::string>{"g3"}));
  EXPECT_FALSE(tree_->Resolve("x.h5/g2/matrix.mtx").ok());
  EXPECT_NE(ReadAll("x.h5/g3/matrix.mtx").find("8 4 "), std::string::npos);
  // The open handle: the old bytes (libhdf5 still holds the unlinked file) or ESTALE, no mix.
  auto old_read = (*old_content)->Read(0, 1 << 20);
  if (old_read.ok()) {
    std::string got;
    for (const auto& p : *old_read) got.append(p.buffer->data() + p.offset, p.length);
    EXPECT_EQ(got, old_text);
  } else {
    EXPECT_EQ(old_read.status().sys_errno(), ESTALE) << old_read.status().ToString();
  }
}

// A fragments store with a zero-length fragment: its 10x form ends before it begins there, which
// tabix refuses, so fragments.tsv.gz.tbi cannot exist. Listed until a pass finds it (listing never
// sizes); from then on neither listed, found, copied by a rescan nor sized, and taken once for the
// kernel (TakeWithdrawn); index_dir keeps the verdict, so the next discovery never lists it. The
// BED form's index, which tabix builds, stays.
TEST(WithdrawnIndex, ARegionIndexTabixRefusesLeavesItsFolderAndIsNotListedAgain) {
  const fs::path src = fs::temp_directory_path() / fs::unique_path("omicsfs-withdrawn-%%%%%%");
  fs::create_directories(src);
  testutil::FragmentsSpec f;
  f.chr_names = {"chr1", "chr2"};
  f.cell_names = {"AAA", "CCC"};
  // chr1 300-300: zero length.
  f.by_chr = {{{100, 200, 0}, {300, 300, 1}, {400, 450, 0}}, {{5, 9, 1}}};
  ASSERT_TRUE(
      testutil::WriteDirStore(testutil::MakeFragmentsStore(f), (src / "frags").string()).ok());
  const std::string index_dir = (src.parent_path() / (src.filename().string() + ".index")).string();
  cache::CachePool pool(16 << 20);
  text::IndexStore index(index_dir);
  auto discover = [&](Withdrawals* w, const Tree* previous = nullptr) {
    DiscoverOptions o;
    o.pool = &pool;
    o.index_dir = index_dir;
    o.sizing.index = &index;
    o.withdrawals = w;
    o.previous = previous;
    auto tree = Discover(src.string(), o);
    EXPECT_TRUE(tree.ok()) << tree.status().ToString();
    return *tree;
  };
  auto names = [](const Tree& t, Ino dir) {
    std::set<std::string> out;
    auto entries = t.ReadDir(dir);
    EXPECT_TRUE(entries.ok());
    if (entries.ok()) {
      for (const auto& e : *entries) out.insert(e.name);
    }
    return out;
  };
  const std::string refused = "fragments.tsv.gz.tbi";

  Withdrawals first;
  int notes = 0;
  std::shared_ptr<Tree> tree;
  first.notify = [&] {
    ++notes;
    tree->NoteWithdrawn();
  };
  tree = discover(&first);
  const Ino dir = *tree->Resolve("frags");
  ASSERT_TRUE(names(*tree, dir).count(refused)) << "listed before any pass";
  const Ino index_ino = *tree->Lookup(dir, refused);
  EXPECT_TRUE(tree->TakeWithdrawn().empty()) << "nothing noted yet";
  EXPECT_FALSE(tree->ListingSettled(dir)) << "its indexes may still be withdrawn";
  // The pass that sizes fragments.bed sizes the 10x form too and feeds both forms' indexes.
  ASSERT_TRUE(tree->GetAttr(*tree->Resolve("frags/fragments.bed")).ok());
  EXPECT_EQ(notes, 1);
  EXPECT_TRUE(tree->ListingSettled(dir)) << "one index built, the other refused";
  EXPECT_FALSE(names(*tree, dir).count(refused));
  EXPECT_TRUE(names(*tree, dir).count("fragments.bed.gz.tbi"));
  EXPECT_EQ(tree->Lookup(dir, refused).status().code(), ErrorCode::kNotFound);
  auto attr = tree->GetAttr(index_ino);
  ASSERT_FALSE(attr.ok());
  EXPECT_EQ(attr.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(attr.status().message().find("tabix refuses"), std::string::npos)
      << attr.status().message();
  ASSERT_EQ(first.List().size(), 1u);
  EXPECT_EQ(first.List()[0].first, refused + " of " + (src / "frags").string());
  EXPECT_NE(first.List()[0].second.find("before begin"), std::string::npos)
      << first.List()[0].second;
  const auto taken = tree->TakeWithdrawn();
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0], std::make_pair(dir, refused));
  EXPECT_TRUE(tree->TakeWithdrawn().empty()) << "taken once";
  // A rescan does not bring it back: the store is unchanged.
  auto fresh = discover(&first, tree.get());
  EXPECT_TRUE(tree->Merge(*fresh).empty());
  EXPECT_FALSE(names(*tree, dir).count(refused));
  auto bed_index = tree->Resolve("frags/fragments.bed.gz.tbi");
  ASSERT_TRUE(bed_index.ok());
  EXPECT_TRUE(tree->Read(*bed_index, 0, 1 << 20).ok());

  // The next discovery over the same index_dir: never listed, said why, nothing to notify.
  Withdrawals second;
  int second_notes = 0;
  second.notify = [&] { ++second_notes; };
  auto again = discover(&second);
  const Ino dir2 = *again->Resolve("frags");
  EXPECT_FALSE(names(*again, dir2).count(refused));
  EXPECT_TRUE(names(*again, dir2).count("fragments.tsv.gz"));
  EXPECT_EQ(again->Lookup(dir2, refused).status().code(), ErrorCode::kNotFound);
  ASSERT_EQ(second.List().size(), 1u);
  EXPECT_EQ(second.List()[0], first.List()[0]);
  auto entries = again->ReadDir(dir2);
  ASSERT_TRUE(entries.ok());
  for (const auto& e : *entries) EXPECT_TRUE(again->GetAttr(e.ino).ok()) << e.name;
  EXPECT_EQ(second_notes, 0);
  fs::remove_all(src);
  fs::remove_all(index_dir);
}

}  // namespace
}  // namespace omicsfs::vfs
