// Slices of datg stores (rows=, cols=, @NAME lists, ^) through a real mount. The truth is the
// full view of the same mount: a slice's matrix.tsv must be the full matrix.tsv's cells of the
// chosen rows and columns, byte for byte, in the order given (store order for ^). A store whose
// last row block is damaged shows that a rows= slice reads only the blocks of its rows.
#include <errno.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "testutil/datg_writer.h"
#include "testutil/mount_fixture.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::Join;
using testutil::Lines;
using testutil::MountedFs;
using testutil::ReadOrFail;
using testutil::ReadWhole;
using testutil::ShOrFail;

const std::string kCorpus = OMICSFS_CORPUS_DIR "/datg";
const std::string kMulti = "multiblock_rpb1100_2300x500";  // 3 row blocks of 1100, 1100, 100 rows

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t from = 0;
  for (size_t at; (at = s.find(sep, from)) != std::string::npos; from = at + 1)
    out.push_back(s.substr(from, at - from));
  out.push_back(s.substr(from));
  return out;
}

// A full matrix.tsv as cells: the column names, and per row its name and its cells' text.
struct Table {
  std::vector<std::string> cols;
  std::vector<std::string> rows;
  std::vector<std::vector<std::string>> cells;

  explicit Table(const std::string& tsv) {
    std::vector<std::string> lines = Split(tsv, '\n');
    EXPECT_EQ(lines.back(), "");
    lines.pop_back();
    cols = Split(lines[0], '\t');
    EXPECT_EQ(cols[0], "");
    cols.erase(cols.begin());
    if (lines[0].empty()) cols.clear();
    for (size_t i = 1; i < lines.size(); ++i) {
      std::vector<std::string> f = Split(lines[i], '\t');
      rows.push_back(f[0]);
      cells.emplace_back(f.begin() + 1, f.end());
    }
  }
  static size_t At(const std::vector<std::string>& names, const std::string& name) {
    auto it = std::find(names.begin(), names.end(), name);
    EXPECT_NE(it, names.end()) << name;
    return it - names.begin();
  }
  // The sub-matrix's text: rows and columns by name, in the order given (empty: all, in order).
  std::string Cut(std::vector<std::string> pick_rows, std::vector<std::string> pick_cols) const {
    if (pick_rows.empty()) pick_rows = rows;
    if (pick_cols.empty()) pick_cols = cols;
    std::vector<size_t> col_at;
    std::string out;
    for (const auto& c : pick_cols) {
      out += "\t" + c;
      col_at.push_back(At(cols, c));
    }
    out += "\n";
    for (const auto& r : pick_rows) {
      out += r;
      const size_t i = At(rows, r);
      for (size_t j : col_at) out += "\t" + cells[i][j];
      out += "\n";
    }
    return out;
  }
};

std::string Lines(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += n + "\n";
  return out;
}

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i ? "," : "") + names[i];
  return out;
}

class DatgSlices : public testutil::SliceSuite<DatgSlices> {
 protected:
  static void SetUpTestSuite() {
    src_ = testutil::MakeTempDir("omicsfs-datg-slices-");
    ASSERT_FALSE(src_.empty());
    MakeLists("omicsfs-datg-lists-");
    auto copy = [](const std::string& from, const std::string& to) {
      for (const char* ext : {".datg", ".rows.txt.gz", ".cols.txt.gz"})
        fs::copy_file(kCorpus + "/" + from + ext, src_ + "/" + to + ext);
    };
    for (const char* n :
         {"multiblock_rpb1100_2300x500", "tiny_3x4", "edge_1x1", "edge_2x0", "edge_0x3"})
      copy(n, n);
    // The same matrix with its last row block (rows 2200..2299) damaged: the frame just before
    // the block index (the trailer's index offset) loses its content checksum.
    copy(kMulti, "damaged");
    {
      std::string b = ReadOrFail(src_ + "/damaged.datg");
      ASSERT_GT(b.size(), 44u);
      uint64_t index = 0;
      for (int i = 0; i < 8; ++i)
        index = (index << 8) | static_cast<uint8_t>(b[b.size() - 44 + 16 + i]);
      ASSERT_GT(index, 2u);
      b[index - 2] = static_cast<char>(b[index - 2] ^ 0x40);
      std::ofstream(src_ + "/damaged.datg", std::ios::binary | std::ios::trunc) << b;
    }
    // Row names borne twice ("dup": rows 1 and 3), two row blocks.
    ASSERT_TRUE(testutil::WriteDatg(src_ + "/dups", 4, 2, {1, 2, 3, 4, 5, 6, 7, 8},
                                    {"a", "dup", "b", "dup"}, {"x", "y"}, 2)
                    .ok());
    std::ofstream(lists_ + "/genes.txt") << "row2299\nrow3\n\nrow1100\r\nrow1099\n";
    std::ofstream(lists_ + "/features.txt") << "f7\nf499\nf0\n";
    std::ofstream(lists_ + "/empty.txt") << "";
    std::ofstream(lists_ + "/unknown.txt")
        << "row1\nno1\nno2\nno3\nno4\nno5\nno6\nno7\nno8\nno9\nno10\nno11\nno12\n";
    Mount(src_);
    multi_ = new Table(ReadOrFail(Store(kMulti) + "/matrix.tsv"));
  }
  static void TearDownTestSuite() {
    delete multi_;
    multi_ = nullptr;
    SliceSuite::TearDownTestSuite();
    testutil::RemoveTree(src_);
  }
  static std::string Store(const std::string& name) {
    return mount_->path() + "/" + name + ".datg";
  }

  // The slice folder's three views against the full view's cut, and its size as stat gives it.
  static void ExpectSlice(const std::string& store, const Table& full, const std::string& path,
                          const std::vector<std::string>& rows,
                          const std::vector<std::string>& cols) {
    SCOPED_TRACE(store + "/" + path);
    const std::string dir = Store(store) + "/" + path;
    const std::string got = ReadOrFail(dir + "/matrix.tsv");
    EXPECT_TRUE(got == full.Cut(rows, cols)) << got.substr(0, 300);
    struct stat st;
    ASSERT_EQ(::stat((dir + "/matrix.tsv").c_str(), &st), 0);
    EXPECT_EQ(static_cast<size_t>(st.st_size), got.size());
    EXPECT_EQ(ReadOrFail(dir + "/rownames.txt"), Lines(rows.empty() ? full.rows : rows));
    EXPECT_EQ(ReadOrFail(dir + "/colnames.txt"), Lines(cols.empty() ? full.cols : cols));
  }

  static inline std::string src_;
  static inline const Table* multi_ = nullptr;
};

TEST_F(DatgSlices, RowsFromEveryBlockInTheOrderGiven) {
  ASSERT_NE(multi_, nullptr);
  ASSERT_EQ(multi_->rows.size(), 2300u);
  ASSERT_EQ(multi_->cols.size(), 500u);
  const std::vector<std::string> rows = {"row2250", "row5",    "row1105", "row7",
                                         "row1099", "row2200", "row1100"};
  ExpectSlice(kMulti, *multi_, "rows=" + Joined(rows), rows, {});
  ExpectSlice(kMulti, *multi_, "rows=row42", {"row42"}, {});
}

TEST_F(DatgSlices, ColsInTheOrderGiven) {
  ASSERT_NE(multi_, nullptr);
  const std::vector<std::string> cols = {"f499", "f0", "f250", "f1"};
  ExpectSlice(kMulti, *multi_, "cols=" + Joined(cols), {}, cols);
}

TEST_F(DatgSlices, RowsAndColsComposeInEitherOrder) {
  ASSERT_NE(multi_, nullptr);
  const std::vector<std::string> rows = {"row2299", "row0", "row1500"}, cols = {"f3", "f498", "f2"};
  const std::string r = "rows=" + Joined(rows), c = "cols=" + Joined(cols);
  ExpectSlice(kMulti, *multi_, r + "/" + c, rows, cols);
  ExpectSlice(kMulti, *multi_, c + "/" + r, rows, cols);
  EXPECT_EQ(ReadOrFail(Store(kMulti) + "/" + r + "/" + c + "/matrix.tsv"),
            ReadOrFail(Store(kMulti) + "/" + c + "/" + r + "/matrix.tsv"));
  // A slice's cell is the full view's cell: a slice of a slice is the same as one of the store.
  EXPECT_EQ(ReadOrFail(Store(kMulti) + "/" + r + "/cols=f2/matrix.tsv"), multi_->Cut(rows, {"f2"}));
}

TEST_F(DatgSlices, ExclusionKeepsStoreOrder) {
  ASSERT_NE(multi_, nullptr);
  std::vector<std::string> rows;
  for (const auto& r : multi_->rows) {
    if (r != "row0" && r != "row1500" && r != "row2299") rows.push_back(r);
  }
  std::vector<std::string> cols;
  for (const auto& c : multi_->cols) {
    if (c != "f7" && c != "f499" && c != "f0") cols.push_back(c);
  }
  ExpectSlice(kMulti, *multi_, "rows=^row2299,row0,row1500", rows, {});
  ExpectSlice(kMulti, *multi_, "cols=^@features/rows=^row2299,row0,row1500", rows, cols);
}

TEST_F(DatgSlices, ListsSelectTheirLinesInOrder) {
  ASSERT_NE(multi_, nullptr);
  const std::vector<std::string> rows = {"row2299", "row3", "row1100", "row1099"},
                                 cols = {"f7", "f499", "f0"};
  ExpectSlice(kMulti, *multi_, "rows=@genes", rows, {});
  ExpectSlice(kMulti, *multi_, "rows=@genes/cols=@features", rows, cols);
  ExpectSlice(kMulti, *multi_, "cols=@features/rows=@genes", rows, cols);
}

TEST_F(DatgSlices, EdgeStores) {
  const Table tiny(ReadOrFail(Store("tiny_3x4") + "/matrix.tsv"));
  ASSERT_EQ(tiny.rows.size(), 3u);
  // Special values (NaN, ±Infinity, -0.0, subnormals, 1.0E23) and non-ASCII names.
  ExpectSlice("tiny_3x4", tiny, "rows=emoji 🐸 row,gene A/cols=日本語,col 1",
              {"emoji 🐸 row", "gene A"}, {"日本語", "col 1"});
  ExpectSlice("tiny_3x4", tiny, "cols=^naïve", {}, {"col 1", "日本語", "x-y_z.w"});
  const Table one(ReadOrFail(Store("edge_1x1") + "/matrix.tsv"));
  ExpectSlice("edge_1x1", one, "rows=only row", {"only row"}, {});
  ExpectSlice("edge_1x1", one, "rows=only row/cols=only col", {"only row"}, {"only col"});
  // No columns: a row slice is its names; no rows: a column slice is its header.
  EXPECT_EQ(ReadOrFail(Store("edge_2x0") + "/rows=empty1/matrix.tsv"), "\nempty1\n");
  EXPECT_EQ(ReadOrFail(Store("edge_2x0") + "/rows=empty1/rownames.txt"), "empty1\n");
  EXPECT_EQ(ReadOrFail(Store("edge_2x0") + "/rows=empty1/colnames.txt"), "");
  EXPECT_EQ(ReadOrFail(Store("edge_0x3") + "/cols=c2,c0/matrix.tsv"), "\tc2\tc0\n");
  EXPECT_EQ(ReadOrFail(Store("edge_0x3") + "/cols=c2,c0/rownames.txt"), "");
}

// A name two rows bear selects neither (ambiguous); ^ drops both.
TEST_F(DatgSlices, DuplicateRowNames) {
  const Table dups(ReadOrFail(Store("dups") + "/matrix.tsv"));
  ASSERT_EQ(dups.rows, (std::vector<std::string>{"a", "dup", "b", "dup"}));
  const std::string text = ReadOrFail(Store("dups") + "/rows=dup/ERROR.txt");
  EXPECT_NE(text.find("row 'dup' is ambiguous: 2 rows of dups.datg"), std::string::npos) << text;
  EXPECT_EQ(ReadOrFail(Store("dups") + "/rows=^dup/matrix.tsv"),
            "\tx\ty\na\t1.0\t2.0\nb\t5.0\t6.0\n");
  EXPECT_EQ(ReadOrFail(Store("dups") + "/rows=b,a/matrix.tsv"),
            "\tx\ty\nb\t5.0\t6.0\na\t1.0\t2.0\n");
}

// A bad selector is a folder holding only ERROR.txt, one line that says what is wrong.
TEST_F(DatgSlices, BadSelectorsGiveAFolderWithOnlyErrorTxt) {
  const std::string store = Store(kMulti);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"rows=row1,nope", "1 of 2 rows are not in " + kMulti + ".datg: 'nope'"},
      {"rows=@unknown",
       "rows=@unknown: 12 of 13 rows are not in " + kMulti +
           ".datg: 'no1', 'no2', 'no3', 'no4', 'no5', 'no6', 'no7', 'no8', 'no9', 'no10', ..."},
      {"cols=f1,g1", "1 of 2 columns are not in " + kMulti + ".datg: 'g1'"},
      {"rows=row1,row2,row1", "row 'row1' is listed twice"},
      {"cols=^f1,f1", "column 'f1' is listed twice"},
      {"rows=", "rows=: no row given"},
      {"rows=@empty", "rows=@empty: no row given"},
      {"rows=@absent", "@absent: cannot read"},
      {"rows=row1/rows=row2", "the key rows= is given twice"},
      {"cols=f1/rows=row1/cols=f2", "the key cols= is given twice"},
      {"genes=row1", "no slice key 'genes' (this store knows rows=, cols=)"},
  };
  for (const auto& [name, says] : cases) testutil::ExpectOnlyErrorTxt(store + "/" + name, says);
  {
    const std::string text = ReadOrFail(Store("edge_1x1") + "/rows=^only row/ERROR.txt");
    EXPECT_NE(text.find("no row is left"), std::string::npos) << text;
  }
  // The rest of the mount still works: the store's views, slices, the other stores.
  for (auto& e : fs::directory_iterator(store))
    EXPECT_EQ(e.path().filename().string().find('='), std::string::npos);
  EXPECT_EQ(ReadOrFail(store + "/colnames.txt"), Lines(multi_->cols));
  EXPECT_EQ(ReadOrFail(store + "/rows=row1/matrix.tsv"), multi_->Cut({"row1"}, {}));
  EXPECT_EQ(ReadOrFail(Store("edge_1x1") + "/matrix.tsv"),
            testutil::ReadMaybeGz(kCorpus + "/edge_1x1.expected.tsv"));
  EXPECT_TRUE(mount_->alive());
}

// The damaged store's last row block fails its checksum: the full view and a slice with a row of
// that block fail (EIO); slices of rows of the other blocks read them alone and are whole.
TEST_F(DatgSlices, ARowsSliceReadsOnlyTheBlocksOfItsRows) {
  ASSERT_NE(multi_, nullptr);
  std::string got;
  int err = 0;
  EXPECT_FALSE(ReadWhole(Store("damaged") + "/matrix.tsv", &got, &err));
  EXPECT_EQ(err, EIO);
  err = 0;
  EXPECT_FALSE(ReadWhole(Store("damaged") + "/rows=row5,row2250/matrix.tsv", &got, &err));
  EXPECT_EQ(err, EIO);
  const std::vector<std::string> rows = {"row2199", "row5", "row1100"};  // blocks 1 and 0
  EXPECT_TRUE(ReadOrFail(Store("damaged") + "/rows=" + Joined(rows) + "/matrix.tsv") ==
              multi_->Cut(rows, {}));
  // A cols= slice holds every row: it reads every block.
  err = 0;
  EXPECT_FALSE(ReadWhole(Store("damaged") + "/cols=f9/matrix.tsv", &got, &err));
  EXPECT_EQ(err, EIO);
  EXPECT_TRUE(mount_->alive());
}

// Sizes persist under the slice's identity: the same selectors in the other order find the index
// the first order wrote (no new file), another slice writes its own.
TEST_F(DatgSlices, EitherOrderSharesItsPersistedSizes) {
  ASSERT_NE(multi_, nullptr);
  const std::string index_dir = testutil::MakeTempDir("omicsfs-datg-idx-");
  ASSERT_FALSE(index_dir.empty());
  auto count = [&] {
    size_t n = 0;
    for (auto& e : fs::directory_iterator(index_dir)) n += e.path().extension() == ".idx";
    return n;
  };
  {
    auto m = MountedFs::Start(OMICSFS_BINARY, src_,
                              {"-o", "lists=" + lists_ + ",index_dir=" + index_dir});
    ASSERT_NE(m, nullptr);
    const std::string store = m->path() + "/" + kMulti + ".datg";
    const std::vector<std::string> cols = {"f7", "f499", "f0"};
    std::vector<std::string> rows;
    for (const auto& r : multi_->rows) {
      if (r != "row3" && r != "row1200") rows.push_back(r);
    }
    struct stat st;
    const size_t before = count();
    ASSERT_EQ(::stat((store + "/rows=^row3,row1200/cols=@features/matrix.tsv").c_str(), &st), 0);
    const size_t once = count();
    EXPECT_EQ(once, before + 1);
    ASSERT_EQ(::stat((store + "/cols=f7,f499,f0/rows=^row1200,row3/matrix.tsv").c_str(), &st), 0);
    EXPECT_EQ(count(), once);
    EXPECT_EQ(static_cast<size_t>(st.st_size), multi_->Cut(rows, cols).size());
    EXPECT_TRUE(ReadOrFail(store + "/cols=f7,f499,f0/rows=^row1200,row3/matrix.tsv") ==
                multi_->Cut(rows, cols));
    ASSERT_EQ(::stat((store + "/cols=f499,f7,f0/rows=^row1200,row3/matrix.tsv").c_str(), &st), 0);
    EXPECT_EQ(count(), once + 1);  // another column order: another slice
  }
  fs_error ec;
  fs::remove_all(index_dir, ec);
}

}  // namespace
}  // namespace omicsfs
