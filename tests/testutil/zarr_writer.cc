#include "testutil/zarr_writer.h"

#include <blosc.h>
#include <lz4.h>
#include <sys/stat.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>

#include "util/fs.h"

namespace omicsfs::testutil {
namespace {

Status WriteFile(const std::string& path, const std::string& data) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
  return f ? OkStatus() : IoError("write " + path, errno);
}

size_t ItemSize(const std::string& dtype) {
  if (dtype == "|O") return 0;
  size_t n = std::stoul(dtype.substr(2));
  return dtype[1] == 'U' ? 4 * n : n;
}

std::string EncodeVlen(const std::vector<std::string>& items) {
  std::string out;
  auto u32 = [&](uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  u32(static_cast<uint32_t>(items.size()));
  for (const auto& s : items) {
    u32(static_cast<uint32_t>(s.size()));
    out += s;
  }
  return out;
}

}  // namespace

std::string Compress(const std::string& codec, const std::string& data,
                     const std::string& blosc_cname, int blosc_shuffle, size_t typesize,
                     size_t blosc_blocksize, int blosc_threads) {
  if (codec == "none") return data;
  if (codec == "blosc") {
    blosc_init();
    std::string out(data.size() + BLOSC_MAX_OVERHEAD, '\0');
    blosc_set_compressor(blosc_cname.c_str());
    blosc_set_blocksize(blosc_blocksize);
    blosc_set_nthreads(blosc_threads);
    int n = blosc_compress(5, blosc_shuffle, std::max<size_t>(typesize, 1), data.size(),
                           data.data(), out.data(), out.size());
    blosc_set_blocksize(0);
    blosc_set_nthreads(1);
    out.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return out;
  }
  if (codec == "zlib" || codec == "gzip") {
    z_stream zs{};
    deflateInit2(&zs, 5, Z_DEFLATED, codec == "gzip" ? 31 : 15, 8, Z_DEFAULT_STRATEGY);
    std::string out(deflateBound(&zs, data.size()) + 32, '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    zs.avail_in = static_cast<uInt>(data.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    deflate(&zs, Z_FINISH);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    return out;
  }
  if (codec == "zstd") {
    std::string out(ZSTD_compressBound(data.size()), '\0');
    out.resize(ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3));
    return out;
  }
  if (codec == "lz4") {
    std::string out(4 + LZ4_compressBound(static_cast<int>(data.size())), '\0');
    uint32_t n = static_cast<uint32_t>(data.size());
    std::memcpy(out.data(), &n, 4);
    int c = LZ4_compress_default(data.data(), out.data() + 4, static_cast<int>(data.size()),
                                 static_cast<int>(out.size() - 4));
    out.resize(4 + static_cast<size_t>(c));
    return out;
  }
  return data;
}

Status WriteZarrGroup(const std::string& dir, const nlohmann::json& attributes, int zarr_format) {
  if (zarr_format == 3) {
    nlohmann::json j = {{"zarr_format", 3}, {"node_type", "group"}, {"attributes", attributes}};
    return WriteFile(dir + "/zarr.json", j.dump(2));
  }
  RETURN_IF_ERROR(WriteFile(dir + "/.zgroup", R"({"zarr_format": 2})"));
  return WriteFile(dir + "/.zattrs", attributes.dump(2));
}

Status WriteZarrArray(const std::string& dir, const std::string& name, const ZarrArraySpec& spec,
                      const std::string& bytes, const std::vector<std::string>& strings) {
  using json = nlohmann::json;
  const std::string base = dir + "/" + name;
  const bool vlen = spec.dtype == "|O";
  const size_t item = ItemSize(spec.dtype);
  const size_t nd = spec.shape.size();
  // Metadata.
  if (spec.zarr_format == 3) {
    static const std::map<std::string, std::string> kV3 = {
        {"|b1", "bool"},    {"|i1", "int8"},    {"<i2", "int16"},
        {"<i4", "int32"},   {"<i8", "int64"},   {"|u1", "uint8"},
        {"<f4", "float32"}, {"<f8", "float64"}, {"|O", "string"}};
    json codecs = json::array();
    codecs.push_back(vlen ? json{{"name", "vlen-utf8"}, {"configuration", json::object()}}
                          : json{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}});
    if (spec.compressor == "blosc") {
      codecs.push_back({{"name", "blosc"},
                        {"configuration",
                         {{"cname", spec.blosc_cname},
                          {"clevel", 5},
                          {"shuffle", spec.blosc_shuffle ? "shuffle" : "noshuffle"},
                          {"typesize", std::max<size_t>(item, 1)},
                          {"blocksize", 0}}}});
    } else if (spec.compressor != "none") {
      codecs.push_back({{"name", spec.compressor}, {"configuration", json::object()}});
    }
    json j = {
        {"zarr_format", 3},
        {"node_type", "array"},
        {"shape", spec.shape},
        {"data_type", kV3.at(spec.dtype)},
        {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", spec.chunks}}}}},
        {"chunk_key_encoding",
         {{"name", "default"}, {"configuration", {{"separator", std::string(1, spec.separator)}}}}},
        {"fill_value", spec.fill_value.is_null() && vlen ? json("")
                       : spec.fill_value.is_null()       ? json(0)
                                                         : spec.fill_value},
        {"codecs", codecs},
        {"attributes", spec.attributes},
        {"dimension_names", spec.dimension_names}};
    RETURN_IF_ERROR(WriteFile(base + "/zarr.json", j.dump(2)));
  } else {
    json compressor = nullptr;
    if (spec.compressor == "blosc") {
      compressor = {{"id", "blosc"},
                    {"cname", spec.blosc_cname},
                    {"clevel", 5},
                    {"shuffle", spec.blosc_shuffle},
                    {"blocksize", 0}};
    } else if (spec.compressor == "zlib" || spec.compressor == "gzip") {
      compressor = {{"id", spec.compressor}, {"level", 5}};
    } else if (spec.compressor != "none") {
      compressor = {{"id", spec.compressor}};
    }
    json j = {{"zarr_format", 2},
              {"shape", spec.shape},
              {"chunks", spec.chunks},
              {"dtype", spec.dtype},
              {"compressor", compressor},
              {"fill_value", spec.fill_value},
              {"order", "C"},
              {"filters", vlen ? json::array({json{{"id", "vlen-utf8"}}}) : json(nullptr)},
              {"dimension_separator", std::string(1, spec.separator)}};
    RETURN_IF_ERROR(WriteFile(base + "/.zarray", j.dump(2)));
    json attrs = spec.attributes;
    if (!spec.dimension_names.empty()) attrs["_ARRAY_DIMENSIONS"] = spec.dimension_names;
    RETURN_IF_ERROR(WriteFile(base + "/.zattrs", attrs.dump(2)));
  }
  // Chunks: full chunk shape; out-of-bounds elements are zero / empty.
  std::vector<uint64_t> grid(nd, 0), stride(nd, 1);
  for (size_t d = nd - 1; d > 0; --d) stride[d - 1] = stride[d] * spec.shape[d];
  uint64_t chunk_elems = 1;
  for (uint64_t c : spec.chunks) chunk_elems *= c;
  for (;;) {
    std::string key = spec.zarr_format == 3 ? "c" : "";
    for (size_t d = 0; d < nd; ++d) {
      if (d > 0 || spec.zarr_format == 3) key.push_back(spec.separator);
      key += std::to_string(grid[d]);
    }
    if (!spec.skip_chunks.count(key)) {
      std::string raw(vlen ? 0 : chunk_elems * item, '\0');
      std::vector<std::string> items(vlen ? chunk_elems : 0);
      for (uint64_t e = 0; e < chunk_elems; ++e) {
        uint64_t rem = e, flat = 0;
        bool inside = true;
        for (size_t d = nd; d-- > 0;) {
          uint64_t c = rem % spec.chunks[d];
          rem /= spec.chunks[d];
          uint64_t g = grid[d] * spec.chunks[d] + c;
          if (g >= spec.shape[d]) inside = false;
          flat += g * stride[d];
        }
        if (!inside) continue;
        if (vlen) {
          items[e] = strings[flat];
        } else {
          std::memcpy(raw.data() + e * item, bytes.data() + flat * item, item);
          if (spec.dtype[0] == '>')
            std::reverse(raw.data() + e * item, raw.data() + (e + 1) * item);
        }
      }
      if (vlen) raw = EncodeVlen(items);
      RETURN_IF_ERROR(
          WriteFile(base + "/" + key,
                    Compress(spec.compressor, raw, spec.blosc_cname, spec.blosc_shuffle,
                             std::max<size_t>(item, 1), spec.blosc_blocksize, spec.blosc_threads)));
    }
    size_t d = nd;
    while (d-- > 0) {
      if (++grid[d] < (spec.shape[d] + spec.chunks[d] - 1) / spec.chunks[d]) break;
      grid[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) break;
  }
  return OkStatus();
}

Status WriteVczStore(const std::string& dir, const VczSpec& v) {
  using json = nlohmann::json;
  auto bytes = [](const auto& values) {
    return std::string(reinterpret_cast<const char*>(values.data()),
                       values.size() * sizeof(values[0]));
  };
  auto spec = [](std::string dtype, std::vector<uint64_t> shape, std::vector<uint64_t> chunks,
                 std::vector<std::string> dims, std::string description = "") {
    ZarrArraySpec a;
    a.dtype = std::move(dtype);
    a.shape = std::move(shape);
    a.chunks = std::move(chunks);
    a.dimension_names = std::move(dims);
    if (a.dtype == "|O") a.fill_value = "";
    if (!description.empty()) a.attributes["description"] = description;
    return a;
  };
  const uint64_t n = v.position.size(), c = std::max<uint64_t>(1, v.chunk),
                 nc = std::max<uint64_t>(1, v.contigs.size());
  if (v.contig.size() != n || v.ref.size() != n)
    return InvalidArgumentError("WriteVczStore: one contig and REF per record");
  json meta = json::array({json::array({"fileformat", "VCFv4.3"})});
  RETURN_IF_ERROR(WriteZarrGroup(
      dir,
      {{"vcf_zarr_version", "0.4"}, {"source", "omicsfs-test"}, {"vcf_meta_information", meta}}));
  RETURN_IF_ERROR(WriteZarrArray(dir, "contig_id",
                                 spec("|O", {v.contigs.size()}, {nc}, {"contigs"}), "", v.contigs));
  if (!v.contig_lengths.empty()) {
    RETURN_IF_ERROR(WriteZarrArray(dir, "contig_length",
                                   spec("<i8", {v.contig_lengths.size()}, {nc}, {"contigs"}),
                                   bytes(v.contig_lengths)));
  }
  RETURN_IF_ERROR(
      WriteZarrArray(dir, "variant_contig", spec("<i4", {n}, {c}, {"variants"}), bytes(v.contig)));
  RETURN_IF_ERROR(WriteZarrArray(dir, "variant_position", spec("<i4", {n}, {c}, {"variants"}),
                                 bytes(v.position)));
  std::vector<std::string> alleles;
  for (const auto& r : v.ref) {
    alleles.push_back(r);
    alleles.push_back("T");
  }
  RETURN_IF_ERROR(WriteZarrArray(dir, "variant_allele",
                                 spec("|O", {n, 2}, {c, 2}, {"variants", "alleles"}), "", alleles));
  if (!v.length.empty()) {
    RETURN_IF_ERROR(WriteZarrArray(dir, "variant_length", spec("<i4", {n}, {c}, {"variants"}),
                                   bytes(v.length)));
  }
  if (!v.end.empty()) {
    RETURN_IF_ERROR(WriteZarrArray(
        dir, "variant_END", spec("<i4", {n}, {c}, {"variants"}, "End position"), bytes(v.end)));
  }
  if (!v.region_index.empty()) {
    std::vector<int32_t> rows;
    for (const auto& r : v.region_index) rows.insert(rows.end(), r.begin(), r.end());
    const uint64_t m = v.region_index.size();
    RETURN_IF_ERROR(WriteZarrArray(
        dir, "region_index",
        spec("<i4", {m, 6}, {m, 6}, {"region_index_values", "region_index_fields"}), bytes(rows)));
  }
  return OkStatus();
}

}  // namespace omicsfs::testutil
