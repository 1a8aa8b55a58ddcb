// A local directory as a folder of the walk: entries by lstat (by stat with follow_symlinks, but
// a link to a directory being walked stays a link), owners and modes as on disk, HDF5 files read
// by path, and the index directory inside SOURCE (omicsfs's own files) left out.
#pragma once

#include <sys/stat.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vfs/folder.h"

namespace omicsfs::vfs {

struct LocalWalk {
  bool follow_symlinks = false;
  // The index directory: recognised by device and inode, whatever the path's spelling; only
  // entries with its name are checked. Empty name: none to leave out.
  std::string index_name;
  dev_t index_dev = 0;
  ino_t index_ino = 0;
  static LocalWalk For(const std::string& index_dir, bool follow_symlinks);
  bool IsIndexDir(const std::string& name, const std::string& path) const;
};

class LocalFolder : public Folder {
 public:
  // The folder `path`; `walk` must outlive it. `ancestors`: the directories being walked above
  // it, outermost first (a symlink to one of them would loop).
  LocalFolder(std::string path, const LocalWalk& walk,
              std::vector<std::pair<dev_t, ino_t>> ancestors = {});
  // SOURCE itself: its folder and its entry (name "").
  static Result<std::pair<std::unique_ptr<LocalFolder>, Entry>> Source(const std::string& path,
                                                                       const LocalWalk& walk);

  Result<std::vector<Entry>> List() const override;
  std::unique_ptr<Folder> Enter(const Entry& e) const override;
  bool Lazy() const override { return false; }
  bool CheapPeek() const override { return true; }
  std::string Where(const std::string& name) const override { return PathOf(name); }
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
  std::string PathOf(const std::string& key) const;
  // The files of a store directory, without the index directory inside it (writing an index
  // must not make the store look changed).
  std::vector<std::string> FilesBelow(const std::string& dir) const;

  std::string path_;
  const LocalWalk& walk_;
  std::vector<std::pair<dev_t, ino_t>> ancestors_;
};

}  // namespace omicsfs::vfs
