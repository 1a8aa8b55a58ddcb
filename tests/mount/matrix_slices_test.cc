// Slices of BPCells matrix stores (rows=, cols=, @NAME lists, ^, groups=@NAME with
// pseudobulk.tsv) through a real mount. The truth is computed here from the full views of the
// same mount: the full matrix.mtx parsed, cut to the chosen rows and columns and renumbered must
// equal the slice's matrix.mtx byte for byte; names and matrix.tsv are cut from the full ones;
// pseudo-bulk sums are summed here. Seurat's Read10X and scipy's mmread read a slice as the
// corresponding sub-matrix of what they read from the whole store.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
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

std::vector<std::string> Fields(const std::string& line, char sep) {
  std::vector<std::string> out;
  size_t from = 0;
  for (;;) {
    const size_t at = line.find(sep, from);
    out.push_back(line.substr(from, at == std::string::npos ? std::string::npos : at - from));
    if (at == std::string::npos) return out;
    from = at + 1;
  }
}

std::vector<std::string> Listing(const std::string& dir) {
  std::vector<std::string> names;
  fs_error ec;
  for (auto& e : fs::directory_iterator(dir, ec)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A MatrixMarket text as written: its banner, shape and entries (1-based, the value's text).
struct Mtx {
  std::string banner;
  uint32_t rows = 0, cols = 0;
  struct Entry {
    uint32_t row, col;
    std::string value;
  };
  std::vector<Entry> entries;
};

Mtx ParseMtx(const std::string& text) {
  Mtx m;
  std::istringstream in(text);
  std::getline(in, m.banner);
  uint64_t nnz = 0;
  in >> m.rows >> m.cols >> nnz;
  Mtx::Entry e;
  while (in >> e.row >> e.col >> e.value) m.entries.push_back(e);
  EXPECT_EQ(m.entries.size(), nnz);
  return m;
}

// The slice's matrix.mtx as the spec says: the major axis in selection order, each major slice's
// entries in stored order (the full file's order), both indices renumbered (0-based choices).
std::string CutMtx(const Mtx& m, bool row_major, const std::optional<std::vector<uint32_t>>& rows,
                   const std::optional<std::vector<uint32_t>>& cols) {
  auto positions = [](const std::optional<std::vector<uint32_t>>& chosen, uint32_t n) {
    std::vector<int64_t> at(n, -1);
    for (uint32_t i = 0; i < n; ++i) {
      if (!chosen) at[i] = i;
    }
    if (chosen) {
      for (size_t k = 0; k < chosen->size(); ++k) at[(*chosen)[k]] = static_cast<int64_t>(k);
    }
    return at;
  };
  const auto row_at = positions(rows, m.rows), col_at = positions(cols, m.cols);
  const uint32_t n_major = row_major ? m.rows : m.cols;
  std::vector<std::vector<const Mtx::Entry*>> by_major(n_major);
  for (const auto& e : m.entries) by_major[(row_major ? e.row : e.col) - 1].push_back(&e);
  const auto& major_sel = row_major ? rows : cols;
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < n_major; ++i) order.push_back(i);
  if (major_sel) order = *major_sel;
  std::string body;
  uint64_t nnz = 0;
  for (uint32_t j : order) {
    for (const auto* e : by_major[j]) {
      if (row_at[e->row - 1] < 0 || col_at[e->col - 1] < 0) continue;
      body += std::to_string(row_at[e->row - 1] + 1) + " " +
              std::to_string(col_at[e->col - 1] + 1) + " " + e->value + "\n";
      ++nnz;
    }
  }
  return m.banner + "\n" + std::to_string(rows ? rows->size() : m.rows) + " " +
         std::to_string(cols ? cols->size() : m.cols) + " " + std::to_string(nnz) + "\n" + body;
}

// matrix.tsv cut to the chosen rows and columns (in the order chosen).
std::string CutTsv(const std::string& full, const std::optional<std::vector<uint32_t>>& rows,
                   const std::optional<std::vector<uint32_t>>& cols) {
  const auto lines = Lines(full);
  std::vector<std::vector<std::string>> f;
  for (const auto& l : lines) f.push_back(Fields(l, '\t'));
  std::vector<uint32_t> rs, cs;
  if (rows)
    rs = *rows;
  else
    for (uint32_t r = 0; r + 1 < f.size(); ++r) rs.push_back(r);
  if (cols)
    cs = *cols;
  else
    for (uint32_t c = 0; c + 1 < f[0].size(); ++c) cs.push_back(c);
  std::string out;
  for (uint32_t c : cs) out += "\t" + f[0][c + 1];
  out += "\n";
  for (uint32_t r : rs) {
    out += f[r + 1][0];
    for (uint32_t c : cs) out += "\t" + f[r + 1][c + 1];
    out += "\n";
  }
  return out;
}

std::vector<std::string> Pick(const std::vector<std::string>& names,
                              const std::vector<uint32_t>& at) {
  std::vector<std::string> out;
  for (uint32_t i : at) out.push_back(names[i]);
  return out;
}

std::string PerLine(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

class MatrixSlices : public testutil::SliceSuite<MatrixSlices> {
 protected:
  // rna.packed (850 × 1800, col-major uint), its names, and the lists the tests name.
  static void SetUpTestSuite() {
    MakeLists("omicsfs-matrix-lists-");
    rna_rows_ = Lines(ReadFile(kCorpus + "/../../expected/rna.rownames.txt"));
    rna_cols_ = Lines(ReadFile(kCorpus + "/../../expected/rna.colnames.txt"));
    ASSERT_EQ(rna_rows_.size(), 850u);
    ASSERT_EQ(rna_cols_.size(), 1800u);
    std::ofstream(lists_ + "/genes.txt") << PerLine(Pick(rna_rows_, kGenes));
    std::ofstream(lists_ + "/cells.txt") << PerLine(Pick(rna_cols_, kCells));
    std::ofstream(lists_ + "/odd.txt")
        << "comma,name\nagene_0003\n";  // counts: a name with a comma
    std::ofstream(lists_ + "/empty.txt") << "";
    // Groups of rna's cells: three groups, cells listed out of store order; most cells in none.
    {
      std::ofstream g(lists_ + "/clusters.tsv");
      for (uint32_t c = 0; c < 1800; c += 7)
        g << rna_cols_[1799 - c] << "\t"
          << (c % 3 == 0   ? "T cells"
              : c % 3 == 1 ? "B"
                           : "Mono")
          << "\n";
    }
    {
      std::ofstream g(lists_ + "/fgroups.tsv");
      for (uint32_t c = 0; c < 30; ++c)
        g << "af_col_" << c << "\t" << (c % 2 ? "odd" : "even") << "\n";
    }
    std::ofstream(lists_ + "/strangers.tsv") << rna_cols_[0] << "\tA\nNOT_A_CELL\tA\nNOR_THIS\tB\n";
    // A group named as the folder's own file: the folder is an error, nothing else in it.
    std::ofstream(lists_ + "/clash.tsv") << rna_cols_[0] << "\tA\n"
                                         << rna_cols_[1] << "\tpseudobulk.tsv\n";
    Mount(kCorpus);
  }
  static std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static std::string M(const std::string& rel) { return mount_->path() + "/" + rel; }

  // The slice at `slice` of `store` against the truth cut from the store's full views.
  static void ExpectSlice(const std::string& store, const std::string& slice, bool row_major,
                          const std::optional<std::vector<uint32_t>>& rows,
                          const std::optional<std::vector<uint32_t>>& cols, bool dense = true) {
    SCOPED_TRACE(store + "/" + slice);
    const Mtx full = ParseMtx(ReadOrFail(M(store + "/matrix.mtx")));
    EXPECT_EQ(ReadOrFail(M(store + "/" + slice + "/matrix.mtx")),
              CutMtx(full, row_major, rows, cols));
    const auto rn = Lines(ReadOrFail(M(store + "/rownames.txt"))),
               cn = Lines(ReadOrFail(M(store + "/colnames.txt")));
    if (!rn.empty()) {
      EXPECT_EQ(ReadOrFail(M(store + "/" + slice + "/rownames.txt")),
                PerLine(rows ? Pick(rn, *rows) : rn));
    }
    if (!cn.empty()) {
      EXPECT_EQ(ReadOrFail(M(store + "/" + slice + "/colnames.txt")),
                PerLine(cols ? Pick(cn, *cols) : cn));
    }
    const auto bc = Lines(ReadOrFail(M(store + "/barcodes.tsv")));
    EXPECT_EQ(ReadOrFail(M(store + "/" + slice + "/barcodes.tsv")),
              PerLine(cols ? Pick(bc, *cols) : bc));
    const auto genes = Lines(ReadOrFail(M(store + "/genes.tsv")));
    EXPECT_EQ(ReadOrFail(M(store + "/" + slice + "/genes.tsv")),
              PerLine(rows ? Pick(genes, *rows) : genes));
    if (dense) {
      EXPECT_EQ(ReadOrFail(M(store + "/" + slice + "/matrix.tsv")),
                CutTsv(ReadOrFail(M(store + "/matrix.tsv")), rows, cols));
    }
  }

  static inline const std::vector<uint32_t> kGenes = {17, 3, 849, 400, 0, 512};
  static inline const std::vector<uint32_t> kCells = {1799, 5, 6, 7, 900, 0, 1234};
  static inline std::vector<std::string> rna_rows_, rna_cols_;
};

TEST_F(MatrixSlices, ColsOfAColMajorStoreAreItsMajorSlicesInSelectionOrder) {
  const std::vector<uint32_t> cols = {900, 2, 1, 1500};
  ExpectSlice("rna.packed", "cols=" + Join(Pick(rna_cols_, cols), ","), false, std::nullopt, cols);
}

TEST_F(MatrixSlices, RowsOfAColMajorStoreFilterEveryColumn) {
  ExpectSlice("rna.packed", "rows=@genes", false, kGenes, std::nullopt);
  const std::vector<uint32_t> one = {849};
  ExpectSlice("rna.packed", "rows=" + rna_rows_[849], false, one, std::nullopt);
}

TEST_F(MatrixSlices, BothAxesOfARowMajorStore) {
  const auto rn = Lines(ReadOrFail(M("counts.rowmajor.packed/rownames.txt")));
  const auto cn = Lines(ReadOrFail(M("counts.rowmajor.packed/colnames.txt")));
  ASSERT_EQ(rn.size(), 300u);
  const std::vector<uint32_t> rows = {299, 199, 3, 10}, cols = {39, 0, 20};
  ASSERT_EQ(rn[199], "comma,name");
  std::ofstream(lists_ + "/crows.txt") << PerLine(Pick(rn, rows));
  ExpectSlice("counts.rowmajor.packed", "rows=@crows", true, rows, std::nullopt);
  ExpectSlice("counts.rowmajor.packed", "cols=" + Join(Pick(cn, cols), ","), true, std::nullopt,
              cols);
  ExpectSlice("counts.rowmajor.packed", "rows=@crows/cols=" + Join(Pick(cn, cols), ","), true, rows,
              cols);
  const std::vector<uint32_t> odd = {199, 3};
  ExpectSlice("counts.rowmajor.unpacked", "rows=@odd", true, odd, std::nullopt);
}

// A row-major store's rows keep the store's column order: a slice choosing columns out of that
// order has each row's entries out of its own, and matrix.tsv sorts them (it refused them).
TEST_F(MatrixSlices, ColumnsOutOfStoreOrderOfARowMajorStore) {
  const auto cn = Lines(ReadOrFail(M("counts.rowmajor.packed/colnames.txt")));
  const std::vector<uint32_t> cols = {36, 4, 0, 27};  // dash-dot.name first; rows hold several
  ASSERT_EQ(cn[36], "dash-dot.name");
  for (const char* store : {"counts.rowmajor.packed", "counts.rowmajor.unpacked"}) {
    ExpectSlice(store, "cols=" + Join(Pick(cn, cols), ","), true, std::nullopt, cols);
  }
  const auto fn = Lines(ReadOrFail(M("float32.rowmajor.packed/colnames.txt")));
  const std::vector<uint32_t> fcols = {29, 10, 3, 0};
  ExpectSlice("float32.rowmajor.packed", "cols=" + Join(Pick(fn, fcols), ","), true, std::nullopt,
              fcols);
}

TEST_F(MatrixSlices, SelectorsComposeInEitherOrderToTheSameBytes) {
  ExpectSlice("rna.packed", "rows=@genes/cols=@cells", false, kGenes, kCells);
  for (const char* view :
       {"matrix.mtx", "matrix.tsv", "genes.tsv", "barcodes.tsv", "10x/matrix.mtx.gz"}) {
    EXPECT_EQ(ReadOrFail(M("rna.packed/rows=@genes/cols=@cells/") + view),
              ReadOrFail(M("rna.packed/cols=@cells/rows=@genes/") + view))
        << view;
  }
}

TEST_F(MatrixSlices, ExcludedItemsLeaveTheOthersInStoreOrder) {
  std::vector<uint32_t> rest;
  for (uint32_t c = 0; c < 1800; ++c) {
    if (std::find(kCells.begin(), kCells.end(), c) == kCells.end()) rest.push_back(c);
  }
  ExpectSlice("rna.packed", "cols=^@cells", false, std::nullopt, rest, /*dense=*/false);
  std::vector<uint32_t> genes;
  for (uint32_t r = 0; r < 850; ++r) {
    if (std::find(kGenes.begin(), kGenes.end(), r) == kGenes.end()) genes.push_back(r);
  }
  ExpectSlice("rna.packed", "rows=^@genes/cols=@cells", false, genes, kCells);
  // ~61 000 kept entries: reads of the minor-axis slice start at its checkpoints (every 4096).
  ExpectSlice("rna.packed", "rows=^@genes", false, genes, std::nullopt, /*dense=*/false);
}

TEST_F(MatrixSlices, AStoreWithoutNamesIsCutByItsStandIns) {
  const std::vector<uint32_t> rows = {6, 2, 19}, cols = {14, 1};
  ExpectSlice("nonames.packed", "rows=row7,row3,row20/cols=col15,col2", false, rows, cols,
              /*dense=*/false);
  // The slice's names say which rows and columns they were.
  EXPECT_EQ(ReadOrFail(M("nonames.packed/rows=row7,row3,row20/genes.tsv")),
            "row7\trow7\nrow3\trow3\nrow20\trow20\n");
  EXPECT_EQ(ReadOrFail(M("nonames.unpacked/cols=col15,col2/barcodes.tsv")), "col15\ncol2\n");
  EXPECT_EQ(ReadOrFail(M("nonames.unpacked/cols=col15,col2/colnames.txt")), "col15\ncol2\n");
  EXPECT_EQ(ReadOrFail(M("nonames.unpacked/cols=col15,col2/rownames.txt")),
            "");  // rows not chosen: as the store
  // A number is no stand-in.
  EXPECT_EQ(Listing(M("nonames.packed/rows=7")), std::vector<std::string>{"ERROR.txt"});
}

TEST_F(MatrixSlices, FloatStores) {
  const std::vector<uint32_t> rows = {49, 0, 25}, cols = {3, 29, 10};
  const auto rn = Lines(ReadOrFail(M("float32.packed/rownames.txt")));
  const auto cn = Lines(ReadOrFail(M("float32.packed/colnames.txt")));
  const std::string slice =
      "rows=" + Join(Pick(rn, rows), ",") + "/cols=" + Join(Pick(cn, cols), ",");
  ExpectSlice("float32.packed", slice, false, rows, cols);
  ExpectSlice("float32.rowmajor.unpacked", slice, true, rows, cols);
  ExpectSlice("rnalog64.packed", "rows=@genes/cols=@cells", false, kGenes, kCells);
  ExpectSlice("rnalog32.packed", "cols=@cells", false, std::nullopt, kCells);
}

// pseudobulk.tsv's expected text: per row the sum over each group's columns (in the mtx's order,
// as the mount adds them), integers or shortest round-trip doubles.
std::string Pseudobulk(const Mtx& full, const std::vector<std::string>& row_names,
                       const std::vector<std::string>& groups,
                       const std::map<uint32_t, size_t>& group_of_col, bool integer) {
  std::vector<double> f(uint64_t{full.rows} * groups.size(), 0.0);
  std::vector<uint64_t> u(f.size(), 0);
  for (const auto& e : full.entries) {
    auto it = group_of_col.find(e.col - 1);
    if (it == group_of_col.end()) continue;
    const uint64_t at = uint64_t{e.row - 1} * groups.size() + it->second;
    if (integer)
      u[at] += std::stoull(e.value);
    else
      f[at] += std::strtod(e.value.c_str(), nullptr);
  }
  std::string out;
  for (const auto& g : groups) out += "\t" + g;
  out += "\n";
  for (uint32_t r = 0; r < full.rows; ++r) {
    out += row_names[r];
    for (size_t g = 0; g < groups.size(); ++g) {
      char buf[64];
      const uint64_t at = uint64_t{r} * groups.size() + g;
      char* end = integer ? std::to_chars(buf, buf + 64, u[at]).ptr
                          : std::to_chars(buf, buf + 64, f[at]).ptr;
      (out += '\t').append(buf, end);
    }
    out += "\n";
  }
  return out;
}

TEST_F(MatrixSlices, GroupsAreColsSlicesBesideTheirPseudobulk) {
  const std::vector<std::string> groups = {"B", "Mono", "T cells"};  // bytewise
  EXPECT_EQ(Listing(M("rna.packed/groups=@clusters")),
            (std::vector<std::string>{"B", "Mono", "T cells", "pseudobulk.tsv"}));
  std::map<std::string, std::vector<uint32_t>> members;
  std::map<uint32_t, size_t> group_of_col;
  for (uint32_t c = 0; c < 1800; c += 7) {
    const std::string g = c % 3 == 0 ? "T cells" : c % 3 == 1 ? "B" : "Mono";
    members[g].push_back(1799 - c);
    group_of_col[1799 - c] = std::find(groups.begin(), groups.end(), g) - groups.begin();
  }
  for (const auto& g : groups) {
    ExpectSlice("rna.packed", "groups=@clusters/" + g, false, std::nullopt, members[g],
                /*dense=*/g == "B");
  }
  const Mtx full = ParseMtx(ReadOrFail(M("rna.packed/matrix.mtx")));
  EXPECT_EQ(ReadOrFail(M("rna.packed/groups=@clusters/pseudobulk.tsv")),
            Pseudobulk(full, rna_rows_, groups, group_of_col, true));
  // Over a rows= slice: its rows only.
  const Mtx genes = ParseMtx(ReadOrFail(M("rna.packed/rows=@genes/matrix.mtx")));
  EXPECT_EQ(ReadOrFail(M("rna.packed/rows=@genes/groups=@clusters/pseudobulk.tsv")),
            Pseudobulk(genes, Pick(rna_rows_, kGenes), groups, group_of_col, true));
  // A group folder is itself sliceable.
  ExpectSlice("rna.packed", "groups=@clusters/B/rows=@genes", false, kGenes, members["B"], false);
}

TEST_F(MatrixSlices, PseudobulkOfFloatStoresSumsInDouble) {
  std::map<uint32_t, size_t> group_of_col;
  for (uint32_t c = 0; c < 30; ++c) group_of_col[c] = c % 2 ? 1 : 0;  // even, odd
  for (const char* store : {"float32.packed", "float32.rowmajor.packed"}) {
    SCOPED_TRACE(store);
    EXPECT_EQ(Listing(M(std::string(store) + "/groups=@fgroups")),
              (std::vector<std::string>{"even", "odd", "pseudobulk.tsv"}));
    const Mtx full = ParseMtx(ReadOrFail(M(std::string(store) + "/matrix.mtx")));
    // float32 values are written shortest for float: read as float, summed as double.
    Mtx as_double = full;
    for (auto& e : as_double.entries) {
      char buf[64];
      e.value = std::string(
          buf,
          std::to_chars(buf, buf + 64, static_cast<double>(std::strtof(e.value.c_str(), nullptr)))
              .ptr);
    }
    EXPECT_EQ(ReadOrFail(M(std::string(store) + "/groups=@fgroups/pseudobulk.tsv")),
              Pseudobulk(as_double, Lines(ReadOrFail(M(std::string(store) + "/rownames.txt"))),
                         {"even", "odd"}, group_of_col, false));
  }
}

TEST_F(MatrixSlices, ErrorsAreTheFolderAndTheRestStillWorks) {
  struct Case {
    std::string path, says;
  };
  const std::vector<Case> cases = {
      {"rna.packed/cols=NOPE1," + rna_cols_[3] + ",NOPE2", "2 of 3 columns are not in"},
      {"rna.packed/rows=" + rna_rows_[3] + "," + rna_rows_[3], "is listed twice"},
      {"rna.packed/cols=@missing", "@missing: cannot read"},
      {"rna.packed/cols=@empty", "cols=@empty: no column given"},
      {"rna.packed/groups=@strangers", "2 of 3 columns are not in"},
      {"rna.packed/cols=@cells/cols=@cells", "given twice"},
      {"rna.packed/groups=^@clusters", "groups= cannot exclude (^)"},
      {"rna.packed/cols=@cells/groups=@clusters", "cols= and groups= cannot both be given"},
      {"rna.packed/samples=x", "rows=, cols=, groups=@NAME"},
      {"rna.packed/groups=@clash", "collides with a file of the folder"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.path);
    EXPECT_EQ(Listing(M(c.path)), std::vector<std::string>{"ERROR.txt"});
    const std::string text = ReadOrFail(M(c.path + "/ERROR.txt"));
    EXPECT_NE(text.find(c.says), std::string::npos) << text;
  }
  // Ten unknown names shown at most, and their count.
  std::string many = "cols=";
  for (int i = 0; i < 12; ++i) many += (i ? ",x" : "x") + std::to_string(i);
  const std::string error = ReadOrFail(M("rna.packed/" + many + "/ERROR.txt"));
  const std::string text =
      error.substr(std::min(error.size(), error.find("12 of 12 columns are not in")));
  EXPECT_FALSE(text.empty()) << error;
  EXPECT_NE(text.find("'x9', ..."), std::string::npos) << text;
  EXPECT_EQ(text.find("x10"), std::string::npos) << text;
  // The store and its good slices still read.
  EXPECT_EQ(Lines(ReadOrFail(M("rna.packed/matrix.mtx")))[1], "850 1800 61216");
  EXPECT_EQ(Lines(ReadOrFail(M("rna.packed/cols=@cells/matrix.mtx"))).size(),
            2 + ParseMtx(ReadOrFail(M("rna.packed/cols=@cells/matrix.mtx"))).entries.size());
}

// A name the store holds twice: choosing it is refused (which one?), ^ drops every column
// bearing it, a groups table naming it is refused. A copy of counts.packed whose col_names (a
// text array: one name per line) names columns 3 and 6 alike, on a mount of its own.
TEST_F(MatrixSlices, ANameTheStoreHoldsTwiceIsAmbiguous) {
  const std::string src = testutil::MakeTempDir("omicsfs-matrix-dup-");
  ASSERT_FALSE(src.empty());
  ASSERT_EQ(RunCommand({"cp", "-r", kCorpus + "/counts.packed", src + "/dup.packed"}), 0);
  auto names = Lines(ReadFile(kCorpus + "/counts.packed/col_names"));
  ASSERT_EQ(names.size(), 40u);
  names[2] = names[5] = "dup";
  ASSERT_EQ(::chmod((src + "/dup.packed").c_str(), 0755), 0);
  fs::remove(src + "/dup.packed/col_names");
  std::ofstream(src + "/dup.packed/col_names") << PerLine(names);
  std::ofstream(lists_ + "/dupgroups.tsv") << names[0] << "\tA\ndup\tB\n";
  {
    auto mount = MountedFs::Start(OMICSFS_BINARY, src, {"-o", "lists=" + lists_});
    ASSERT_NE(mount, nullptr);
    const std::string store = mount->path() + "/dup.packed";
    EXPECT_EQ(Listing(store + "/cols=dup"), std::vector<std::string>{"ERROR.txt"});
    const std::string text = ReadOrFail(store + "/cols=dup/ERROR.txt");
    EXPECT_NE(text.find("column 'dup' is ambiguous: 2 columns"), std::string::npos) << text;
    std::vector<std::string> rest;
    for (size_t c = 0; c < names.size(); ++c) {
      if (names[c] != "dup" && names[c] != names[0]) rest.push_back(names[c]);
    }
    EXPECT_EQ(ReadOrFail(store + "/cols=^dup," + names[0] + "/colnames.txt"), PerLine(rest));
    EXPECT_EQ(ReadOrFail(store + "/cols=" + names[1] + "/colnames.txt"), names[1] + "\n");
    EXPECT_NE(ReadOrFail(store + "/groups=@dupgroups/ERROR.txt").find("'dup' is ambiguous"),
              std::string::npos);
  }
  fs_error ec;
  fs::remove_all(src, ec);
}

// Slices looked up and read from several threads at once (each slice new to the mount, so its
// folder is built, its minor-axis pass run and its views sized concurrently) agree with the truth.
TEST_F(MatrixSlices, ParallelReadersOfNewSlicesAgree) {
  const Mtx full = ParseMtx(ReadOrFail(M("rna.packed/matrix.mtx")));
  struct Job {
    std::string path;
    std::string want;
  };
  std::vector<Job> jobs;
  for (uint32_t k = 0; k < 8; ++k) {
    const std::vector<uint32_t> rows = {k, 100 + k, 849 - k}, cols = {1799 - k, k, 3 * k + 50};
    const std::string r = "rows=" + Join(Pick(rna_rows_, rows), ","),
                      c = "cols=" + Join(Pick(rna_cols_, cols), ",");
    jobs.push_back({"rna.packed/" + (k % 2 ? r + "/" + c : c + "/" + r) + "/matrix.mtx",
                    CutMtx(full, false, rows, cols)});
    jobs.push_back({"rna.packed/" + r + "/matrix.mtx", CutMtx(full, false, rows, std::nullopt)});
  }
  std::vector<std::string> got(jobs.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = t; i < jobs.size(); i += 4) ReadWhole(M(jobs[i].path), &got[i]);
    });
  }
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < jobs.size(); ++i) EXPECT_EQ(got[i], jobs[i].want) << jobs[i].path;
}

// R: Read10X of the slice equals the same columns of Read10X of the whole store.
TEST_F(MatrixSlices, SeuratReadsAColsSliceAsTheSubMatrix) {
  // One R start (loading Seurat takes seconds): the script says when Seurat is missing.
  const std::string script =
      "if (!suppressMessages(suppressWarnings(require(Seurat, quietly = TRUE)))) { cat('NO "
      "SEURAT\\n'); quit(status = 0) };"
      "a <- commandArgs(TRUE); full <- Read10X(a[1]); s <- Read10X(a[2]); cells <- readLines(a[3]);"
      "cat(identical(full[, cells], s), ncol(s), nrow(s), '\\n')";
  std::string out;
  const int rc = RunCommand({"Rscript", "-e", script, M("rna.packed"), M("rna.packed/cols=@cells"),
                             lists_ + "/cells.txt"},
                            &out);
  if (rc != 0 && RunCommand({"Rscript", "--version"}) != 0)
    GTEST_SKIP() << "R is not installed: .ci/setup installs r-cran-seurat";
  if (out.find("NO SEURAT") != std::string::npos) {
    GTEST_SKIP() << "R's Seurat (Debian r-cran-seurat) is not installed: .ci/setup installs it";
  }
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "TRUE " + std::to_string(kCells.size()) + " 850 \n");
}

// Python: scipy.io.mmread of the slice equals the same columns of mmread of the whole store.
TEST_F(MatrixSlices, ScipyReadsAColsSliceAsTheSubMatrix) {
  if (RunCommand({"/usr/bin/python3", "-c", "import scipy.io"}) != 0) {
    GTEST_SKIP() << "python3-scipy is not installed: .ci/setup installs it";
  }
  std::string cols;
  for (uint32_t c : kCells) cols += (cols.empty() ? "" : ",") + std::to_string(c);
  const std::string script =
      "import sys, scipy.io\n"
      "full = scipy.io.mmread(sys.argv[1]).tocsc()\n"
      "s = scipy.io.mmread(sys.argv[2]).tocsc()\n"
      "want = full[:, [int(c) for c in sys.argv[3].split(',')]]\n"
      "print(s.shape == want.shape and (s != want).nnz == 0, s.shape[0], s.shape[1])\n";
  std::string out;
  ASSERT_EQ(RunCommand({"/usr/bin/python3", "-c", script, M("rnalog64.packed/matrix.mtx"),
                        M("rnalog64.packed/cols=@cells/matrix.mtx"), cols},
                       &out),
            0)
      << out;
  EXPECT_EQ(out, "True 850 " + std::to_string(kCells.size()) + "\n");
}

}  // namespace
}  // namespace omicsfs
