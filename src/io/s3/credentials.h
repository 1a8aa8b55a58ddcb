// S3 credentials (io/s3): from the environment or a shared credentials file, never from the
// command line (a password in argv shows in `ps` and in shell histories), or none (anonymous:
// requests go unsigned, for public buckets).
//
// Order, as the AWS CLI and SDKs use it:
// 1. AWS_ACCESS_KEY_ID with AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary keys);
// 2. the profile AWS_PROFILE (default "default") of the file AWS_SHARED_CREDENTIALS_FILE
//    (default ~/.aws/credentials): aws_access_key_id, aws_secret_access_key, aws_session_token.
// Nothing found is an error that says where it looked; anonymous access is asked for explicitly.
#pragma once

#include <functional>
#include <string>

#include "util/status.h"

namespace omicsfs::io::s3 {

struct Credentials {
  std::string access_key_id;  // empty: anonymous
  std::string secret_access_key;
  std::string session_token;  // temporary credentials only
  // Where they came from, for messages: "environment", "/root/.aws/credentials [default]".
  std::string source;

  bool anonymous() const { return access_key_id.empty(); }
  static Credentials Anonymous() { return Credentials{"", "", "", "anonymous"}; }
};

// Looks up an environment variable; nullptr when unset. Tests pass their own.
using EnvLookup = std::function<const char*(const char*)>;

// The credentials as described above. InvalidArgument (naming the variable, file and profile)
// when a source is incomplete or there is none; IoError when the file cannot be read.
Result<Credentials> LoadCredentials(const EnvLookup& env);
Result<Credentials> LoadCredentials();  // from this process's environment

// The profile `profile` of an AWS shared credentials file's text; `path` is for messages.
Result<Credentials> ParseCredentialsFile(const std::string& text, const std::string& profile,
                                         const std::string& path);

}  // namespace omicsfs::io::s3
