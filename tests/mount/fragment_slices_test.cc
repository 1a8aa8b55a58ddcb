// Slices of BPCells fragments (region=, regions=@, cells=, groups=@) through a real mount: a
// region slice holds what tabix returns from the full view's twin (the same bytes, tabix run
// here), each fragment once in stored order; a cells slice the full view's lines of those
// barcodes; a groups folder one cells slice per group, sized from one tally, whose twins and
// indexes tabix and pysam read as MACS-style consumers do; bedtools reads a slice's twins.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "testutil/mount_fixture.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::Join;
using testutil::Lines;
using testutil::MountedFs;
using testutil::ReadOrFail;
using testutil::ReadWhole;
using testutil::RunCommand;
using testutil::ShOrFail;

const std::string kCorpus = OMICSFS_CORPUS_DIR "/bpcells/dir/v2";

std::string Field(const std::string& line, int n) {
  std::istringstream in(line);
  std::string f;
  for (int i = 0; i <= n; ++i) std::getline(in, f, '\t');
  return f;
}

// The lines of `full` (and the same lines of `twin`, its other form) whose barcode `keep` says.
template <class Keep>
std::string Filter(const std::string& full, Keep keep) {
  std::string out;
  for (const auto& line : Lines(full)) {
    if (keep(line)) out += line + "\n";
  }
  return out;
}

class FragmentSlices : public testutil::SliceSuite<FragmentSlices> {
 protected:
  static void SetUpTestSuite() {
    MakeLists("omicsfs-lists-");
    Mount(kCorpus);
    // Lists made from the store's own names: every third cell, and a clusters table.
    const auto cells = Lines(ReadOrFail(Store("atac.packed") + "/cells.txt"));
    ASSERT_GT(cells.size(), 100u);
    std::ofstream few(lists_ + "/few.txt");
    std::ofstream clusters(lists_ + "/clusters.tsv");
    clusters << "# barcode\tcluster\n";  // a comment line, skipped
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i % 97 == 5) few << cells[i] << "\n";
      clusters << cells[i] << "\t"
               << (i % 3 == 0   ? "B cells"
                   : i % 3 == 1 ? "T_cells"
                                : "Mono")
               << "\n";
    }
    std::ofstream parallel(lists_ + "/parallel.tsv");
    for (size_t i = 0; i < cells.size(); i += 2) parallel << cells[i] << "\tg" << i % 5 << "\n";
    std::ofstream(lists_ + "/peaks.bed")
        << "# peaks\nchr1\t1000000\t2000000\nchr2\t0\t3000000\nchr1\t1500000\t2500000\n";
    std::ofstream(lists_ + "/bad.bed") << "chr1\tten\t20\n";
    std::ofstream(lists_ + "/unknown.txt") << cells[0] << "\nNOPE-1\nNOPE-2\n";
    std::ofstream(lists_ + "/twice.txt") << cells[0] << "\n" << cells[0] << "\n";
    std::ofstream(lists_ + "/strangers.tsv") << cells[0] << "\tA\nNOPE-1\tB\n";
    std::ofstream(lists_ + "/dotdot.tsv") << cells[0] << "\t..\n";
    std::ofstream(lists_ + "/notable.tsv") << cells[0] << "\n";
  }
  static std::string Store(const std::string& name) { return mount_->path() + "/" + name; }
};

// One region: exactly tabix's lines from the full view's twin; the .tsv slice the same
// fragments in the 10x form (the full .tsv's lines at the same places).
TEST_F(FragmentSlices, RegionIsWhatTabixReturns) {
  for (const std::string store : {"atac.packed", "frags.packed", "frags.unpacked"}) {
    const std::string s = Store(store);
    const auto bed = Lines(ReadOrFail(s + "/fragments.bed")),
               tsv = Lines(ReadOrFail(s + "/fragments.tsv"));
    ASSERT_EQ(bed.size(), tsv.size());
    std::map<std::string, std::vector<size_t>> at;  // a bed line → its places
    for (size_t i = 0; i < bed.size(); ++i) at[bed[i]].push_back(i);
    const auto chrs = Lines(ReadOrFail(s + "/chromosomes.txt"));
    std::vector<std::string> regions = {
        chrs[0],          chrs[0] + ":1000000", chrs[0] + ":1000000-2000000",
        chrs[0] + ":1-1", chrs.back(),          chrs[1] + ":1-100"};
    // Regions deep into each chromosome (around its middle fragment), where the seek skips
    // blocks by end_max, and a chromosome whose first block holds another's ends.
    std::map<std::string, std::vector<uint64_t>> starts;
    for (const auto& line : bed) starts[Field(line, 0)].push_back(std::stoull(Field(line, 1)));
    for (const auto& [chr, v] : starts) {
      const uint64_t mid = v[v.size() / 2];
      regions.push_back(chr + ":" + std::to_string(mid > 3000 ? mid - 3000 : 1) + "-" +
                        std::to_string(mid + 3000));
      regions.push_back(chr + ":" + std::to_string(mid + 1) + "-" + std::to_string(mid + 1));
    }
    for (const auto& r : regions) {
      SCOPED_TRACE(store + " region=" + r);
      const std::string want = ShOrFail("tabix " + s + "/fragments.bed.gz '" + r + "'");
      const std::string got = ReadOrFail(s + "/region=" + r + "/fragments.bed");
      EXPECT_EQ(got, want);
      std::string want_tsv;
      std::set<size_t> seen;
      for (const auto& line : Lines(want)) {
        for (size_t i : at[line]) {
          if (seen.insert(i).second) want_tsv += tsv[i] + "\n";
        }
      }
      EXPECT_EQ(ReadOrFail(s + "/region=" + r + "/fragments.tsv"), want_tsv);
      struct stat st {};
      ASSERT_EQ(::stat((s + "/region=" + r + "/fragments.bed").c_str(), &st), 0);
      EXPECT_EQ(static_cast<size_t>(st.st_size), got.size());
    }
  }
}

// Several regions (overlapping, out of order) and a BED list: each fragment once, stored order.
TEST_F(FragmentSlices, SeveralRegionsEachFragmentOnce) {
  const std::string s = Store("atac.packed");
  const std::string full = ReadOrFail(s + "/fragments.bed");
  auto union_of = [&](const std::vector<std::string>& regions) {
    std::set<std::string> hit;
    for (const auto& r : regions) {
      for (const auto& line : Lines(ShOrFail("tabix " + s + "/fragments.bed.gz " + r)))
        hit.insert(line);
    }
    return Filter(full, [&](const std::string& line) { return hit.count(line) != 0; });
  };
  const std::vector<std::string> rs = {"chr2:1-3000000", "chr1:1000001-2000000",
                                       "chr1:1500001-2500000"};
  const std::string want = union_of(rs);
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(ReadOrFail(s + "/region=" + rs[0] + "," + rs[1] + "," + rs[2] + "/fragments.bed"),
            want);
  EXPECT_EQ(ReadOrFail(s + "/regions=@peaks/fragments.bed"), want);  // the same three as BED lines
  // Regions that touch stay apart: the zero-length fragment chr1 65795 65795 of frags.packed
  // overlaps neither chr1:1-65795 nor chr1:65796-65796 (tabix prints it for neither).
  const std::string frags = Store("frags.packed");
  const std::string touching =
      ReadOrFail(frags + "/region=chr1:1-65795,chr1:65796-65796/fragments.bed");
  EXPECT_EQ(touching.find("\t65795\t65795\t"), std::string::npos);
  EXPECT_EQ(touching,
            ShOrFail("tabix " + frags + "/fragments.bed.gz chr1:1-65795 chr1:65796-65796"));
  // Its twin and index are what bgzip and tabix make of it.
  EXPECT_EQ(ShOrFail("tabix " + s + "/regions=@peaks/fragments.bed.gz chr1:1700000-1800000"),
            ShOrFail("tabix " + s + "/fragments.bed.gz chr1:1700000-1800000"));
}

TEST_F(FragmentSlices, CellsKeepTheirLines) {
  const std::string s = Store("atac.packed");
  const std::string full = ReadOrFail(s + "/fragments.tsv");
  const auto few = Lines(ReadOrFail(lists_ + "/few.txt"));
  const std::set<std::string> chosen(few.begin(), few.end());
  const std::string want =
      Filter(full, [&](const std::string& l) { return chosen.count(Field(l, 3)) != 0; });
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(ReadOrFail(s + "/cells=@few/fragments.tsv"), want);
  // Inline, in another order: the same lines; cells.txt in the order given.
  const std::string inline_sel = few[2] + "," + few[0] + "," + few[1];
  const std::set<std::string> three = {few[0], few[1], few[2]};
  EXPECT_EQ(ReadOrFail(s + "/cells=" + inline_sel + "/fragments.tsv"),
            Filter(full, [&](const std::string& l) { return three.count(Field(l, 3)) != 0; }));
  EXPECT_EQ(ReadOrFail(s + "/cells=" + inline_sel + "/cells.txt"),
            few[2] + "\n" + few[0] + "\n" + few[1] + "\n");
  // ^: every other cell.
  const std::string others =
      Filter(full, [&](const std::string& l) { return chosen.count(Field(l, 3)) == 0; });
  EXPECT_EQ(ReadOrFail(s + "/cells=^@few/fragments.tsv"), others);
  // bedtools reads the slice's twins as their text (bedtools read nothing from `bgzip -l 0` bytes
  // of text past 32 KiB).
  ASSERT_GT(others.size(), 32768u);
  for (const char* v : {"fragments.bed", "fragments.tsv"}) {
    const std::string view = s + "/cells=^@few/" + v;
    const std::string merged = ShOrFail("bedtools merge -i " + view);
    EXPECT_NE(merged, "") << v;
    EXPECT_EQ(ShOrFail("bedtools merge -i " + view + ".gz"), merged) << v;
  }
  // Composed with a region, in both orders: the same bytes.
  const std::string a = ReadOrFail(s + "/region=chr1/cells=@few/fragments.bed");
  EXPECT_EQ(a, ReadOrFail(s + "/cells=@few/region=chr1/fragments.bed"));
  EXPECT_EQ(a, Filter(ReadOrFail(s + "/region=chr1/fragments.bed"),
                      [&](const std::string& l) { return chosen.count(Field(l, 3)) != 0; }));
}

// groups=@clusters: a folder per group (sorted bytewise), each the cells= slice of its group,
// its sizes right before any read; its twin and index read by tabix and pysam.
TEST_F(FragmentSlices, GroupsAreCellSlices) {
  const std::string s = Store("atac.packed");
  const std::string g = s + "/groups=@clusters";
  std::vector<std::string> names;
  for (auto& e : fs::directory_iterator(g)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"B cells", "Mono", "T_cells"}));
  std::map<std::string, std::string> group_of;
  for (const auto& line : Lines(ReadOrFail(lists_ + "/clusters.tsv"))) {
    if (line[0] != '#') group_of[Field(line, 0)] = Field(line, 1);
  }
  const std::string bed = ReadOrFail(s + "/fragments.bed"), tsv = ReadOrFail(s + "/fragments.tsv");
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    auto mine = [&](const std::string& l) { return group_of[Field(l, 3)] == name; };
    struct stat st {};
    ASSERT_EQ(::stat((g + "/" + name + "/fragments.tsv").c_str(), &st), 0);  // sized before read
    const std::string want_tsv = Filter(tsv, mine);
    EXPECT_EQ(static_cast<size_t>(st.st_size), want_tsv.size());
    EXPECT_EQ(ReadOrFail(g + "/" + name + "/fragments.tsv"), want_tsv);
    EXPECT_EQ(ReadOrFail(g + "/" + name + "/fragments.bed"), Filter(bed, mine));
    // MACS-style consumers: tabix and pysam on the group's twin and its index.
    const std::string region = "chr1:1000000-3000000";
    EXPECT_EQ(ShOrFail("tabix '" + g + "/" + name + "/fragments.bed.gz' " + region),
              Filter(ShOrFail("tabix " + s + "/fragments.bed.gz " + region), mine));
    const std::string py =
        "import pysam,sys; t=pysam.TabixFile(sys.argv[1]); print(sum(1 for _ in t.fetch('chr2')))";
    EXPECT_EQ(
        ShOrFail("/usr/bin/python3 -c \"" + py + "\" '" + g + "/" + name + "/fragments.bed.gz'"),
        std::to_string(
            Lines(Filter(ShOrFail("tabix " + s + "/fragments.bed.gz chr2"), mine)).size()) +
            "\n");
    // The 10x form MACS and Signac read: its twin and index, by tabix.
    EXPECT_EQ(ShOrFail("tabix '" + g + "/" + name + "/fragments.tsv.gz' " + region),
              Filter(ShOrFail("tabix " + s + "/fragments.tsv.gz " + region), mine));
  }
  // A group's folder slices further; a group within a region.
  EXPECT_EQ(ReadOrFail(g + "/Mono/region=chr2/fragments.bed"),
            Filter(ReadOrFail(s + "/region=chr2/fragments.bed"),
                   [&](const std::string& l) { return group_of[Field(l, 3)] == "Mono"; }));
  EXPECT_EQ(ReadOrFail(s + "/region=chr2/groups=@clusters/Mono/fragments.bed"),
            ReadOrFail(g + "/Mono/region=chr2/fragments.bed"));
}

// The first touches of a groups folder's views come from several readers at once: one regrouping
// pass serves them all, and each reads its group's bytes.
TEST_F(FragmentSlices, GroupsReadInParallel) {
  const std::string s = Store("atac.packed");
  const std::string g = s + "/groups=@parallel";
  std::map<std::string, std::string> group_of;
  for (const auto& line : Lines(ReadOrFail(lists_ + "/parallel.tsv")))
    group_of[Field(line, 0)] = Field(line, 1);
  const std::string full = ReadOrFail(s + "/fragments.bed");
  std::vector<std::string> names = {"g0", "g2", "g4"};
  std::vector<std::string> got(2 * names.size());
  std::vector<std::thread> readers;
  for (size_t i = 0; i < got.size(); ++i) {
    readers.emplace_back([&, i] {
      const std::string& name = names[i % names.size()];
      got[i] = i < names.size() ? ReadOrFail(g + "/" + name + "/fragments.bed")
                                : ShOrFail("tabix '" + g + "/" + name + "/fragments.bed.gz' chr1");
    });
  }
  for (auto& t : readers) t.join();
  for (size_t i = 0; i < got.size(); ++i) {
    const std::string& name = names[i % names.size()];
    const std::string want =
        Filter(full, [&](const std::string& l) { return group_of[Field(l, 3)] == name; });
    EXPECT_EQ(got[i],
              i < names.size()
                  ? want
                  : Filter(want, [](const std::string& l) { return Field(l, 0) == "chr1"; }))
        << name;
  }
}

TEST_F(FragmentSlices, BadSelectorsAreErrorFolders) {
  const std::string s = Store("atac.packed");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"region=chrZ", "no contig 'chrZ'"},
      {"region=chr1:5-2", "the end is before the start"},
      {"region=chr1:x", "is not a position"},
      {"regions=chr1", "regions= takes a list: regions=@NAME (LISTS/NAME.bed)"},
      {"regions=@bad", "not a BED interval"},
      {"regions=@missing", "cannot read"},
      {"cells=NOPE", "1 of 1 cells are not in"},
      {"cells=@unknown", "2 of 3 cells are not in"},
      {"cells=@twice", "is listed twice"},
      {"groups=@strangers", "1 of 2 cells are not in"},
      {"groups=@dotdot", "cannot be a folder's name"},
      {"groups=@notable", "not ITEM<TAB>GROUP"},
      {"groups=B", "groups= takes a list: groups=@NAME (LISTS/NAME.tsv)"},
      {"region=chr1/regions=@peaks", "region= and regions= cannot both be given"},
      {"cells=@few/groups=@clusters", "cannot both be given"},
      {"region=chr1/region=chr2", "given twice"},
      {"rows=a",
       "no slice key 'rows' (this store knows region=, regions=@NAME, cells=, groups=@NAME, "
       "scale=)"},
  };
  for (const auto& [path, message] : cases) testutil::ExpectOnlyErrorTxt(s + "/" + path, message);
  // The rest of the mount is untouched.
  EXPECT_FALSE(ReadOrFail(s + "/region=chr1/fragments.bed").empty());
}

}  // namespace
}  // namespace omicsfs
