// The HTTP(S) client under the http and s3 backends (architecture (b2)): libcurl, one client per
// mount, shared by every FUSE thread. It keeps idle connections for reuse, bounds every attempt
// with timeouts (no read can hang), retries transient failures with backoff, and never hands back
// a short or mismatched body: a range read either fills exactly the bytes asked for, of the
// version asked for, or fails.
//
// Status mapping (the errno is chosen here, once, for both remote backends):
// - 404 is absent: Head and Get answer nullopt; ReadRange (an object known to exist) says ESTALE.
// - 401/403: IoError(EACCES) naming the URL and status.
// - 412 (If-Match failed), or an ETag, Last-Modified or size that differs from the version asked
//   for: IoError(ESTALE), "... changed since it was opened".
// - anything else that still fails after the retries: IoError(EIO) naming the method, URL, range,
//   the HTTP status or curl error, and the attempts made.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/status.h"

namespace omicsfs::io::http {

struct HttpOptions {
  // Why these defaults: tensorstore once hung for 30 min on a dead peer without connect and
  // low-speed limits (field-notes "Object storage and HTTP"). A stalled transfer is abandoned
  // after low_speed_time below low_speed_bytes_per_s; any one attempt after request_timeout.
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds low_speed_time{20'000};
  long low_speed_bytes_per_s = 1024;
  std::chrono::milliseconds request_timeout{300'000};
  // Attempts after the first, on 5xx, 429, 408, connection failures, timeouts and truncated
  // bodies. The waits double from backoff_initial up to backoff_max, each drawn in [w/2, w].
  int retries = 4;
  std::chrono::milliseconds backoff_initial{200};
  std::chrono::milliseconds backoff_max{5'000};
  // TLS: peers are verified against the system store, or against ca_file (PEM) when it is set.
  // `insecure` turns verification off; only an explicit option (tests, lab servers) sets it.
  std::string ca_file;
  bool insecure = false;
  // Easy handles at most, each with its connection (keep-alive), DNS entries and TLS session:
  // the connection pool. A request finding them all busy waits for one, rather than opening a
  // connection used once (before, with 3 readers x 8 requests in flight and 16 handles kept,
  // about every third request opened a connection, over https with a TLS handshake).
  size_t max_connections = 16;
  // Requests one reader keeps in flight when it needs several objects at once (the arrays of a
  // Zarr record range): ByteSpace::Parallelism of the HTTP and S3 spaces, once the server's
  // time to first byte averages parallel_latency or more (below it, one at a time: overlapping
  // fetches that cost well under a millisecond saved nothing and the hand-offs cost 20 %).
  unsigned parallel_requests = 8;
  std::chrono::microseconds parallel_latency{2'000};
  std::string user_agent = "omicsfs";
};

// One request as it will be sent; what a RequestSigner sees and may add headers to.
struct HttpRequest {
  std::string method;  // "GET" or "HEAD"
  std::string url;     // absolute, already percent-encoded
  // Name and value; sent in this order. The client adds Range and If-Match before signing.
  std::vector<std::pair<std::string, std::string>> headers;
  // The Range header's value ("bytes=0-1023"), empty for none; set before signing, for messages.
  std::string range;
  void AddHeader(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
  }
};

// The hook the S3 backend signs with (SigV4 in io/s3/). Sign runs before every attempt, retries
// included (so each attempt gets a fresh x-amz-date), on the request exactly as it will be sent:
// it may add headers (Authorization, x-amz-date, x-amz-content-sha256, x-amz-security-token) and
// must not change the method or URL. An error fails the request without sending it. The body of
// every request the client makes is empty. Called from many threads at once.
class RequestSigner {
 public:
  virtual ~RequestSigner() = default;
  virtual Status Sign(HttpRequest& request) const = 0;
};

struct HttpResponse {
  long status = 0;
  // Names lower-cased; the last value of a repeated header; only the final response's headers
  // (after redirects and 100-continue).
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  int attempts = 0;
  std::string Header(const std::string& lower_name) const;  // "" when absent
};

// What a HEAD (or a full GET) says of one object version.
struct RemoteObject {
  uint64_t size = 0;
  std::string etag;           // as sent, quotes included; may be empty
  std::string last_modified;  // as sent; may be empty
  struct timespec mtime {};   // parsed Last-Modified, 0 when absent
  // "size etag last-modified": equal stamps mean equal bytes (io::ObjectInfo::stamp).
  std::string Stamp() const;
};

struct HttpCounters {
  uint64_t requests = 0;     // attempts sent, retries included
  uint64_t bytes = 0;        // body bytes received
  uint64_t retries = 0;      // attempts after a transient failure
  uint64_t failures = 0;     // requests that finally failed (status or transport)
  uint64_t connections = 0;  // connections opened (the rest of the requests reused one)
};

class HttpClient {
 public:
  static Result<std::shared_ptr<HttpClient>> Create(
      HttpOptions options, std::shared_ptr<const RequestSigner> signer = nullptr);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // HEAD: the object's size, ETag and Last-Modified; nullopt on 404, and for a folder (a
  // redirect to URL/, as nginx and Apache answer a directory's path).
  Result<std::optional<RemoteObject>> Head(const std::string& url) const;
  // GET of the whole object: nullopt as for Head; Corrupt when it is larger than max_bytes (the
  // transfer stops there); `info`, when given, receives what the response says of the object.
  Result<std::optional<std::string>> Get(const std::string& url, uint64_t max_bytes,
                                         RemoteObject* info = nullptr) const;
  // Exactly `length` bytes at `offset` of the version `object` (from Head) into `out`: a 206
  // whose Content-Range is exactly [offset, offset+length) of object.size, or a 200 when that
  // range is the whole object. Sends If-Match with a strong ETag. Anything else is retried or
  // fails (ESTALE when the object changed); `out` holds no meaningful bytes after an error.
  Status ReadRange(const std::string& url, const RemoteObject& object, uint64_t offset, void* out,
                   size_t length) const;
  // One request with the retry policy, for callers that interpret the status themselves (S3
  // listings): every final HTTP status is returned as a response; transport failures that
  // outlast the retries are IoError(EIO). The body is kept up to max_body bytes (Corrupt beyond).
  Result<HttpResponse> Send(HttpRequest request, uint64_t max_body) const;

  HttpCounters Counters() const;
  const HttpOptions& options() const { return options_; }
  // Requests one reader should keep in flight: options().parallel_requests when the server's
  // average time to first byte (over recent requests) is at least options().parallel_latency,
  // else 1.
  unsigned Parallelism() const;
  // The average time to first byte of recent requests (0 before the first).
  std::chrono::microseconds Latency() const;

  // The errno a final HTTP status maps to (EACCES for 401/403, ESTALE for 412, EIO otherwise),
  // and the message for it; shared with the s3 backend.
  static Status StatusError(const HttpRequest& request, long status, int attempts,
                            const std::string& body);

  // Internals, public only for the helpers in http_client.cc.
  struct Handle;   // an easy handle and its error buffer
  struct Attempt;  // one transfer's sink and outcome
  struct Verdict;  // what a request makes of one attempt: done, failed, or worth a retry

 private:
  HttpClient(HttpOptions options, std::shared_ptr<const RequestSigner> signer);
  // A handle of the pool, waiting while max_connections are busy; nullptr when curl has none.
  Handle* Acquire() const;
  void Release(Handle* handle) const;  // back to the pool
  void Discard(Handle* handle) const;  // out of the pool (nullptr: a handle never made)
  // Sends `request` (signed afresh each time) until `accept` is content with an attempt, an
  // attempt fails for good, or the retries run out. Transport failures and 5xx/429/408 are
  // judged before `accept` sees the attempt.
  Status Run(HttpRequest& request, Attempt& attempt,
             const std::function<Verdict(const Attempt&)>& accept) const;
  Status Perform(Handle& handle, HttpRequest& request, Attempt& attempt) const;

  const HttpOptions options_;
  const std::shared_ptr<const RequestSigner> signer_;
  mutable std::mutex mu_;
  mutable std::condition_variable handle_freed_;
  mutable std::vector<Handle*> idle_;
  mutable size_t handles_ = 0;  // idle and busy
  mutable std::atomic<uint64_t> requests_{0};
  mutable std::atomic<uint64_t> bytes_{0};
  mutable std::atomic<uint64_t> connections_{0};
  mutable std::atomic<int64_t> latency_us_{
      -1};  // moving average of time to first byte; -1: none yet
  mutable std::atomic<uint64_t> retries_{0};
  mutable std::atomic<uint64_t> failures_{0};
};

// Percent-encodes a '/'-separated key for a URL path: every byte but A-Z a-z 0-9 - . _ ~ and '/'.
std::string EncodeKeyForUrl(const std::string& key);
// Parses an HTTP date (RFC 7231 IMF-fixdate, and the obsolete forms curl_getdate knows).
std::optional<struct timespec> ParseHttpDate(const std::string& date);

}  // namespace omicsfs::io::http
