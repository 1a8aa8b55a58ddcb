#include "io/s3/s3_byte_space.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <ctime>
#include <iterator>

#include "io/s3/sigv4.h"

namespace omicsfs::io::s3 {
namespace {

// A listing page of 1000 keys is ~300 KB of XML; 16 MiB bounds a hostile or mistaken server.
constexpr uint64_t kMaxListingBytes = uint64_t{16} << 20;
// Pages one List follows at most: 100 000 keys in one folder, far beyond any store's layout.
constexpr int kMaxPages = 100;
// Pages one ListRecursive follows at most: 10 million keys below one store (a cohort's VCF Zarr
// store of 1 M variant chunks x 10 fields is 10 M keys).
constexpr int kMaxRecursivePages = 10000;
// How long a recursive listing answers List for the folders below it (a store opened right after
// its stamp's listing lists its root: no request). Short: a later List, a rescan's, asks S3.
constexpr std::chrono::seconds kListingFresh{5};

// "size etag mtime-seconds": one version of one object, the same whether it came from a listing
// or a HEAD (their Last-Modified texts differ in form: ISO 8601 vs an HTTP date).
ObjectInfo InfoFor(uint64_t size, const std::string& etag, const struct timespec& mtime) {
  ObjectInfo info;
  info.size = size;
  info.mtime = mtime;
  info.mtime.tv_nsec = 0;
  info.perm = 0444;
  info.stamp = std::to_string(size) + " " + etag + " " + std::to_string(mtime.tv_sec);
  return info;
}

std::optional<uint64_t> ParseSize(const std::string& text) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

}  // namespace

struct S3ByteSpace::Known {
  std::mutex mu;
  std::map<std::string, ListedObject> objects;  // by object key
  // Folders (object key prefixes ending in '/', or "" for the bucket) listed recursively: every
  // object below one of them is in `objects`, so a key below one that is not there is absent.
  std::map<std::string, std::chrono::steady_clock::time_point> complete;  // when listed

  std::optional<ListedObject> Find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = objects.find(key);
    if (it == objects.end()) return std::nullopt;
    return it->second;
  }
  // Whether a complete listing covers `key` and does not hold it.
  bool Absent(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu);
    if (complete.empty() || objects.count(key)) return false;
    if (complete.count("")) return true;
    for (size_t slash = key.find('/'); slash != std::string::npos;
         slash = key.find('/', slash + 1)) {
      if (complete.count(key.substr(0, slash + 1))) return true;
    }
    return false;
  }
  // Whether a complete listing of `full` (a folder's object prefix, ending in '/') or of a
  // folder above it was made less than kListingFresh ago.
  bool FreshlyListed(const std::string& full) {
    std::lock_guard<std::mutex> lock(mu);
    const auto now = std::chrono::steady_clock::now();
    auto fresh = [&](const std::string& prefix) {
      auto it = complete.find(prefix);
      return it != complete.end() && now - it->second < kListingFresh;
    };
    if (fresh("")) return true;
    for (size_t slash = full.find('/'); slash != std::string::npos;
         slash = full.find('/', slash + 1)) {
      if (fresh(full.substr(0, slash + 1))) return true;
    }
    return false;
  }
  // A version gone (ESTALE): forgotten, and no listing that held it counts as complete now.
  void Forget(const std::string& key, const std::string& etag) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = objects.find(key);
    if (it == objects.end() || it->second.etag != etag) return;
    objects.erase(it);
    for (auto c = complete.begin(); c != complete.end();) {
      c = key.compare(0, c->first.size(), c->first) == 0 ? complete.erase(c) : std::next(c);
    }
  }
};

namespace {

// One version of one object: ranged GETs with If-Match (HttpClient::ReadRange).
class S3ByteSource : public ByteSource {
 public:
  S3ByteSource(std::shared_ptr<const http::HttpClient> client, std::string url,
               std::string describe, std::string key, http::RemoteObject object,
               std::shared_ptr<S3ByteSpace::Known> known)
      : client_(std::move(client)),
        url_(std::move(url)),
        describe_(std::move(describe)),
        key_(std::move(key)),
        object_(std::move(object)),
        known_(std::move(known)),
        info_(InfoFor(object_.size, object_.etag, object_.mtime)) {}

  const std::string& Describe() const override { return describe_; }
  const ObjectInfo& Info() const override { return info_; }

  Status ReadExact(uint64_t offset, void* out, size_t length) const override {
    if (offset > object_.size || length > object_.size - offset) {
      return CorruptError(describe_ + ": bytes [" + std::to_string(offset) + ", " +
                          std::to_string(offset + length) + ") are past its end (" +
                          std::to_string(object_.size) + " bytes)");
    }
    Status st = client_->ReadRange(url_, object_, offset, out, length);
    if (!st.ok() && st.sys_errno() == ESTALE) known_->Forget(key_, object_.etag);
    return std::move(st).WithContext(describe_);
  }

 private:
  std::shared_ptr<const http::HttpClient> client_;
  std::string url_, describe_, key_;
  http::RemoteObject object_;  // last_modified left empty: the ETag and size identify it
  std::shared_ptr<S3ByteSpace::Known> known_;
  ObjectInfo info_;
};

// Decoded name/value pairs of an encoded query string.
HeaderList SplitQuery(const std::string& query) {
  HeaderList out;
  size_t begin = 0;
  while (begin < query.size()) {
    size_t end = query.find('&', begin);
    if (end == std::string::npos) end = query.size();
    const std::string part = query.substr(begin, end - begin);
    if (!part.empty()) {
      const size_t eq = part.find('=');
      out.emplace_back(UriDecode(part.substr(0, eq)),
                       eq == std::string::npos ? "" : UriDecode(part.substr(eq + 1)));
    }
    begin = end + 1;
  }
  return out;
}

}  // namespace

Status S3RequestSigner::Sign(http::HttpRequest& request) const {
  ASSIGN_OR_RETURN(UrlParts url, SplitUrl(request.url));
  SigV4Request r;
  r.method = request.method;
  r.host = url.host;
  r.path = UriDecode(url.path);
  r.query = SplitQuery(url.query);
  r.headers = request.headers;
  SigV4Scope scope;
  scope.amz_date = AmzDate(clock_ ? clock_() : std::time(nullptr));
  scope.region = region_;
  for (auto& [name, value] : SignV4(r, credentials_, scope).headers) {
    request.AddHeader(std::move(name), std::move(value));
  }
  return OkStatus();
}

Result<std::shared_ptr<S3ByteSpace>> S3ByteSpace::Create(const std::string& url,
                                                         const S3Options& options,
                                                         Credentials credentials,
                                                         http::HttpOptions http_options,
                                                         std::shared_ptr<BlockCache> cache) {
  ASSIGN_OR_RETURN(S3Location location, ParseS3Url(url));
  ASSIGN_OR_RETURN(S3Endpoint endpoint, S3Endpoint::Make(options.endpoint, options.region));
  std::shared_ptr<S3ByteSpace> space(new S3ByteSpace());
  space->location_ = std::move(location);
  space->endpoint_ = std::move(endpoint);
  space->options_ = options;
  space->describe_ = "s3://" + space->location_.bucket +
                     (space->location_.prefix.empty() ? "" : "/" + space->location_.prefix);
  space->credentials_source_ = credentials.source;
  std::shared_ptr<const http::RequestSigner> signer;
  if (!credentials.anonymous()) {
    signer = std::make_shared<S3RequestSigner>(std::move(credentials), space->endpoint_.region());
  }
  ASSIGN_OR_RETURN(auto client, http::HttpClient::Create(std::move(http_options), signer));
  space->client_ = std::move(client);
  space->cache_ = std::move(cache);
  space->known_ = std::make_shared<Known>();
  const std::string root = space->ObjectKey("");
  auto probe = space->ListAll(root.empty() ? root : root + "/", 1, 1);
  if (!probe.ok()) return std::move(probe).status().WithContext(space->describe_);
  return space;
}

std::string S3ByteSpace::ObjectKey(const std::string& key) const {
  if (location_.prefix.empty()) return key;
  return key.empty() ? location_.prefix : location_.prefix + "/" + key;
}

std::string S3ByteSpace::ObjectUrl(const std::string& key) const {
  return endpoint_.ObjectUrl(location_.bucket, ObjectKey(key));
}

Status S3ByteSpace::ErrorFor(const http::HttpRequest& request,
                             const http::HttpResponse& response) const {
  std::string msg =
      request.method + " " + request.url + ": HTTP " + std::to_string(response.status);
  const std::string s3_error = ParseS3Error(response.body);
  if (!s3_error.empty()) msg += " " + s3_error;
  // AWS names the bucket's region when a request went to, or was signed for, another one
  // (301 PermanentRedirect, 400 AuthorizationHeaderMalformed).
  const std::string bucket_region = response.Header("x-amz-bucket-region");
  if (!bucket_region.empty() && bucket_region != endpoint_.region()) {
    msg += " (the bucket is in " + bucket_region + ": use -o s3_region=" + bucket_region + ")";
  }
  int err = EIO;
  if (response.status == 401 || response.status == 403) {
    err = EACCES;
    msg += credentials_source_ == "anonymous"
               ? " (an anonymous request; set credentials for a private bucket)"
               : " (credentials from " + credentials_source_ + ")";
  }
  return IoError(std::move(msg), err);
}

Result<std::vector<ListPage>> S3ByteSpace::ListAll(const std::string& full_prefix, int max_keys,
                                                   int max_pages,
                                                   const std::string& delimiter) const {
  std::vector<ListPage> pages;
  std::string token;
  for (int page = 0; page < max_pages; ++page) {
    http::HttpRequest request{
        "GET",
        endpoint_.BucketUrl(location_.bucket,
                            ListObjectsQuery(full_prefix, delimiter, token, max_keys)),
        {},
        {}};
    ASSIGN_OR_RETURN(http::HttpResponse response, client_->Send(request, kMaxListingBytes));
    if (response.status != 200) return ErrorFor(request, response);
    ASSIGN_OR_RETURN(ListPage got, ParseListObjectsV2(response.body, request.url));
    const bool more = got.truncated;
    if (more && got.next_continuation_token == token) {
      return CorruptError(request.url + ": the same continuation token twice");
    }
    token = got.next_continuation_token;
    pages.push_back(std::move(got));
    if (!more || max_pages == 1) return pages;
  }
  return CorruptError(describe_ + "/" + full_prefix + ": more than " + std::to_string(max_pages) +
                      " listing pages");
}

Result<std::vector<ListEntry>> S3ByteSpace::List(const std::string& prefix) const {
  if (!prefix.empty()) RETURN_IF_ERROR(CheckKey(*this, prefix));
  const std::string folder = ObjectKey(prefix);
  const std::string full = folder.empty() ? folder : folder + "/";
  std::map<std::string, ListEntry> entries;
  auto usable = [](const std::string& name) {
    return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
  };
  auto add_file = [&](const std::string& name, const ListedObject& o) {
    if (usable(name))  // a folder of the same name wins
      entries.emplace(name, ListEntry{name, EntryKind::kFile, InfoFor(o.size, o.etag, o.mtime)});
  };
  auto add_folder = [&](const std::string& name) {
    if (!usable(name)) return;
    ListEntry e;
    e.name = name;
    e.kind = EntryKind::kDirectory;
    e.info.perm = 0555;
    entries[name] = std::move(e);  // a folder wins over a file of the same name
  };
  auto listing = [&] {
    std::vector<ListEntry> out;
    out.reserve(entries.size());
    for (auto& [name, entry] : entries) out.push_back(std::move(entry));
    return out;
  };
  if (known_->FreshlyListed(full)) {  // the folder's objects are known: its entries from them
    std::lock_guard<std::mutex> lock(known_->mu);
    for (auto it = known_->objects.lower_bound(full);
         it != known_->objects.end() && it->first.compare(0, full.size(), full) == 0; ++it) {
      const std::string rest = it->first.substr(full.size());
      const size_t slash = rest.find('/');
      if (slash == std::string::npos) {
        add_file(rest, it->second);
      } else {
        add_folder(rest.substr(0, slash));
      }
    }
    return listing();
  }
  auto pages = ListAll(full, options_.max_keys, kMaxPages);
  if (!pages.ok()) return std::move(pages).status().WithContext(Where(prefix));
  std::lock_guard<std::mutex> lock(known_->mu);
  for (const ListPage& page : *pages) {
    for (const ListedObject& object : page.objects) {
      if (object.key.compare(0, full.size(), full) != 0) continue;
      const std::string name = object.key.substr(full.size());
      if (!usable(name)) continue;
      add_file(name, object);
      known_->objects[object.key] = object;
    }
    for (const std::string& common : page.common_prefixes) {
      if (common.compare(0, full.size(), full) != 0 || common.size() <= full.size() + 1) continue;
      add_folder(common.substr(full.size(), common.size() - full.size() - 1));
    }
  }
  return listing();
}

// One paginated listing without a delimiter: 1 request per 1000 keys, where walking List costs
// one per folder (a VCF Zarr store of 80 arrays: 80 requests of ~9 ms on Swift, now 1).
Result<std::vector<ByteSpace::KeyInfo>> S3ByteSpace::ListRecursive(
    const std::string& prefix) const {
  if (!prefix.empty()) RETURN_IF_ERROR(CheckKey(*this, prefix));
  const std::string folder = ObjectKey(prefix);
  const std::string full = folder.empty() ? folder : folder + "/";
  auto pages = ListAll(full, options_.max_keys, kMaxRecursivePages, /*delimiter=*/"");
  if (!pages.ok()) return std::move(pages).status().WithContext(Where(prefix));
  const std::string root = ObjectKey("");
  const size_t strip = root.empty() ? 0 : root.size() + 1;  // keys relative to the space
  std::map<std::string, const ListedObject*> keys;          // relative key -> object
  for (const ListPage& page : *pages) {
    for (const ListedObject& object : page.objects) {
      if (object.key.compare(0, full.size(), full) != 0 || object.key.size() <= strip) continue;
      std::string key = object.key.substr(strip);
      if (ValidKey(key)) keys.emplace(std::move(key), &object);
    }
  }
  std::vector<KeyInfo> out;
  out.reserve(keys.size());
  std::lock_guard<std::mutex> lock(known_->mu);
  // The listing replaces what was known below `full`, which is now complete (Known::Absent).
  auto& known = known_->objects;
  const auto end = full.empty() ? known.end()  // '0' follows '/': past every key in the folder
                                : known.lower_bound(full.substr(0, full.size() - 1) + "0");
  known.erase(known.lower_bound(full), end);
  for (const auto& [key, object] : keys) {
    known_->objects[object->key] = *object;
    // A name that is both an object and a folder ("a" and "a/b") is the folder, as in List.
    auto next = keys.upper_bound(key + "/");
    if (next != keys.end() && next->first.compare(0, key.size() + 1, key + "/") == 0) continue;
    out.push_back(KeyInfo{key, InfoFor(object->size, object->etag, object->mtime)});
  }
  known_->complete[full] = std::chrono::steady_clock::now();
  return out;
}

Result<std::shared_ptr<const ByteSource>> S3ByteSpace::OpenForParts(const std::string& key) const {
  if (Parallelism() == 1) return Open(key);  // a near server: through the block cache
  RETURN_IF_ERROR(CheckKey(*this, key));
  const std::string object_key = ObjectKey(key);
  const auto listed = known_->Find(object_key);
  if (options_.parts_min == 0 || !listed || listed->size < options_.parts_min)
    return ByteSpace::OpenForParts(key);  // small or unknown: one GET of the whole
  http::RemoteObject object;
  object.size = listed->size;
  object.etag = listed->etag;
  object.mtime = listed->mtime;
  return std::shared_ptr<const ByteSource>(std::make_shared<const S3ByteSource>(
      client_, ObjectUrl(key), Where(key), object_key, std::move(object), known_));
}

Result<std::shared_ptr<const ByteSource>> S3ByteSpace::Open(const std::string& key) const {
  RETURN_IF_ERROR(CheckKey(*this, key));
  const std::string object_key = ObjectKey(key);
  const std::string url = ObjectUrl(key);
  http::RemoteObject object;
  if (auto listed = known_->Find(object_key)) {
    object.size = listed->size;
    object.etag = listed->etag;
    object.mtime = listed->mtime;
  } else if (known_->Absent(object_key)) {
    return std::shared_ptr<const ByteSource>();
  } else {
    http::HttpRequest request{"HEAD", url, {}, {}};
    ASSIGN_OR_RETURN(http::HttpResponse response, client_->Send(request, 0));
    if (response.status == 404) return std::shared_ptr<const ByteSource>();
    if (response.status != 200) return ErrorFor(request, response).WithContext(Where(key));
    auto size = ParseSize(response.Header("content-length"));
    if (!size) {
      return IoError(Where(key) + ": HEAD " + url + " has no usable Content-Length", EIO);
    }
    object.size = *size;
    object.etag = response.Header("etag");
    if (auto t = http::ParseHttpDate(response.Header("last-modified"))) object.mtime = *t;
  }
  auto source = std::make_shared<const S3ByteSource>(client_, url, Where(key), object_key,
                                                     std::move(object), known_);
  if (cache_ == nullptr) return std::shared_ptr<const ByteSource>(std::move(source));
  return BlockCache::Wrap(cache_, std::move(source));
}

Result<std::optional<std::string>> S3ByteSpace::Get(const std::string& key,
                                                    uint64_t max_bytes) const {
  RETURN_IF_ERROR(CheckKey(*this, key));
  if (known_->Absent(ObjectKey(key))) return std::optional<std::string>();
  http::HttpRequest request{"GET", ObjectUrl(key), {}, {}};
  // Room for an error body too (S3's XML errors are < 1 KB): a 404 must not fail as "too large".
  auto response = client_->Send(request, std::max<uint64_t>(max_bytes, 64 << 10));
  if (!response.ok()) return std::move(response).status().WithContext(Where(key));
  if (response->status == 404) return std::optional<std::string>();
  if (response->status != 200) return ErrorFor(request, *response).WithContext(Where(key));
  if (response->body.size() > max_bytes) {
    return CorruptError(Where(key) + ": " + std::to_string(response->body.size()) +
                        " bytes, more than the " + std::to_string(max_bytes) + " accepted");
  }
  return std::optional<std::string>(std::move(response->body));
}

Result<std::shared_ptr<S3ByteSpace>> ConnectS3(const std::string& url, const S3Options& options,
                                               http::HttpOptions http_options,
                                               std::shared_ptr<BlockCache> cache) {
  Credentials credentials = Credentials::Anonymous();
  if (!options.anonymous) {
    auto loaded = LoadCredentials();
    if (!loaded.ok()) return std::move(loaded).status().WithContext(url);
    credentials = std::move(*loaded);
  }
  return S3ByteSpace::Create(url, options, std::move(credentials), std::move(http_options),
                             std::move(cache));
}

}  // namespace omicsfs::io::s3
