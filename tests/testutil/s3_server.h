// A real S3 server for tests: a one-node OpenStack Swift with its s3api middleware on 127.0.0.1
// (tests/servers/s3/start.sh), which checks SigV4 signatures, so a wrong key fails as on AWS.
// Start it once per test binary with S3ServerEnvironment; a server that cannot start fails the
// tests with its logs (never a skip). The destructor stops every server process and reaps it.
//
// Start takes 4.8-7.8 s on this VM (2 cores at load average 6); s3cli.py uploads the ~390 files
// of the S3 tests' corpus stores in ~2.5 s.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace omicsfs::testutil {

class S3Server {
 public:
  // Starts a server with its state in a fresh temporary directory. nullptr on failure, with
  // start.sh's message and the servers' logs in *error.
  // With OMICSFS_S3_EXTERNAL=FILE (an s3.env as start.sh writes it, by hand, never in CI) the
  // tests use that running server instead (a radosgw, say); Pause and Resume then fail.
  static std::unique_ptr<S3Server> Start(std::string* error);
  ~S3Server();
  S3Server(const S3Server&) = delete;
  S3Server& operator=(const S3Server&) = delete;

  const std::string& endpoint() const { return endpoint_; }      // "http://127.0.0.1:PORT"
  const std::string& region() const { return region_; }          // "us-east-1"
  const std::string& access_key() const { return access_key_; }  // "test:tester"
  const std::string& secret_key() const { return secret_key_; }  // random per start
  const std::string& dir() const { return dir_; }

  // tests/servers/s3/s3cli.py with this server's credentials; true on success, its output (or
  // the failure) in *output when given.
  bool Cli(const std::vector<std::string>& args, std::string* output = nullptr) const;
  // Gtest assertions around Cli: a bucket (an existing one is fine), one file, a whole tree.
  void CreateBucket(const std::string& bucket) const;
  void PutFile(const std::string& bucket, const std::string& key, const std::string& path) const;
  void PutTree(const std::string& bucket, const std::string& prefix, const std::string& dir) const;
  // The last lines of the servers' logs, for failure messages.
  std::string Logs() const;

  // Fault tests: Pause stops every server process (and reaps it); Resume starts them again on
  // the same ports, with the same keys and objects. False with the reason in *error.
  bool Pause(std::string* error = nullptr);
  bool Resume(std::string* error = nullptr);

 private:
  S3Server() = default;
  // Runs start.sh DIR [--resume] and takes the pids it wrote; false with the output in *error.
  bool RunStart(bool resume, std::string* error);
  void Reap();
  void Stop();

  // Reads endpoint, region and keys from an s3.env file; false when it names no endpoint or key.
  bool ReadEnv(const std::string& path, std::string* error);

  std::string dir_, endpoint_, region_, access_key_, secret_key_;
  std::string env_file_;
  bool external_ = false;
  std::vector<pid_t> pids_;
};

// One server for the whole test binary: add it in main, or use the S3 test main below.
class S3ServerEnvironment : public ::testing::Environment {
 public:
  void SetUp() override;
  void TearDown() override;
  // The running server; fails the calling test (and returns nullptr) when it did not start.
  static S3Server* Get();
};

}  // namespace omicsfs::testutil
