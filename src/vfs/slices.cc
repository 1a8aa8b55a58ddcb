#include "vfs/slices.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <sstream>

#include "codec/hash.h"
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

// The selection a selector stands for: its items (inline or a list's lines); inside a groups
// folder, the group's members under the kind's GroupsSelect() key. `groups` gets the parsed
// list of a groups selector.
Result<Selection> Select(const SliceOrigin& o, const Selector& s, Groups* groups) {
  const bool is_groups = s.key == "groups" && !o.store->GroupsSelect().empty();
  if (is_groups && (s.list.empty() || s.exclude)) {
    return InvalidArgumentError("groups= takes a table of ITEM<TAB>GROUP lines: groups=@NAME (LISTS/NAME.tsv)");
  }
  ASSIGN_OR_RETURN(Selection read, Read(o, s));
  if (!is_groups) return read;
  ASSIGN_OR_RETURN(*groups, ParseGroups(read.list_content, "@" + s.list));
  if (!s.group) return read;
  auto it = std::lower_bound(groups->names.begin(), groups->names.end(), *s.group);
  if (it == groups->names.end() || *it != *s.group) return NotFoundError("@" + s.list + ": no group '" + *s.group + "'");
  Selection out = SelectionOf(o.store->GroupsSelect(), groups->members[it - groups->names.begin()], s.text + "/" + *s.group);
  out.selector.list = s.list;
  out.list_content = std::move(read.list_content);
  out.list_stat = read.list_stat;
  return out;
}

// The folder's tree: the store cut by `path` (a slice folder, itself sliceable), the groups of
// its last selector (a groups folder: a sliceable folder per group), or ERROR.txt.
std::unique_ptr<Tree> Build(const std::shared_ptr<const SliceOrigin>& origin, const std::vector<Selector>& path, Meta meta) {
  const SliceOrigin& o = *origin;
  auto tree = std::make_unique<Tree>();
  TreeWriter out(tree.get());
  out.SetRoot(meta, /*from_file=*/true);
  std::string where = o.where;
  for (const Selector& s : path) where += "/" + s.text + (s.group ? "/" + *s.group : "");
  // A folder that fails holds only ERROR.txt, whatever was added before the failure.
  auto fail = [&](const Status& status) {
    auto error_tree = std::make_unique<Tree>();
    TreeWriter error_out(error_tree.get());
    error_out.SetRoot(meta, /*from_file=*/true);
    ViewSink sink(error_out, kRootIno, meta, "", o.settings);
    sink.AddError(Status(status.code(), where + ": " + status.message()));
    return error_tree;
  };
  std::set<std::string> keys;
  std::vector<Selection> selections;
  Groups groups;
  for (const Selector& s : path) {
    if (!o.store->Knows(s.key)) {
      return fail(InvalidArgumentError("no slice key '" + s.key + "' (this store knows " + o.store->KeysHelp() + ")"));
    }
    if (!keys.insert(s.key).second) return fail(InvalidArgumentError("the key " + s.key + "= is given twice on one path"));
    auto read = Select(o, s, &groups);
    if (!read.ok()) return fail(read.status());
    if (read->selector.key != s.key && !keys.insert(read->selector.key).second) {
      return fail(InvalidArgumentError("the key " + read->selector.key + "= is given twice on one path (once by " + s.text + ")"));
    }
    // The views' access follows the lists as read (one may have changed since the lookup).
    if (!s.list.empty()) meta.perm = LimitByList(meta.perm, meta.uid, meta.gid, read->list_stat);
    selections.push_back(std::move(read).value());
  }
  const std::string key_prefix = o.index_key.empty() ? "" : o.index_key + "\nslice ";
  if (!path.empty() && path.back().key == "groups" && !path.back().group) {
    Selection list = std::move(selections.back());
    selections.pop_back();
    auto cut = o.store->CutGroups(selections, list, groups);
    if (!cut.ok()) return fail(cut.status());
    if (cut->groups.size() != groups.names.size()) return fail(InternalError("groups cut does not match the list"));
    ViewSink here(out, kRootIno, meta, key_prefix.empty() ? "" : key_prefix + cut->here_canonical, o.settings);
    here.where = where;
    here.slice = true;
    if (cut->here) cut->here->AddViews(here);
    for (size_t g = 0; g < groups.names.size(); ++g) {
      auto sub = here.Sub(groups.names[g], key_prefix.empty() ? "" : key_prefix + cut->canonical[g]);
      if (!sub) return fail(InvalidArgumentError("@" + list.selector.list + ": the group '" + groups.names[g] + "' collides with a file of the folder"));
      sub->where = where + "/" + groups.names[g];
      sub->slice = true;
      cut->groups[g]->AddViews(*sub);
      std::vector<Selector> group_path = path;
      group_path.back().group = groups.names[g];
      sub->SetResolver(std::make_shared<SliceResolver>(origin, std::move(group_path)));
    }
    return tree;
  }
  std::string canonical;
  auto cut = o.store->Cut(selections, &canonical);
  if (!cut.ok()) return fail(cut.status());
  ViewSink sink(out, kRootIno, meta, key_prefix.empty() ? "" : key_prefix + canonical, o.settings);
  sink.where = where;
  sink.slice = true;
  (*cut)->AddViews(sink);
  // A slice that holds views can be cut further.
  sink.SetResolver(std::make_shared<SliceResolver>(origin, path));
  return tree;
}

}  // namespace

Result<Groups> ParseGroups(const std::string& text, const std::string& list) {
  std::map<std::string, std::vector<std::string>> by_group;
  std::set<std::string> seen;
  std::istringstream lines(text);
  size_t n = 0;
  for (std::string line; std::getline(lines, line);) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;  // comment lines (a header written as one)
    const size_t tab = line.find('\t');
    if (tab == std::string::npos || tab == 0 || line.find('\t', tab + 1) != std::string::npos) {
      return InvalidArgumentError(list + " line " + std::to_string(n) + ": not ITEM<TAB>GROUP: '" + line + "'");
    }
    std::string item = line.substr(0, tab), group = line.substr(tab + 1);
    if (group.empty() || group == "." || group == ".." || group.find('/') != std::string::npos ||
        group.find('\0') != std::string::npos || group.size() > 255) {
      return InvalidArgumentError(list + " line " + std::to_string(n) + ": the group '" + group + "' cannot be a folder's name");
    }
    if (!seen.insert(item).second) return InvalidArgumentError(list + ": " + item + " is listed twice");
    by_group[group].push_back(std::move(item));
  }
  if (by_group.empty()) return InvalidArgumentError(list + ": no group");
  Groups out;
  for (auto& [name, members] : by_group) {  // std::string orders bytewise (as unsigned chars)
    out.names.push_back(name);
    out.members.push_back(std::move(members));
  }
  return out;
}

Result<Sliceable::GroupCut> Sliceable::CutGroups(const std::vector<Selection>& path, const Selection& groups_list,
                                                 const Groups& groups) const {
  GroupCut out;
  for (size_t g = 0; g < groups.names.size(); ++g) {
    std::vector<Selection> group_path = path;
    group_path.push_back(SelectionOf(GroupsSelect(), groups.members[g], groups_list.selector.text + "/" + groups.names[g]));
    group_path.back().selector.list = groups_list.selector.list;
    std::string canonical;
    ASSIGN_OR_RETURN(auto cut, Cut(group_path, &canonical));
    out.groups.push_back(std::move(cut));
    out.canonical.push_back(std::move(canonical));
  }
  return out;
}

std::string SelectionName(const Selection& s) {
  const std::string key = s.selector.key + (s.selector.exclude ? "=^" : "=");
  return s.selector.list.empty() ? key : key + "@" + s.selector.list;
}

std::string JoinSome(const std::vector<std::string>& items, size_t most) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < most; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > most) out += ", ...";
  return out;
}

std::string ShortIdentity(const std::string& text) {
  if (text.size() <= 200) return text;
  return std::to_string(text.size()) + " bytes, xxh3 " + std::to_string(codec::Hash64(text.data(), text.size()));
}

namespace {

Result<uint64_t> Position(std::string_view text, const std::string& region) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1) {
    return InvalidArgumentError("region " + region + ": '" + std::string(text) + "' is not a position (1, 2, ...)");
  }
  return v;
}

}  // namespace

Result<RegionText> ParseRegionText(const std::string& text, const std::function<bool(const std::string&)>& known,
                                   const std::string& chromosome, const std::string& store) {
  RegionText r;
  if (known(text)) {
    r.chr = text;
    return r;
  }
  const size_t colon = text.rfind(':');
  r.chr = colon == std::string::npos ? text : text.substr(0, colon);
  if (!known(r.chr)) return NotFoundError("region " + text + ": no " + chromosome + " '" + r.chr + "' in " + store);
  if (colon == std::string::npos) return r;
  const std::string_view range = std::string_view(text).substr(colon + 1);
  const size_t dash = range.find('-');
  ASSIGN_OR_RETURN(r.begin, Position(range.substr(0, dash), text));
  r.dash = dash != std::string_view::npos;
  if (r.dash && dash + 1 < range.size()) {
    ASSIGN_OR_RETURN(r.end, Position(range.substr(dash + 1), text));
    if (*r.end < *r.begin) return InvalidArgumentError("region " + text + ": the end is before the start");
  }
  return r;
}

Result<std::optional<BedLine>> ParseBedLine(const std::string& line, const std::string& list) {
  if (line.empty() || line[0] == '#' || line.starts_with("track") || line.starts_with("browser")) return std::optional<BedLine>();
  std::vector<std::string_view> f;
  for (size_t from = 0; from <= line.size() && f.size() < 3;) {
    size_t tab = line.find_first_of("\t ", from);
    if (tab == std::string::npos) tab = line.size();
    if (tab > from) f.emplace_back(line.data() + from, tab - from);
    from = tab + 1;
  }
  if (f.size() < 3) return InvalidArgumentError(list + ": a BED line needs CHROM, START and END: '" + line + "'");
  BedLine b;
  b.chrom = std::string(f[0]);
  auto x = std::from_chars(f[1].data(), f[1].data() + f[1].size(), b.start);
  auto y = std::from_chars(f[2].data(), f[2].data() + f[2].size(), b.end);
  if (x.ec != std::errc() || x.ptr != f[1].data() + f[1].size() || y.ec != std::errc() || y.ptr != f[2].data() + f[2].size() ||
      b.end < b.start) {
    return InvalidArgumentError(list + ": not a BED interval: '" + line + "'");
  }
  return std::make_optional(std::move(b));
}

Selection SelectionOf(std::string key, std::vector<std::string> items, std::string text) {
  Selection s;
  s.selector.key = std::move(key);
  s.selector.text = std::move(text);
  s.items = std::move(items);
  return s;
}

void AttachSlices(ViewSink& sink, std::shared_ptr<const Sliceable> store, std::string where) {
  auto origin = std::make_shared<SliceOrigin>();
  origin->store = std::move(store);
  origin->settings = sink.settings();
  origin->index_key = sink.index_key();
  origin->meta = sink.meta();
  origin->where = std::move(where);
  origin->lists_dir = sink.settings().lists_dir;
  sink.SetResolver(std::make_shared<const SliceResolver>(std::move(origin), std::vector<Selector>{}));
}

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
  d.load = [origin = origin_, path, meta]() -> std::unique_ptr<Tree> { return Build(origin, path, meta); };
  return d;
}

}  // namespace omicsfs::vfs
