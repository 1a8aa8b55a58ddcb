// Every matrix store of the shared BPCells corpus, through a real mount, byte for byte.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "testutil/mount_fixture.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::MountedFs;
using testutil::ReadMaybeGz;
using testutil::ReadWhole;

const std::string kCorpus = OMICSFS_CORPUS_DIR "/bpcells";

struct Row {
  std::string store, group, version, kind, order, expected, names1, names2;
};

std::vector<Row> Manifest() {
  std::vector<Row> rows;
  std::ifstream f(kCorpus + "/manifest.tsv");
  std::string line;
  std::getline(f, line);  // header
  while (std::getline(f, line)) {
    std::istringstream ss(line);
    Row r;
    std::getline(ss, r.store, '\t');
    std::getline(ss, r.group, '\t');
    std::getline(ss, r.version, '\t');
    std::getline(ss, r.kind, '\t');
    std::getline(ss, r.order, '\t');
    std::getline(ss, r.expected, '\t');
    std::getline(ss, r.names1, '\t');
    std::getline(ss, r.names2, '\t');
    rows.push_back(r);
  }
  return rows;
}

std::string VirtualDir(const Row& r) {
  if (r.group == "-" || r.group == "/") return r.store;
  return r.store + r.group;
}

std::string NumberLines(const std::string& prefix, size_t n, bool twice) {
  std::string s;
  for (size_t i = 1; i <= n; ++i) {
    s += prefix + std::to_string(i);
    if (twice) s.append("\t").append(prefix + std::to_string(i));
    s += '\n';
  }
  return s;
}

class CorpusMount : public testutil::SharedMountTest<CorpusMount> {
 public:
  static std::string Source() { return kCorpus; }
};

TEST_F(CorpusMount, EveryMatrixStoreIsByteIdentical) {
  ASSERT_NE(mount_, nullptr);
  int matrices = 0;
  for (const Row& r : Manifest()) {
    if (r.kind != "matrix") continue;
    ++matrices;
    SCOPED_TRACE(r.store + " " + r.group);
    const std::string dir = mount_->path() + "/" + VirtualDir(r);
    const std::string want = ReadMaybeGz(kCorpus + "/" + r.expected);
    ASSERT_FALSE(want.empty());
    std::string got;
    int err = 0;
    ASSERT_TRUE(ReadWhole(dir + "/matrix.mtx", &got, &err)) << "errno " << err;
    EXPECT_TRUE(got == want) << "matrix.mtx differs (" << got.size() << " vs " << want.size()
                             << " bytes)";
    struct stat st;
    ASSERT_EQ(::stat((dir + "/matrix.mtx").c_str(), &st), 0);
    EXPECT_EQ(static_cast<size_t>(st.st_size), want.size());
    EXPECT_GE(st.st_blksize, 128 * 1024);

    std::string rows = ReadMaybeGz(kCorpus + "/" + r.names1),
                cols = ReadMaybeGz(kCorpus + "/" + r.names2);
    ASSERT_TRUE(ReadWhole(dir + "/rownames.txt", &got));
    EXPECT_EQ(got, rows);
    ASSERT_TRUE(ReadWhole(dir + "/colnames.txt", &got));
    EXPECT_EQ(got, cols);
    // 10x folder: barcodes = column names, genes = "name\tname" per row (col1…, row1… when
    // unnamed: Read10X refuses numbers as names).
    std::istringstream header(want.substr(want.find('\n') + 1));
    size_t nrow = 0, ncol = 0;
    header >> nrow >> ncol;
    ASSERT_TRUE(ReadWhole(dir + "/barcodes.tsv", &got));
    EXPECT_EQ(got, cols.empty() ? NumberLines("col", ncol, false) : cols);
    std::string genes;
    if (rows.empty()) {
      genes = NumberLines("row", nrow, true);
    } else {
      std::istringstream ss(rows);
      std::string line;
      while (std::getline(ss, line)) genes += line + "\t" + line + "\n";
    }
    ASSERT_TRUE(ReadWhole(dir + "/genes.tsv", &got));
    EXPECT_EQ(got, genes);
  }
  EXPECT_EQ(matrices, 50);
}

// Reference dense rendering from the expected MatrixMarket text and names (written here, not
// shared with the daemon): every cell, `0` where the .mtx has no entry.
std::string DenseReference(const std::string& mtx, const std::string& rownames,
                           const std::string& colnames) {
  std::istringstream in(mtx);
  std::string line;
  std::getline(in, line);  // banner
  std::getline(in, line);
  size_t nrow = 0, ncol = 0, nnz = 0;
  std::istringstream(line) >> nrow >> ncol >> nnz;
  std::vector<std::vector<std::string>> cells(nrow, std::vector<std::string>(ncol, "0"));
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    size_t r, c;
    std::string v;
    ls >> r >> c >> v;
    cells[r - 1][c - 1] = v;
  }
  auto split = [](const std::string& text, size_t n) {
    std::vector<std::string> out;
    std::istringstream ss(text);
    std::string l;
    while (std::getline(ss, l)) out.push_back(l);
    if (out.empty())
      for (size_t i = 1; i <= n; ++i) out.push_back(std::to_string(i));
    return out;
  };
  auto rn = split(rownames, nrow), cn = split(colnames, ncol);
  std::string out;
  for (const auto& c : cn) out += "\t" + c;
  out += "\n";
  for (size_t r = 0; r < nrow; ++r) {
    out += rn[r];
    for (size_t c = 0; c < ncol; ++c) out += "\t" + cells[r][c];
    out += "\n";
  }
  return out;
}

TEST_F(CorpusMount, DenseMatrixTsvOfEveryMatrixStore) {
  ASSERT_NE(mount_, nullptr);
  int stores = 0;
  for (const Row& r : Manifest()) {
    if (r.kind != "matrix") continue;
    ++stores;
    SCOPED_TRACE(r.store + " " + r.group);
    const std::string want = DenseReference(ReadMaybeGz(kCorpus + "/" + r.expected),
                                            ReadMaybeGz(kCorpus + "/" + r.names1),
                                            ReadMaybeGz(kCorpus + "/" + r.names2));
    std::string got;
    int err = 0;
    ASSERT_TRUE(ReadWhole(mount_->path() + "/" + VirtualDir(r) + "/matrix.tsv", &got, &err))
        << "errno " << err;
    EXPECT_TRUE(got == want) << "matrix.tsv differs (" << got.size() << " vs " << want.size()
                             << " bytes)";
  }
  EXPECT_EQ(stores, 50);
}

TEST_F(CorpusMount, EveryFragmentsStoreIsByteIdentical) {
  ASSERT_NE(mount_, nullptr);
  int stores = 0;
  for (const Row& r : Manifest()) {
    if (r.kind != "fragments") continue;
    ++stores;
    SCOPED_TRACE(r.store + " " + r.group);
    const std::string dir = mount_->path() + "/" + VirtualDir(r);
    std::string tenx = r.expected;
    tenx.replace(tenx.find(".bed.tsv"), 8, ".10x.tsv");
    for (const auto& [view, expected] :
         {std::pair<std::string, std::string>{"fragments.bed", r.expected},
          {"fragments.tsv", tenx},
          {"chromosomes.txt", r.names1},
          {"cells.txt", r.names2}}) {
      std::string got;
      int err = 0;
      ASSERT_TRUE(ReadWhole(dir + "/" + view, &got, &err)) << view << " errno " << err;
      const std::string want = ReadMaybeGz(kCorpus + "/" + expected);
      EXPECT_TRUE(got == want) << view << " differs (" << got.size() << " vs " << want.size()
                               << " bytes)";
    }
  }
  EXPECT_EQ(stores, 12);
}

TEST_F(CorpusMount, BedtoolsReadsFragmentsBed) {
  ASSERT_NE(mount_, nullptr);
  for (const char* dir :
       {"dir/v2/frags.packed", "h5/stores_v1.h5/frags_unpacked", "dir/v2/atac.packed"}) {
    const std::string path = mount_->path() + "/" + dir + "/fragments.bed";
    std::string out;
    ASSERT_EQ(testutil::RunCommand({"bedtools", "merge", "-i", path}, &out), 0) << dir;
    EXPECT_FALSE(out.empty()) << dir;
    std::string sorted, bed;
    ASSERT_EQ(testutil::RunCommand({"bedtools", "sort", "-i", path}, &sorted), 0) << dir;
    ASSERT_TRUE(ReadWhole(path, &bed));
    EXPECT_EQ(std::count(sorted.begin(), sorted.end(), '\n'),
              std::count(bed.begin(), bed.end(), '\n'))
        << dir;
  }
}

// Every fragments twin (fragments.bed.gz, fragments.tsv.gz) is read by bedtools as the corpus'
// text: merge, intersect -c with the twin as -b and intersect -u with it as -a print the same, or
// refuse the same record (the 10x form of a zero-length fragment). bedtools 2.30 read nothing
// from `bgzip -l 0` bytes of these texts, and exited 0.
TEST_F(CorpusMount, BedtoolsReadsEveryFragmentsTwin) {
  ASSERT_NE(mount_, nullptr);
  const std::string tmp = testutil::MakeTempDir("omicsfs-bedtools-");
  ASSERT_FALSE(tmp.empty());
  // stdout and stderr, the file's path written as FILE; and the exit status.
  auto run = [](const std::string& cmd, const std::string& file, std::string* out) {
    const int rc = testutil::RunCommand({"sh", "-c", cmd + " '" + file + "' 2>&1"}, out);
    for (size_t at = 0; (at = out->find(file, at)) != std::string::npos;) {
      out->replace(at, file.size(), "FILE");
    }
    return rc;
  };
  int twins = 0, read = 0;
  for (const Row& r : Manifest()) {
    if (r.kind != "fragments") continue;
    std::string tenx = r.expected;
    tenx.replace(tenx.find(".bed.tsv"), 8, ".10x.tsv");
    for (const auto& [view, expected] :
         {std::pair<std::string, std::string>{"fragments.bed", r.expected},
          {"fragments.tsv", tenx}}) {
      SCOPED_TRACE(r.store + " " + r.group + " " + view);
      ++twins;
      const std::string twin = mount_->path() + "/" + VirtualDir(r) + "/" + view + ".gz";
      const std::string text = tmp + "/" + std::to_string(twins) + ".bed";
      std::ofstream(text, std::ios::binary) << ReadMaybeGz(kCorpus + "/" + expected);
      std::string merged, got;
      const int rc = run("bedtools merge -i", text, &merged);
      EXPECT_EQ(run("bedtools merge -i", twin, &got), rc);
      EXPECT_TRUE(got == merged) << "merge: " << got.size() << " vs " << merged.size() << " bytes";
      if (rc != 0) {
        EXPECT_NE(merged.find("Invalid record"), std::string::npos) << merged;
        continue;
      }
      ++read;
      ASSERT_FALSE(merged.empty());
      const std::string peaks = text + ".peaks";
      std::ofstream(peaks, std::ios::binary) << merged;
      for (const std::string& cmd : {"bedtools intersect -c -a '" + peaks + "' -b",
                                     "bedtools intersect -u -b '" + peaks + "' -a"}) {
        std::string want;
        ASSERT_EQ(run(cmd, text, &want), 0) << want;
        EXPECT_EQ(run(cmd, twin, &got), 0) << got;
        EXPECT_TRUE(got == want) << cmd << ": " << got.size() << " vs " << want.size() << " bytes";
        EXPECT_FALSE(want.empty());
      }
    }
  }
  EXPECT_EQ(twins, 24);
  EXPECT_GE(read, 13);  // every .bed, and the 10x form of the stores without a zero-length fragment
  fs_error ec;
  fs::remove_all(tmp, ec);
}

TEST_F(CorpusMount, PlainFilesPassThroughByteIdentical) {
  ASSERT_NE(mount_, nullptr);
  for (const char* f : {"h5/filtered_feature_bc_matrix.h5", "manifest.tsv", "README.md",
                        "expected/counts.col.mtx"}) {
    std::string got, want;
    ASSERT_TRUE(ReadWhole(mount_->path() + "/" + f, &got)) << f;
    ASSERT_TRUE(ReadWhole(kCorpus + "/" + f, &want)) << f;
    EXPECT_TRUE(got == want) << f;
  }
  struct stat st;
  ASSERT_EQ(::stat((mount_->path() + "/h5/filtered_feature_bc_matrix.h5").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
}

TEST_F(CorpusMount, StoreInternalsAreHidden) {
  ASSERT_NE(mount_, nullptr);
  struct stat st;
  EXPECT_NE(::stat((mount_->path() + "/dir/v2/counts.packed/index_data").c_str(), &st), 0);
  EXPECT_EQ(
      ::stat((mount_->path() + "/h5/stores_v2.h5/nested/deeper/counts_packed/matrix.mtx").c_str(),
             &st),
      0);
  EXPECT_EQ(::stat((mount_->path() + "/h5/counts_root_group.h5/matrix.mtx").c_str(), &st), 0);
}

// AnnData files (issue 37): every matrix of the AnnData corpus (its manifest: X, layers/NAME,
// raw/X) and every table, byte for byte against expected/. X's views are at the file's folder,
// a layer's in layers/NAME/, raw/X's in raw/.
class AnnDataCorpusMount : public testutil::SharedMountTest<AnnDataCorpusMount> {
 public:
  static std::string Source() { return kAnnData; }
  static inline const std::string kAnnData = OMICSFS_CORPUS_DIR "/anndata";
};

struct AnnDataRow {
  std::string file, matrix;
};

std::vector<AnnDataRow> AnnDataManifest() {
  std::vector<AnnDataRow> rows;
  std::ifstream f(AnnDataCorpusMount::kAnnData + "/manifest.tsv");
  std::string line;
  std::getline(f, line);  // header
  while (std::getline(f, line)) {
    std::istringstream ss(line);
    AnnDataRow r;
    std::getline(ss, r.file, '\t');
    std::getline(ss, r.matrix, '\t');
    rows.push_back(r);
  }
  return rows;
}

// The folder showing a manifest matrix, below the file's.
std::string AnnDataFolder(const std::string& matrix) {
  if (matrix == "X") return "";
  if (matrix == "raw/X") return "/raw";
  return "/" + matrix;
}

// The expected/ folder of a corpus file: its stem (a Zarr store shows its .h5ad twin's text).
std::string AnnDataStem(const std::string& file) { return file.substr(0, file.rfind('.')); }

TEST_F(AnnDataCorpusMount, EveryMatrixIsByteIdentical) {
  ASSERT_NE(mount_, nullptr);
  const std::string& corpus = kAnnData;
  int matrices = 0;
  for (const AnnDataRow& r : AnnDataManifest()) {
    ++matrices;
    SCOPED_TRACE(r.file + " " + r.matrix);
    const std::string dir = mount_->path() + "/" + r.file + AnnDataFolder(r.matrix);
    const std::string want_dir = corpus + "/expected/" + AnnDataStem(r.file) + "/" + r.matrix;
    for (const char* view : {"matrix.mtx", "rownames.txt", "colnames.txt"}) {
      std::string got, want;
      int err = 0;
      ASSERT_TRUE(ReadWhole(dir + "/" + view, &got, &err)) << view << " errno " << err;
      ASSERT_TRUE(ReadWhole(want_dir + "/" + view, &want)) << view;
      EXPECT_TRUE(got == want) << view << " differs (" << got.size() << " vs " << want.size()
                               << " bytes)";
      struct stat st;
      ASSERT_EQ(::stat((dir + "/" + view).c_str(), &st), 0);
      EXPECT_EQ(static_cast<size_t>(st.st_size), want.size()) << view;
    }
    std::string mtx, rows, cols, got;
    ASSERT_TRUE(ReadWhole(want_dir + "/matrix.mtx", &mtx));
    ASSERT_TRUE(ReadWhole(want_dir + "/rownames.txt", &rows));
    ASSERT_TRUE(ReadWhole(want_dir + "/colnames.txt", &cols));
    ASSERT_TRUE(ReadWhole(dir + "/matrix.tsv", &got));
    EXPECT_TRUE(got == DenseReference(mtx, rows, cols)) << "matrix.tsv differs";
    ASSERT_TRUE(ReadWhole(dir + "/barcodes.tsv", &got));
    EXPECT_EQ(got, cols);
    std::string genes;
    std::istringstream ss(rows);
    for (std::string line; std::getline(ss, line);) genes += line + "\t" + line + "\n";
    ASSERT_TRUE(ReadWhole(dir + "/genes.tsv", &got));
    EXPECT_EQ(got, genes);
  }
  EXPECT_GE(matrices, 9);  // the Zarr store's X too
}

TEST_F(AnnDataCorpusMount, EveryTableIsByteIdentical) {
  ASSERT_NE(mount_, nullptr);
  int tables = 0;
  for (const auto& e : fs::directory_iterator(kAnnData + "/expected")) {
    const std::string stem = e.path().filename().string();
    for (const char* table : {"obs.tsv", "var.tsv", "raw/var.tsv"}) {
      std::string want;
      if (!fs::exists(e.path() / table)) continue;
      ++tables;
      SCOPED_TRACE(stem + " " + table);
      ASSERT_TRUE(ReadWhole((e.path() / table).string(), &want));
      std::string got;
      int err = 0;
      for (const char* ext : {".h5ad", ".zarr"}) {
        if (!fs::exists(kAnnData + "/" + stem + ext)) continue;
        ASSERT_TRUE(ReadWhole(mount_->path() + "/" + stem + ext + "/" + table, &got, &err))
            << ext << " errno " << err;
        EXPECT_TRUE(got == want) << ext << "\n" << got;
      }
    }
  }
  EXPECT_GE(tables, 13);
}

// What the folders hold, and what they do not (obsm, obsp, varm, varp, uns).
TEST_F(AnnDataCorpusMount, FolderShowsMatricesAndTablesOnly) {
  ASSERT_NE(mount_, nullptr);
  const std::string dir = mount_->path() + "/layers_raw.h5ad";
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  for (const char* n : {"matrix.mtx", "matrix.tsv", "obs.tsv", "var.tsv", "layers", "raw", "10x"})
    EXPECT_EQ(names.count(n), 1u) << n;
  for (const char* n : {"obsm", "obsp", "varm", "varp", "uns", "X", "obs", "var"})
    EXPECT_EQ(names.count(n), 0u) << n;
  struct stat st;
  EXPECT_EQ(::stat((dir + "/raw/var.tsv").c_str(), &st), 0);
  EXPECT_EQ(::stat((dir + "/layers/counts/10x/matrix.mtx.gz").c_str(), &st), 0);
}

// Real clients on the mounted files: scipy reads matrix.mtx as the file's X transposed, pandas
// reads obs.tsv as anndata's obs (names, columns, values).
TEST_F(AnnDataCorpusMount, ScipyAndPandasReadTheViewsAsAnndataReadsTheFile) {
  ASSERT_NE(mount_, nullptr);
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  const std::string script = R"(
import sys, anndata, scipy.io, numpy as np, pandas as pd
mnt, src = sys.argv[1], sys.argv[2]
for stem in ["pbmc_csr_f32", "lognorm_csc_f64", "dense_f32", "layers_raw", "edges_f64", "gzip_csr"]:
    a = anndata.read_h5ad(f"{src}/{stem}.h5ad")
    x = a.X.toarray() if hasattr(a.X, "toarray") else np.asarray(a.X)
    m = scipy.io.mmread(f"{mnt}/{stem}.h5ad/matrix.mtx").toarray()
    assert m.shape == x.T.shape and np.array_equal(m.astype(x.dtype), x.T), stem
    obs = pd.read_csv(f"{mnt}/{stem}.h5ad/obs.tsv", sep="	", index_col=0)
    assert list(obs.index) == list(a.obs_names), stem
    assert list(obs.columns) == list(a.obs.columns), stem
    for c in obs.columns:
        want = a.obs[c]
        if str(want.dtype) == "category":
            assert list(obs[c].astype(str)) == list(want.astype(str)), (stem, c)
        else:
            got = np.asarray(obs[c], dtype=want.dtype)
            assert np.array_equal(got, np.asarray(want)), (stem, c)
print("ok")
)";
  std::string out;
  EXPECT_EQ(
      testutil::RunCommand({"/usr/bin/python3", "-c", script, mount_->path(), kAnnData}, &out), 0)
      << out;
  EXPECT_NE(out.find("ok"), std::string::npos) << out;
}

// Seurat's Read10X on an AnnData folder's 10x/ (X and a layer): genes x cells with var and obs
// names, the same values as anndata reads (X transposed), compared in R against matrix.mtx read
// by Matrix::readMM and against the sums Python computes from the file.
TEST_F(AnnDataCorpusMount, SeuratRead10XReadsThe10xFolder) {
  ASSERT_NE(mount_, nullptr);
  if (!fs::exists("/usr/bin/Rscript")) GTEST_SKIP() << "no Rscript";
  const std::string r = R"(
if (!requireNamespace("Seurat", quietly = TRUE)) { cat("no Seurat\n"); quit(status = 0) }
suppressMessages(library(Seurat))
args <- commandArgs(trailingOnly = TRUE)
for (d in c("pbmc_csr_f32.h5ad", "layers_raw.h5ad/layers/counts", "dense_f32.h5ad")) {
  m <- Read10X(file.path(args[1], d, "10x"))
  mm <- Matrix::readMM(file.path(args[1], d, "matrix.mtx"))
  genes <- readLines(file.path(args[1], d, "rownames.txt"))
  cells <- readLines(file.path(args[1], d, "colnames.txt"))
  ok <- identical(dim(m), dim(mm)) && identical(rownames(m), make.unique(genes)) &&
        identical(colnames(m), cells) && isTRUE(all.equal(as.matrix(m), as.matrix(mm), check.attributes = FALSE))
  cat(d, ok, format(sum(m), digits = 17), "
")
}
)";
  std::string out;
  ASSERT_EQ(
      testutil::RunCommand({"Rscript", "-e", r, mount_->path()}, &out, std::chrono::seconds(300)),
      0)
      << out;
  if (out.find("no Seurat") != std::string::npos) GTEST_SKIP() << "no Seurat";
  const std::string py = R"(
import sys, anndata, numpy as np
src = sys.argv[1]
for f, layer in [("pbmc_csr_f32", None), ("layers_raw", "counts"), ("dense_f32", None)]:
    a = anndata.read_h5ad(f"{src}/{f}.h5ad")
    x = a.layers[layer] if layer else a.X
    print(repr(float(np.asarray(x, dtype=np.float64).sum() if not hasattr(x, "toarray") else x.astype(np.float64).sum())))
)";
  std::string sums;
  ASSERT_EQ(testutil::RunCommand({"/usr/bin/python3", "-c", py, kAnnData}, &sums), 0) << sums;
  std::istringstream got(out), want(sums);
  std::string line, name, ok;
  double total = 0, expected = 0;
  int n = 0;
  while (std::getline(got, line)) {
    std::istringstream ls(line);
    if (!(ls >> name >> ok >> total)) continue;
    ++n;
    EXPECT_EQ(ok, "TRUE") << line;
    ASSERT_TRUE(want >> expected);
    EXPECT_NEAR(total, expected, 1e-6 * std::max(1.0, std::abs(expected))) << line;
  }
  EXPECT_EQ(n, 3) << out;
}

// Files written here by anndata with what the corpus lacks: obs columns of every dtype pandas
// keeps (float32/float64 edges, int8, uint16, int64, uint64, bool, strings needing quotes,
// categoricals of ints, strings with missing values and floats, nullable ints and booleans) and
// a named index, byte for byte against `adata.obs.to_csv(sep='\t')`; layers of int8, bool,
// uint64 (CSC) and a dense int16 read by scipy as the layer transposed, `integer` in the banner.
TEST(AnnDataWritten, EveryDtypeAsPandasAndScipyRead) {
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  testutil::TempDir dir("omicsfs-anndata-dtypes-");
  const std::string src = dir.path() + "/src";
  fs::create_directories(src);
  const std::string make = R"(
import sys, anndata, numpy as np, pandas as pd, scipy.sparse as sp
src = sys.argv[1]
rng = np.random.default_rng(3)
n = 40
f32 = np.array([0.1, 1e-5, 1e16, 123456789.0, np.nan, -0.0, np.inf, 1.5e-7, 1e-4, 9.99e15], dtype=np.float32)
obs = pd.DataFrame({
  "f32": np.concatenate([f32, (rng.standard_normal(n - 10) * 10.0 ** rng.integers(-8, 12, n - 10)).astype(np.float32)]),
  "f64": np.concatenate([[0.1, 1e-5, 1e16, np.nan, -np.inf, 2.5, 1e300, 5e-324, 1e-4, 0.3],
                         rng.standard_normal(n - 10) * 10.0 ** rng.integers(-20, 20, n - 10)]),
  "i8": rng.integers(-128, 127, n).astype(np.int8),
  "u16": rng.integers(0, 65535, n).astype(np.uint16),
  "i64": rng.integers(-2**62, 2**62, n),
  "u64": rng.integers(0, 2**63, n).astype(np.uint64),
  "b": rng.integers(0, 2, n).astype(bool),
  "s": [f"x\t{i}" if i % 7 == 0 else (f'q"{i}' if i % 5 == 0 else f"s,{i} \u00e9") for i in range(n)],
  "cat_int": pd.Categorical(rng.integers(0, 4, n)),
  "cat_str": pd.Categorical([None if i % 6 == 0 else f"c/{i % 3}" for i in range(n)]),
  "cat_f": pd.Categorical(rng.choice([1.5, 2.0, 1e-7], n)),
  "nint": pd.array([None if i % 4 == 0 else i for i in range(n)], dtype="Int32"),
  "nbool": pd.array([None if i % 3 == 0 else bool(i % 2) for i in range(n)], dtype="boolean"),
}, index=pd.Index([f"cell {i}" for i in range(n)], name="cell_id"))
var = pd.DataFrame(index=[f"g{i}" for i in range(7)])
x = sp.random(n, 7, density=0.3, format="csr", dtype=np.float32, random_state=1)
def ints(dtype, lo, hi, fmt):
    m = x.copy().astype(dtype)
    m.data = rng.integers(lo, hi, m.nnz).astype(dtype)
    return m.asformat(fmt)
layers = {"i8": ints(np.int8, -128, 127, "csr"), "b": ints(bool, 0, 2, "csr"),
          "u64": ints(np.uint64, 0, 2**63, "csc"), "d16": ints(np.int16, -30000, 30000, "csr").toarray()}
anndata.AnnData(x, obs=obs, var=var, layers=layers).write_h5ad(src + "/dtypes.h5ad")
b = anndata.read_h5ad(src + "/dtypes.h5ad")
open(src + "/../obs.tsv", "w").write(b.obs.to_csv(sep="\t"))
)";
  std::string out;
  ASSERT_EQ(testutil::RunCommand({"/usr/bin/python3", "-c", make, src}, &out), 0) << out;
  auto m = MountedFs::Start(OMICSFS_BINARY, src, {});
  ASSERT_NE(m, nullptr);
  std::string got, want;
  ASSERT_TRUE(ReadWhole(m->path() + "/dtypes.h5ad/obs.tsv", &got));
  ASSERT_TRUE(ReadWhole(dir.path() + "/obs.tsv", &want));
  EXPECT_TRUE(got == want) << got << "\nwant\n" << want;
  const std::string check = R"(
import sys, anndata, scipy.io, numpy as np
mnt, src = sys.argv[1], sys.argv[2]
a = anndata.read_h5ad(src + "/dtypes.h5ad")
for name, x in a.layers.items():
    path = f"{mnt}/dtypes.h5ad/layers/{name}/matrix.mtx"
    assert open(path).readline().split()[3] == "integer", name
    got = scipy.io.mmread(path).toarray()
    want = np.asarray(x.toarray() if hasattr(x, "toarray") else x)
    if name == "b":
        want = want.astype(np.int64)
    assert got.shape == want.T.shape and np.array_equal(got.astype(want.dtype), want.T), name
print("ok")
)";
  ASSERT_EQ(testutil::RunCommand({"/usr/bin/python3", "-c", check, m->path(), src}, &out), 0)
      << out;
  EXPECT_NE(out.find("ok"), std::string::npos);
}

// Slices of an AnnData folder against the same cut made by anndata in Python from the file:
// rows= and cols= (inline, in the order given), cols=^, and groups=obs:leiden (a folder per
// label in bytewise order, each the cols= slice of its cells, and pseudobulk.tsv: float sums of
// X, int64 sums of an int32 layer). groups=obs: of a missing column is ERROR.txt.
TEST_F(AnnDataCorpusMount, SlicesAndObsGroupsAreTheCutsAnndataMakes) {
  ASSERT_NE(mount_, nullptr);
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  const std::string script = R"(
import sys, anndata, scipy.io, numpy as np, pandas as pd
mnt, src = sys.argv[1], sys.argv[2]
def mtx(p):
    return scipy.io.mmread(p).toarray()
def lines(p):
    return open(p).read().splitlines()
a = anndata.read_h5ad(f"{src}/pbmc_csr_f32.h5ad")
root = f"{mnt}/pbmc_csr_f32.h5ad"
genes = ["GENE5", "GENE1", "GENE40"]
cells = list(a.obs_names[[7, 3, 100]])
d = f"{root}/rows={','.join(genes)}/cols={','.join(cells)}"
assert np.array_equal(mtx(d + "/matrix.mtx").astype(np.float32), a[cells, genes].X.toarray().T)
assert lines(d + "/rownames.txt") == genes and lines(d + "/colnames.txt") == cells
d = f"{root}/cols=^{','.join(cells)}"
rest = ~a.obs_names.isin(cells)
assert np.array_equal(mtx(d + "/matrix.mtx").astype(np.float32), a[rest].X.toarray().T)
assert lines(d + "/colnames.txt") == list(a.obs_names[rest])
for f, folder, exact in [("pbmc_csr_f32", "", False), ("layers_raw", "/layers/counts", True)]:
    b = anndata.read_h5ad(f"{src}/{f}.h5ad")
    x = b.layers["counts"] if exact else b.X
    labels = b.obs["leiden"].astype(str).values
    groups = sorted(set(labels), key=lambda s: s.encode())
    g_dir = f"{mnt}/{f}.h5ad{folder}/groups=obs:leiden"
    pb = pd.read_csv(g_dir + "/pseudobulk.tsv", sep="\t", index_col=0, dtype={0: str})
    assert list(pb.columns) == groups, (list(pb.columns), groups)
    assert list(pb.index) == list(b.var_names)
    for g in groups:
        sel = labels == g
        if exact:
            assert pb[g].dtype == np.int64 and np.array_equal(pb[g].values, np.asarray(x[sel].astype(np.int64).sum(axis=0)).ravel()), g
        else:
            want = np.asarray(x[sel].astype(np.float64).sum(axis=0)).ravel()
            assert np.allclose(pb[g].values, want, rtol=1e-12, atol=0), g
        got = mtx(f"{g_dir}/{g}/matrix.mtx")
        assert np.array_equal(got.astype(x.dtype), x[sel].toarray().T), g
        assert lines(f"{g_dir}/{g}/colnames.txt") == list(b.obs_names[sel]), g
print("ok")
)";
  std::string out;
  EXPECT_EQ(
      testutil::RunCommand({"/usr/bin/python3", "-c", script, mount_->path(), kAnnData}, &out), 0)
      << out;
  EXPECT_NE(out.find("ok"), std::string::npos) << out;
  std::string error;
  ASSERT_TRUE(ReadWhole(mount_->path() + "/pbmc_csr_f32.h5ad/groups=obs:nosuch/ERROR.txt", &error));
  EXPECT_NE(error.find("obs has no column 'nosuch'"), std::string::npos) << error;
}

}  // namespace
}  // namespace omicsfs
