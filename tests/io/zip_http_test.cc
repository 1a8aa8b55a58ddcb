// The zip backend over a remote archive: the corpus stores' archives served by nginx on loopback
// and read through the HTTP backend, with and without the block cache. The open costs the
// archive's end (the tail window and the central directory), each Get one range request, and an
// archive replaced on the server is ESTALE, never a mix.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <thread>

#include "cache/cache_pool.h"
#include "io/cached_byte_source.h"
#include "io/http/http_byte_space.h"
#include "io/zip/zip_space.h"
#include "io/zip_fixture.h"
#include "testutil/nginx_server.h"

namespace omicsfs::io {
namespace {

using namespace ziptest;  // NOLINT: the shared fixture
using http::HttpClient;
using http::HttpOptions;
using http::OpenHttpObject;

constexpr const char* kStore = "chr22_v9_s32/chr22_v9_s32.vcz";  // 1 210 keys

class ZipOverHttp : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string error;
    server_ = testutil::NginxServer::Start(Archives::Get().root().string(),
                                           testutil::NginxOptions{{}, false}, &error)
                  .release();
    if (server_ == nullptr) std::fprintf(stderr, "nginx: %s\n", error.c_str());
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_EQ(Archives::Get().error(), "");
    ASSERT_NE(server_, nullptr);
    auto client = HttpClient::Create(HttpOptions{});
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = *client;
  }
  std::string Url(const std::string& variant) const {
    return server_->http_url() + "/" + StoreName(kStore) + "/" + variant + ".zip";
  }
  std::shared_ptr<const ByteSource> OpenUrl(const std::string& url,
                                            std::shared_ptr<BlockCache> cache = nullptr) {
    auto s = OpenHttpObject(client_, url, std::move(cache));
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : nullptr;
  }

  static inline testutil::NginxServer* server_ = nullptr;
  std::shared_ptr<HttpClient> client_;
};

TEST_F(ZipOverHttp, OpenReadsTheEndAndEachGetIsOneRequest) {
  const Tree& tree = Archives::Get().TreeOf(kStore);
  for (const std::string variant : {"stored", "deflated", "zip64_all", "cli_stream", "big"}) {
    if (variant == "cli_stream" && !Archives::Get().have_zip_cli()) continue;
    const auto before = client_->Counters();
    auto archive = OpenUrl(Url(variant));
    ASSERT_NE(archive, nullptr);
    auto space = OpenOrDie(archive);
    ASSERT_NE(space, nullptr);
    const auto at_open = client_->Counters();
    // HEAD, the tail window, the central directory (well under 160 bytes a key).
    EXPECT_LE(at_open.requests - before.requests, 3u) << variant;
    EXPECT_LE(at_open.bytes - before.bytes, 65535u + 98 + 160 * (tree.files.size() + 3)) << variant;
    if (variant == "big") {
      EXPECT_LT((at_open.bytes - before.bytes) * 100, archive->Size()) << "under 1 %";
    }
    for (const auto& [key, bytes] : tree.files) {
      const uint64_t n = client_->Counters().requests;
      auto got = space->Get(key, 1 << 30);
      ASSERT_TRUE(got.ok() && got->has_value())
          << variant << " " << key << ": " << got.status().ToString();
      EXPECT_EQ(**got, bytes) << variant << " " << key;
      EXPECT_EQ(client_->Counters().requests - n, 1u) << variant << " " << key;
    }
  }
}

TEST_F(ZipOverHttp, EightThreadsThroughTheBlockCache) {
  const Tree& tree = Archives::Get().TreeOf(kStore);
  cache::CachePool pool(256 << 20);
  auto cache = BlockCache::Create(&pool);
  for (const std::string variant : {"stored", "mixed"}) {
    auto archive = OpenUrl(Url(variant), cache);
    ASSERT_NE(archive, nullptr);
    auto space = OpenOrDie(archive);
    ASSERT_NE(space, nullptr);
    std::vector<std::string> keys;
    for (const auto& kv : tree.files) keys.push_back(kv.first);
    std::atomic<int> bad{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        for (size_t i = 0; i < keys.size(); ++i) {
          const std::string& key = keys[(i * 7 + t * 131) % keys.size()];
          const std::string& want = tree.files.at(key);
          auto got = space->Get(key, 1 << 30);
          if (!got.ok() || !got->has_value() || **got != want) ++bad;
          auto src = space->Open(key);
          if (!src.ok() || *src == nullptr) {
            ++bad;
            continue;
          }
          std::string part(want.size() / 2, '\0');
          const uint64_t at = want.size() - part.size();
          if (!(*src)->ReadExact(at, part.data(), part.size()).ok() || part != want.substr(at)) {
            ++bad;
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(bad.load(), 0) << variant;
  }
  // Every block of both archives fetched about once: the pool holds them all.
  const uint64_t both = Slurp(Archives::Get().Path(kStore, "stored")).size() +
                        Slurp(Archives::Get().Path(kStore, "mixed")).size();
  EXPECT_LE(cache->Counters().base_bytes, both + (uint64_t{4} << 20));
}

TEST_F(ZipOverHttp, AnArchiveReplacedOnTheServerIsStale) {
  const Archives& a = Archives::Get();
  const std::string name = "replaced.zip";
  const std::string path = (a.root() / StoreName(kStore) / name).string();
  fs::copy_file(a.Path(kStore, "stored"), path, fs::copy_option::overwrite_if_exists);
  auto archive = OpenUrl(server_->http_url() + "/" + StoreName(kStore) + "/" + name);
  ASSERT_NE(archive, nullptr);
  auto space = OpenOrDie(archive);
  ASSERT_NE(space, nullptr);
  const Tree& tree = a.TreeOf(kStore);
  const auto& [first, first_bytes] = *tree.files.begin();
  const auto& [last, last_bytes] = *tree.files.rbegin();
  auto opened = space->Open(last);
  ASSERT_TRUE(opened.ok() && *opened != nullptr);
  // Replaced as an object store does (rename), with another mtime: nginx's ETag changes.
  const std::string tmp = path + ".tmp";
  fs::copy_file(a.Path(kStore, "deflated"), tmp, fs::copy_option::overwrite_if_exists);
  struct timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, tmp.c_str(), times, 0), 0);
  fs::rename(tmp, path);
  std::string buf(last_bytes.size(), '\0');
  const Status read = (*opened)->ReadExact(0, buf.data(), buf.size());
  EXPECT_EQ(read.sys_errno(), ESTALE) << read.ToString();
  EXPECT_EQ(space->Get(first, 1 << 30).status().sys_errno(), ESTALE);
  fs::remove(path);
}

}  // namespace
}  // namespace omicsfs::io
