// Where S3 objects live (io/s3): s3://BUCKET/PREFIX sources, and the URLs of objects and
// listings on AWS or on any S3-compatible endpoint.
// - No s3_endpoint: AWS, virtual-hosted style, https://BUCKET.s3.REGION.amazonaws.com/KEY.
//   A bucket name with a dot goes path-style (https://s3.REGION.amazonaws.com/BUCKET/KEY), since
//   the wildcard certificate *.s3.REGION.amazonaws.com does not cover a dotted name.
// - s3_endpoint=URL: path-style, URL/BUCKET/KEY (Ceph, Swift s3api, MinIO and the like, which
//   rarely have wildcard DNS).
// Keys are encoded with UriEncode (sigv4.h), exactly as the signer encodes the canonical path.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "util/status.h"

namespace omicsfs::io::s3 {

struct S3Location {
  std::string bucket;
  std::string prefix;  // without a leading or trailing '/'; "" for the whole bucket
};

// "s3://BUCKET", "s3://BUCKET/", "s3://BUCKET/a/b/" → {BUCKET, "a/b"}. InvalidArgument naming
// the URL for a missing bucket, a bucket name S3 does not allow, or empty, "." or ".." parts.
Result<S3Location> ParseS3Url(const std::string& url);

// The parts of an http(s) URL this code needs.
struct UrlParts {
  std::string scheme;  // "http" or "https"
  std::string host;    // the Host header curl sends: host, with :port unless the default
  std::string path;    // still encoded, "/" when empty
  std::string query;   // still encoded, without '?'
};
Result<UrlParts> SplitUrl(const std::string& url);

class S3Endpoint {
 public:
  // `endpoint` is "" for AWS, else "http(s)://HOST[:PORT][/BASE]"; `region` e.g. "us-east-1".
  static Result<S3Endpoint> Make(const std::string& endpoint, const std::string& region);

  const std::string& region() const { return region_; }
  // The object's URL; `key` decoded ("a b/c.txt").
  std::string ObjectUrl(const std::string& bucket, const std::string& key) const;
  // The bucket's URL with `query` (decoded pairs) appended, for listings.
  std::string BucketUrl(const std::string& bucket,
                        const std::vector<std::pair<std::string, std::string>>& query) const;

 private:
  std::string Base(const std::string& bucket) const;  // the URL up to the key, ending in '/'

  std::string region_;
  std::string custom_;  // the endpoint without a trailing '/', "" for AWS
};

}  // namespace omicsfs::io::s3
