// HDF5 backend: one group holds the arrays as 1-D datasets; strings are variable- or fixed-length
// string datasets; the version is a string attribute of the group. Datasets are opened per read
// (HDF5 serialises calls under its global lock; callers ask for large ranges).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "io/array_store.h"
#include "io/byte_source.h"
#include "util/file.h"

namespace omicsfs::io {

class H5File;  // shared open file, defined in the .cc
namespace h5 {
class Handle;
}

// The numeric types of AnnData's datasets (issue 37): every integer width and sign, floats, and
// bool (h5py writes it as an enum of int8 FALSE = 0, TRUE = 1).
enum class H5Number {
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat32,
  kFloat64,
  kBool
};
size_t H5NumberSize(H5Number t);
std::string_view H5NumberName(H5Number t);

// A dataset as AnnData's reader sees it: any rank, its element kind, and what it needs to be read.
struct H5DatasetDesc {
  std::vector<uint64_t> dims;  // the extent, slowest first (empty: a scalar)
  bool is_string = false;
  std::optional<H5Number> number;  // a number of one of the types above
  std::string type;                // the stored type in words, for messages
  std::string missing_filter;      // a filter libhdf5 has not here ("lzf (32000)"); "" none
};

class H5ArrayStore : public ArrayStore {
 public:
  // `group` is an absolute path inside the file ("/" for the root group). With an active guard,
  // reads refuse a file rewritten since it was fingerprinted (checked on a descriptor of our
  // own to the same file: a file replaced by rename keeps serving its old, consistent bytes).
  // With `version` (as the vetting helper read it, io/h5_vet.h), the group's version attribute is
  // never read in this process.
  static Result<std::unique_ptr<H5ArrayStore>> Open(
      const std::string& file, const std::string& group, ChangeGuard guard = {},
      std::optional<std::string> version = std::nullopt);
  // The same, with the file's bytes read from `source` through the ByteSource driver
  // (io/h5_vfd.h): remote files, through the mount's block cache. The source guards its own
  // version: a read of an object changed since it was opened fails with ESTALE.
  static Result<std::unique_ptr<H5ArrayStore>> Open(
      std::shared_ptr<const ByteSource> source, const std::string& group,
      std::optional<std::string> version = std::nullopt);
  ~H5ArrayStore() override;

  const std::string& Describe() const override { return describe_; }
  Result<std::string> Version() const override;
  Result<std::optional<ArrayInfo>> Info(const std::string& name) const override;
  Status Read(const std::string& name, ElemType type, uint64_t first, uint64_t count,
              void* out) const override;
  Result<std::vector<std::string>> ReadStrings(const std::string& name) const override;

  // Names of the datasets directly in the group (for vetting, io/h5_vet.h).
  Result<std::vector<std::string>> DatasetNames() const;

  // Any dataset of the group (nullopt: none of that name).
  Result<std::optional<H5DatasetDesc>> DescribeDataset(const std::string& name) const;
  // Elements [first, first + count) of a numeric dataset of any rank in C order, as type `as`
  // (libhdf5 converts between numbers; bool only from bool). For rank > 1, the range must hold
  // whole slices of the first dimension.
  Status ReadNumbers(const std::string& name, H5Number as, uint64_t first, uint64_t count,
                     void* out) const;

 private:
  H5ArrayStore() = default;
  Status Init(h5::Handle file, const std::string& group, std::optional<std::string> version);
  std::string DatasetPath(const std::string& name) const;
  Status CheckUnchanged() const;

  std::shared_ptr<H5File> file_;
  std::shared_ptr<const ByteSource> source_;  // null: a local file at path_
  File guard_file_;
  ChangeGuard guard_;
  std::string group_;
  std::string path_;
  std::string describe_;
  std::optional<std::string> version_;

  // ReadNumbers past libhdf5 (issue 37: its global lock serialises every read): a 1-D dataset's
  // storage — contiguous, or chunks unfiltered, deflated, shuffled or LZF — mapped once with the
  // calls the vetting helper makes (chunk index), then read as bytes of the file and decoded here
  // on any number of threads. Null: read through libhdf5 (other layouts, filters, byte orders).
  struct Direct;
  Result<std::shared_ptr<const Direct>> DirectOf(const std::string& name) const;
  Status ReadDirect(const Direct& d, H5Number as, uint64_t first, uint64_t count, void* out) const;
  Result<std::shared_ptr<const ByteSource>> RawSource() const;
  mutable std::mutex direct_mu_;
  mutable std::map<std::string, std::shared_ptr<const Direct>> direct_;
  mutable std::shared_ptr<const ByteSource> raw_;
};

// True when `path` carries the HDF5 signature (at 0 or a user-block offset 512·2^k).
bool IsHdf5File(const std::string& path);
// The same for any ByteSource; a failed read is an error (a remote object unreadable now).
Result<bool> IsHdf5Source(const ByteSource& source);

struct H5GroupAttribute {
  std::string group;  // absolute path, "/" for the root
  std::string value;
};

// Every group of the file (root included) that has a string attribute named `attribute`.
Result<std::vector<H5GroupAttribute>> ListGroupsWithStringAttribute(const std::string& file,
                                                                    const std::string& attribute);
Result<std::vector<H5GroupAttribute>> ListGroupsWithStringAttribute(
    const std::shared_ptr<const ByteSource>& source, const std::string& attribute);

}  // namespace omicsfs::io
