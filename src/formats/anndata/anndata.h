// AnnData (issue 37): an `.h5ad` file's X, layers and raw/X as matrix readers (formats/matrix.h)
// in the 10x/BPCells orientation — rows are `var` (genes), columns `obs` (cells), so AnnData's
// cells × genes X is read transposed without moving a value: a CSR X is col-major, a CSC X
// row-major, a dense X col-major with its zeros left out — and `obs`/`var` as typed tables.
// The file is reached through `Elements` (its groups' string attributes and its arrays), so the
// reader knows no storage; readers never format (text/dataframe_source.h writes the tables).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache_pool.h"
#include "formats/matrix.h"
#include "io/blob_store.h"
#include "io/h5_array_store.h"
#include "io/h5_vet.h"
#include "util/status.h"

namespace omicsfs::formats::anndata {

using Number = io::H5Number;

// One array of the file: its extent (slowest first) and element kind.
struct ArrayDesc {
  std::vector<uint64_t> dims;
  bool is_string = false;
  std::optional<Number> number;
  std::string type;            // in words, for messages
  std::string missing_filter;  // a compression filter that cannot be decoded here; "" none
};

// The file's elements by absolute path ("/", "/X", "/obs/leiden/codes").
class Elements {
 public:
  virtual ~Elements() = default;
  virtual const std::string& Describe() const = 0;
  // A group's string attribute holding one string, or nullptr.
  virtual const std::string* Attribute(const std::string& group, std::string_view name) const = 0;
  // A group's string attribute's values (a list; one string is a list of one); empty if absent.
  virtual std::vector<std::string> AttributeList(const std::string& group,
                                                 std::string_view name) const = 0;
  virtual bool IsGroup(const std::string& path) const = 0;
  // The names of the groups and arrays directly in `group`, in name order.
  virtual Result<std::vector<std::string>> Children(const std::string& group) const = 0;
  // An array (nullopt: no array there).
  virtual Result<std::optional<ArrayDesc>> Array(const std::string& path) const = 0;
  // Elements [first, first + count) in C order as type `as` (whole rows of an array of rank > 1).
  virtual Status Read(const std::string& path, Number as, uint64_t first, uint64_t count,
                      void* out) const = 0;
  virtual Result<std::vector<std::string>> Strings(const std::string& path) const = 0;
};

// One column of obs or var, typed as pandas holds it.
struct Column {
  enum class Type { kString, kInt, kUInt, kFloat32, kFloat64, kBool, kCategorical };
  std::string name;
  Type type = Type::kString;
  std::vector<std::string> strings;
  std::vector<int64_t> ints;
  std::vector<uint64_t> uints;
  std::vector<float> f32;
  std::vector<double> f64;
  std::vector<uint8_t> bools;
  std::vector<uint8_t> missing;  // nullable columns: 1 = missing (empty: none is)
  std::vector<int64_t> codes;    // categorical: index into categories, -1 missing
  std::shared_ptr<const Column> categories;
  uint64_t size() const;
};

struct Table {
  std::string index_name;  // the index's name ("" when anndata keeps none: `_index`)
  std::shared_ptr<const std::vector<std::string>> index;
  std::vector<Column> columns;
};

// Reads a dataframe group (obs, var, raw/var): its index and every column of `column-order`.
Result<Table> ReadTable(const Elements& e, const std::string& group);

class AnnData {
 public:
  // The file as AnnData (its root's encoding-type is "anndata"); obs and var names are read.
  static Result<std::shared_ptr<const AnnData>> Open(std::shared_ptr<const Elements> e);

  struct Matrix {
    std::string folder;  // "" (X), "layers/NAME", "raw"
    std::string path;    // in the file: "/X", "/layers/NAME", "/raw/X"
    Result<std::shared_ptr<const MatrixReader>> reader = InternalError("not opened");
  };
  // X (when present), each layer, raw/X: each a reader, or why it cannot be read.
  const std::vector<Matrix>& matrices() const { return matrices_; }
  const Elements& elements() const { return *e_; }
  std::shared_ptr<const Elements> shared_elements() const { return e_; }
  bool has_raw_var() const { return raw_var_ != nullptr; }
  // obs as a table, read once when first asked.
  Result<std::shared_ptr<const Table>> Obs() const;
  // The rows of the dataframe group "/obs", "/var" or "/raw/var" (its names, read at Open).
  uint64_t Rows(const std::string& group) const;
  const std::string& Describe() const { return e_->Describe(); }

 private:
  std::shared_ptr<const Elements> e_;
  std::vector<Matrix> matrices_;
  std::shared_ptr<const std::vector<std::string>> obs_, var_, raw_var_;
  mutable std::once_flag obs_once_;
  mutable Result<std::shared_ptr<const Table>> obs_table_ = InternalError("not read");
};

// The elements of an HDF5 file, from its probe's groups and attributes (io/h5_vet.h) and its
// groups opened as array stores (`open`: a group's store, opened once and kept).
using OpenH5Group = std::function<Result<std::unique_ptr<io::H5ArrayStore>>(const std::string&)>;
std::shared_ptr<const Elements> Hdf5Elements(std::string describe, io::H5Probe probe,
                                             OpenH5Group open);

// The elements of a Zarr store (v2 or v3), its decoded chunks kept in `pool` (may be null).
std::shared_ptr<const Elements> ZarrElements(std::shared_ptr<const io::BlobStore> store,
                                             cache::CachePool* pool);

}  // namespace omicsfs::formats::anndata
