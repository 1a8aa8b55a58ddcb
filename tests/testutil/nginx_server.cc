#include "testutil/nginx_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "testutil/mount_fixture.h"

namespace omicsfs::testutil {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool WriteText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  return static_cast<bool>(f);
}

bool CanConnect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// Starts argv in its own process group, stdout and stderr to `log`. Everything the child needs
// is built before fork: between fork and exec it only calls async-signal-safe functions.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& log, int stdout_fd = -1) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDERR_FILENO);
      ::dup2(stdout_fd >= 0 ? stdout_fd : fd, STDOUT_FILENO);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  if (pid > 0) ::setpgid(pid, pid);
  return pid;
}

void KillGroup(pid_t* pid) {
  if (*pid <= 0) return;
  ::kill(-*pid, SIGKILL);
  ::kill(*pid, SIGKILL);
  int status = 0;
  ::waitpid(*pid, &status, 0);
  *pid = -1;
}

// Spawns a server that prints the port it bound as the first line of its stdout, and returns that
// port (0 when none came within 20 s).
int SpawnWithPort(const std::vector<std::string>& argv, const std::string& log, pid_t* pid) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return 0;
  *pid = Spawn(argv, log, pipefd[1]);
  ::close(pipefd[1]);
  std::string line;
  char c;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  ::fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
  while (std::chrono::steady_clock::now() < deadline) {
    const ssize_t n = ::read(pipefd[0], &c, 1);
    if (n == 1 && c == '\n') break;
    if (n == 1) line.push_back(c);
    if (n == 0) break;
    if (n < 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::close(pipefd[0]);
  return std::atoi(line.c_str());
}

}  // namespace

int FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

// ---------------------------------------------------------------------------------------------
// nginx

std::unique_ptr<NginxServer> NginxServer::Start(const std::string& root, NginxOptions options,
                                                std::string* error) {
  std::unique_ptr<NginxServer> s(new NginxServer());
  s->root_ = root;
  s->options_ = std::move(options);
  s->dir_ = MakeTempDir("omicsfs-nginx-");
  if (s->dir_.empty()) {
    if (error) *error = "mkdtemp failed";
    return nullptr;
  }
  if (s->options_.https) {
    s->cert_ = s->dir_ + "/cert.pem";
    std::string out;
    // Through sh for 2>&1: the key generation's progress goes to the captured output.
    const std::string cmd =
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
        "-nodes -days 2 -keyout '" +
        s->dir_ + "/key.pem' -out '" + s->cert_ +
        "' -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>&1";
    const int rc = RunCommand({"sh", "-c", cmd}, &out, std::chrono::seconds(30));
    if (rc != 0) {
      if (error) *error = "openssl req failed: " + out;
      return nullptr;
    }
  }
  // Another process may take a port between FreeLoopbackPort and nginx's bind: try a few.
  for (int attempt = 0; attempt < 5; ++attempt) {
    s->http_port_ = FreeLoopbackPort();
    s->https_port_ = s->options_.https ? FreeLoopbackPort() : 0;
    if (s->Launch(error)) return s;
  }
  return nullptr;
}

bool NginxServer::Launch(std::string* error) {
  const std::string& d = dir_;
  std::ostringstream conf;
  conf << "daemon off;\nmaster_process off;\nworker_processes 1;\n"
       << "pid " << d << "/nginx.pid;\nerror_log " << d << "/error.log info;\n";
  // nginx run as root would switch its workers to `nobody`, who cannot read a 0700 temp dir.
  if (::geteuid() == 0) conf << "user root root;\n";
  conf << "events { worker_connections 512; }\nhttp {\n"
       << "  default_type application/octet-stream;\n  sendfile on;\n  keepalive_timeout 60;\n"
       << "  log_format t '$request_method $request_uri $status $body_bytes_sent \"$http_range\" "
          "\"$http_authorization\"';\n"
       << "  access_log " << d << "/access.log t;\n";
  for (const char* temp : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}) {
    conf << "  " << temp << "_temp_path " << d << "/" << temp << ";\n";
  }
  std::string locations;
  for (const std::string& p : options_.deny) locations += "    location " + p + " { deny all; }\n";
  conf << "  server {\n    listen 127.0.0.1:" << http_port_ << ";\n    root " << root_ << ";\n"
       << locations << "  }\n";
  if (options_.https) {
    conf << "  server {\n    listen 127.0.0.1:" << https_port_ << " ssl;\n    root " << root_
         << ";\n    ssl_certificate " << cert_ << ";\n    ssl_certificate_key " << d
         << "/key.pem;\n"
         << locations << "  }\n";
  }
  conf << "}\n";
  if (!WriteText(d + "/nginx.conf", conf.str())) {
    if (error) *error = "cannot write " + d + "/nginx.conf";
    return false;
  }
  pid_ = Spawn({"/usr/sbin/nginx", "-p", d, "-c", d + "/nginx.conf", "-e", d + "/error.log"},
               d + "/stderr.log");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      if (error) *error = "nginx exited: " + ReadText(d + "/stderr.log") + Log();
      return false;
    }
    if (CanConnect(http_port_) && (!options_.https || CanConnect(https_port_))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (error) *error = "nginx did not listen within 15 s: " + Log();
  KillGroup(&pid_);
  return false;
}

void NginxServer::Stop() { KillGroup(&pid_); }

bool NginxServer::Restart() {
  Stop();
  std::string error;
  if (Launch(&error)) return true;
  std::fprintf(stderr, "nginx restart failed: %s\n", error.c_str());
  return false;
}

NginxServer::~NginxServer() {
  Stop();
  if (!dir_.empty()) RunCommand({"rm", "-rf", dir_}, nullptr, std::chrono::seconds(30));
}

std::string NginxServer::http_url() const {
  return "http://127.0.0.1:" + std::to_string(http_port_);
}

std::string NginxServer::https_url() const {
  return "https://127.0.0.1:" + std::to_string(https_port_);
}

std::string NginxServer::Log() const { return ReadText(dir_ + "/error.log"); }

std::vector<std::string> NginxServer::AccessLog(size_t at_least) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    std::vector<std::string> lines;
    std::istringstream in(ReadText(dir_ + "/access.log"));
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    if (lines.size() >= at_least || std::chrono::steady_clock::now() >= deadline) return lines;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// ---------------------------------------------------------------------------------------------
// The python3 fault server

namespace {

// Serves one file at every path: HEAD and GET, single ranges, ETag and Last-Modified.
constexpr const char* kFaultScript = R"PY(
import email.utils, os, socket, sys, threading, time
mode, path, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(path, 'rb').read()
mtime = os.stat(path).st_mtime
modified = email.utils.formatdate(mtime, usegmt=True)
etag = '"%x-%x"' % (int(mtime), len(data))
lock = threading.Lock()
seen = {'all': 0, 'get': 0}
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(('127.0.0.1', 0))
srv.listen(64)
print(srv.getsockname()[1], flush=True)

def serve(c):
    f = c.makefile('rb')
    while True:
        line = f.readline()
        if not line:
            return
        method = line.split()[0].decode()
        headers = {}
        while True:
            h = f.readline()
            if h in (b'\r\n', b'\n', b''):
                break
            k, _, v = h.decode().partition(':')
            headers[k.strip().lower()] = v.strip()
        if mode == 'stall':
            time.sleep(3600)
            return
        if mode == 'slow':
            time.sleep(count / 1000.0)
        with lock:
            seen['all'] += 1
            n_all = seen['all']
            if method == 'GET':
                seen['get'] += 1
            n_get = seen['get']
        if mode == 'fail' and n_all <= count:
            body = b'try again'
            c.sendall(b'HTTP/1.1 503 Service Unavailable\r\nContent-Length: %d\r\n\r\n%s'
                      % (len(body), body))
            continue
        status, body, extra = 200, data, ''
        rng = headers.get('range', '')
        if rng.startswith('bytes='):
            a, _, b = rng[6:].partition('-')
            a, b = int(a), min(int(b), len(data) - 1)
            status, body = 206, data[a:b + 1]
            extra = 'Content-Range: bytes %d-%d/%d\r\n' % (a, b, len(data))
        head = ('HTTP/1.1 %d %s\r\nContent-Length: %d\r\nETag: %s\r\nLast-Modified: %s\r\n'
                'Accept-Ranges: bytes\r\n%s\r\n') % (
                    status, 'OK' if status == 200 else 'Partial Content', len(body), etag,
                    modified, extra)
        if method == 'HEAD':
            c.sendall(head.encode())
            continue
        if mode == 'truncate' and (count < 0 or n_get <= count):
            c.sendall(head.encode() + body[:len(body) // 2])
            c.shutdown(socket.SHUT_RDWR)
            return
        c.sendall(head.encode() + body)

def handle(c):
    try:
        serve(c)
    except OSError:
        pass
    finally:
        c.close()

while True:
    conn, _ = srv.accept()
    threading.Thread(target=handle, args=(conn,), daemon=True).start()
)PY";

}  // namespace

std::unique_ptr<FaultServer> FaultServer::Start(Mode mode, const std::string& file, int count,
                                                std::string* error) {
  std::unique_ptr<FaultServer> s(new FaultServer());
  s->dir_ = MakeTempDir("omicsfs-fault-");
  const std::string script = s->dir_ + "/fault_server.py";
  if (s->dir_.empty() || !WriteText(script, kFaultScript)) {
    if (error) *error = "cannot write the fault server script";
    return nullptr;
  }
  const char* name = mode == Mode::kStall      ? "stall"
                     : mode == Mode::kTruncate ? "truncate"
                     : mode == Mode::kSlow     ? "slow"
                                               : "fail";
  s->port_ = SpawnWithPort({"/usr/bin/python3", "-u", script, name, file, std::to_string(count)},
                           s->dir_ + "/log", &s->pid_);
  if (s->port_ <= 0) {
    if (error) *error = "the fault server did not start: " + ReadText(s->dir_ + "/log");
    return nullptr;
  }
  return s;
}

FaultServer::~FaultServer() {
  KillGroup(&pid_);
  if (!dir_.empty()) RunCommand({"rm", "-rf", dir_}, nullptr, std::chrono::seconds(30));
}

std::string FaultServer::url() const {
  return "http://127.0.0.1:" + std::to_string(port_) + "/object";
}

std::unique_ptr<LatencyProxy> LatencyProxy::Start(const std::string& upstream_url, int delay_ms,
                                                  std::string* error) {
  const size_t colon = upstream_url.rfind(':');
  const int upstream_port =
      colon == std::string::npos ? 0 : std::atoi(upstream_url.c_str() + colon + 1);
  if (upstream_url.rfind("http://127.0.0.1:", 0) != 0 || upstream_port <= 0) {
    if (error) *error = "not a loopback http URL: " + upstream_url;
    return nullptr;
  }
  std::unique_ptr<LatencyProxy> p(new LatencyProxy());
  p->dir_ = MakeTempDir("omicsfs-proxy-");
  if (p->dir_.empty()) return nullptr;
  p->port_ =
      SpawnWithPort({"/usr/bin/python3", "-u", OMICSFS_LATENCY_PROXY, std::to_string(upstream_port),
                     std::to_string(delay_ms), p->dir_ + "/max_in_flight"},
                    p->dir_ + "/log", &p->pid_);
  if (p->port_ <= 0) {
    if (error) *error = "the latency proxy did not start: " + ReadText(p->dir_ + "/log");
    return nullptr;
  }
  return p;
}

LatencyProxy::~LatencyProxy() {
  KillGroup(&pid_);
  if (!dir_.empty()) RunCommand({"rm", "-rf", dir_}, nullptr, std::chrono::seconds(30));
}

std::string LatencyProxy::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

int LatencyProxy::MaxInFlight() const {
  return std::atoi(ReadText(dir_ + "/max_in_flight").c_str());
}

}  // namespace omicsfs::testutil
