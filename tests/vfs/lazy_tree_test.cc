// Lazy directories (Node::loader): built once when first looked into, whatever the number of
// threads asking; GetAttr builds nothing; siblings and children load in the background; a merge
// keeps what the served tree built. And lazy discovery of a ByteSpace SOURCE end to end.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "io/local/local_space.h"
#include "util/fs.h"
#include "vfs/discover.h"
#include "vfs/nodes.h"

namespace omicsfs::vfs {
namespace {

using namespace std::chrono_literals;

using test_nodes::Dir;
using test_nodes::File;

// A loader that builds `files` files (and a lazy folder "inner" when `nested`), counting its runs.
std::shared_ptr<DirLoader> Counting(std::atomic<int>* runs, int files, bool nested = false,
                                    std::atomic<int>* inner_runs = nullptr) {
  auto loader = std::make_shared<DirLoader>();
  loader->load = [=] {
    runs->fetch_add(1);
    std::this_thread::sleep_for(20ms);  // the I/O: other threads arrive meanwhile
    auto sub = std::make_unique<Tree>();
    for (int i = 0; i < files; ++i)
      sub->AddChild(kRootIno, File(std::string("f") + std::to_string(i), "x"));
    sub->root().fingerprint = "loaded";
    if (nested) {
      const Ino inner = sub->AddChild(kRootIno, Dir("inner"));
      sub->node(inner).loader = Counting(inner_runs, 1);
    }
    return sub;
  };
  return loader;
}

TEST(LazyTree, BuiltOnceWhateverTheThreadsAndNeverHalfSeen) {
  Tree tree;
  std::atomic<int> runs{0};
  const Ino d = tree.AddChild(kRootIno, Dir("d"));
  tree.node(d).loader = Counting(&runs, 50);
  auto attr = tree.GetAttr(d);  // builds nothing
  ASSERT_TRUE(attr.ok());
  EXPECT_EQ(attr->nlink, 1u);
  EXPECT_TRUE(tree.Pending(d));
  EXPECT_EQ(runs.load(), 0);
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      if (t % 2) {
        auto entries = tree.ReadDir(d);
        if (!entries.ok() || entries->size() != 52) bad.fetch_add(1);
      } else if (!tree.Lookup(d, "f49").ok() || !tree.Resolve("d/f0").ok()) {
        bad.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(runs.load(), 1);
  EXPECT_FALSE(tree.Pending(d));
  EXPECT_EQ(tree.GetAttr(d)->nlink, 2u);
  EXPECT_EQ(tree.node(d).fingerprint, "loaded");
}

TEST(LazyTree, SiblingsThenTheirChildrenLoadInTheBackground) {
  Tree tree;
  std::atomic<int> runs{0}, inner{0};
  std::vector<Ino> dirs;
  for (int i = 0; i < 20; ++i) {
    dirs.push_back(tree.AddChild(kRootIno, Dir(std::string("s") + std::to_string(i))));
    tree.node(dirs.back()).loader = Counting(&runs, 2, /*nested=*/true, &inner);
  }
  ASSERT_TRUE(tree.ReadDir(kRootIno).ok());  // a listing of their parent loads none of them
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(runs.load(), 0);
  ASSERT_TRUE(tree.Lookup(dirs[0], "f1").ok());  // one looked into: the others follow
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while ((runs.load() < 20 || inner.load() < 19) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(runs.load(), 20);
  EXPECT_EQ(inner.load(), 19);  // background loads cascade into their lazy children...
  // ...while the foreground-loaded one's own lazy child waits to be looked into.
  EXPECT_TRUE(tree.Pending(*tree.Lookup(dirs[0], "inner")));
  for (size_t i = 1; i < dirs.size(); ++i) EXPECT_FALSE(tree.Pending(dirs[i])) << i;
}

TEST(LazyTree, MergeKeepsWhatTheServedTreeBuilt) {
  Tree live;
  std::atomic<int> runs{0};
  const Ino a = live.AddChild(kRootIno, Dir("a"));
  live.node(a).loader = Counting(&runs, 3);
  const Ino b = live.AddChild(kRootIno, Dir("b"));
  live.node(b).loader = Counting(&runs, 3);
  ASSERT_TRUE(live.ReadDir(a).ok());
  // The background may build b too; wait until it settles either way.
  std::this_thread::sleep_for(100ms);
  const bool b_pending = live.Pending(b);
  Tree fresh;  // a scan that left both lazy (a was built after it listed)
  for (const char* name : {"a", "b"}) {
    const Ino n = fresh.AddChild(kRootIno, Dir(name));
    fresh.node(n).loader = Counting(&runs, 3);
  }
  const Tree::Changes changes = live.Merge(fresh);
  EXPECT_TRUE(changes.empty());
  EXPECT_EQ(live.Resolve("a/f2").ok(), true);
  EXPECT_EQ(live.Pending(b), b_pending);
  EXPECT_TRUE(live.Loaded("a"));
  EXPECT_FALSE(live.Loaded("nope"));
}

TEST(LazyTree, ASpaceSourceOpensOnlyWhatIsLookedInto) {
  const std::string corpus = OMICSFS_CORPUS_DIR;
  const fs::path src = fs::temp_directory_path() / fs::unique_path("omicsfs-lazy-%%%%%%");
  for (const char* d : {"a/rna.packed", "b/sample.vcz"}) fs::create_directories(src / d);
  fs::copy(corpus + "/bpcells/dir/v2/rna.packed", src / "a" / "rna.packed",
           fs::copy_options::recursive);
  fs::copy(corpus + "/vcf-zarr/sample/sample.vcz", src / "b" / "sample.vcz",
           fs::copy_options::recursive);
  cache::CachePool pool(16 << 20);
  DiscoverOptions o;
  o.pool = &pool;
  o.space = std::make_shared<io::LocalByteSpace>(src.string());
  auto tree = Discover("ignored", o);
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  const Ino a = *(*tree)->Lookup(kRootIno, "a");
  EXPECT_TRUE((*tree)->Pending(a));
  EXPECT_TRUE((*tree)->Pending(*(*tree)->Lookup(kRootIno, "b")));
  auto mtx = (*tree)->Resolve("a/rna.packed/matrix.mtx");
  ASSERT_TRUE(mtx.ok()) << mtx.status().ToString();
  EXPECT_FALSE((*tree)->Pending(a));
  // A rescan builds what was built (a/ and its store, compared by stamp) and leaves the rest.
  o.previous = tree->get();
  auto again = Discover("ignored", o);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE((*again)->Loaded("a/rna.packed"));
  const Tree::Changes changes = (*tree)->Merge(**again);
  EXPECT_TRUE(changes.empty()) << (changes.described.empty() ? "" : changes.described[0]);
  EXPECT_EQ(*(*tree)->Resolve("a/rna.packed/matrix.mtx"), *mtx);  // the same inode
  EXPECT_TRUE((*tree)->Resolve("b/sample.vcz/sample.vcf").ok());
  fs::remove_all(src);
}

}  // namespace
}  // namespace omicsfs::vfs
