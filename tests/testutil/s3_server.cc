#include "testutil/s3_server.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "util/subprocess.h"

namespace omicsfs::testutil {
namespace {

constexpr const char* kScripts = OMICSFS_S3_SCRIPTS;
// start.sh waits up to 90 s for the servers; a healthy start takes ~5 s.
constexpr double kStartLimitS = 150;

std::string Script(const char* name) { return std::string(kScripts) + "/" + name; }

std::string ValueOf(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + "=", 0) == 0) return line.substr(name.size() + 1);
  }
  return "";
}

std::string ReadTail(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.size() > max_bytes ? text.substr(text.size() - max_bytes) : text;
}

S3Server* g_server = nullptr;
std::string g_start_error;

}  // namespace

std::unique_ptr<S3Server> S3Server::Start(std::string* error) {
  // The servers outlive start.sh (they run in the background); as a child subreaper this process
  // inherits them when start.sh exits, so Stop can reap them.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  std::string templ = std::filesystem::temp_directory_path() / "omicsfs-s3-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    *error = "mkdtemp failed for " + templ;
    return nullptr;
  }
  std::unique_ptr<S3Server> server(new S3Server());
  server->dir_ = templ;
  if (const char* external = std::getenv("OMICSFS_S3_EXTERNAL")) {
    server->external_ = true;
    if (!server->ReadEnv(external, error)) return nullptr;
    return server;
  }
  // On failure the destructor stops and reaps whatever did start.
  if (!server->RunStart(false, error)) return nullptr;
  if (!server->ReadEnv(server->dir_ + "/s3.env", error)) return nullptr;
  return server;
}

bool S3Server::ReadEnv(const std::string& path, std::string* error) {
  const std::string env = ReadTail(path, 4096);
  env_file_ = path;
  endpoint_ = ValueOf(env, "S3_ENDPOINT");
  region_ = ValueOf(env, "S3_REGION");
  access_key_ = ValueOf(env, "AWS_ACCESS_KEY_ID");
  secret_key_ = ValueOf(env, "AWS_SECRET_ACCESS_KEY");
  if (endpoint_.empty() || secret_key_.empty()) {
    *error = path + " names no S3_ENDPOINT or AWS_SECRET_ACCESS_KEY:\n" + env;
    return false;
  }
  return true;
}

bool S3Server::RunStart(bool resume, std::string* error) {
  std::vector<std::string> argv = {Script("start.sh"), dir_};
  if (resume) argv.push_back("--resume");
  auto run = RunChild(argv, kStartLimitS, 0, 256 << 10);
  std::ifstream pid_file(dir_ + "/pids");
  std::string name;
  for (pid_t pid; pid_file >> name >> pid;) pids_.push_back(pid);
  if (run.ok() && run->Succeeded()) return true;
  if (error != nullptr) {
    *error = "tests/servers/s3/start.sh " + dir_ + (resume ? " --resume" : "") + " failed: " +
             (run.ok() ? run->Describe() + "\n" + run->output : run.status().ToString());
  }
  return false;
}

S3Server::~S3Server() { Stop(); }

// Reaps the servers (they are ours as a subreaper); SIGKILL for any that stop.sh left running.
void S3Server::Reap() {
  for (pid_t pid : pids_) {
    for (int i = 0; i < 100; ++i) {
      pid_t got = ::waitpid(pid, nullptr, WNOHANG);
      if (got == pid || (got < 0 && errno == ECHILD)) break;
      if (i == 50) ::kill(pid, SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  pids_.clear();
}

bool S3Server::Pause(std::string* error) {
  if (external_) {
    if (error != nullptr) *error = "an external server (OMICSFS_S3_EXTERNAL) is not paused";
    return false;
  }
  auto run = RunChild({Script("stop.sh"), dir_}, 30);
  Reap();
  if (run.ok() && run->Succeeded()) return true;
  if (error != nullptr) {
    *error = "stop.sh failed: " + (run.ok() ? run->Describe() : run.status().ToString());
  }
  return false;
}

bool S3Server::Resume(std::string* error) {
  if (external_) {
    if (error != nullptr) *error = "an external server (OMICSFS_S3_EXTERNAL) is not resumed";
    return false;
  }
  return RunStart(true, error);
}

void S3Server::Stop() {
  if (dir_.empty()) return;
  const bool clean = external_ || Pause();
  std::error_code ec;
  if (clean) std::filesystem::remove_all(dir_, ec);
  dir_.clear();
}

bool S3Server::Cli(const std::vector<std::string>& args, std::string* output) const {
  std::vector<std::string> argv = {"/usr/bin/python3", Script("s3cli.py"), "--env", env_file_};
  argv.insert(argv.end(), args.begin(), args.end());
  auto run = RunChild(argv, 300, 0, 1 << 20);
  if (!run.ok()) {
    if (output) *output = run.status().ToString();
    return false;
  }
  if (output) *output = run->output;
  return run->Succeeded();
}

void S3Server::CreateBucket(const std::string& bucket) const {
  std::string out;
  ASSERT_TRUE(Cli({"mb", bucket}, &out)) << "creating bucket " << bucket << ": " << out;
}

void S3Server::PutFile(const std::string& bucket, const std::string& key,
                       const std::string& path) const {
  std::string out;
  ASSERT_TRUE(Cli({"put", bucket, key, path}, &out))
      << "PUT " << bucket << "/" << key << ": " << out;
}

void S3Server::PutTree(const std::string& bucket, const std::string& prefix,
                       const std::string& dir) const {
  std::string out;
  ASSERT_TRUE(Cli({"putdir", bucket, prefix, dir}, &out))
      << "uploading " << dir << " to " << bucket << "/" << prefix << ": " << out;
}

std::string S3Server::Logs() const {
  std::string text;
  for (const char* name : {"swift", "setup", "wait"}) {
    text += std::string("== ") + name + ".log\n" + ReadTail(dir_ + "/log/" + name + ".log", 4096);
  }
  return text;
}

void S3ServerEnvironment::SetUp() {
  auto start = std::chrono::steady_clock::now();
  g_server = S3Server::Start(&g_start_error).release();
  if (g_server == nullptr) {
    ADD_FAILURE() << "the test S3 server did not start: " << g_start_error;
    return;
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "[s3] Swift s3api at %s started in %.1f s (state in %s)\n",
               g_server->endpoint().c_str(), s, g_server->dir().c_str());
}

void S3ServerEnvironment::TearDown() {
  delete g_server;
  g_server = nullptr;
}

S3Server* S3ServerEnvironment::Get() {
  if (g_server == nullptr) ADD_FAILURE() << "no test S3 server: " << g_start_error;
  return g_server;
}

}  // namespace omicsfs::testutil
