// The storage seam (architecture.md (b2)): every store reads its bytes through a ByteSpace of keys
// and ByteSources of positional reads, whatever holds them: a local directory (io/local), an
// HTTP(S) server (io/http), an S3 bucket (io/s3) or a zip archive read through another
// ByteSource (io/zip). Modelled on tensorstore's kvstore: byte ranges, and "missing is a value".
//
// Contract, for every backend (tests/io/byte_space_conformance_test.cc checks it on each):
// - Thread-safe: every method may be called from many threads at once; reads are positional.
// - A ByteSource is one version of one object. Its size and stamp are fixed when it is opened;
//   a read of an object changed since then fails with ESTALE (IoError(..., ESTALE)), never
//   returns a mix of old and new bytes. Each backend owns its change check (local: ctime and the
//   stat stamp; remote: ETag, Last-Modified and size).
// - Keys are relative, '/'-separated, without empty, "." or ".." components (ValidKey); a bad
//   key is InvalidArgument on every backend.
// - Absent keys are values: Open gives nullptr, Get gives nullopt. Errors are errors. A backend
//   may answer absent from its last ListRecursive of a folder holding the key (S3 does): keys
//   added since are seen after the next ListRecursive, which a rescan makes.
// io/ may use codec/ (zip members and HDF5 chunks both need inflate) and cache/ (remote blocks
// are cached under the decode cache's one budget); it never formats text.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace omicsfs::io {

// What a listing or an open says of one object.
struct ObjectInfo {
  uint64_t size = 0;
  struct timespec mtime {};
  // Read bits as the backend grants them (local: the file's; remote: 0444).
  mode_t perm = 0444;
  // One version of the object: equal stamps mean equal bytes (local: size, mtime, ctime, mode,
  // inode; remote: size, ETag, Last-Modified). Persisted indexes and rescans compare it.
  std::string stamp;
};

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // The path or URL, for error messages.
  virtual const std::string& Describe() const = 0;
  virtual const ObjectInfo& Info() const = 0;
  uint64_t Size() const { return Info().size; }
  // Exactly `length` bytes at `offset`. A range past the end is Corrupt (naming the object and
  // range); an object changed since it was opened is ESTALE.
  virtual Status ReadExact(uint64_t offset, void* out, size_t length) const = 0;
  // The whole object; Corrupt when it is larger than `max_bytes`.
  Result<std::string> ReadAll(uint64_t max_bytes) const;
  // Memory this source holds while it lives (an entry inflated when opened); 0 for sources
  // that read their bytes when asked. A cache keeping the source counts it.
  virtual uint64_t ResidentBytes() const { return 0; }
};

enum class EntryKind { kFile, kDirectory };

struct ListEntry {
  std::string name;  // one component
  EntryKind kind = EntryKind::kFile;
  ObjectInfo info;  // files; directories carry what the backend knows (local: stat; S3: nothing)
};

class ByteSpace {
 public:
  virtual ~ByteSpace() = default;
  // The root path or URL, for error messages ("/data/x.vcz", "s3://bucket/x.vcz").
  virtual const std::string& Describe() const = 0;
  // The object under `key`, or nullptr when there is none.
  virtual Result<std::shared_ptr<const ByteSource>> Open(const std::string& key) const = 0;
  // The entries directly under `prefix` ("" = the root), sorted by name. A missing prefix lists
  // as empty. Backends without listings (plain HTTP) answer from what they were told the keys
  // are (consolidated metadata, fixed names) and say so in Unsupported when they know nothing.
  virtual Result<std::vector<ListEntry>> List(const std::string& prefix) const = 0;
  // Every object below the folder `prefix` ("" = all), keys relative to the space's root,
  // sorted. The default walks List; S3 answers with one paginated listing.
  struct KeyInfo {
    std::string key;
    ObjectInfo info;
  };
  virtual Result<std::vector<KeyInfo>> ListRecursive(const std::string& prefix) const;
  // The whole object under `key`, nullopt when absent; one request on remote backends.
  // Corrupt when larger than `max_bytes`.
  virtual Result<std::optional<std::string>> Get(const std::string& key, uint64_t max_bytes) const;
  // Where `key` lives, for messages: Describe() + "/" + key.
  std::string Where(const std::string& key) const;
  // How many requests to this space one reader gains by having in flight at once: 1 where a read
  // costs no round trip (local files, memory, zip entries); more on remote backends, so that a
  // reader needing several objects (a Zarr record range's arrays) overlaps their latencies.
  virtual unsigned Parallelism() const { return 1; }
  // The object under `key` for a reader that needs a few ranges of it (a Zarr chunk's header and
  // some of its blosc blocks; nullptr when absent), where that beats one Get of the whole: where
  // a range costs no round trip (Parallelism() 1), Open(key); a remote backend opens objects it
  // knows, without a request, to be large enough, reads going straight to the server (the
  // reader keeps what it decodes: no block cache to fetch a MiB around each range).
  // Unsupported elsewhere.
  virtual Result<std::shared_ptr<const ByteSource>> OpenForParts(const std::string& key) const;
};

// A ByteSpace seen from one of its folders: keys are relative to `prefix` (which ValidKey
// accepts). Describe() is the folder's path or URL.
std::shared_ptr<const ByteSpace> SubSpace(std::shared_ptr<const ByteSpace> space,
                                          const std::string& prefix);

// Whether `key` is relative, '/'-separated, with no empty, "." or ".." component.
bool ValidKey(const std::string& key);
// InvalidArgument naming the space and the key when !ValidKey(key).
Status CheckKey(const ByteSpace& space, const std::string& key);

}  // namespace omicsfs::io
