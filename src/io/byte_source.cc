#include "io/byte_source.h"

#include <algorithm>

namespace omicsfs::io {

Result<std::string> ByteSource::ReadAll(uint64_t max_bytes) const {
  const uint64_t size = Size();
  if (size > max_bytes) {
    return CorruptError(Describe() + ": " + std::to_string(size) + " bytes is more than the " +
                        std::to_string(max_bytes) + " accepted for it");
  }
  std::string data(static_cast<size_t>(size), '\0');
  RETURN_IF_ERROR(ReadExact(0, data.data(), data.size()));
  return data;
}

Result<std::optional<std::string>> ByteSpace::Get(const std::string& key,
                                                  uint64_t max_bytes) const {
  ASSIGN_OR_RETURN(std::shared_ptr<const ByteSource> source, Open(key));
  if (source == nullptr) return std::optional<std::string>();
  ASSIGN_OR_RETURN(std::string data, source->ReadAll(max_bytes));
  return std::optional<std::string>(std::move(data));
}

Result<std::vector<ByteSpace::KeyInfo>> ByteSpace::ListRecursive(const std::string& prefix) const {
  std::vector<KeyInfo> out;
  std::vector<std::string> folders{prefix};
  while (!folders.empty()) {
    const std::string folder = std::move(folders.back());
    folders.pop_back();
    ASSIGN_OR_RETURN(std::vector<ListEntry> entries, List(folder));
    for (auto& e : entries) {
      std::string key = folder.empty() ? e.name : folder + "/" + e.name;
      if (e.kind == EntryKind::kDirectory) {
        folders.push_back(std::move(key));
      } else {
        out.push_back(KeyInfo{std::move(key), std::move(e.info)});
      }
    }
  }
  std::sort(out.begin(), out.end(),
            [](const KeyInfo& a, const KeyInfo& b) { return a.key < b.key; });
  return out;
}

std::string ByteSpace::Where(const std::string& key) const {
  return key.empty() ? Describe() : Describe() + "/" + key;
}

bool ValidKey(const std::string& key) {
  if (key.empty() || key.front() == '/' || key.back() == '/') return false;
  size_t pos = 0;
  while (pos <= key.size()) {
    size_t slash = key.find('/', pos);
    if (slash == std::string::npos) slash = key.size();
    const std::string_view part(key.data() + pos, slash - pos);
    if (part.empty() || part == "." || part == ".." || part.find('\0') != std::string_view::npos)
      return false;
    pos = slash + 1;
  }
  return true;
}

Status CheckKey(const ByteSpace& space, const std::string& key) {
  if (ValidKey(key)) return OkStatus();
  return InvalidArgumentError(space.Describe() + ": bad key '" + key + "'");
}

Result<std::shared_ptr<const ByteSource>> ByteSpace::OpenForParts(const std::string& key) const {
  if (Parallelism() == 1) return Open(key);
  return UnsupportedError(Where(key) + ": read whole (a request per part would cost more)");
}

namespace {

class PrefixSpace : public ByteSpace {
 public:
  PrefixSpace(std::shared_ptr<const ByteSpace> base, std::string prefix)
      : base_(std::move(base)), prefix_(std::move(prefix)), describe_(base_->Where(prefix_)) {}
  const std::string& Describe() const override { return describe_; }
  Result<std::shared_ptr<const ByteSource>> Open(const std::string& key) const override {
    RETURN_IF_ERROR(CheckKey(*this, key));
    return base_->Open(prefix_ + "/" + key);
  }
  Result<std::vector<ListEntry>> List(const std::string& prefix) const override {
    if (prefix.empty()) return base_->List(prefix_);
    RETURN_IF_ERROR(CheckKey(*this, prefix));
    return base_->List(prefix_ + "/" + prefix);
  }
  Result<std::optional<std::string>> Get(const std::string& key,
                                         uint64_t max_bytes) const override {
    RETURN_IF_ERROR(CheckKey(*this, key));
    return base_->Get(prefix_ + "/" + key, max_bytes);
  }
  Result<std::vector<KeyInfo>> ListRecursive(const std::string& prefix) const override {
    if (!prefix.empty()) RETURN_IF_ERROR(CheckKey(*this, prefix));
    ASSIGN_OR_RETURN(std::vector<KeyInfo> all,
                     base_->ListRecursive(prefix.empty() ? prefix_ : prefix_ + "/" + prefix));
    for (KeyInfo& k : all)
      k.key.erase(0, prefix_.size() + 1);  // the base's keys start with prefix_ + "/"
    return all;
  }
  unsigned Parallelism() const override { return base_->Parallelism(); }
  Result<std::shared_ptr<const ByteSource>> OpenForParts(const std::string& key) const override {
    RETURN_IF_ERROR(CheckKey(*this, key));
    return base_->OpenForParts(prefix_ + "/" + key);
  }

 private:
  std::shared_ptr<const ByteSpace> base_;
  std::string prefix_;
  std::string describe_;
};

}  // namespace

std::shared_ptr<const ByteSpace> SubSpace(std::shared_ptr<const ByteSpace> space,
                                          const std::string& prefix) {
  if (prefix.empty()) return space;
  return std::make_shared<const PrefixSpace>(std::move(space), prefix);
}

}  // namespace omicsfs::io
