#include "io/s3/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "util/bytes.h"

namespace omicsfs::io::s3 {
namespace {

constexpr char kHex[] = "0123456789abcdef";
constexpr char kUpperHex[] = "0123456789ABCDEF";

std::string Hex(const unsigned char* bytes, size_t n) {
  std::string out(2 * n, '\0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kHex[bytes[i] >> 4];
    out[2 * i + 1] = kHex[bytes[i] & 15];
  }
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A header value as SigV4 canonicalises it: outer spaces trimmed, inner runs of spaces as one.
std::string CanonicalValue(const std::string& value) {
  std::string out;
  bool space = false;
  for (char c : value) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::string CanonicalQuery(const HeaderList& query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(query.size());
  for (const auto& [name, value] : query) {
    encoded.emplace_back(UriEncode(name, false), UriEncode(value, false));
  }
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [name, value] : encoded) {
    if (!out.empty()) out += '&';
    out += name + "=" + value;
  }
  return out;
}

}  // namespace

std::string UriEncode(std::string_view text, bool keep_slash) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (c == '/' && keep_slash)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kUpperHex[c >> 4];
      out += kUpperHex[c & 15];
    }
  }
  return out;
}

std::string UriDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const int hi = HexValue(text[i + 1]), lo = HexValue(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), digest, &n, EVP_sha256(), nullptr);
  return Hex(digest, n);
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest, &n);
  return std::string(reinterpret_cast<const char*>(digest), n);
}

std::string AmzDate(std::time_t when) {
  struct tm utc;
  gmtime_r(&when, &utc);
  char text[20];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
  return text;
}

std::string SigV4Signature::Authorization() const {
  for (const auto& [name, value] : headers) {
    if (name == "Authorization") return value;
  }
  return "";
}

SigV4Signature SignV4(const SigV4Request& request, const Credentials& credentials,
                      const SigV4Scope& scope) {
  SigV4Signature out;
  out.headers.emplace_back("x-amz-date", scope.amz_date);
  if (scope.content_sha256_header) {
    out.headers.emplace_back("x-amz-content-sha256", request.payload_hash);
  }
  if (!credentials.session_token.empty()) {
    out.headers.emplace_back("x-amz-security-token", credentials.session_token);
  }
  // Lower-cased names, sorted; repeated headers' values joined with ',' in the order sent.
  std::map<std::string, std::string> canonical;
  auto add = [&](const std::string& name, const std::string& value) {
    std::string& slot = canonical[AsciiLower(name)];
    // GCC 12 at -O3 warns that "," + std::string&& (an insert at 0) may memcpy overlapping ranges
    // of 2^63 bytes: a false positive of its -Wrestrict through std::string (GCC bug 105651),
    // silenced here only.
#pragma GCC diagnostic push
#ifndef __clang__  // a GCC warning; clang (the fuzz build) has none of that name
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
    slot += (slot.empty() ? "" : ",") + CanonicalValue(value);
#pragma GCC diagnostic pop
  };
  add("host", request.host);
  for (const auto& [name, value] : request.headers) add(name, value);
  for (const auto& [name, value] : out.headers) add(name, value);
  std::string header_block, signed_headers;
  for (const auto& [name, value] : canonical) {
    header_block += name + ":" + value + "\n";
    signed_headers += (signed_headers.empty() ? "" : ";") + name;
  }
  out.canonical_request = request.method + "\n" + UriEncode(request.path, true) + "\n" +
                          CanonicalQuery(request.query) + "\n" + header_block + "\n" +
                          signed_headers + "\n" + request.payload_hash;
  const std::string day = scope.amz_date.substr(0, 8);
  const std::string credential_scope =
      day + "/" + scope.region + "/" + scope.service + "/aws4_request";
  out.string_to_sign = "AWS4-HMAC-SHA256\n" + scope.amz_date + "\n" + credential_scope + "\n" +
                       Sha256Hex(out.canonical_request);
  std::string key = HmacSha256("AWS4" + credentials.secret_access_key, day);
  key = HmacSha256(key, scope.region);
  key = HmacSha256(key, scope.service);
  key = HmacSha256(key, "aws4_request");
  const std::string raw = HmacSha256(key, out.string_to_sign);
  out.signature = Hex(reinterpret_cast<const unsigned char*>(raw.data()), raw.size());
  out.headers.emplace_back("Authorization",
                           "AWS4-HMAC-SHA256 Credential=" + credentials.access_key_id + "/" +
                               credential_scope + ", SignedHeaders=" + signed_headers +
                               ", Signature=" + out.signature);
  return out;
}

}  // namespace omicsfs::io::s3
