// Real HTTP(S) servers for tests, on 127.0.0.1 only, always killed and reaped.
//
// NginxServer: Debian's nginx serving a directory over HTTP and HTTPS (a self-signed certificate
// for 127.0.0.1, made with openssl in the server's temp dir; ca_file() verifies it). nginx runs
// in the foreground in its own process group, with every path it writes (pid, logs, temp dirs)
// inside its temp dir, so it touches nothing under /var. Stop() and Restart() keep the ports,
// for "server went away, then came back" tests. ETags and single ranges are nginx's defaults.
//
// FaultServer: a small python3 server for the faults nginx cannot produce: one that accepts and
// never answers (a stall), bodies cut short of their Content-Length, and N failures (503) before
// it serves. It serves one file, with single ranges, ETag and Last-Modified.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace omicsfs::testutil {

struct NginxOptions {
  // URL path prefixes ("/private/") that answer 403 (nginx `deny all;`).
  std::vector<std::string> deny;
  bool https = true;
};

class NginxServer {
 public:
  // Serves `root`. nullptr when nginx or openssl cannot start; `error` then says why (the log).
  static std::unique_ptr<NginxServer> Start(const std::string& root, NginxOptions options = {},
                                            std::string* error = nullptr);
  ~NginxServer();  // kills the process group, reaps it, removes the temp dir
  NginxServer(const NginxServer&) = delete;
  NginxServer& operator=(const NginxServer&) = delete;

  std::string http_url() const;   // "http://127.0.0.1:PORT", no trailing slash
  std::string https_url() const;  // "https://127.0.0.1:PORT"
  const std::string& ca_file() const { return cert_; }  // the self-signed certificate (PEM)
  const std::string& dir() const { return dir_; }

  // SIGKILL to nginx's process group, and reaped: connections drop, new ones are refused.
  void Stop();
  // Starts nginx again on the same ports; false (see Log()) when it cannot.
  bool Restart();
  bool running() const { return pid_ > 0; }
  std::string Log() const;  // error log
  // Lines of the access log so far, one a request:
  // METHOD URI STATUS BYTES "RANGE" "AUTHORIZATION" (a signer's header shows there).
  // nginx writes a request's line after it has sent the response, so a client can be ahead of
  // the log: with at_least > 0 this waits (up to 5 s) until that many lines are there.
  std::vector<std::string> AccessLog(size_t at_least = 0) const;

 private:
  NginxServer() = default;
  bool Launch(std::string* error);

  std::string root_;
  std::string dir_;
  std::string cert_;
  NginxOptions options_;
  int http_port_ = 0;
  int https_port_ = 0;
  pid_t pid_ = -1;
};

class FaultServer {
 public:
  enum class Mode {
    kStall,      // accepts, reads the request, never answers
    kTruncate,   // the first `count` GETs send half the body, then close (count < 0: every GET)
    kFailFirst,  // the first `count` requests get 503, then it serves
    kSlow,       // every request is answered `count` milliseconds after it arrived
  };
  // Serves the bytes of `file` at every path.
  static std::unique_ptr<FaultServer> Start(Mode mode, const std::string& file, int count = 0,
                                            std::string* error = nullptr);
  ~FaultServer();  // SIGKILL and reap
  FaultServer(const FaultServer&) = delete;
  FaultServer& operator=(const FaultServer&) = delete;

  std::string url() const;  // "http://127.0.0.1:PORT/object"

 private:
  FaultServer() = default;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

// tests/servers/latency_proxy.py in front of a loopback HTTP server: every request is held
// `delay_ms` before it is passed on, so the server answers like a distant one (S3: 20-50 ms to
// the first byte). It records the most requests it has had in flight at once.
class LatencyProxy {
 public:
  // `upstream_url`: "http://127.0.0.1:PORT" (NginxServer::http_url()).
  static std::unique_ptr<LatencyProxy> Start(const std::string& upstream_url, int delay_ms,
                                             std::string* error = nullptr);
  ~LatencyProxy();  // SIGKILL and reap
  LatencyProxy(const LatencyProxy&) = delete;
  LatencyProxy& operator=(const LatencyProxy&) = delete;

  std::string url() const;  // "http://127.0.0.1:PORT", no trailing slash
  int MaxInFlight() const;  // the most requests held or relayed at once so far (0: none yet)

 private:
  LatencyProxy() = default;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

// A TCP port on 127.0.0.1 free at the time of the call.
int FreeLoopbackPort();

}  // namespace omicsfs::testutil
