// One store at an http:// or https:// URL, as a ByteSpace (architecture (b2)).
//
// Plain HTTP has no listing, so the space answers List from keys it was given: those
// DiscoverHttpKeys finds in Zarr consolidated metadata, or a fixed set of names the caller's
// format defines (BPCells array names). Open and Get work for any key, listed or not: the Zarr
// reader opens chunk keys by name, and a 404 is a missing chunk (its fill value).
//
// Sizes in List: the first List of a folder HEADs its files (up to 8 at once) and keeps what they
// said: size, mtime, stamp; listed keys a HEAD does not find are left out. Only metadata keys and
// BPCells arrays are ever listed (a VCF Zarr root: 3 files, each array folder: 2), so this costs a
// few requests per folder, once; chunk keys are never listed.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "io/byte_source.h"
#include "io/cached_byte_source.h"
#include "io/http/http_client.h"

namespace omicsfs::io::http {

// One version of one object at a URL: reads are range GETs with If-Match (http_client.h).
class HttpByteSource : public ByteSource {
 public:
  HttpByteSource(std::shared_ptr<const HttpClient> client, std::string url, RemoteObject object);
  const std::string& Describe() const override { return url_; }
  const ObjectInfo& Info() const override { return info_; }
  Status ReadExact(uint64_t offset, void* out, size_t length) const override;
  const RemoteObject& remote() const { return object_; }

 private:
  std::shared_ptr<const HttpClient> client_;
  std::string url_;
  RemoteObject object_;
  ObjectInfo info_;
};

// The object at `url` (one HEAD), nullptr on 404; read through `cache` when it is given.
Result<std::shared_ptr<const ByteSource>> OpenHttpObject(
    std::shared_ptr<const HttpClient> client, const std::string& url,
    std::shared_ptr<BlockCache> cache = nullptr);

class HttpByteSpace : public ByteSpace {
 public:
  // `url`: the store's root, http:// or https:// (a trailing '/' is dropped). `keys`: what List
  // shows (DiscoverHttpKeys); each must pass ValidKey. `cache`: ranged reads of opened objects
  // go through it (nullptr: every read is a request).
  static Result<std::shared_ptr<HttpByteSpace>> Create(std::string url,
                                                       std::shared_ptr<const HttpClient> client,
                                                       const std::vector<std::string>& keys,
                                                       std::shared_ptr<BlockCache> cache = nullptr);

  const std::string& Describe() const override { return url_; }
  Result<std::shared_ptr<const ByteSource>> Open(const std::string& key) const override;
  Result<std::vector<ListEntry>> List(const std::string& prefix) const override;
  Result<std::optional<std::string>> Get(const std::string& key, uint64_t max_bytes) const override;

  unsigned Parallelism() const override { return client_->Parallelism(); }
  std::string UrlOf(const std::string& key) const { return url_ + "/" + EncodeKeyForUrl(key); }

 private:
  HttpByteSpace(std::string url, std::shared_ptr<const HttpClient> client,
                std::shared_ptr<BlockCache> cache)
      : url_(std::move(url)), client_(std::move(client)), cache_(std::move(cache)) {}

  // The folder's entries with what HEADs said of its files.
  Result<std::vector<ListEntry>> HeadFiles(const std::string& prefix,
                                           const std::vector<ListEntry>& entries) const;

  std::string url_;
  std::shared_ptr<const HttpClient> client_;
  std::shared_ptr<BlockCache> cache_;
  // Each folder ("" = the root) the keys pass through, and its entries sorted by name (files
  // with their info not yet known).
  std::map<std::string, std::vector<ListEntry>> dirs_;
  mutable std::mutex mu_;
  mutable std::map<std::string, std::vector<ListEntry>> listed_;  // folders already HEADed
};

// The keys of the store at `url`, found without a listing. Format knowledge kept here, and only
// this much:
// 1. `.zmetadata` (Zarr v2 consolidated metadata): ".zmetadata" and every key of its "metadata"
//    object (".zgroup", "call_DP/.zarray", ...).
// 2. else `zarr.json` (Zarr v3): "zarr.json", and with inline "consolidated_metadata" the
//    "PATH/zarr.json" of every node it holds. A root `.zgroup` without `.zmetadata` (bio2zarr
//    >= 0.1.8 writes no consolidated metadata) is Unsupported: its arrays cannot be known.
// 3. else, when `fixed_names` is not empty and `version` exists (a BPCells directory store):
//    "version" and those of `fixed_names` a HEAD finds (up to 8 HEADs at once). The names are
//    the caller's (formats/bpcells knows them; io/ does not depend on formats/).
// 4. else Unsupported, naming the URL and what was tried.
// Chunk keys are never listed. Keys that fail ValidKey are Corrupt.
Result<std::vector<std::string>> DiscoverHttpKeys(const HttpClient& client, const std::string& url,
                                                  const std::vector<std::string>& fixed_names);

}  // namespace omicsfs::io::http
