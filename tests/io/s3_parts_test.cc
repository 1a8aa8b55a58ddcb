// io/s3 without a server: credentials (environment, shared file, profiles, errors), s3:// URLs
// and endpoints, ListObjectsV2 and error XML.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>

#include "io/s3/credentials.h"
#include "io/s3/list_objects.h"
#include "io/s3/s3_url.h"

namespace omicsfs::io::s3 {
namespace {

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

TEST(S3Credentials, FromEnvironment) {
  auto c = LoadCredentials(FakeEnv({{"AWS_ACCESS_KEY_ID", "AK"},
                                    {"AWS_SECRET_ACCESS_KEY", "SK"},
                                    {"AWS_SESSION_TOKEN", "TOK"},
                                    {"HOME", "/nonexistent"}}));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "AK");
  EXPECT_EQ(c->secret_access_key, "SK");
  EXPECT_EQ(c->session_token, "TOK");
  EXPECT_EQ(c->source, "environment");
  auto half = LoadCredentials(FakeEnv({{"AWS_ACCESS_KEY_ID", "AK"}}));
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.status().message().find("AWS_SECRET_ACCESS_KEY is not"), std::string::npos)
      << half.status().message();
  auto other_half = LoadCredentials(FakeEnv({{"AWS_SECRET_ACCESS_KEY", "SK"}}));
  ASSERT_FALSE(other_half.ok());
  EXPECT_NE(other_half.status().message().find("AWS_ACCESS_KEY_ID is not"), std::string::npos);
}

TEST(S3Credentials, SharedFileAndProfiles) {
  char dir[] = "/tmp/omicsfs-cred-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/credentials";
  std::ofstream(path) << "# comment\n[default]\naws_access_key_id = AKD\n"
                         "aws_secret_access_key=SKD  \n\n; other\n[profile lab]\n"
                         "AWS_ACCESS_KEY_ID = test:tester\naws_secret_access_key = s=x\n"
                         "aws_session_token = T\n[broken]\naws_access_key_id = X\n";
  auto def = LoadCredentials(FakeEnv({{"AWS_SHARED_CREDENTIALS_FILE", path}}));
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  EXPECT_EQ(def->access_key_id, "AKD");
  EXPECT_EQ(def->secret_access_key, "SKD");
  EXPECT_EQ(def->source, path + " [default]");
  auto lab =
      LoadCredentials(FakeEnv({{"AWS_SHARED_CREDENTIALS_FILE", path}, {"AWS_PROFILE", "lab"}}));
  ASSERT_TRUE(lab.ok()) << lab.status().ToString();
  EXPECT_EQ(lab->access_key_id, "test:tester");
  EXPECT_EQ(lab->secret_access_key, "s=x");
  EXPECT_EQ(lab->session_token, "T");
  auto broken =
      LoadCredentials(FakeEnv({{"AWS_SHARED_CREDENTIALS_FILE", path}, {"AWS_PROFILE", "broken"}}));
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().message(),
            "S3 credentials: " + path + " [broken] has no aws_secret_access_key");
  auto missing =
      LoadCredentials(FakeEnv({{"AWS_SHARED_CREDENTIALS_FILE", path}, {"AWS_PROFILE", "nope"}}));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "S3 credentials: no profile [nope] in " + path +
                                            " (profiles there: broken, default, lab)");
  // ~/.aws/credentials under HOME; the environment wins over the file.
  ASSERT_EQ(::mkdir((std::string(dir) + "/.aws").c_str(), 0700), 0);
  ASSERT_EQ(::rename(path.c_str(), (std::string(dir) + "/.aws/credentials").c_str()), 0);
  auto home = LoadCredentials(FakeEnv({{"HOME", dir}}));
  ASSERT_TRUE(home.ok()) << home.status().ToString();
  EXPECT_EQ(home->access_key_id, "AKD");
  auto env = LoadCredentials(
      FakeEnv({{"HOME", dir}, {"AWS_ACCESS_KEY_ID", "E"}, {"AWS_SECRET_ACCESS_KEY", "S"}}));
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->access_key_id, "E");
  std::remove((std::string(dir) + "/.aws/credentials").c_str());
  ::rmdir((std::string(dir) + "/.aws").c_str());
  ::rmdir(dir);
}

TEST(S3Credentials, NoneIsAClearError) {
  auto none = LoadCredentials(FakeEnv({{"HOME", "/nonexistent"}}));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find("/nonexistent/.aws/credentials (profile [default])"),
            std::string::npos)
      << none.status().message();
  EXPECT_NE(none.status().message().find("s3_anonymous"), std::string::npos);
  EXPECT_TRUE(Credentials::Anonymous().anonymous());
}

TEST(S3Url, ParseS3Url) {
  auto a = ParseS3Url("s3://my-bucket/cohorts/2024/");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->bucket, "my-bucket");
  EXPECT_EQ(a->prefix, "cohorts/2024");
  auto b = ParseS3Url("s3://my.bucket");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->prefix, "");
  for (const char* bad : {"s3://", "s3://AB", "s3://Bucket/x", "s3://b_c/x", "http://bkt/x",
                          "s3://bkt//x", "s3://bkt/a/../b", "s3://bkt/./b", "s3://-bkt"}) {
    EXPECT_FALSE(ParseS3Url(bad).ok()) << bad;
  }
}

TEST(S3Url, EndpointsAndUrls) {
  auto aws = S3Endpoint::Make("", "eu-west-1");
  ASSERT_TRUE(aws.ok());
  EXPECT_EQ(aws->ObjectUrl("bkt", "a b/c+d.txt"),
            "https://bkt.s3.eu-west-1.amazonaws.com/a%20b/c%2Bd.txt");
  EXPECT_EQ(aws->ObjectUrl("my.bkt", "k"), "https://s3.eu-west-1.amazonaws.com/my.bkt/k");
  auto local = S3Endpoint::Make("http://127.0.0.1:9000/", "");
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->region(), "us-east-1");
  EXPECT_EQ(local->ObjectUrl("bkt", "x/y.zarr/.zarray"),
            "http://127.0.0.1:9000/bkt/x/y.zarr/.zarray");
  EXPECT_EQ(local->BucketUrl("bkt", {{"list-type", "2"}, {"prefix", "a b/"}}),
            "http://127.0.0.1:9000/bkt/?list-type=2&prefix=a%20b%2F");
  EXPECT_FALSE(S3Endpoint::Make("ftp://x", "").ok());
  EXPECT_FALSE(S3Endpoint::Make("", "us east").ok());
  auto parts = SplitUrl("http://127.0.0.1:80/bkt/k%20x?list-type=2#frag");
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(parts->host, "127.0.0.1");
  EXPECT_EQ(parts->path, "/bkt/k%20x");
  EXPECT_EQ(parts->query, "list-type=2");
  EXPECT_EQ(SplitUrl("https://h.example:8443")->host, "h.example:8443");
  EXPECT_EQ(SplitUrl("https://h.example:8443")->path, "/");
}

TEST(S3List, ParsesPagesPrefixesAndUrlEncodedKeys) {
  const std::string xml =
      "<?xml version='1.0' encoding='UTF-8'?>\n"
      "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>bkt</Name>"
      "<Prefix>a/</Prefix><NextContinuationToken>YS8xLnR4dA==</NextContinuationToken>"
      "<KeyCount>2</KeyCount><MaxKeys>2</MaxKeys><Delimiter>/</Delimiter>"
      "<EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>"
      "<Contents><Key>a/sp%20ace/%C3%BC%2Bx.txt</Key><LastModified>2026-11-24T06:21:32.250Z"
      "</LastModified><ETag>&quot;644be06dfc54061fd1e67f5ebbabcd58&quot;</ETag><Size>20</Size>"
      "<StorageClass>STANDARD</StorageClass></Contents>"
      "<CommonPrefixes><Prefix>a/b%2B/</Prefix></CommonPrefixes></ListBucketResult>";
  auto page = ParseListObjectsV2(xml, "s3://bkt/a");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->objects.size(), 1u);
  EXPECT_EQ(page->objects[0].key, "a/sp ace/\xc3\xbc+x.txt");
  EXPECT_EQ(page->objects[0].size, 20u);
  EXPECT_EQ(page->objects[0].etag, "\"644be06dfc54061fd1e67f5ebbabcd58\"");
  EXPECT_EQ(page->objects[0].mtime.tv_sec, 1795501292);
  EXPECT_EQ(page->objects[0].mtime.tv_nsec, 250'000'000);
  ASSERT_EQ(page->common_prefixes.size(), 1u);
  EXPECT_EQ(page->common_prefixes[0], "a/b+/");
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_continuation_token, "YS8xLnR4dA==");
}

TEST(S3List, RefusesWhatIsNotAListing) {
  EXPECT_EQ(ParseListObjectsV2("<ListBucketResult><Contents>", "s3://b").status().code(),
            ErrorCode::kCorrupt);
  auto no_token = ParseListObjectsV2(
      "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>", "s3://b");
  ASSERT_FALSE(no_token.ok());
  EXPECT_NE(no_token.status().message().find("NextContinuationToken"), std::string::npos);
  auto bad_size = ParseListObjectsV2(
      "<ListBucketResult><Contents><Key>k</Key><Size>1x</Size></Contents></ListBucketResult>",
      "s3://b");
  EXPECT_FALSE(bad_size.ok());
  auto empty =
      ParseListObjectsV2("<ListBucketResult><KeyCount>0</KeyCount></ListBucketResult>", "s3://b");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->objects.empty());
  EXPECT_EQ(ListObjectsQuery("a/", "/", "T", 7),
            (std::vector<std::pair<std::string, std::string>>{{"list-type", "2"},
                                                              {"encoding-type", "url"},
                                                              {"max-keys", "7"},
                                                              {"prefix", "a/"},
                                                              {"delimiter", "/"},
                                                              {"continuation-token", "T"}}));
}

TEST(S3List, ErrorBodies) {
  EXPECT_EQ(ParseS3Error("<?xml version='1.0'?><Error><Code>SignatureDoesNotMatch</Code>"
                         "<Message>The request signature we calculated does not match.</Message>"
                         "<StringToSign>x</StringToSign></Error>"),
            "SignatureDoesNotMatch: The request signature we calculated does not match.");
  EXPECT_EQ(ParseS3Error("<Error><Code>NoSuchKey</Code></Error>"), "NoSuchKey");
  EXPECT_EQ(ParseS3Error("<html>Bad Request</html>"), "");
  EXPECT_EQ(ParseS3Error("not xml"), "");
}

}  // namespace
}  // namespace omicsfs::io::s3
