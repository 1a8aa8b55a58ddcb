// A SOURCE named by URL (s3://BUCKET/PREFIX, https://HOST/PATH, http://…) opened as a ByteSpace:
// the one place that chooses a backend for a URL and puts the mount's block cache under it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/byte_source.h"
#include "io/cached_byte_source.h"
#include "io/http/http_client.h"

namespace omicsfs::io {

struct RemoteOptions {
  std::string s3_endpoint;    // -o s3_endpoint=URL ("" = AWS)
  std::string s3_region;      // -o s3_region=R ("" = us-east-1)
  bool s3_anonymous = false;  // -o s3_anonymous: unsigned requests (public buckets)
  http::HttpOptions http;     // timeouts, retries, TLS (-o ca_file=PATH)
  // Remote bytes are cached under the mount's one budget (nullptr: every read is a request).
  cache::CachePool* pool = nullptr;
  // Read-ahead threads start only at BlockCache::Start (a daemon starts them after it forks).
  bool defer_threads = false;
};

// Whether SOURCE names a remote store (s3://, http://, https://) rather than a local path.
bool IsRemoteUrl(const std::string& source);

struct RemoteSource {
  std::shared_ptr<const ByteSpace> space;
  // Empty: SOURCE is the space's root (a folder of stores, or one store). Otherwise SOURCE is
  // this object of the space: a datg matrix, whose companions lie beside it.
  std::string key;
  std::shared_ptr<BlockCache> cache;  // null without a pool
  // Requests made and bytes fetched so far (benchmarks: requests per MB, fetched ÷ needed).
  std::shared_ptr<const http::HttpClient> client;
};

// Opens `url`. HTTP has no listing: a store's keys come from its consolidated Zarr metadata, or,
// for a BPCells directory store, from `bpcells_names` (the array names the format fixes). S3
// checks the credentials at once: a wrong key fails here with S3's message (EACCES).
Result<RemoteSource> OpenRemote(const std::string& url, const RemoteOptions& options,
                                const std::vector<std::string>& bpcells_names);

}  // namespace omicsfs::io
