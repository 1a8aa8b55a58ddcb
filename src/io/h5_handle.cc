#include "io/h5_handle.h"

#include <cstring>
#include <memory>
#include <vector>

#include "io/h5_lzf.h"
#include "io/h5_vfd.h"

namespace omicsfs::io::h5 {

void PrepareThread() {
  ClearVfdError();  // a read error the last call recovered from is not this call's
  thread_local bool done = false;
  if (!done) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    RegisterLzf();  // h5py's LZF filter, before any dataset is read
    done = true;
  }
}

std::string TakeErrorStack() {
  std::string out;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned n, const H5E_error2_t* e, void* data) -> herr_t {
        auto* s = static_cast<std::string*>(data);
        if (n >= 3) return 0;  // the innermost few frames say enough
        if (!s->empty()) s->append("; ");
        s->append(e->func_name ? e->func_name : "?");
        s->append(": ");
        s->append(e->desc ? e->desc : "?");
        return 0;
      },
      &out);
  H5Eclear2(H5E_DEFAULT);
  if (out.empty()) out = "HDF5 call failed";
  return out;
}

Status Error(const std::string& what) {
  const std::string stack = TakeErrorStack();
  // A read of the source failed under libhdf5: its own error (ESTALE stays ESTALE) is the cause.
  if (std::optional<Status> source = TakeVfdError()) return source->WithContext(what);
  return CorruptError(what + ": " + stack);
}

Result<Handle> OpenFile(const std::string& path) {
  PrepareThread();
  Handle f = FileHandle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!f.valid()) return Error(path + ": open HDF5 file");
  return f;
}

Result<Handle> OpenFile(const std::shared_ptr<const ByteSource>& source) {
  PrepareThread();
  if (source == nullptr) return InternalError("h5::OpenFile: no source");
  Handle fapl = PlistHandle(MakeByteSourceFapl(source));
  if (!fapl.valid()) return Error(source->Describe() + ": HDF5 driver for byte sources");
  Handle f = FileHandle(H5Fopen(source->Describe().c_str(), H5F_ACC_RDONLY, fapl.get()));
  if (!f.valid()) return Error(source->Describe() + ": open HDF5 file");
  return f;
}

Result<std::vector<std::string>> ReadStringValues(hid_t obj, bool is_attribute,
                                                  const std::string& what) {
  Handle ftype = TypeHandle(is_attribute ? H5Aget_type(obj) : H5Dget_type(obj));
  if (!ftype.valid()) return Error(what + ": get type");
  if (H5Tget_class(ftype.get()) != H5T_STRING) return CorruptError(what + ": not a string");
  Handle space = DataspaceHandle(is_attribute ? H5Aget_space(obj) : H5Dget_space(obj));
  if (!space.valid()) return Error(what + ": get dataspace");
  hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0) return Error(what + ": dataspace size");
  if (n > (hssize_t{1} << 31)) return CorruptError(what + ": implausibly many strings");
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(n));
  if (n == 0) return out;
  htri_t vlen = H5Tis_variable_str(ftype.get());
  if (vlen < 0) return Error(what + ": string type");
  if (vlen > 0) {
    Handle mem = TypeHandle(H5Tcopy(H5T_C_S1));
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(ftype.get()));
    std::vector<char*> ptrs(static_cast<size_t>(n), nullptr);
    herr_t rc = is_attribute ? H5Aread(obj, mem.get(), ptrs.data())
                             : H5Dread(obj, mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data());
    if (rc < 0) return Error(what + ": read strings");
    for (char* p : ptrs) out.emplace_back(p ? p : "");
    H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, ptrs.data());
    return out;
  }
  size_t width = H5Tget_size(ftype.get());
  if (width == 0 || width > (1u << 20)) return CorruptError(what + ": bad string width");
  Handle mem = TypeHandle(H5Tcopy(ftype.get()));
  std::vector<char> buf(width * static_cast<size_t>(n));
  herr_t rc = is_attribute ? H5Aread(obj, mem.get(), buf.data())
                           : H5Dread(obj, mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data());
  if (rc < 0) return Error(what + ": read strings");
  for (hssize_t i = 0; i < n; ++i) {
    const char* p = buf.data() + static_cast<size_t>(i) * width;
    out.emplace_back(p, ::strnlen(p, width));
  }
  return out;
}

}  // namespace omicsfs::io::h5
