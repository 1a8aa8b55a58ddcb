// Coverage tracks of BPCells fragments through a real mount: in every corpus fragments store, a
// region slice, three groups of a groups=@NAME folder and their scale=cpm/ folders, the bedGraphs
// are what bedtools genomecov writes for the folder's own fragments.bed and pyBigWig reads the
// bigWigs' intervals as the bedGraphs' lines (coverage_check.py); deepTools reads one bigWig; an
// empty region and empty groups give valid empty tracks; scale=cpm composes in either order; a
// later mount serves the tracks from index_dir; a damaged store gives EIO, logged.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <sstream>

#include "testutil/mount_fixture.h"

namespace omicsfs {
namespace {

using testutil::Lines;
using testutil::MountedFs;
using testutil::ReadOrFail;
using testutil::ReadWhole;
using testutil::RunCommand;

const std::string kCorpus = OMICSFS_CORPUS_DIR "/bpcells";

bool Have(const std::string& cmd) {
  return RunCommand({"sh", "-c", "command -v " + cmd + " >/dev/null"}) == 0;
}
bool HavePython(const std::string& module) {
  return RunCommand({"/usr/bin/python3", "-c", "import " + module}) == 0;
}

// The corpus' fragments stores as mount paths: dir/v2/frags.packed, h5/stores_v2.h5/frags_packed.
std::vector<std::string> FragmentStores() {
  std::vector<std::string> out;
  std::istringstream manifest(ReadOrFail(kCorpus + "/manifest.tsv"));
  std::string line;
  while (std::getline(manifest, line)) {
    std::vector<std::string> f;
    std::istringstream in(line);
    for (std::string x; std::getline(in, x, '\t');) f.push_back(x);
    if (f.size() < 4 || f[3] != "fragments") continue;
    out.push_back(f[1] == "-" ? f[0] : f[0] + f[1]);
  }
  return out;
}

class Coverage : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    lists_ = testutil::MakeTempDir("omicsfs-cov-lists-");
    index_ = testutil::MakeTempDir("omicsfs-cov-index-");
    mount_ = Start().release();
    ASSERT_NE(mount_, nullptr);
    // Three clusters of the atac store's cells.
    const auto cells = Lines(ReadOrFail(Atac() + "/cells.txt"));
    ASSERT_GT(cells.size(), 100u);
    std::ofstream clusters(lists_ + "/clusters.tsv");
    for (size_t i = 0; i < cells.size(); ++i)
      clusters << cells[i] << "\t" << (i % 3 == 0 ? "B cells" : i % 3 == 1 ? "T" : "Mono") << "\n";
  }
  static std::unique_ptr<MountedFs> Start() {
    return MountedFs::Start(OMICSFS_BINARY, kCorpus,
                            {"-o", "lists=" + lists_ + ",index_dir=" + index_});
  }
  static void TearDownTestSuite() {
    delete mount_;
    mount_ = nullptr;
    testutil::RemoveTree(lists_);
    testutil::RemoveTree(index_);
  }
  void SetUp() override {
    if (!Have("bedtools")) GTEST_SKIP() << "bedtools is not installed: .ci/setup installs it";
    if (!HavePython("pyBigWig, numpy"))
      GTEST_SKIP() << "python3-pybigwig is not installed: .ci/setup installs it";
  }
  static std::string Atac() { return mount_->path() + "/dir/v2/atac.packed"; }
  // coverage_check.py on `folders` (and, with `cpm`, their scale=cpm/): "ok" or what differs.
  static std::string Check(const std::vector<std::string>& folders, bool cpm) {
    std::vector<std::string> argv{"/usr/bin/python3", OMICSFS_COVERAGE_CHECK};
    if (cpm) argv.push_back("--cpm");
    argv.insert(argv.end(), folders.begin(), folders.end());
    std::string out;
    const int rc = RunCommand(argv, &out, std::chrono::seconds(300));
    return rc == 0 ? out : "exit " + std::to_string(rc) + ": " + out;
  }
  static inline MountedFs* mount_ = nullptr;
  static inline std::string lists_, index_;
};

TEST_F(Coverage, EveryCorpusStoreMatchesBedtoolsAndPyBigWig) {
  std::vector<std::string> folders;
  for (const auto& s : FragmentStores()) folders.push_back(mount_->path() + "/" + s);
  ASSERT_EQ(folders.size(), 12u);
  for (const auto& f : folders) {
    struct stat st;
    ASSERT_EQ(::stat((f + "/coverage.bw").c_str(), &st), 0) << f;
  }
  // The raw tracks everywhere; scaled in two (the scaling does not depend on the store's form).
  EXPECT_EQ(Check(folders, false), "ok\n");
  EXPECT_EQ(Check({folders[0], Atac()}, true), "ok\n");
}

TEST_F(Coverage, ARegionSliceAndThreeGroups) {
  const std::string groups = Atac() + "/groups=@clusters";
  EXPECT_EQ(Check({Atac() + "/region=chr1:1-3000000", groups + "/B cells", groups + "/T",
                   groups + "/Mono", mount_->path() + "/dir/v2/frags.packed/region=chrX"},
                  true),
            "ok\n");
}

// No fragment in the folder: empty bedGraphs, bigWigs with every chromosome (sized 1) and no
// interval; the same in every group of the region.
TEST_F(Coverage, AnEmptyRegionAndEmptyGroups) {
  const std::string empty = Atac() + "/region=chr2:1-2";
  EXPECT_EQ(ReadOrFail(empty + "/fragments.bed"), "");
  EXPECT_EQ(ReadOrFail(empty + "/coverage.bedgraph"), "");
  EXPECT_EQ(ReadOrFail(empty + "/scale=cpm/insertions.bedgraph"), "");
  EXPECT_EQ(Check({empty, empty + "/groups=@clusters/T", empty + "/groups=@clusters/Mono"}, true),
            "ok\n");
  std::string out;
  ASSERT_EQ(RunCommand({"/usr/bin/python3", "-c",
                        "import pyBigWig,sys; b=pyBigWig.open(sys.argv[1]); "
                        "print(len(b.chroms()), min(b.chroms().values()), b.intervals('chr1'))",
                        empty + "/insertions.bw"},
                       &out),
            0);
  EXPECT_EQ(out,
            std::to_string(Lines(ReadOrFail(Atac() + "/chromosomes.txt")).size()) + " 1 None\n");
}

// The zero-length fragments of the corpus (end == start) are lines of fragments.bed, counted in
// the scale's lines, and cover nothing.
TEST_F(Coverage, ZeroLengthFragmentsCoverNothing) {
  const std::string frags = mount_->path() + "/dir/v2/frags.packed";
  const std::string bed = ReadOrFail(frags + "/fragments.bed");
  std::string zero;
  for (const auto& line : Lines(bed)) {
    std::istringstream in(line);
    std::string c, b, e;
    in >> c >> b >> e;
    if (b == e) zero = c + "\t" + b;
  }
  ASSERT_FALSE(zero.empty()) << "the corpus has zero-length fragments";
  // chrX's zero-length fragment at 2000149165 lies in no other fragment: no line starts there.
  EXPECT_EQ(ReadOrFail(frags + "/coverage.bedgraph").find("\nchrX\t2000149165\t"),
            std::string::npos);
  EXPECT_EQ(ReadOrFail(frags + "/insertions.bedgraph").find("\nchrX\t2000149165\t"),
            std::string::npos);
}

TEST_F(Coverage, ScaleComposesInEitherOrder) {
  const std::string a = ReadOrFail(Atac() + "/region=chr1:1-3000000/scale=cpm/coverage.bedgraph");
  const std::string b = ReadOrFail(Atac() + "/scale=cpm/region=chr1:1-3000000/coverage.bedgraph");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_EQ(ReadOrFail(Atac() + "/groups=@clusters/T/scale=cpm/coverage.bw"),
            ReadOrFail(Atac() + "/scale=cpm/groups=@clusters/T/coverage.bw"));
  // Only the four tracks there.
  std::string ls;
  ASSERT_EQ(RunCommand({"ls", Atac() + "/scale=cpm"}, &ls), 0);
  EXPECT_EQ(ls, "coverage.bedgraph\ncoverage.bw\ninsertions.bedgraph\ninsertions.bw\n");
  // scale= knows cpm only.
  EXPECT_NE(ReadOrFail(Atac() + "/scale=rpkm/ERROR.txt").find("rpkm"), std::string::npos);
}

// deepTools (bigwigCompare: the track added to itself, per base) reads a bigWig of the mount.
TEST_F(Coverage, DeepToolsReadsABigWig) {
  if (!Have("bigwigCompare"))
    GTEST_SKIP() << "python3-deeptools is not installed: .ci/setup installs it";
  testutil::TempDir tmp("omicsfs-cov-deeptools-");
  const std::string out = tmp.path() + "/sum.bedgraph";
  ASSERT_EQ(RunCommand({"bigwigCompare", "-b1", Atac() + "/coverage.bw", "-b2",
                        Atac() + "/coverage.bw", "--operation", "add", "-bs", "1", "-r",
                        "chr1:1:200000", "-p", "1", "--outFileFormat", "bedgraph", "-o", out},
                       nullptr, std::chrono::seconds(120)),
            0);
  std::string want;
  for (const auto& line : Lines(ReadOrFail(Atac() + "/coverage.bedgraph"))) {
    std::istringstream in(line);
    std::string c;
    long b, e, d;
    in >> c >> b >> e >> d;
    if (c == "chr1" && e <= 200000)
      want += c + "\t" + std::to_string(b) + "\t" + std::to_string(e) + "\t" +
              std::to_string(2 * d) + "\n";
  }
  ASSERT_FALSE(want.empty());
  std::string got;
  for (const auto& line : Lines(ReadOrFail(out))) {
    if (!line.ends_with("\t0")) got += line + "\n";
  }
  EXPECT_EQ(got, want);
}

// A later mount with the same index_dir serves the same bytes, kept there.
TEST_F(Coverage, ALaterMountServesTheTracksFromIndexDir) {
  const std::string rel = "/dir/v2/atac.packed/groups=@clusters/Mono/";
  std::map<std::string, std::string> first;
  for (const char* f : {"coverage.bedgraph", "insertions.bw", "scale=cpm/coverage.bw"})
    first[f] = ReadOrFail(mount_->path() + rel + f);
  auto again = Start();
  ASSERT_NE(again, nullptr);
  for (const auto& [f, bytes] : first) EXPECT_EQ(ReadOrFail(again->path() + rel + f), bytes) << f;
}

// Fragments out of order (a damaged start_data): the tracks' read fails with EIO, logged.
TEST_F(Coverage, ADamagedStoreIsEioAndLogged) {
  testutil::TempDir tmp("omicsfs-cov-damaged-");
  const std::string store = tmp.path() + "/src/frags.packed";
  testutil::CopyTree(kCorpus + "/dir/v2/frags.packed", store);
  std::string data = testutil::Slurp(store + "/start_data");
  ASSERT_GT(data.size(), 4100u);
  for (size_t i = 4000; i < 4100; ++i) data[i] = static_cast<char>(data[i] ^ 0xff);
  std::ofstream(store + "/start_data", std::ios::binary | std::ios::trunc) << data;
  auto m = MountedFs::Start(OMICSFS_BINARY, tmp.path() + "/src",
                            {"-o", "index_dir=" + tmp.path() + "/index"});
  ASSERT_NE(m, nullptr);
  for (const char* f : {"coverage.bedgraph", "insertions.bw", "scale=cpm/coverage.bw"}) {
    std::string bytes;
    int err = 0;
    EXPECT_FALSE(ReadWhole(m->path() + "/frags.packed/" + f, &bytes, &err)) << f;
    EXPECT_EQ(err, EIO) << f;
  }
  EXPECT_NE(m->Log().find("coverage.bedgraph of " + store + ": fragments of chr1 out of order"),
            std::string::npos)
      << m->Log();
}

}  // namespace
}  // namespace omicsfs
