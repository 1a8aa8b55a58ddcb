// The SQLite index bgenix (bgen 1.1.6, apps/bgenix.cpp) writes beside a BGEN file: its `Metadata`
// and `Variant` tables with bgenix's exact schema (the Variant table WITHOUT ROWID, bgenix's
// default), built in memory and returned as the database file's bytes. The one place that
// includes sqlite3.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "util/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace omicsfs::text {

struct BgenIndexMetadata {
  std::string filename;  // as bgenix records the path it was given
  uint64_t file_size = 0;
  int64_t last_write_time = 0;
  std::string first_bytes;  // the file's first min(1000, size) bytes
  int64_t creation_time = 0;
};

// One row of `Variant`: a variant block at [start, start + size) of the BGEN file.
struct BgenIndexVariant {
  std::string_view chromosome;
  int64_t position = 0;
  std::string_view rsid;
  int64_t number_of_alleles = 2;
  std::string_view allele1, allele2;
  uint64_t start = 0, size = 0;
};

class BgenIndexWriter {
 public:
  static Result<std::unique_ptr<BgenIndexWriter>> Create(const BgenIndexMetadata& metadata);
  ~BgenIndexWriter();
  BgenIndexWriter(const BgenIndexWriter&) = delete;
  BgenIndexWriter& operator=(const BgenIndexWriter&) = delete;

  // Rows go in file order (as bgenix inserts them).
  Status Add(const BgenIndexVariant& v);
  // Commits and returns the database file's bytes (sqlite3_serialize).
  Result<std::string> Finish();

 private:
  BgenIndexWriter() = default;
  Status Error(const char* what) const;

  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
};

}  // namespace omicsfs::text
