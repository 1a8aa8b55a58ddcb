#include "io/s3/credentials.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "util/bytes.h"

namespace omicsfs::io::s3 {
namespace {

std::string Trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  const size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

std::string Env(const EnvLookup& env, const char* name) {
  const char* value = env(name);
  return value == nullptr ? "" : std::string(value);
}

// The profiles of an INI-style file: [name] (or [profile name], as in ~/.aws/config) sections of
// key = value lines; '#' and ';' start comment lines.
std::map<std::string, std::map<std::string, std::string>> ParseIni(const std::string& text) {
  std::map<std::string, std::map<std::string, std::string>> sections;
  std::map<std::string, std::string>* current = nullptr;
  std::istringstream in(text);
  for (std::string raw; std::getline(in, raw);) {
    const std::string line = Trim(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      std::string name = Trim(line.substr(1, line.size() - 2));
      if (name.rfind("profile ", 0) == 0) name = Trim(name.substr(8));
      current = &sections[name];
      continue;
    }
    const size_t eq = line.find('=');
    if (current == nullptr || eq == std::string::npos) continue;
    (*current)[AsciiLower(Trim(line.substr(0, eq)))] = Trim(line.substr(eq + 1));
  }
  return sections;
}

Result<Credentials> FromEnvironment(const EnvLookup& env) {
  Credentials c;
  c.access_key_id = Env(env, "AWS_ACCESS_KEY_ID");
  c.secret_access_key = Env(env, "AWS_SECRET_ACCESS_KEY");
  c.session_token = Env(env, "AWS_SESSION_TOKEN");
  c.source = "environment";
  if (c.secret_access_key.empty()) {
    return InvalidArgumentError(
        "S3 credentials: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
  }
  return c;
}

}  // namespace

Result<Credentials> ParseCredentialsFile(const std::string& text, const std::string& profile,
                                         const std::string& path) {
  const auto sections = ParseIni(text);
  const std::string where = path + " [" + profile + "]";
  auto it = sections.find(profile);
  if (it == sections.end()) {
    std::string names;
    for (const auto& [name, keys] : sections) names += (names.empty() ? "" : ", ") + name;
    return InvalidArgumentError("S3 credentials: no profile [" + profile + "] in " + path +
                                " (profiles there: " + (names.empty() ? "none" : names) + ")");
  }
  auto value = [&](const char* key) {
    auto v = it->second.find(key);
    return v == it->second.end() ? std::string() : v->second;
  };
  Credentials c{value("aws_access_key_id"), value("aws_secret_access_key"),
                value("aws_session_token"), where};
  if (c.access_key_id.empty()) {
    return InvalidArgumentError("S3 credentials: " + where + " has no aws_access_key_id");
  }
  if (c.secret_access_key.empty()) {
    return InvalidArgumentError("S3 credentials: " + where + " has no aws_secret_access_key");
  }
  return c;
}

Result<Credentials> LoadCredentials(const EnvLookup& env) {
  if (!Env(env, "AWS_ACCESS_KEY_ID").empty()) return FromEnvironment(env);
  if (!Env(env, "AWS_SECRET_ACCESS_KEY").empty()) {
    return InvalidArgumentError(
        "S3 credentials: AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not");
  }
  std::string path = Env(env, "AWS_SHARED_CREDENTIALS_FILE");
  if (path.empty()) {
    const std::string home = Env(env, "HOME");
    if (home.empty()) {
      return InvalidArgumentError(
          "S3 credentials: none in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) "
          "and no HOME to find ~/.aws/credentials; use -o s3_anonymous for a public bucket");
    }
    path = home + "/.aws/credentials";
  }
  std::string profile = Env(env, "AWS_PROFILE");
  if (profile.empty()) profile = "default";
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    if (err == ENOENT) {
      return InvalidArgumentError(
          "S3 credentials: none in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) "
          "and no credentials file " +
          path + " (profile [" + profile + "]); use -o s3_anonymous for a public bucket");
    }
    return IoError("S3 credentials: cannot read " + path, err);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseCredentialsFile(text.str(), profile, path);
}

Result<Credentials> LoadCredentials() {
  return LoadCredentials([](const char* name) { return std::getenv(name); });
}

}  // namespace omicsfs::io::s3
