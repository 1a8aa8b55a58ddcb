#include "vfs/catalog.h"

#include "text/bgzf_view.h"
#include "text/tabix_source.h"
#include "vfs/files.h"

namespace omicsfs::vfs {
namespace {

// A region index, withdrawn from its folder once tabix is found to refuse its view's records.
class RegionIndexContent : public ByteViewContent {
 public:
  RegionIndexContent(std::shared_ptr<const text::ByteView> view,
                     std::shared_ptr<const text::TabixIndexSource> source)
      : ByteViewContent(std::move(view)), source_(std::move(source)) {}
  std::optional<std::string> Withdrawn() const override {
    auto refused = source_->Refusal();
    if (!refused) return std::nullopt;
    return source_->Describe() + ": cannot exist: tabix refuses its records (" +
           refused->message() + ")";
  }
  // Sized, or built by a pass: it exists. (Loaded from index_dir but not read yet: not known
  // here without reading the file, so still "may".)
  bool MayBeWithdrawn() const override { return !view().SizeKnown() && !source_->Decided(); }

 private:
  std::shared_ptr<const text::TabixIndexSource> source_;
};

}  // namespace

std::string ViewName(std::string_view pattern, const std::string& stem) {
  if (pattern.starts_with("STEM")) return stem + std::string(pattern.substr(4));
  return std::string(pattern);
}

std::string GroupPhrase(const std::vector<std::string>& names, const std::string& stem) {
  std::string out;
  for (const auto& n : names) {
    if (out.empty()) {
      out = n;
    } else {
      out += "/" + (!stem.empty() && n.starts_with(stem) ? n.substr(stem.size()) : n);
    }
  }
  return out;
}

std::shared_ptr<const text::VirtualTextFile> ViewSink::MakeText(
    const std::string& view, std::shared_ptr<const text::RecordSource> source) const {
  text::SizingOptions sizing = settings_->sizing;
  if (!index_key_.empty()) sizing.index_key = index_key_ + "\nview " + view;
  return std::make_shared<const text::VirtualTextFile>(std::move(source), settings_->pool, sizing);
}

std::shared_ptr<const text::H5FileView> ViewSink::MakeH5File(
    const std::string& view, text::H5FileView::PlanFn plan,
    std::shared_ptr<const text::H5ArrayRenderer> renderer) const {
  text::SizingOptions sizing = settings_->sizing;
  sizing.index_key = index_key_.empty() ? "" : index_key_ + "\nview " + view;
  return std::make_shared<const text::H5FileView>(std::move(plan), std::move(renderer), sizing,
                                                  view + " of " + context_.where);
}

Ino ViewSink::MakeDirs(const std::string& path) const {
  Ino at = dir_;
  for (size_t from = 0; at != 0 && from < path.size();) {
    size_t slash = path.find('/', from);
    if (slash == std::string::npos) slash = path.size();
    at = out_->AddDir(at, path.substr(from, slash - from), meta_, /*from_file=*/true);
    from = slash + 1;
  }
  return at;
}

void ViewSink::AddView(const std::string& path, std::shared_ptr<const text::ByteView> view) {
  AddContent(path, std::make_shared<const ByteViewContent>(std::move(view)));
}

void ViewSink::AddContent(const std::string& path, std::shared_ptr<const FileContent> content) {
  const size_t slash = path.rfind('/');
  const Ino at = slash == std::string::npos ? dir_ : MakeDirs(path.substr(0, slash));
  if (at != 0) out_->AddFile(at, path.substr(slash + 1), meta_, std::move(content));
}

void ViewSink::AddStoredGz(const std::string& path, std::shared_ptr<const text::ByteView> plain,
                           codec::bgzf::StoredLayout layout) {
  AddView(path, std::make_shared<const text::BgzfStoredView>(
                    std::move(plain), path + " of " + context_.where, layout));
}

void ViewSink::AddRegionIndex(const std::string& gz,
                              std::shared_ptr<const text::VirtualTextFile> plain,
                              text::TabixPreset preset, bool csi,
                              codec::bgzf::StoredLayout layout) {
  const std::string index = gz + (csi ? ".csi" : ".tbi");
  text::TabixIndexSource::Options o;
  o.preset = preset;
  o.csi = csi;
  o.store = settings_->sizing.index;
  o.layout = layout;
  if (!index_key_.empty()) o.key = index_key_ + "\nregion index " + index;
  // Its virtual offsets are the layout's: an index persisted for `bgzip -l 0` bytes (under the
  // plain key) never serves a twin of another layout.
  if (!o.key.empty() && layout.first != codec::bgzf::kBlockPayload) {
    o.key += "\nbgzf first block " + std::to_string(layout.first);
  }
  o.threads = settings_->sizing.threads;
  const std::string describe = index + " of " + context_.where;
  Withdrawals* withdrawals = settings_->withdrawals;
  // An index tabix refuses for these records is not listed: it cannot exist. A pass of an earlier
  // mount found it (index_dir keeps the verdict under the store's fingerprint), or one of this
  // mount will, and the file is withdrawn then (RegionIndexContent).
  if (auto why = text::TabixIndexSource::PersistedRefusal(o)) {
    LogInfo(describe + ": not listed: tabix refuses its records (" + *why +
            "), as index_dir records");
    if (withdrawals != nullptr) withdrawals->Add(describe, *why, /*found=*/false);
    return;
  }
  if (withdrawals != nullptr) withdrawals->Remove(describe);  // made anew: its store changed
  o.on_refused = [describe, withdrawals](const Status& why) {
    LogWarning(describe + ": cannot exist: tabix refuses its records (" + why.message() +
               "); no longer listed, nor by later mounts with this index_dir");
    if (withdrawals != nullptr) withdrawals->Add(describe, why.message(), /*found=*/true);
  };
  auto source = std::make_shared<const text::TabixIndexSource>(plain, o, describe);
  plain->AddSpanConsumer(source);  // built by the view's sizing pass when that runs
  auto raw = std::make_shared<const text::VirtualTextFile>(source, settings_->pool);
  auto view = std::make_shared<const text::BgzfDeflatedView>(raw, settings_->pool, describe);
  AddContent(index, std::make_shared<const RegionIndexContent>(std::move(view), std::move(source)));
}

void ViewSink::SetResolver(std::shared_ptr<const DirResolver> resolver) {
  out_->tree().node(dir_).resolver = std::move(resolver);
}

void ViewSink::AddError(const Status& status) {
  LogError(status.message());
  out_->AddFile(dir_, "ERROR.txt", meta_,
                std::make_shared<const FixedTextContent>(status.ToString() + "\n"));
}

std::optional<ViewSink> ViewSink::Sub(const std::string& path, std::string index_key) const {
  const Ino at = MakeDirs(path);
  if (at == 0) return std::nullopt;
  ViewSink sub(*out_, at, meta_, std::move(index_key), *settings_);
  sub.context_ = context_;
  return sub;
}

}  // namespace omicsfs::vfs
