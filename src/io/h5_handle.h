// RAII for HDF5 identifiers and capture of the HDF5 error stack into Status. Only io/h5_* include
// HDF5. Automatic error printing is switched off on every thread that calls HDF5.
#pragma once

#include <hdf5.h>

#include <memory>
#include <string>
#include <vector>

#include "io/byte_source.h"
#include "util/status.h"

namespace omicsfs::io::h5 {

// Turns off HDF5's automatic error printing for the calling thread (the error stack is per thread
// in the thread-safe build), and forgets a read error of an earlier call (io/h5_vfd.h). Cheap.
void PrepareThread();

// The current thread's HDF5 error stack as one line (then clears it).
std::string TakeErrorStack();

// Corrupt error "<what>: <hdf5 stack>"; when a read of the file's ByteSource failed under the
// call (io/h5_vfd.h), that read's error with `what` as context.
Status Error(const std::string& what);

class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~Handle() { reset(); }
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      closer_ = o.closer_;
      o.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  bool valid() const { return id_ >= 0; }
  hid_t get() const { return id_; }
  void reset() {
    if (id_ >= 0 && closer_ != nullptr) closer_(id_);
    id_ = H5I_INVALID_HID;
  }
  // Gives up the identifier without closing it (the caller closed it and checked the result).
  hid_t release() {
    const hid_t id = id_;
    id_ = H5I_INVALID_HID;
    return id;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

inline Handle FileHandle(hid_t id) { return Handle(id, H5Fclose); }
inline Handle GroupHandle(hid_t id) { return Handle(id, H5Gclose); }
inline Handle DatasetHandle(hid_t id) { return Handle(id, H5Dclose); }
inline Handle DataspaceHandle(hid_t id) { return Handle(id, H5Sclose); }
inline Handle TypeHandle(hid_t id) { return Handle(id, H5Tclose); }
inline Handle AttributeHandle(hid_t id) { return Handle(id, H5Aclose); }
inline Handle PlistHandle(hid_t id) { return Handle(id, H5Pclose); }

// The HDF5 file at `path` (libhdf5's POSIX driver), read-only.
Result<Handle> OpenFile(const std::string& path);
// The HDF5 file `source`, read through the ByteSource driver (io/h5_vfd.h), read-only.
Result<Handle> OpenFile(const std::shared_ptr<const ByteSource>& source);

// Reads a string-typed dataset or attribute (variable- or fixed-length; each fixed-length value
// ends at its first NUL, as BPCells reads them). `obj` is a dataset or attribute id.
Result<std::vector<std::string>> ReadStringValues(hid_t obj, bool is_attribute,
                                                  const std::string& what);

}  // namespace omicsfs::io::h5
