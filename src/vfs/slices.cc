#include "vfs/slices.h"

#include <set>
#include <sstream>

#include "util/file.h"
#include "util/log.h"
#include "vfs/tree.h"
#include "vfs/tree_writer.h"

namespace omicsfs::vfs {
namespace {

constexpr size_t kMaxListBytes = 64 << 20;  // a list of a million IDs is well below

bool IsListName(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) return false;
  }
  return true;
}

// A list file's identity: read again when any of it changes.
struct ListStamp {
  std::string path;
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  struct timespec mtime {}, ctime {};
  bool operator==(const ListStamp& o) const {
    return path == o.path && exists == o.exists && dev == o.dev && ino == o.ino && size == o.size &&
           mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec && ctime.tv_sec == o.ctime.tv_sec &&
           ctime.tv_nsec == o.ctime.tv_nsec;
  }
};

ListStamp StampList(const std::string& path, struct stat* st_out = nullptr) {
  ListStamp s;
  s.path = path;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    s.exists = true;
    s.dev = st.st_dev;
    s.ino = st.st_ino;
    s.size = st.st_size;
    s.mtime = st.st_mtim;
    s.ctime = st.st_ctim;
    if (st_out != nullptr) *st_out = st;
  }
  return s;
}

std::string ListPath(const SliceOrigin& o, const Selector& s) {
  if (s.list.empty() || o.lists_dir.empty() || !IsListName(s.list) || !o.store->Knows(s.key)) return "";
  return o.lists_dir + "/" + s.list + o.store->ListExtension(s.key);
}

Result<Selection> Read(const SliceOrigin& o, const Selector& s) {
  Selection out;
  out.selector = s;
  if (s.list.empty()) {
    for (size_t from = 0; from <= s.value.size();) {
      size_t comma = s.value.find(',', from);
      if (comma == std::string::npos) comma = s.value.size();
      if (comma > from) out.items.push_back(s.value.substr(from, comma - from));
      from = comma + 1;
    }
    return out;
  }
  if (!IsListName(s.list)) return InvalidArgumentError("@" + s.list + ": a list's name is [A-Za-z0-9._-]+");
  if (o.lists_dir.empty()) return NotFoundError("@" + s.list + ": no lists directory (mount with -o lists=DIR)");
  const std::string path = ListPath(o, s);
  // A regular file only (a FIFO would hold the lookup until someone wrote to it).
  auto text = ReadWholeFile(path, kMaxListBytes, nullptr, &out.list_stat);
  if (!text.ok()) return Status(text.status().code(), "@" + s.list + ": cannot read: " + text.status().message());
  out.list_content = std::move(text).value();
  std::istringstream lines(out.list_content);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) out.items.push_back(std::move(line));
  }
  return out;
}

// The folder's tree: the store cut by `path`, or ERROR.txt.
std::unique_ptr<Tree> Build(const SliceOrigin& o, const std::vector<Selector>& path, Meta meta) {
  auto tree = std::make_unique<Tree>();
  TreeWriter out(tree.get());
  out.SetRoot(meta, /*from_file=*/true);
  std::string where = o.where;
  for (const Selector& s : path) where += "/" + s.text;
  auto fail = [&](const Status& status) {
    ViewSink sink(out, kRootIno, meta, "", o.settings);
    sink.AddError(Status(status.code(), where + ": " + status.message()));
    return std::move(tree);
  };
  std::set<std::string> keys;
  std::vector<Selection> selections;
  for (const Selector& s : path) {
    if (!o.store->Knows(s.key)) {
      return fail(InvalidArgumentError("no slice key '" + s.key + "' (this store knows " + o.store->KeysHelp() + ")"));
    }
    if (!keys.insert(s.key).second) return fail(InvalidArgumentError("the key " + s.key + "= is given twice on one path"));
    auto read = Read(o, s);
    if (!read.ok()) return fail(read.status());
    // The views' access follows the lists as read (one may have changed since the lookup).
    if (!s.list.empty()) meta.perm = LimitByList(meta.perm, meta.uid, meta.gid, read->list_stat);
    selections.push_back(std::move(read).value());
  }
  std::string canonical;
  auto cut = o.store->Cut(selections, &canonical);
  if (!cut.ok()) return fail(cut.status());
  ViewSink sink(out, kRootIno, meta, o.index_key.empty() ? "" : o.index_key + "\nslice " + canonical, o.settings);
  sink.where = where;
  sink.slice = true;
  (*cut)->AddViews(sink);
  return tree;
}

}  // namespace

std::optional<Selector> ParseSelector(std::string_view name) {
  const size_t eq = name.find('=');
  if (eq == std::string_view::npos || eq == 0) return std::nullopt;
  for (size_t i = 0; i < eq; ++i) {
    if (name[i] < 'a' || name[i] > 'z') return std::nullopt;
  }
  Selector s;
  s.text = std::string(name);
  s.key = std::string(name.substr(0, eq));
  std::string_view value = name.substr(eq + 1);
  if (!value.empty() && value[0] == '^') {
    s.exclude = true;
    value.remove_prefix(1);
  }
  if (!value.empty() && value[0] == '@') {
    s.list = std::string(value.substr(1));
  } else {
    s.value = std::string(value);
  }
  return s;
}

mode_t LimitByList(mode_t perm, uid_t uid, gid_t gid, const struct stat& list) {
  const mode_t other = list.st_mode & 07;
  const mode_t user = list.st_uid == uid ? (list.st_mode >> 6) & 07 : other;
  const mode_t group = list.st_gid == gid ? (list.st_mode >> 3) & 07 : other;
  return perm & ((user << 6) | (group << 3) | other | ~mode_t{0777});
}

std::optional<ResolvedDir> SliceResolver::Resolve(std::string_view name) const {
  std::optional<Selector> sel = ParseSelector(name);
  if (!sel) return std::nullopt;
  std::vector<Selector> path = path_;
  path.push_back(std::move(*sel));
  const SliceOrigin& o = *origin_;
  Meta meta = o.meta;
  std::vector<ListStamp> stamps;
  for (const Selector& s : path) {
    const std::string list = ListPath(o, s);
    if (list.empty()) continue;
    struct stat st {};
    stamps.push_back(StampList(list, &st));
    // Readable by whoever can read the store and every list (a 0600 list of patient IDs
    // makes its slices 0400: the IDs do not leak through the mount).
    if (stamps.back().exists) meta.perm = LimitByList(meta.perm, meta.uid, meta.gid, st);
  }
  ResolvedDir d;
  d.perm = TreeWriter::DirPerm(meta, /*from_file=*/true);
  d.mtime = meta.mtime;
  d.uid = meta.uid;
  d.gid = meta.gid;
  if (!stamps.empty()) {
    d.current = [stamps] {
      for (const ListStamp& s : stamps) {
        if (!(StampList(s.path) == s)) return false;
      }
      return true;
    };
  }
  d.load = [origin = origin_, path, meta]() -> std::unique_ptr<Tree> {
    std::unique_ptr<Tree> tree = Build(*origin, path, meta);
    // A slice that holds views can be cut further; one that holds ERROR.txt cannot.
    if (tree->root().children.count("ERROR.txt") == 0) tree->root().resolver = std::make_shared<SliceResolver>(origin, path);
    return tree;
  };
  return d;
}

}  // namespace omicsfs::vfs
