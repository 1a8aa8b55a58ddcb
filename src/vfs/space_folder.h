// A folder of a ByteSpace (an S3 prefix, an HTTP store, a local folder read as a space in tests)
// as a folder of the walk. Objects have no owner here: they are the mounting user's, readable as
// the backend says. Sub-folders are built when first looked into (a listing is a request).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "vfs/folder.h"

namespace omicsfs::vfs {

class SpaceFolder : public Folder {
 public:
  static constexpr int kMaxDepth = 32;
  // The folder `prefix` ("" = the root) of `space`, `depth` folders below SOURCE.
  SpaceFolder(std::shared_ptr<const io::ByteSpace> space, std::string prefix, int depth = 0)
      : space_(std::move(space)), prefix_(std::move(prefix)), depth_(depth) {}
  // SOURCE: the space's root (key empty), or its object `key` (a single store).
  static std::pair<std::unique_ptr<SpaceFolder>, Entry> Source(
      std::shared_ptr<const io::ByteSpace> space, const std::string& key);
  static Meta MetaOf(const io::ObjectInfo& info);

  Result<std::vector<Entry>> List() const override;
  std::unique_ptr<Folder> Enter(const Entry& e) const override;
  bool Lazy() const override { return true; }
  bool CheapPeek() const override { return false; }
  std::string Where(const std::string& name) const override { return space_->Where(KeyOf(name)); }
  Result<StoreStamp> Stamp(const Entry& e, StampScope scope,
                           const std::vector<std::string>& companions) const override;
  std::shared_ptr<const io::ByteSpace> Space(const Entry& e,
                                             const StoreStamp* stamp) const override;
  Result<std::shared_ptr<const io::ByteSource>> Open(const std::string& name,
                                                     const StoreStamp* stamp) const override;
  std::shared_ptr<const FileContent> PassThrough(const Entry& e, const StoreStamp* stamp,
                                                 std::string* change) const override;
  std::string PartIndexKey(const Entry& e, const StoreStamp& stamp,
                           const std::string& part) const override;

 private:
  std::string KeyOf(const std::string& name) const;
  // The object `name`, opened once per walk of this folder: its stamp, HDF5 probe, vetting and
  // groups share one source (its cached blocks and libhdf5's open file).
  Result<std::shared_ptr<const io::ByteSource>> Object(const std::string& name) const;

  std::shared_ptr<const io::ByteSpace> space_;
  std::string prefix_;
  int depth_;
  mutable std::mutex mu_;
  mutable std::map<std::string, std::shared_ptr<const io::ByteSource>> opened_;
};

}  // namespace omicsfs::vfs
