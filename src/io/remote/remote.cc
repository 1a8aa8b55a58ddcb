#include "io/remote/remote.h"

#include "io/http/http_byte_space.h"
#include "io/s3/s3_byte_space.h"

namespace omicsfs::io {
namespace {

bool StartsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

bool EndsWith(const std::string& s, const std::string& e) {
  return s.size() > e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

// "…/NAME.datg" or "…/NAME.vcz.zip" → ("…", "NAME.…"): SOURCE is one object of its folder;
// otherwise ("url", "").
std::pair<std::string, std::string> SplitObject(std::string url) {
  while (url.size() > 1 && url.back() == '/') url.pop_back();
  const size_t slash = url.rfind('/');
  const bool object = EndsWith(url, ".datg") || EndsWith(url, ".vcz.zip") || EndsWith(url, ".zarr.zip");
  if (!object || slash == std::string::npos) return {url, ""};
  return {url.substr(0, slash), url.substr(slash + 1)};
}

Result<RemoteSource> OpenHttp(const std::string& url, const RemoteOptions& o,
                              const std::vector<std::string>& bpcells_names, std::shared_ptr<BlockCache> cache) {
  ASSIGN_OR_RETURN(std::shared_ptr<http::HttpClient> client, http::HttpClient::Create(o.http));
  RemoteSource r;
  r.cache = cache;
  r.client = client;
  auto [root, object] = SplitObject(url);
  std::vector<std::string> keys;
  if (EndsWith(object, ".zip")) {
    keys = {object};
    r.key = object;
  } else if (!object.empty()) {
    const std::string stem = object.substr(0, object.size() - 5);
    keys = {object, stem + ".rows.txt.gz", stem + ".cols.txt.gz"};
    r.key = object;
  } else {
    ASSIGN_OR_RETURN(keys, http::DiscoverHttpKeys(*client, root, bpcells_names));
  }
  ASSIGN_OR_RETURN(auto space, http::HttpByteSpace::Create(root, client, keys, std::move(cache)));
  r.space = std::move(space);
  return r;
}

Result<RemoteSource> OpenS3(const std::string& url, const RemoteOptions& o, std::shared_ptr<BlockCache> cache) {
  s3::S3Options s3o;
  s3o.endpoint = o.s3_endpoint;
  s3o.region = o.s3_region;
  s3o.anonymous = o.s3_anonymous;
  auto [root, object] = SplitObject(url);
  ASSIGN_OR_RETURN(auto space, s3::ConnectS3(root, s3o, o.http, cache));
  RemoteSource r;
  r.key = object;
  r.cache = std::move(cache);
  r.client = std::shared_ptr<const http::HttpClient>(space, &space->client());
  r.space = std::move(space);
  return r;
}

}  // namespace

bool IsRemoteUrl(const std::string& source) {
  return StartsWith(source, "s3://") || StartsWith(source, "http://") || StartsWith(source, "https://");
}

Result<RemoteSource> OpenRemote(const std::string& url, const RemoteOptions& options,
                                const std::vector<std::string>& bpcells_names) {
  std::shared_ptr<BlockCache> cache;
  if (options.pool != nullptr) cache = BlockCache::Create(options.pool, {}, !options.defer_threads);
  if (StartsWith(url, "s3://")) return OpenS3(url, options, std::move(cache));
  if (StartsWith(url, "http://") || StartsWith(url, "https://")) {
    return OpenHttp(url, options, bpcells_names, std::move(cache));
  }
  return InvalidArgumentError(url + ": not an s3://, http:// or https:// URL");
}

}  // namespace omicsfs::io
