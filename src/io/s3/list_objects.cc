#include "io/s3/list_objects.h"

#include <expat.h>

#include <cctype>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <memory>

#include "io/s3/sigv4.h"

namespace omicsfs::io::s3 {
namespace {

// Collects the text of every element along its path ("ListBucketResult/Contents/Key"), and
// hands complete <Contents> and <CommonPrefixes> records to the page.
struct ListParser {
  std::vector<std::string> path;
  std::string text;
  ListPage page;
  ListedObject object;
  std::string size_text;
  bool url_encoded = false;
  std::string error;

  std::string Path() const {
    std::string out;
    for (const auto& name : path) out += (out.empty() ? "" : "/") + name;
    return out;
  }
  void End() {
    const std::string where = Path();
    if (where == "ListBucketResult/Contents/Key")
      object.key = text;
    else if (where == "ListBucketResult/Contents/Size")
      size_text = text;
    else if (where == "ListBucketResult/Contents/ETag")
      object.etag = text;
    else if (where == "ListBucketResult/Contents/LastModified")
      object.last_modified = text;
    else if (where == "ListBucketResult/CommonPrefixes/Prefix")
      AddPrefix();
    else if (where == "ListBucketResult/IsTruncated")
      page.truncated = text == "true";
    else if (where == "ListBucketResult/NextContinuationToken")
      page.next_continuation_token = text;
    else if (where == "ListBucketResult/EncodingType")
      url_encoded = text == "url";
    else if (where == "ListBucketResult/Contents")
      EndObject();
  }
  void AddPrefix() { page.common_prefixes.push_back(text); }
  void EndObject() {
    const char* end = size_text.data() + size_text.size();
    auto [ptr, ec] = std::from_chars(size_text.data(), end, object.size);
    if (ec != std::errc() || ptr != end || object.key.empty()) {
      error = "a <Contents> entry without a key or a numeric size ('" + object.key + "', '" +
              size_text + "')";
    }
    ParseIso8601(object.last_modified, &object.mtime);
    page.objects.push_back(std::move(object));
    object = ListedObject();
    size_text.clear();
  }
};

void XMLCALL OnStart(void* data, const XML_Char* name, const XML_Char**) {
  auto* p = static_cast<ListParser*>(data);
  std::string local = name;
  // Namespaced names arrive as "URI|local" when the parser separates them; keep the local part.
  const size_t bar = local.rfind('|');
  if (bar != std::string::npos) local = local.substr(bar + 1);
  p->path.push_back(std::move(local));
  p->text.clear();
}

void XMLCALL OnEnd(void* data, const XML_Char*) {
  auto* p = static_cast<ListParser*>(data);
  p->End();
  p->path.pop_back();
  p->text.clear();
}

void XMLCALL OnText(void* data, const XML_Char* s, int len) {
  static_cast<ListParser*>(data)->text.append(s, static_cast<size_t>(len));
}

// Runs expat over `xml` with `parser` as user data; "" or expat's message with line number.
template <typename Parser>
std::string RunExpat(std::string_view xml, Parser* parser) {
  std::unique_ptr<XML_ParserStruct, decltype(&XML_ParserFree)> xp(XML_ParserCreateNS(nullptr, '|'),
                                                                  &XML_ParserFree);
  if (!xp) return "out of memory for the XML parser";
  XML_SetUserData(xp.get(), parser);
  XML_SetElementHandler(xp.get(), OnStart, OnEnd);
  XML_SetCharacterDataHandler(xp.get(), OnText);
  if (XML_Parse(xp.get(), xml.data(), static_cast<int>(xml.size()), 1) == XML_STATUS_ERROR) {
    return std::string(XML_ErrorString(XML_GetErrorCode(xp.get()))) + " at line " +
           std::to_string(XML_GetCurrentLineNumber(xp.get()));
  }
  return "";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ListObjectsQuery(const std::string& prefix,
                                                                  const std::string& delimiter,
                                                                  const std::string& token,
                                                                  int max_keys) {
  std::vector<std::pair<std::string, std::string>> query = {
      {"list-type", "2"}, {"encoding-type", "url"}, {"max-keys", std::to_string(max_keys)}};
  if (!prefix.empty()) query.emplace_back("prefix", prefix);
  if (!delimiter.empty()) query.emplace_back("delimiter", delimiter);
  if (!token.empty()) query.emplace_back("continuation-token", token);
  return query;
}

Result<ListPage> ParseListObjectsV2(std::string_view xml, const std::string& where) {
  ListParser parser;
  const std::string failure = RunExpat(xml, &parser);
  if (!failure.empty()) {
    return CorruptError(where + ": the listing is not XML: " + failure);
  }
  if (!parser.error.empty()) return CorruptError(where + ": " + parser.error);
  if (parser.page.truncated && parser.page.next_continuation_token.empty()) {
    return CorruptError(where + ": a truncated listing without a NextContinuationToken");
  }
  if (parser.url_encoded) {
    for (auto& object : parser.page.objects) object.key = UriDecode(object.key);
    for (auto& prefix : parser.page.common_prefixes) prefix = UriDecode(prefix);
  }
  return std::move(parser.page);
}

std::string ParseS3Error(std::string_view xml) {
  struct Collect {
    std::vector<std::string> path;
    std::string text, code, message;
  };
  Collect collect;
  std::unique_ptr<XML_ParserStruct, decltype(&XML_ParserFree)> xp(XML_ParserCreate(nullptr),
                                                                  &XML_ParserFree);
  if (!xp) return "";
  XML_SetUserData(xp.get(), &collect);
  XML_SetElementHandler(
      xp.get(),
      [](void* d, const XML_Char* name, const XML_Char**) {
        auto* c = static_cast<Collect*>(d);
        c->path.emplace_back(name);
        c->text.clear();
      },
      [](void* d, const XML_Char*) {
        auto* c = static_cast<Collect*>(d);
        if (c->path.size() == 2 && c->path[0] == "Error") {
          if (c->path[1] == "Code") c->code = c->text;
          if (c->path[1] == "Message") c->message = c->text;
        }
        c->path.pop_back();
        c->text.clear();
      });
  XML_SetCharacterDataHandler(xp.get(), [](void* d, const XML_Char* s, int len) {
    static_cast<Collect*>(d)->text.append(s, static_cast<size_t>(len));
  });
  if (XML_Parse(xp.get(), xml.data(), static_cast<int>(xml.size()), 1) == XML_STATUS_ERROR ||
      collect.code.empty()) {
    return "";
  }
  return collect.message.empty() ? collect.code : collect.code + ": " + collect.message;
}

bool ParseIso8601(const std::string& text, struct timespec* out) {
  struct tm t {};
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &t.tm_year, &t.tm_mon, &t.tm_mday,
                  &t.tm_hour, &t.tm_min, &t.tm_sec, &consumed) != 6) {
    return false;
  }
  long nanos = 0;
  size_t i = static_cast<size_t>(consumed);
  if (i < text.size() && text[i] == '.') {
    long scale = 100'000'000;
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
      nanos += (text[i] - '0') * scale;
      scale /= 10;
    }
  }
  if (i >= text.size() || text[i] != 'Z') return false;
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  out->tv_sec = timegm(&t);
  out->tv_nsec = nanos;
  return true;
}

}  // namespace omicsfs::io::s3
