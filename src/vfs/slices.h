// Slices: inside a store's folder (and inside every slice folder) a name KEY=VALUE is a folder
// made on lookup (vfs/resolver.h) that holds the store's whole view set over a subset. This is
// the kind-independent part: the selector grammar (`a,b,c`, `@NAME` for a list file in
// `-o lists=DIR`, `^` to exclude), list files (their content, access and freshness), the
// resolver that makes the folders, and their ERROR.txt. What a key selects is the kind's
// (a Sliceable, e.g. VCF Zarr's region=/samples=/format=).
#pragma once

#include <sys/stat.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"
#include "vfs/catalog.h"
#include "vfs/kinds/kind.h"
#include "vfs/resolver.h"
#include "vfs/selectors.h"

namespace omicsfs::vfs {

// One path component KEY=VALUE of a slice, as written.
struct Selector {
  std::string text;      // the whole component
  std::string key;       // "region"
  bool exclude = false;  // VALUE began with '^'
  std::string list;      // @NAME: the list's name; empty: the items are inline
  std::string value;     // VALUE without '^' (and without "@NAME")
  // A group's folder inside groups=@NAME/: the group's name. Its selection is the groups row's
  // group_key over the group's members (e.g. cells=<the group's barcodes>).
  std::optional<std::string> group;
};

// A selector with its items: the inline VALUE split at ',' or the list's lines.
struct Selection {
  Selector selector;
  std::vector<std::string> items;
  std::string list_content;  // a list's text, as read (the slice's identity includes it)
  struct stat list_stat {};  // the list's, as read
};

// A selector in its typed form, parsed once at lookup by the selector table (vfs/selectors.h):
// what the kind applies.
struct Chosen {
  const SelectorRow* row = nullptr;
  std::string name;  // as messages name it: "samples=@cases", "cells=^@few"
  std::vector<uint32_t>
      indices;  // kNames: positions in the order chosen; kFields: kept, in store order
  std::vector<RegionAt> regions;  // kRegions, kBed: as given
  std::string value;              // kCondition: the value as written (without a leading ^), or
                                  // the list's text
  bool exclude = false;           // kCondition: the value began with ^
};

// groups=@NAME: LISTS/NAME.tsv, one `ITEM<TAB>GROUP` line per item (a Seurat/ArchR cluster table).
struct Groups {
  std::vector<std::string> names;                 // sorted bytewise
  std::vector<std::vector<std::string>> members;  // per group, in the file's order
};

// The groups of a list's text: each line ITEM<TAB>GROUP (empty lines and lines starting with '#'
// skipped; a UTF-8 byte-order mark and CRLF line ends accepted); an item at most once; a group
// name must be a file name (not empty, `.`, `..`, no `/`, at most 255 bytes).
Result<Groups> ParseGroups(const std::string& text, const std::string& list);
// A list's lines: a UTF-8 byte-order mark and CR before LF dropped, empty lines skipped.
std::vector<std::string> ListLines(const std::string& text);

// nullopt when `name` is not of the form KEY=VALUE (KEY not empty, no '/').
std::optional<Selector> ParseSelector(std::string_view name);

// What a kind offers to slice one opened store: the selector rows it knows and the names they
// choose from; it applies the typed choices.
class Sliceable {
 public:
  virtual ~Sliceable() = default;
  virtual const SelectorRows& Rows() const = 0;
  // The names a row's items are looked up in: its axis (kNames, kFields; for kGroups the
  // axis of its group_key), the contigs (kRegions, kBed). Built once, kept.
  virtual const NameChooser& Chooser(const SelectorRow& row) const = 0;
  // The store as messages name it.
  virtual const std::string& Where() const = 0;
  // The store cut by `path` (in path order, each key at most once): its views, and `canonical`,
  // the subset's identity for persisted sizes and indexes (the same for any order of the same
  // selectors). An error is shown as the folder's ERROR.txt.
  virtual Result<std::unique_ptr<OpenedStore>> Cut(const std::vector<Chosen>& path,
                                                   std::string* canonical) const = 0;

  // A groups folder: the store cut by `path` and by each group in turn, made together so that
  // they may share work (one pass sizes every group), and views of the folder itself
  // (pseudobulk.tsv; may be null).
  struct GroupCut {
    std::unique_ptr<OpenedStore> here;
    std::string here_canonical;  // the folder's own views' identity (as Cut's canonical)
    std::vector<std::unique_ptr<OpenedStore>> groups;  // as Groups::names
    std::vector<std::string> canonical;                // each group's, as Cut's
  };
  // `groups[g]`: group g's members as a choice of the groups row's group_key (checked: every
  // name known and unambiguous). By default each group is Cut on its own and the folder holds
  // nothing else.
  virtual Result<GroupCut> CutGroups(const std::vector<Chosen>& path, const Groups& names,
                                     const std::vector<Chosen>& groups) const;
  // The groups of an inline groups= value (AnnData's `obs:COLUMN`: the store's own clustering),
  // for a kGroups row that takes inline items; by default there are none.
  virtual Result<Groups> InlineGroups(const std::string& value) const;
};

// What every slice folder of one store shares: the store, where its persisted data is keyed and
// how its views are made, and the store folder's metadata.
struct SliceOrigin {
  std::shared_ptr<const Sliceable> store;
  ViewSettings settings;
  std::string index_key;  // the store's; empty: nothing persisted
  Meta meta;              // the store's views' metadata (perm: who may read the store)
  std::string where;      // the store, for messages
  std::string lists_dir;  // -o lists=DIR; empty: no lists
};

// Makes `sink`'s folder the root of `store`'s slices (its views are added by the caller).
void AttachSlices(ViewSink& sink, std::shared_ptr<const Sliceable> store);
// Shows an opened store in `sink`'s folder: its views, and its slices where it has them.
void ShowStore(const OpenedStore& store, ViewSink& sink);
// A part of a canonical identity: itself when short, else its length and hash.
std::string ShortIdentity(const std::string& text);
// Positions as a canonical part: "0,4,2," (ShortIdentity of it).
std::string IndicesIdentity(const std::vector<uint32_t>& v);

// The resolver of a store folder (path empty) or of a slice folder (the selectors above it).
class SliceResolver : public DirResolver {
 public:
  SliceResolver(std::shared_ptr<const SliceOrigin> origin, std::vector<Selector> path)
      : origin_(std::move(origin)), path_(std::move(path)) {}
  std::optional<ResolvedDir> Resolve(std::string_view name) const override;

 private:
  std::shared_ptr<const SliceOrigin> origin_;
  std::vector<Selector> path_;
};

// Readable by the owner of the store only where the list lets the same people read: the mode
// bits of `perm` that `list` (owned by uid/gid) also grants to the same class of user.
mode_t LimitByList(mode_t perm, uid_t uid, gid_t gid, const struct stat& list);

}  // namespace omicsfs::vfs
