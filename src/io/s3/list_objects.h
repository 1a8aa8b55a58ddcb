// S3's XML answers (io/s3): ListObjectsV2 pages and <Error> bodies, parsed with expat.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/status.h"

namespace omicsfs::io::s3 {

struct ListedObject {
  std::string key;  // decoded (encoding-type=url undone)
  uint64_t size = 0;
  std::string etag;           // as sent, quotes included
  std::string last_modified;  // as sent: "2026-11-24T06:21:32.000Z"
  struct timespec mtime {};   // parsed, 0 when unparseable
};

struct ListPage {
  std::vector<ListedObject> objects;
  std::vector<std::string> common_prefixes;  // decoded, ending in the delimiter
  bool truncated = false;
  std::string next_continuation_token;  // as sent (tokens are opaque, never url-encoded)
};

// The query of one ListObjectsV2 request: list-type=2, prefix, delimiter, encoding-type=url (so
// that keys with bytes XML 1.0 cannot carry come back intact), max-keys, continuation-token.
std::vector<std::pair<std::string, std::string>> ListObjectsQuery(const std::string& prefix,
                                                                  const std::string& delimiter,
                                                                  const std::string& token,
                                                                  int max_keys = 1000);

// One ListBucketResult page. Keys and prefixes are url-decoded when the page says
// <EncodingType>url</EncodingType>. Corrupt (naming `where`) for a body that is not one, or a
// page that says it is truncated without a continuation token.
Result<ListPage> ParseListObjectsV2(std::string_view xml, const std::string& where);

// "Code: Message" of an S3 <Error> body ("SignatureDoesNotMatch: The request signature we
// calculated does not match..."); "" when the body is not one.
std::string ParseS3Error(std::string_view xml);

// "2026-11-24T06:21:32.000Z" → seconds and nanoseconds; false when it is not that form.
bool ParseIso8601(const std::string& text, struct timespec* out);

}  // namespace omicsfs::io::s3
