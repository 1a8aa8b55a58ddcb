#include "io/h5_array_store.h"

#include <hdf5.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_map>

#include "io/h5_handle.h"
#include "io/h5_lzf.h"
#include "io/h5_vfd.h"
#include "io/local/local_space.h"
#include "util/file.h"

namespace omicsfs::io {

class H5File {
 public:
  explicit H5File(h5::Handle h) : handle(std::move(h)) {}
  h5::Handle handle;
};

namespace {

struct DatasetType {
  std::optional<ElemType> type;  // nullopt: not one of the supported numeric types
  bool is_string = false;
  uint64_t length = 0;
};

Result<DatasetType> InspectDataset(hid_t ds, const std::string& what) {
  h5::Handle type = h5::TypeHandle(H5Dget_type(ds));
  if (!type.valid()) return h5::Error(what + ": get type");
  h5::Handle space = h5::DataspaceHandle(H5Dget_space(ds));
  if (!space.valid()) return h5::Error(what + ": get dataspace");
  int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) return h5::Error(what + ": get rank");
  if (rank > 1)
    return CorruptError(what + ": expected a 1-D dataset, found rank " + std::to_string(rank));
  hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0) return h5::Error(what + ": get size");
  DatasetType out;
  out.length = static_cast<uint64_t>(n);
  H5T_class_t cls = H5Tget_class(type.get());
  size_t size = H5Tget_size(type.get());
  if (cls == H5T_STRING) {
    out.is_string = true;
  } else if (cls == H5T_INTEGER && H5Tget_sign(type.get()) == H5T_SGN_NONE) {
    if (size == 4) out.type = ElemType::kUInt32;
    if (size == 8) out.type = ElemType::kUInt64;
  } else if (cls == H5T_FLOAT) {
    if (size == 4) out.type = ElemType::kFloat32;
    if (size == 8) out.type = ElemType::kFloat64;
  }
  return out;
}

constexpr uint64_t kRefBytes =
    16;  // a stored vlen reference: u32 length, u64 collection address, u32 object index

// Undoes HDF5's shuffle filter: byte k of every element was stored in plane k.
std::string Unshuffle(const std::string& in, size_t elem) {
  std::string out(in.size(), '\0');
  const size_t n = in.size() / elem;
  for (size_t k = 0; k < elem; ++k) {
    for (size_t i = 0; i < n; ++i) out[i * elem + k] = in[k * n + i];
  }
  for (size_t i = n * elem; i < in.size(); ++i) out[i] = in[i];
  return out;
}

// The stored references of a variable-length string dataset (kRefBytes each; unwritten ones zero),
// read from the file's bytes so that libhdf5 follows none of them: contiguous data in one read,
// chunked data chunk by chunk (unfiltered, deflate, shuffle). Compact data lives inside the object
// header, which is not parsed here: such datasets are refused.
Result<std::string> StoredReferences(hid_t ds, const ByteSource& f, uint64_t file_size,
                                     uint64_t userblock, uint64_t count, const std::string& what) {
  std::string refs(count * kRefBytes, '\0');
  auto read_at = [&](uint64_t addr, uint64_t size, char* out) -> Status {
    if (addr > file_size || size > file_size - addr) {
      return CorruptError(what + ": stored data at " + std::to_string(addr) + " (" +
                          std::to_string(size) + " bytes) lies outside the file");
    }
    return f.ReadExact(userblock + addr, out, size).WithContext(what + ": string references");
  };
  h5::Handle dcpl = h5::PlistHandle(H5Dget_create_plist(ds));
  if (!dcpl.valid()) return h5::Error(what + ": creation properties");
  const H5D_layout_t layout = H5Pget_layout(dcpl.get());
  if (layout == H5D_CONTIGUOUS) {
    const haddr_t offset = H5Dget_offset(ds);
    if (offset == HADDR_UNDEF) {
      h5::TakeErrorStack();
      return refs;  // nothing written yet
    }
    RETURN_IF_ERROR(read_at(offset, refs.size(), refs.data()));
    return refs;
  }
  if (layout != H5D_CHUNKED) {
    return CorruptError(
        what + ": variable-length strings stored " +
        (layout == H5D_COMPACT ? std::string("compact") : "in layout " + std::to_string(layout)) +
        " are not read (their heap references cannot be checked before libhdf5 follows them)");
  }
  hsize_t chunk = 0;
  if (H5Pget_chunk(dcpl.get(), 1, &chunk) != 1 || chunk == 0 || chunk > (hsize_t{1} << 26)) {
    return CorruptError(what + ": unusable chunk shape");
  }
  const int nfilters = H5Pget_nfilters(dcpl.get());
  if (nfilters < 0) return h5::Error(what + ": filters");
  std::vector<H5Z_filter_t> filters;
  for (int i = 0; i < nfilters; ++i) {
    unsigned flags = 0;
    size_t nvalues = 0;
    unsigned config = 0;
    const H5Z_filter_t id = H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &nvalues,
                                           nullptr, 0, nullptr, &config);
    if (id != H5Z_FILTER_DEFLATE && id != H5Z_FILTER_SHUFFLE && id != h5::kLzfFilter) {
      return CorruptError(
          what + ": variable-length strings behind HDF5 filter " + std::to_string(id) +
          " are not read (their heap references cannot be checked before libhdf5 follows them)");
    }
    filters.push_back(id);
  }
  h5::Handle space = h5::DataspaceHandle(H5Dget_space(ds));
  hsize_t nchunks = 0;
  if (!space.valid() || H5Dget_num_chunks(ds, space.get(), &nchunks) < 0)
    return h5::Error(what + ": chunk count");
  const uint64_t chunk_bytes = chunk * kRefBytes;
  std::string stored, plain;
  for (hsize_t c = 0; c < nchunks; ++c) {
    hsize_t offset = 0;
    unsigned mask = 0;
    haddr_t addr = 0;
    hsize_t size = 0;
    if (H5Dget_chunk_info(ds, space.get(), c, &offset, &mask, &addr, &size) < 0) {
      return h5::Error(what + ": chunk " + std::to_string(c));
    }
    const std::string where = what + ": chunk at element " + std::to_string(offset);
    if (offset % chunk != 0 || offset >= count)
      return CorruptError(where + " lies outside the dataset");
    if (size > (uint64_t{1} << 30))
      return CorruptError(where + " claims " + std::to_string(size) + " bytes");
    stored.resize(size);
    RETURN_IF_ERROR(read_at(addr, size, stored.data()));
    for (size_t i = filters.size(); i-- > 0;) {
      if (mask & (1u << i)) continue;  // this filter was skipped for this chunk
      if (filters[i] == H5Z_FILTER_SHUFFLE) {
        stored = Unshuffle(stored, kRefBytes);
        continue;
      }
      if (filters[i] == h5::kLzfFilter) {
        plain.resize(chunk_bytes);
        if (h5::LzfDecode(reinterpret_cast<const unsigned char*>(stored.data()), stored.size(),
                          reinterpret_cast<unsigned char*>(plain.data()),
                          chunk_bytes) != static_cast<long>(chunk_bytes)) {
          return CorruptError(where + ": LZF block does not decode to " +
                              std::to_string(chunk_bytes) + " bytes");
        }
        stored.swap(plain);
        continue;
      }
      plain.resize(chunk_bytes);
      uLongf out = chunk_bytes;
      if (uncompress(reinterpret_cast<Bytef*>(plain.data()), &out,
                     reinterpret_cast<const Bytef*>(stored.data()), stored.size()) != Z_OK ||
          out != chunk_bytes) {
        return CorruptError(where + ": deflate stream does not inflate to " +
                            std::to_string(chunk_bytes) + " bytes");
      }
      stored.swap(plain);
    }
    if (stored.size() != chunk_bytes)
      return CorruptError(where + " holds " + std::to_string(stored.size()) + " bytes, not " +
                          std::to_string(chunk_bytes));
    const uint64_t n = std::min<uint64_t>(chunk, count - offset);
    std::memcpy(refs.data() + offset * kRefBytes, stored.data(), n * kRefBytes);
  }
  return refs;
}

// libhdf5 1.10.8 follows the global-heap references of variable-length strings without checking
// them: a damaged object index reads past its heap table, a damaged size past the collection
// (both found by fuzz_h5; whether they crash depends on the memory layout, so the vetting helper
// cannot always tell). Before libhdf5 reads a variable-length string dataset, every stored
// reference is checked against the collection it names, parsed here from the file's bytes:
// collection signature, version and size within the file, each object within the collection, the
// index present, the string no longer than its object. (The one other global-heap reference the
// daemon would follow, the group's version attribute, is read by the helper only: io/h5_vet.h.)
Status CheckVlenReferences(hid_t fid, hid_t ds, hid_t ftype, uint64_t count, const ByteSource& f,
                           const std::string& what) {
  if (H5Tis_variable_str(ftype) <= 0 || count == 0) return OkStatus();
  h5::Handle fcpl = h5::PlistHandle(H5Fget_create_plist(fid));
  size_t sizeof_addr = 0, sizeof_size = 0;
  hsize_t userblock = 0;
  if (!fcpl.valid() || H5Pget_sizes(fcpl.get(), &sizeof_addr, &sizeof_size) < 0 ||
      H5Pget_userblock(fcpl.get(), &userblock) < 0) {
    return h5::Error(what + ": file creation properties");
  }
  if (sizeof_addr != 8 || sizeof_size != 8) {
    return CorruptError(what + ": variable-length strings in a file with " +
                        std::to_string(sizeof_addr) +
                        "-byte addresses are not read (their heap references cannot be checked)");
  }
  if (count > (uint64_t{1} << 26)) return CorruptError(what + ": implausibly many strings");
  const uint64_t file_size = f.Size();
  ASSIGN_OR_RETURN(const std::string refs,
                   StoredReferences(ds, f, file_size, userblock, count, what));
  std::unordered_map<uint64_t, std::unordered_map<uint32_t, uint64_t>>
      collections;  // address → index → size
  auto collection = [&](uint64_t addr) -> Result<const std::unordered_map<uint32_t, uint64_t>*> {
    auto it = collections.find(addr);
    if (it != collections.end()) return &it->second;
    const std::string where = what + ": global heap collection at " + std::to_string(addr);
    char head[16];
    if (addr > file_size || file_size - addr < sizeof head)
      return CorruptError(where + " lies outside the file");
    RETURN_IF_ERROR(f.ReadExact(userblock + addr, head, sizeof head));
    uint64_t size;
    std::memcpy(&size, head + 8, 8);
    if (std::memcmp(head, "GCOL", 4) != 0 || head[4] != 1)
      return CorruptError(where + " has no collection signature");
    if (size < 4096 || size > (uint64_t{1} << 30) || size > file_size - addr) {
      return CorruptError(where + " claims " + std::to_string(size) + " bytes");
    }
    std::string bytes(size, '\0');
    RETURN_IF_ERROR(f.ReadExact(userblock + addr, bytes.data(), size));
    std::unordered_map<uint32_t, uint64_t> objects;
    for (uint64_t pos = 16; pos + 16 <= size;) {
      uint16_t index;
      uint64_t osize;
      std::memcpy(&index, bytes.data() + pos, 2);
      std::memcpy(&osize, bytes.data() + pos + 8, 8);
      if (index == 0) break;  // the free space: the rest of the collection
      if (osize > size - pos - 16) {
        return CorruptError(where + ": object " + std::to_string(index) + " claims " +
                            std::to_string(osize) + " bytes");
      }
      objects[index] = osize;
      pos += 16 + (osize + 7) / 8 * 8;
    }
    return &collections.emplace(addr, std::move(objects)).first->second;
  };
  for (uint64_t i = 0; i < count; ++i) {
    uint32_t length, index;
    uint64_t addr;
    std::memcpy(&length, refs.data() + i * kRefBytes, 4);
    std::memcpy(&addr, refs.data() + i * kRefBytes + 4, 8);
    std::memcpy(&index, refs.data() + i * kRefBytes + 12, 4);
    if (addr == 0 && length == 0) continue;  // a null string
    ASSIGN_OR_RETURN(const auto* objects, collection(addr));
    auto o = objects->find(index);
    if (o == objects->end() || length > o->second) {
      return CorruptError(what + ": string " + std::to_string(i) + " refers to object " +
                          std::to_string(index) + " of the global heap collection at " +
                          std::to_string(addr) + ", which " +
                          (o == objects->end() ? "does not exist" : "is shorter"));
    }
  }
  return OkStatus();
}

hid_t NativeType(ElemType t) {
  switch (t) {
    case ElemType::kUInt32:
      return H5T_NATIVE_UINT32;
    case ElemType::kUInt64:
      return H5T_NATIVE_UINT64;
    case ElemType::kFloat32:
      return H5T_NATIVE_FLOAT;
    case ElemType::kFloat64:
      return H5T_NATIVE_DOUBLE;
    case ElemType::kString:
      break;
  }
  return H5I_INVALID_HID;
}

}  // namespace

H5ArrayStore::~H5ArrayStore() = default;

Result<std::unique_ptr<H5ArrayStore>> H5ArrayStore::Open(const std::string& file,
                                                         const std::string& group,
                                                         ChangeGuard guard,
                                                         std::optional<std::string> version) {
  ASSIGN_OR_RETURN(h5::Handle f, h5::OpenFile(file));
  std::unique_ptr<H5ArrayStore> s(new H5ArrayStore());
  s->guard_ = guard;
  if (guard.active) {
    ASSIGN_OR_RETURN(s->guard_file_, File::OpenReadOnly(file));
    RETURN_IF_ERROR(guard.Check(s->guard_file_));
  }
  s->path_ = file;
  RETURN_IF_ERROR(s->Init(std::move(f), group, std::move(version)));
  return s;
}

Result<std::unique_ptr<H5ArrayStore>> H5ArrayStore::Open(std::shared_ptr<const ByteSource> source,
                                                         const std::string& group,
                                                         std::optional<std::string> version) {
  ASSIGN_OR_RETURN(h5::Handle f, h5::OpenFile(source));
  std::unique_ptr<H5ArrayStore> s(new H5ArrayStore());
  s->path_ = source->Describe();
  s->source_ = std::move(source);
  RETURN_IF_ERROR(s->Init(std::move(f), group, std::move(version)));
  return s;
}

Status H5ArrayStore::Init(h5::Handle file, const std::string& group,
                          std::optional<std::string> version) {
  file_ = std::make_shared<H5File>(std::move(file));
  version_ = std::move(version);
  group_ = group.empty() ? "/" : group;
  describe_ = path_ + ":" + group_;
  htri_t exists = group_ == "/" ? 1 : H5Lexists(file_->handle.get(), group_.c_str(), H5P_DEFAULT);
  if (exists < 0) return h5::Error(describe_ + ": look up group");
  if (exists == 0) {
    h5::TakeErrorStack();
    return NotFoundError(describe_ + ": no such group");
  }
  return OkStatus();
}

std::string H5ArrayStore::DatasetPath(const std::string& name) const {
  return group_ == "/" ? "/" + name : group_ + "/" + name;
}

Result<std::string> H5ArrayStore::Version() const {
  if (version_) return *version_;
  h5::PrepareThread();
  hid_t fid = file_->handle.get();
  htri_t has = H5Aexists_by_name(fid, group_.c_str(), "version", H5P_DEFAULT);
  if (has < 0) return h5::Error(describe_ + ": version attribute");
  if (has == 0) return NotFoundError(describe_ + ": no version attribute");
  h5::Handle attr = h5::AttributeHandle(
      H5Aopen_by_name(fid, group_.c_str(), "version", H5P_DEFAULT, H5P_DEFAULT));
  if (!attr.valid()) return h5::Error(describe_ + ": open version attribute");
  ASSIGN_OR_RETURN(std::vector<std::string> v,
                   h5::ReadStringValues(attr.get(), true, describe_ + ": version attribute"));
  if (v.size() != 1)
    return CorruptError(describe_ + ": version attribute holds " + std::to_string(v.size()) +
                        " values");
  return v[0];
}

Result<std::optional<ArrayInfo>> H5ArrayStore::Info(const std::string& name) const {
  h5::PrepareThread();
  std::string path = DatasetPath(name);
  hid_t fid = file_->handle.get();
  htri_t exists = H5Lexists(fid, path.c_str(), H5P_DEFAULT);
  if (exists < 0) return h5::Error(describe_ + ": " + name);
  if (exists == 0) return std::optional<ArrayInfo>();
  h5::Handle ds = h5::DatasetHandle(H5Dopen2(fid, path.c_str(), H5P_DEFAULT));
  if (!ds.valid()) return h5::Error(describe_ + ": open dataset '" + name + "'");
  ASSIGN_OR_RETURN(DatasetType t, InspectDataset(ds.get(), describe_ + ": dataset '" + name + "'"));
  if (t.is_string) return std::optional<ArrayInfo>(ArrayInfo{ElemType::kString, t.length});
  if (!t.type)
    return CorruptError(describe_ + ": dataset '" + name + "' has an unsupported element type");
  return std::optional<ArrayInfo>(ArrayInfo{*t.type, t.length});
}

Status H5ArrayStore::Read(const std::string& name, ElemType type, uint64_t first, uint64_t count,
                          void* out) const {
  h5::PrepareThread();
  std::string path = DatasetPath(name);
  std::string what = describe_ + ": dataset '" + name + "'";
  h5::Handle ds = h5::DatasetHandle(H5Dopen2(file_->handle.get(), path.c_str(), H5P_DEFAULT));
  if (!ds.valid()) {
    h5::TakeErrorStack();
    return NotFoundError(describe_ + ": array '" + name + "' is missing");
  }
  ASSIGN_OR_RETURN(DatasetType t, InspectDataset(ds.get(), what));
  if (!t.type) return CorruptError(what + " has an unsupported element type");
  RETURN_IF_ERROR(CheckRange(describe_, name, ArrayInfo{*t.type, t.length}, type, first, count));
  if (count == 0) return OkStatus();
  h5::Handle fspace = h5::DataspaceHandle(H5Dget_space(ds.get()));
  if (!fspace.valid()) return h5::Error(what + ": get dataspace");
  if (H5Sget_simple_extent_ndims(fspace.get()) == 1) {
    hsize_t start = first, cnt = count;
    if (H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, &start, nullptr, &cnt, nullptr) < 0) {
      return h5::Error(what + ": select range");
    }
  }
  hsize_t cnt = count;
  h5::Handle mspace = h5::DataspaceHandle(H5Screate_simple(1, &cnt, nullptr));
  if (H5Dread(ds.get(), NativeType(type), mspace.get(), fspace.get(), H5P_DEFAULT, out) < 0) {
    RETURN_IF_ERROR(CheckUnchanged());
    return h5::Error(what + ": read [" + std::to_string(first) + ", " +
                     std::to_string(first + count) + ")");
  }
  return CheckUnchanged();
}

Result<std::vector<std::string>> H5ArrayStore::ReadStrings(const std::string& name) const {
  h5::PrepareThread();
  std::string path = DatasetPath(name);
  h5::Handle ds = h5::DatasetHandle(H5Dopen2(file_->handle.get(), path.c_str(), H5P_DEFAULT));
  if (!ds.valid()) {
    h5::TakeErrorStack();
    return NotFoundError(describe_ + ": array '" + name + "' is missing");
  }
  const std::string what = describe_ + ": dataset '" + name + "'";
  {
    h5::Handle type = h5::TypeHandle(H5Dget_type(ds.get()));
    h5::Handle space = h5::DataspaceHandle(H5Dget_space(ds.get()));
    const hssize_t n = space.valid() ? H5Sget_simple_extent_npoints(space.get()) : -1;
    if (!type.valid() || n < 0) return h5::Error(what + ": type and size");
    std::shared_ptr<const ByteSource> raw = source_;  // the file's bytes, read past libhdf5
    if (raw == nullptr) {
      ASSIGN_OR_RETURN(auto local, LocalByteSource::OpenPath(path_));
      raw = std::move(local);
    }
    RETURN_IF_ERROR(CheckVlenReferences(file_->handle.get(), ds.get(), type.get(),
                                        static_cast<uint64_t>(n), *raw, what));
  }
  auto values = h5::ReadStringValues(ds.get(), false, what);
  RETURN_IF_ERROR(CheckUnchanged());
  return values;
}

Result<std::vector<std::string>> H5ArrayStore::DatasetNames() const {
  h5::PrepareThread();
  std::vector<std::string> names;
  herr_t rc = H5Literate_by_name(
      file_->handle.get(), group_.c_str(), H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t group, const char* name, const H5L_info_t*, void* data) -> herr_t {
        H5O_info_t info;
        if (H5Oget_info_by_name2(group, name, &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
          H5Eclear2(H5E_DEFAULT);
          return 0;
        }
        if (info.type == H5O_TYPE_DATASET)
          static_cast<std::vector<std::string>*>(data)->push_back(name);
        return 0;
      },
      &names, H5P_DEFAULT);
  if (rc < 0) return h5::Error(describe_ + ": list datasets");
  return names;
}

size_t H5NumberSize(H5Number t) {
  switch (t) {
    case H5Number::kInt8:
    case H5Number::kUInt8:
    case H5Number::kBool:
      return 1;
    case H5Number::kInt16:
    case H5Number::kUInt16:
      return 2;
    case H5Number::kInt32:
    case H5Number::kUInt32:
    case H5Number::kFloat32:
      return 4;
    case H5Number::kInt64:
    case H5Number::kUInt64:
    case H5Number::kFloat64:
      return 8;
  }
  return 0;
}

std::string_view H5NumberName(H5Number t) {
  switch (t) {
    case H5Number::kInt8:
      return "int8";
    case H5Number::kInt16:
      return "int16";
    case H5Number::kInt32:
      return "int32";
    case H5Number::kInt64:
      return "int64";
    case H5Number::kUInt8:
      return "uint8";
    case H5Number::kUInt16:
      return "uint16";
    case H5Number::kUInt32:
      return "uint32";
    case H5Number::kUInt64:
      return "uint64";
    case H5Number::kFloat32:
      return "float32";
    case H5Number::kFloat64:
      return "float64";
    case H5Number::kBool:
      return "bool";
  }
  return "?";
}

namespace {

hid_t NumberNativeType(H5Number t) {
  switch (t) {
    case H5Number::kInt8:
      return H5T_NATIVE_INT8;
    case H5Number::kInt16:
      return H5T_NATIVE_INT16;
    case H5Number::kInt32:
      return H5T_NATIVE_INT32;
    case H5Number::kInt64:
      return H5T_NATIVE_INT64;
    case H5Number::kUInt8:
      return H5T_NATIVE_UINT8;
    case H5Number::kUInt16:
      return H5T_NATIVE_UINT16;
    case H5Number::kUInt32:
      return H5T_NATIVE_UINT32;
    case H5Number::kUInt64:
      return H5T_NATIVE_UINT64;
    case H5Number::kFloat32:
      return H5T_NATIVE_FLOAT;
    case H5Number::kFloat64:
      return H5T_NATIVE_DOUBLE;
    case H5Number::kBool:
      break;
  }
  return H5I_INVALID_HID;
}

// h5py's bool: an enum of a 1-byte integer with FALSE = 0 and TRUE = 1.
bool IsBoolEnum(hid_t type) {
  if (H5Tget_class(type) != H5T_ENUM || H5Tget_size(type) != 1 || H5Tget_nmembers(type) != 2)
    return false;
  for (unsigned i = 0; i < 2; ++i) {
    char* name = H5Tget_member_name(type, i);
    if (name == nullptr) return false;
    const bool ok = std::strcmp(name, i == 0 ? "FALSE" : "TRUE") == 0;
    H5free_memory(name);
    int8_t v = -1;
    if (!ok || H5Tget_member_value(type, i, &v) < 0 || v != static_cast<int8_t>(i)) return false;
  }
  return true;
}

}  // namespace

Result<std::optional<H5DatasetDesc>> H5ArrayStore::DescribeDataset(const std::string& name) const {
  h5::PrepareThread();
  const std::string path = DatasetPath(name);
  const std::string what = describe_ + ": dataset '" + name + "'";
  hid_t fid = file_->handle.get();
  htri_t exists = H5Lexists(fid, path.c_str(), H5P_DEFAULT);
  if (exists < 0) return h5::Error(what);
  if (exists == 0) return std::optional<H5DatasetDesc>();
  H5O_info_t info;
  if (H5Oget_info_by_name2(fid, path.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0)
    return h5::Error(what + ": object info");
  if (info.type != H5O_TYPE_DATASET) return std::optional<H5DatasetDesc>();
  h5::Handle ds = h5::DatasetHandle(H5Dopen2(fid, path.c_str(), H5P_DEFAULT));
  if (!ds.valid()) return h5::Error(what + ": open");
  h5::Handle type = h5::TypeHandle(H5Dget_type(ds.get()));
  h5::Handle space = h5::DataspaceHandle(H5Dget_space(ds.get()));
  if (!type.valid() || !space.valid()) return h5::Error(what + ": type and extent");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0 || rank > H5S_MAX_RANK) return h5::Error(what + ": rank");
  H5DatasetDesc d;
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
    return h5::Error(what + ": extent");
  d.dims.assign(dims.begin(), dims.end());
  const H5T_class_t cls = H5Tget_class(type.get());
  const size_t size = H5Tget_size(type.get());
  if (cls == H5T_STRING) {
    d.is_string = true;
    d.type = "string";
  } else if (cls == H5T_INTEGER) {
    const bool is_signed = H5Tget_sign(type.get()) != H5T_SGN_NONE;
    d.type = std::string(is_signed ? "int" : "uint") + std::to_string(size * 8);
    if (size == 1) d.number = is_signed ? H5Number::kInt8 : H5Number::kUInt8;
    if (size == 2) d.number = is_signed ? H5Number::kInt16 : H5Number::kUInt16;
    if (size == 4) d.number = is_signed ? H5Number::kInt32 : H5Number::kUInt32;
    if (size == 8) d.number = is_signed ? H5Number::kInt64 : H5Number::kUInt64;
  } else if (cls == H5T_FLOAT) {
    d.type = "float" + std::to_string(size * 8);
    if (size == 4) d.number = H5Number::kFloat32;
    if (size == 8) d.number = H5Number::kFloat64;
  } else if (IsBoolEnum(type.get())) {
    d.type = "bool";
    d.number = H5Number::kBool;
  } else {
    h5::TakeErrorStack();
    d.type = cls == H5T_ENUM        ? "enum"
             : cls == H5T_COMPOUND  ? "compound"
             : cls == H5T_REFERENCE ? "reference"
             : cls == H5T_OPAQUE    ? "opaque"
             : cls == H5T_ARRAY     ? "array"
             : cls == H5T_VLEN      ? "variable-length sequence"
                                    : "class " + std::to_string(static_cast<int>(cls));
  }
  h5::Handle dcpl = h5::PlistHandle(H5Dget_create_plist(ds.get()));
  if (!dcpl.valid()) return h5::Error(what + ": creation properties");
  const int nfilters = H5Pget_nfilters(dcpl.get());
  for (int i = 0; i < nfilters; ++i) {
    unsigned flags = 0, config = 0;
    size_t nvalues = 0;
    char fname[64] = {};
    const H5Z_filter_t id = H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &nvalues,
                                           nullptr, sizeof fname, fname, &config);
    if (id < 0) return h5::Error(what + ": filter " + std::to_string(i));
    if (H5Zfilter_avail(id) > 0) continue;
    h5::TakeErrorStack();
    std::string n(fname, strnlen(fname, sizeof fname));
    d.missing_filter = (n.empty() ? "filter" : n) + " (HDF5 filter " + std::to_string(id) + ")";
    break;
  }
  return std::optional<H5DatasetDesc>(std::move(d));
}

struct H5ArrayStore::Direct {
  std::string what;
  H5Number stored;
  size_t elem = 0;
  uint64_t length = 0;
  uint64_t userblock = 0;
  bool contiguous = false;
  uint64_t addr = 0;         // contiguous: the data's address
  uint64_t chunk_elems = 0;  // chunked: elements per chunk
  std::vector<H5Z_filter_t> filters;
  struct Chunk {
    uint64_t first, addr, size;
    unsigned mask;
  };
  std::vector<Chunk> chunks;  // by first element; a chunk never written is absent (fill: zeros)
};

Result<std::shared_ptr<const ByteSource>> H5ArrayStore::RawSource() const {
  std::lock_guard<std::mutex> lock(direct_mu_);
  if (raw_ == nullptr) {
    if (source_ != nullptr) {
      raw_ = source_;
    } else {
      ASSIGN_OR_RETURN(auto local, LocalByteSource::OpenPath(path_));
      raw_ = std::move(local);
    }
  }
  return raw_;
}

Result<std::shared_ptr<const H5ArrayStore::Direct>> H5ArrayStore::DirectOf(
    const std::string& name) const {
  {
    std::lock_guard<std::mutex> lock(direct_mu_);
    auto it = direct_.find(name);
    if (it != direct_.end()) return it->second;
  }
  h5::PrepareThread();
  auto d = std::make_shared<Direct>();
  d->what = describe_ + ": dataset '" + name + "'";
  std::shared_ptr<const Direct> none;
  auto remember = [&](std::shared_ptr<const Direct> v) {
    std::lock_guard<std::mutex> lock(direct_mu_);
    direct_[name] = v;
    return v;
  };
  const std::string path = DatasetPath(name);
  h5::Handle ds = h5::DatasetHandle(H5Dopen2(file_->handle.get(), path.c_str(), H5P_DEFAULT));
  if (!ds.valid()) return h5::Error(d->what + ": open");
  ASSIGN_OR_RETURN(std::optional<H5DatasetDesc> desc, DescribeDataset(name));
  h5::Handle type = h5::TypeHandle(H5Dget_type(ds.get()));
  h5::Handle dcpl = h5::PlistHandle(H5Dget_create_plist(ds.get()));
  h5::Handle fcpl = h5::PlistHandle(H5Fget_create_plist(file_->handle.get()));
  if (!type.valid() || !dcpl.valid() || !fcpl.valid()) return h5::Error(d->what + ": properties");
  if (!desc || !desc->number || desc->dims.size() != 1 || !desc->missing_filter.empty())
    return remember(none);
  if (H5Tget_size(type.get()) > 1 && H5Tget_order(type.get()) != H5T_ORDER_LE)
    return remember(none);
  hsize_t userblock = 0;
  if (H5Pget_userblock(fcpl.get(), &userblock) < 0) return h5::Error(d->what + ": user block");
  d->stored = *desc->number;
  d->elem = H5NumberSize(d->stored);
  d->length = desc->dims[0];
  d->userblock = userblock;
  const uint64_t file_size = (*RawSource())->Size();
  const H5D_layout_t layout = H5Pget_layout(dcpl.get());
  if (layout == H5D_CONTIGUOUS) {
    const haddr_t offset = H5Dget_offset(ds.get());
    if (offset == HADDR_UNDEF) {
      h5::TakeErrorStack();
      return remember(none);
    }
    if (offset > file_size || d->length * d->elem > file_size - offset)
      return CorruptError(d->what + ": its data lies outside the file");
    d->contiguous = true;
    d->addr = offset;
    return remember(d);
  }
  if (layout != H5D_CHUNKED) return remember(none);
  hsize_t chunk = 0;
  if (H5Pget_chunk(dcpl.get(), 1, &chunk) != 1 || chunk == 0 || chunk > (hsize_t{1} << 28))
    return remember(none);
  d->chunk_elems = chunk;
  const int nfilters = H5Pget_nfilters(dcpl.get());
  for (int i = 0; i < nfilters; ++i) {
    unsigned flags = 0, config = 0;
    size_t nvalues = 0;
    const H5Z_filter_t id = H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &nvalues,
                                           nullptr, 0, nullptr, &config);
    if (id != H5Z_FILTER_DEFLATE && id != H5Z_FILTER_SHUFFLE && id != h5::kLzfFilter)
      return remember(none);
    d->filters.push_back(id);
  }
  h5::Handle space = h5::DataspaceHandle(H5Dget_space(ds.get()));
  hsize_t n = 0;
  if (!space.valid() || H5Dget_num_chunks(ds.get(), space.get(), &n) < 0)
    return h5::Error(d->what + ": chunk count");
  for (hsize_t c = 0; c < n; ++c) {
    hsize_t offset = 0;
    unsigned mask = 0;
    haddr_t addr = 0;
    hsize_t size = 0;
    if (H5Dget_chunk_info(ds.get(), space.get(), c, &offset, &mask, &addr, &size) < 0)
      return h5::Error(d->what + ": chunk " + std::to_string(c));
    if (offset % chunk != 0 || offset >= d->length || addr > file_size || size > file_size - addr ||
        size > (uint64_t{1} << 30)) {
      return CorruptError(d->what + ": chunk at element " + std::to_string(offset) +
                          " lies outside the dataset or the file");
    }
    d->chunks.push_back({offset, addr, size, mask});
  }
  std::sort(d->chunks.begin(), d->chunks.end(),
            [](const Direct::Chunk& a, const Direct::Chunk& b) { return a.first < b.first; });
  return remember(d);
}

namespace {

template <typename From, typename To>
void CastAll(const char* src, uint64_t n, void* out) {
  To* o = static_cast<To*>(out);
  for (uint64_t i = 0; i < n; ++i) {
    From v;
    std::memcpy(&v, src + i * sizeof(From), sizeof(From));
    o[i] = static_cast<To>(v);
  }
}

template <typename From>
void CastTo(const char* src, H5Number to, uint64_t n, void* out) {
  switch (to) {
    case H5Number::kInt8:
      return CastAll<From, int8_t>(src, n, out);
    case H5Number::kInt16:
      return CastAll<From, int16_t>(src, n, out);
    case H5Number::kInt32:
      return CastAll<From, int32_t>(src, n, out);
    case H5Number::kInt64:
      return CastAll<From, int64_t>(src, n, out);
    case H5Number::kUInt8:
    case H5Number::kBool:
      return CastAll<From, uint8_t>(src, n, out);
    case H5Number::kUInt16:
      return CastAll<From, uint16_t>(src, n, out);
    case H5Number::kUInt32:
      return CastAll<From, uint32_t>(src, n, out);
    case H5Number::kUInt64:
      return CastAll<From, uint64_t>(src, n, out);
    case H5Number::kFloat32:
      return CastAll<From, float>(src, n, out);
    case H5Number::kFloat64:
      return CastAll<From, double>(src, n, out);
  }
}

// n stored little-endian numbers of type `from` as type `to` (the same: copied).
void Convert(const char* src, H5Number from, H5Number to, uint64_t n, void* out) {
  if (from == to) return (void)std::memcpy(out, src, n * H5NumberSize(from));
  switch (from) {
    case H5Number::kInt8:
      return CastTo<int8_t>(src, to, n, out);
    case H5Number::kInt16:
      return CastTo<int16_t>(src, to, n, out);
    case H5Number::kInt32:
      return CastTo<int32_t>(src, to, n, out);
    case H5Number::kInt64:
      return CastTo<int64_t>(src, to, n, out);
    case H5Number::kUInt8:
    case H5Number::kBool:
      return CastTo<uint8_t>(src, to, n, out);
    case H5Number::kUInt16:
      return CastTo<uint16_t>(src, to, n, out);
    case H5Number::kUInt32:
      return CastTo<uint32_t>(src, to, n, out);
    case H5Number::kUInt64:
      return CastTo<uint64_t>(src, to, n, out);
    case H5Number::kFloat32:
      return CastTo<float>(src, to, n, out);
    case H5Number::kFloat64:
      return CastTo<double>(src, to, n, out);
  }
}

}  // namespace

Status H5ArrayStore::ReadDirect(const Direct& d, H5Number as, uint64_t first, uint64_t count,
                                void* out) const {
  ASSIGN_OR_RETURN(auto raw, RawSource());
  const size_t to_size = H5NumberSize(as);
  char* dst = static_cast<char*>(out);
  if (d.contiguous) {
    std::string bytes(count * d.elem, '\0');
    RETURN_IF_ERROR(
        raw->ReadExact(d.userblock + d.addr + first * d.elem, bytes.data(), bytes.size())
            .WithContext(d.what));
    Convert(bytes.data(), d.stored, as, count, dst);
    return CheckUnchanged();
  }
  const uint64_t chunk_bytes = d.chunk_elems * d.elem;
  std::string stored, plain;
  for (uint64_t at = first; at < first + count;) {
    const uint64_t c0 = at / d.chunk_elems * d.chunk_elems;
    const uint64_t take = std::min(first + count, c0 + d.chunk_elems) - at;
    auto it = std::lower_bound(d.chunks.begin(), d.chunks.end(), c0,
                               [](const Direct::Chunk& c, uint64_t v) { return c.first < v; });
    if (it == d.chunks.end() || it->first != c0) {  // never written: the fill value (zeros)
      std::memset(dst + (at - first) * to_size, 0, take * to_size);
      at += take;
      continue;
    }
    const std::string where = d.what + ": chunk at element " + std::to_string(c0);
    stored.resize(it->size);
    RETURN_IF_ERROR(
        raw->ReadExact(d.userblock + it->addr, stored.data(), it->size).WithContext(where));
    for (size_t i = d.filters.size(); i-- > 0;) {
      if (it->mask & (1u << i)) continue;
      if (d.filters[i] == H5Z_FILTER_SHUFFLE) {
        stored = Unshuffle(stored, d.elem);
        continue;
      }
      plain.resize(chunk_bytes);
      if (d.filters[i] == h5::kLzfFilter) {
        if (h5::LzfDecode(reinterpret_cast<const unsigned char*>(stored.data()), stored.size(),
                          reinterpret_cast<unsigned char*>(plain.data()),
                          chunk_bytes) != static_cast<long>(chunk_bytes)) {
          return CorruptError(where + ": LZF block does not decode to " +
                              std::to_string(chunk_bytes) + " bytes");
        }
      } else {
        uLongf got = chunk_bytes;
        if (uncompress(reinterpret_cast<Bytef*>(plain.data()), &got,
                       reinterpret_cast<const Bytef*>(stored.data()), stored.size()) != Z_OK ||
            got != chunk_bytes) {
          return CorruptError(where + ": deflate stream does not inflate to " +
                              std::to_string(chunk_bytes) + " bytes");
        }
      }
      stored.swap(plain);
    }
    if (stored.size() != chunk_bytes)
      return CorruptError(where + " holds " + std::to_string(stored.size()) + " bytes, not " +
                          std::to_string(chunk_bytes));
    Convert(stored.data() + (at - c0) * d.elem, d.stored, as, take, dst + (at - first) * to_size);
    at += take;
  }
  return CheckUnchanged();
}

Status H5ArrayStore::ReadNumbers(const std::string& name, H5Number as, uint64_t first,
                                 uint64_t count, void* out) const {
  if (as != H5Number::kBool) {
    ASSIGN_OR_RETURN(auto direct, DirectOf(name));
    if (direct != nullptr && direct->stored != H5Number::kBool) {
      if (first > direct->length || count > direct->length - first) {
        return InternalError(direct->what + ": elements [" + std::to_string(first) + ", " +
                             std::to_string(first + count) + ") beyond its " +
                             std::to_string(direct->length));
      }
      return ReadDirect(*direct, as, first, count, out);
    }
  }
  h5::PrepareThread();
  const std::string path = DatasetPath(name);
  const std::string what = describe_ + ": dataset '" + name + "'";
  h5::Handle ds = h5::DatasetHandle(H5Dopen2(file_->handle.get(), path.c_str(), H5P_DEFAULT));
  if (!ds.valid()) {
    h5::TakeErrorStack();
    return NotFoundError(describe_ + ": array '" + name + "' is missing");
  }
  h5::Handle ftype = h5::TypeHandle(H5Dget_type(ds.get()));
  h5::Handle fspace = h5::DataspaceHandle(H5Dget_space(ds.get()));
  if (!ftype.valid() || !fspace.valid()) return h5::Error(what + ": type and extent");
  const int rank = H5Sget_simple_extent_ndims(fspace.get());
  if (rank < 1 || rank > H5S_MAX_RANK) return CorruptError(what + ": not an array");
  hsize_t dims[H5S_MAX_RANK];
  if (H5Sget_simple_extent_dims(fspace.get(), dims, nullptr) < 0)
    return h5::Error(what + ": extent");
  uint64_t slice = 1, total = dims[0];
  for (int i = 1; i < rank; ++i) slice *= dims[i];
  total *= slice;
  if (first > total || count > total - first) {
    return InternalError(what + ": elements [" + std::to_string(first) + ", " +
                         std::to_string(first + count) + ") beyond its " + std::to_string(total));
  }
  if (slice == 0 || first % slice != 0 || count % slice != 0)
    return InternalError(what + ": a read of part of a row");
  if (count == 0) return OkStatus();
  hsize_t start[H5S_MAX_RANK] = {}, cnt[H5S_MAX_RANK];
  start[0] = first / slice;
  cnt[0] = count / slice;
  for (int i = 1; i < rank; ++i) cnt[i] = dims[i];
  if (H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start, nullptr, cnt, nullptr) < 0)
    return h5::Error(what + ": select range");
  h5::Handle mspace = h5::DataspaceHandle(H5Screate_simple(rank, cnt, nullptr));
  h5::Handle native;
  hid_t mtype = NumberNativeType(as);
  if (as == H5Number::kBool) {
    if (!IsBoolEnum(ftype.get())) return InternalError(what + ": not a bool dataset");
    native = h5::TypeHandle(H5Tget_native_type(ftype.get(), H5T_DIR_ASCEND));
    if (!native.valid()) return h5::Error(what + ": native type");
    mtype = native.get();
  }
  if (H5Dread(ds.get(), mtype, mspace.get(), fspace.get(), H5P_DEFAULT, out) < 0) {
    RETURN_IF_ERROR(CheckUnchanged());
    return h5::Error(what + ": read [" + std::to_string(first) + ", " +
                     std::to_string(first + count) + ")");
  }
  return CheckUnchanged();
}

Status H5ArrayStore::CheckUnchanged() const {
  return guard_.active ? guard_.Check(guard_file_) : OkStatus();
}

namespace {
const char kSignature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
constexpr uint64_t kLastUserblock = uint64_t{1} << 20;  // signatures searched up to here
}  // namespace

bool IsHdf5File(const std::string& path) {
  auto f = File::OpenReadOnly(path);
  if (!f.ok()) return false;
  for (uint64_t off = 0; off <= kLastUserblock; off = off == 0 ? 512 : off * 2) {
    char buf[8];
    auto n = f->ReadAt(off, buf, 8);
    if (!n.ok() || *n != 8) return false;
    if (std::memcmp(buf, kSignature, 8) == 0) return true;
  }
  return false;
}

Result<bool> IsHdf5Source(const ByteSource& source) {
  // Why the first bytes first: almost every file (h5py, BPCells, Cell Ranger) has no user block,
  // and through the block cache the probes behind it cost no further request below 1 MiB.
  for (uint64_t off = 0; off <= kLastUserblock && off + 8 <= source.Size();
       off = off == 0 ? 512 : off * 2) {
    char buf[8];
    RETURN_IF_ERROR(source.ReadExact(off, buf, 8).WithContext("HDF5 signature"));
    if (std::memcmp(buf, kSignature, 8) == 0) return true;
  }
  return false;
}

namespace {

Result<std::vector<H5GroupAttribute>> GroupsWithStringAttribute(const h5::Handle& f,
                                                                const std::string& file,
                                                                const std::string& attribute) {
  struct Ctx {
    const std::string* attribute;
    std::vector<H5GroupAttribute> out;
  } ctx{&attribute, {}};
  herr_t rc = H5Ovisit2(
      f.get(), H5_INDEX_NAME, H5_ITER_INC,
      [](hid_t obj, const char* name, const H5O_info_t* info, void* data) -> herr_t {
        auto* c = static_cast<Ctx*>(data);
        if (info->type != H5O_TYPE_GROUP) return 0;
        if (H5Aexists_by_name(obj, name, c->attribute->c_str(), H5P_DEFAULT) <= 0) {
          H5Eclear2(H5E_DEFAULT);
          return 0;
        }
        h5::Handle attr = h5::AttributeHandle(
            H5Aopen_by_name(obj, name, c->attribute->c_str(), H5P_DEFAULT, H5P_DEFAULT));
        if (!attr.valid()) {
          H5Eclear2(H5E_DEFAULT);
          return 0;
        }
        h5::Handle type = h5::TypeHandle(H5Aget_type(attr.get()));
        if (!type.valid() || H5Tget_class(type.get()) != H5T_STRING) {
          H5Eclear2(H5E_DEFAULT);
          return 0;
        }
        auto v = h5::ReadStringValues(attr.get(), true, name);
        if (!v.ok() || v->size() != 1) return 0;
      // GCC 12 at -O3 warns that "/" + std::string&& (an insert at 0) may memcpy overlapping ranges
      // of 2^63 bytes: a false positive of its -Wrestrict through std::string (GCC bug 105651),
      // silenced here only.
#pragma GCC diagnostic push
#ifndef __clang__  // a GCC warning; clang (the fuzz build) has none of that name
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
        std::string group = std::strcmp(name, ".") == 0 ? "/" : "/" + std::string(name);
#pragma GCC diagnostic pop
        c->out.push_back({group, (*v)[0]});
        return 0;
      },
      &ctx, H5O_INFO_BASIC);
  if (rc < 0) return h5::Error(file + ": walk groups");
  return std::move(ctx.out);
}

}  // namespace

Result<std::vector<H5GroupAttribute>> ListGroupsWithStringAttribute(const std::string& file,
                                                                    const std::string& attribute) {
  ASSIGN_OR_RETURN(h5::Handle f, h5::OpenFile(file));
  return GroupsWithStringAttribute(f, file, attribute);
}

Result<std::vector<H5GroupAttribute>> ListGroupsWithStringAttribute(
    const std::shared_ptr<const ByteSource>& source, const std::string& attribute) {
  ASSIGN_OR_RETURN(h5::Handle f, h5::OpenFile(source));
  return GroupsWithStringAttribute(f, source->Describe(), attribute);
}

}  // namespace omicsfs::io
