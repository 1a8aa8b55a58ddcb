// Persisted size indexes: the chunk lengths of a view, stored in index_dir under a key made of
// the store's fingerprint, the view and a schema version; written atomically (temp file +
// rename), checked on load (magic, schema, key, count, checksum). Any mismatch = no index.
#pragma once

#include <chrono>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace omicsfs::text {

inline constexpr uint32_t kIndexSchema = 4;  // 2: VCF chunks are sub-ranges of a variants-chunk; 3:
                                             // ~512 KiB; 4: 10x stand-in names row1…/col1…

class IndexStore {
 public:
  // `dir` empty = persistence off (indexes live in memory only). The directory is created when
  // missing (private, 0700), its parents never: mount/setup.h decides which may be created.
  explicit IndexStore(std::string dir, bool rebuild = false);
  bool enabled() const { return !dir_.empty(); }
  bool rebuild() const { return rebuild_; }

  std::optional<std::vector<uint64_t>> Load(const std::string& key, uint64_t chunks) const;
  // Best effort: failures are logged once and otherwise ignored (falls back to memory).
  void Save(const std::string& key, const std::vector<uint64_t>& lengths) const;
  // Derived bytes (region indexes), checked and written the same way, in `.rix` files.
  std::optional<std::string> LoadBlob(const std::string& key) const;
  void SaveBlob(const std::string& key, const std::string& bytes) const;
  // Removes the index files (size indexes, transposed copies) not used for `max_age`: every
  // use refreshes a file's mtime. Returns how many were removed; 0 or less disables.
  size_t CollectGarbage(std::chrono::seconds max_age) const;

 private:
  std::string PathFor(const std::string& key, const char* ext = ".idx") const;
  void MakeDir() const;
  // The file's payload after its checked header (magic, schema, key), or nullopt.
  std::optional<std::string> LoadFramed(const std::string& path, const std::string& key,
                                        uint64_t unit) const;
  // The framing (magic, schema, key, count), `payload`, the checksum of both.
  void WriteFramed(const std::string& path, const std::string& key, uint64_t count,
                   std::string_view payload) const;
  void WriteAtomically(const std::string& path, const std::string& key,
                       std::initializer_list<std::string_view> pieces) const;

  std::string dir_;
  bool rebuild_;
};

// A 64-bit FNV-1a hash, for fingerprints and file names.
uint64_t Fnv1a(std::string_view data, uint64_t seed = 0xcbf29ce484222325ull);

}  // namespace omicsfs::text
