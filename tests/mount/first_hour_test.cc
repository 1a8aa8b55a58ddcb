// What a new user meets in the first hour when something goes wrong (issue 15): refused
// mountpoints, option errors, logs a detached daemon keeps, the .omicsfs/ control folder,
// `omicsfs index`, single-file sources, symlinks, damaged HDF5 and datg files, Seurat on a store
// without names. Real mounts and the real command line; every check states its exit code and
// its message.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testutil/mount_fixture.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::CopyTree;
using testutil::MountedFs;
using testutil::ReadMaybeGz;
using testutil::ReadWhole;
using testutil::RunCommand;

const std::string kCorpus = OMICSFS_CORPUS_DIR;
const std::string kData = OMICSFS_TEST_DATA;

class Dir {
 public:
  explicit Dir(const char* prefix = "omicsfs-1h-")
      : path_(fs::temp_directory_path() / fs::unique_path(std::string(prefix) + "%%%%%%")) {
    fs::create_directories(path_);
  }
  ~Dir() {
    fs_error ec;
    fs::remove_all(path_, ec);
  }
  std::string str() const { return path_.string(); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Runs argv with stdout and stderr both captured into *out; returns the exit status.
int RunBoth(const std::vector<std::string>& argv, std::string* out,
            const std::vector<std::string>& env = {}) {
  std::vector<std::string> cmd = {"env"};
  cmd.insert(cmd.end(), env.begin(), env.end());
  cmd.insert(cmd.end(), {"sh", "-c", "exec \"$@\" 2>&1", "sh"});
  cmd.insert(cmd.end(), argv.begin(), argv.end());
  return RunCommand(cmd, out, std::chrono::seconds(120));
}

// A source with a bit of everything: a good store, a broken one, a plain file.
struct Source {
  Dir dir;
  Source() {
    CopyTree(kCorpus + "/bpcells/dir/v2/counts.packed", dir / "good.packed");
    CopyTree(kCorpus + "/bpcells/dir/v2/counts.packed", dir / "broken.packed");
    fs::remove(dir / "broken.packed/idxptr");
    Write(dir / "notes.txt", "notes\n");
  }
};

// ---- 1 and 8: mountpoints ----

TEST(FirstHour, RefusedMountpointsSayWhy) {
  Source s;
  std::string out;
  // A regular file: refused, and it stays a plain file (of another mount, too).
  EXPECT_EQ(RunBoth({OMICSFS_BINARY, s.dir.str(), s.dir / "notes.txt"}, &out), 3);
  EXPECT_NE(out.find("is not a directory"), std::string::npos) << out;
  std::string notes;
  EXPECT_TRUE(ReadWhole(s.dir / "notes.txt", &notes));
  EXPECT_EQ(notes, "notes\n");
  // Inside SOURCE, and SOURCE inside the mountpoint.
  fs::create_directories(s.dir / "sub/mnt");
  EXPECT_EQ(RunBoth({OMICSFS_BINARY, "-f", s.dir.str(), s.dir / "sub/mnt"}, &out), 3);
  EXPECT_NE(out.find("is inside SOURCE"), std::string::npos) << out;
  EXPECT_EQ(RunBoth({OMICSFS_BINARY, "-f", s.dir / "good.packed", s.dir.str()}, &out), 3);
  EXPECT_NE(out.find("inside mountpoint"), std::string::npos) << out;
  // Missing.
  EXPECT_EQ(RunBoth({OMICSFS_BINARY, "-f", s.dir.str(), s.dir / "nope"}, &out), 3);
  EXPECT_NE(out.find("No such file or directory"), std::string::npos) << out;
  // Already an omicsfs mount: no second daemon stacked on it.
  auto m = MountedFs::Start(OMICSFS_BINARY, s.dir.str());
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(RunBoth({OMICSFS_BINARY, "-f", s.dir.str(), m->path()}, &out), 3);
  EXPECT_NE(out.find("already an omicsfs mount"), std::string::npos) << out;
  EXPECT_TRUE(m->alive());
  // A daemon that died: the next mount says how to recover.
  EXPECT_NE(m->SignalAndWait(SIGKILL), -2);
  struct statfs sfs;
  ASSERT_NE(::statfs(m->path().c_str(), &sfs), 0);
  ASSERT_EQ(errno, ENOTCONN);
  EXPECT_EQ(RunBoth({OMICSFS_BINARY, "-f", s.dir.str(), m->path()}, &out), 3);
  EXPECT_NE(out.find("fusermount3 -u " + m->path()), std::string::npos) << out;
}

TEST(FirstHour, NonEmptyMountpointIsAWarning) {
  Source s;
  Dir mnt;
  Write(mnt / "hidden.txt", "x");
  auto m = MountedFs::Start(OMICSFS_BINARY, s.dir.str());
  ASSERT_NE(m, nullptr);
  std::string out;
  Dir state;
  ASSERT_EQ(
      RunBoth({OMICSFS_BINARY, s.dir.str(), mnt.str()}, &out, {"XDG_STATE_HOME=" + state.str()}), 0)
      << out;
  EXPECT_NE(out.find("is not empty"), std::string::npos) << out;
  EXPECT_TRUE(testutil::IsMountPoint(mnt.str()));
  RunCommand({"fusermount3", "-u", mnt.str()});
  if (testutil::IsMountPoint(mnt.str())) RunCommand({"fusermount3", "-uz", mnt.str()});
}

// ---- 2: a pass-through file rewritten in place ----

TEST(FirstHour, RewrittenPlainFileOpensFresh) {
  Source s;
  Write(s.dir / "a.txt", "base\n");
  auto m = MountedFs::Start(OMICSFS_BINARY, s.dir.str(), {"-o", "rescan=600"});  // no rescan helps
  ASSERT_NE(m, nullptr);
  std::string got;
  ASSERT_TRUE(ReadWhole(m->path() + "/a.txt", &got));
  EXPECT_EQ(got, "base\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a later ctime tick
  Write(s.dir / "a.txt", "longer text\n");
  for (int i = 0; i < 3; ++i) {
    int err = 0;
    EXPECT_TRUE(ReadWhole(m->path() + "/a.txt", &got, &err)) << "errno " << err;
    EXPECT_EQ(got, "longer text\n");
  }
  std::string out;
  EXPECT_EQ(RunCommand({"cat", m->path() + "/a.txt"}, &out), 0);
  EXPECT_EQ(out, "longer text\n");
}

// ---- 3 and 10: damaged HDF5, datg without its name files, single-file sources ----

TEST(FirstHour, TruncatedHdf5AndIncompleteDatgShowErrorTxt) {
  Dir src;
  const std::string h5 = kCorpus + "/bpcells/h5/counts_root_group.h5";
  fs::copy_file(h5, src / "cut.h5");
  fs::resize_file(src / "cut.h5", fs::file_size(h5) / 2);
  Write(src / "fake.h5", "not an HDF5 file\n");
  fs::copy_file(kCorpus + "/datg/edge_1x1.datg", src / "lonely.datg");
  fs::copy_file(kCorpus + "/datg/edge_1x1.rows.txt.gz", src / "lonely.rows.txt.gz");
  auto m = MountedFs::Start(OMICSFS_BINARY, src.str());
  ASSERT_NE(m, nullptr);
  std::string got;
  ASSERT_TRUE(ReadWhole(m->path() + "/cut.h5/ERROR.txt", &got)) << m->Log();
  EXPECT_NE(got.find("truncated"), std::string::npos) << got;
  EXPECT_NE(m->Log().find("cut.h5"), std::string::npos) << m->Log();
  ASSERT_TRUE(ReadWhole(m->path() + "/fake.h5", &got));  // not HDF5: a plain file
  EXPECT_EQ(got, "not an HDF5 file\n");
  ASSERT_TRUE(ReadWhole(m->path() + "/lonely.datg/ERROR.txt", &got));
  EXPECT_NE(got.find("missing lonely.cols.txt.gz"), std::string::npos) << got;
  EXPECT_EQ(got.find("rows.txt.gz"), std::string::npos) << got;
}

TEST(FirstHour, SingleDatgFileAsSource) {
  const std::string datg = kCorpus + "/datg/multiblock_rpb1100_2300x500.datg";
  std::string out;
  ASSERT_EQ(RunCommand({OMICSFS_BINARY, "cat", datg, "matrix.tsv"}, &out), 0);
  EXPECT_TRUE(out == ReadMaybeGz(kCorpus + "/datg/multiblock_rpb1100_2300x500.expected.tsv.gz"));
  auto m = MountedFs::Start(OMICSFS_BINARY, datg);
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(ReadWhole(m->path() + "/colnames.txt", &out));
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 500);
  EXPECT_EQ(RunCommand({OMICSFS_BINARY, "--help"}, &out), 0);
  for (const char* kind : {"BPCells matrix", "HDF5", "VCF Zarr", "datg"})
    EXPECT_NE(out.find(kind), std::string::npos) << kind;
}

// ---- 4 and 5: progress lines, log files, the control folder ----

TEST(FirstHour, LogFileGetsProgressAndTheControlFolderShowsProblems) {
  Source s;
  CopyTree(kCorpus + "/vcf-zarr/chr22_v9_s32/chr22_v9_s32.vcz", s.dir / "chr22.vcz");
  Dir logs;
  const std::string log = logs / "sub/omicsfs.log";
  auto m =
      MountedFs::Start(OMICSFS_BINARY, s.dir.str(),
                       {"-o", "log_file=" + log + ",progress=0.001,index_dir=" + logs / "idx"});
  ASSERT_NE(m, nullptr);
  std::string got;
  const std::string vcf = m->path() + "/chr22.vcz/chr22.vcf";
  struct stat st;
  ASSERT_EQ(::stat(vcf.c_str(), &st), 0);  // the sizing pass, with a line every millisecond
  ASSERT_TRUE(ReadWhole(log, &got));
  EXPECT_NE(got.find("info: sizing "), std::string::npos) << got;
  EXPECT_NE(got.find(" chunks, "), std::string::npos) << got;
  EXPECT_TRUE(m->Log().empty()) << "a named log_file takes every line: " << m->Log();
  // The broken store's reason, in the log file and in .omicsfs/errors; status has figures.
  EXPECT_NE(got.find("broken.packed"), std::string::npos) << got;
  ASSERT_TRUE(ReadWhole(m->path() + "/.omicsfs/errors", &got));
  EXPECT_NE(got.find("broken.packed"), std::string::npos) << got;
  EXPECT_NE(got.find("array 'idxptr' is missing"), std::string::npos) << got;
  ASSERT_TRUE(ReadWhole(m->path() + "/.omicsfs/status", &got));
  EXPECT_NE(got.find("cache: "), std::string::npos) << got;
  EXPECT_NE(got.find("index_dir: " + logs / "idx"), std::string::npos) << got;
  // Hidden: listings are unchanged.
  std::string listing;
  ASSERT_EQ(RunCommand({"ls", "-a", m->path()}, &listing), 0);
  EXPECT_EQ(listing, ".\n..\nbroken.packed\nchr22.vcz\ngood.packed\nnotes.txt\n");
}

TEST(FirstHour, DetachedDaemonLogsUnderXdgStateHome) {
  Source s;
  Dir mnt, state;
  std::string out;
  ASSERT_EQ(
      RunBoth({OMICSFS_BINARY, s.dir.str(), mnt.str()}, &out, {"XDG_STATE_HOME=" + state.str()}), 0)
      << out;
  std::string name = mnt.str().substr(1);
  std::replace(name.begin(), name.end(), '/', '-');
  const std::string log = state / ("omicsfs/" + name + ".log");
  std::string got;
  ReadWhole(mnt.str() + "/broken.packed/matrix.mtx", &got);  // a store with only ERROR.txt
  ReadWhole(mnt.str() + "/broken.packed/ERROR.txt", &got);
  RunCommand({"fusermount3", "-u", mnt.str()});
  for (int i = 0; i < 100 && !ReadWhole(log, &got); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_NE(got.find("mounted " + s.dir.str()), std::string::npos) << got;
  EXPECT_NE(got.find("array 'idxptr' is missing"), std::string::npos) << got;
  if (testutil::IsMountPoint(mnt.str())) RunCommand({"fusermount3", "-uz", mnt.str()});
}

// A detached daemon leaves its working directory: relative index_dir and log_file still name the
// places they named when it started (before, the index went nowhere: "not writable", and every
// mount sized its views again).
TEST(FirstHour, DetachedDaemonKeepsRelativePaths) {
  Source s;
  Dir work, mnt, state;
  std::string out;
  ASSERT_EQ(RunBoth({"sh", "-c", "cd " + work.str() + " && exec \"$0\" \"$@\"", OMICSFS_BINARY,
                     s.dir.str(), mnt.str(), "-o", "index_dir=idx,log_file=daemon.log"},
                    &out, {"XDG_STATE_HOME=" + state.str()}),
            0)
      << out;
  std::string got;
  EXPECT_TRUE(
      ReadWhole(mnt.str() + "/good.packed/matrix.mtx", &got));  // sized: its lengths persisted
  EXPECT_FALSE(got.empty());
  RunCommand({"fusermount3", "-u", mnt.str()});
  if (testutil::IsMountPoint(mnt.str())) RunCommand({"fusermount3", "-uz", mnt.str()});
  std::string log;
  for (int i = 0; i < 100 && (!ReadWhole(work / "daemon.log", &log) ||
                              log.find("unmounted") == std::string::npos);
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(log.find("mounted " + s.dir.str()), std::string::npos) << log;
  EXPECT_EQ(log.find("not writable"), std::string::npos) << log;
  size_t files = 0;
  for (fs::recursive_directory_iterator it(work / "idx"), end; it != end; ++it)
    files += fs::is_regular_file(it->status());
  EXPECT_GT(files, 0u) << "nothing persisted in the relative index_dir";
}

// ---- 6: omicsfs index ----

TEST(FirstHour, IndexCommandMeansNoSizingPassAtMount) {
  Source s;
  CopyTree(kCorpus + "/vcf-zarr/sample/sample.vcz", s.dir / "sample.vcz");
  Dir idx;
  std::string out;
  EXPECT_EQ(RunBoth({OMICSFS_BINARY, "index", "-o", "index_dir=" + idx.str(), s.dir.str()}, &out),
            0)
      << out;
  EXPECT_NE(out.find("views sized"), std::string::npos) << out;
  auto m = MountedFs::Start(OMICSFS_BINARY, s.dir.str(), {"-d", "-o", "index_dir=" + idx.str()});
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(RunCommand({"ls", "-lR", m->path()}, &out), 0);
  EXPECT_NE(out.find("sample.vcf"), std::string::npos);
  const std::string log = m->Log();
  EXPECT_NE(log.find("debug: sample.vcf of " + s.dir / "sample.vcz: size from the persisted index"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("matrix.mtx of"), std::string::npos) << log;
  // No view is sized again (a region index is loaded from its persisted copy: "sized X.tbi" is
  // that load).
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    const bool index =
        line.find(".tbi of") != std::string::npos || line.find(".csi of") != std::string::npos;
    EXPECT_TRUE(line.find("debug: sized ") == std::string::npos || index)
        << "a sizing pass ran: " << line;
  }
  // Without the index, the same listing sizes (the check above can fail).
  Dir empty;
  auto fresh =
      MountedFs::Start(OMICSFS_BINARY, s.dir.str(), {"-d", "-o", "index_dir=" + empty.str()});
  ASSERT_NE(fresh, nullptr);
  ASSERT_EQ(RunCommand({"ls", "-lR", fresh->path()}, &out), 0);
  EXPECT_NE(fresh->Log().find("debug: sized "), std::string::npos) << fresh->Log();
}

// ---- 7: options ----

TEST(FirstHour, BadOptionsGiveOneLineNamingTheOption) {
  Source s;
  Dir mnt;
  std::string out;
  EXPECT_EQ(RunBoth({OMICSFS_BINARY, "-o", "cache_size=abc", s.dir.str(), mnt.str()}, &out), 1);
  EXPECT_EQ(out, "omicsfs: cache_size: bad size 'abc'\nTry 'omicsfs --help'.\n");
  EXPECT_EQ(RunBoth({OMICSFS_BINARY, "-o", "cache_size=0", s.dir.str(), mnt.str()}, &out), 1);
  EXPECT_EQ(out.find("cache_size: "), 9u) << out;
  EXPECT_EQ(RunBoth({OMICSFS_BINARY, "-o", "cache_size=4K", s.dir.str(), mnt.str()}, &out), 1);
  EXPECT_NE(out.find("cache_size: must be at least 1M"), std::string::npos) << out;
  EXPECT_EQ(RunBoth({OMICSFS_BINARY, "-o", "threads=0", s.dir.str(), mnt.str()}, &out), 1);
  EXPECT_EQ(out.rfind("omicsfs: threads: ", 0), 0u) << out;
  // index_dir: no deep trees created; a file is an error even without -f.
  Dir idx;
  EXPECT_EQ(
      RunBoth({OMICSFS_BINARY, "-o", "index_dir=" + idx / "a/b/c", s.dir.str(), mnt.str()}, &out),
      1);
  EXPECT_NE(out.find("at most its last two levels"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(idx / "a"));
  EXPECT_EQ(
      RunBoth({OMICSFS_BINARY, "-o", "index_dir=/omicsfs-no-such-dir", s.dir.str(), mnt.str()},
              &out),
      1);
  EXPECT_NE(out.find("not create directories directly under /"), std::string::npos) << out;
  Write(idx / "file", "x");
  EXPECT_EQ(
      RunBoth({OMICSFS_BINARY, "-o", "index_dir=" + idx / "file", s.dir.str(), mnt.str()}, &out),
      1);
  EXPECT_NE(out.find("is not a directory"), std::string::npos) << out;
  EXPECT_FALSE(testutil::IsMountPoint(mnt.str()));
}

// ---- 9: ls and cat report only what was asked ----

TEST(FirstHour, LsAndCatReportOnlyThePathAsked) {
  Source s;
  CopyTree(kCorpus + "/vcf-zarr/sample/sample.vcz",
           s.dir / "damaged.vcz");  // opens; its genotypes do not decode
  Write(s.dir / "damaged.vcz/call_genotype/0/0/0", std::string(64, '\x7f'));
  std::string out;
  EXPECT_EQ(RunBoth({OMICSFS_BINARY, "cat", s.dir.str(), "good.packed/colnames.txt"}, &out), 0);
  EXPECT_EQ(out, ReadMaybeGz(kCorpus + "/bpcells/dir/v2/counts.packed/col_names"));
  EXPECT_EQ(RunBoth({OMICSFS_BINARY, "cat", s.dir.str(), "damaged.vcz/damaged.vcf"}, &out), 4);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_EQ(out.rfind("omicsfs: damaged.vcz/damaged.vcf: ", 0), 0u) << out;
  EXPECT_NE(out.find("call_genotype"), std::string::npos) << out;
  EXPECT_EQ(RunBoth({OMICSFS_BINARY, "cat", s.dir.str(), "no/such"}, &out), 1);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_EQ(RunBoth({OMICSFS_BINARY, "ls", "-l", s.dir.str(), "good.packed"}, &out), 0) << out;
  const std::string mtx = ReadMaybeGz(kCorpus + "/bpcells/expected/counts.col.mtx");
  EXPECT_NE(out.find("-r--r--r-- " + std::string(14 - std::to_string(mtx.size()).size(), ' ') +
                     std::to_string(mtx.size()) + " matrix.mtx\n"),
            std::string::npos)
      << out;
}

// ---- 11: symlinks ----

TEST(FirstHour, FollowSymlinksShowsTargetsAndStopsAtLoops) {
  Dir src, outside;
  CopyTree(kCorpus + "/vcf-zarr/sample/sample.vcz", outside / "sample.vcz");
  // The link is newer than the store's files (it once failed only when a loaded machine made it
  // so): a v2 store's absent zarr.json is checked against the root's lstat, the link's own times.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  fs::create_symlink(outside / "sample.vcz", src / "linked.vcz");
  fs::create_directories(src / "sub");
  fs::create_symlink("..", src / "sub/loop");
  Write(outside / "x.txt", "outside\n");
  fs::create_symlink(outside / "x.txt", src / "x.txt");
  const std::string want = ReadMaybeGz(kCorpus + "/vcf-zarr/sample/expected.vcf");
  {
    auto m = MountedFs::Start(OMICSFS_BINARY, src.str());
    ASSERT_NE(m, nullptr);
    struct stat st;
    ASSERT_EQ(::lstat((m->path() + "/linked.vcz").c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode));
  }
  auto m = MountedFs::Start(OMICSFS_BINARY, src.str(), {"-o", "follow_symlinks"});
  ASSERT_NE(m, nullptr);
  struct stat st;
  ASSERT_EQ(::lstat((m->path() + "/linked.vcz").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  std::string got;
  int err = 0;
  ASSERT_TRUE(ReadWhole(m->path() + "/linked.vcz/linked.vcf", &got, &err))
      << std::strerror(err) << "\n"
      << m->Log();
  EXPECT_TRUE(got == want);
  ASSERT_TRUE(ReadWhole(m->path() + "/x.txt", &got));
  EXPECT_EQ(got, "outside\n");
  ASSERT_EQ(::lstat((m->path() + "/sub/loop").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "a loop stays a link";
}

// ---- 12: a store without names loads in Seurat ----

TEST(FirstHour, SeuratReads10xFolderOfAStoreWithoutNames) {
  if (RunCommand({"Rscript", "-e", "suppressMessages(library(Seurat))"}) != 0) {
    GTEST_FAIL() << "R with Seurat (Debian r-cran-seurat) is required: .ci/setup installs it";
  }
  auto m = MountedFs::Start(OMICSFS_BINARY, kCorpus + "/bpcells/dir/v2/nonames.packed");
  ASSERT_NE(m, nullptr);
  std::string out;
  const std::string script =
      "suppressMessages(library(Seurat)); m <- Read10X('" + m->path() +
      "'); "
      "cat(dim(m), sum(m), rownames(m)[1], colnames(m)[ncol(m)], sep=' '); cat('\\n')";
  ASSERT_EQ(RunCommand({"Rscript", "-e", script}, &out), 0) << out;
  // The reference: the store's MatrixMarket text, summed here.
  const std::string mtx = ReadMaybeGz(kCorpus + "/bpcells/expected/nonames.col.mtx");
  std::istringstream in(mtx);
  std::string line;
  std::getline(in, line);
  size_t rows = 0, cols = 0, nnz = 0;
  in >> rows >> cols >> nnz;
  double sum = 0, r, c, v;
  while (in >> r >> c >> v) sum += v;
  std::ostringstream want;
  want << rows << " " << cols << " " << sum << " row1 col" << cols << "\n";
  EXPECT_EQ(out, want.str());
}

// ---- 13: wording ----

TEST(FirstHour, DamagedAndMissingArraysAreNamedPlainly) {
  Dir src;
  CopyTree(kCorpus + "/bpcells/dir/v2/rna.packed", src / "random.packed");
  std::string noise(4096, '\0');
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>((i * 2654435761u) >> 13);
  Write(src / "random.packed/val_data", noise);
  for (const char* gone : {"val_data", "index_idx", "idxptr"}) {
    CopyTree(kCorpus + "/bpcells/dir/v2/rna.packed", src / (std::string("no_") + gone + ".packed"));
    fs::remove(src / (std::string("no_") + gone + ".packed/" + gone));
  }
  auto m = MountedFs::Start(OMICSFS_BINARY, src.str());
  ASSERT_NE(m, nullptr);
  std::string got;
  ASSERT_TRUE(ReadWhole(m->path() + "/random.packed/ERROR.txt", &got));
  EXPECT_NE(got.find("array 'val_data' is damaged: its header is "), std::string::npos) << got;
  EXPECT_EQ(got.find("must be uint32"), std::string::npos) << got;
  for (const char* gone : {"val_data", "index_idx", "idxptr"}) {
    ASSERT_TRUE(ReadWhole(m->path() + "/no_" + gone + ".packed/ERROR.txt", &got)) << gone;
    EXPECT_NE(got.find(std::string(": array '") + gone + "' is missing\n"), std::string::npos)
        << got;
  }
}

}  // namespace
}  // namespace omicsfs
