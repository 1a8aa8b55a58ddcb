// 10x.h5 (Cell Ranger's feature-barcode HDF5) of every corpus BPCells matrix store, of slices and
// a group, and of AnnData stores, through real mounts, read by the real clients:
// - h5py, scipy and anndata (tests/mount/tenx_h5_check.py): Cell Ranger's layout and dtypes, the
//   CSC arrays against the corpus's expected MatrixMarket text (a slice's or an AnnData
//   folder's: its own matrix.mtx, which other tests check), and scanpy's read_10x_h5 replayed;
// - Seurat's Read10X_h5 against Read10X of the folder's 10x/ (Debian r-cran-seurat and
//   r-cran-hdf5r): the same dgCMatrix (float32 values differ by < 2^-24 relative: Read10X parses
//   their shortest decimal text, Read10X_h5 gets the stored float32), names as the corpus has
//   them;
// - `h5ls -r` opens every object;
// - every integer value type of an AnnData X (int64, uint64, int16 as int32, uint8 and bool as
//   uint32), csr and csc, from files anndata writes in the test.
// The same bytes on two reads, on a second mount sharing index_dir (the image and a row-major
// store's transposed copy reused, not rewritten), with another index_dir, and from `omicsfs cat`.
// A damaged store (column-major: its index array; row-major: the pass that makes the copy) fails
// the reads of the arrays with EIO and the log says where, while the metadata is still served.
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "testutil/mount_fixture.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::MountedFs;
using testutil::ReadOrFail;
using testutil::RunCommand;

const std::string kCorpus = OMICSFS_CORPUS_DIR "/bpcells";
const std::string kAnnData = OMICSFS_CORPUS_DIR "/anndata";
const std::string kCheck = OMICSFS_TEST_DATA "/../mount/tenx_h5_check.py";

bool HavePython() {
  return ::access("/usr/bin/python3", X_OK) == 0 &&
         RunCommand({"/usr/bin/python3", "-c", "import anndata, h5py, scipy"}) == 0;
}

using Store = testutil::CorpusMatrix;
std::vector<Store> MatrixStores() { return testutil::CorpusMatrices(kCorpus); }
void Check(const std::vector<std::string>& rows) { testutil::ExpectPythonCheck(kCheck, rows); }

// A row of the check's list for the folder `at` (inside a mount), its own views as references.
std::string OwnViews(const std::string& at, const std::string& dtype) {
  return at + "/10x.h5\t" + at + "/matrix.mtx\t" + at + "/rownames.txt\t" + at + "/colnames.txt\t" +
         dtype;
}

uint64_t SizeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return static_cast<uint64_t>(st.st_size);
}

// Per folder (args: DIR ROWNAMES COLNAMES SAME, SAME "1" when Read10X of DIR/10x reads the names
// right): Read10X_h5 of DIR/10x.h5 against Read10X of DIR/10x — the same i, p and dimnames and
// values within float32's precision (or NA when not compared) — then dims, and whether the names
// are the files' (stand-ins where empty; features made unique, as both readers do).
const char kReadBoth[] = R"(
suppressMessages(library(Seurat))
args <- commandArgs(TRUE)
for (i in seq(1, length(args), by = 4)) {
  d <- args[i]
  a <- Read10X_h5(file.path(d, "10x.h5"))
  same <- NA
  if (args[i + 3] == "1") {
    b <- Read10X(file.path(d, "10x"))
    rel <- if (length(a@x) == 0) 0 else max(abs(a@x - b@x) / pmax(abs(b@x), 1e-300))
    same <- identical(a@i, b@i) && identical(a@p, b@p) && identical(dimnames(a), dimnames(b)) &&
      identical(a@Dim, b@Dim) && rel <= 2^-24
  }
  rows <- readLines(args[i + 1], encoding = "UTF-8")
  cols <- readLines(args[i + 2], encoding = "UTF-8")
  if (length(rows) == 0) rows <- paste0("row", seq_len(nrow(a)))
  if (length(cols) == 0) cols <- paste0("col", seq_len(ncol(a)))
  named <- identical(rownames(a), make.unique(rows)) && identical(colnames(a), cols)
  cat(d, same, nrow(a), ncol(a), named, sep = "\t")
  cat("\n")
}
)";

// Runs kReadBoth over `folders` (DIR, ROWNAMES, COLNAMES, SAME each); returns DIR → its fields.
std::map<std::string, std::vector<std::string>> ReadWithSeurat(
    const std::vector<std::array<std::string, 4>>& folders) {
  std::map<std::string, std::vector<std::string>> got;
  testutil::TempDir tmp;
  {
    std::ofstream f(tmp.path() + "/read.R");
    f << kReadBoth;
  }
  std::vector<std::string> argv = {"Rscript", tmp.path() + "/read.R"};
  for (const auto& f : folders) argv.insert(argv.end(), f.begin(), f.end());
  std::string out;
  EXPECT_EQ(RunCommand(argv, &out, std::chrono::seconds(600)), 0) << out;
  for (const std::string& line : testutil::Lines(out)) {
    std::vector<std::string> f;
    std::istringstream ss(line);
    for (std::string field; std::getline(ss, field, '\t');) f.push_back(field);
    if (f.size() == 5) got[f[0]] = f;
  }
  return got;
}

bool HaveSeurat() {
  return RunCommand({"Rscript", "-e", "suppressMessages({library(Seurat); library(hdf5r)})"}) == 0;
}

class TenxH5 : public testutil::SharedMountTest<TenxH5> {
 public:
  static std::string Source() { return kCorpus; }

 protected:
  std::string M(const std::string& p) const { return mount_->path() + "/" + p; }
};

TEST_F(TenxH5, EveryCorpusMatrixStoreIsItsMatrixMarket) {
  if (!HavePython()) GTEST_SKIP() << "anndata/h5py/scipy missing: .ci/setup installs them";
  std::vector<std::string> rows;
  for (const Store& s : MatrixStores()) {
    const std::string h5 = M(s.dir + "/10x.h5");
    const uint64_t size = SizeOf(h5);  // known before it is read; what a read returns
    EXPECT_EQ(ReadOrFail(h5).size(), size) << h5;
    rows.push_back(h5 + "\t" + s.mtx + "\t" + s.rownames + "\t" + s.colnames + "\t" + s.dtype);
    std::string out;
    EXPECT_EQ(RunCommand({"h5ls", "-r", h5}, &out), 0) << h5 << "\n" << out;
    EXPECT_NE(out.find("/matrix/features/name"), std::string::npos) << out;
  }
  ASSERT_GE(rows.size(), 25u);
  Check(rows);
}

// Seurat: Read10X_h5 of 10x.h5 is Read10X of 10x/, store by store (Read10X misreads names holding
// `"`, tenx_test.cc says why: there only the names are compared, which Read10X_h5 reads right).
TEST_F(TenxH5, SeuratRead10xH5IsRead10xOfThe10xFolder) {
  if (!HaveSeurat()) GTEST_FAIL() << "Seurat and hdf5r (r-cran-seurat, r-cran-hdf5r) are required";
  std::vector<std::array<std::string, 4>> folders;
  std::map<std::string, bool> compared;
  for (const Store& s : MatrixStores()) {
    const std::string names = testutil::Slurp(s.rownames) + testutil::Slurp(s.colnames);
    const bool quotes = names.find('"') != std::string::npos;
    folders.push_back({M(s.dir), s.rownames, s.colnames, quotes ? "0" : "1"});
    compared[M(s.dir)] = !quotes;
  }
  const auto got = ReadWithSeurat(folders);
  ASSERT_EQ(got.size(), folders.size());
  for (const auto& [dir, f] : got) {
    SCOPED_TRACE(dir);
    EXPECT_EQ(f[1], compared[dir] ? "TRUE" : "NA");
    EXPECT_EQ(f[4], "TRUE") << "names";
  }
}

// A rows= slice of a column-major store, a cols= slice of a row-major one (columns out of
// order), a cols= slice of an unnamed store, and a groups= group: each is its own matrix.mtx.
TEST_F(TenxH5, SlicesAndGroupsAreTheirMatrixMarket) {
  if (!HavePython()) GTEST_SKIP() << "anndata/h5py/scipy missing: .ci/setup installs them";
  const auto rna = testutil::Lines(ReadOrFail(M("dir/v2/rna.packed/rownames.txt")));
  const auto cells = testutil::Lines(ReadOrFail(M("dir/v2/rna.packed/colnames.txt")));
  ASSERT_GT(rna.size(), 400u);
  const std::vector<std::string> dirs = {
      M("dir/v2/rna.packed/rows=" + rna[7] + "," + rna[2] + "," + rna[400]),
      M("dir/v2/counts.rowmajor.packed/cols=dash-dot.name,acell_0004,acell_0000"),
      M("dir/v2/nonames.packed/cols=col3,col1"),
      M("dir/v2/float32.rowmajor.packed/rows=af_row_7,af_row_3/cols=af_col_9,af_col_0,af_col_4"),
  };
  std::vector<std::string> rows;
  for (const auto& at : dirs) {
    rows.push_back(OwnViews(at, at.find("float32") != std::string::npos ? "float32" : "uint32"));
    std::string out;
    EXPECT_EQ(RunCommand({"h5ls", "-r", at + "/10x.h5"}, &out), 0) << at << "\n" << out;
  }
  Check(rows);
  if (HaveSeurat()) {
    std::vector<std::array<std::string, 4>> folders;
    for (const auto& at : {dirs[0], dirs[2], dirs[3]})
      folders.push_back({at, at + "/rownames.txt", at + "/colnames.txt", "1"});
    for (const auto& [dir, f] : ReadWithSeurat(folders)) {
      EXPECT_EQ(f[1], "TRUE") << dir;
      EXPECT_EQ(f[4], "TRUE") << dir;
    }
  }
}

TEST(TenxH5Groups, AGroupIsItsColsSlice) {
  testutil::TempDir lists;
  const auto cols = testutil::Lines(testutil::Slurp(kCorpus + "/expected/counts.colnames.txt"));
  ASSERT_GE(cols.size(), 10u);
  {
    std::ofstream f(lists.path() + "/two.tsv");
    f << cols[7] << "\tB\n" << cols[1] << "\tA\n" << cols[4] << "\tB\n" << cols[0] << "\tB\n";
  }
  auto m = MountedFs::Start(OMICSFS_BINARY, kCorpus + "/dir/v2", {"-o", "lists=" + lists.path()});
  ASSERT_NE(m, nullptr);
  for (const char* store : {"counts.packed", "counts.rowmajor.packed"}) {
    const std::string at = m->path() + "/" + store;
    const std::string group = ReadOrFail(at + "/groups=@two/B/10x.h5");
    EXPECT_GT(group.size(), 4096u);
    EXPECT_TRUE(group ==
                ReadOrFail(at + "/cols=" + cols[7] + "," + cols[4] + "," + cols[0] + "/10x.h5"))
        << store;
    if (HavePython()) Check({OwnViews(at + "/groups=@two/B", "uint32")});
  }
}

// AnnData stores: csr (column-major here), csc (row-major: the copy), int32 layers, dense X.
TEST(TenxH5AnnData, FoldersOfAnnDataStores) {
  auto m = MountedFs::Start(OMICSFS_BINARY, kAnnData);
  ASSERT_NE(m, nullptr);
  const std::vector<std::pair<std::string, std::string>> folders = {
      {"pbmc_csr_f32.h5ad", "float32"},           {"lognorm_csc_f64.h5ad", "float64"},
      {"layers_raw.h5ad/layers/counts", "int32"}, {"dense_f32.h5ad", "float32"},
      {"pbmc_csr_f32.zarr", "float32"},
  };
  if (HavePython()) {
    std::vector<std::string> rows;
    for (const auto& [dir, dtype] : folders) rows.push_back(OwnViews(m->path() + "/" + dir, dtype));
    Check(rows);
  }
  if (HaveSeurat()) {
    std::vector<std::array<std::string, 4>> seurat;
    for (const auto& [dir, dtype] : folders) {
      const std::string at = m->path() + "/" + dir;
      seurat.push_back({at, at + "/rownames.txt", at + "/colnames.txt", "1"});
    }
    const auto got = ReadWithSeurat(seurat);
    EXPECT_EQ(got.size(), folders.size());
    for (const auto& [dir, f] : got) {
      EXPECT_EQ(f[1], "TRUE") << dir;
      EXPECT_EQ(f[4], "TRUE") << dir;
    }
  }
}

// Every value type an AnnData X may have (formats/matrix.h: int8/int16 read as int32, uint8/
// uint16/bool as uint32; int64, uint64), csr and csc, written by anndata into a temp folder.
// scipy's mmread (the reference) parses integers as C longs: uint64 values stay below 2^63 here.
TEST(TenxH5AnnData, EveryIntegerValueType) {
  if (!HavePython()) GTEST_SKIP() << "anndata/h5py/scipy missing: .ci/setup installs them";
  testutil::TempDir src;
  const std::string py =
      "import sys, warnings\n"
      "import anndata, numpy as np, scipy.sparse as sp\n"
      "warnings.filterwarnings('ignore')\n"
      "def mk(name, dtype, fmt, edge):\n"
      "    x = sp.random(30, 20, density=0.2, format=fmt, random_state=3) * 1000\n"
      "    x = x.astype(dtype)\n"
      "    x.data[0] = edge\n"
      "    a = anndata.AnnData(x, dtype=dtype)\n"
      "    a.obs_names = ['c%d' % i for i in range(30)]\n"
      "    a.var_names = ['g%d' % i for i in range(20)]\n"
      "    a.write_h5ad(sys.argv[1] + '/' + name)\n"
      "mk('i64_csr.h5ad', np.int64, 'csr', -(2**62))\n"
      "mk('u64_csc.h5ad', np.uint64, 'csc', 2**53 + 2)\n"
      "mk('i16_csr.h5ad', np.int16, 'csr', -300)\n"
      "mk('u8_csc.h5ad', np.uint8, 'csc', 255)\n"
      "mk('b_csr.h5ad', np.bool_, 'csr', True)\n";
  std::string out;
  ASSERT_EQ(RunCommand({"/usr/bin/python3", "-c", py, src.path()}, &out), 0) << out;
  auto m = MountedFs::Start(OMICSFS_BINARY, src.path());
  ASSERT_NE(m, nullptr);
  const std::vector<std::pair<std::string, std::string>> folders = {{"i64_csr.h5ad", "int64"},
                                                                    {"u64_csc.h5ad", "uint64"},
                                                                    {"i16_csr.h5ad", "int32"},
                                                                    {"u8_csc.h5ad", "uint32"},
                                                                    {"b_csr.h5ad", "uint32"}};
  std::vector<std::string> rows;
  std::vector<std::array<std::string, 4>> seurat;
  for (const auto& [dir, dtype] : folders) {
    const std::string at = m->path() + "/" + dir;
    rows.push_back(OwnViews(at, dtype));
    seurat.push_back({at, at + "/rownames.txt", at + "/colnames.txt", "1"});
  }
  Check(rows);
  if (HaveSeurat()) {
    const auto got = ReadWithSeurat(seurat);
    EXPECT_EQ(got.size(), folders.size());
    for (const auto& [dir, f] : got) {
      EXPECT_EQ(f[1], "TRUE") << dir;
      EXPECT_EQ(f[4], "TRUE") << dir;
    }
  }
}

// index_dir's files made for 10x.h5 views (the image's key, a row-major store's copy's key).
std::vector<std::string> TenxFiles(const std::string& index_dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(index_dir)) {
    const std::string body = testutil::Slurp(e.path().string());
    if (body.find("\nview 10x.h5") != std::string::npos) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(TenxH5Bytes, SameOnEveryMountAndReadAndTheCopyIsReused) {
  testutil::TempDir index;
  const std::string src = kCorpus + "/dir/v2";
  const std::vector<std::string> files = {
      "rna.packed/10x.h5", "counts.rowmajor.packed/10x.h5",
      "float32.rowmajor.unpacked/cols=af_col_3,af_col_1/10x.h5"};
  auto read_all = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> got;
    auto m = MountedFs::Start(OMICSFS_BINARY, src, extra);
    EXPECT_NE(m, nullptr);
    if (m == nullptr) return got;
    for (const auto& f : files) {
      got.push_back(ReadOrFail(m->path() + "/" + f));
      EXPECT_TRUE(got.back() == ReadOrFail(m->path() + "/" + f)) << f << ": a second read differs";
    }
    return got;
  };
  const auto first = read_all({"-o", "index_dir=" + index.path()});
  ASSERT_EQ(first.size(), files.size());
  for (const auto& b : first) EXPECT_GT(b.size(), 4096u);
  // Three images and the two row-major folders' copies.
  const auto kept = TenxFiles(index.path());
  ASSERT_EQ(kept.size(), 5u);
  std::map<std::string, ino_t> inodes;
  for (const auto& f : kept) {
    struct stat st {};
    ASSERT_EQ(::stat(f.c_str(), &st), 0);
    inodes[f] = st.st_ino;
  }
  // A second mount serves the kept files (not rewritten) and the same bytes.
  EXPECT_EQ(read_all({"-o", "index_dir=" + index.path()}), first);
  EXPECT_EQ(TenxFiles(index.path()), kept);
  for (const auto& f : kept) {
    struct stat st {};
    ASSERT_EQ(::stat(f.c_str(), &st), 0);
    EXPECT_EQ(st.st_ino, inodes[f]) << f << " was rewritten";
  }
  testutil::TempDir other;
  EXPECT_EQ(read_all({"-o", "index_dir=" + other.path()}), first);
  for (size_t i = 0; i < files.size(); ++i) {
    std::string out;
    EXPECT_EQ(
        RunCommand({OMICSFS_BINARY, "cat", "-o", "index_dir=" + other.path(), src, files[i]}, &out),
        0);
    EXPECT_TRUE(out == first[i]) << files[i] << ": omicsfs cat differs";
  }
}

// The tail of a store's packed index array lost. Column-major: the reads of the arrays that need
// it fail with EIO and the log names the array, its elements and the store's entry. Row-major: the
// pass that makes the copy meets it, and every read of the arrays fails. In both the size, the
// metadata and the names are served.
TEST(TenxH5Damage, ALostPartFailsTheReadsThatNeedIt) {
  testutil::TempDir src;
  for (const char* store : {"rna.packed", "counts.rowmajor.packed"}) {
    testutil::CopyTree(kCorpus + "/dir/v2/" + store, src.path() + "/" + store);
    const std::string f = src.path() + "/" + store + "/index_data";
    const uint64_t size = fs::file_size(f);
    const uint64_t keep = std::string(store) == "rna.packed" ? 60000 : size / 2;
    std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(static_cast<std::streamoff>(keep));
    io << std::string(size - keep, '\xff');
  }
  auto m = MountedFs::Start(OMICSFS_BINARY, src.path());
  ASSERT_NE(m, nullptr);
  for (const char* store : {"rna.packed", "counts.rowmajor.packed"}) {
    SCOPED_TRACE(store);
    const std::string h5 = m->path() + "/" + store + "/10x.h5";
    const uint64_t size = SizeOf(h5);
    EXPECT_GT(size, 16384u);
    const int fd = ::open(h5.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    std::string head(4096, '\0');
    EXPECT_EQ(::pread(fd, head.data(), head.size(), 0), 4096);
    EXPECT_EQ(head.substr(0, 8), "\x89HDF\r\n\x1a\n");
    std::string buf(4096, '\0');
    errno = 0;
    EXPECT_EQ(::pread(fd, buf.data(), buf.size(), static_cast<off_t>(size - 4096)), -1);
    EXPECT_EQ(errno, EIO);
    ::close(fd);
    if (HavePython()) {
      std::string out;
      const std::string py =
          "import sys, h5py\n"
          "f = h5py.File(sys.argv[1], 'r')\n"
          "m = f['matrix']\n"
          "assert len(m['barcodes']) == m['shape'][1] and len(m['features/name']) == "
          "m['shape'][0]\n"
          "try:\n"
          "    m['data'][:]\n"
          "    print('read')\n"
          "except OSError:\n"
          "    print('refused')\n";
      EXPECT_EQ(RunCommand({"/usr/bin/python3", "-c", py, h5}, &out), 0) << out;
      EXPECT_EQ(out, "refused\n");
    }
  }
  EXPECT_NE(m->Log().find("10x.h5 of " + src.path() + "/rna.packed: /matrix/data elements [0, "),
            std::string::npos)
      << m->Log();
  EXPECT_NE(m->Log().find("array 'index': entry 43626"), std::string::npos) << m->Log();
  EXPECT_NE(m->Log().find("10x.h5 of " + src.path() + "/counts.rowmajor.packed: /matrix/"),
            std::string::npos)
      << m->Log();
}

}  // namespace
}  // namespace omicsfs
