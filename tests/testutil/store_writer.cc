#include "testutil/store_writer.h"

#include <hdf5.h>
#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>
#include <random>

namespace omicsfs::testutil {

using codec::Bp128Variant;

std::vector<uint32_t> Bp128PackBlock(const uint32_t* values, int bits) {
  std::vector<uint32_t> out(static_cast<size_t>(bits) * 4, 0);
  if (bits == 0) return out;
  for (int lane = 0; lane < 4; ++lane) {
    for (int slot = 0; slot < 32; ++slot) {
      uint64_t v = values[slot * 4 + lane];
      if (bits < 32) v &= (uint64_t{1} << bits) - 1;
      uint64_t bitpos = static_cast<uint64_t>(slot) * bits;
      uint64_t word = bitpos / 32, shift = bitpos % 32;
      out[word * 4 + lane] |= static_cast<uint32_t>(v << shift);
      if (shift + bits > 32) out[(word + 1) * 4 + lane] |= static_cast<uint32_t>(v >> (32 - shift));
    }
  }
  return out;
}

void PutBitpacked(StoreSpec* spec, const std::string& prefix, const std::vector<uint32_t>& values,
                  Bp128Variant variant, int format_version) {
  std::vector<uint32_t> data, idx{0}, starts;
  const size_t n = values.size();
  for (size_t b = 0; b * 128 < n; ++b) {
    uint32_t raw[128];
    for (size_t i = 0; i < 128; ++i) raw[i] = values[std::min(b * 128 + i, n - 1)];
    uint32_t t[128];
    uint32_t prev = raw[0];
    if (variant == Bp128Variant::kD1 || variant == Bp128Variant::kD1Z) starts.push_back(raw[0]);
    for (int i = 0; i < 128; ++i) {
      switch (variant) {
        case Bp128Variant::kPlain:
          t[i] = raw[i];
          break;
        case Bp128Variant::kM1:
          t[i] = raw[i] - 1;
          break;
        case Bp128Variant::kD1:
          t[i] = raw[i] - prev;
          break;
        case Bp128Variant::kD1Z: {
          int32_t d = static_cast<int32_t>(raw[i] - prev);
          t[i] = (static_cast<uint32_t>(d) << 1) ^ static_cast<uint32_t>(d >> 31);
          break;
        }
      }
      prev = raw[i];
    }
    uint32_t all = 0;
    for (uint32_t v : t) all |= v;
    int bits = 32 - std::countl_zero(all);
    std::vector<uint32_t> words =
        bits == 32 ? std::vector<uint32_t>(raw, raw + 128) : Bp128PackBlock(t, bits);
    data.insert(data.end(), words.begin(), words.end());
    idx.push_back(static_cast<uint32_t>(data.size()));
  }
  spec->Put(prefix + "_data", data);
  spec->Put(prefix + "_idx", idx);
  if (format_version >= 2) spec->Put(prefix + "_idx_offsets", std::vector<uint64_t>{0, idx.size()});
  if (variant == Bp128Variant::kD1 || variant == Bp128Variant::kD1Z)
    spec->Put(prefix + "_starts", starts);
}

StoreSpec MakeMatrixStore(const MatrixSpec& m) {
  StoreSpec s;
  const char* type = m.kind == ValueKind::kUInt32    ? "uint"
                     : m.kind == ValueKind::kFloat32 ? "float"
                                                     : "double";
  s.version = std::string(m.packed ? "packed-" : "unpacked-") + type + "-matrix-v" +
              std::to_string(m.format_version);
  s.Put("shape", std::vector<uint32_t>{m.rows, m.cols});
  s.PutStrings("storage_order", {m.row_major ? "row" : "col"});
  s.PutStrings("row_names", m.row_names);
  s.PutStrings("col_names", m.col_names);
  if (m.format_version >= 2) {
    s.Put("idxptr", m.idxptr);
  } else {
    s.Put("idxptr", std::vector<uint32_t>(m.idxptr.begin(), m.idxptr.end()));
  }
  if (m.packed) {
    PutBitpacked(&s, "index", m.inner, Bp128Variant::kD1Z, m.format_version);
  } else {
    s.Put("index", m.inner);
  }
  switch (m.kind) {
    case ValueKind::kUInt32: {
      std::vector<uint32_t> v(m.values.begin(), m.values.end());
      if (m.packed) {
        PutBitpacked(&s, "val", v, Bp128Variant::kM1, m.format_version);
      } else {
        s.Put("val", v);
      }
      break;
    }
    case ValueKind::kFloat32:
      s.Put("val", std::vector<float>(m.values.begin(), m.values.end()));
      break;
    case ValueKind::kFloat64:
      s.Put("val", m.values);
      break;
  }
  return s;
}

std::shared_ptr<io::MemoryArrayStore> ToMemoryStore(const StoreSpec& spec) {
  auto m = std::make_shared<io::MemoryArrayStore>("memory store");
  m->SetVersion(spec.version);
  for (const auto& [name, a] : spec.arrays) {
    switch (a.type) {
      case io::ElemType::kUInt32:
        m->Put(name, spec.Get<uint32_t>(name));
        break;
      case io::ElemType::kUInt64:
        m->Put(name, spec.Get<uint64_t>(name));
        break;
      case io::ElemType::kFloat32:
        m->Put(name, spec.Get<float>(name));
        break;
      case io::ElemType::kFloat64:
        m->Put(name, spec.Get<double>(name));
        break;
      case io::ElemType::kString:
        m->PutStrings(name, a.strings);
        break;
    }
  }
  return m;
}

StoreSpec MakeFragmentsStore(const FragmentsSpec& f) {
  StoreSpec s;
  s.version = std::string(f.packed ? "packed" : "unpacked") + "-fragments-v" +
              std::to_string(f.format_version);
  std::vector<size_t> order = f.physical_order;
  if (order.empty()) {
    for (size_t c = 0; c < f.by_chr.size(); ++c) order.push_back(c);
  }
  std::vector<uint32_t> start, end, cell, delta;
  std::vector<uint64_t> ptr(2 * f.by_chr.size(), 0);
  for (size_t c : order) {
    ptr[2 * c] = start.size();
    for (const Fragment& fr : f.by_chr[c]) {
      start.push_back(fr.start);
      end.push_back(fr.end);
      delta.push_back(fr.end - fr.start);
      cell.push_back(fr.cell);
    }
    ptr[2 * c + 1] = start.size();
  }
  // As BPCells writes it: per block of 128, the running maximum end from the start of the
  // block's last chromosome, and the ends of earlier chromosomes that share the block.
  std::vector<bool> chr_start(end.size() + 1, false);
  for (size_t c = 0; c < f.by_chr.size(); ++c) chr_start[ptr[2 * c]] = true;
  std::vector<uint32_t> end_max;
  uint32_t running = 0, block = 0;
  for (size_t i = 0; i < end.size(); ++i) {
    if (chr_start[i]) running = 0;
    running = std::max(running, end[i]);
    block = std::max(block, running);
    if (i % 128 == 127 || i + 1 == end.size()) {
      end_max.push_back(block);
      block = running;
    }
  }
  s.PutStrings("chr_names", f.chr_names);
  s.PutStrings("cell_names", f.cell_names);
  if (f.format_version >= 2) {
    s.Put("chr_ptr", ptr);
  } else {
    s.Put("chr_ptr", std::vector<uint32_t>(ptr.begin(), ptr.end()));
  }
  s.Put("end_max", end_max);
  if (f.packed) {
    PutBitpacked(&s, "cell", cell, Bp128Variant::kPlain, f.format_version);
    PutBitpacked(&s, "start", start, Bp128Variant::kD1, f.format_version);
    PutBitpacked(&s, "end", delta, Bp128Variant::kPlain, f.format_version);
  } else {
    s.Put("cell", cell);
    s.Put("start", start);
    s.Put("end", end);
  }
  return s;
}

MatrixSpec RandomMatrix(uint32_t rows, uint32_t cols, double density, ValueKind kind,
                        bool row_major, bool packed, int format_version, uint32_t seed,
                        bool names) {
  MatrixSpec m;
  m.rows = rows;
  m.cols = cols;
  m.kind = kind;
  m.row_major = row_major;
  m.packed = packed;
  m.format_version = format_version;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const uint32_t outer = row_major ? rows : cols, inner = row_major ? cols : rows;
  m.idxptr.push_back(0);
  for (uint32_t j = 0; j < outer; ++j) {
    for (uint32_t i = 0; i < inner; ++i) {
      if (u(rng) >= density) continue;
      m.inner.push_back(i);
      double v;
      switch (kind) {
        case ValueKind::kUInt32: {
          double r = u(rng);
          v = r < 0.001 ? 4294967295.0 : r < 0.7 ? 1 + (rng() % 3) : 1 + (rng() % 100000);
          break;
        }
        case ValueKind::kFloat32:
          v = static_cast<float>((u(rng) - 0.3) *
                                 std::pow(10.0, static_cast<int>(rng() % 20) - 10));
          break;
        default:
          v = (u(rng) - 0.3) * std::pow(10.0, static_cast<int>(rng() % 40) - 20);
          break;
      }
      m.values.push_back(v);
    }
    m.idxptr.push_back(m.inner.size());
  }
  if (names) {
    for (uint32_t r = 0; r < rows; ++r)
      m.row_names.push_back("gene " + std::to_string(r) + (r % 7 == 0 ? " ü" : ""));
    for (uint32_t c = 0; c < cols; ++c) m.col_names.push_back("cell-" + std::to_string(c));
  }
  return m;
}

MatrixSpec SparseColMajor(uint32_t rows, uint32_t cols, double density, uint32_t seed) {
  MatrixSpec m;
  m.rows = rows;
  m.cols = cols;
  m.packed = true;
  std::mt19937_64 rng(seed);
  std::geometric_distribution<uint32_t> gap(density);
  m.idxptr.push_back(0);
  for (uint32_t c = 0; c < cols; ++c) {
    for (uint64_t r = gap(rng); r < rows; r += 1 + gap(rng)) {
      m.inner.push_back(static_cast<uint32_t>(r));
      m.values.push_back(rng() % 50 == 0 ? 1 + rng() % 100000 : 1 + rng() % 9);
    }
    m.idxptr.push_back(m.inner.size());
  }
  return m;
}

Status WriteDirStore(const StoreSpec& spec, const std::string& dir) {
  ::mkdir(dir.c_str(), 0755);
  auto write = [&](const std::string& name, const std::string& bytes) -> Status {
    std::ofstream f(dir + "/" + name, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return f ? OkStatus() : IoError("write " + dir + "/" + name, errno);
  };
  RETURN_IF_ERROR(write("version", spec.version + "\n"));
  for (const auto& [name, a] : spec.arrays) {
    std::string bytes;
    switch (a.type) {
      case io::ElemType::kUInt32:
        bytes = "UINT32v1";
        break;
      case io::ElemType::kUInt64:
        bytes = "UINT64v1";
        break;
      case io::ElemType::kFloat32:
        bytes = "FLOATSv1";
        break;
      case io::ElemType::kFloat64:
        bytes = "DOUBLEv1";
        break;
      case io::ElemType::kString:
        for (const auto& s : a.strings) bytes += s + "\n";
        break;
    }
    if (a.type != io::ElemType::kString) bytes += a.bytes;
    RETURN_IF_ERROR(write(name, bytes));
  }
  return OkStatus();
}

Status WriteH5Store(const StoreSpec& spec, const std::string& file, const std::string& group,
                    const H5StringLayout& strings) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) return IoError("create " + file, 0);
  hid_t g;
  if (group == "/") {
    g = H5Gopen2(f, "/", H5P_DEFAULT);
  } else {
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    g = H5Gcreate2(f, group.c_str(), lcpl, H5P_DEFAULT, H5P_DEFAULT);
    H5Pclose(lcpl);
  }
  if (g < 0) {
    H5Fclose(f);
    return IoError("create group " + group, 0);
  }
  hid_t strtype = H5Tcopy(H5T_C_S1);
  H5Tset_size(strtype, H5T_VARIABLE);
  H5Tset_cset(strtype, H5T_CSET_UTF8);
  // version attribute
  {
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(g, "version", strtype, space, H5P_DEFAULT, H5P_DEFAULT);
    const char* v = spec.version.c_str();
    H5Awrite(attr, strtype, &v);
    H5Aclose(attr);
    H5Sclose(space);
  }
  Status result;
  for (const auto& [name, a] : spec.arrays) {
    hsize_t dims = a.length;
    hid_t space = H5Screate_simple(1, &dims, nullptr);
    hid_t type;
    switch (a.type) {
      case io::ElemType::kUInt32:
        type = H5T_STD_U32LE;
        break;
      case io::ElemType::kUInt64:
        type = H5T_STD_U64LE;
        break;
      case io::ElemType::kFloat32:
        type = H5T_IEEE_F32LE;
        break;
      case io::ElemType::kFloat64:
        type = H5T_IEEE_F64LE;
        break;
      default:
        type = strtype;
        break;
    }
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (a.type == io::ElemType::kString && strings.compact) H5Pset_layout(dcpl, H5D_COMPACT);
    if (a.type == io::ElemType::kString && strings.chunk > 0) {
      const hsize_t chunk =
          std::max<hsize_t>(1, std::min<hsize_t>(strings.chunk, a.length));  // HDF5: ≤ the extent
      H5Pset_chunk(dcpl, 1, &chunk);
      if (strings.shuffle) H5Pset_shuffle(dcpl);
      if (strings.deflate) H5Pset_deflate(dcpl, 6);
    }
    hid_t ds = H5Dcreate2(g, name.c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    herr_t rc = 0;
    if (a.type == io::ElemType::kString) {
      std::vector<const char*> ptrs;
      for (const auto& s : a.strings) ptrs.push_back(s.c_str());
      if (!ptrs.empty()) rc = H5Dwrite(ds, strtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data());
    } else if (a.length > 0) {
      rc = H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, a.bytes.data());
    }
    if (ds < 0 || rc < 0) result = IoError("write dataset " + name, 0);
    H5Dclose(ds);
    H5Sclose(space);
  }
  H5Tclose(strtype);
  H5Gclose(g);
  H5Fclose(f);
  return result;
}

}  // namespace omicsfs::testutil
