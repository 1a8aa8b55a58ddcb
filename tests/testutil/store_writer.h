// Test-only writers: a BP-128 encoder that reproduces BPCells' layout, and writers of BPCells
// stores (directory and HDF5 backends) from an in-memory description. Used by tests and bench/.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codec/bp128.h"
#include "io/array_store.h"
#include "io/memory_array_store.h"
#include "util/status.h"

namespace omicsfs::testutil {

// Packs 128 values at `bits` bits in the interleaved layout (4·bits words).
std::vector<uint32_t> Bp128PackBlock(const uint32_t* values, int bits);

struct ArraySpec {
  io::ElemType type = io::ElemType::kUInt32;
  std::string bytes;                 // numeric payload, little-endian
  std::vector<std::string> strings;  // string arrays
  uint64_t length = 0;
};

struct StoreSpec {
  std::string version;
  std::map<std::string, ArraySpec> arrays;

  template <typename T>
  void Put(const std::string& name, const std::vector<T>& v) {
    ArraySpec a;
    a.type = io::ElemTypeOf<T>();
    a.bytes.assign(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    a.length = v.size();
    arrays[name] = std::move(a);
  }
  void PutStrings(const std::string& name, std::vector<std::string> v) {
    ArraySpec a;
    a.type = io::ElemType::kString;
    a.length = v.size();
    a.strings = std::move(v);
    arrays[name] = std::move(a);
  }
  template <typename T>
  std::vector<T> Get(const std::string& name) const {
    const ArraySpec& a = arrays.at(name);
    std::vector<T> v(a.length);
    if (!v.empty()) std::memcpy(v.data(), a.bytes.data(), v.size() * sizeof(T));
    return v;
  }
};

// Encodes `values` as BPCells does: `<prefix>_data`, `_idx`, `_idx_offsets` (format 2 only),
// `_starts` (d1 variants). The final partial block is padded by repeating its last value.
void PutBitpacked(StoreSpec* spec, const std::string& prefix, const std::vector<uint32_t>& values,
                  codec::Bp128Variant variant, int format_version);

enum class ValueKind { kUInt32, kFloat32, kFloat64 };

struct MatrixSpec {
  uint32_t rows = 0, cols = 0;
  bool row_major = false;
  bool packed = true;
  int format_version = 2;
  ValueKind kind = ValueKind::kUInt32;
  // Entries in storage order: outer pointers and inner indices + values.
  std::vector<uint64_t> idxptr;
  std::vector<uint32_t> inner;
  std::vector<double> values;  // converted to the value kind
  std::vector<std::string> row_names, col_names;
};

StoreSpec MakeMatrixStore(const MatrixSpec& m);

// A random sparse matrix (each cell non-zero with probability `density`), entries in storage
// order, with names unless `names` is false. uint values are heavy-tailed up to 2^32-1.
MatrixSpec RandomMatrix(uint32_t rows, uint32_t cols, double density, ValueKind kind,
                        bool row_major, bool packed, int format_version, uint32_t seed,
                        bool names = true);

// The same store in memory.
std::shared_ptr<io::MemoryArrayStore> ToMemoryStore(const StoreSpec& spec);

struct Fragment {
  uint32_t start, end, cell;
};

struct FragmentsSpec {
  std::vector<std::string> chr_names, cell_names;
  std::vector<std::vector<Fragment>> by_chr;  // per chromosome ID, in stored order
  std::vector<size_t> physical_order;         // chromosome IDs in file order (default: ID order)
  bool packed = true;
  int format_version = 2;
};

StoreSpec MakeFragmentsStore(const FragmentsSpec& f);

// A large sparse col-major uint32 matrix without names, drawn with geometric gaps (fast even for
// billions of cells); values 1..9 mostly, sometimes up to 100000.
MatrixSpec SparseColMajor(uint32_t rows, uint32_t cols, double density, uint32_t seed);

Status WriteDirStore(const StoreSpec& spec, const std::string& dir);
// Creates `file` if missing; `group` "/" writes into the root group.
// How WriteH5Store lays out string datasets (BPCells writes them contiguous; other writers chunk
// and compress them).
struct H5StringLayout {
  uint64_t chunk = 0;  // elements per chunk; 0: contiguous
  bool shuffle = false;
  bool deflate = false;
  bool compact = false;
};
Status WriteH5Store(const StoreSpec& spec, const std::string& file, const std::string& group,
                    const H5StringLayout& strings = {});

}  // namespace omicsfs::testutil
