#include "io/h5_vfd.h"

#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <type_traits>

#include "util/log.h"

namespace omicsfs::io::h5 {
namespace {

// What the file access property list carries: libhdf5 copies and frees it through the driver's
// fapl_copy and fapl_free, so every copy holds the source.
struct FaplInfo {
  std::shared_ptr<const ByteSource> source;
};

// One open file. libhdf5 fills `pub` after open; the driver's callbacks receive &pub.
struct VfdFile {
  H5FD_t pub;
  std::shared_ptr<const ByteSource>* source;  // owned (a pointer keeps VfdFile standard-layout)
  haddr_t eoa;
};
static_assert(std::is_standard_layout_v<VfdFile>, "VfdFile must start with its H5FD_t");

VfdFile* Of(H5FD_t* f) { return reinterpret_cast<VfdFile*>(f); }
const VfdFile* Of(const H5FD_t* f) { return reinterpret_cast<const VfdFile*>(f); }

thread_local std::optional<Status> pending_error;

// Pushes `message` onto libhdf5's error stack of this thread (the frame the driver adds).
void Push(const char* func, hid_t minor, const std::string& message) {
  H5Epush2(H5E_DEFAULT, __FILE__, func, __LINE__, H5E_ERR_CLS, H5E_VFL, minor, "%s",
           message.c_str());
}

// libhdf5 addresses are 64-bit, but the library keeps them below 2^63 (ROS3 and sec2 use the
// largest off_t): leave the top bit free.
constexpr haddr_t kMaxAddr = (haddr_t{1} << 63) - 1;

void* FaplCopy(const void* info) {
  return new (std::nothrow) FaplInfo(*static_cast<const FaplInfo*>(info));
}

herr_t FaplFree(void* info) {
  delete static_cast<FaplInfo*>(info);
  return 0;
}

H5FD_t* Open(const char* name, unsigned flags, hid_t fapl, haddr_t maxaddr) {
  if ((flags & (H5F_ACC_RDWR | H5F_ACC_TRUNC | H5F_ACC_CREAT | H5F_ACC_EXCL)) != 0) {
    Push("omicsfs_vfd_open", H5E_CANTOPENFILE,
         std::string(name) + ": the ByteSource driver is read-only");
    return nullptr;
  }
  if (maxaddr == 0 || maxaddr == HADDR_UNDEF || maxaddr > kMaxAddr) maxaddr = kMaxAddr;
  const auto* info = static_cast<const FaplInfo*>(H5Pget_driver_info(fapl));
  if (info == nullptr || info->source == nullptr) {
    Push("omicsfs_vfd_open", H5E_CANTOPENFILE,
         std::string(name) + ": no ByteSource in the access properties");
    return nullptr;
  }
  if (info->source->Size() > maxaddr) {
    Push("omicsfs_vfd_open", H5E_CANTOPENFILE,
         info->source->Describe() + ": larger than HDF5 addresses reach");
    return nullptr;
  }
  auto* f = new (std::nothrow) VfdFile{};
  if (f == nullptr) return nullptr;
  f->source = new (std::nothrow) std::shared_ptr<const ByteSource>(info->source);
  if (f->source == nullptr) {
    delete f;
    return nullptr;
  }
  f->eoa = 0;
  return &f->pub;
}

herr_t Close(H5FD_t* file) {
  VfdFile* f = Of(file);
  delete f->source;
  delete f;
  return 0;
}

// Orders open files by source object: libhdf5 shares one open file among H5Fopen calls of the
// same source (as sec2 does for one inode), so the groups of a file share its metadata cache.
int Compare(const H5FD_t* a, const H5FD_t* b) {
  const ByteSource* x = Of(a)->source->get();
  const ByteSource* y = Of(b)->source->get();
  if (x == y) return 0;
  return std::less<const ByteSource*>()(x, y) ? -1 : 1;
}

herr_t Query(const H5FD_t*, unsigned long* flags) {
  // Sieving merges small raw-data reads into larger ones; metadata reads are accumulated.
  // Nothing is ever written.
  if (flags != nullptr) *flags = H5FD_FEAT_DATA_SIEVE | H5FD_FEAT_ACCUMULATE_METADATA;
  return 0;
}

void* FaplGet(H5FD_t* file) { return new (std::nothrow) FaplInfo{*Of(file)->source}; }

haddr_t GetEoa(const H5FD_t* file, H5FD_mem_t) { return Of(file)->eoa; }

herr_t SetEoa(H5FD_t* file, H5FD_mem_t, haddr_t addr) {
  Of(file)->eoa = addr;
  return 0;
}

haddr_t GetEof(const H5FD_t* file, H5FD_mem_t) { return (*Of(file)->source)->Size(); }

herr_t GetHandle(H5FD_t* file, hid_t, void** handle) {
  if (handle == nullptr) return -1;
  *handle = Of(file);  // the driver's own file: nothing outside libhdf5 reads it
  return 0;
}

herr_t Read(H5FD_t* file, H5FD_mem_t, hid_t, haddr_t addr, size_t size, void* buffer) {
  const ByteSource& source = **Of(file)->source;
  Status st;
  if (addr == HADDR_UNDEF || addr > source.Size() || size > source.Size() - addr) {
    // Past the end: sec2 would hand libhdf5 zeros there; a damaged address must fail instead.
    st = CorruptError(source.Describe() + ": HDF5 read of " + std::to_string(size) + " bytes at " +
                      std::to_string(addr) + " lies past the end (" +
                      std::to_string(source.Size()) + " bytes)");
  } else if (size > 0) {
    st = source.ReadExact(addr, buffer, size)
             .WithContext("HDF5 read of " + std::to_string(size) + " bytes at " +
                          std::to_string(addr));
  }
  if (st.ok()) return 0;
  LogWarning(st.message());
  if (!pending_error) pending_error = st;
  Push("omicsfs_vfd_read", H5E_READERROR, st.message());
  return -1;
}

herr_t Write(H5FD_t* file, H5FD_mem_t, hid_t, haddr_t, size_t, const void*) {
  Push("omicsfs_vfd_write", H5E_WRITEERROR, (*Of(file)->source)->Describe() + ": read-only");
  return -1;
}

herr_t Nothing(H5FD_t*, hid_t, hbool_t) { return 0; }

H5FD_class_t MakeClass() {
  H5FD_class_t c;
  std::memset(&c, 0, sizeof c);
  c.name = "omicsfs_byte_source";
  c.maxaddr = kMaxAddr;
  c.fc_degree = H5F_CLOSE_WEAK;
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
  c.truncate = Nothing;
  const H5FD_mem_t map[H5FD_MEM_NTYPES] = H5FD_FLMAP_DICHOTOMY;
  std::memcpy(c.fl_map, map, sizeof map);
  return c;
}

}  // namespace

hid_t ByteSourceDriver() {
  static std::mutex mu;
  static const H5FD_class_t cls = MakeClass();
  static hid_t id = H5I_INVALID_HID;
  std::lock_guard<std::mutex> lock(mu);
  // Registered again if libhdf5 was closed and reopened in between (its ids die with it).
  if (id < 0 || H5Iget_type(id) != H5I_VFL) id = H5FDregister(&cls);
  return id;
}

hid_t MakeByteSourceFapl(std::shared_ptr<const ByteSource> source) {
  const hid_t driver = ByteSourceDriver();
  if (driver < 0 || source == nullptr) return H5I_INVALID_HID;
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0) return H5I_INVALID_HID;
  const FaplInfo info{std::move(source)};
  if (H5Pset_driver(fapl, driver, &info) < 0) {
    H5Pclose(fapl);
    return H5I_INVALID_HID;
  }
  return fapl;
}

std::optional<Status> TakeVfdError() {
  std::optional<Status> out;
  out.swap(pending_error);
  return out;
}

void ClearVfdError() { pending_error.reset(); }

}  // namespace omicsfs::io::h5
