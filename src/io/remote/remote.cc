#include "io/remote/remote.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <iterator>

#include "io/http/http_byte_space.h"
#include "io/s3/s3_byte_space.h"

namespace omicsfs::io {
namespace {

bool StartsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

bool EndsWith(const std::string& s, const std::string& e) {
  return s.size() > e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

// One HDF5 file: NAME.h5, NAME.hdf5, NAME.h5ad (AnnData).
bool IsHdf5Object(const std::string& url) {
  return EndsWith(url, ".h5") || EndsWith(url, ".hdf5") || EndsWith(url, ".h5ad");
}

// "…/NAME.datg", "…/NAME.vcz.zip" or "…/NAME.h5" → ("…", "NAME.…"): SOURCE is one object of its
// folder; otherwise ("url", "").
std::pair<std::string, std::string> SplitObject(std::string url) {
  while (url.size() > 1 && url.back() == '/') url.pop_back();
  const size_t slash = url.rfind('/');
  const bool object = EndsWith(url, ".datg") || EndsWith(url, ".vcz.zip") ||
                      EndsWith(url, ".zarr.zip") || IsHdf5Object(url);
  if (!object || slash == std::string::npos) return {url, ""};
  return {url.substr(0, slash), url.substr(slash + 1)};
}

Result<RemoteSource> OpenHttp(const std::string& url, const RemoteOptions& o,
                              const std::vector<std::string>& bpcells_names,
                              std::shared_ptr<BlockCache> cache) {
  ASSIGN_OR_RETURN(std::shared_ptr<http::HttpClient> client, http::HttpClient::Create(o.http));
  RemoteSource r;
  r.cache = cache;
  r.client = client;
  auto [root, object] = SplitObject(url);
  std::vector<std::string> keys;
  if (EndsWith(object, ".zip") || IsHdf5Object(object)) {
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

Result<RemoteSource> OpenS3(const std::string& url, const RemoteOptions& o,
                            std::shared_ptr<BlockCache> cache) {
  s3::S3Options s3o;
  s3o.endpoint = o.s3_endpoint;
  s3o.region = o.s3_region;
  s3o.anonymous = o.s3_anonymous;
  s3o.parts_min = o.s3_parts_min;
  auto [root, object] = SplitObject(url);
  ASSIGN_OR_RETURN(auto space, s3::ConnectS3(root, s3o, o.http, cache));
  RemoteSource r;
  r.key = object;
  r.cache = std::move(cache);
  r.client = std::shared_ptr<const http::HttpClient>(space, &space->client());
  r.space = std::move(space);
  return r;
}

std::chrono::milliseconds Millis(const std::string& v) {
  return std::chrono::milliseconds(std::stoll(v));
}

}  // namespace

Result<std::shared_ptr<const ByteSource>> OpenRemoteObject(const std::string& url,
                                                           const RemoteOptions& o) {
  std::shared_ptr<BlockCache> cache;
  if (o.pool != nullptr) cache = BlockCache::Create(o.pool, {}, !o.defer_threads);
  std::shared_ptr<const ByteSource> source;
  if (StartsWith(url, "http://") || StartsWith(url, "https://")) {
    ASSIGN_OR_RETURN(std::shared_ptr<http::HttpClient> client, http::HttpClient::Create(o.http));
    ASSIGN_OR_RETURN(source, http::OpenHttpObject(std::move(client), url, std::move(cache)));
  } else if (StartsWith(url, "s3://")) {
    const size_t slash = url.rfind('/');
    if (slash == std::string::npos || slash < 5 || slash + 1 == url.size()) {
      return InvalidArgumentError(url + ": not the URL of an object (s3://BUCKET/KEY)");
    }
    ASSIGN_OR_RETURN(RemoteSource r, OpenS3(url.substr(0, slash), o, std::move(cache)));
    ASSIGN_OR_RETURN(source, r.space->Open(url.substr(slash + 1)));
  } else {
    return InvalidArgumentError(url + ": not an s3://, http:// or https:// URL");
  }
  if (source == nullptr) return NotFoundError(url + ": no such object");
  return source;
}

std::vector<std::string> RemoteHelperArgs(const RemoteOptions& o) {
  std::vector<std::string> a;
  if (!o.s3_endpoint.empty()) a.insert(a.end(), {"--s3-endpoint", o.s3_endpoint});
  if (!o.s3_region.empty()) a.insert(a.end(), {"--s3-region", o.s3_region});
  if (o.s3_anonymous) a.push_back("--s3-anonymous");
  if (!o.http.ca_file.empty()) a.insert(a.end(), {"--ca-file", o.http.ca_file});
  if (o.http.insecure) a.push_back("--insecure");
  a.insert(a.end(), {"--connect-timeout-ms", std::to_string(o.http.connect_timeout.count()),
                     "--low-speed-time-ms", std::to_string(o.http.low_speed_time.count()),
                     "--request-timeout-ms", std::to_string(o.http.request_timeout.count()),
                     "--retries", std::to_string(o.http.retries)});
  return a;
}

Result<size_t> ParseRemoteHelperArg(const std::vector<std::string>& args, size_t i,
                                    RemoteOptions* o) {
  const std::string& flag = args[i];
  if (flag == "--s3-anonymous") {
    o->s3_anonymous = true;
    return 1;
  }
  if (flag == "--insecure") {
    o->http.insecure = true;
    return 1;
  }
  static const char* const kValued[] = {
      "--s3-endpoint",       "--s3-region",          "--ca-file", "--connect-timeout-ms",
      "--low-speed-time-ms", "--request-timeout-ms", "--retries"};
  if (std::find(std::begin(kValued), std::end(kValued), flag) == std::end(kValued))
    return size_t{0};
  if (i + 1 >= args.size()) return InvalidArgumentError(flag + " needs a value");
  const std::string& v = args[i + 1];
  try {
    if (flag == "--s3-endpoint") o->s3_endpoint = v;
    if (flag == "--s3-region") o->s3_region = v;
    if (flag == "--ca-file") o->http.ca_file = v;
    if (flag == "--connect-timeout-ms") o->http.connect_timeout = Millis(v);
    if (flag == "--low-speed-time-ms") o->http.low_speed_time = Millis(v);
    if (flag == "--request-timeout-ms") o->http.request_timeout = Millis(v);
    if (flag == "--retries") o->http.retries = std::stoi(v);
  } catch (const std::exception&) {
    return InvalidArgumentError(flag + " " + v + ": not a number");
  }
  return size_t{2};
}

bool IsRemoteUrl(const std::string& source) {
  return StartsWith(source, "s3://") || StartsWith(source, "http://") ||
         StartsWith(source, "https://");
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
