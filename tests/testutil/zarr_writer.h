// Test-only Zarr writer (v2 and v3 directory stores) with the real c-blosc/zlib/zstd/lz4
// encoders: builds arrays for the Zarr reader tests and the VCF Zarr benchmark store.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "util/status.h"

namespace omicsfs::testutil {

struct ZarrArraySpec {
  std::string dtype = "<i4";  // numpy typestr; "|O" = vlen-utf8 strings
  std::vector<uint64_t> shape, chunks;
  std::string compressor = "blosc";  // blosc | zlib | gzip | zstd | lz4 | none
  std::string blosc_cname = "lz4";
  int blosc_shuffle = 1;
  size_t blosc_blocksize = 0;  // 0: c-blosc's choice
  int blosc_threads = 1;       // more: blocks written as threads finish them (out of order)
  char separator = '.';
  nlohmann::json fill_value = nullptr;
  std::vector<std::string> dimension_names;
  nlohmann::json attributes = nlohmann::json::object();
  int zarr_format = 2;
  std::set<std::string> skip_chunks;  // chunk keys not written (absent = fill)
};

// Writes `name` under `dir`. Numeric data: `bytes` holds the whole array in C order with the
// dtype's element size (little-endian; big-endian dtypes are swapped on write). String arrays:
// `strings` holds every element.
Status WriteZarrArray(const std::string& dir, const std::string& name, const ZarrArraySpec& spec,
                      const std::string& bytes, const std::vector<std::string>& strings = {});
Status WriteZarrGroup(const std::string& dir, const nlohmann::json& attributes,
                      int zarr_format = 2);

// A small VCF Zarr store (Zarr v2, no samples): contigs, one record per element of `contig` /
// `position` / `ref` (ALT is "T"), chunked by `chunk` variants.
struct VczSpec {
  std::vector<std::string> contigs = {"1"};
  std::vector<int64_t> contig_lengths;  // empty: no contig_length array
  std::vector<int32_t> contig, position;
  std::vector<std::string> ref;
  std::vector<int32_t> length;  // variant_length; empty: none
  std::vector<int32_t> end;     // variant_END (INFO/END, -1 missing); empty: none
  std::vector<std::array<int64_t, 6>> region_index;  // bio2zarr's rows; empty: no region_index
  uint64_t chunk = 1000;
};
Status WriteVczStore(const std::string& dir, const VczSpec& spec);

// Compresses with the given codec exactly as numcodecs frames it.
std::string Compress(const std::string& codec, const std::string& data,
                     const std::string& blosc_cname = "lz4", int blosc_shuffle = 1,
                     size_t typesize = 1, size_t blosc_blocksize = 0, int blosc_threads = 1);

}  // namespace omicsfs::testutil
