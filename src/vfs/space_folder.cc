#include "vfs/space_folder.h"

#include <unistd.h>

#include <ctime>

#include "util/fs.h"
#include "util/log.h"
#include "vfs/files.h"

namespace omicsfs::vfs {
namespace {

// When discovery started: the mtime of remote folders, which have none (S3 prefixes). Fixed for
// the process, so a rescan sees them unchanged.
struct timespec StartTime() {
  static const struct timespec start = [] {
    struct timespec t {};
    ::clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec = 0;
    return t;
  }();
  return start;
}

std::string Join(const std::string& folder, const std::string& name) {
  if (name.empty()) return folder;
  return folder.empty() ? name : folder + "/" + name;
}

std::string ObjectLine(const io::ByteSource& source) {
  return "object " + source.Describe() + " " + source.Info().stamp;
}

}  // namespace

Meta SpaceFolder::MetaOf(const io::ObjectInfo& info) {
  Meta m;
  m.perm = info.perm & 0444;
  m.mtime = info.mtime;
  m.uid = ::getuid();
  m.gid = ::getgid();
  return m;
}

std::pair<std::unique_ptr<SpaceFolder>, Entry> SpaceFolder::Source(
    std::shared_ptr<const io::ByteSpace> space, const std::string& key) {
  Entry e;
  e.meta = MetaOf(io::ObjectInfo{});
  e.synthetic = true;
  if (key.empty()) {
    e.type = EntryType::kDirectory;
    e.base = fs::path(space->Describe()).filename().string();
    return {std::make_unique<SpaceFolder>(std::move(space), ""), std::move(e)};
  }
  const size_t slash = key.rfind('/');
  e.type = EntryType::kFile;
  e.base = e.key = slash == std::string::npos ? key : key.substr(slash + 1);
  return {std::make_unique<SpaceFolder>(std::move(space),
                                        slash == std::string::npos ? "" : key.substr(0, slash)),
          std::move(e)};
}

std::string SpaceFolder::KeyOf(const std::string& name) const { return Join(prefix_, name); }

Result<std::vector<Entry>> SpaceFolder::List() const {
  ASSIGN_OR_RETURN(std::vector<io::ListEntry> listed,
                   (prefix_.empty() ? space_ : io::SubSpace(space_, prefix_))->List(""));
  if (listed.empty() && depth_ == 0 && prefix_.empty())
    LogWarning(space_->Describe() + ": holds nothing");
  std::vector<Entry> out;
  for (const auto& l : listed) {
    Entry e;
    e.name = e.base = e.key = l.name;
    e.meta = MetaOf(l.info);
    e.synthetic = true;
    e.type = l.kind == io::EntryKind::kDirectory ? EntryType::kDirectory : EntryType::kFile;
    if (e.type == EntryType::kDirectory && e.meta.mtime.tv_sec == 0 && e.meta.mtime.tv_nsec == 0)
      e.meta.mtime = StartTime();
    out.push_back(std::move(e));
  }
  return out;
}

std::unique_ptr<Folder> SpaceFolder::Enter(const Entry& e) const {
  if (e.key.empty()) return std::make_unique<SpaceFolder>(space_, prefix_, depth_);
  if (depth_ >= kMaxDepth) {
    LogWarning(space_->Where(KeyOf(e.key)) + ": deeper than " + std::to_string(kMaxDepth) +
               " folders; not shown");
    return nullptr;
  }
  return std::make_unique<SpaceFolder>(space_, KeyOf(e.key), depth_ + 1);
}

Result<std::shared_ptr<const io::ByteSource>> SpaceFolder::Object(const std::string& name) const {
  const std::string key = KeyOf(name);
  {
    std::lock_guard lock(mu_);
    if (auto it = opened_.find(key); it != opened_.end()) return it->second;
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const io::ByteSource> source, space_->Open(key));
  std::lock_guard lock(mu_);
  return opened_.emplace(key, std::move(source)).first->second;
}

Result<StoreStamp> SpaceFolder::Stamp(const Entry& e, StampScope scope,
                                      const std::vector<std::string>& companions) const {
  StoreStamp s;
  std::vector<io::ByteSpace::KeyInfo> objects;
  if (scope == StampScope::kObject) {
    ASSIGN_OR_RETURN(auto source, Object(e.key));
    if (source == nullptr) return NotFoundError(Where(e.key) + ": not found");
    s.index_key = ObjectLine(*source) + "\n";
    objects.push_back({"", source->Info()});
  } else if (scope == StampScope::kTree) {
    auto sub = Space(e, nullptr);
    s.index_key = "store " + sub->Describe() + "\n";
    ASSIGN_OR_RETURN(objects, sub->ListRecursive(""));
  } else {
    s.index_key = "store " + space_->Describe() + "\n";
    std::vector<std::string> names{e.key};
    names.insert(names.end(), companions.begin(), companions.end());
    for (const std::string& name : names) {
      ASSIGN_OR_RETURN(auto source, Object(name));
      if (source != nullptr) objects.push_back({KeyOf(name), source->Info()});
    }
  }
  for (const auto& o : objects) {
    if (scope != StampScope::kObject) s.index_key += o.key + " " + o.info.stamp + "\n";
    s.readable &= o.info.perm;
    if (Later(o.info.mtime, s.newest_mtime)) s.newest_mtime = o.info.mtime;
  }
  s.change = s.index_key;
  return s;
}

std::shared_ptr<const io::ByteSpace> SpaceFolder::Space(const Entry& e, const StoreStamp*) const {
  const std::string key = KeyOf(e.key);
  return key.empty() ? space_ : io::SubSpace(space_, key);
}

Result<std::shared_ptr<const io::ByteSource>> SpaceFolder::Open(const std::string& name,
                                                                const StoreStamp*) const {
  return Object(name);
}

std::shared_ptr<const FileContent> SpaceFolder::PassThrough(const Entry& e, const StoreStamp*,
                                                            std::string* change) const {
  auto source = Object(e.key);
  if (!source.ok() || *source == nullptr) {
    LogWarning(Where(e.key) + ": cannot open; not shown" +
               (source.ok() ? std::string(" (gone since the listing)")
                            : ": " + source.status().message()));
    return nullptr;
  }
  *change = ObjectLine(**source) + "\n";
  return std::make_shared<const ByteSourceContent>(*source);
}

std::string SpaceFolder::PartIndexKey(const Entry&, const StoreStamp& stamp,
                                      const std::string& part) const {
  return stamp.index_key + "group " + part +
         "\n";  // "group": the word persisted keys were made with
}

}  // namespace omicsfs::vfs
