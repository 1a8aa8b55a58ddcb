// Slices of a BPCells matrix: rows= / cols= by name (the stand-ins row1…/col1… of genes.tsv and
// barcodes.tsv where the store has no names), `@NAME` lists, `^` to exclude; groups=@NAME over
// columns, whose folder holds pseudobulk.tsv. Each path resolves to a formats::bpcells::
// MatrixSubset of the store; the slice's views are the matrix catalog over Matrix::Slice.
#include <mutex>
#include <string_view>
#include <optional>

#include "text/pseudobulk_source.h"
#include "vfs/kinds/bpcells.h"

namespace omicsfs::vfs {
namespace {

namespace bp = formats::bpcells;
using bp::Matrix;
using bp::MatrixSubset;

std::string Indices(const std::vector<uint32_t>& v) {
  std::string out;
  for (uint32_t i : v) out += std::to_string(i) + ",";
  return ShortIdentity(out);
}

// The subset's identity: the same for any order of the same selectors.
std::string Canonical(const MatrixSubset& s) {
  std::string out;
  if (s.rows) out += "rows " + Indices(*s.rows) + "\n";
  if (s.cols) out += "cols " + Indices(*s.cols) + "\n";
  return out;
}

// One axis's names as the slices match them: the store's, else the stand-ins PREFIX1…. An
// open-addressing table of positions (no allocation per name: 20 000 names index in well under
// a millisecond); a name the store holds more than once finds its first position and the count.
class AxisNames {
 public:
  struct At {
    uint32_t first = 0;  // its first position
    uint32_t count = 0;  // how many rows (columns) bear it
  };

  AxisNames(std::shared_ptr<const Matrix> m, bool rows) : m_(std::move(m)) {
    const std::vector<std::string>& names = rows ? m_->row_names() : m_->col_names();
    const uint32_t n = rows ? m_->rows() : m_->cols();
    if (names.empty()) {
      stand_ins_.reserve(n);
      for (uint32_t i = 0; i < n; ++i) stand_ins_.push_back((rows ? "row" : "col") + std::to_string(uint64_t{i} + 1));
    }
    keys_ = names.empty() ? &stand_ins_ : &names;
    size_t slots = 16;
    while (slots < 2 * size_t{n}) slots <<= 1;
    slots_.assign(slots, At{});
    for (uint32_t i = 0; i < n; ++i) {
      size_t h = Hash((*keys_)[i]);
      while (slots_[h].count != 0 && (*keys_)[slots_[h].first] != (*keys_)[i]) h = (h + 1) & (slots_.size() - 1);
      if (slots_[h].count++ == 0) slots_[h].first = i;
    }
  }
  uint32_t size() const { return static_cast<uint32_t>(keys_->size()); }
  const std::string& name(uint32_t i) const { return (*keys_)[i]; }
  std::optional<At> Find(std::string_view name) const {
    for (size_t h = Hash(name); slots_[h].count != 0; h = (h + 1) & (slots_.size() - 1)) {
      if ((*keys_)[slots_[h].first] == name) return slots_[h];
    }
    return std::nullopt;
  }

 private:
  size_t Hash(std::string_view s) const { return std::hash<std::string_view>()(s) & (slots_.size() - 1); }

  std::shared_ptr<const Matrix> m_;  // holds the names
  std::vector<std::string> stand_ins_;
  const std::vector<std::string>* keys_ = nullptr;
  std::vector<At> slots_;  // count 0: empty
};

class MatrixSliceable : public Sliceable {
 public:
  MatrixSliceable(std::shared_ptr<const Matrix> m, std::string where) : m_(std::move(m)), where_(std::move(where)) {}

  std::string KeysHelp() const override { return "rows=, cols=, groups=@NAME"; }
  bool Knows(const std::string& key) const override { return key == "rows" || key == "cols" || key == "groups"; }
  std::string GroupsSelect() const override { return "cols"; }

  Result<std::unique_ptr<OpenedStore>> Cut(const std::vector<Selection>& path, std::string* canonical) const override {
    ASSIGN_OR_RETURN(MatrixSubset subset, Subset(path));
    *canonical = Canonical(subset);
    ASSIGN_OR_RETURN(auto slice, Matrix::Slice(m_, std::move(subset)));
    return MatrixViewsOf(std::move(slice), /*sliceable=*/false);
  }

  Result<GroupCut> CutGroups(const std::vector<Selection>& path, const Selection& groups_list,
                             const Groups& groups) const override {
    ASSIGN_OR_RETURN(MatrixSubset subset, Subset(path));
    const std::string list = "groups=@" + groups_list.selector.list;
    if (subset.cols) return InvalidArgumentError(list + ": groups of columns cannot follow cols= (both choose columns)");
    const AxisNames& cols = Names(/*rows=*/false);
    GroupCut out;
    std::vector<int32_t> group_of_col(m_->cols(), -1);
    std::vector<std::string> unknown;
    size_t items = 0;
    std::string identity;
    for (size_t g = 0; g < groups.names.size(); ++g) {
      std::vector<uint32_t> members;
      for (const std::string& name : groups.members[g]) {
        ++items;
        const std::optional<AxisNames::At> at = cols.Find(name);
        if (!at) {
          unknown.push_back(name);
          continue;
        }
        if (at->count > 1) return Ambiguous(list, name, *at, "column");
        group_of_col[at->first] = static_cast<int32_t>(g);  // ParseGroups: an item is in one group at most
        members.push_back(at->first);
      }
      identity += groups.names[g] + ":" + Indices(members) + "\n";
      MatrixSubset group{subset.rows, std::move(members)};
      out.canonical.push_back(Canonical(group));
      if (!unknown.empty()) continue;  // reported below, with every group's unknown names
      ASSIGN_OR_RETURN(auto slice, Matrix::Slice(m_, std::move(group)));
      out.groups.push_back(MatrixViewsOf(std::move(slice), /*sliceable=*/false));
    }
    if (!unknown.empty()) {
      return NotFoundError(list + ": " + std::to_string(unknown.size()) + " of " + std::to_string(items) +
                           " IDs are not in " + where_ + ": " + JoinSome(unknown, kShownUnknown));
    }
    std::shared_ptr<const Matrix> base = m_;
    if (subset.rows) {
      ASSIGN_OR_RETURN(base, Matrix::Slice(m_, MatrixSubset{subset.rows, std::nullopt}));
    }
    out.here = std::make_unique<Pseudobulk>(std::make_shared<const text::PseudobulkSource>(
        std::move(base), std::move(group_of_col), groups.names, "pseudobulk.tsv"));
    out.here_canonical = Canonical(subset) + "pseudobulk " + ShortIdentity(identity) + "\n";
    return out;
  }

 private:
  // The groups folder's own view.
  class Pseudobulk : public OpenedStore {
   public:
    explicit Pseudobulk(std::shared_ptr<const text::PseudobulkSource> source) : source_(std::move(source)) {}
    void AddViews(ViewSink& sink) const override { sink.AddView("pseudobulk.tsv", sink.MakeText("pseudobulk.tsv", source_)); }

   private:
    std::shared_ptr<const text::PseudobulkSource> source_;
  };

  Result<MatrixSubset> Subset(const std::vector<Selection>& path) const {
    MatrixSubset subset;
    for (const Selection& sel : path) {
      const std::string& key = sel.selector.key;
      if (key == "rows" || key == "cols") {
        auto& axis = key == "rows" ? subset.rows : subset.cols;
        if (axis) return InvalidArgumentError("the key " + key + "= is given twice on one path");
        const bool rows = key == "rows";
        ASSIGN_OR_RETURN(axis, Chosen(sel, Names(rows), rows ? "row" : "column"));
      } else {
        return InvalidArgumentError(SelectionName(sel) + ": not a selection of rows or columns (this store knows " + KeysHelp() + ")");
      }
    }
    return subset;
  }

  Status Ambiguous(const std::string& named, const std::string& name, const AxisNames::At& at, const std::string& what) const {
    return InvalidArgumentError(named + ": " + name + " is ambiguous: " + std::to_string(at.count) + " " + what + "s of " +
                                where_ + " bear that name (exclude them with ^)");
  }

  // The chosen items in the order given; ^: the others, in store order. A name must be known,
  // given once, and (when chosen, not excluded) name one row/column: ^NAME of a name the store
  // holds more than once drops them all (as datg slices do).
  Result<std::vector<uint32_t>> Chosen(const Selection& sel, const AxisNames& names, const std::string& what) const {
    std::vector<std::string> unknown;
    std::vector<uint32_t> chosen;
    std::vector<bool> seen(names.size());
    bool shared_excluded = false;  // ^ of a name more than one bears
    for (const std::string& id : sel.items) {
      const std::optional<AxisNames::At> at = names.Find(id);
      if (!at) {
        unknown.push_back(id);
        continue;
      }
      if (seen[at->first]) return InvalidArgumentError(SelectionName(sel) + ": " + what + " " + id + " is listed twice");
      if (at->count > 1 && !sel.selector.exclude) return Ambiguous(SelectionName(sel), id, *at, what);
      seen[at->first] = true;
      shared_excluded = shared_excluded || at->count > 1;
      chosen.push_back(at->first);
    }
    if (!unknown.empty()) {
      return NotFoundError(SelectionName(sel) + ": " + std::to_string(unknown.size()) + " of " + std::to_string(sel.items.size()) +
                           " IDs are not in " + where_ + ": " + JoinSome(unknown, kShownUnknown));
    }
    if (sel.selector.exclude) {
      std::vector<uint32_t> rest;
      for (uint32_t i = 0; i < names.size(); ++i) {
        const bool dropped = seen[i] || (shared_excluded && seen[names.Find(names.name(i))->first]);
        if (!dropped) rest.push_back(i);
      }
      chosen = std::move(rest);
    }
    if (chosen.empty()) return InvalidArgumentError(SelectionName(sel) + ": no " + what + " is " + (sel.selector.exclude ? "left" : "chosen"));
    return chosen;
  }

  // An axis's name index, made on its first selection and kept (every lookup of a slice folder
  // resolves names again: a million cells are indexed once, not per lookup).
  const AxisNames& Names(bool rows) const {
    const int a = rows ? 0 : 1;
    std::call_once(names_once_[a], [&] {
      names_[a] = std::make_unique<const AxisNames>(m_, rows);
    });
    return *names_[a];
  }

  std::shared_ptr<const Matrix> m_;
  std::string where_;
  mutable std::once_flag names_once_[2];
  mutable std::unique_ptr<const AxisNames> names_[2];
};

}  // namespace

std::shared_ptr<const Sliceable> MatrixSlices(std::shared_ptr<const formats::bpcells::Matrix> m, std::string where) {
  return std::make_shared<const MatrixSliceable>(std::move(m), std::move(where));
}

}  // namespace omicsfs::vfs
