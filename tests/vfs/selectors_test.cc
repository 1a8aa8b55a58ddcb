// The slicing vocabulary on its own (vfs/selectors.h, vfs/slices.h): the selector table, the
// NameChooser, the region parsers, list lines and selector names.
#include "vfs/selectors.h"

#include <gtest/gtest.h>

#include <set>

#include "vfs/kinds/bpcells.h"
#include "vfs/kinds/datg.h"
#include "vfs/kinds/vcz.h"
#include "vfs/slices.h"

namespace omicsfs::vfs {
namespace {

std::vector<std::vector<const SelectorRow*>> AllRowSets() {
  return {VczSliceRows(), MatrixSliceRows(), FragmentSliceRows(), DatgSliceRows()};
}

// Every row of every kind: a lower-case key (words joined by '-') (what ParseSelector reads), its
// help and an example that is a selector of that very key; a kind's keys distinct; rivals that name
// each other; a group key the kind knows; list extensions where lists are read.
TEST(SelectorTable, EveryRowIsComplete) {
  for (const auto& rows : AllRowSets()) {
    std::set<std::string_view> keys;
    for (const SelectorRow* r : rows) {
      SCOPED_TRACE(std::string(r->key));
      EXPECT_TRUE(keys.insert(r->key).second);
      EXPECT_FALSE(r->help.empty());
      for (char c : r->key) EXPECT_TRUE((c >= 'a' && c <= 'z') || c == '-');  // min-af=
      EXPECT_TRUE(r->key.front() != '-' && r->key.back() != '-');
      auto example = ParseSelector(r->example);
      ASSERT_TRUE(example.has_value());
      EXPECT_EQ(example->key, r->key);
      if (!r->inline_items) {
        EXPECT_FALSE(example->list.empty()) << "a list-only row's example is a list";
        EXPECT_FALSE(r->list_ext.empty());
      }
      // Rivalry is mutual where the kind knows both keys (datg has cols= and no groups=).
      if (const SelectorRow* rival = r->rival.empty() ? nullptr : FindRow(rows, r->rival)) {
        EXPECT_EQ(rival->rival, r->key);
      }
      if (r->selects == Selects::kGroups) {
        const SelectorRow* member = FindRow(rows, r->group_key);
        ASSERT_NE(member, nullptr);
        EXPECT_EQ(member->selects, Selects::kNames);
      }
    }
  }
}

TEST(SelectorTable, HelpIsDerivedFromTheRows) {
  EXPECT_EQ(KeysHelp(VczSliceRows()),
            "region=, regions=@NAME, samples=, format=, types=, alleles=, filter=, min-af=, "
            "max-af=, include=, exclude=");
  EXPECT_EQ(KeysHelp(MatrixSliceRows()), "rows=, cols=, groups=@NAME");
  const std::string help = RowsHelp(FragmentSliceRows(), "  ");
  for (const SelectorRow* r : FragmentSliceRows()) {
    EXPECT_NE(help.find(std::string(r->example)), std::string::npos) << help;
    EXPECT_NE(help.find(std::string(r->help)), std::string::npos) << help;
  }
  EXPECT_EQ(FindRow(VczSliceRows(), "cells"), nullptr);
  EXPECT_EQ(FindRow(VczSliceRows(), "samples"), &selectors::kSamples);
}

TEST(SelectorTable, AnyKeyValueIsASelector) {
  auto s = ParseSelector("Samples=^@cases");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->key, "Samples");
  EXPECT_TRUE(s->exclude);
  EXPECT_EQ(s->list, "cases");
  EXPECT_FALSE(ParseSelector("matrix.mtx").has_value());
  EXPECT_FALSE(ParseSelector("=x").has_value());
  auto inline_items = ParseSelector("region={1:2}:3-4");
  ASSERT_TRUE(inline_items.has_value());
  EXPECT_EQ(inline_items->value, "{1:2}:3-4");
}

TEST(Quote, EscapesWhatATerminalHides) {
  EXPECT_EQ(Quote("NA00001"), "'NA00001'");
  EXPECT_EQ(Quote("NA00001 "), "'NA00001\\x20'");
  EXPECT_EQ(Quote(" a b "), "'\\x20a b\\x20'");
  EXPECT_EQ(Quote("\xEF\xBB\xBFNA1"), "'\\xef\\xbb\\xbfNA1'");
  EXPECT_EQ(Quote("a\tb\r"), "'a\\x09b\\x0d'");
  EXPECT_EQ(Quote("it's"), "'it\\'s'");
  EXPECT_EQ(QuoteSome({"a", "b", "c"}, 2), "'a', 'b', ...");
}

TEST(ListLines, ABomAndCrlfLineEndsAreTheSameList) {
  EXPECT_EQ(ListLines("\xEF\xBB\xBF"
                      "a\r\nb\r\n\r\nc"),
            (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(ListLines("a\nb\n"), (std::vector<std::string>{"a", "b"}));
  auto groups = ParseGroups(
      "\xEF\xBB\xBF"
      "c1\tB\r\nc2\tA\r\n",
      "@g");
  ASSERT_TRUE(groups.ok()) << groups.status().ToString();
  EXPECT_EQ(groups->names, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(groups->members[1], std::vector<std::string>{"c1"});
}

class Chooser : public ::testing::Test {
 protected:
  NameChooser names_{std::vector<std::string>{"a", "b", "dup", "c", "dup"}};
  NameChooser::Phrase p_{"samples=", "sample", "s.vcz"};
};

TEST_F(Chooser, ChosenInTheOrderGivenExcludedInStoreOrder) {
  EXPECT_EQ(*names_.Choose({"c", "a"}, false, p_), (std::vector<uint32_t>{3, 0}));
  EXPECT_EQ(*names_.Choose({"c", "a"}, true, p_), (std::vector<uint32_t>{1, 2, 4}));
  // ^ of a shared name drops every position bearing it.
  EXPECT_EQ(*names_.Choose({"dup"}, true, p_), (std::vector<uint32_t>{0, 1, 3}));
}

TEST_F(Chooser, RefusalsHaveOneShape) {
  auto msg = [&](const std::vector<std::string>& items, bool exclude) {
    auto r = names_.Choose(items, exclude, p_);
    return r.ok() ? std::string("ok") : r.status().message();
  };
  EXPECT_EQ(msg({"x", "a", "y "}, false),
            "samples=: 2 of 3 samples are not in s.vcz: 'x', 'y\\x20'");
  EXPECT_EQ(msg({"a", "a"}, false), "samples=: sample 'a' is listed twice");
  EXPECT_EQ(msg({"a", "a"}, true), "samples=: sample 'a' is listed twice");
  EXPECT_EQ(msg({"dup"}, false),
            "samples=: sample 'dup' is ambiguous: 2 samples of s.vcz bear that name (exclude them "
            "with ^)");
  EXPECT_EQ(msg({}, false), "samples=: no sample given");
  EXPECT_EQ(msg({"a", "b", "dup", "c"}, true), "samples=: no sample is left");
  EXPECT_EQ(names_.Choose({"x"}, false, p_).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(names_.Choose({"dup"}, false, p_).status().code(), ErrorCode::kInvalidArgument);
}

TEST_F(Chooser, FieldsAreKeptInStoreOrder) {
  NameChooser fields(std::vector<std::string>{"GT", "DP", "GQ"});
  NameChooser::Phrase p{"format=", "FORMAT field", "s.vcz"};
  EXPECT_EQ(*fields.Keep({"GQ", "GT"}, false, p), (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(*fields.Keep({"GQ"}, true, p), (std::vector<uint32_t>{0, 1}));
  EXPECT_TRUE(fields.Keep({"GT", "DP", "GQ"}, true, p)->empty());  // no FORMAT field at all
  EXPECT_FALSE(fields.Keep({"GT", "GT"}, false, p).ok());
  EXPECT_EQ(fields.Keep({"XY"}, false, p).status().message(),
            "format=: 1 of 1 FORMAT fields are not in s.vcz: 'XY'");
}

TEST(NameChooserStandIns, AStoreWithoutNamesIsChosenByItsStandIns) {
  std::vector<std::string> none;
  NameChooser cols(nullptr, &none, 3, "col");
  EXPECT_EQ(cols.size(), 3u);
  EXPECT_EQ(*cols.Choose({"col3", "col1"}, false, {"cols=", "column", "m"}),
            (std::vector<uint32_t>{2, 0}));
  NameChooser moved = std::move(cols);  // its own names move with it
  EXPECT_EQ(moved.name(1), "col2");
  EXPECT_EQ(moved.Find("col2")->first, 1u);
}

TEST(LazyChooser, IsMadeOnceOnFirstUse) {
  int made = 0;
  LazyChooser lazy([&] {
    ++made;
    return NameChooser(std::vector<std::string>{"x"});
  });
  EXPECT_EQ(made, 0);
  EXPECT_EQ(lazy.get().size(), 1u);
  EXPECT_EQ(lazy.get().size(), 1u);
  EXPECT_EQ(made, 1);
}

class Regions : public ::testing::Test {
 protected:
  NameChooser contigs_{std::vector<std::string>{"chr1", "HLA-A*01:01", "NC_000074.7:1-2", "20"}};
  RegionAt Parse(const std::string& text, RegionStyle style) {
    auto r = ParseRegion(text, style, contigs_, "s");
    EXPECT_TRUE(r.ok()) << text << ": " << r.status().ToString();
    return r.ok() ? *r : RegionAt{};
  }
  std::string Error(const std::string& text) {
    auto r = ParseRegion(text, RegionStyle::kTabix, contigs_, "s");
    return r.ok() ? "ok" : r.status().message();
  }
};

bool Same(const RegionAt& a, const RegionAt& b) {
  return a.contig == b.contig && a.begin == b.begin && a.end == b.end;
}

TEST_F(Regions, ChrBegIsOnePositionForBcftoolsAndToTheEndForTabix) {
  EXPECT_TRUE(Same(Parse("chr1:100", RegionStyle::kBcftools), {0, 99, 100}));
  EXPECT_TRUE(Same(Parse("chr1:100", RegionStyle::kTabix), {0, 99, UINT64_MAX}));
  EXPECT_TRUE(Same(Parse("chr1:100-", RegionStyle::kBcftools), {0, 99, UINT64_MAX}));
  EXPECT_TRUE(Same(Parse("chr1:100-200", RegionStyle::kTabix), {0, 99, 200}));
  EXPECT_TRUE(Same(Parse("20", RegionStyle::kTabix), {3, 0, UINT64_MAX}));
}

TEST_F(Regions, NamesHoldingColonsWholeOrInBraces) {
  EXPECT_TRUE(Same(Parse("HLA-A*01:01", RegionStyle::kTabix), {1, 0, UINT64_MAX}));
  EXPECT_TRUE(Same(Parse("HLA-A*01:01:5-6", RegionStyle::kTabix), {1, 4, 6}));
  EXPECT_TRUE(Same(Parse("{NC_000074.7:1-2}:1-5", RegionStyle::kBcftools), {2, 0, 5}));
  EXPECT_TRUE(Same(Parse("{NC_000074.7:1-2}", RegionStyle::kBcftools), {2, 0, UINT64_MAX}));
  EXPECT_TRUE(Same(Parse("{chr1}:7", RegionStyle::kBcftools), {0, 6, 7}));
}

TEST_F(Regions, BadRegionsSayWhy) {
  EXPECT_EQ(Error("chrZ:1-2"), "region 'chrZ:1-2': no contig 'chrZ' in s");
  EXPECT_EQ(Error("chr1:x-5"), "region 'chr1:x-5': 'x' is not a position (1, 2, ...)");
  EXPECT_EQ(Error("chr1:0"), "region 'chr1:0': '0' is not a position (1, 2, ...)");
  EXPECT_EQ(Error("chr1:9-5"), "region 'chr1:9-5': the end is before the start");
  EXPECT_EQ(Error("{chr1"), "region '{chr1': not {CONTIG} or {CONTIG}:RANGE");
  EXPECT_EQ(Error("{chr1}x"), "region '{chr1}x': not {CONTIG} or {CONTIG}:RANGE");
  EXPECT_EQ(Error("{chr2}:1"), "region '{chr2}:1': no contig 'chr2' in s");
}

TEST_F(Regions, BedLines) {
  auto r = ParseBedRegion("chr1 10\t20 name", contigs_, "@l", "s");
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_TRUE(Same(**r, {0, 10, 20}));
  for (const char* header : {"", "# c", "track name=x", "browser position"}) {
    auto h = ParseBedRegion(header, contigs_, "@l", "s");
    ASSERT_TRUE(h.ok());
    EXPECT_FALSE(h->has_value());
  }
  EXPECT_EQ(ParseBedRegion("chr1\t20\t10", contigs_, "@l", "s").status().message(),
            "@l: not a BED interval: 'chr1\\x0920\\x0910'");
  EXPECT_EQ(ParseBedRegion("chr1\t20", contigs_, "@l", "s").status().message(),
            "@l: a BED line needs CHROM, START and END: 'chr1\\x0920'");
  EXPECT_EQ(ParseBedRegion("chrQ\t1\t2", contigs_, "@l", "s").status().message(),
            "@l: no contig 'chrQ' in s");
}

}  // namespace
}  // namespace omicsfs::vfs
