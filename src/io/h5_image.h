// HDF5 files that exist nowhere: libhdf5 writes only a file's *metadata* — groups, attributes and
// small datasets written whole (names) — through a driver that records what it writes (offset →
// bytes; nothing is allocated for the rest of the file), and the large datasets are "external":
// contiguous, their space allocated when they are made (H5D_ALLOC_TIME_EARLY) and never filled
// (H5D_FILL_TIME_NEVER), so libhdf5 never writes them and their bytes lie at fixed offsets
// (H5Dget_offset) that a caller fills from elsewhere when the file is read (text/h5_view.h).
//
// The file a reader sees: the image's segments where libhdf5 wrote, each external dataset's
// bytes (little-endian) at its extent, zeros elsewhere; `size` bytes in all. The size is known
// from the plan alone: no pass over the external data.
//
// Determinism (every mount and node must serve the same bytes): no object timestamps
// (H5Pset_obj_track_times off), fixed library-version bounds (earliest .. 1.8: what h5py writes by
// default, readable by every libhdf5 since 1.8), unwritten gaps zero, and objects made in plan
// order. A persisted image (text/h5_view.h keeps it in index_dir) is reused rather than made
// anew, so a libhdf5 of another version elsewhere serves the same bytes too.
//
// This header does not include hdf5.h: a plan is plain data; io/h5_image.cc is the only code that
// turns it into libhdf5 calls.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace omicsfs::io::h5 {

// Numbers as the file stores them: always little-endian.
enum class H5Type : uint8_t {
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
  kFloat32,
  kFloat64,
};
size_t TypeSize(H5Type type);

// How strings are stored. `fixed` 0: variable length (h5py's `str`, what anndata writes), else
// `fixed` bytes each, NUL-padded (numpy's `S`, what Cell Ranger writes; a string holding a NUL
// is refused: a reader would cut it there); `utf8` sets the character set (ASCII otherwise).
struct H5Strings {
  uint32_t fixed = 0;
  bool utf8 = true;
};

// A value: numbers (a type, a shape and their little-endian bytes) or strings (how they are
// stored, a shape and the strings). An empty shape is a scalar (one element).
struct H5Value {
  bool is_strings = false;
  H5Type type = H5Type::kUInt8;  // numbers
  H5Strings strings_as;          // strings
  std::vector<uint64_t> shape;
  std::string bytes;                 // numbers: Elements() · TypeSize(type) bytes
  std::vector<std::string> strings;  // strings: Elements() of them

  uint64_t Elements() const;

  // A scalar string (as anndata's encoding attributes).
  static H5Value String(std::string s, H5Strings as = {});
  // A 1-D array of strings.
  static H5Value Strings(std::vector<std::string> s, H5Strings as = {});
  // A 1-D array of fixed-length strings as numpy's `S` dtype stores them (what Cell Ranger
  // writes): each as wide as the longest, and at least 1 byte (a width of 0 would mean variable
  // length here, and HDF5 has no 0-byte string type: all-empty strings are 1 byte of NUL each);
  // ASCII, or UTF-8 when any string holds a byte past 0x7f.
  static H5Value FixedStrings(std::vector<std::string> s);
  // A 1-D array of numbers from host values (converted to little-endian).
  static H5Value Int64s(const std::vector<int64_t>& v);
  static H5Value Int32s(const std::vector<int32_t>& v);
  static H5Value Float64s(const std::vector<double>& v);
  // Numbers of any type and shape, already little-endian.
  static H5Value Numbers(H5Type type, std::vector<uint64_t> shape, std::string bytes);
};

struct H5Attribute {
  std::string name;
  H5Value value;
};

// What the file holds. Groups are made first, in order (a parent before its children; "/" is the
// root, listed to give it attributes), then datasets, in order. An external dataset gives only
// its type and shape (`value.type`, `value.shape`; no bytes): its contents are the caller's.
struct H5Plan {
  struct Group {
    std::string path;  // "/X", "/obs"
    std::vector<H5Attribute> attributes;
  };
  struct Dataset {
    std::string path;  // "/X/indptr"
    H5Value value;
    bool external = false;
    std::vector<H5Attribute> attributes;
  };
  std::vector<Group> groups;
  std::vector<Dataset> datasets;
  // Every allocation of at least this many bytes (the arrays, the names' heaps) starts at a
  // multiple of it (H5Pset_alignment): an array of 4 KiB or more shares no page with its
  // neighbours, so the kernel's page reads of metadata never need an array's bytes (a damaged
  // array fails only its own pages), and chunks of whole pages map to whole pages. 0: none.
  uint64_t alignment = 4096;

  Group& AddGroup(std::string path, std::vector<H5Attribute> attributes = {});
  Dataset& AddDataset(std::string path, H5Value value, std::vector<H5Attribute> attributes = {});
  // A 1-D external dataset of `length` elements.
  Dataset& AddExternal(std::string path, H5Type type, uint64_t length,
                       std::vector<H5Attribute> attributes = {});

  // The plan as bytes (every field, in order): two plans with equal Canonical() make the same
  // file. Keys of persisted images hash it, so any change of a plan (a new attribute, a code
  // change) is a new image.
  std::string Canonical() const;
};

// The metadata of a planned file and where its external datasets lie.
struct H5Image {
  struct Segment {
    uint64_t offset = 0;
    std::string bytes;
  };
  struct Extent {
    uint64_t offset = 0;  // 0 when empty (libhdf5 gives no address to an empty dataset)
    uint64_t bytes = 0;
  };
  uint64_t size = 0;              // the file's size
  std::vector<Segment> segments;  // what libhdf5 wrote: sorted, disjoint, within size
  std::vector<Extent> external;   // per external dataset, in plan order: disjoint from segments

  // For index_dir, and back; Parse checks the layout (sorted, disjoint, within size) and fails
  // with Corrupt otherwise.
  std::string Serialize() const;
  static Result<H5Image> Parse(std::string_view bytes);

  // Where each segment's bytes lie in a serialized image, checked as Parse checks: a reader
  // serves them from the serialized bytes themselves, with no copy (a store of a million cells
  // has ~50 MB of names in its image).
  struct Located {
    struct At {
      uint64_t offset = 0;  // in the file
      uint64_t at = 0;      // in the serialized bytes
      uint64_t length = 0;
    };
    uint64_t size = 0;
    std::vector<At> segments;
    std::vector<Extent> external;
  };
  static Result<Located> Locate(std::string_view serialized);
};

// Makes the image of `plan` (libhdf5 calls under its global lock; no file is made). `what` names
// the file in errors. Fails with InvalidArgument on a bad plan (a dataset in a missing group, a
// string longer than its fixed size) and Internal when libhdf5 writes where an external dataset
// lies.
Result<H5Image> BuildImage(const H5Plan& plan, const std::string& what);

}  // namespace omicsfs::io::h5
