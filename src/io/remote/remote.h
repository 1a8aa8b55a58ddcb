// A SOURCE named by URL (s3://BUCKET/PREFIX, https://HOST/PATH, http://…) opened as a ByteSpace:
// the one place that chooses a backend for a URL and puts the mount's block cache under it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/byte_source.h"
#include "io/cached_byte_source.h"
#include "io/http/http_client.h"
#include "io/s3/s3_byte_space.h"

namespace omicsfs::io {

struct RemoteOptions {
  std::string s3_endpoint;    // -o s3_endpoint=URL ("" = AWS)
  std::string s3_region;      // -o s3_region=R ("" = us-east-1)
  bool s3_anonymous = false;  // -o s3_anonymous: unsigned requests (public buckets)
  uint64_t s3_parts_min = s3::kPartsMinDefault;  // -o s3_parts=SIZE (s3::S3Options::parts_min)
  http::HttpOptions http;                        // timeouts, retries, TLS (-o ca_file=PATH)
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

// One object by its URL (s3://BUCKET/KEY, http(s)://HOST/PATH, as a remote ByteSource's
// Describe() gives it), read through a block cache of its own when options.pool is set. NotFound
// when there is none. The vetting helper opens remote HDF5 files with it.
Result<std::shared_ptr<const ByteSource>> OpenRemoteObject(const std::string& url,
                                                           const RemoteOptions& options);

// The command-line flags that give a helper process (omicsfs-h5vet) the options it needs to read
// what the daemon reads: endpoint, region, anonymous, CA file, timeouts, retries. Never
// credentials: a helper inherits the environment and reads them as the daemon did.
std::vector<std::string> RemoteHelperArgs(const RemoteOptions& options);
// Takes the flag at args[i] (and its value) into `options`: how many arguments it used, 0 when
// args[i] is not one of RemoteHelperArgs' flags; InvalidArgument for a flag without its value.
Result<size_t> ParseRemoteHelperArg(const std::vector<std::string>& args, size_t i,
                                    RemoteOptions* options);

}  // namespace omicsfs::io
