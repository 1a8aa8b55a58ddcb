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

namespace omicsfs::vfs {

// One path component KEY=VALUE of a slice, as written.
struct Selector {
  std::string text;   // the whole component
  std::string key;    // "region"
  bool exclude = false;  // VALUE began with '^'
  std::string list;   // @NAME: the list's name; empty: the items are inline
  std::string value;  // VALUE without '^' (and without "@NAME")
  // A group's folder inside groups=@NAME/: the group's name. Its selection is the kind's
  // GroupsSelect() key over the group's members (e.g. cells=<the group's barcodes>).
  std::optional<std::string> group;
};

// A selector with its items: the inline VALUE split at ',' or the list's lines.
struct Selection {
  Selector selector;
  std::vector<std::string> items;
  std::string list_content;  // a list's text, as read (the slice's identity includes it)
  struct stat list_stat {};  // the list's, as read
};

// groups=@NAME: LISTS/NAME.tsv, one `ITEM<TAB>GROUP` line per item (a Seurat/ArchR cluster table).
struct Groups {
  std::vector<std::string> names;                 // sorted bytewise
  std::vector<std::vector<std::string>> members;  // per group, in the file's order
};

// The groups of a list's text: each line ITEM<TAB>GROUP (empty lines and lines starting with '#'
// skipped); an item at most once; a group
// name must be a file name (not empty, `.`, `..`, no `/`, at most 255 bytes).
Result<Groups> ParseGroups(const std::string& text, const std::string& list);

// nullopt when `name` is not of the form KEY=VALUE (KEY: [a-z]+).
std::optional<Selector> ParseSelector(std::string_view name);

// What a kind offers to slice one opened store.
class Sliceable {
 public:
  virtual ~Sliceable() = default;
  // The keys it knows, for messages ("region=, regions=@NAME, samples=, format=").
  virtual std::string KeysHelp() const = 0;
  virtual bool Knows(const std::string& key) const = 0;
  // The extension of the list file a key reads (`@cases` → cases.txt; regions: .bed).
  virtual std::string ListExtension(const std::string& key) const { return key == "groups" ? ".tsv" : ".txt"; }
  // The store cut by `path` (the path's selectors in order, each key at most once, lists read):
  // its views, and `canonical`, the subset's identity for persisted sizes and indexes (the same
  // for any order of the same selectors). An error is shown as the folder's ERROR.txt.
  virtual Result<std::unique_ptr<OpenedStore>> Cut(const std::vector<Selection>& path, std::string* canonical) const = 0;

  // groups=@NAME (Knows("groups") must say so too): the key each group's folder selects by
  // ("cells", "cols"); "" when the kind has no groups.
  virtual std::string GroupsSelect() const { return ""; }
  // A groups folder: the store cut by `path` and by each group in turn (the group's members as
  // a GroupsSelect() selection appended to `path`), made together so that they may share work
  // (one pass sizes every group), and views of the folder itself (pseudobulk.tsv; may be null).
  struct GroupCut {
    std::unique_ptr<OpenedStore> here;
    std::string here_canonical;  // the folder's own views' identity (as Cut's canonical)
    std::vector<std::unique_ptr<OpenedStore>> groups;  // as Groups::names
    std::vector<std::string> canonical;                // each group's, as Cut's
  };
  // By default each group is Cut on its own and the folder holds nothing else.
  virtual Result<GroupCut> CutGroups(const std::vector<Selection>& path, const Selection& groups_list,
                                     const Groups& groups) const;
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

// What the kinds' Sliceables share.
constexpr size_t kShownUnknown = 10;  // the unknown names a message lists
// How a selection is named in messages: "samples=@cases", "cells=^@few", "region=".
std::string SelectionName(const Selection& s);
// At most `most` items joined by ", ", then ", ..." when there are more.
std::string JoinSome(const std::vector<std::string>& items, size_t most = kShownUnknown);
// A part of a canonical identity: itself when short, else its length and hash.
std::string ShortIdentity(const std::string& text);
// A region as written: CHR, CHR:BEG, CHR:BEG-, CHR:BEG-END (1-based positions, END >= BEG);
// CHR is the whole text when `known` knows it (names holding ':'), else what precedes the last
// ':'. What CHR:BEG means is the kind's (bcftools: that position; tabix: to the end).
struct RegionText {
  std::string chr;
  std::optional<uint64_t> begin, end;
  bool dash = false;  // CHR:BEG-…
};
Result<RegionText> ParseRegionText(const std::string& text, const std::function<bool(const std::string&)>& known,
                                   const std::string& chromosome, const std::string& store);
// A BED line: CHROM, START, END (0-based, half-open; tabs or spaces); nullopt for the header
// lines bcftools and tabix skip (#, track, browser).
struct BedLine {
  std::string chrom;
  uint64_t start = 0, end = 0;
};
Result<std::optional<BedLine>> ParseBedLine(const std::string& line, const std::string& list);

// Makes `sink`'s folder the root of `store`'s slices (its views are added by the caller).
void AttachSlices(ViewSink& sink, std::shared_ptr<const Sliceable> store, std::string where);

// A selection of `key` over `items` (inline, as a group's members are given to Cut).
Selection SelectionOf(std::string key, std::vector<std::string> items, std::string text);

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
