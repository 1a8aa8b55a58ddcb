// A datg matrix (systemsgenetics row-compressed doubles) with its rows.txt.gz/cols.txt.gz
// companions. Opened once: trailer, metadata, block index and names are validated up front;
// then ReadBlock(k) decodes one row block (big-endian doubles). DatgMatrix is the matrix reader
// (formats/matrix.h) over it. Never formats text.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "formats/matrix.h"
#include "io/byte_source.h"
#include "util/status.h"

namespace omicsfs::formats::datg {

class DatgFile {
 public:
  // The matrix and its two name files, from any backend (their sources refuse changed bytes).
  static Result<std::shared_ptr<const DatgFile>> Open(std::shared_ptr<const io::ByteSource> datg,
                                                      const io::ByteSource& rows_gz,
                                                      const io::ByteSource& cols_gz);

  const std::string& Describe() const { return path_; }
  uint64_t rows() const { return rows_; }
  uint64_t cols() const { return cols_; }
  uint64_t rows_per_block() const { return rpb_; }
  uint64_t blocks() const { return offsets_.size(); }
  uint64_t BlockFirstRow(uint64_t b) const { return b * rpb_; }
  uint64_t BlockRows(uint64_t b) const { return std::min(rpb_, rows_ - b * rpb_); }
  bool lz4_frames() const { return lz4_frames_; }
  const std::vector<std::string>& row_names() const { return row_names_; }
  const std::vector<std::string>& col_names() const { return col_names_; }
  const std::string& dataset_name() const { return dataset_name_; }

  // Rows of block b, row-major, BlockRows(b) × cols() values.
  Result<std::vector<double>> ReadBlock(uint64_t b) const;

 private:
  DatgFile() = default;

  std::string path_;
  std::shared_ptr<const io::ByteSource> file_;
  uint64_t rows_ = 0, cols_ = 0, rpb_ = 1;
  bool lz4_frames_ = true;
  uint64_t index_offset_ = 0;
  std::vector<uint64_t> offsets_;  // one per block
  std::vector<std::string> row_names_, col_names_;
  std::string dataset_name_, data_on_rows_, data_on_cols_;
};

// A datg matrix as a formats::MatrixReader: dense, row-major, float64 (every cell an entry),
// over chosen rows and columns of a DatgFile, each in the order shown, an index at most once.
// With nothing chosen it is the whole file (the store's own view); a slice of the store chooses
// some (datg_slices.cc), and Slice() chooses within a choice. ReadRows decodes only the row
// blocks that hold the rows asked for, each once per call whatever the rows' order. Never
// formats text either.
class DatgMatrix final : public MatrixReader {
 public:
  // nullopt: every row (column), in the file's order. Indices must be in range and distinct.
  static Result<std::shared_ptr<const DatgMatrix>> Make(std::shared_ptr<const DatgFile> file,
                                                        std::optional<std::vector<uint64_t>> rows,
                                                        std::optional<std::vector<uint64_t>> cols);
  // The whole file.
  static std::shared_ptr<const DatgMatrix> Whole(std::shared_ptr<const DatgFile> file);

  const std::string& Describe() const override { return file_->Describe(); }
  Status ReadEntries(uint64_t n0, uint64_t n1, MatrixEntries* out) const override;
  Result<std::shared_ptr<const MatrixReader>> Slice(MatrixSubset subset) const override;

  const DatgFile& file() const { return *file_; }
  const std::shared_ptr<const DatgFile>& shared_file() const { return file_; }
  // Nothing chosen: the file's rows in its order, in its row blocks.
  bool whole() const { return !chosen_rows_ && !chosen_cols_; }
  uint64_t FileRow(uint64_t i) const { return chosen_rows_ ? (*chosen_rows_)[i] : i; }
  uint64_t FileCol(uint64_t j) const { return chosen_cols_ ? (*chosen_cols_)[j] : j; }

  // Rows [first, last) of the matrix, row-major, (last − first) × cols() values. The row blocks
  // holding them are read in block order, each decoded once.
  Result<std::vector<double>> ReadRows(uint64_t first, uint64_t last) const;
  // Where a ReadRows from `first` towards `last` is best cut: the whole file's rows are its
  // blocks' values as decoded (no copy) when read block by block; a slice gathers its rows anyway.
  uint64_t RunEnd(uint64_t first, uint64_t last) const;

 private:
  DatgMatrix() = default;

  std::shared_ptr<const DatgFile> file_;
  std::optional<std::vector<uint64_t>> chosen_rows_, chosen_cols_;
};

// Java's modified UTF-8 (DataOutputStream.writeUTF payload) → UTF-8.
Result<std::string> ModifiedUtf8ToUtf8(std::string_view in);

}  // namespace omicsfs::formats::datg
