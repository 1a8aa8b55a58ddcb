// Folders made on lookup (Node::resolver, vfs/resolver.h): found by lookup, never listed, built
// once, composable, bounded per store (least recently used unheld ones dropped), kept by a merge
// of an unchanged store and detached with a changed one.
#include "vfs/resolver.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "vfs/nodes.h"
#include "vfs/tree.h"

namespace omicsfs::vfs {
namespace {

using namespace std::chrono_literals;

using test_nodes::Dir;
using test_nodes::File;

// Knows the names "PREFIX=...": each such folder holds f0 and f1 (their text: the folder's name),
// and its root carries `inner` when given, as does a real folder "deep" in it. Records what it
// was asked and how many folders it built.
class Recording : public DirResolver {
 public:
  explicit Recording(std::string prefix, size_t max_folders = kDefaultMaxFolders,
                     std::shared_ptr<const DirResolver> inner = nullptr)
      : DirResolver(max_folders), prefix_(std::move(prefix) + "="), inner_(std::move(inner)) {}

  std::optional<ResolvedDir> Resolve(std::string_view name) const override {
    {
      std::lock_guard lock(mu_);
      asked_.emplace_back(name);
    }
    std::this_thread::sleep_for(
        std::chrono::milliseconds(resolve_delay_ms));  // widens races in tests
    if (name.substr(0, prefix_.size()) != prefix_) return std::nullopt;
    ResolvedDir d;
    d.perm = 0550;
    d.mtime = {1234, 5};
    d.uid = 7;
    d.gid = 8;
    if (versioned) d.current = [this, seen = version.load()] { return version.load() == seen; };
    d.load = [this, folder = std::string(name)] {
      loads.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));  // the I/O
      auto sub = std::make_unique<Tree>();
      for (const char* f : {"f0", "f1"}) sub->AddChild(kRootIno, File(f, folder));
      sub->root().resolver = inner_;
      if (inner_ != nullptr) {
        const Ino deep = sub->AddChild(kRootIno, Dir("deep"));
        sub->node(deep).resolver = inner_;
      }
      return sub;
    };
    return d;
  }

  std::vector<std::string> asked() const {
    std::lock_guard lock(mu_);
    return asked_;
  }

  mutable std::atomic<int> loads{0};
  bool versioned = false;  // folders stay current while `version` is what it was
  std::atomic<int> version{0};
  int delay_ms = 0;
  int resolve_delay_ms = 0;

 private:
  std::string prefix_;
  std::shared_ptr<const DirResolver> inner_;
  mutable std::mutex mu_;
  mutable std::vector<std::string> asked_;
};

// A tree with a store "s" (a real file in it) carrying `resolver`.
struct Fixture {
  explicit Fixture(std::shared_ptr<const DirResolver> resolver) {
    s = tree.AddChild(kRootIno, Dir("s"));
    tree.AddChild(s, File("real.txt", "real"));
    tree.AddChild(s, Dir("sub"));
    tree.node(s).resolver = std::move(resolver);
    tree.node(s).fingerprint = "v1";
  }
  Ino Made(const std::string& name) {
    auto ino = tree.Lookup(s, name);
    EXPECT_TRUE(ino.ok()) << name;
    return ino.ok() ? *ino : 0;
  }
  std::vector<std::string> Listed(Ino dir) {
    std::vector<std::string> out;
    auto entries = tree.ReadDir(dir);
    EXPECT_TRUE(entries.ok());
    if (entries.ok())
      for (const DirEntry& e : *entries) out.push_back(e.name);
    return out;
  }
  std::string Text(const std::string& path) {
    auto pieces = tree.Read(*tree.Resolve(path), 0, 100);
    std::string out;
    if (pieces.ok())
      for (const auto& p : *pieces) out.append(p.buffer->data() + p.offset, p.length);
    return out;
  }
  Tree tree;
  Ino s = 0;
};

TEST(MadeFolders, FoundByLookupAndByPathWithTheMetadataGivenNeverListed) {
  auto r = std::make_shared<Recording>("region");
  Fixture fx(r);
  const uint32_t nlink = fx.tree.GetAttr(fx.s)->nlink;
  const Ino folder = fx.Made("region=chr20:1-2000000");
  auto attr = fx.tree.GetAttr(folder);
  ASSERT_TRUE(attr.ok());
  EXPECT_EQ(attr->mode, S_IFDIR | 0550u);
  EXPECT_EQ(attr->mtime.tv_sec, 1234);
  EXPECT_EQ(attr->mtime.tv_nsec, 5);
  EXPECT_EQ(attr->uid, 7u);
  EXPECT_EQ(attr->gid, 8u);
  EXPECT_EQ(r->loads.load(), 0);  // built when looked into
  EXPECT_TRUE(fx.tree.Pending(folder));
  EXPECT_EQ(*fx.tree.Resolve("s/region=chr20:1-2000000"), folder);
  EXPECT_EQ(fx.Text("s/region=chr20:1-2000000/f1"), "region=chr20:1-2000000");
  EXPECT_EQ(r->loads.load(), 1);
  EXPECT_EQ(fx.Listed(folder), (std::vector<std::string>{".", "..", "f0", "f1"}));
  EXPECT_EQ(fx.Listed(fx.s), (std::vector<std::string>{".", "..", "real.txt", "sub"}));
  EXPECT_EQ(fx.tree.GetAttr(fx.s)->nlink, nlink);  // the parent's attributes do not change
  // Real entries are found without asking the resolver; "." and ".." never ask it.
  EXPECT_TRUE(fx.tree.Lookup(fx.s, "real.txt").ok());
  EXPECT_EQ(*fx.tree.Lookup(fx.s, ".."), kRootIno);
  EXPECT_EQ(r->asked(), (std::vector<std::string>{"region=chr20:1-2000000"}));
  // A sibling made and never looked into is not loaded in the background with this one.
  const Ino other = fx.Made("region=chr1:1-10");
  ASSERT_TRUE(fx.tree.Lookup(fx.Made("region=chr2:1-10"), "f0").ok());
  std::this_thread::sleep_for(50ms);
  EXPECT_TRUE(fx.tree.Pending(other));
  EXPECT_EQ(r->loads.load(), 2);
}

TEST(MadeFolders, ANameTheResolverRefusesIsNotFound) {
  auto r = std::make_shared<Recording>("region");
  Fixture fx(r);
  const size_t nodes = fx.tree.size();
  auto ino = fx.tree.Lookup(fx.s, "cells=x");
  ASSERT_FALSE(ino.ok());
  EXPECT_EQ(ino.status().code(), ErrorCode::kNotFound);
  EXPECT_FALSE(fx.tree.Resolve("s/cells=x/f0").ok());
  EXPECT_FALSE(fx.tree.Lookup(kRootIno, "region=1").ok());  // the root has no resolver
  EXPECT_FALSE(fx.tree.Lookup(*fx.tree.Lookup(fx.s, "sub"), "region=1").ok());  // nor has sub/
  EXPECT_EQ(fx.tree.size(), nodes);
  EXPECT_EQ(r->asked(), (std::vector<std::string>{"cells=x", "cells=x"}));
}

TEST(MadeFolders, OneFolderBuiltOnceWhateverTheThreads) {
  auto r = std::make_shared<Recording>("region");
  r->delay_ms = 20;         // the other threads arrive during the load...
  r->resolve_delay_ms = 5;  // ...and all of them miss before the first adds the folder
  Fixture fx(r);
  std::vector<Ino> seen(8, 0);
  std::atomic<int> bad{0}, ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < 8) std::this_thread::yield();
      if (t % 2 == 0) {
        auto ino = fx.tree.Lookup(fx.s, "region=chr1:1-100");
        if (!ino.ok()) return bad.fetch_add(1), void();
        seen[t] = *ino;
        auto entries = fx.tree.ReadDir(*ino);
        if (!entries.ok() || entries->size() != 4) bad.fetch_add(1);
      } else {
        auto file = fx.tree.Resolve("s/region=chr1:1-100/f0");
        auto folder = fx.tree.Resolve("s/region=chr1:1-100");
        if (!file.ok() || !folder.ok()) return bad.fetch_add(1), void();
        seen[t] = *folder;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(r->loads.load(), 1);
  EXPECT_EQ(std::count(seen.begin(), seen.end(), seen[0]), 8);
  EXPECT_EQ(fx.Listed(fx.s).size(), 4u);
}

TEST(MadeFolders, FoldersMadeInMadeFoldersEachLevelAskedOnlyItsOwnNames) {
  auto r3 = std::make_shared<Recording>("c");
  auto r2 = std::make_shared<Recording>("b", DirResolver::kDefaultMaxFolders, r3);
  auto r1 = std::make_shared<Recording>("a", DirResolver::kDefaultMaxFolders, r2);
  Fixture fx(r1);
  EXPECT_EQ(fx.Text("s/a=1/b=2/c=3/f0"), "c=3");
  EXPECT_EQ(fx.Text("s/a=1/b=2/deep/c=4/f1"), "c=4");  // a resolver on a folder inside one
  EXPECT_EQ(r1->asked(), (std::vector<std::string>{"a=1"}));
  EXPECT_EQ(r2->asked(), (std::vector<std::string>{"b=2"}));
  EXPECT_EQ(r3->asked(), (std::vector<std::string>{"c=3", "c=4"}));
  EXPECT_FALSE(fx.tree.Resolve("s/b=2").ok());  // the outer level refuses the inner's names
  EXPECT_FALSE(fx.tree.Resolve("s/a=1/c=3").ok());
  EXPECT_FALSE(fx.tree.Resolve("s/a=1/b=2/c=3/a=1").ok());  // c=3 has no resolver
  EXPECT_EQ(fx.Listed(*fx.tree.Resolve("s/a=1")),
            (std::vector<std::string>{".", "..", "deep", "f0", "f1"}));
  EXPECT_EQ(r1->loads.load() + r2->loads.load() + r3->loads.load(), 4);
}

// Which of `names` (made folders of `fx`, at `inos`) are still there.
std::vector<std::string> Alive(Fixture& fx, const std::vector<std::string>& names,
                               const std::vector<Ino>& inos) {
  std::vector<std::string> out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!fx.tree.node(inos[i]).detached) out.push_back(names[i]);
  }
  return out;
}

TEST(MadeFolders, AStoreKeepsItsBoundDroppingTheLeastRecentlyUsedFirst) {
  Fixture fx(std::make_shared<Recording>("r", /*max_folders=*/4));
  std::vector<std::string> names;
  std::vector<Ino> inos;
  auto make = [&](const std::string& name) {
    names.push_back(name);
    inos.push_back(fx.Made(name));
  };
  for (const char* n : {"r=0", "r=1", "r=2", "r=3"}) make(n);
  ASSERT_TRUE(fx.tree.Lookup(fx.s, "r=0").ok());  // used again: now the most recent
  ASSERT_TRUE(fx.tree.ReadDir(*fx.tree.Lookup(fx.s, "r=2")).ok());  // listed
  make("r=4");
  EXPECT_EQ(Alive(fx, names, inos), (std::vector<std::string>{"r=0", "r=2", "r=3", "r=4"}));
  ASSERT_TRUE(fx.tree.Resolve("s/r=3/f0").ok());  // opened into
  ASSERT_TRUE(fx.tree.Open(*fx.tree.Resolve("s/r=3/f0"), 0).ok());
  make("r=5");
  make("r=6");
  EXPECT_EQ(Alive(fx, names, inos), (std::vector<std::string>{"r=3", "r=4", "r=5", "r=6"}));
  // Nested folders count in their store's bound: a store of 4 (made at any depth).
  auto r2 = std::make_shared<Recording>("b");
  Fixture nested(std::make_shared<Recording>("a", 3, r2));
  const Ino a1 = *nested.tree.Resolve("s/a=1");
  const Ino b1 = *nested.tree.Resolve("s/a=1/b=1");
  const Ino b2 = *nested.tree.Resolve("s/a=1/b=2");
  const Ino a2 = *nested.tree.Resolve("s/a=2");  // the 4th: b=1 was used least recently
  EXPECT_FALSE(nested.tree.node(a1).detached);
  EXPECT_TRUE(nested.tree.node(b1).detached);
  EXPECT_FALSE(nested.tree.node(b2).detached);
  EXPECT_FALSE(nested.tree.node(a2).detached);
  // A folder was used whenever one made in it was: of a=1 and b=2 (used together), the inner goes
  // first.
  ASSERT_TRUE(nested.tree.Resolve("s/a=2/b=3").ok());
  EXPECT_TRUE(nested.tree.node(b2).detached);
  EXPECT_FALSE(nested.tree.node(a1).detached);
  ASSERT_TRUE(nested.tree.Resolve("s/a=3").ok());
  EXPECT_TRUE(nested.tree.node(a1).detached);
}

TEST(MadeFolders, HeldFoldersStayAndTheExcessGoesWhenForgotten) {
  Fixture fx(std::make_shared<Recording>("r", /*max_folders=*/2));
  const Ino a = fx.Made("r=a");
  const Ino a_file = *fx.tree.Lookup(a, "f0");
  fx.tree.Remember(a_file);  // the kernel holds a file in r=a (and so r=a)
  const Ino b = fx.Made("r=b");
  fx.tree.Remember(b);
  const Ino c = fx.Made("r=c");  // over the bound, all others held: made all the same
  EXPECT_FALSE(fx.tree.node(c).detached);
  // Past the bound only the least recently used are candidates: a and b, held, so the kernel is
  // asked to drop them; c, newer, stays (its lookup reply may still be on its way).
  const Ino d = fx.Made("r=d");
  EXPECT_FALSE(fx.tree.node(c).detached);
  EXPECT_FALSE(fx.tree.node(a).detached);
  EXPECT_FALSE(fx.tree.node(b).detached);
  EXPECT_FALSE(fx.tree.node(d).detached);
  const auto asked = fx.tree.TakeReleases(std::chrono::milliseconds(0));
  const std::vector<std::pair<Ino, std::string>> want = {{fx.s, "r=a"}, {fx.s, "r=b"}};
  EXPECT_EQ(asked, want);
  fx.tree.Forget(b, 1);  // the kernel let b go: 3 alive for 2
  EXPECT_TRUE(fx.tree.node(b).detached);
  EXPECT_FALSE(fx.tree.node(a).detached);
  fx.tree.Remember(d);
  fx.tree.Forget(a_file, 1);  // a, the least recently used, goes with its last reference
  EXPECT_TRUE(fx.tree.node(a).detached);
  EXPECT_FALSE(fx.tree.node(c).detached);
  EXPECT_FALSE(fx.tree.node(d).detached);
  // A held folder dropped by a rescan keeps its contents until forgotten.
  Tree gone;
  fx.tree.Merge(gone);
  ASSERT_TRUE(fx.tree.node(d).detached);
  EXPECT_TRUE(fx.tree.Open(*fx.tree.Lookup(d, "f1"), 0).ok());
  fx.tree.Forget(d, 1);
}

TEST(MadeFolders, ADroppedFolderLookedUpAgainIsMadeAnewWithANewInode) {
  auto r = std::make_shared<Recording>("r", /*max_folders=*/1);
  Fixture fx(r);
  const Ino x = fx.Made("r=x");
  const Ino x_file = *fx.tree.Lookup(x, "f0");
  fx.Made("r=y");
  ASSERT_TRUE(fx.tree.node(x).detached);
  EXPECT_FALSE(fx.tree.Open(x_file, 0).ok());  // nobody held it: its contents went
  const Ino again = fx.Made("r=x");
  EXPECT_NE(again, x);
  EXPECT_GT(again, x_file);  // freed inode numbers are reused only after a quarantine
  EXPECT_EQ(fx.Text("s/r=x/f0"), "r=x");
  EXPECT_EQ(r->loads.load(), 2);  // r=x twice (r=y was never looked into)
}

// A folder built from inputs that change (a slice's list) is asked on every lookup whether they
// are as they were; the kernel may not cache its entry; a stale one is made anew.
TEST(MadeFolders, AStaleFolderIsMadeAnewOnItsNextLookup) {
  auto r = std::make_shared<Recording>("r");
  r->versioned = true;
  Fixture fx(r);
  const Ino first = fx.Made("r=x");
  EXPECT_TRUE(fx.tree.GetAttr(first)->uncached);
  const Ino file = *fx.tree.Lookup(first, "f0");
  fx.tree.Remember(file);  // a file open in it keeps its bytes
  auto open = fx.tree.Open(file, 0);
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(fx.Made("r=x"), first);  // unchanged: the same folder
  r->version = 1;
  const Ino second = fx.Made("r=x");
  EXPECT_NE(second, first);
  EXPECT_TRUE(fx.tree.node(first).detached);
  EXPECT_EQ(fx.Text("s/r=x/f0"), "r=x");
  EXPECT_EQ(r->loads.load(), 2);
  EXPECT_EQ(fx.Made("r=x"), second);
  auto pieces = (*open)->Read(0, 3);
  ASSERT_TRUE(pieces.ok());
  fx.tree.Forget(file, 1);
}

TEST(MadeFolders, AMergeKeepsThemInAnUnchangedStoreAndDetachesThemWithAChangedOne) {
  auto r = std::make_shared<Recording>("r");
  Fixture fx(r);
  const Ino folder = fx.Made("r=1");
  const Ino file = *fx.tree.Lookup(folder, "f0");
  {
    Tree fresh;  // a rescan: the store is unchanged, so it is copied with its resolver
    ASSERT_TRUE(fx.tree.CopyInto("s", "v1", fresh, kRootIno));
    EXPECT_EQ(fresh.size(), 4u);  // root, s, real.txt, sub: no made folder copied
    const Tree::Changes changes = fx.tree.Merge(fresh);
    EXPECT_TRUE(changes.empty());
  }
  EXPECT_EQ(*fx.tree.Resolve("s/r=1"), folder);
  EXPECT_EQ(*fx.tree.Resolve("s/r=1/f0"), file);
  EXPECT_FALSE(fx.tree.node(folder).detached);
  auto r2 = std::make_shared<Recording>("r");
  {
    Tree fresh;  // the store changed: reopened, with a new resolver
    const Ino s = fresh.AddChild(kRootIno, Dir("s"));
    fresh.AddChild(s, File("real.txt", "real, changed"));
    fresh.AddChild(s, Dir("sub"));
    fresh.node(s).fingerprint = "v2";
    fresh.node(s).resolver = r2;
    const Tree::Changes changes = fx.tree.Merge(fresh);
    EXPECT_EQ(changes.described, (std::vector<std::string>{"changed: s"}));
    EXPECT_NE(std::find(changes.entries.begin(), changes.entries.end(),
                        std::make_pair(fx.s, std::string("r=1"))),
              changes.entries.end());
  }
  EXPECT_TRUE(fx.tree.node(folder).detached);
  EXPECT_TRUE(fx.tree.node(file).detached);
  const Ino remade = fx.Made("r=1");
  EXPECT_NE(remade, folder);
  EXPECT_EQ(r2->asked(), (std::vector<std::string>{"r=1"}));
  {
    Tree fresh;  // the store is gone: its made folders with it
    fx.tree.Merge(fresh);
  }
  EXPECT_TRUE(fx.tree.node(remade).detached);
  EXPECT_FALSE(fx.tree.Resolve("s/r=1").ok());
}

}  // namespace
}  // namespace omicsfs::vfs
