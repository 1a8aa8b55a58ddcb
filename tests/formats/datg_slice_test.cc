// DatgMatrix (a slice of a datg file) reads only the row blocks that hold its rows, each once per
// ReadRows (per text chunk of its matrix.tsv), whatever the rows' order; its cells are the
// file's. It is a matrix reader (formats/matrix.h) like any other.
#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <utility>

#include "formats/datg/reader.h"
#include "io/memory_space.h"
#include "text/mtx_source.h"
#include "text/tsv_source.h"

namespace omicsfs::formats::datg {
namespace {

const std::string kCorpus = OMICSFS_CORPUS_DIR "/datg/";

std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A source that records the offsets it is read at.
class CountingSource : public io::ByteSource {
 public:
  CountingSource(std::string describe, std::string bytes)
      : inner_(std::move(describe), std::move(bytes)) {}
  const std::string& Describe() const override { return inner_.Describe(); }
  const io::ObjectInfo& Info() const override { return inner_.Info(); }
  Status ReadExact(uint64_t offset, void* out, size_t length) const override {
    std::lock_guard<std::mutex> lock(mu_);
    reads_.push_back(offset);
    return inner_.ReadExact(offset, out, length);
  }
  std::vector<uint64_t> TakeReads() const {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(reads_, {});
  }

 private:
  io::MemoryByteSource inner_;
  mutable std::mutex mu_;
  mutable std::vector<uint64_t> reads_;
};

struct Opened {
  std::shared_ptr<const CountingSource> source;
  std::shared_ptr<const DatgFile> file;
  std::vector<uint64_t> block_offsets;  // what ReadBlock(b) reads at, by b
};

Opened Open(const std::string& name) {
  Opened o;
  o.source =
      std::make_shared<const CountingSource>(name + ".datg", Bytes(kCorpus + name + ".datg"));
  io::MemoryByteSource rows(name + ".rows.txt.gz", Bytes(kCorpus + name + ".rows.txt.gz"));
  io::MemoryByteSource cols(name + ".cols.txt.gz", Bytes(kCorpus + name + ".cols.txt.gz"));
  auto file = DatgFile::Open(o.source, rows, cols);
  EXPECT_TRUE(file.ok()) << file.status().message();
  if (!file.ok()) return o;
  o.file = *file;
  o.source->TakeReads();
  for (uint64_t b = 0; b < o.file->blocks(); ++b) {
    EXPECT_TRUE(o.file->ReadBlock(b).ok());
    auto reads = o.source->TakeReads();
    EXPECT_EQ(reads.size(), 1u);
    o.block_offsets.push_back(reads.empty() ? 0 : reads[0]);
  }
  return o;
}

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(DatgMatrix, ReadsEachBlockOfItsRowsOnceWhateverTheirOrder) {
  Opened o = Open("multiblock_rpb1100_2300x500");
  ASSERT_NE(o.file, nullptr);
  ASSERT_EQ(o.file->blocks(), 3u);
  std::vector<std::vector<double>> blocks;
  for (uint64_t b = 0; b < 3; ++b) blocks.push_back(*o.file->ReadBlock(b));
  o.source->TakeReads();

  const std::vector<uint64_t> rows = {2250, 5, 1105, 7, 2201, 1099}, cols = {499, 0, 3};
  auto slice = DatgMatrix::Make(o.file, rows, cols);
  ASSERT_TRUE(slice.ok()) << slice.status().message();
  auto values = (*slice)->ReadRows(0, rows.size());
  ASSERT_TRUE(values.ok());
  auto reads = o.source->TakeReads();
  std::sort(reads.begin(), reads.end());
  EXPECT_EQ(reads, o.block_offsets);  // each block once
  ASSERT_EQ(values->size(), rows.size() * cols.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t j = 0; j < cols.size(); ++j) {
      const uint64_t b = rows[i] / 1100, r = rows[i] % 1100;
      EXPECT_TRUE(SameBits((*values)[i * cols.size() + j], blocks[b][r * 500 + cols[j]]))
          << i << "," << j;
    }
  }
  // Rows of one block read that block alone.
  auto one = DatgMatrix::Make(o.file, std::vector<uint64_t>{1500, 1101, 2199}, std::nullopt);
  ASSERT_TRUE(one.ok());
  ASSERT_TRUE((*one)->ReadRows(0, 3).ok());
  EXPECT_EQ(o.source->TakeReads(), std::vector<uint64_t>{o.block_offsets[1]});
  // A part of the slice reads the blocks of that part.
  ASSERT_TRUE((*slice)->ReadRows(1, 2).ok());
  EXPECT_EQ(o.source->TakeReads(), std::vector<uint64_t>{o.block_offsets[0]});
}

TEST(DatgMatrix, MatrixTsvOfASliceReadsOnlyItsBlocks) {
  Opened o = Open("narrow_19999x2");  // 400 blocks of 50 rows
  ASSERT_NE(o.file, nullptr);
  const std::vector<uint64_t> rows = {19998, 120, 101, 19950, 149, 100};  // blocks 399, 2, 399, 2
  auto slice = DatgMatrix::Make(o.file, rows, std::vector<uint64_t>{1, 0});
  ASSERT_TRUE(slice.ok());
  text::DatgTsvSource source(*slice, "matrix.tsv of a slice");
  std::string text;
  for (uint64_t k = 0; k < source.ChunkCount(); ++k) ASSERT_TRUE(source.RenderChunk(k, &text).ok());
  auto reads = o.source->TakeReads();
  std::sort(reads.begin(), reads.end());
  EXPECT_EQ(reads, (std::vector<uint64_t>{o.block_offsets[2], o.block_offsets[399]}));
  // Each row's cells are the full view's, columns swapped.
  text::DatgTsvSource full(DatgMatrix::Whole(o.file), "matrix.tsv");
  std::string all;
  for (uint64_t k = 0; k < full.ChunkCount(); ++k) ASSERT_TRUE(full.RenderChunk(k, &all).ok());
  std::vector<std::string> lines;
  std::istringstream in(all);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 20000u);
  auto split = [](const std::string& line) {
    std::vector<std::string> f;
    std::istringstream s(line);
    for (std::string x; std::getline(s, x, '\t');) f.push_back(x);
    return f;
  };
  std::string want = "\t" + split(lines[0])[2] + "\t" + split(lines[0])[1] + "\n";
  for (uint64_t r : rows) {
    auto f = split(lines[r + 1]);
    want += f[0] + "\t" + f[2] + "\t" + f[1] + "\n";
  }
  EXPECT_EQ(text, want);
  // Sizing from digit counts agrees with the text.
  uint64_t measured = 0;
  for (uint64_t k = 0; k < source.ChunkCount(); ++k) {
    auto m = source.MeasureChunk(k);
    ASSERT_TRUE(m.ok());
    if (m->has_value()) {
      measured += **m;
    } else {
      std::string chunk;
      ASSERT_TRUE(source.RenderChunk(k, &chunk).ok());
      measured += chunk.size();
    }
  }
  EXPECT_EQ(measured, text.size());
}

TEST(DatgMatrix, RefusesIndicesOutOfRangeOrTwice) {
  Opened o = Open("tiny_3x4");
  ASSERT_NE(o.file, nullptr);
  EXPECT_FALSE(DatgMatrix::Make(o.file, std::vector<uint64_t>{3}, std::nullopt).ok());
  EXPECT_FALSE(DatgMatrix::Make(o.file, std::vector<uint64_t>{1, 1}, std::nullopt).ok());
  EXPECT_FALSE(DatgMatrix::Make(o.file, std::nullopt, std::vector<uint64_t>{4}).ok());
  auto all = DatgMatrix::Make(o.file, std::nullopt, std::nullopt);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)->rows(), 3u);
  EXPECT_EQ((*all)->cols(), 4u);
  EXPECT_EQ((*all)->row_names(), o.file->row_names());
}

// A DatgMatrix is a dense row-major float64 matrix reader (formats/matrix.h): its entries are its
// cells row by row, read from any position; Slice() chooses within a choice; and the matrix views
// of other kinds render it unchanged (matrix.mtx here, the text built from ReadRows).
TEST(DatgMatrix, IsADenseMatrixReader) {
  Opened o = Open("rpb7_50x10");  // blocks of 7 rows
  ASSERT_NE(o.file, nullptr);
  auto m = DatgMatrix::Whole(o.file);
  EXPECT_TRUE(m->dense() && m->row_major());
  EXPECT_EQ(m->value_type(), ValueType::kFloat64);
  ASSERT_EQ(m->rows(), 50u);
  ASSERT_EQ(m->cols(), 10u);
  EXPECT_EQ(m->nnz(), 500u);
  EXPECT_EQ(m->MajorBegin(3), 30u);
  EXPECT_EQ(m->MajorOf(37), 3u);
  auto all = m->ReadRows(0, 50);
  ASSERT_TRUE(all.ok());
  for (auto [n0, n1] :
       {std::pair<uint64_t, uint64_t>{0, 500}, {3, 77}, {69, 70}, {140, 140}, {495, 500}}) {
    MatrixEntries e;
    ASSERT_TRUE(m->ReadEntries(n0, n1, &e).ok()) << n0;
    ASSERT_EQ(e.f64.size(), n1 - n0);
    ASSERT_EQ(e.inner.size(), n1 - n0);
    for (uint64_t n = n0; n < n1; ++n) {
      EXPECT_EQ(e.inner[n - n0], n % 10) << n;
      EXPECT_TRUE(SameBits(e.f64[n - n0], (*all)[n])) << n;
    }
  }
  MatrixEntries e;
  EXPECT_FALSE(m->ReadEntries(490, 501, &e).ok());

  // A slice of a slice is the slice of the file with the indices composed.
  auto first =
      m->Slice(MatrixSubset{std::vector<uint32_t>{5, 2, 49}, std::vector<uint32_t>{9, 0, 4}});
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto second =
      (*first)->Slice(MatrixSubset{std::vector<uint32_t>{2, 0}, std::vector<uint32_t>{1, 2}});
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ((*second)->row_names(),
            (std::vector<std::string>{o.file->row_names()[49], o.file->row_names()[5]}));
  EXPECT_EQ((*second)->col_names(),
            (std::vector<std::string>{o.file->col_names()[0], o.file->col_names()[4]}));
  ASSERT_TRUE((*second)->ReadEntries(0, 4, &e).ok());
  const uint64_t cells[4][2] = {{49, 0}, {49, 4}, {5, 0}, {5, 4}};
  for (int i = 0; i < 4; ++i)
    EXPECT_TRUE(SameBits(e.f64[i], (*all)[cells[i][0] * 10 + cells[i][1]])) << i;
  EXPECT_EQ(m->Slice(MatrixSubset{std::vector<uint32_t>{50}, std::nullopt}).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(
      (*first)->Slice(MatrixSubset{std::nullopt, std::vector<uint32_t>{1, 1}}).status().code(),
      ErrorCode::kInvalidArgument);
  EXPECT_EQ(m->Slice(MatrixSubset{std::vector<uint32_t>{}, std::nullopt}).status().code(),
            ErrorCode::kInvalidArgument);

  // matrix.mtx of the whole file, in chunks of 128 entries (across rows and blocks).
  std::string want = "%%MatrixMarket matrix coordinate real general\n50 10 500\n";
  for (uint64_t n = 0; n < 500; ++n) {
    char buf[32];
    want += std::to_string(n / 10 + 1) + " " + std::to_string(n % 10 + 1) + " " +
            std::string(buf, std::to_chars(buf, buf + sizeof buf, (*all)[n]).ptr) + "\n";
  }
  text::MtxSource mtx(m, "matrix.mtx", 128);
  std::string got;
  for (uint64_t k = 0; k < mtx.ChunkCount(); ++k) ASSERT_TRUE(mtx.RenderChunk(k, &got).ok()) << k;
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace omicsfs::formats::datg
