// The HTTP(S) backend against real servers on loopback: nginx for ranges, ETags, 403, TLS and a
// server that goes away; a python3 server for stalls, truncated bodies and 503s. No mocks.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <thread>

#include "cache/cache_pool.h"
#include "io/cached_byte_source.h"
#include "io/http/http_byte_space.h"
#include "io/http/http_client.h"
#include "testutil/mount_fixture.h"
#include "testutil/nginx_server.h"
#include "util/fs.h"

namespace omicsfs::io::http {
namespace {

using testutil::FaultServer;
using testutil::NginxServer;
using Clock = std::chrono::steady_clock;

std::string Pattern(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  std::mt19937 rng(seed);
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << data;
  ASSERT_TRUE(static_cast<bool>(f)) << path;
}

// Replaces `path` atomically (as an object store does) with `data`, mtime set to `mtime_s`:
// nginx's ETag is mtime-size, so versions of one size need distinct mtimes.
void ReplaceFile(const std::string& path, const std::string& data, time_t mtime_s) {
  const std::string tmp = path + ".tmp";
  WriteFile(tmp, data);
  struct timespec times[2] = {{mtime_s, 0}, {mtime_s, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, tmp.c_str(), times, 0), 0);
  ASSERT_EQ(::rename(tmp.c_str(), path.c_str()), 0);
}

HttpOptions FastOptions() {
  HttpOptions o;
  o.connect_timeout = std::chrono::milliseconds(2000);
  o.low_speed_time = std::chrono::milliseconds(2000);
  o.request_timeout = std::chrono::milliseconds(20000);
  o.retries = 2;
  o.backoff_initial = std::chrono::milliseconds(20);
  o.backoff_max = std::chrono::milliseconds(200);
  return o;
}

std::shared_ptr<HttpClient> MakeClient(HttpOptions o = FastOptions()) {
  auto c = HttpClient::Create(std::move(o));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : nullptr;
}

// 5 MiB and a bit: several 1 MiB blocks and a short last one.
constexpr size_t kBlobSize = (size_t{5} << 20) + 12345;

class HttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = (fs::temp_directory_path() / fs::unique_path("omicsfs-http-%%%%%%")).string();
    fs::create_directories(root_ + "/private");
    blob_ = Pattern(kBlobSize, 1);
    WriteFile(root_ + "/blob.bin", blob_);
    WriteFile(root_ + "/small.txt", "hello, world\n");
    WriteFile(root_ + "/private/secret.bin", "secret");
    std::string error;
    server_ = NginxServer::Start(root_, testutil::NginxOptions{{"/private/"}, true}, &error);
    ASSERT_NE(server_, nullptr) << error;
    client_ = MakeClient();
    ASSERT_NE(client_, nullptr);
  }
  void TearDown() override {
    server_.reset();
    fs::remove_all(root_);
  }
  std::shared_ptr<const ByteSource> OpenUrl(const std::string& url,
                                            std::shared_ptr<BlockCache> cache = nullptr) {
    auto s = OpenHttpObject(client_, url, std::move(cache));
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : nullptr;
  }
  std::string Read(const ByteSource& s, uint64_t offset, size_t n, Status* st = nullptr) {
    std::string out(n, '\0');
    Status r = s.ReadExact(offset, out.data(), n);
    if (st != nullptr)
      *st = r;
    else
      EXPECT_TRUE(r.ok()) << r.ToString();
    return out;
  }

  std::string root_;
  std::string blob_;
  std::unique_ptr<NginxServer> server_;
  std::shared_ptr<HttpClient> client_;
};

TEST_F(HttpTest, RangeReadsAreByteIdentical) {
  auto s = OpenUrl(server_->http_url() + "/blob.bin");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->Size(), kBlobSize);
  EXPECT_NE(s->Info().stamp.find('"'), std::string::npos) << "the stamp carries the ETag";
  EXPECT_GT(s->Info().mtime.tv_sec, 0);
  EXPECT_EQ(Read(*s, 0, 1), blob_.substr(0, 1));
  EXPECT_EQ(Read(*s, kBlobSize - 1, 1), blob_.substr(kBlobSize - 1));
  EXPECT_EQ(Read(*s, 0, kBlobSize), blob_);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 50; ++i) {
    const uint64_t off = rng() % kBlobSize;
    const size_t n = 1 + rng() % std::min<uint64_t>(kBlobSize - off, 300000);
    ASSERT_EQ(Read(*s, off, n), blob_.substr(off, n)) << off << "+" << n;
  }
  Status st;
  Read(*s, kBlobSize - 10, 11, &st);
  EXPECT_EQ(st.code(), ErrorCode::kCorrupt) << st.ToString();
}

TEST_F(HttpTest, WholeGetAndAbsentKeys) {
  auto space = HttpByteSpace::Create(server_->http_url() + "/", client_, {});
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  EXPECT_EQ((*space)->Describe(), server_->http_url());
  const uint64_t before = client_->Counters().requests;
  auto got = (*space)->Get("blob.bin", 64 << 20);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(got->has_value());
  EXPECT_TRUE(**got == blob_);
  EXPECT_EQ(client_->Counters().requests - before, 1u) << "Get is one request";
  auto missing = (*space)->Get("no/such/key", 1 << 20);
  ASSERT_TRUE(missing.ok()) << missing.status().ToString();
  EXPECT_FALSE(missing->has_value());
  auto opened = (*space)->Open("no_such_key");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(*opened, nullptr);
  auto too_big = (*space)->Get("blob.bin", 1000);
  EXPECT_EQ(too_big.status().code(), ErrorCode::kCorrupt) << too_big.status().ToString();
  EXPECT_EQ((*space)->Open("../etc/passwd").status().code(), ErrorCode::kInvalidArgument);
  // A folder the space was not told of: nginx redirects to FOLDER/, which is not an object.
  fs::create_directories(root_ + "/folder");
  WriteFile(root_ + "/folder/x", "x");
  auto folder = (*space)->Open("folder");
  ASSERT_TRUE(folder.ok()) << folder.status().ToString();
  EXPECT_EQ(*folder, nullptr);
  auto folder_get = (*space)->Get("folder", 100);
  ASSERT_TRUE(folder_get.ok()) << folder_get.status().ToString();
  EXPECT_FALSE(folder_get->has_value());
}

TEST_F(HttpTest, ForbiddenIsAnErrorNamingTheUrl) {
  auto space = HttpByteSpace::Create(server_->http_url(), client_, {});
  ASSERT_TRUE(space.ok());
  for (int i = 0; i < 2; ++i) {
    Status st = i == 0 ? (*space)->Open("private/secret.bin").status()
                       : (*space)->Get("private/secret.bin", 100).status();
    EXPECT_EQ(st.sys_errno(), EACCES) << st.ToString();
    EXPECT_NE(st.message().find("/private/secret.bin"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("403"), std::string::npos) << st.ToString();
  }
}

TEST_F(HttpTest, ObjectReplacedAfterOpenIsStale) {
  const std::string path = root_ + "/blob.bin";
  ReplaceFile(path, blob_, 1'600'000'000);
  auto b = OpenUrl(server_->http_url() + "/blob.bin");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(Read(*b, 100, 1000), blob_.substr(100, 1000));
  // Same size, new mtime: a new ETag; If-Match fails with 412.
  ReplaceFile(path, Pattern(kBlobSize, 2), 1'600'000'100);
  Status st;
  Read(*b, 100, 1000, &st);
  EXPECT_EQ(st.sys_errno(), ESTALE) << st.ToString();
  EXPECT_NE(st.message().find("changed since it was opened"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("/blob.bin"), std::string::npos) << st.ToString();
  // A new size too.
  ReplaceFile(path, "short", 1'600'000'200);
  Read(*b, 0, 5, &st);
  EXPECT_EQ(st.sys_errno(), ESTALE) << st.ToString();
  // Re-opened, it reads the new version.
  auto again = OpenUrl(server_->http_url() + "/blob.bin");
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->Size(), 5u);
  EXPECT_EQ(Read(*again, 0, 5), "short");
}

// Versions of one size swapped in while reads run: each read is all of version A or ESTALE.
TEST_F(HttpTest, ObjectReplacedDuringReadsNeverMixes) {
  const std::string path = root_ + "/blob.bin";
  const std::string a(kBlobSize, 'a'), b(kBlobSize, 'b');
  ReplaceFile(path, a, 1'600'000'000);
  auto s = OpenUrl(server_->http_url() + "/blob.bin");
  ASSERT_NE(s, nullptr);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; !stop; ++i) {
      ReplaceFile(path, i % 2 ? a : b, i % 2 ? 1'600'000'000 : 1'600'000'500);
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
  });
  int stale = 0, good = 0, mixed = 0, other = 0;
  for (int i = 0; i < 200; ++i) {
    Status st;
    const std::string got = Read(*s, (i * 77777) % (kBlobSize - 300000), 300000, &st);
    if (st.ok()) {
      ++good;
      if (got != a.substr(0, 300000)) ++mixed;  // bytes of another version: never
    } else {
      ++stale;
      if (st.sys_errno() != ESTALE) ++other;
    }
  }
  stop = true;
  writer.join();
  EXPECT_EQ(mixed, 0) << "reads returned bytes of another version";
  EXPECT_EQ(other, 0) << "errors other than ESTALE";
  EXPECT_GT(stale, 0);
  std::printf("reads during rewrites: %d whole, %d ESTALE\n", good, stale);
}

TEST_F(HttpTest, ServerStoppedThenBack) {
  auto s = OpenUrl(server_->http_url() + "/blob.bin");
  ASSERT_NE(s, nullptr);
  server_->Stop();
  const auto t0 = Clock::now();
  Status st;
  Read(*s, 0, 100, &st);
  EXPECT_EQ(st.sys_errno(), EIO) << st.ToString();
  EXPECT_NE(st.message().find("3 attempts"), std::string::npos) << st.ToString();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(10));
  ASSERT_TRUE(server_->Restart()) << server_->Log();
  EXPECT_EQ(Read(*s, 1000, 100), blob_.substr(1000, 100));
}

TEST_F(HttpTest, TlsWithTheSelfSignedCa) {
  HttpOptions with_ca = FastOptions();
  with_ca.ca_file = server_->ca_file();
  auto client = MakeClient(with_ca);
  auto s = OpenHttpObject(client, server_->https_url() + "/blob.bin");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_NE(*s, nullptr);
  EXPECT_EQ(Read(**s, 4096, 70000), blob_.substr(4096, 70000));

  auto unverified = OpenHttpObject(MakeClient(), server_->https_url() + "/blob.bin");
  ASSERT_FALSE(unverified.ok());
  EXPECT_NE(unverified.status().message().find("certificate"), std::string::npos)
      << unverified.status().ToString();
  EXPECT_NE(unverified.status().message().find("1 attempt"), std::string::npos)
      << "a verification failure is not retried: " << unverified.status().ToString();

  HttpOptions insecure = FastOptions();
  insecure.insecure = true;
  auto lax = OpenHttpObject(MakeClient(insecure), server_->https_url() + "/small.txt");
  ASSERT_TRUE(lax.ok()) << lax.status().ToString();
  EXPECT_EQ(Read(**lax, 0, 5), "hello");
}

TEST_F(HttpTest, ConcurrentReadsFromEightThreads) {
  cache::CachePool pool(64 << 20);
  auto cache = BlockCache::Create(&pool);
  auto raw = OpenUrl(server_->http_url() + "/blob.bin");
  auto cached = OpenUrl(server_->http_url() + "/blob.bin", cache);
  ASSERT_TRUE(raw && cached);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      for (int i = 0; i < 40; ++i) {
        const uint64_t off = rng() % kBlobSize;
        const size_t n = 1 + rng() % std::min<uint64_t>(kBlobSize - off, 1 << 21);
        std::string out(n, '\0');
        const ByteSource& s = i % 2 ? *raw : *cached;
        if (!s.ReadExact(off, out.data(), n).ok() || out != blob_.substr(off, n)) ++bad;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

// The connection pool is bounded: 8 threads share 2 connections (requests wait for a handle)
// rather than opening one for each request past the pool, as they once did.
TEST_F(HttpTest, EightThreadsShareTheBoundedConnectionPool) {
  HttpOptions o = FastOptions();
  o.max_connections = 2;
  auto client = MakeClient(o);
  ASSERT_NE(client, nullptr);
  auto source = OpenHttpObject(client, server_->http_url() + "/blob.bin");
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const uint64_t off = (static_cast<uint64_t>(t) * 20 + i) * 4099 % (kBlobSize - 1000);
        std::string out(1000, '\0');
        if (!(*source)->ReadExact(off, out.data(), out.size()).ok() ||
            out != blob_.substr(off, out.size()))
          ++bad;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  const HttpCounters c = client->Counters();
  EXPECT_GE(c.requests, 161u);  // the HEAD of the open and every read
  EXPECT_GE(c.connections, 1u);
  EXPECT_LE(c.connections, 2u) << "requests past the pool opened connections of their own";
}

// Fetches are overlapped only where they wait: a server whose first byte comes 30 ms after the
// request gets parallel_requests at once; one below parallel_latency gets one at a time.
TEST_F(HttpTest, ParallelFetchesWhereTheServerIsSlow) {
  std::string error;
  auto slow = FaultServer::Start(FaultServer::Mode::kSlow, root_ + "/small.txt", 30, &error);
  ASSERT_NE(slow, nullptr) << error;
  auto client = MakeClient();
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->Parallelism(), 1u) << "nothing measured yet";
  for (int i = 0; i < 4; ++i) {
    auto got = client->Get(slow->url(), 1 << 20);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
  }
  EXPECT_GE(client->Latency(), std::chrono::milliseconds(25));
  EXPECT_EQ(client->Parallelism(), FastOptions().parallel_requests);

  HttpOptions o = FastOptions();
  o.parallel_latency = std::chrono::seconds(10);  // above what any loopback server takes
  auto fast = MakeClient(o);
  ASSERT_TRUE(fast->Get(server_->http_url() + "/small.txt", 1 << 20).ok());
  EXPECT_LT(fast->Latency(), std::chrono::seconds(10));
  EXPECT_EQ(fast->Parallelism(), 1u);
}

// A signer as the S3 backend's will be: it sees each attempt's final method, URL and headers.
class TestSigner : public RequestSigner {
 public:
  Status Sign(HttpRequest& request) const override {
    ++calls;
    if (fail) return IoError("no credentials", EACCES);
    std::string seen;
    for (const auto& [name, value] : request.headers) seen += name + "=" + value + ";";
    request.AddHeader("Authorization", "Test " + request.method + " " + seen);
    return OkStatus();
  }
  mutable std::atomic<int> calls{0};
  bool fail = false;
};

TEST_F(HttpTest, SignerSignsEveryAttemptAfterRangeAndIfMatch) {
  auto signer = std::make_shared<TestSigner>();
  auto client = HttpClient::Create(FastOptions(), signer);
  ASSERT_TRUE(client.ok());
  auto s = OpenHttpObject(*client, server_->http_url() + "/small.txt");
  ASSERT_TRUE(s.ok() && *s != nullptr) << s.status().ToString();
  EXPECT_EQ(Read(**s, 7, 5), "world");
  EXPECT_EQ(signer->calls.load(), 2);
  const std::vector<std::string> log = server_->AccessLog(2);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_NE(log[0].find("\"Test HEAD\""), std::string::npos) << log[0];
  EXPECT_NE(log[1].find("Test GET Range=bytes=7-11;If-Match="), std::string::npos) << log[1];

  // Send hands back final statuses as responses.
  HttpRequest request{"GET", server_->http_url() + "/absent", {}, {}};
  auto r = (*client)->Send(request, 1 << 20);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->attempts, 1);

  // A signer's error fails the request unsent.
  signer->fail = true;
  const uint64_t sent = (*client)->Counters().requests;
  auto h = (*client)->Head(server_->http_url() + "/small.txt");
  EXPECT_EQ(h.status().sys_errno(), EACCES) << h.status().ToString();
  EXPECT_EQ((*client)->Counters().requests, sent);
}

// ---------------------------------------------------------------------------------------------
// Faults nginx cannot make: the python3 fault server.

TEST_F(HttpTest, StalledServerFailsWithinTheTimeout) {
  std::string error;
  auto stall = FaultServer::Start(FaultServer::Mode::kStall, root_ + "/small.txt", 0, &error);
  ASSERT_NE(stall, nullptr) << error;
  HttpOptions o = FastOptions();
  o.retries = 1;
  auto client = MakeClient(o);
  const auto t0 = Clock::now();
  auto head = client->Head(stall->url());
  const auto head_time = Clock::now() - t0;
  ASSERT_FALSE(head.ok());
  EXPECT_EQ(head.status().sys_errno(), EIO) << head.status().ToString();
  EXPECT_LT(head_time, std::chrono::seconds(15));
  RemoteObject object;
  object.size = 13;
  std::string out(13, '\0');
  const auto t1 = Clock::now();
  Status st = client->ReadRange(stall->url(), object, 0, out.data(), 13);
  EXPECT_EQ(st.sys_errno(), EIO) << st.ToString();
  EXPECT_LT(Clock::now() - t1, std::chrono::seconds(15));
  std::printf("stalled HEAD failed after %.1f s: %s\n",
              std::chrono::duration<double>(head_time).count(), head.status().ToString().c_str());
}

TEST_F(HttpTest, TruncatedBodiesAreRetriedNeverShort) {
  std::string error;
  auto twice = FaultServer::Start(FaultServer::Mode::kTruncate, root_ + "/blob.bin", 2, &error);
  ASSERT_NE(twice, nullptr) << error;
  auto s = OpenUrl(twice->url());
  ASSERT_NE(s, nullptr);
  const uint64_t retries = client_->Counters().retries;
  EXPECT_EQ(Read(*s, 1000, 200000), blob_.substr(1000, 200000));
  EXPECT_EQ(client_->Counters().retries - retries, 2u);

  auto always = FaultServer::Start(FaultServer::Mode::kTruncate, root_ + "/blob.bin", -1, &error);
  ASSERT_NE(always, nullptr) << error;
  auto t = OpenUrl(always->url());
  ASSERT_NE(t, nullptr);
  Status st;
  Read(*t, 0, 200000, &st);
  EXPECT_EQ(st.sys_errno(), EIO) << st.ToString();
  EXPECT_NE(st.message().find("3 attempts"), std::string::npos) << st.ToString();
  auto whole = client_->Get(always->url(), 64 << 20);
  EXPECT_FALSE(whole.ok());
}

TEST_F(HttpTest, ServerErrorsThenSuccess) {
  std::string error;
  auto flaky = FaultServer::Start(FaultServer::Mode::kFailFirst, root_ + "/blob.bin", 2, &error);
  ASSERT_NE(flaky, nullptr) << error;
  const uint64_t retries = client_->Counters().retries;
  auto s = OpenUrl(flaky->url());
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(client_->Counters().retries - retries, 2u);
  EXPECT_EQ(Read(*s, 5, 50), blob_.substr(5, 50));

  auto broken = FaultServer::Start(FaultServer::Mode::kFailFirst, root_ + "/blob.bin", 100, &error);
  ASSERT_NE(broken, nullptr) << error;
  auto h = client_->Head(broken->url());
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().sys_errno(), EIO);
  EXPECT_NE(h.status().message().find("HTTP 503"), std::string::npos) << h.status().ToString();
  EXPECT_NE(h.status().message().find(broken->url()), std::string::npos) << h.status().ToString();
}

// ---------------------------------------------------------------------------------------------
// The block cache.

class BlockCacheTest : public HttpTest {
 protected:
  std::shared_ptr<BlockCache> MakeCache(uint32_t readahead_threads) {
    BlockCacheOptions o;
    o.block_size = 1 << 20;
    o.readahead_threads = readahead_threads;
    return BlockCache::Create(&pool_, o);
  }
  uint64_t Requests() const { return client_->Counters().requests; }
  cache::CachePool pool_{256 << 20};
};

TEST_F(BlockCacheTest, AdjacentMissingBlocksAreOneRequest) {
  auto cache = MakeCache(0);
  auto s = OpenUrl(server_->http_url() + "/blob.bin", cache);
  ASSERT_NE(s, nullptr);
  uint64_t r0 = Requests();
  EXPECT_EQ(Read(*s, 10, (4 << 20) - 20), blob_.substr(10, (4 << 20) - 20));
  EXPECT_EQ(Requests() - r0, 1u) << "4 adjacent uncached blocks";
  r0 = Requests();
  EXPECT_EQ(Read(*s, 0, 4 << 20), blob_.substr(0, 4 << 20));
  EXPECT_EQ(Requests() - r0, 0u) << "all cached";
  r0 = Requests();
  // Blocks 3 (cached), 4 and 5 (the short last one): one request for the two missing.
  EXPECT_EQ(Read(*s, 3 << 20, kBlobSize - (3 << 20)), blob_.substr(3 << 20));
  EXPECT_EQ(Requests() - r0, 1u);
}

TEST_F(BlockCacheTest, LongReadsRunRequestsInParallel) {
  const size_t size = 32 << 20;
  const std::string big = Pattern(size, 3);
  WriteFile(root_ + "/big.bin", big);
  BlockCacheOptions o;
  o.max_blocks_per_request = 4;
  o.readahead_threads = 0;
  auto cache = BlockCache::Create(&pool_, o);
  auto s = OpenUrl(server_->http_url() + "/big.bin", cache);
  ASSERT_NE(s, nullptr);
  const uint64_t r0 = Requests();
  EXPECT_TRUE(Read(*s, 0, size) == big);
  EXPECT_EQ(Requests() - r0, 8u) << "32 blocks, 4 a request";
}

TEST_F(BlockCacheTest, SequentialScanReadsAhead) {
  const size_t mib = 24;
  const std::string big = Pattern(mib << 20, 4);
  WriteFile(root_ + "/big.bin", big);
  auto cache = MakeCache(2);
  auto s = OpenUrl(server_->http_url() + "/big.bin", cache);
  ASSERT_NE(s, nullptr);
  const uint64_t r0 = Requests();
  std::string out(128 << 10, '\0');
  for (size_t off = 0; off < big.size(); off += out.size()) {
    ASSERT_TRUE(s->ReadExact(off, out.data(), out.size()).ok());
    ASSERT_TRUE(std::memcmp(out.data(), big.data() + off, out.size()) == 0) << off;
  }
  const uint64_t requests = Requests() - r0;
  const BlockCacheCounters c = cache->Counters();
  std::printf("sequential %zu MiB: %llu requests, %llu by read-ahead, %.2f MiB fetched\n", mib,
              static_cast<unsigned long long>(requests),
              static_cast<unsigned long long>(c.readahead_reads),
              static_cast<double>(c.base_bytes) / (1 << 20));
  EXPECT_LE(requests, mib);
  EXPECT_GT(c.readahead_reads, 0u);
  EXPECT_LE(c.base_bytes, big.size() + (2 << 20)) << "each block fetched about once";
}

TEST_F(BlockCacheTest, VersionsNeverShareBlocks) {
  auto cache = MakeCache(0);
  const std::string path = root_ + "/blob.bin";
  ReplaceFile(path, blob_, 1'600'000'000);
  auto v1 = OpenUrl(server_->http_url() + "/blob.bin", cache);
  ASSERT_NE(v1, nullptr);
  EXPECT_EQ(Read(*v1, 0, 1 << 20), blob_.substr(0, 1 << 20));
  auto same = OpenUrl(server_->http_url() + "/blob.bin", cache);
  uint64_t r0 = Requests();
  EXPECT_EQ(Read(*same, 0, 1 << 20), blob_.substr(0, 1 << 20));
  EXPECT_EQ(Requests() - r0, 0u) << "a re-open of the same version shares its blocks";
  const std::string next = Pattern(kBlobSize, 9);
  ReplaceFile(path, next, 1'600'000'300);
  auto v2 = OpenUrl(server_->http_url() + "/blob.bin", cache);
  ASSERT_NE(v2, nullptr);
  EXPECT_EQ(Read(*v2, 0, 1 << 20), next.substr(0, 1 << 20)) << "not the old version's block";
  Status st;
  Read(*v1, 0, 1 << 20, &st);
  EXPECT_EQ(st.sys_errno(), ESTALE) << "the old version's blocks left the pool: " << st.ToString();
}

// ---------------------------------------------------------------------------------------------
// Keys without a listing: consolidated metadata and fixed names, against the local directory.

// Writes Zarr v2 consolidated metadata (.zmetadata) for the store at argv[1], as zarr-python's
// consolidate_metadata does (zarr itself is not installed here).
constexpr const char* kConsolidateV2 = R"PY(
import json, os, sys
root = sys.argv[1]
meta = {}
for d, dirs, files in os.walk(root):
    for f in files:
        if f in ('.zarray', '.zattrs', '.zgroup'):
            with open(os.path.join(d, f)) as h:
                meta[os.path.relpath(os.path.join(d, f), root)] = json.load(h)
with open(os.path.join(root, '.zmetadata'), 'w') as h:
    json.dump({'zarr_consolidated_format': 1, 'metadata': meta}, h)
)PY";

// The same for Zarr v3: inline consolidated_metadata in the root zarr.json.
constexpr const char* kConsolidateV3 = R"PY(
import json, os, sys
root = sys.argv[1]
with open(os.path.join(root, 'zarr.json')) as h:
    top = json.load(h)
meta = {}
for d, dirs, files in os.walk(root):
    if d != root and 'zarr.json' in files:
        with open(os.path.join(d, 'zarr.json')) as h:
            meta[os.path.relpath(d, root)] = json.load(h)
top['consolidated_metadata'] = {'kind': 'inline', 'must_understand': False, 'metadata': meta}
with open(os.path.join(root, 'zarr.json'), 'w') as h:
    json.dump(top, h)
)PY";

std::vector<std::string> Names(const std::vector<ListEntry>& entries, EntryKind kind) {
  std::vector<std::string> out;
  for (const auto& e : entries) {
    if (e.kind == kind) out.push_back(e.name);
  }
  return out;
}

// Local entries of `dir` (sorted): files passing `keep_file`, directories passing `keep_dir`.
std::vector<std::string> LocalNames(const fs::path& dir, EntryKind kind,
                                    const std::function<bool(const fs::path&)>& keep) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const bool is_dir = fs::is_directory(e.path());
    if (is_dir == (kind == EntryKind::kDirectory) && keep(e.path())) {
      out.insert(e.path().filename().string());
    }
  }
  return std::vector<std::string>(out.begin(), out.end());
}

class HttpKeysTest : public HttpTest {
 protected:
  // A copy of a corpus store under the served root; "" when the corpus lacks it.
  std::string CopyStore(const std::string& rel, const std::string& name) {
    const fs::path src = fs::path(OMICSFS_CORPUS_DIR) / rel;
    if (!fs::exists(src)) return std::string();
    const std::string dst = root_ + "/" + name;
    EXPECT_EQ(testutil::RunCommand({"cp", "-r", src.string(), dst}), 0);
    return dst;
  }
  void RunPython(const char* script, const std::string& arg) {
    std::string out;
    ASSERT_EQ(testutil::RunCommand({"/usr/bin/python3", "-c", script, arg}, &out), 0) << out;
  }
};

TEST_F(HttpKeysTest, ZarrV2ConsolidatedMetadataListsLikeTheDirectory) {
  const std::string dir = CopyStore("vcf-zarr/upstream_sample_v2/upstream_sample_v2.vcz", "v2.vcz");
  ASSERT_FALSE(dir.empty()) << "corpus store missing";
  ASSERT_FALSE(fs::exists(dir + "/.zmetadata")) << "the test needs an unconsolidated store";
  const std::string url = server_->http_url() + "/v2.vcz";
  auto none = DiscoverHttpKeys(*client_, url, {});
  EXPECT_EQ(none.status().code(), ErrorCode::kUnsupported) << none.status().ToString();
  EXPECT_NE(none.status().message().find("consolidated"), std::string::npos);

  RunPython(kConsolidateV2, dir);
  const uint64_t r0 = client_->Counters().requests;
  auto keys = DiscoverHttpKeys(*client_, url, {});
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  EXPECT_EQ(client_->Counters().requests - r0, 1u) << "one GET of .zmetadata";
  auto space = HttpByteSpace::Create(url, client_, *keys);
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  auto root = (*space)->List("");
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  auto all = [](const fs::path&) { return true; };
  EXPECT_EQ(Names(*root, EntryKind::kFile), LocalNames(dir, EntryKind::kFile, all));
  EXPECT_EQ(Names(*root, EntryKind::kDirectory), LocalNames(dir, EntryKind::kDirectory, all));
  ASSERT_GE(Names(*root, EntryKind::kDirectory).size(), 10u);
  auto is_meta = [](const fs::path& p) { return p.filename().string()[0] == '.'; };
  int chunks = 0;
  for (const std::string& array : Names(*root, EntryKind::kDirectory)) {
    auto entries = (*space)->List(array);
    ASSERT_TRUE(entries.ok()) << entries.status().ToString();
    EXPECT_EQ(Names(*entries, EntryKind::kFile),
              LocalNames(dir + "/" + array, EntryKind::kFile, is_meta))
        << array;
    // Chunks are not listed, but open by name, byte-identical; a missing chunk is absent.
    for (const auto& e : fs::directory_iterator(dir + "/" + array)) {
      const std::string name = e.path().filename().string();
      if (is_meta(e.path()) || !fs::is_regular_file(e.path())) continue;
      auto chunk = (*space)->Get(array + "/" + name, 64 << 20);
      ASSERT_TRUE(chunk.ok() && chunk->has_value()) << array << "/" << name;
      std::string local;
      ASSERT_TRUE(testutil::ReadWhole(e.path().string(), &local));
      EXPECT_TRUE(**chunk == local) << array << "/" << name;
      ++chunks;
      break;
    }
    auto missing = (*space)->Open(array + "/999.999");
    ASSERT_TRUE(missing.ok()) << missing.status().ToString();
    EXPECT_EQ(*missing, nullptr);
  }
  EXPECT_GT(chunks, 5);
  const uint64_t r1 = client_->Counters().requests;
  auto relisted = (*space)->List("");
  ASSERT_TRUE(relisted.ok());
  EXPECT_EQ(client_->Counters().requests, r1) << "a folder's files are HEADed once";
  for (const ListEntry& e : *relisted) {
    if (e.kind == EntryKind::kFile) {
      EXPECT_EQ(e.info.size, fs::file_size(dir + "/" + e.name));
    }
  }
  auto folder = (*space)->Open(Names(*root, EntryKind::kDirectory)[0]);
  ASSERT_TRUE(folder.ok());
  EXPECT_EQ(*folder, nullptr) << "a listed folder is not an object";
  auto nothing = (*space)->List("no_such_array");
  ASSERT_TRUE(nothing.ok());
  EXPECT_TRUE(nothing->empty());
}

TEST_F(HttpKeysTest, ZarrV3ConsolidatedMetadataListsLikeTheDirectory) {
  const std::string dir = CopyStore("vcf-zarr/upstream_sample_v3/upstream_sample_v3.vcz", "v3.vcz");
  ASSERT_FALSE(dir.empty()) << "corpus store missing";
  const std::string url = server_->http_url() + "/v3.vcz";
  auto bare = DiscoverHttpKeys(*client_, url, {});
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_EQ(*bare, std::vector<std::string>{"zarr.json"}) << "no consolidated metadata yet";

  RunPython(kConsolidateV3, dir);
  auto keys = DiscoverHttpKeys(*client_, url, {});
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  auto space = HttpByteSpace::Create(url, client_, *keys);
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  auto root = (*space)->List("");
  ASSERT_TRUE(root.ok());
  auto has_zarr_json = [](const fs::path& p) { return fs::exists(p / "zarr.json"); };
  EXPECT_EQ(Names(*root, EntryKind::kDirectory),
            LocalNames(dir, EntryKind::kDirectory, has_zarr_json));
  EXPECT_EQ(Names(*root, EntryKind::kFile), std::vector<std::string>{"zarr.json"});
  ASSERT_GE(Names(*root, EntryKind::kDirectory).size(), 10u);
  auto sub = (*space)->List(Names(*root, EntryKind::kDirectory)[0]);
  ASSERT_TRUE(sub.ok());
  EXPECT_EQ(Names(*sub, EntryKind::kFile), std::vector<std::string>{"zarr.json"});
}

TEST_F(HttpKeysTest, BpcellsFixedNames) {
  const std::string dir = CopyStore("bpcells/dir/v2/counts.packed", "counts.packed");
  ASSERT_FALSE(dir.empty()) << "corpus store missing";
  // Every name the BPCells readers open (formats/bpcells), matrices and fragments.
  const std::vector<std::string> names = {"version",
                                          "shape",
                                          "storage_order",
                                          "idxptr",
                                          "row_names",
                                          "col_names",
                                          "index",
                                          "index_data",
                                          "index_idx",
                                          "index_idx_offsets",
                                          "index_starts",
                                          "val",
                                          "val_data",
                                          "val_idx",
                                          "val_idx_offsets",
                                          "chr_names",
                                          "cell_names",
                                          "chr_ptr",
                                          "end_max",
                                          "cell",
                                          "cell_data",
                                          "cell_idx",
                                          "cell_idx_offsets",
                                          "start",
                                          "start_data",
                                          "start_idx",
                                          "start_idx_offsets",
                                          "start_starts",
                                          "end",
                                          "end_data",
                                          "end_idx",
                                          "end_idx_offsets"};
  const std::string url = server_->http_url() + "/counts.packed";
  auto keys = DiscoverHttpKeys(*client_, url, names);
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  std::vector<std::string> sorted = *keys;
  std::sort(sorted.begin(), sorted.end());
  auto all = [](const fs::path&) { return true; };
  EXPECT_EQ(sorted, LocalNames(dir, EntryKind::kFile, all));
  auto space = HttpByteSpace::Create(url, client_, *keys);
  ASSERT_TRUE(space.ok());
  auto listed = (*space)->List("");
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(Names(*listed, EntryKind::kFile), sorted);
  for (const ListEntry& e : *listed) {
    EXPECT_EQ(e.info.size, fs::file_size(dir + "/" + e.name)) << e.name;
    EXPECT_FALSE(e.info.stamp.empty()) << e.name;
  }
  auto idxptr = (*space)->Open("idxptr");
  ASSERT_TRUE(idxptr.ok() && *idxptr != nullptr);
  std::string local;
  ASSERT_TRUE(testutil::ReadWhole(dir + "/idxptr", &local));
  EXPECT_EQ((*idxptr)->Size(), local.size());
  EXPECT_EQ(Read(**idxptr, 0, local.size()), local);

  auto empty = DiscoverHttpKeys(*client_, server_->http_url() + "/private", names);
  EXPECT_FALSE(empty.ok());
  auto nothing = DiscoverHttpKeys(*client_, server_->http_url() + "/nothing_here", names);
  EXPECT_EQ(nothing.status().code(), ErrorCode::kUnsupported) << nothing.status().ToString();
}

}  // namespace
}  // namespace omicsfs::io::http
