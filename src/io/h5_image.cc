#include "io/h5_image.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <type_traits>

#include "io/h5_handle.h"

namespace omicsfs::io::h5 {
namespace {

// ---- the recording driver ----
// (In a namespace of its own: io/h5_vfd.cc's driver has callbacks of the same names, and unity
// builds compile both files as one.)
namespace recording {

//
// A write-only file in memory made of what libhdf5 writes: offset → bytes. Reads (libhdf5 reads
// back metadata it evicted) return those bytes and zeros elsewhere. Nothing is allocated for
// space libhdf5 reserves and never writes (the external datasets), however large.
class Recorder {
 public:
  void Write(uint64_t addr, const char* data, size_t n) {
    if (n == 0) return;
    const uint64_t hi = addr + n;
    // Overlapping segments merge (a block written again: the superblock at close); adjacent ones
    // stay apart, so a long run of small writes never copies what came before.
    auto first = segments_.upper_bound(addr);
    if (first != segments_.begin()) {
      auto prev = std::prev(first);
      if (prev->first + prev->second.size() > addr) first = prev;
    }
    auto last = first;
    uint64_t lo = addr, end = hi;
    for (; last != segments_.end() && last->first < hi; ++last) {
      lo = std::min(lo, last->first);
      end = std::max<uint64_t>(end, last->first + last->second.size());
    }
    std::string merged(end - lo, '\0');
    for (auto it = first; it != last; ++it)
      std::memcpy(merged.data() + (it->first - lo), it->second.data(), it->second.size());
    std::memcpy(merged.data() + (addr - lo), data, n);
    segments_.erase(first, last);
    segments_.emplace(lo, std::move(merged));
    eof_ = std::max(eof_, hi);
  }

  void Read(uint64_t addr, char* out, size_t n) const {
    std::memset(out, 0, n);
    const uint64_t hi = addr + n;
    auto it = segments_.upper_bound(addr);
    if (it != segments_.begin()) --it;
    for (; it != segments_.end() && it->first < hi; ++it) {
      const uint64_t s = it->first, e = s + it->second.size();
      const uint64_t a = std::max(s, addr), b = std::min(e, hi);
      if (a < b) std::memcpy(out + (a - addr), it->second.data() + (a - s), b - a);
    }
  }

  std::map<uint64_t, std::string>& segments() { return segments_; }
  uint64_t eoa = 0;
  uint64_t eof() const { return eof_; }
  void SetEof(uint64_t eof) { eof_ = eof; }

 private:
  std::map<uint64_t, std::string> segments_;
  uint64_t eof_ = 0;
};

struct FaplInfo {
  Recorder* recorder;
};

struct RecFile {
  H5FD_t pub;
  Recorder* recorder;
};
static_assert(std::is_standard_layout_v<RecFile>, "RecFile must start with its H5FD_t");

RecFile* Of(H5FD_t* f) { return reinterpret_cast<RecFile*>(f); }
const RecFile* Of(const H5FD_t* f) { return reinterpret_cast<const RecFile*>(f); }

constexpr haddr_t kMaxAddr = (haddr_t{1} << 63) - 1;

void* FaplCopy(const void* info) {
  return new (std::nothrow) FaplInfo(*static_cast<const FaplInfo*>(info));
}
herr_t FaplFree(void* info) {
  delete static_cast<FaplInfo*>(info);
  return 0;
}
void* FaplGet(H5FD_t* file) { return new (std::nothrow) FaplInfo{Of(file)->recorder}; }

H5FD_t* Open(const char*, unsigned, hid_t fapl, haddr_t) {
  const auto* info = static_cast<const FaplInfo*>(H5Pget_driver_info(fapl));
  if (info == nullptr || info->recorder == nullptr) return nullptr;
  auto* f = new (std::nothrow) RecFile{};
  if (f == nullptr) return nullptr;
  f->recorder = info->recorder;
  return &f->pub;
}
herr_t Close(H5FD_t* file) {
  delete Of(file);
  return 0;
}
int Compare(const H5FD_t* a, const H5FD_t* b) {
  const Recorder* x = Of(a)->recorder;
  const Recorder* y = Of(b)->recorder;
  if (x == y) return 0;
  return std::less<const Recorder*>()(x, y) ? -1 : 1;
}
herr_t Query(const H5FD_t*, unsigned long* flags) {
  // As libhdf5's sec2 driver: metadata and small raw data aggregated into blocks, metadata
  // writes accumulated, raw data sieved. The same flags make the same layout on every run.
  if (flags != nullptr) {
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
             H5FD_FEAT_AGGREGATE_SMALLDATA;
  }
  return 0;
}
haddr_t GetEoa(const H5FD_t* file, H5FD_mem_t) { return Of(file)->recorder->eoa; }
herr_t SetEoa(H5FD_t* file, H5FD_mem_t, haddr_t addr) {
  Of(file)->recorder->eoa = addr;
  return 0;
}
haddr_t GetEof(const H5FD_t* file, H5FD_mem_t) { return Of(file)->recorder->eof(); }
herr_t GetHandle(H5FD_t* file, hid_t, void** handle) {
  if (handle == nullptr) return -1;
  *handle = Of(file);
  return 0;
}
herr_t Read(H5FD_t* file, H5FD_mem_t, hid_t, haddr_t addr, size_t size, void* buffer) {
  if (addr == HADDR_UNDEF || addr > kMaxAddr || size > kMaxAddr - addr) return -1;
  Of(file)->recorder->Read(addr, static_cast<char*>(buffer), size);
  return 0;
}
herr_t Write(H5FD_t* file, H5FD_mem_t, hid_t, haddr_t addr, size_t size, const void* buffer) {
  if (addr == HADDR_UNDEF || addr > kMaxAddr || size > kMaxAddr - addr) return -1;
  Of(file)->recorder->Write(addr, static_cast<const char*>(buffer), size);
  return 0;
}
herr_t Truncate(H5FD_t* file, hid_t, hbool_t) {
  Recorder& r = *Of(file)->recorder;
  r.SetEof(r.eoa);  // the file ends where libhdf5's allocations end
  return 0;
}
herr_t Nothing(H5FD_t*, hid_t, hbool_t) { return 0; }

H5FD_class_t MakeClass() {
  H5FD_class_t c;
  std::memset(&c, 0, sizeof c);
  c.name = "omicsfs_image_recorder";
  c.maxaddr = kMaxAddr;
  c.fc_degree = H5F_CLOSE_STRONG;
  c.fapl_size = sizeof(FaplInfo);
  c.fapl_get = FaplGet;
  c.fapl_copy = FaplCopy;
  c.fapl_free = FaplFree;
  c.open = Open;
  c.close = Close;
  c.cmp = Compare;
  c.query = Query;
  c.get_eoa = GetEoa;
  c.set_eoa = SetEoa;
  c.get_eof = GetEof;
  c.get_handle = GetHandle;
  c.read = Read;
  c.write = Write;
  c.flush = Nothing;
  c.truncate = Truncate;
  const H5FD_mem_t map[H5FD_MEM_NTYPES] = H5FD_FLMAP_DICHOTOMY;
  std::memcpy(c.fl_map, map, sizeof map);
  return c;
}

hid_t RecorderDriver() {
  static std::mutex mu;
  static const H5FD_class_t cls = MakeClass();
  static hid_t id = H5I_INVALID_HID;
  std::lock_guard<std::mutex> lock(mu);
  if (id < 0 || H5Iget_type(id) != H5I_VFL) id = H5FDregister(&cls);
  return id;
}

}  // namespace recording

// ---- plan → libhdf5 calls ----

hid_t NativeOf(H5Type t) {
  switch (t) {
    case H5Type::kInt8:
      return H5T_STD_I8LE;
    case H5Type::kUInt8:
      return H5T_STD_U8LE;
    case H5Type::kInt16:
      return H5T_STD_I16LE;
    case H5Type::kUInt16:
      return H5T_STD_U16LE;
    case H5Type::kInt32:
      return H5T_STD_I32LE;
    case H5Type::kUInt32:
      return H5T_STD_U32LE;
    case H5Type::kInt64:
      return H5T_STD_I64LE;
    case H5Type::kUInt64:
      return H5T_STD_U64LE;
    case H5Type::kFloat32:
      return H5T_IEEE_F32LE;
    case H5Type::kFloat64:
      return H5T_IEEE_F64LE;
  }
  return H5I_INVALID_HID;
}

// The file type of a value (a copy the caller closes).
Result<Handle> TypeOf(const H5Value& v, const std::string& what) {
  if (!v.is_strings) {
    Handle t = TypeHandle(H5Tcopy(NativeOf(v.type)));
    if (!t.valid()) return Error(what + ": type");
    return t;
  }
  Handle t = TypeHandle(H5Tcopy(H5T_C_S1));
  if (!t.valid()) return Error(what + ": string type");
  const bool vlen = v.strings_as.fixed == 0;
  if (H5Tset_size(t.get(), vlen ? H5T_VARIABLE : size_t{v.strings_as.fixed}) < 0 ||
      H5Tset_strpad(t.get(), vlen ? H5T_STR_NULLTERM : H5T_STR_NULLPAD) < 0 ||
      H5Tset_cset(t.get(), v.strings_as.utf8 ? H5T_CSET_UTF8 : H5T_CSET_ASCII) < 0) {
    return Error(what + ": string type");
  }
  return t;
}

Result<Handle> SpaceOf(const H5Value& v, const std::string& what) {
  if (v.shape.empty()) {
    Handle s = DataspaceHandle(H5Screate(H5S_SCALAR));
    if (!s.valid()) return Error(what + ": dataspace");
    return s;
  }
  std::vector<hsize_t> dims(v.shape.begin(), v.shape.end());
  Handle s =
      DataspaceHandle(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), dims.data()));
  if (!s.valid()) return Error(what + ": dataspace");
  return s;
}

// The value's elements as libhdf5 takes them in memory for its file type: numbers as they are
// (little-endian, as in the file: no conversion), vlen strings as pointers, fixed ones padded.
// data() points into the Buffer itself (fixed, pointers) or the value (numbers): asked for once
// the Buffer is where it stays, since moving a short std::string moves its bytes (SSO) — a
// pointer taken before a move read garbage (a 10-byte array of empty fixed strings).
struct Buffer {
  const void* numbers = nullptr;
  std::string fixed;
  std::vector<const char*> pointers;
  enum class Kind { kNumbers, kFixed, kPointers } kind = Kind::kNumbers;
  const void* data() const {
    switch (kind) {
      case Kind::kFixed:
        return fixed.data();
      case Kind::kPointers:
        return pointers.data();
      case Kind::kNumbers:
        break;
    }
    return numbers;
  }
};
Result<Buffer> BufferOf(const H5Value& v, const std::string& what) {
  Buffer b;
  const uint64_t n = v.Elements();
  if (!v.is_strings) {
    if (v.bytes.size() != n * TypeSize(v.type))
      return InvalidArgumentError(what + ": " + std::to_string(v.bytes.size()) + " bytes for " +
                                  std::to_string(n) + " elements");
    b.numbers = v.bytes.data();
    return b;
  }
  if (v.strings.size() != n)
    return InvalidArgumentError(what + ": " + std::to_string(v.strings.size()) + " strings for " +
                                std::to_string(n) + " elements");
  if (v.strings_as.fixed == 0) {
    b.pointers.reserve(n);
    for (const auto& s : v.strings) {
      if (s.find('\0') != std::string::npos)
        return InvalidArgumentError(what + ": a variable-length string holds a NUL");
      b.pointers.push_back(s.c_str());
    }
    b.kind = Buffer::Kind::kPointers;
    return b;
  }
  const size_t w = v.strings_as.fixed;
  b.fixed.assign(n * w, '\0');
  for (uint64_t i = 0; i < n; ++i) {
    if (v.strings[i].size() > w)
      return InvalidArgumentError(what + ": string '" + v.strings[i] + "' is longer than " +
                                  std::to_string(w) + " bytes");
    if (v.strings[i].find('\0') != std::string::npos)
      return InvalidArgumentError(what + ": a fixed-length string holds a NUL");
    std::memcpy(b.fixed.data() + i * w, v.strings[i].data(), v.strings[i].size());
  }
  b.kind = Buffer::Kind::kFixed;
  return b;
}

Status WriteAttributes(hid_t obj, const std::vector<H5Attribute>& attributes,
                       const std::string& where) {
  for (const H5Attribute& a : attributes) {
    const std::string what = where + " attribute " + a.name;
    ASSIGN_OR_RETURN(Handle type, TypeOf(a.value, what));
    ASSIGN_OR_RETURN(Handle space, SpaceOf(a.value, what));
    ASSIGN_OR_RETURN(Buffer buf, BufferOf(a.value, what));
    Handle attr = AttributeHandle(
        H5Acreate2(obj, a.name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT));
    if (!attr.valid()) return Error(what + ": create");
    if (a.value.Elements() > 0 && H5Awrite(attr.get(), type.get(), buf.data()) < 0)
      return Error(what + ": write");
  }
  return OkStatus();
}

Result<Handle> CreationList(hid_t cls) {
  Handle p = PlistHandle(H5Pcreate(cls));
  if (!p.valid() || H5Pset_obj_track_times(p.get(), false) < 0)
    return Error("HDF5 creation properties");
  return p;
}

void PutU64(std::string* out, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (8 * i));
  out->append(b, 8);
}
void PutText(std::string* out, std::string_view s) {
  PutU64(out, s.size());
  out->append(s);
}
void PutValue(std::string* out, const H5Value& v) {
  out->push_back(v.is_strings ? 's' : 'n');
  out->push_back(static_cast<char>(v.type));
  PutU64(out, v.strings_as.fixed);
  out->push_back(v.strings_as.utf8 ? 1 : 0);
  PutU64(out, v.shape.size());
  for (uint64_t d : v.shape) PutU64(out, d);
  PutText(out, v.bytes);
  PutU64(out, v.strings.size());
  for (const auto& s : v.strings) PutText(out, s);
}
void PutAttributes(std::string* out, const std::vector<H5Attribute>& attributes) {
  PutU64(out, attributes.size());
  for (const auto& a : attributes) {
    PutText(out, a.name);
    PutValue(out, a.value);
  }
}

class Reader {
 public:
  explicit Reader(std::string_view d) : d_(d) {}
  bool U64(uint64_t* v) {
    if (d_.size() - at_ < 8) return false;
    *v = 0;
    for (int i = 0; i < 8; ++i) *v |= uint64_t{static_cast<uint8_t>(d_[at_ + i])} << (8 * i);
    at_ += 8;
    return true;
  }
  bool Bytes(uint64_t n, std::string* out) {
    if (d_.size() - at_ < n) return false;
    out->assign(d_.substr(at_, n));
    at_ += n;
    return true;
  }
  bool Skip(uint64_t n) {
    if (d_.size() - at_ < n) return false;
    at_ += n;
    return true;
  }
  size_t at() const { return at_; }
  bool done() const { return at_ == d_.size(); }

 private:
  std::string_view d_;
  size_t at_ = 0;
};

constexpr std::string_view kImageMagic = "omicsfs h5 image 1\n";

template <typename T>
H5Value FromHost(H5Type type, const std::vector<T>& v) {
  std::string bytes;
  bytes.reserve(v.size() * sizeof(T));
  for (T x : v) {
    std::make_unsigned_t<std::conditional_t<std::is_floating_point_v<T>, int64_t, T>> u;
    if constexpr (std::is_floating_point_v<T>) {
      static_assert(sizeof(T) == 8);
      std::memcpy(&u, &x, 8);
    } else {
      u = static_cast<decltype(u)>(x);
    }
    for (size_t i = 0; i < sizeof(T); ++i) bytes.push_back(static_cast<char>(u >> (8 * i)));
  }
  return H5Value::Numbers(type, {v.size()}, std::move(bytes));
}

}  // namespace

size_t TypeSize(H5Type type) {
  switch (type) {
    case H5Type::kInt8:
    case H5Type::kUInt8:
      return 1;
    case H5Type::kInt16:
    case H5Type::kUInt16:
      return 2;
    case H5Type::kInt32:
    case H5Type::kUInt32:
    case H5Type::kFloat32:
      return 4;
    case H5Type::kInt64:
    case H5Type::kUInt64:
    case H5Type::kFloat64:
      return 8;
  }
  return 0;
}

uint64_t H5Value::Elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

H5Value H5Value::String(std::string s, H5Strings as) {
  H5Value v;
  v.is_strings = true;
  v.strings_as = as;
  v.strings.push_back(std::move(s));
  return v;
}

H5Value H5Value::Strings(std::vector<std::string> s, H5Strings as) {
  H5Value v;
  v.is_strings = true;
  v.strings_as = as;
  v.shape = {s.size()};
  v.strings = std::move(s);
  return v;
}

H5Value H5Value::FixedStrings(std::vector<std::string> s) {
  H5Strings as;
  as.fixed = 1;
  as.utf8 = false;
  for (const auto& x : s) {
    // Longer than 4 GiB: refused when the image is built (longer than its width).
    as.fixed = std::max(as.fixed, static_cast<uint32_t>(std::min<uint64_t>(x.size(), UINT32_MAX)));
    if (!as.utf8) as.utf8 = std::any_of(x.begin(), x.end(), [](char c) { return (c & 0x80) != 0; });
  }
  return Strings(std::move(s), as);
}

H5Value H5Value::Int64s(const std::vector<int64_t>& v) { return FromHost(H5Type::kInt64, v); }
H5Value H5Value::Int32s(const std::vector<int32_t>& v) { return FromHost(H5Type::kInt32, v); }
H5Value H5Value::Float64s(const std::vector<double>& v) { return FromHost(H5Type::kFloat64, v); }

H5Value H5Value::Numbers(H5Type type, std::vector<uint64_t> shape, std::string bytes) {
  H5Value v;
  v.type = type;
  v.shape = std::move(shape);
  v.bytes = std::move(bytes);
  return v;
}

H5Plan::Group& H5Plan::AddGroup(std::string path, std::vector<H5Attribute> attributes) {
  groups.push_back({std::move(path), std::move(attributes)});
  return groups.back();
}

H5Plan::Dataset& H5Plan::AddDataset(std::string path, H5Value value,
                                    std::vector<H5Attribute> attributes) {
  datasets.push_back({std::move(path), std::move(value), false, std::move(attributes)});
  return datasets.back();
}

H5Plan::Dataset& H5Plan::AddExternal(std::string path, H5Type type, uint64_t length,
                                     std::vector<H5Attribute> attributes) {
  H5Value v;
  v.type = type;
  v.shape = {length};
  datasets.push_back({std::move(path), std::move(v), true, std::move(attributes)});
  return datasets.back();
}

std::string H5Plan::Canonical() const {
  std::string out = "h5 plan 1\n";
  PutU64(&out, alignment);
  PutU64(&out, groups.size());
  for (const auto& g : groups) {
    PutText(&out, g.path);
    PutAttributes(&out, g.attributes);
  }
  PutU64(&out, datasets.size());
  for (const auto& d : datasets) {
    PutText(&out, d.path);
    out.push_back(d.external ? 1 : 0);
    PutValue(&out, d.value);
    PutAttributes(&out, d.attributes);
  }
  return out;
}

std::string H5Image::Serialize() const {
  std::string out(kImageMagic);
  PutU64(&out, size);
  PutU64(&out, segments.size());
  for (const auto& s : segments) {
    PutU64(&out, s.offset);
    PutText(&out, s.bytes);
  }
  PutU64(&out, external.size());
  for (const auto& e : external) {
    PutU64(&out, e.offset);
    PutU64(&out, e.bytes);
  }
  return out;
}

Result<H5Image::Located> H5Image::Locate(std::string_view bytes) {
  const Status bad = CorruptError("HDF5 image: malformed");
  if (!bytes.starts_with(kImageMagic)) return bad;
  Reader r(bytes.substr(kImageMagic.size()));
  Located im;
  uint64_t n = 0;
  if (!r.U64(&im.size) || !r.U64(&n) || n > bytes.size()) return bad;
  uint64_t end = 0;
  for (uint64_t i = 0; i < n; ++i) {
    Located::At s;
    if (!r.U64(&s.offset) || !r.U64(&s.length)) return bad;
    s.at = kImageMagic.size() + r.at();
    if (!r.Skip(s.length)) return bad;
    if (s.offset < end || s.offset > im.size || s.length > im.size - s.offset) return bad;
    end = s.offset + s.length;
    im.segments.push_back(s);
  }
  if (!r.U64(&n) || n > bytes.size()) return bad;
  for (uint64_t i = 0; i < n; ++i) {
    H5Image::Extent e;
    if (!r.U64(&e.offset) || !r.U64(&e.bytes)) return bad;
    if (e.offset > im.size || e.bytes > im.size - e.offset) return bad;
    // Segments are sorted: the first one ending after the extent's start must begin at or
    // after its end.
    if (e.bytes > 0) {
      auto s = std::lower_bound(
          im.segments.begin(), im.segments.end(), e.offset,
          [](const Located::At& a, uint64_t at) { return a.offset + a.length <= at; });
      if (s != im.segments.end() && s->offset < e.offset + e.bytes) return bad;
    }
    im.external.push_back(e);
  }
  if (!r.done()) return bad;
  return im;
}

Result<H5Image> H5Image::Parse(std::string_view bytes) {
  ASSIGN_OR_RETURN(Located at, Locate(bytes));
  H5Image im;
  im.size = at.size;
  for (const auto& s : at.segments)
    im.segments.push_back({s.offset, std::string(bytes.substr(s.at, s.length))});
  im.external = std::move(at.external);
  return im;
}

Result<H5Image> BuildImage(const H5Plan& plan, const std::string& what) {
  PrepareThread();
  recording::Recorder recorder;
  const hid_t driver = recording::RecorderDriver();
  if (driver < 0) return Error(what + ": HDF5 image driver");
  Handle fapl = PlistHandle(H5Pcreate(H5P_FILE_ACCESS));
  const recording::FaplInfo info{&recorder};
  if (!fapl.valid() || H5Pset_driver(fapl.get(), driver, &info) < 0 ||
      H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_EARLIEST, H5F_LIBVER_V18) < 0 ||
      (plan.alignment > 1 && H5Pset_alignment(fapl.get(), plan.alignment, plan.alignment) < 0)) {
    return Error(what + ": HDF5 file access properties");
  }
  ASSIGN_OR_RETURN(Handle gcpl, CreationList(H5P_GROUP_CREATE));
  std::vector<haddr_t> offsets;
  {
    Handle file = FileHandle(H5Fcreate(what.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
    if (!file.valid()) return Error(what + ": create HDF5 image");
    for (const auto& g : plan.groups) {
      const std::string where = what + ": group " + g.path;
      Handle group = GroupHandle(g.path == "/" ? H5Gopen2(file.get(), "/", H5P_DEFAULT)
                                               : H5Gcreate2(file.get(), g.path.c_str(), H5P_DEFAULT,
                                                            gcpl.get(), H5P_DEFAULT));
      if (!group.valid()) return Error(where);
      RETURN_IF_ERROR(WriteAttributes(group.get(), g.attributes, where));
    }
    for (const auto& d : plan.datasets) {
      const std::string where = what + ": dataset " + d.path;
      if (d.external && d.value.is_strings)
        return InvalidArgumentError(where + ": an external dataset holds numbers");
      ASSIGN_OR_RETURN(Handle type, TypeOf(d.value, where));
      ASSIGN_OR_RETURN(Handle space, SpaceOf(d.value, where));
      ASSIGN_OR_RETURN(Handle dcpl, CreationList(H5P_DATASET_CREATE));
      if (d.external && (H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS) < 0 ||
                         H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY) < 0 ||
                         H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER) < 0)) {
        return Error(where + ": creation properties");
      }
      Handle set = DatasetHandle(H5Dcreate2(file.get(), d.path.c_str(), type.get(), space.get(),
                                            H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
      if (!set.valid()) return Error(where + ": create");
      if (d.external) {
        offsets.push_back(H5Dget_offset(set.get()));
      } else if (d.value.Elements() > 0) {
        ASSIGN_OR_RETURN(Buffer buf, BufferOf(d.value, where));
        if (H5Dwrite(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0)
          return Error(where + ": write");
      }
      RETURN_IF_ERROR(WriteAttributes(set.get(), d.attributes, where));
    }
    if (H5Fclose(file.get()) < 0) {
      (void)file.release();
      return Error(what + ": close HDF5 image");
    }
    (void)file.release();
  }
  H5Image im;
  im.size = std::max(recorder.eof(), recorder.eoa);
  size_t k = 0;
  for (const auto& d : plan.datasets) {
    if (!d.external) continue;
    H5Image::Extent e;
    e.bytes = d.value.Elements() * TypeSize(d.value.type);
    if (e.bytes > 0) {
      if (offsets[k] == HADDR_UNDEF)
        return InternalError(what + ": " + d.path + ": libhdf5 gave its storage no address");
      e.offset = offsets[k];
    }
    if (e.offset > im.size || e.bytes > im.size - e.offset)
      return InternalError(what + ": " + d.path + ": storage past the end of the file");
    im.external.push_back(e);
    ++k;
  }
  for (auto& [offset, bytes] : recorder.segments()) {
    for (size_t i = 0; i < im.external.size(); ++i) {
      const auto& e = im.external[i];
      if (e.bytes > 0 && offset < e.offset + e.bytes && e.offset < offset + bytes.size())
        return InternalError(what + ": libhdf5 wrote within external dataset " + std::to_string(i) +
                             " (" + std::to_string(bytes.size()) + " bytes at " +
                             std::to_string(offset) + ")");
    }
    if (offset + bytes.size() > im.size)
      return InternalError(what + ": libhdf5 wrote past the end of the file");
    im.segments.push_back({offset, std::move(bytes)});
  }
  return im;
}

}  // namespace omicsfs::io::h5
