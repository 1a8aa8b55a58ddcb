// matrix.h5ad of every corpus BPCells matrix store and of slices, through real mounts, read by
// the real clients: anndata.read_h5ad (in memory and backed='r'), h5py and scipy
// (tests/mount/h5ad_check.py) against the corpus's expected MatrixMarket text and names (a
// slice's: its own matrix.mtx and names, which the slice tests check against the whole store);
// `h5dump -H` and `h5ls -r` open every object. The same bytes on two mounts sharing index_dir,
// on a mount with another, after the persisted image is removed (made anew, identically), and
// from `omicsfs cat`. A damaged store fails the reads of X's arrays with EIO, naming the array
// and the entry, while the metadata and names are still served.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "testutil/mount_fixture.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::MountedFs;
using testutil::ReadOrFail;
using testutil::RunCommand;

const std::string kCorpus = OMICSFS_CORPUS_DIR "/bpcells";
const std::string kCheck = OMICSFS_TEST_DATA "/../mount/h5ad_check.py";

bool HaveClients() {
  return ::access("/usr/bin/python3", X_OK) == 0 &&
         RunCommand({"/usr/bin/python3", "-c", "import anndata, h5py, scipy"}) == 0;
}

using Store = testutil::CorpusMatrix;
std::vector<Store> MatrixStores() { return testutil::CorpusMatrices(kCorpus); }
void Check(const std::vector<std::string>& rows) { testutil::ExpectPythonCheck(kCheck, rows); }

uint64_t SizeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return static_cast<uint64_t>(st.st_size);
}

class H5ad : public testutil::SharedMountTest<H5ad> {
 public:
  static std::string Source() { return kCorpus; }

 protected:
  std::string M(const std::string& p) const { return mount_->path() + "/" + p; }
};

TEST_F(H5ad, EveryCorpusMatrixStoreReadsAsItsMatrixMarket) {
  if (!HaveClients()) GTEST_SKIP() << "anndata/h5py/scipy missing: .ci/setup installs them";
  std::vector<std::string> rows;
  for (const Store& s : MatrixStores()) {
    const std::string h5ad = M(s.dir + "/matrix.h5ad");
    // Its size is known before it is read, and is what a read returns.
    const uint64_t size = SizeOf(h5ad);
    EXPECT_EQ(ReadOrFail(h5ad).size(), size) << h5ad;
    rows.push_back(h5ad + "\t" + s.mtx + "\t" + s.rownames + "\t" + s.colnames + "\t" + s.order +
                   "\t" + s.dtype);
    std::string out;
    EXPECT_EQ(RunCommand({"h5dump", "-H", h5ad}, &out), 0) << h5ad << "\n" << out;
    EXPECT_EQ(RunCommand({"h5ls", "-r", h5ad}, &out), 0) << h5ad << "\n" << out;
    EXPECT_NE(out.find("/X/indices"), std::string::npos) << out;
  }
  ASSERT_GE(rows.size(), 25u);
  Check(rows);
}

// A rows= slice of a column-major store (its nnz needed a counting pass) and a cols= slice of a
// row-major one (columns out of order): each is the h5ad of the slice's own matrix.mtx.
TEST_F(H5ad, SlicesAreTheirMatrixMarket) {
  if (!HaveClients()) GTEST_SKIP() << "anndata/h5py/scipy missing: .ci/setup installs them";
  const std::vector<std::pair<std::string, std::string>> slices = {
      {"dir/v2/rna.packed/rows=" +
           testutil::Lines(ReadOrFail(M("dir/v2/rna.packed/rownames.txt")))[7] + "," +
           testutil::Lines(ReadOrFail(M("dir/v2/rna.packed/rownames.txt")))[2] + "," +
           testutil::Lines(ReadOrFail(M("dir/v2/rna.packed/rownames.txt")))[400],
       "col"},
      {"dir/v2/counts.rowmajor.packed/cols=dash-dot.name,acell_0004,acell_0000", "row"},
      {"dir/v2/nonames.packed/cols=col3,col1", "col"},
  };
  std::vector<std::string> rows;
  for (const auto& [dir, order] : slices) {
    const std::string at = M(dir);
    const std::string dtype = "uint32";
    rows.push_back(at + "/matrix.h5ad\t" + at + "/matrix.mtx\t" + at + "/rownames.txt\t" + at +
                   "/colnames.txt\t" + order + "\t" + dtype);
    std::string out;
    EXPECT_EQ(RunCommand({"h5dump", "-H", at + "/matrix.h5ad"}, &out), 0) << at << "\n" << out;
  }
  Check(rows);
}

// The image files index_dir holds for matrix.h5ad views (their key says so).
std::vector<std::string> ImageFiles(const std::string& index_dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(index_dir)) {
    const std::string body = testutil::Slurp(e.path().string());
    if (body.find("\nview matrix.h5ad\nh5 plan ") != std::string::npos)
      out.push_back(e.path().string());
  }
  return out;
}

TEST(H5adBytes, SameOnEveryMountAndAfterTheImageIsMadeAnew) {
  testutil::TempDir index;
  const std::string src = kCorpus + "/dir/v2";
  const std::vector<std::string> files = {
      "rna.packed/matrix.h5ad", "counts.rowmajor.packed/matrix.h5ad",
      "rna.packed/cols=TTCTCATAAATAACTT-1,CCGCCACTAACAGAGT-1/matrix.h5ad"};
  auto read_all = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> got;
    auto m = MountedFs::Start(OMICSFS_BINARY, src, extra);
    EXPECT_NE(m, nullptr);
    if (m == nullptr) return got;
    for (const auto& f : files) got.push_back(ReadOrFail(m->path() + "/" + f));
    return got;
  };
  const auto first = read_all({"-o", "index_dir=" + index.path()});
  ASSERT_EQ(first.size(), files.size());
  for (const auto& b : first) EXPECT_GT(b.size(), 4096u);
  const auto kept = ImageFiles(index.path());
  EXPECT_EQ(kept.size(), files.size());
  struct stat before {};
  ASSERT_FALSE(kept.empty());
  ASSERT_EQ(::stat(kept[0].c_str(), &before), 0);
  // A second mount serves the kept images (not rewritten) and the same bytes.
  EXPECT_EQ(read_all({"-o", "index_dir=" + index.path()}), first);
  struct stat after {};
  ASSERT_EQ(::stat(kept[0].c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  // Made anew, they are the same.
  for (const auto& f : kept) ASSERT_EQ(::unlink(f.c_str()), 0);
  EXPECT_EQ(read_all({"-o", "index_dir=" + index.path()}), first);
  EXPECT_EQ(ImageFiles(index.path()).size(), files.size());
  testutil::TempDir other;
  EXPECT_EQ(read_all({"-o", "index_dir=" + other.path()}), first);
  // `omicsfs cat` writes the same file.
  for (size_t i = 0; i < files.size(); ++i) {
    std::string out;
    EXPECT_EQ(
        RunCommand({OMICSFS_BINARY, "cat", "-o", "index_dir=" + other.path(), src, files[i]}, &out),
        0);
    EXPECT_TRUE(out == first[i]) << files[i] << ": omicsfs cat differs";
  }
}

// A groups= folder's group is the cols= slice of its members: the same matrix.h5ad, byte for byte.
TEST(H5adGroups, AGroupIsItsColsSlice) {
  testutil::TempDir lists;
  const auto cols = testutil::Lines(testutil::Slurp(kCorpus + "/expected/counts.colnames.txt"));
  ASSERT_GE(cols.size(), 10u);
  {
    std::ofstream f(lists.path() + "/two.tsv");
    f << cols[7] << "\tB\n" << cols[1] << "\tA\n" << cols[4] << "\tB\n" << cols[0] << "\tB\n";
  }
  auto m = MountedFs::Start(OMICSFS_BINARY, kCorpus + "/dir/v2", {"-o", "lists=" + lists.path()});
  ASSERT_NE(m, nullptr);
  const std::string store = m->path() + "/counts.packed";
  const std::string group = ReadOrFail(store + "/groups=@two/B/matrix.h5ad");
  EXPECT_GT(group.size(), 4096u);
  EXPECT_TRUE(group == ReadOrFail(store + "/cols=" + cols[7] + "," + cols[4] + "," + cols[0] +
                                  "/matrix.h5ad"));
}

// The tail of a store's packed index array lost: the reads of X's arrays that need it fail with
// EIO and the log names the array and the entry; the file's size, metadata and names are served.
TEST(H5adDamage, ALostPartFailsOnlyTheReadsThatNeedIt) {
  testutil::TempDir src;
  testutil::CopyTree(kCorpus + "/dir/v2/rna.packed", src.path() + "/rna.packed");
  {
    const std::string f = src.path() + "/rna.packed/index_data";
    const uint64_t size = fs::file_size(f);
    std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(60000);
    io << std::string(size - 60000, '\xff');
  }
  auto m = MountedFs::Start(OMICSFS_BINARY, src.path());
  ASSERT_NE(m, nullptr);
  const std::string h5ad = m->path() + "/rna.packed/matrix.h5ad";
  const uint64_t size = SizeOf(h5ad);
  EXPECT_GT(size, 100000u);
  const int fd = ::open(h5ad.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::string head(4096, '\0');
  EXPECT_EQ(::pread(fd, head.data(), head.size(), 0), 4096);
  EXPECT_EQ(head.substr(0, 8), "\x89HDF\r\n\x1a\n");
  // Somewhere in X's arrays (the last ~40 % of the file here): EIO.
  std::string buf(4096, '\0');
  errno = 0;
  EXPECT_EQ(::pread(fd, buf.data(), buf.size(), static_cast<off_t>(size - 8192)), -1);
  EXPECT_EQ(errno, EIO);
  ::close(fd);
  if (HaveClients()) {
    std::string out;
    const std::string py =
        "import sys, h5py\n"
        "f = h5py.File(sys.argv[1], 'r')\n"
        "assert len(f['obs/_index']) == 1800 and len(f['var/_index']) == 850\n"
        "assert len(f['X/indptr'][:]) == 1801\n"
        "try:\n"
        "    f['X/indices'][:]\n"
        "    print('read')\n"
        "except OSError:\n"
        "    print('refused')\n";
    EXPECT_EQ(RunCommand({"/usr/bin/python3", "-c", py, h5ad}, &out), 0) << out;
    EXPECT_EQ(out, "refused\n");
  }
  EXPECT_NE(m->Log().find("matrix.h5ad of " + src.path() + "/rna.packed: /X/indices elements ["),
            std::string::npos)
      << m->Log();
  EXPECT_NE(m->Log().find("array 'index': entry 43626"), std::string::npos) << m->Log();
}

}  // namespace
}  // namespace omicsfs
