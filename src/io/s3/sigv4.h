// AWS Signature Version 4 for S3 requests (io/s3), written against AWS's published examples
// (tests/io/s3_sigv4_test.cc checks the "aws-sig-v4-test-suite" GET cases and the S3 API
// reference's GET Object and ListObjects examples).
//
// What this signer does, and why:
// - The path is encoded once, each byte outside A-Z a-z 0-9 - _ . ~ as %XX, '/' kept: S3 does
//   not double-encode the canonical URI as the other services do. The URL sent must carry the
//   same encoding (S3Endpoint builds it with UriEncode).
// - Query parameters are encoded the same way ('/' too) and sorted by name, then value. libcurl
//   7.88's CURLOPT_AWS_SIGV4 does not sort them (field notes), one reason to sign here.
// - Signed headers: host, x-amz-date, x-amz-content-sha256, x-amz-security-token (temporary
//   credentials), and whatever else the request carries (range, if-match).
// - x-amz-content-sha256 is the SHA-256 of the empty body (kEmptyPayloadSha256): every request
//   omicsfs makes is a GET or HEAD without a body, and the empty body's hash is accepted by every
//   S3 implementation, where UNSIGNED-PAYLOAD is not (older gateways reject it).
#pragma once

#include <ctime>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/s3/credentials.h"

namespace omicsfs::io::s3 {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

inline constexpr std::string_view kEmptyPayloadSha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";

// SigV4's percent-encoding: unreserved bytes (A-Z a-z 0-9 - _ . ~) kept, every other byte as
// %XX with upper-case hex; '/' kept when keep_slash (paths), encoded otherwise (query values).
std::string UriEncode(std::string_view text, bool keep_slash);
// The inverse: %XX decoded; a malformed escape is kept as it is; '+' stays '+'.
std::string UriDecode(std::string_view text);

std::string Sha256Hex(std::string_view data);
std::string HmacSha256(std::string_view key, std::string_view data);  // the raw 32 bytes
// "YYYYMMDDTHHMMSSZ" (UTC), the form x-amz-date takes.
std::string AmzDate(std::time_t when);

struct SigV4Request {
  std::string method;  // "GET", "HEAD"
  std::string host;    // the Host header as sent: "bucket.s3.us-east-1.amazonaws.com",
                       // "127.0.0.1:8080" (curl omits :80 and :443)
  std::string path;    // decoded: "/bucket/a key/ü.txt"; encoded here (once)
  HeaderList query;    // decoded names and values, in any order; "" for a value-less parameter
  HeaderList headers;  // other headers to sign, any case, in the order sent
  std::string payload_hash = std::string(kEmptyPayloadSha256);
};

struct SigV4Scope {
  std::string amz_date;  // "20130524T000000Z"
  std::string region = "us-east-1";
  std::string service = "s3";
  // Add and sign x-amz-content-sha256 (S3 requires it; the generic test suite has none).
  bool content_sha256_header = true;
};

struct SigV4Signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signature;  // hex
  // The headers to send with the request: x-amz-date, x-amz-content-sha256,
  // x-amz-security-token (when there is a session token), Authorization.
  HeaderList headers;
  std::string Authorization() const;  // the Authorization header's value
};

// Signs `request` with non-anonymous `credentials`.
SigV4Signature SignV4(const SigV4Request& request, const Credentials& credentials,
                      const SigV4Scope& scope);

}  // namespace omicsfs::io::s3
