#include "text/index_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "codec/hash.h"
#include "util/bytes.h"
#include "util/file.h"
#include "util/fs.h"
#include "util/log.h"

namespace omicsfs::text {
namespace {

// The framing's magic; its last digit names the checksum: 1 a byte-wise FNV-1a (~0.3-1 GB/s: 0.2 s
// and more for a 125 MB bigWig, on save and on every load), 2 XXH3 (~10x faster). Files of
// either are read; new files are written with 2.
constexpr char kMagic[8] = {'O', 'M', 'X', 'I', 'D', 'X', '0', '2'};
constexpr char kMagicFnv[8] = {'O', 'M', 'X', 'I', 'D', 'X', '0', '1'};

uint64_t Checksum(std::string_view d, bool fnv) { return fnv ? Fnv1a(d) : codec::Hash64({d}); }

}  // namespace

uint64_t Fnv1a(std::string_view data, uint64_t h) {
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string IndexStore::PathFor(const std::string& key, const char* ext) const {
  char name[32];
  std::snprintf(name, sizeof(name), "%016llx%s", static_cast<unsigned long long>(Fnv1a(key)), ext);
  return dir_ + "/" + name;
}

// The framing both kinds share: magic, schema, key, count, `count` units of `unit` bytes, checksum.
// Returns the units' bytes when every check passes (and marks the file used).
std::optional<std::string> IndexStore::LoadFramed(const std::string& path, const std::string& key,
                                                  uint64_t unit) const {
  if (!enabled() || rebuild_) return std::nullopt;
  auto data = ReadWholeFile(path, size_t{1} << 34);
  if (!data.ok()) return std::nullopt;
  std::string& d = *data;
  const size_t head = 8 + 4 + 8 + key.size() + 8;
  if (d.size() < head + 8) return std::nullopt;
  const bool fnv = std::memcmp(d.data(), kMagicFnv, 8) == 0;
  if (!fnv && std::memcmp(d.data(), kMagic, 8) != 0) return std::nullopt;
  uint32_t schema;
  uint64_t key_len, count, sum;
  std::memcpy(&schema, d.data() + 8, 4);
  std::memcpy(&key_len, d.data() + 12, 8);
  if (schema != kIndexSchema || key_len != key.size() || d.compare(20, key.size(), key) != 0)
    return std::nullopt;
  std::memcpy(&count, d.data() + 20 + key.size(), 8);
  if (count > (d.size() - head - 8) / unit || d.size() != head + unit * count + 8)
    return std::nullopt;
  std::memcpy(&sum, d.data() + d.size() - 8, 8);
  if (Checksum(std::string_view(d).substr(0, d.size() - 8), fnv) != sum) return std::nullopt;
  TouchFile(path);  // mtime = last use, for CollectGarbage
  // In place: a blob of tens of MB (an HDF5 view's image) is not copied into fresh memory.
  d.erase(0, head);
  d.resize(unit * count);
  return std::move(d);
}

std::optional<std::string> IndexStore::LoadBlob(const std::string& key) const {
  return LoadFramed(PathFor(key, ".rix"), key, 1);
}

void IndexStore::SaveBlob(const std::string& key, const std::string& bytes) const {
  if (!enabled()) return;
  // The size index's framing, with bytes for lengths; the bytes (a bigWig: 100 MB and more)
  // written from where they are, not copied behind the header first.
  WriteFramed(PathFor(key, ".rix"), key, bytes.size(), bytes);
}

void IndexStore::WriteFramed(const std::string& path, const std::string& key, uint64_t count,
                             std::string_view payload) const {
  std::string head(kMagic, 8);
  head.append(reinterpret_cast<const char*>(&kIndexSchema), 4);
  PutU64(&head, key.size());
  head += key;
  PutU64(&head, count);
  std::string tail;
  PutU64(&tail, codec::Hash64({head, payload}));
  WriteAtomically(path, key, {head, payload, tail});
}

std::optional<std::vector<uint64_t>> IndexStore::Load(const std::string& key,
                                                      uint64_t chunks) const {
  auto payload = LoadFramed(PathFor(key), key, 8);
  if (!payload || payload->size() != 8 * chunks) return std::nullopt;
  std::vector<uint64_t> lengths(chunks);
  if (chunks) std::memcpy(lengths.data(), payload->data(), payload->size());
  return lengths;
}

size_t IndexStore::CollectGarbage(std::chrono::seconds max_age) const {
  if (!enabled() || max_age.count() <= 0) return 0;
  DIR* d = ::opendir(dir_.c_str());
  if (d == nullptr) return 0;
  const time_t cutoff = ::time(nullptr) - static_cast<time_t>(max_age.count());
  size_t removed = 0;
  while (struct dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    // Only what omicsfs writes: 16 hex digits + .idx / .csr (and their stale temp files).
    if (name.size() < 20 || name.find_first_not_of("0123456789abcdef") != 16) continue;
    const std::string ext = name.substr(16, 4);
    if (ext != ".idx" && ext != ".csr" && ext != ".rix") continue;
    const std::string path = dir_ + "/" + name;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_mtime >= cutoff) continue;
    if (::unlink(path.c_str()) == 0) ++removed;
  }
  ::closedir(d);
  if (removed > 0)
    LogInfo(dir_ + ": removed " + std::to_string(removed) + " index files unused for " +
            std::to_string(max_age.count() / 86400) + " days");
  return removed;
}

IndexStore::IndexStore(std::string dir, bool rebuild) : dir_(std::move(dir)), rebuild_(rebuild) {
  MakeDir();
}

void IndexStore::MakeDir() const {
  if (!enabled()) return;
  ::mkdir(dir_.c_str(), 0700);  // failures show when an index is saved (the commands create it)
}

void IndexStore::Save(const std::string& key, const std::vector<uint64_t>& lengths) const {
  if (!enabled()) return;
  WriteFramed(PathFor(key), key, lengths.size(),
              std::string_view(reinterpret_cast<const char*>(lengths.data()), lengths.size() * 8));
}

void IndexStore::WriteAtomically(const std::string& path, const std::string& key,
                                 std::initializer_list<std::string_view> pieces) const {
  static std::atomic<bool> warned{false};
  MakeDir();  // removed since the mount began
  const std::string tmp =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(Fnv1a(key) & 0xffff);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  bool ok = fd >= 0;
  for (std::string_view d : pieces) {
    for (size_t done = 0; ok && done < d.size();) {
      ssize_t n = ::write(fd, d.data() + done, d.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        ok = false;
      else
        done += static_cast<size_t>(n);
    }
  }
  if (fd >= 0) ok = (::fsync(fd) == 0) && ok, ::close(fd);
  ok = ok && ::rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) {
    ::unlink(tmp.c_str());
    if (!warned.exchange(true))
      LogWarning("index_dir " + dir_ + " is not writable; size indexes stay in memory");
  }
}

}  // namespace omicsfs::text
