// Slices of a datg matrix: rows= and cols= by the names of rownames.txt and colnames.txt (inline,
// @NAME lists, ^ to exclude). Each resolves to a formats::datg::DatgSlice of the root matrix (the
// chosen row and column indices, in the order given; store order for ^); the slice's views are
// the store's catalog over it.
#include <mutex>
#include <unordered_map>

#include "vfs/kinds/datg.h"

namespace omicsfs::vfs {
namespace {

using formats::datg::DatgFile;
using formats::datg::DatgSlice;

// One axis's names → their index; a name held by more than one row (column) is marked.
struct NameIndex {
  struct At {
    uint64_t first = 0;  // its first index
    uint64_t count = 0;  // how many rows (columns) bear it
  };
  std::unordered_map<std::string_view, At> at;

  explicit NameIndex(const std::vector<std::string>& names) {
    at.reserve(names.size());
    for (uint64_t i = 0; i < names.size(); ++i) {
      auto [it, fresh] = at.try_emplace(names[i], At{i, 0});
      ++it->second.count;
    }
  }
};

class DatgSliceable : public Sliceable {
 public:
  DatgSliceable(std::shared_ptr<const DatgFile> file, std::string where, std::string base)
      : file_(std::move(file)), where_(std::move(where)), base_(std::move(base)) {}

  std::string KeysHelp() const override { return "rows=, cols="; }
  bool Knows(const std::string& key) const override { return key == "rows" || key == "cols"; }

  Result<std::unique_ptr<OpenedStore>> Cut(const std::vector<Selection>& path, std::string* canonical) const override {
    std::optional<std::vector<uint64_t>> rows, cols;
    for (const Selection& sel : path) {
      const bool on_rows = sel.selector.key == "rows";
      auto& chosen = on_rows ? rows : cols;
      ASSIGN_OR_RETURN(chosen, Choose(sel, on_rows));
    }
    *canonical = Canonical(rows, cols);
    ASSIGN_OR_RETURN(auto slice, DatgSlice::Make(file_, std::move(rows), std::move(cols)));
    return DatgViewsOf(file_, std::move(slice), where_, base_, /*sliceable=*/false);
  }

 private:
  const NameIndex& Index(bool rows) const {
    std::call_once(rows ? row_once_ : col_once_, [&] {
      (rows ? row_index_ : col_index_) = std::make_unique<const NameIndex>(rows ? file_->row_names() : file_->col_names());
    });
    return *(rows ? row_index_ : col_index_);
  }

  // The indices a selection names: in the order given; with ^ every other one, in store order.
  // A name must be known, given once, and (when chosen, not excluded) name a single row/column:
  // ^NAME of a name the store holds twice drops both.
  Result<std::vector<uint64_t>> Choose(const Selection& sel, bool rows) const {
    const char* what = rows ? "row" : "column";
    const std::vector<std::string>& names = rows ? file_->row_names() : file_->col_names();
    if (sel.items.empty()) return InvalidArgumentError(SelectionName(sel) + ": no " + what + " given");
    const NameIndex& index = Index(rows);
    std::vector<std::string> unknown;
    std::vector<uint64_t> chosen;
    std::vector<bool> seen(names.size());
    bool shared_excluded = false;  // ^ of a name more than one bears
    for (const std::string& name : sel.items) {
      auto it = index.at.find(name);
      if (it == index.at.end()) {
        unknown.push_back(name);
        continue;
      }
      const NameIndex::At& at = it->second;
      if (seen[at.first]) return InvalidArgumentError(SelectionName(sel) + ": " + name + " is listed twice");
      if (at.count > 1 && !sel.selector.exclude) {
        return InvalidArgumentError(SelectionName(sel) + ": " + name + " is ambiguous: " + std::to_string(at.count) + " " + what +
                                    "s of " + base_ + " bear that name (exclude them with ^, or select by a list of the others)");
      }
      seen[at.first] = true;
      shared_excluded = shared_excluded || at.count > 1;
      chosen.push_back(at.first);
    }
    if (!unknown.empty()) {
      return NotFoundError(SelectionName(sel) + ": " + std::to_string(unknown.size()) + " of " + std::to_string(sel.items.size()) +
                           " names are not " + what + "s of " + base_ + ": " + JoinSome(unknown, kShownUnknown));
    }
    if (sel.selector.exclude) {
      std::vector<uint64_t> rest;
      for (uint64_t i = 0; i < names.size(); ++i) {
        const bool dropped = seen[i] || (shared_excluded && seen[index.at.find(names[i])->second.first]);
        if (!dropped) rest.push_back(i);
      }
      chosen = std::move(rest);
    }
    if (chosen.empty()) return InvalidArgumentError(SelectionName(sel) + ": no " + std::string(what) + " is left");
    return chosen;
  }

  // The slice's identity (any order of the same selectors gives the same): long parts hashed.
  static std::string Canonical(const std::optional<std::vector<uint64_t>>& rows, const std::optional<std::vector<uint64_t>>& cols) {
    auto part = [](const char* name, const std::vector<uint64_t>& indices) {
      std::string text;
      for (uint64_t i : indices) text += std::to_string(i) + ",";
      return std::string(name) + " " + ShortIdentity(text) + "\n";
    };
    std::string out;
    if (rows) out += part("rows", *rows);
    if (cols) out += part("cols", *cols);
    return out;
  }

  std::shared_ptr<const DatgFile> file_;
  std::string where_, base_;
  mutable std::once_flag row_once_, col_once_;
  mutable std::unique_ptr<const NameIndex> row_index_, col_index_;
};

}  // namespace

std::shared_ptr<const Sliceable> DatgSlices(std::shared_ptr<const DatgFile> file, std::string where, std::string base) {
  return std::make_shared<const DatgSliceable>(std::move(file), std::move(where), std::move(base));
}

}  // namespace omicsfs::vfs
