// An S3 bucket prefix as a ByteSpace (architecture (b2)): s3://BUCKET/PREFIX, on AWS or any
// S3-compatible endpoint, over the shared HTTP client (io/http) with requests signed by SigV4.
//
// - List: ListObjectsV2 with delimiter '/' (and encoding-type=url), every page; objects are
//   files with size, ETag and Last-Modified; common prefixes are directories. A name that is both
//   (key "a" and key "a/b") lists as the directory: a file system cannot show both.
// - Open: size and ETag from the latest listing of the key's folder when there is one (no
//   request), else one HEAD. Reads are ranged GETs with If-Match on the ETag: an object rewritten
//   since it was opened fails with ESTALE (and its listing entry is forgotten, so the next Open
//   HEADs the new version), never mixed bytes.
// - ListRecursive: one ListObjectsV2 without a delimiter (1 request per 1000 keys), which also
//   gives every key's size, ETag and Last-Modified (the store's stamp), kept for Open.
// - Absent from a complete listing: after ListRecursive(P), Open and Get of a key below P that
//   the listing did not hold answer absent without a request (Zarr probes zarr.json in v2 stores
//   and reads missing chunks as fill values: ~1 request per array saved). The rule: a store's
//   keys are fixed at the moment its stamp was taken (discovery lists the store for its stamp
//   before opening it); an object added later is seen by the rescan, which lists again and
//   compares stamps. A listed object found rewritten (ESTALE) makes its listing incomplete again.
// - Get: one GET; 404 is absent (nullopt). 403 is an error, not absence: S3 answers 403 for a
//   missing key when the caller may not list the bucket, and guessing "absent" there would turn
//   a permission problem into fill values.
// - Errors name the s3:// URL, the request, the HTTP status and S3's error code; 401/403 are
//   EACCES and say where the credentials came from.
#pragma once

#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "io/byte_source.h"
#include "io/cached_byte_source.h"
#include "io/http/http_client.h"
#include "io/s3/credentials.h"
#include "io/s3/list_objects.h"
#include "io/s3/s3_url.h"

namespace omicsfs::io::s3 {

// -o s3_parts's default (S3Options::parts_min).
inline constexpr uint64_t kPartsMinDefault = uint64_t{4} << 20;

struct S3Options {
  std::string endpoint;    // -o s3_endpoint=URL; "" for AWS
  std::string region;      // -o s3_region=R; "" for us-east-1
  bool anonymous = false;  // -o s3_anonymous: unsigned requests, no credentials looked up
  // Listing page size; S3's maximum (and default) is 1000. Tests use small pages.
  int max_keys = 1000;
  // -o s3_parts=SIZE: from a distant server, objects a listing says are at least this large are
  // read by parts when a reader needs a few (OpenForParts: a Zarr chunk's header and the blosc
  // blocks a short read needs, each a ranged GET); 0: whole. Why 4 MiB: the parts cost a round
  // trip more than one GET (the header first), which at 50-100 MB/s is worth ~4 MB of transfer;
  // vcf2zarr's default chunks (10 000 variants × 1 000 samples) hold 10+ MB of call_AD.
  uint64_t parts_min = kPartsMinDefault;
};

// Signs every request of an HttpClient with SigV4 (sigv4.h): x-amz-date, x-amz-content-sha256
// (of the empty body), x-amz-security-token, Authorization; Range and If-Match signed too.
class S3RequestSigner : public http::RequestSigner {
 public:
  // `clock` gives the signing time (tests fix it); std::time by default.
  S3RequestSigner(Credentials credentials, std::string region,
                  std::function<std::time_t()> clock = nullptr)
      : credentials_(std::move(credentials)),
        region_(std::move(region)),
        clock_(std::move(clock)) {}
  Status Sign(http::HttpRequest& request) const override;

 private:
  const Credentials credentials_;
  const std::string region_;
  const std::function<std::time_t()> clock_;
};

class S3ByteSpace : public ByteSpace {
 public:
  // The space at `url` (s3://BUCKET/PREFIX). Anonymous credentials send unsigned requests.
  // Makes one listing request (one key) to check that the bucket answers and the credentials
  // are accepted: a wrong key fails here with S3's message, not at the first read.
  static Result<std::shared_ptr<S3ByteSpace>> Create(const std::string& url,
                                                     const S3Options& options,
                                                     Credentials credentials,
                                                     http::HttpOptions http_options = {},
                                                     std::shared_ptr<BlockCache> cache = nullptr);

  const std::string& Describe() const override { return describe_; }
  Result<std::shared_ptr<const ByteSource>> Open(const std::string& key) const override;
  Result<std::vector<ListEntry>> List(const std::string& prefix) const override;
  Result<std::vector<KeyInfo>> ListRecursive(const std::string& prefix) const override;
  Result<std::optional<std::string>> Get(const std::string& key, uint64_t max_bytes) const override;

  unsigned Parallelism() const override { return client_->Parallelism(); }
  // From a near server (Parallelism() 1: the first byte in under 2 ms), Open; from a distant
  // one, objects listed (their size known without a request) at least options.parts_min large,
  // without the block cache: each read is one ranged GET of what it asks.
  Result<std::shared_ptr<const ByteSource>> OpenForParts(const std::string& key) const override;
  const http::HttpClient& client() const { return *client_; }
  // The object key of `key` in the bucket (PREFIX/key) and its URL.
  std::string ObjectKey(const std::string& key) const;
  std::string ObjectUrl(const std::string& key) const;

  // Listed objects whose size and ETag an Open may use; shared with the opened sources, which
  // drop an entry when its version is gone (ESTALE).
  struct Known;

 private:
  S3ByteSpace() = default;
  // Up to max_pages pages of ListObjectsV2 under `full_prefix` (ends in / unless empty),
  // with `delimiter` ("": every key below, not folder by folder).
  Result<std::vector<ListPage>> ListAll(const std::string& full_prefix, int max_keys, int max_pages,
                                        const std::string& delimiter = "/") const;
  // A non-2xx answer as a Status: the request, status, S3's code and message, and for 401/403
  // where the credentials came from.
  Status ErrorFor(const http::HttpRequest& request, const http::HttpResponse& response) const;

  S3Location location_;
  S3Endpoint endpoint_;
  S3Options options_;
  std::string describe_;
  std::string credentials_source_;
  std::shared_ptr<const http::HttpClient> client_;
  std::shared_ptr<BlockCache> cache_;
  std::shared_ptr<Known> known_;
};

// The space at `url` as a mount opens it: credentials from the environment or the shared
// credentials file (credentials.h) unless options.anonymous, then S3ByteSpace::Create. Errors
// say what to fix: no credentials, a wrong key (S3's SignatureDoesNotMatch), another region.
Result<std::shared_ptr<S3ByteSpace>> ConnectS3(const std::string& url, const S3Options& options,
                                               http::HttpOptions http_options = {},
                                               std::shared_ptr<BlockCache> cache = nullptr);

}  // namespace omicsfs::io::s3
