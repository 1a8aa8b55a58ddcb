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

constexpr size_t kMaxListBytes = 64 << 20;         // a list of a million IDs is well below
constexpr std::string_view kBom = "\xEF\xBB\xBF";  // a UTF-8 byte-order mark (Excel, Notepad)

bool IsListName(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
      return false;
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
  struct timespec mtime {
  }, ctime{};
  bool operator==(const ListStamp& o) const {
    return path == o.path && exists == o.exists && dev == o.dev && ino == o.ino && size == o.size &&
           mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec &&
           ctime.tv_sec == o.ctime.tv_sec && ctime.tv_nsec == o.ctime.tv_nsec;
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
  if (s.list.empty() || o.lists_dir.empty() || !IsListName(s.list)) return "";
  const SelectorRow* row = FindRow(o.store->Rows(), s.key);
  if (row == nullptr || row->list_ext.empty()) return "";
  return o.lists_dir + "/" + s.list + std::string(row->list_ext);
}

// A selection as messages name it: "samples=@cases", "cells=^@few", "region=".
std::string SelectionName(const Selector& s) {
  const std::string key = s.key + (s.exclude ? "=^" : "=");
  return s.list.empty() ? key : key + "@" + s.list;
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
  if (!IsListName(s.list))
    return InvalidArgumentError("@" + s.list + ": a list's name is [A-Za-z0-9._-]+");
  if (o.lists_dir.empty())
    return NotFoundError("@" + s.list + ": no lists directory (mount with -o lists=DIR)");
  const std::string path = ListPath(o, s);
  // A regular file only (a FIFO would hold the lookup until someone wrote to it).
  auto text = ReadWholeFile(path, kMaxListBytes, nullptr, &out.list_stat);
  if (!text.ok())
    return Status(text.status().code(), "@" + s.list + ": cannot read: " + text.status().message());
  out.list_content = std::move(text).value();
  out.items = ListLines(out.list_content);
  return out;
}

// A selector's typed form: its items read (inline or a list's lines) and parsed by its row.
Result<Chosen> Parse(const SliceOrigin& o, const SelectorRow& row, const Selection& sel) {
  Chosen c;
  c.row = &row;
  c.name = SelectionName(sel.selector);
  const Sliceable& store = *o.store;
  const NameChooser& names = store.Chooser(row);
  const NameChooser::Phrase phrase{c.name, row.item, store.Where()};
  switch (row.selects) {
    case Selects::kNames: {
      ASSIGN_OR_RETURN(c.indices, names.Choose(sel.items, sel.selector.exclude, phrase));
      break;
    }
    case Selects::kFields: {
      ASSIGN_OR_RETURN(c.indices, names.Keep(sel.items, sel.selector.exclude, phrase));
      break;
    }
    case Selects::kRegions:
      for (const std::string& item : sel.items) {
        ASSIGN_OR_RETURN(RegionAt r, ParseRegion(item, row.style, names, store.Where()));
        c.regions.push_back(r);
      }
      break;
    case Selects::kBed:
      for (const std::string& line : sel.items) {
        ASSIGN_OR_RETURN(std::optional<RegionAt> r,
                         ParseBedRegion(line, names, c.name, store.Where()));
        if (r) c.regions.push_back(*r);
      }
      break;
    case Selects::kGroups:
      return InternalError(c.name + ": a groups table is not a choice");
    case Selects::kCondition:
      // Verbatim: `,` and `^` inside an expression are its own.
      c.value = sel.selector.list.empty() ? sel.selector.value : sel.list_content;
      c.exclude = sel.selector.exclude;
      if (c.value.empty()) return InvalidArgumentError(c.name + ": nothing given");
      break;
  }
  if ((row.selects == Selects::kRegions || row.selects == Selects::kBed) && c.regions.empty()) {
    return InvalidArgumentError(c.name + ": no region given");
  }
  return c;
}

// Each group's members as a choice of the groups row's group_key: every unknown name of the
// table reported at once (with the count), then each group's own checks.
Result<std::vector<Chosen>> GroupChoices(const SliceOrigin& o, const SelectorRow& groups_row,
                                         const Selector& s, const Groups& groups) {
  const Sliceable& store = *o.store;
  const SelectorRow* member_row = FindRow(store.Rows(), groups_row.group_key);
  if (member_row == nullptr)
    return InternalError(s.text + ": no row " + std::string(groups_row.group_key));
  const NameChooser& names = store.Chooser(*member_row);
  const std::string named = SelectionName(s);
  std::vector<std::string> unknown;
  size_t listed = 0;
  for (const auto& m : groups.members) {
    listed += m.size();
    for (std::string& name : names.Unknown(m)) unknown.push_back(std::move(name));
  }
  if (!unknown.empty()) {
    return NotFoundError(named + ": " + std::to_string(unknown.size()) + " of " +
                         std::to_string(listed) + " " + std::string(groups_row.item) +
                         "s are not in " + store.Where() + ": " + QuoteSome(unknown));
  }
  std::vector<Chosen> out;
  for (size_t g = 0; g < groups.names.size(); ++g) {
    Chosen c;
    c.row = member_row;
    c.name = named + " (group " + Quote(groups.names[g]) + ")";
    ASSIGN_OR_RETURN(c.indices, names.Choose(groups.members[g], /*exclude=*/false,
                                             {c.name, member_row->item, store.Where()}));
    out.push_back(std::move(c));
  }
  return out;
}

// The folder's tree: the store cut by `path` (a slice folder, itself sliceable), the groups of
// its last selector (a groups folder: a sliceable folder per group), or ERROR.txt.
std::unique_ptr<Tree> Build(const std::shared_ptr<const SliceOrigin>& origin,
                            const std::vector<Selector>& path, Meta meta) {
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
  const SelectorRows& rows = o.store->Rows();
  std::set<std::string_view> keys;
  std::vector<Chosen> chosen;
  Groups groups;
  const SelectorRow* groups_row = nullptr;  // the last selector's, when it is a groups table
  for (const Selector& s : path) {
    const SelectorRow* row = FindRow(rows, s.key);
    if (row == nullptr) {
      std::string hint;
      for (const SelectorRow* r : rows) {
        if (std::equal(
                s.key.begin(), s.key.end(), r->key.begin(), r->key.end(),
                [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; })) {
          hint = "; keys are lower case: " + std::string(r->key) + "=";
        }
      }
      return fail(InvalidArgumentError("no slice key " + Quote(s.key) + " (this store knows " +
                                       KeysHelp(rows) + hint + ")"));
    }
    if (!keys.insert(row->key).second)
      return fail(InvalidArgumentError("the key " + s.key + "= is given twice on one path"));
    if (!row->rival.empty() && keys.count(row->rival) != 0) {
      return fail(InvalidArgumentError(SelectionName(s) + ": " + std::string(row->rival) +
                                       "= and " + s.key + "= cannot both be given (both choose " +
                                       std::string(row->item) + "s)"));
    }
    if (s.exclude && !row->exclude)
      return fail(InvalidArgumentError(SelectionName(s) + ": " + s.key + "= cannot exclude (^)"));
    if (s.list.empty() && !row->inline_items) {
      return fail(InvalidArgumentError(s.key + "= takes a list: " + s.key + "=@NAME (LISTS/NAME" +
                                       std::string(row->list_ext) + ")"));
    }
    if (!s.list.empty() && row->list_ext.empty()) {
      return fail(InvalidArgumentError(
          s.key + "= takes its items inline, not a list" +
          (row->rival.empty() ? std::string()
                              : " (for a list: " + std::string(row->rival) + "=@NAME)")));
    }
    auto read = Read(o, s);
    if (!read.ok()) return fail(read.status());
    // The views' access follows the lists as read (one may have changed since the lookup).
    if (!s.list.empty()) meta.perm = LimitByList(meta.perm, meta.uid, meta.gid, read->list_stat);
    if (row->selects != Selects::kGroups) {
      auto c = Parse(o, *row, *read);
      if (!c.ok()) return fail(c.status());
      chosen.push_back(std::move(c).value());
      continue;
    }
    auto table = s.list.empty() ? o.store->InlineGroups(s.value)
                                : ParseGroups(read->list_content, "@" + s.list);
    if (!table.ok()) return fail(table.status());
    groups = std::move(table).value();
    if (!s.group) {  // the groups folder itself: the last selector of its path
      groups_row = row;
      continue;
    }
    auto it = std::lower_bound(groups.names.begin(), groups.names.end(), *s.group);
    if (it == groups.names.end() || *it != *s.group)
      return fail(NotFoundError((s.list.empty() ? SelectionName(s) + s.value : "@" + s.list) +
                                ": no group " + Quote(*s.group)));
    const size_t g = it - groups.names.begin();
    Groups one{{groups.names[g]}, {groups.members[g]}};
    auto member = GroupChoices(o, *row, s, one);
    if (!member.ok()) return fail(member.status());
    chosen.push_back(std::move(member->front()));
  }
  const std::string key_prefix = o.index_key.empty() ? "" : o.index_key + "\nslice ";
  if (groups_row != nullptr) {
    auto members = GroupChoices(o, *groups_row, path.back(), groups);
    if (!members.ok()) return fail(members.status());
    auto cut = o.store->CutGroups(chosen, groups, *members);
    if (!cut.ok()) return fail(cut.status());
    if (cut->groups.size() != groups.names.size())
      return fail(InternalError("groups cut does not match the list"));
    ViewSink here(out, kRootIno, meta, key_prefix.empty() ? "" : key_prefix + cut->here_canonical,
                  o.settings);
    here.SetContext({where, "", true});
    if (cut->here) cut->here->AddViews(here);
    for (size_t g = 0; g < groups.names.size(); ++g) {
      auto sub =
          here.Sub(groups.names[g], key_prefix.empty() ? "" : key_prefix + cut->canonical[g]);
      if (!sub)
        return fail(InvalidArgumentError(
            (path.back().list.empty() ? SelectionName(path.back()) + path.back().value
                                      : "@" + path.back().list) +
            ": the group " + Quote(groups.names[g]) + " collides with a file of the folder"));
      sub->SetContext({where + "/" + groups.names[g], cut->groups[g]->Context().stem, true});
      cut->groups[g]->AddViews(*sub);
      std::vector<Selector> group_path = path;
      group_path.back().group = groups.names[g];
      sub->SetResolver(std::make_shared<SliceResolver>(origin, std::move(group_path)));
    }
    return tree;
  }
  std::string canonical;
  auto cut = o.store->Cut(chosen, &canonical);
  if (!cut.ok()) return fail(cut.status());
  ViewSink sink(out, kRootIno, meta, key_prefix.empty() ? "" : key_prefix + canonical, o.settings);
  sink.SetContext({where, (*cut)->Context().stem, true});
  (*cut)->AddViews(sink);
  // A slice that holds views can be cut further.
  sink.SetResolver(std::make_shared<SliceResolver>(origin, path));
  return tree;
}

}  // namespace

Result<Groups> ParseGroups(const std::string& text, const std::string& list) {
  std::map<std::string, std::vector<std::string>> by_group;
  std::set<std::string> seen;
  std::istringstream lines(text.starts_with(kBom) ? text.substr(kBom.size()) : text);
  size_t n = 0;
  for (std::string line; std::getline(lines, line);) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;  // comment lines (a header written as one)
    const size_t tab = line.find('\t');
    if (tab == std::string::npos || tab == 0 || line.find('\t', tab + 1) != std::string::npos) {
      return InvalidArgumentError(list + " line " + std::to_string(n) +
                                  ": not ITEM<TAB>GROUP: " + Quote(line));
    }
    std::string item = line.substr(0, tab), group = line.substr(tab + 1);
    if (group.empty() || group == "." || group == ".." || group.find('/') != std::string::npos ||
        group.find('\0') != std::string::npos || group.size() > 255) {
      return InvalidArgumentError(list + " line " + std::to_string(n) + ": the group " +
                                  Quote(group) + " cannot be a folder's name");
    }
    if (!seen.insert(item).second)
      return InvalidArgumentError(list + ": " + Quote(item) + " is listed twice");
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

Result<Groups> Sliceable::InlineGroups(const std::string& value) const {
  return InvalidArgumentError("groups=" + value + ": this store has no groups of its own");
}

Result<Sliceable::GroupCut> Sliceable::CutGroups(const std::vector<Chosen>& path,
                                                 const Groups& names,
                                                 const std::vector<Chosen>& groups) const {
  GroupCut out;
  for (size_t g = 0; g < groups.size(); ++g) {
    std::vector<Chosen> group_path = path;
    group_path.push_back(groups[g]);
    std::string canonical;
    ASSIGN_OR_RETURN(auto cut, Cut(group_path, &canonical));
    out.groups.push_back(std::move(cut));
    out.canonical.push_back(std::move(canonical));
  }
  return out;
}

std::vector<std::string> ListLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream lines(text.starts_with(kBom) ? text.substr(kBom.size()) : text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) out.push_back(std::move(line));
  }
  return out;
}

std::string ShortIdentity(const std::string& text) {
  if (text.size() <= 200) return text;
  return std::to_string(text.size()) + " bytes, xxh3 " +
         std::to_string(codec::Hash64(text.data(), text.size()));
}

std::string IndicesIdentity(const std::vector<uint32_t>& v) {
  std::string out;
  for (uint32_t i : v) out += std::to_string(i) + ",";
  return ShortIdentity(out);
}

void AttachSlices(ViewSink& sink, std::shared_ptr<const Sliceable> store) {
  auto origin = std::make_shared<SliceOrigin>();
  origin->store = std::move(store);
  origin->settings = sink.settings();
  origin->index_key = sink.index_key();
  origin->meta = sink.meta();
  origin->where = sink.context().where;
  origin->lists_dir = sink.settings().lists_dir;
  sink.SetResolver(
      std::make_shared<const SliceResolver>(std::move(origin), std::vector<Selector>{}));
}

void ShowStore(const OpenedStore& store, ViewSink& sink) {
  sink.SetContext(store.Context());
  store.AddViews(sink);
  if (auto slices = store.Slices(sink)) AttachSlices(sink, std::move(slices));
}

std::optional<Selector> ParseSelector(std::string_view name) {
  // Any KEY=VALUE is a selector (an unknown key, or `Samples=`, gets ERROR.txt naming the
  // known ones); a view's name never holds '='.
  const size_t eq = name.find('=');
  if (eq == std::string_view::npos || eq == 0 || name.find('/') != std::string_view::npos)
    return std::nullopt;
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
    return Build(origin, path, meta);
  };
  return d;
}

}  // namespace omicsfs::vfs
