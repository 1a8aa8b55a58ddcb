#include "io/s3/s3_url.h"

#include <cctype>

#include "io/s3/sigv4.h"

namespace omicsfs::io::s3 {
namespace {

// S3's bucket naming rules: 3-63 characters of a-z 0-9 . -, starting and ending alphanumeric.
bool ValidBucket(const std::string& name) {
  if (name.size() < 3 || name.size() > 63) return false;
  for (char c : name) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-')) {
      return false;
    }
  }
  return std::isalnum(static_cast<unsigned char>(name.front())) &&
         std::isalnum(static_cast<unsigned char>(name.back()));
}

}  // namespace

Result<S3Location> ParseS3Url(const std::string& url) {
  const std::string scheme = "s3://";
  if (url.rfind(scheme, 0) != 0) return InvalidArgumentError("not an s3:// URL: '" + url + "'");
  std::string rest = url.substr(scheme.size());
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const size_t slash = rest.find('/');
  S3Location loc;
  loc.bucket = rest.substr(0, slash);
  if (slash != std::string::npos) loc.prefix = rest.substr(slash + 1);
  if (!ValidBucket(loc.bucket)) {
    return InvalidArgumentError("'" + url + "': '" + loc.bucket +
                                "' is not an S3 bucket name (3-63 of a-z 0-9 . -)");
  }
  size_t begin = 0;
  while (!loc.prefix.empty() && begin <= loc.prefix.size()) {
    size_t end = loc.prefix.find('/', begin);
    if (end == std::string::npos) end = loc.prefix.size();
    const std::string part = loc.prefix.substr(begin, end - begin);
    if (part.empty() || part == "." || part == "..") {
      return InvalidArgumentError("'" + url + "': empty, '.' or '..' in the prefix");
    }
    begin = end + 1;
  }
  return loc;
}

Result<UrlParts> SplitUrl(const std::string& url) {
  UrlParts parts;
  const size_t colon = url.find("://");
  if (colon == std::string::npos) return InvalidArgumentError("not a URL: '" + url + "'");
  parts.scheme = url.substr(0, colon);
  if (parts.scheme != "http" && parts.scheme != "https") {
    return InvalidArgumentError("'" + url + "': only http:// and https:// are supported");
  }
  const size_t host_begin = colon + 3;
  const size_t host_end = url.find_first_of("/?#", host_begin);
  parts.host = url.substr(host_begin, host_end - host_begin);
  if (parts.host.empty() || parts.host.find('@') != std::string::npos) {
    return InvalidArgumentError("'" + url + "': no host, or user information in the URL");
  }
  const std::string default_port = parts.scheme == "http" ? ":80" : ":443";
  if (parts.host.size() > default_port.size() &&
      parts.host.compare(parts.host.size() - default_port.size(), default_port.size(),
                         default_port) == 0) {
    parts.host.resize(parts.host.size() - default_port.size());
  }
  std::string rest = host_end == std::string::npos ? "" : url.substr(host_end);
  rest = rest.substr(0, rest.find('#'));
  const size_t q = rest.find('?');
  parts.path = rest.substr(0, q);
  if (q != std::string::npos) parts.query = rest.substr(q + 1);
    // GCC 12 at -O3 warns that assigning "/" may memcpy overlapping ranges of 2^63 bytes: a false
    // positive of its -Wrestrict through std::string (GCC bug 105651), silenced here only.
#pragma GCC diagnostic push
#ifndef __clang__  // a GCC warning; clang (the fuzz build) has none of that name
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
  if (parts.path.empty()) parts.path = "/";
#pragma GCC diagnostic pop
  return parts;
}

Result<S3Endpoint> S3Endpoint::Make(const std::string& endpoint, const std::string& region) {
  S3Endpoint out;
  out.region_ = region.empty() ? "us-east-1" : region;
  for (char c : out.region_) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-')) {
      return InvalidArgumentError("s3_region '" + region + "' is not a region name");
    }
  }
  if (endpoint.empty()) return out;
  ASSIGN_OR_RETURN(UrlParts parts, SplitUrl(endpoint));
  if (!parts.query.empty()) {
    return InvalidArgumentError("s3_endpoint '" + endpoint + "' has a query string");
  }
  out.custom_ = endpoint;
  while (!out.custom_.empty() && out.custom_.back() == '/') out.custom_.pop_back();
  return out;
}

std::string S3Endpoint::Base(const std::string& bucket) const {
  if (!custom_.empty()) return custom_ + "/" + UriEncode(bucket, false) + "/";
  if (bucket.find('.') != std::string::npos) {
    return "https://s3." + region_ + ".amazonaws.com/" + bucket + "/";
  }
  return "https://" + bucket + ".s3." + region_ + ".amazonaws.com/";
}

std::string S3Endpoint::ObjectUrl(const std::string& bucket, const std::string& key) const {
  return Base(bucket) + UriEncode(key, true);
}

std::string S3Endpoint::BucketUrl(
    const std::string& bucket,
    const std::vector<std::pair<std::string, std::string>>& query) const {
  std::string url = Base(bucket);
  char sep = '?';
  for (const auto& [name, value] : query) {
    url += sep + UriEncode(name, false) + "=" + UriEncode(value, false);
    sep = '&';
  }
  return url;
}

}  // namespace omicsfs::io::s3
