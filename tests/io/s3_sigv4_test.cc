// The SigV4 signer against AWS's published examples: the GET cases of the
// "aws-sig-v4-test-suite" (service "service", no x-amz-content-sha256) and the S3 API reference's
// examples (bucket examplebucket, 20130524T000000Z).
#include <gtest/gtest.h>

#include "io/s3/s3_byte_space.h"
#include "io/s3/sigv4.h"

namespace omicsfs::io::s3 {
namespace {

// The test suite's credentials and scope.
const Credentials kSuite{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "", "test"};
SigV4Scope SuiteScope() {
  SigV4Scope scope;
  scope.amz_date = "20150830T123600Z";
  scope.service = "service";
  scope.content_sha256_header = false;
  return scope;
}

SigV4Request SuiteRequest(std::string path, HeaderList query = {}, HeaderList headers = {}) {
  return SigV4Request{"GET",
                      "example.amazonaws.com",
                      std::move(path),
                      std::move(query),
                      std::move(headers),
                      std::string(kEmptyPayloadSha256)};
}

std::string SuiteAuthorization(const std::string& signed_headers, const std::string& sig) {
  return "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
         "SignedHeaders=" +
         signed_headers + ", Signature=" + sig;
}

TEST(SigV4Suite, GetVanilla) {
  auto s = SignV4(SuiteRequest("/"), kSuite, SuiteScope());
  EXPECT_EQ(s.canonical_request,
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
            "host;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(s.string_to_sign,
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
            "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
  EXPECT_EQ(s.Authorization(),
            SuiteAuthorization("host;x-amz-date",
                               "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"));
}

TEST(SigV4Suite, QueryOrderKeyCase) {
  auto s =
      SignV4(SuiteRequest("/", {{"Param2", "value2"}, {"Param1", "value1"}}), kSuite, SuiteScope());
  EXPECT_EQ(s.signature, "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
}

TEST(SigV4Suite, EmptyQueryKeyAndUnreservedQuery) {
  EXPECT_EQ(SignV4(SuiteRequest("/", {{"Param1", "value1"}}), kSuite, SuiteScope()).signature,
            "a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb");
  const std::string unreserved =
      "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  EXPECT_EQ(SignV4(SuiteRequest("/", {{unreserved, unreserved}}), kSuite, SuiteScope()).signature,
            "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197");
}

TEST(SigV4Suite, Utf8PathAndQuery) {
  // U+1234 (ሴ), UTF-8 e1 88 b4: encoded once, as S3 wants.
  auto path = SignV4(SuiteRequest("/\xe1\x88\xb4"), kSuite, SuiteScope());
  EXPECT_NE(path.canonical_request.find("\n/%E1%88%B4\n"), std::string::npos);
  EXPECT_EQ(path.signature, "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85");
  EXPECT_EQ(SignV4(SuiteRequest("/", {{"\xe1\x88\xb4", "bar"}}), kSuite, SuiteScope()).signature,
            "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04");
}

TEST(SigV4Suite, UnreservedPath) {
  auto s =
      SignV4(SuiteRequest("/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
             kSuite, SuiteScope());
  EXPECT_EQ(s.signature, "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f");
}

TEST(SigV4Suite, HeaderValueTrimAndOrder) {
  auto trim =
      SignV4(SuiteRequest("/", {}, {{"My-Header1", " value1"}, {"My-Header2", " \"a   b   c\""}}),
             kSuite, SuiteScope());
  EXPECT_NE(trim.canonical_request.find("my-header2:\"a b c\"\n"), std::string::npos);
  EXPECT_EQ(trim.Authorization(),
            SuiteAuthorization("host;my-header1;my-header2;x-amz-date",
                               "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"));
  auto order = SignV4(SuiteRequest("/", {},
                                   {{"My-Header1", "value4"},
                                    {"My-Header1", "value1"},
                                    {"My-Header1", "value3"},
                                    {"My-Header1", "value2"}}),
                      kSuite, SuiteScope());
  EXPECT_NE(order.canonical_request.find("my-header1:value4,value1,value3,value2\n"),
            std::string::npos);
  EXPECT_EQ(order.signature, "08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01");
}

// The S3 API reference ("Signature Calculations for the Authorization Header").
const Credentials kS3Doc{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "",
                         "test"};
SigV4Scope S3DocScope() {
  SigV4Scope scope;
  scope.amz_date = "20130524T000000Z";
  return scope;
}

TEST(SigV4S3, GetObjectWithRange) {
  SigV4Request request{"GET", "examplebucket.s3.amazonaws.com", "/test.txt",
                       {},    {{"Range", "bytes=0-9"}},         std::string(kEmptyPayloadSha256)};
  auto s = SignV4(request, kS3Doc, S3DocScope());
  EXPECT_EQ(s.canonical_request,
            "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
            "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
            "\nx-amz-date:20130524T000000Z\n\nhost;range;x-amz-content-sha256;x-amz-date\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(s.signature, "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  EXPECT_EQ(s.Authorization(),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  ASSERT_EQ(s.headers.size(), 3u);  // x-amz-date, x-amz-content-sha256, Authorization
  EXPECT_EQ(s.headers[0], (std::pair<std::string, std::string>("x-amz-date", "20130524T000000Z")));
}

TEST(SigV4S3, ListObjectsAndLifecycle) {
  SigV4Request list{"GET", "examplebucket.s3.amazonaws.com",
                    "/",   {{"prefix", "J"}, {"max-keys", "2"}},
                    {},    std::string(kEmptyPayloadSha256)};
  EXPECT_EQ(SignV4(list, kS3Doc, S3DocScope()).signature,
            "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
  SigV4Request lifecycle{"GET", "examplebucket.s3.amazonaws.com", "/", {{"lifecycle", ""}},
                         {},    std::string(kEmptyPayloadSha256)};
  EXPECT_EQ(SignV4(lifecycle, kS3Doc, S3DocScope()).signature,
            "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
}

TEST(SigV4S3, SessionTokenIsSigned) {
  Credentials temporary = kS3Doc;
  temporary.session_token = "token/with+chars=";
  SigV4Request request{"HEAD", "examplebucket.s3.amazonaws.com", "/a b", {},
                       {},     std::string(kEmptyPayloadSha256)};
  auto s = SignV4(request, temporary, S3DocScope());
  EXPECT_NE(s.canonical_request.find("\n/a%20b\n"), std::string::npos);
  EXPECT_NE(s.canonical_request.find("x-amz-security-token:token/with+chars=\n"),
            std::string::npos);
  EXPECT_NE(s.Authorization().find("x-amz-date;x-amz-security-token,"), std::string::npos);
  EXPECT_NE(s.signature, SignV4(request, kS3Doc, S3DocScope()).signature);
}

// The HTTP client's hook: the same examples, from the URL and headers as the client sends them.
TEST(SigV4S3, RequestSignerSignsWhatTheClientSends) {
  const std::time_t may_24_2013 = 1369353600;
  S3RequestSigner signer(kS3Doc, "us-east-1", [=] { return may_24_2013; });
  http::HttpRequest get{"GET", "https://examplebucket.s3.amazonaws.com/test.txt", {}, {}};
  get.AddHeader("Range", "bytes=0-9");
  ASSERT_TRUE(signer.Sign(get).ok());
  ASSERT_EQ(get.headers.size(), 4u);  // Range, x-amz-date, x-amz-content-sha256, Authorization
  EXPECT_EQ(get.headers[1].second, "20130524T000000Z");
  EXPECT_EQ(get.headers[3].first, "Authorization");
  EXPECT_NE(get.headers[3].second.find(
                "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"),
            std::string::npos)
      << get.headers[3].second;
  // Query parameters in the URL in any order (curl 7.88's own signer fails this one).
  http::HttpRequest list{
      "GET", "https://examplebucket.s3.amazonaws.com:443/?prefix=J&max-keys=2", {}, {}};
  ASSERT_TRUE(signer.Sign(list).ok());
  EXPECT_NE(list.headers.back().second.find(
                "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"),
            std::string::npos)
      << list.headers.back().second;
  http::HttpRequest bad{"GET", "ftp://examplebucket/x", {}, {}};
  EXPECT_FALSE(signer.Sign(bad).ok());
}

TEST(SigV4Encoding, UriEncodeAndDecode) {
  EXPECT_EQ(UriEncode("a b/c+d~e%", true), "a%20b/c%2Bd~e%25");
  EXPECT_EQ(UriEncode("a b/c", false), "a%20b%2Fc");
  EXPECT_EQ(UriDecode("a%20b%2Fc%2bd+%zz%4"), "a b/c+d+%zz%4");
  EXPECT_EQ(UriDecode(UriEncode("\xff\x01 ü/x", false)), "\xff\x01 ü/x");
  EXPECT_EQ(AmzDate(0), "19700101T000000Z");
  EXPECT_EQ(AmzDate(1440938160), "20150830T123600Z");
}

}  // namespace
}  // namespace omicsfs::io::s3
