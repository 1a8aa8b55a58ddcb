#include "testutil/mount_fixture.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "util/fs.h"

namespace omicsfs::testutil {
namespace {

bool WaitPid(pid_t pid, std::chrono::milliseconds timeout, int* status) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    pid_t r = ::waitpid(pid, status, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    ::usleep(10000);
  }
}

}  // namespace

std::vector<CorpusMatrix> CorpusMatrices(const std::string& bpcells) {
  std::vector<CorpusMatrix> out;
  std::ifstream f(bpcells + "/manifest.tsv");
  std::string line;
  std::getline(f, line);  // header
  while (std::getline(f, line)) {
    std::istringstream ss(line);
    std::vector<std::string> c(8);
    for (auto& field : c) std::getline(ss, field, '\t');
    if (c[3] != "matrix") continue;
    CorpusMatrix s;
    s.dir = c[1] == "-" || c[1] == "/" ? c[0] : c[0] + c[1];
    s.mtx = bpcells + "/" + c[5];
    s.rownames = bpcells + "/" + c[6];
    s.colnames = bpcells + "/" + c[7];
    s.order = c[4];
    s.dtype = c[2].find("double") != std::string::npos  ? "float64"
              : c[2].find("float") != std::string::npos ? "float32"
                                                        : "uint32";
    out.push_back(std::move(s));
  }
  return out;
}

void ExpectPythonCheck(const std::string& script, const std::vector<std::string>& rows) {
  TempDir tmp;
  const std::string list = tmp.path() + "/list.tsv";
  {
    std::ofstream f(list);
    for (const auto& r : rows) f << r << "\n";
  }
  std::string out;
  EXPECT_EQ(RunCommand({"/usr/bin/python3", script, list}, &out, std::chrono::seconds(240)), 0)
      << out;
  EXPECT_EQ(out, "ok " + std::to_string(rows.size()) + "\n");
}

int RunCommand(const std::vector<std::string>& argv, std::string* out,
               std::chrono::seconds timeout) {
  int pipefd[2];
  if (::pipe(pipefd) != 0) return -1;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipefd[1], STDOUT_FILENO);
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(pipefd[1]);
  std::string data;
  char buf[65536];
  auto deadline = std::chrono::steady_clock::now() + timeout;
  ::fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
  int status = -1;
  for (;;) {
    ssize_t n = ::read(pipefd[0], buf, sizeof(buf));
    if (n > 0) {
      data.append(buf, n);
      continue;
    }
    if (n == 0) break;
    if (errno != EAGAIN && errno != EINTR) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      break;
    }
    ::usleep(2000);
  }
  ::close(pipefd[0]);
  if (!WaitPid(pid, std::chrono::milliseconds(timeout), &status)) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return -1;
  }
  if (out) *out = std::move(data);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool IsMountPoint(const std::string& path) {
  std::ifstream f("/proc/self/mountinfo");
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream ss(line);
    std::string id, parent, dev, root, mp;
    ss >> id >> parent >> dev >> root >> mp;
    if (mp == path) return true;
  }
  return false;
}

std::unique_ptr<MountedFs> MountedFs::Start(const std::string& binary, const std::string& source,
                                            const std::vector<std::string>& extra_args,
                                            std::chrono::seconds watchdog,
                                            std::chrono::seconds startup) {
  std::unique_ptr<MountedFs> m(new MountedFs());
  m->mountpoint_ = MakeTempDir("omicsfs-mnt-");
  m->log_path_ = m->mountpoint_ + ".log";
  if (m->mountpoint_.empty()) return nullptr;
  pid_t pid = ::fork();
  if (pid == 0) {
    int fd = ::open(m->log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) ::dup2(fd, STDERR_FILENO);
    std::vector<std::string> args = {binary, "-f"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    args.push_back(source);
    args.push_back(m->mountpoint_);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  m->pid_ = pid;
  auto deadline = std::chrono::steady_clock::now() + startup;
  while (!IsMountPoint(m->mountpoint_)) {
    int status;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      m->pid_ = -1;
      ::fprintf(stderr, "mount of %s exited before mounting:\n%s\n", source.c_str(),
                m->Log().c_str());
      return nullptr;
    }
    if (std::chrono::steady_clock::now() > deadline) {  // the destructor cleans up
      ::fprintf(stderr, "mount of %s did not come up in %lld s:\n%s\n", source.c_str(),
                static_cast<long long>(startup.count()), m->Log().c_str());
      return nullptr;
    }
    ::usleep(20000);
  }
  MountedFs* raw = m.get();
  m->watchdog_ = std::thread([raw, watchdog] {
    std::unique_lock<std::mutex> lock(raw->mu_);
    if (!raw->cv_.wait_for(lock, watchdog, [raw] { return raw->stopping_; })) {
      ::fprintf(stderr, "mount watchdog: %s overran; aborting the mount\n",
                raw->mountpoint_.c_str());
      if (raw->pid_ > 0) ::kill(raw->pid_, SIGKILL);
      RunCommand({"fusermount3", "-uz", raw->mountpoint_}, nullptr, std::chrono::seconds(10));
    }
  });
  return m;
}

int MountedFs::SignalAndWait(int sig, std::chrono::seconds timeout) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, sig);
  int status = 0;
  if (!WaitPid(pid_, timeout, &status)) return -1;
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool MountedFs::alive() const { return pid_ > 0 && ::kill(pid_, 0) == 0; }

std::string MountedFs::Log() const {
  std::ifstream f(log_path_);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void MountedFs::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
  if (IsMountPoint(mountpoint_)) {
    if (RunCommand({"fusermount3", "-u", mountpoint_}, nullptr, std::chrono::seconds(20)) != 0) {
      RunCommand({"fusermount3", "-uz", mountpoint_}, nullptr, std::chrono::seconds(20));
    }
  }
  if (pid_ > 0) {
    int status;
    if (!WaitPid(pid_, std::chrono::seconds(10), &status)) {
      ::kill(pid_, SIGTERM);
      if (!WaitPid(pid_, std::chrono::seconds(5), &status)) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
      }
    }
    pid_ = -1;
  }
  // A sanitizer report from the daemon fails the test that ran it, whatever the reads saw.
  const std::string log = Log();
  for (const char* marker : {"ERROR: AddressSanitizer", "WARNING: ThreadSanitizer",
                             "runtime error:", "ERROR: LeakSanitizer"}) {
    if (log.find(marker) != std::string::npos)
      ADD_FAILURE() << "the daemon reported: " << marker << "\n" << log;
  }
  ::rmdir(mountpoint_.c_str());
  ::unlink(log_path_.c_str());
}

MountedFs::~MountedFs() { Stop(); }

std::string ReadOrFail(const std::string& path) {
  std::string s;
  int err = 0;
  EXPECT_TRUE(ReadWhole(path, &s, &err)) << path << ": errno " << err;
  return s;
}

std::string ShOrFail(const std::string& cmd) {
  std::string out;
  EXPECT_EQ(RunCommand({"bash", "-c", "set -o pipefail; " + cmd}, &out), 0) << cmd;
  return out;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string Join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

void ExpectOnlyErrorTxt(const std::string& dir, const std::string& says) {
  SCOPED_TRACE(dir);
  std::vector<std::string> listed;
  fs_error ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    listed.push_back(it->path().filename().string());
  }
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_EQ(listed, std::vector<std::string>{"ERROR.txt"});
  const std::string text = ReadOrFail(dir + "/ERROR.txt");
  EXPECT_NE(text.find(says), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
}

bool ReadWhole(const std::string& path, std::string* out, int* err) {
  out->clear();
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) {
    if (err) *err = errno;
    return false;
  }
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (err) *err = errno;
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

std::string ReadMaybeGz(const std::string& path) {
  std::string out;
  if (path.size() < 3 || path.compare(path.size() - 3, 3, ".gz") != 0) {
    ReadWhole(path, &out);
    return out;
  }
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

long NumberBefore(const std::string& text, const std::string& phrase) {
  const size_t at = text.find(phrase);
  if (at == std::string::npos || at == 0) return -1;
  const size_t from = text.rfind(' ', at - 1) + 1;  // npos + 1 == 0: the text's start
  return std::strtol(text.c_str() + from, nullptr, 10);
}

std::string MakeTempDir(const char* prefix) {
  std::string tmpl = std::string("/tmp/") + prefix + "XXXXXX";
  char* p = ::mkdtemp(tmpl.data());
  return p ? std::string(p) : std::string();
}

TempDir::~TempDir() {
  if (!path_.empty()) RemoveTree(path_);
}

void RemoveTree(const std::string& path) {
  fs_error ec;
  fs::remove_all(path, ec);
}

void CopyTree(const std::string& from, const std::string& to) {
  fs::create_directories(to);
  for (fs::recursive_directory_iterator it(from), end; it != end; ++it) {
    const fs::path dst = fs::path(to) / fs::relative(it->path(), from);
    if (fs::is_directory(it->status())) {
      fs::create_directories(dst);
    } else {
      fs::copy_file(it->path(), dst);
      fs::permissions(dst, fs::add_perms | fs::owner_read | fs::owner_write);
    }
  }
}

std::string Slurp(const std::string& path) {
  std::string s;
  return ReadWhole(path, &s) ? s : std::string();
}

int ZipFolder(const std::string& src, const std::string& out, bool deflate) {
  const std::string zip_py =
      "import os, sys, zipfile\n"
      "src, out, method = sys.argv[1], sys.argv[2], int(sys.argv[3])\n"
      "with zipfile.ZipFile(out, 'w', compression=method) as z:\n"
      "  for root, ds, fs in os.walk(src):\n"
      "    ds.sort()\n"
      "    for f in sorted(fs):\n"
      "      p = os.path.join(root, f)\n"
      "      z.write(p, os.path.relpath(p, src))\n";
  return RunCommand({"/usr/bin/python3", "-c", zip_py, src, out, deflate ? "8" : "0"});
}

}  // namespace omicsfs::testutil
