#include "io/http/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <thread>

#include "util/bytes.h"

namespace omicsfs::io::http {

// ---------------------------------------------------------------------------------------------
// Small pure helpers.

namespace {

// Error bodies are kept only for messages: 4 KiB holds any server's error page headline.
constexpr size_t kErrorBodyBytes = 4096;

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return std::string(s);
}

std::optional<uint64_t> ParseU64(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

struct ContentRange {
  uint64_t first = 0, last = 0, total = 0;
};

// "bytes FIRST-LAST/TOTAL" (a complete length; "*" totals are not accepted for reads).
std::optional<ContentRange> ParseContentRange(const std::string& value) {
  std::string_view v = value;
  if (v.substr(0, 6) != "bytes ") return std::nullopt;
  v.remove_prefix(6);
  const size_t dash = v.find('-'), slash = v.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash) {
    return std::nullopt;
  }
  auto first = ParseU64(v.substr(0, dash));
  auto last = ParseU64(v.substr(dash + 1, slash - dash - 1));
  auto total = ParseU64(v.substr(slash + 1));
  if (!first || !last || !total || *last < *first || *last >= *total) return std::nullopt;
  return ContentRange{*first, *last, *total};
}

// The opaque part of an entity tag: weak and strong forms of one tag compare equal here, as
// If-Range's weak comparison does; the caller decides whether a weak tag may be sent at all.
std::string_view OpaqueTag(std::string_view etag) {
  if (etag.substr(0, 2) == "W/") etag.remove_prefix(2);
  return etag;
}

bool IsWeakTag(const std::string& etag) { return etag.rfind("W/", 0) == 0; }

std::string Describe(const HttpRequest& request) {
  std::string s = request.method + " " + request.url;
  if (!request.range.empty()) s += " (" + request.range + ")";
  return s;
}

std::string AttemptsText(int attempts) {
  return attempts == 1 ? "1 attempt" : std::to_string(attempts) + " attempts";
}

std::string Snippet(const std::string& body) {
  std::string s = body.substr(0, 200);
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return Trim(s);
}

bool RetryableStatus(long status) {
  return status == 408 || status == 429 || (status >= 500 && status <= 599);
}

// Connection-level failures worth another attempt: refused or reset connections, timeouts,
// bodies cut short. TLS verification, bad URLs and unsupported protocols are not.
bool RetryableCurl(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_WEIRD_SERVER_REPLY:
      return true;
    default:
      return false;
  }
}

std::once_flag g_curl_init;
CURLcode g_curl_init_code = CURLE_OK;

}  // namespace

std::string HttpResponse::Header(const std::string& lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return std::string();
}

std::string RemoteObject::Stamp() const {
  return std::to_string(size) + " " + etag + " " + last_modified;
}

std::string EncodeKeyForUrl(const std::string& key) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(key.size());
  for (unsigned char c : key) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::optional<struct timespec> ParseHttpDate(const std::string& date) {
  if (date.empty()) return std::nullopt;
  const time_t t = curl_getdate(date.c_str(), nullptr);
  if (t == -1) return std::nullopt;
  struct timespec ts {};
  ts.tv_sec = t;
  return ts;
}

// ---------------------------------------------------------------------------------------------
// One transfer: where its body goes and what came back.

struct HttpClient::Handle {
  CURL* easy = nullptr;
  char error[CURL_ERROR_SIZE] = {};
};

// The outcome a request's `accept` gives one attempt: OK ends the loop; an error ends it unless
// `retry` is set and attempts remain.
struct HttpClient::Verdict {
  Status status;
  bool retry = false;
};

struct HttpClient::Attempt {
  // Set once per request.
  std::string* sink = nullptr;  // the whole body, up to max_body (Get, Send)
  uint64_t max_body = 0;
  char* direct = nullptr;  // ReadRange's buffer: written only once the headers pass `check`
  size_t direct_length = 0;
  std::function<Verdict(const Attempt&)> check;  // looks at status and headers before any byte
  std::atomic<uint64_t>* bytes_counter = nullptr;

  // The latest attempt.
  long status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  uint64_t received = 0;
  bool checked = false;
  Verdict verdict;          // what `check` said
  bool over_limit = false;  // more body than max_body / direct_length: aborted by us
  bool rejected = false;    // body of a response `check` refused: aborted after kErrorBodyBytes
  std::string error_body;
  CURLcode code = CURLE_OK;
  std::string curl_error;
  std::string effective_url;  // after redirects
  int attempts = 0;

  void Reset() {
    status = 0;
    headers.clear();
    received = 0;
    checked = false;
    verdict = Verdict{};
    over_limit = rejected = false;
    error_body.clear();
    code = CURLE_OK;
    curl_error.clear();
    effective_url.clear();
    if (sink != nullptr) sink->clear();
  }
  std::string Header(const std::string& lower_name) const {
    for (const auto& [name, value] : headers) {
      if (name == lower_name) return value;
    }
    return std::string();
  }
  void RunCheck() {
    if (checked) return;
    checked = true;
    if (check) verdict = check(*this);
  }
  bool Transport() const { return code != CURLE_OK && !over_limit && !rejected; }
  // Web servers answer a folder's path with a redirect to PATH/ (nginx, Apache): not an object.
  bool RedirectedToFolder(const std::string& url) const {
    return effective_url.size() == url.size() + 1 && effective_url.back() == '/' &&
           effective_url.compare(0, url.size(), url) == 0;
  }
  // What the server said in an error body, for messages.
  const std::string& ErrorText() const { return sink != nullptr ? *sink : error_body; }

  static size_t OnHeader(char* data, size_t size, size_t n, void* self);
  static size_t OnBody(char* data, size_t size, size_t n, void* self);
};

// A status line starts a new response (a redirect or 100-continue came before): its headers
// replace the earlier ones.
size_t HttpClient::Attempt::OnHeader(char* data, size_t size, size_t n, void* self) {
  auto* a = static_cast<Attempt*>(self);
  const std::string_view line(data, size * n);
  if (line.substr(0, 5) == "HTTP/") {
    a->headers.clear();
    const size_t sp = line.find(' ');
    a->status = 0;
    if (sp != std::string_view::npos) {
      a->status = static_cast<long>(ParseU64(line.substr(sp + 1, 3)).value_or(0));
    }
    return size * n;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * n;
  std::string name = AsciiLower(std::string(line.substr(0, colon)));
  std::string value = Trim(line.substr(colon + 1));
  for (auto& [k, v] : a->headers) {
    if (k == name) {
      v = std::move(value);
      return size * n;
    }
  }
  a->headers.emplace_back(std::move(name), std::move(value));
  return size * n;
}

size_t HttpClient::Attempt::OnBody(char* data, size_t size, size_t n, void* self) {
  auto* a = static_cast<Attempt*>(self);
  const size_t len = size * n;
  a->bytes_counter->fetch_add(len, std::memory_order_relaxed);
  a->RunCheck();
  if (a->direct != nullptr) {
    if (!a->verdict.status.ok() || (a->status != 200 && a->status != 206)) {
      const size_t keep =
          std::min(len, kErrorBodyBytes - std::min(kErrorBodyBytes, a->error_body.size()));
      a->error_body.append(data, keep);
      if (a->error_body.size() >= kErrorBodyBytes) {
        a->rejected = true;
        return 0;
      }
      return len;
    }
    if (a->received + len > a->direct_length) {
      a->over_limit = true;
      return 0;
    }
    std::memcpy(a->direct + a->received, data, len);
  } else if (a->sink != nullptr) {
    if (a->received + len > a->max_body) {
      a->over_limit = true;
      return 0;
    }
    a->sink->append(data, len);
  }
  a->received += len;
  return len;
}

// ---------------------------------------------------------------------------------------------
// The client: handles, one attempt, the retry loop.

HttpClient::HttpClient(HttpOptions options, std::shared_ptr<const RequestSigner> signer)
    : options_(std::move(options)), signer_(std::move(signer)) {}

Result<std::shared_ptr<HttpClient>> HttpClient::Create(
    HttpOptions options, std::shared_ptr<const RequestSigner> signer) {
  std::call_once(g_curl_init, [] { g_curl_init_code = curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (g_curl_init_code != CURLE_OK) {
    return InternalError(std::string("libcurl did not initialise: ") +
                         curl_easy_strerror(g_curl_init_code));
  }
  if (options.retries < 0 || options.connect_timeout.count() <= 0 ||
      options.request_timeout.count() <= 0 || options.low_speed_time.count() <= 0) {
    return InvalidArgumentError("http: timeouts must be positive and retries not negative");
  }
  return std::shared_ptr<HttpClient>(new HttpClient(std::move(options), std::move(signer)));
}

HttpClient::~HttpClient() {
  for (Handle* h : idle_) {
    curl_easy_cleanup(h->easy);
    delete h;
  }
}

HttpClient::Handle* HttpClient::Acquire() const {
  {
    std::unique_lock<std::mutex> lock(mu_);
    handle_freed_.wait(lock, [&] {
      return !idle_.empty() || handles_ < std::max<size_t>(options_.max_connections, 1);
    });
    if (!idle_.empty()) {
      Handle* h = idle_.back();
      idle_.pop_back();
      return h;
    }
    ++handles_;  // a new one, made outside the lock
  }
  CURL* easy = curl_easy_init();
  if (easy == nullptr) {
    Discard(nullptr);
    return nullptr;
  }
  auto* h = new Handle;
  h->easy = easy;
  return h;
}

void HttpClient::Release(Handle* handle) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(handle);
  }
  handle_freed_.notify_one();
}

void HttpClient::Discard(Handle* handle) const {
  if (handle != nullptr) {
    curl_easy_cleanup(handle->easy);
    delete handle;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    --handles_;
  }
  handle_freed_.notify_one();
}

std::chrono::microseconds HttpClient::Latency() const {
  return std::chrono::microseconds(
      std::max<int64_t>(latency_us_.load(std::memory_order_relaxed), 0));
}

unsigned HttpClient::Parallelism() const {
  const unsigned most = std::max(options_.parallel_requests, 1u);
  return Latency() >= options_.parallel_latency ? most : 1;
}

HttpCounters HttpClient::Counters() const {
  HttpCounters c;
  c.requests = requests_.load(std::memory_order_relaxed);
  c.bytes = bytes_.load(std::memory_order_relaxed);
  c.retries = retries_.load(std::memory_order_relaxed);
  c.failures = failures_.load(std::memory_order_relaxed);
  c.connections = connections_.load(std::memory_order_relaxed);
  return c;
}

// Options are set afresh on every attempt: curl_easy_reset clears them but keeps the handle's
// live connections, DNS cache and TLS session cache, which is the reuse we want.
Status HttpClient::Perform(Handle& h, HttpRequest& request, Attempt& attempt) const {
  CURL* c = h.easy;
  curl_easy_reset(c);
  h.error[0] = '\0';
  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM in a threaded daemon
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h.error);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.request_timeout.count()));
  // curl counts the low-speed window in whole seconds.
  const long low_s =
      std::max<long>(1, static_cast<long>((options_.low_speed_time.count() + 999) / 1000));
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, low_s);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, options_.low_speed_bytes_per_s);
  curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
  // Plain HTTP stores may sit behind redirects; a signed request is valid for its own URL only
  // (S3 answers a wrong region with 301), so signed requests report a redirect as a status.
  if (signer_ == nullptr) {
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
  }
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_USERAGENT, options_.user_agent.c_str());
  if (!options_.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, options_.ca_file.c_str());
  if (options_.insecure) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (request.method == "HEAD") {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (request.method != "GET") {
    return InternalError("http: unsupported method " + request.method);
  }
  struct curl_slist* list = nullptr;
  for (const auto& [name, value] : request.headers) {
    const std::string line = name + ": " + value;
    list = curl_slist_append(list, line.c_str());
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &Attempt::OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &attempt);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &Attempt::OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &attempt);
  requests_.fetch_add(1, std::memory_order_relaxed);
  attempt.code = curl_easy_perform(c);
  curl_off_t first_byte_us = 0;
  if (attempt.code == CURLE_OK &&
      curl_easy_getinfo(c, CURLINFO_STARTTRANSFER_TIME_T, &first_byte_us) == CURLE_OK) {
    // An average over about the last 8 requests; concurrent updates may drop one (a hint only).
    const int64_t old = latency_us_.load(std::memory_order_relaxed);
    latency_us_.store(old < 0 ? first_byte_us : old + (first_byte_us - old) / 8,
                      std::memory_order_relaxed);
  }
  long opened = 0;
  if (curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &opened) == CURLE_OK && opened > 0) {
    connections_.fetch_add(static_cast<uint64_t>(opened), std::memory_order_relaxed);
  }
  const char* effective = nullptr;
  if (curl_easy_getinfo(c, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK && effective) {
    attempt.effective_url = effective;
  }
  if (attempt.code != CURLE_OK) {
    attempt.curl_error =
        h.error[0] != '\0' ? std::string(h.error) : curl_easy_strerror(attempt.code);
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, nullptr);
  curl_slist_free_all(list);
  return OkStatus();
}

// Waits before attempt `n` (n ≥ 1): backoff_initial·2^(n-1), capped, drawn in [w/2, w] so that
// many threads failing together do not retry in lockstep.
static void Backoff(const HttpOptions& o, int n) {
  thread_local std::minstd_rand rng(std::random_device{}());
  double w = static_cast<double>(o.backoff_initial.count()) *
             static_cast<double>(1ull << std::min(n - 1, 20));
  w = std::min(w, static_cast<double>(o.backoff_max.count()));
  std::uniform_real_distribution<double> jitter(0.5, 1.0);
  std::this_thread::sleep_for(
      std::chrono::microseconds(static_cast<int64_t>(w * jitter(rng) * 1000)));
}

// The verdict on an attempt that failed in transport or with a retryable status; nullopt when
// the attempt got a final response that the request's own accept must judge.
static std::optional<HttpClient::Verdict> TransportVerdict(const HttpRequest& request,
                                                           const HttpClient::Attempt& a);

Status HttpClient::Run(HttpRequest& request, Attempt& attempt,
                       const std::function<Verdict(const Attempt&)>& accept) const {
  attempt.bytes_counter = &bytes_;
  const std::vector<std::pair<std::string, std::string>> base_headers = request.headers;
  Status last = InternalError("http: no attempt made");
  for (int n = 0; n <= options_.retries; ++n) {
    if (n > 0) {
      retries_.fetch_add(1, std::memory_order_relaxed);
      Backoff(options_, n);
    }
    // The handle first: a request waiting for one is signed (and dated) only when it goes out.
    Handle* h = Acquire();
    if (h == nullptr) return Status(ErrorCode::kOutOfMemory, "http: no curl handle");
    request.headers = base_headers;
    if (signer_ != nullptr) {
      if (Status signed_st = signer_->Sign(request); !signed_st.ok()) {
        Release(h);
        return std::move(signed_st).WithContext(Describe(request));
      }
    }
    attempt.Reset();
    attempt.attempts = n + 1;
    Status st = Perform(*h, request, attempt);
    Release(h);
    RETURN_IF_ERROR(st);
    Verdict v;
    if (auto t = TransportVerdict(request, attempt)) {
      v = std::move(*t);
    } else {
      attempt.RunCheck();
      v = accept(attempt);
    }
    if (v.status.ok()) return OkStatus();
    last = std::move(v.status);
    if (!v.retry) break;
  }
  failures_.fetch_add(1, std::memory_order_relaxed);
  // "GET URL (bytes=0-9): HTTP 503 after 3 attempts: Input/output error": the attempts go
  // before the errno's text IoError appended.
  std::string msg = last.message();
  if (last.code() == ErrorCode::kIo && last.sys_errno() != 0) {
    const std::string suffix = std::string(": ") + std::strerror(last.sys_errno());
    if (msg.size() >= suffix.size() && msg.ends_with(suffix))
      msg.resize(msg.size() - suffix.size());
    return IoError(msg + " after " + AttemptsText(attempt.attempts), last.sys_errno());
  }
  return Status(last.code(), msg + " after " + AttemptsText(attempt.attempts), last.sys_errno());
}

static std::optional<HttpClient::Verdict> TransportVerdict(const HttpRequest& request,
                                                           const HttpClient::Attempt& a) {
  if (a.Transport()) {
    return HttpClient::Verdict{IoError(Describe(request) + ": " + a.curl_error + " (curl error " +
                                           std::to_string(static_cast<int>(a.code)) + ")",
                                       EIO),
                               RetryableCurl(a.code)};
  }
  if (RetryableStatus(a.status)) {
    return HttpClient::Verdict{HttpClient::StatusError(request, a.status, 0, a.ErrorText()), true};
  }
  return std::nullopt;
}

Status HttpClient::StatusError(const HttpRequest& request, long status, int attempts,
                               const std::string& body) {
  std::string msg = Describe(request) + ": HTTP " + std::to_string(status);
  const std::string snippet = Snippet(body);
  if (!snippet.empty()) msg += " (" + snippet + ")";
  if (attempts > 0) msg += " after " + AttemptsText(attempts);
  int err = EIO;
  if (status == 401 || status == 403) err = EACCES;
  if (status == 412) {
    err = ESTALE;
    msg += ": changed since it was opened";
  }
  return IoError(std::move(msg), err);
}

// ---------------------------------------------------------------------------------------------
// The requests.

namespace {

// What a response's headers say of the object, for Head and Get; `length` is the body's size.
Result<RemoteObject> ObjectFrom(const HttpRequest& request, const HttpClient::Attempt& a,
                                std::optional<uint64_t> length) {
  RemoteObject o;
  if (!length) {
    length = ParseU64(a.Header("content-length"));
    if (!length) {
      return IoError(Describe(request) + ": the response has no usable Content-Length ('" +
                         a.Header("content-length") + "')",
                     EIO);
    }
  }
  o.size = *length;
  o.etag = a.Header("etag");
  o.last_modified = a.Header("last-modified");
  if (auto t = ParseHttpDate(o.last_modified)) o.mtime = *t;
  return o;
}

}  // namespace

Result<std::optional<RemoteObject>> HttpClient::Head(const std::string& url) const {
  HttpRequest request{"HEAD", url, {}, {}};
  Attempt attempt;
  std::optional<RemoteObject> found;
  Status st = Run(request, attempt, [&](const Attempt& a) -> Verdict {
    if (a.status == 404 || a.RedirectedToFolder(url)) return Verdict{};
    if (a.status != 200) return Verdict{StatusError(request, a.status, 0, a.ErrorText())};
    auto o = ObjectFrom(request, a, std::nullopt);
    if (!o.ok()) return Verdict{o.status()};
    found = std::move(*o);
    return Verdict{};
  });
  RETURN_IF_ERROR(st);
  return found;
}

Result<std::optional<std::string>> HttpClient::Get(const std::string& url, uint64_t max_bytes,
                                                   RemoteObject* info) const {
  HttpRequest request{"GET", url, {}, {}};
  std::string body;
  Attempt attempt;
  attempt.sink = &body;
  attempt.max_body = max_bytes;
  bool absent = false;
  Status st = Run(request, attempt, [&](const Attempt& a) -> Verdict {
    absent = a.status == 404 || a.RedirectedToFolder(url);
    if (absent) return Verdict{};
    if (a.status != 200) return Verdict{StatusError(request, a.status, 0, a.ErrorText())};
    if (a.over_limit) {
      return Verdict{CorruptError(Describe(request) + ": more than the " +
                                  std::to_string(max_bytes) + " bytes accepted for it")};
    }
    // curl reports a body shorter than its Content-Length as a transport error (retried);
    // this catches a length header that disagrees in any other way.
    const auto declared = ParseU64(a.Header("content-length"));
    if (declared && *declared != a.received) {
      return Verdict{
          IoError(Describe(request) + ": " + std::to_string(a.received) +
                      " bytes received of the " + std::to_string(*declared) + " announced",
                  EIO),
          true};
    }
    if (info != nullptr) {
      auto o = ObjectFrom(request, a, a.received);
      if (!o.ok()) return Verdict{o.status()};
      *info = std::move(*o);
    }
    return Verdict{};
  });
  RETURN_IF_ERROR(st);
  if (absent) return std::optional<std::string>();
  return std::optional<std::string>(std::move(body));
}

Result<HttpResponse> HttpClient::Send(HttpRequest request, uint64_t max_body) const {
  std::string body;
  Attempt attempt;
  attempt.sink = &body;
  attempt.max_body = max_body;
  Status st = Run(request, attempt, [&](const Attempt& a) -> Verdict {
    if (a.over_limit) {
      return Verdict{CorruptError(Describe(request) + ": a response larger than the " +
                                  std::to_string(max_body) + " bytes accepted")};
    }
    return Verdict{};
  });
  RETURN_IF_ERROR(st);
  HttpResponse response;
  response.status = attempt.status;
  response.headers = std::move(attempt.headers);
  response.body = std::move(body);
  response.attempts = attempt.attempts;
  return response;
}

namespace {

Status Stale(const HttpRequest& request, const std::string& why) {
  return IoError(Describe(request) + ": changed since it was opened (" + why + ")", ESTALE);
}

// Whether a range response's headers are exactly the bytes asked for, of the version asked for.
HttpClient::Verdict CheckRange(const HttpRequest& request, const HttpClient::Attempt& a,
                               const RemoteObject& object, uint64_t offset, size_t length) {
  using Verdict = HttpClient::Verdict;
  if (a.status == 412) return Verdict{Stale(request, "If-Match failed, HTTP 412")};
  if (a.status == 404) return Verdict{Stale(request, "HTTP 404: no longer there")};
  if (a.status == 416) return Verdict{Stale(request, "HTTP 416: the range is past its end now")};
  if (a.status != 200 && a.status != 206) {
    return Verdict{HttpClient::StatusError(request, a.status, 0, a.ErrorText())};
  }
  const std::string etag = a.Header("etag");
  if (!object.etag.empty() && !etag.empty() && OpaqueTag(etag) != OpaqueTag(object.etag)) {
    return Verdict{Stale(request, "ETag " + etag + ", opened at " + object.etag)};
  }
  const std::string modified = a.Header("last-modified");
  if (!object.last_modified.empty() && !modified.empty() && modified != object.last_modified) {
    return Verdict{
        Stale(request, "Last-Modified " + modified + ", opened at " + object.last_modified)};
  }
  if (a.status == 200) {
    if (offset == 0 && length == object.size) return Verdict{};
    return Verdict{IoError(Describe(request) + ": the server ignored the Range header (HTTP 200 "
                                               "instead of 206); range requests are required",
                           EIO)};
  }
  const std::string header = a.Header("content-range");
  const auto range = ParseContentRange(header);
  if (range && range->total != object.size) {
    return Verdict{Stale(request, "size " + std::to_string(range->total) + ", opened at " +
                                      std::to_string(object.size))};
  }
  if (!range || range->first != offset || range->last != offset + length - 1) {
    return Verdict{
        IoError(Describe(request) + ": answered with Content-Range '" + header + "'", EIO), true};
  }
  return Verdict{};
}

}  // namespace

Status HttpClient::ReadRange(const std::string& url, const RemoteObject& object, uint64_t offset,
                             void* out, size_t length) const {
  if (length == 0) return OkStatus();
  HttpRequest request{"GET", url, {}, {}};
  request.range = "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + length - 1);
  if (offset + length > object.size || offset + length < offset) {
    return CorruptError(Describe(request) + ": past the end of its " + std::to_string(object.size) +
                        " bytes");
  }
  request.AddHeader("Range", request.range);
  // If-Match compares strongly: a weak tag would fail every time, so those are checked only
  // against the response's own headers.
  if (!object.etag.empty() && !IsWeakTag(object.etag)) request.AddHeader("If-Match", object.etag);
  Attempt attempt;
  attempt.direct = static_cast<char*>(out);
  attempt.direct_length = length;
  attempt.check = [&](const Attempt& a) { return CheckRange(request, a, object, offset, length); };
  return Run(request, attempt, [&](const Attempt& a) -> Verdict {
    if (!a.verdict.status.ok()) return a.verdict;
    if (a.over_limit || a.received != length) {
      return Verdict{IoError(Describe(request) + ": " +
                                 (a.over_limit ? std::string("more") : std::to_string(a.received)) +
                                 " bytes received of the " + std::to_string(length) + " asked for",
                             EIO),
                     true};
    }
    return Verdict{};
  });
}

}  // namespace omicsfs::io::http
