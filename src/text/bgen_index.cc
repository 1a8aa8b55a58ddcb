#include "text/bgen_index.h"

#include <sqlite3.h>

namespace omicsfs::text {
namespace {

// bgenix's schema, statement for statement (setup_index_file in apps/bgenix.cpp).
constexpr const char* kSchema =
    "CREATE TABLE Metadata ("
    " filename TEXT NOT NULL,"
    " file_size INT NOT NULL,"
    " last_write_time INT NOT NULL,"
    " first_1000_bytes BLOB NOT NULL,"
    " index_creation_time INT NOT NULL"
    ");"
    "CREATE TABLE Variant ("
    "  chromosome TEXT NOT NULL,"
    "  position INT NOT NULL,"
    "  rsid TEXT NOT NULL,"
    "  number_of_alleles INT NOT NULL,"
    "  allele1 TEXT NOT NULL,"
    "  allele2 TEXT NULL,"
    "  file_start_position INT NOT NULL,"
    "  size_in_bytes INT NOT NULL,"
    "  PRIMARY KEY (chromosome, position, rsid, allele1, allele2, file_start_position )"
    ") WITHOUT ROWID;";

int BindText(sqlite3_stmt* s, int i, std::string_view v) {
  return sqlite3_bind_text64(s, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}

}  // namespace

Status BgenIndexWriter::Error(const char* what) const {
  return InternalError(std::string("bgen index: ") + what + ": " +
                       (db_ ? sqlite3_errmsg(db_) : "out of memory"));
}

Result<std::unique_ptr<BgenIndexWriter>> BgenIndexWriter::Create(const BgenIndexMetadata& m) {
  std::unique_ptr<BgenIndexWriter> w(new BgenIndexWriter());
  if (sqlite3_open_v2(":memory:", &w->db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    return w->Error("open");
  }
  if (sqlite3_exec(w->db_, kSchema, nullptr, nullptr, nullptr) != SQLITE_OK)
    return w->Error("schema");
  sqlite3_stmt* meta = nullptr;
  const char* sql =
      "INSERT INTO Metadata( filename, file_size, last_write_time, first_1000_bytes, "
      "index_creation_time ) "
      "VALUES( ?, ?, ?, ?, ? )";
  if (sqlite3_prepare_v2(w->db_, sql, -1, &meta, nullptr) != SQLITE_OK) return w->Error("prepare");
  BindText(meta, 1, m.filename);
  sqlite3_bind_int64(meta, 2, static_cast<sqlite3_int64>(m.file_size));
  sqlite3_bind_int64(meta, 3, m.last_write_time);
  sqlite3_bind_blob64(meta, 4, m.first_bytes.data(), m.first_bytes.size(), SQLITE_TRANSIENT);
  sqlite3_bind_int64(meta, 5, m.creation_time);
  const int rc = sqlite3_step(meta);
  sqlite3_finalize(meta);
  if (rc != SQLITE_DONE) return w->Error("metadata");
  sql =
      "INSERT INTO Variant( chromosome, position, rsid, number_of_alleles, allele1, allele2, "
      "file_start_position, size_in_bytes ) VALUES( ?, ?, ?, ?, ?, ?, ?, ? )";
  if (sqlite3_prepare_v2(w->db_, sql, -1, &w->insert_, nullptr) != SQLITE_OK)
    return w->Error("prepare");
  if (sqlite3_exec(w->db_, "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK)
    return w->Error("begin");
  return w;
}

BgenIndexWriter::~BgenIndexWriter() {
  sqlite3_finalize(insert_);
  sqlite3_close(db_);
}

Status BgenIndexWriter::Add(const BgenIndexVariant& v) {
  BindText(insert_, 1, v.chromosome);
  sqlite3_bind_int64(insert_, 2, v.position);
  BindText(insert_, 3, v.rsid);
  sqlite3_bind_int64(insert_, 4, v.number_of_alleles);
  BindText(insert_, 5, v.allele1);
  BindText(insert_, 6, v.allele2);
  sqlite3_bind_int64(insert_, 7, static_cast<sqlite3_int64>(v.start));
  sqlite3_bind_int64(insert_, 8, static_cast<sqlite3_int64>(v.size));
  const int rc = sqlite3_step(insert_);
  sqlite3_reset(insert_);
  if (rc != SQLITE_DONE) return Error("variant");
  return OkStatus();
}

Result<std::string> BgenIndexWriter::Finish() {
  if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) return Error("commit");
  sqlite3_int64 size = 0;
  unsigned char* bytes = sqlite3_serialize(db_, "main", &size, 0);
  if (bytes == nullptr) return Error("serialize");
  std::string out(reinterpret_cast<const char*>(bytes), static_cast<size_t>(size));
  sqlite3_free(bytes);
  return out;
}

}  // namespace omicsfs::text
