// The zip backend over an arbitrary archive: open it (end records, central directory, libzip's
// parse of the same bytes), then list every folder and read every entry whole and in part.
#include <cstring>
#include <memory>
#include <string>

#include "io/zip/zip_space.h"

namespace {

using omicsfs::Status;
using omicsfs::io::ByteSource;
using omicsfs::io::ByteSpace;
using omicsfs::io::EntryKind;
using omicsfs::io::ObjectInfo;

class InputSource : public ByteSource {
 public:
  explicit InputSource(std::string bytes) : bytes_(std::move(bytes)) {
    info_.size = bytes_.size();
    info_.stamp = "fuzz";
  }
  const std::string& Describe() const override { return name_; }
  const ObjectInfo& Info() const override { return info_; }
  Status ReadExact(uint64_t offset, void* out, size_t length) const override {
    if (offset > bytes_.size() || length > bytes_.size() - offset) {
      return omicsfs::CorruptError("past the end");
    }
    if (length > 0) std::memcpy(out, bytes_.data() + offset, length);
    return omicsfs::OkStatus();
  }

 private:
  std::string name_ = "fuzz.zip";
  std::string bytes_;
  ObjectInfo info_;
};

constexpr uint64_t kMaxRead = uint64_t{1} << 22;

void ReadEntry(const ByteSpace& space, const std::string& key) {
  (void)space.Get(key, kMaxRead);
  auto src = space.Open(key);
  if (!src.ok() || *src == nullptr || (*src)->Size() > kMaxRead) return;
  (void)(*src)->ReadAll(kMaxRead);
  const uint64_t size = (*src)->Size();
  char buf[16];
  const size_t n = static_cast<size_t>(std::min<uint64_t>(sizeof(buf), size / 2));
  (void)(*src)->ReadExact(size / 3, buf, n);
}

void Walk(const ByteSpace& space, const std::string& prefix, int depth) {
  auto listed = space.List(prefix);
  if (!listed.ok() || depth > 32) return;
  for (const auto& e : *listed) {
    const std::string key = prefix.empty() ? e.name : prefix + "/" + e.name;
    if (e.kind == EntryKind::kDirectory) {
      Walk(space, key, depth + 1);
    } else {
      ReadEntry(space, key);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto archive =
      std::make_shared<const InputSource>(std::string(reinterpret_cast<const char*>(data), size));
  auto space = omicsfs::io::OpenZipSpace(archive);
  if (space.ok()) Walk(**space, "", 0);
  return 0;
}
