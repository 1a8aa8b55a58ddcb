// The view catalog's one loop (vfs/catalog.h): names with STEM, twins and region indexes, views
// shown only as twins, sub-folders, gates (checked once, logged once, ordered), persisted keys.
#include "vfs/catalog.h"

#include <gtest/gtest.h>

#include <set>

#include "text/index_store.h"
#include "util/fs.h"
#include "vfs/kinds/registry.h"

namespace omicsfs::vfs {
namespace {

struct Toy {
  RegionIndexes indexes = RegionIndexes::kTbi;
  Status plink = OkStatus(), bgen = OkStatus();
  mutable int plink_checks = 0, bgen_checks = 0;
  std::string Describe() const { return "toy.vcz"; }
};

std::shared_ptr<const text::RecordSource> Text(const std::string& body, const std::string& name) {
  return std::make_shared<const text::StaticTextSource>(body, name);
}

const Catalog<Toy>& ToyCatalog() {
  static const Catalog<Toy> c{
      .views =
          {
              {.name = "STEM.vcf",
               .size = SizeBy::kRendered,
               .make = [](const Toy&, const std::string& n) { return Text("#CHROM\n1\t5\n", n); },
               .gz = "STEM.vcf.gz",
               .indexed = true},
              {.name = "notes.txt",
               .size = SizeBy::kFixed,
               .make = [](const Toy&, const std::string& n) { return Text(n + "\n", n); }},
              {.name = "sub/hidden.txt",
               .size = SizeBy::kFixed,
               .make = [](const Toy&, const std::string& n) { return Text("x\n", n); },
               .gz = "sub/hidden.txt.gz",
               .shown = false},
              {.name = "STEM.bed",
               .size = SizeBy::kArithmetic,
               .make = [](const Toy&, const std::string& n) { return Text("b", n); },
               .gate = 0},
              {.name = "STEM.bim",
               .size = SizeBy::kRendered,
               .make = [](const Toy&, const std::string& n) { return Text("b", n); },
               .gate = 0},
              {.name = "STEM.bgen",
               .size = SizeBy::kArithmetic,
               .make = [](const Toy&, const std::string& n) { return Text("g", n); },
               .gate = 1},
          },
      .gates = {{.check =
                     [](const Toy& t) {
                       ++t.plink_checks;
                       return t.plink;
                     },
                 .after = -1},
                {.check =
                     [](const Toy& t) {
                       ++t.bgen_checks;
                       return t.bgen;
                     },
                 .after = 0}},
      .preset = text::TabixPreset::kVcf};
  return c;
}

class CatalogTest : public ::testing::Test {
 protected:
  std::set<std::string> Build(const Toy& toy, const std::string& key = "store K\n") {
    tree_ = std::make_unique<Tree>();
    TreeWriter out(tree_.get());
    settings_.pool = &pool_;
    ViewSink sink(out, kRootIno, Meta{}, key, settings_);
    sink.SetContext({"toy.vcz", "c20"});
    AddViews(ToyCatalog(), toy, sink);
    std::set<std::string> names;
    Walk(kRootIno, "", &names);
    return names;
  }
  void Walk(Ino dir, const std::string& prefix, std::set<std::string>* names) {
    for (const auto& [name, child] : tree_->node(dir).children) {
      names->insert(prefix + name);
      if (tree_->node(child).kind == NodeKind::kDirectory) Walk(child, prefix + name + "/", names);
    }
  }
  std::string ReadAll(const std::string& path) {
    auto ino = tree_->Resolve(path);
    EXPECT_TRUE(ino.ok()) << path;
    auto pieces = tree_->Read(*ino, 0, 1 << 20);
    EXPECT_TRUE(pieces.ok()) << pieces.status().ToString();
    std::string out;
    for (const auto& p : *pieces) out.append(p.buffer->data() + p.offset, p.length);
    return out;
  }

  cache::CachePool pool_{1 << 20};
  ViewSettings settings_;
  std::unique_ptr<Tree> tree_;
};

TEST_F(CatalogTest, EveryViewOnceWithItsTwins) {
  Toy toy;
  EXPECT_EQ(Build(toy),
            (std::set<std::string>{"c20.vcf", "c20.vcf.gz", "c20.vcf.gz.tbi", "notes.txt", "sub",
                                   "sub/hidden.txt.gz", "c20.bed", "c20.bim", "c20.bgen"}));
  EXPECT_EQ(ReadAll("notes.txt"), "notes.txt\n");
  EXPECT_EQ(toy.plink_checks, 1);  // once for both gated views
  EXPECT_EQ(toy.bgen_checks, 1);
  // Which region indexes sit beside the twin: the store says.
  auto indexes = [&](RegionIndexes which) {
    toy.indexes = which;
    std::set<std::string> out;
    for (const auto& n : Build(toy)) {
      if (n.starts_with("c20.vcf.gz.")) out.insert(n);
    }
    return out;
  };
  EXPECT_EQ(indexes(RegionIndexes::kTbi), (std::set<std::string>{"c20.vcf.gz.tbi"}));
  EXPECT_EQ(indexes(RegionIndexes::kCsi), (std::set<std::string>{"c20.vcf.gz.csi"}));
  EXPECT_EQ(indexes(RegionIndexes::kTbiAndCsi),
            (std::set<std::string>{"c20.vcf.gz.csi", "c20.vcf.gz.tbi"}));
}

TEST_F(CatalogTest, AGateThatFailsDropsItsViewsAndThoseAfterIt) {
  Toy toy;
  toy.bgen = UnsupportedError("not expressible");
  auto names = Build(toy);
  EXPECT_TRUE(names.count("c20.bed"));
  EXPECT_FALSE(names.count("c20.bgen"));
  toy.plink = UnsupportedError("no samples");
  toy.bgen_checks = 0;
  names = Build(toy);
  EXPECT_FALSE(names.count("c20.bed") || names.count("c20.bim") || names.count("c20.bgen"));
  EXPECT_EQ(toy.bgen_checks, 0);  // not asked when the gate before it failed
  EXPECT_TRUE(names.count("c20.vcf"));
}

TEST_F(CatalogTest, LogPhraseNamesTheGroup) {
  EXPECT_EQ(GroupPhrase({"c20.bed", "c20.bim", "c20.fam"}, "c20"), "c20.bed/.bim/.fam");
  EXPECT_EQ(ViewName("STEM.bgen.bgi", "c20"), "c20.bgen.bgi");
  EXPECT_EQ(ViewName("samples.txt", "c20"), "samples.txt");
}

TEST_F(CatalogTest, ViewsArePersistedUnderTheStoreKeyAndTheirName) {
  char tmpl[] = "/tmp/omicsfs-catalog-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  text::IndexStore index(tmpl);
  settings_.sizing.index = &index;
  Toy toy;
  Build(toy, "store S\n");
  ReadAll("c20.vcf");
  EXPECT_TRUE(index.Load("store S\n\nview c20.vcf", 1).has_value());
  // The twin of a view shown only as a twin is keyed by the view's own name.
  ReadAll("sub/hidden.txt.gz");
  EXPECT_TRUE(index.Load("store S\n\nview sub/hidden.txt", 1).has_value());
  // No key: nothing persisted.
  Build(toy, "");
  ReadAll("notes.txt");
  EXPECT_FALSE(index.Load("\nview notes.txt", 1).has_value());
  fs::remove_all(tmpl);
}

TEST(KindsTest, HelpListsEveryKindAndView) {
  const std::string help = KindsHelp();
  for (const StoreKind* k : Kinds()) {
    EXPECT_NE(help.find(k->Name()), std::string::npos) << k->Name();
    for (const auto& v : k->ViewNames()) EXPECT_NE(help.find(v), std::string::npos) << v;
  }
  EXPECT_NE(help.find("STEM.bgen.bgi"), std::string::npos);
  EXPECT_NE(help.find("10x/features.tsv.gz"), std::string::npos);
  EXPECT_EQ(help.find("10x/features.tsv "), std::string::npos);  // shown only as its twin
}

}  // namespace
}  // namespace omicsfs::vfs
