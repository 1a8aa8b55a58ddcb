// One contract, every backend of the storage seam (io/byte_source.h): the same keys, the same
// bytes, the same absent values, the same refusals. A backend joins by adding a SpaceBackend.
#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <thread>

#include "io/byte_source.h"
#include "io/local/local_space.h"
#include "io/memory_space.h"
#include "io/zip/zip_space.h"
#include "testutil/mount_fixture.h"
#ifdef OMICSFS_REMOTE_BACKENDS
#include <fcntl.h>
#include <sys/stat.h>

#include "io/cached_byte_source.h"
#include "io/http/http_byte_space.h"
#include "io/s3/s3_byte_space.h"
#include "testutil/nginx_server.h"
#include "testutil/s3_server.h"
#endif
#include "util/fs.h"

namespace omicsfs::io {
namespace {

using Objects = std::map<std::string, std::string>;

struct SpaceBackend {
  std::string name;
  // The space holding `objects`, built under the scratch directory `tmp`.
  std::function<std::shared_ptr<const ByteSpace>(const Objects& objects, const fs::path& tmp)> make;
  // Replaces an object's bytes behind the space's back (null: the backend cannot change).
  std::function<void(const fs::path& tmp, const std::string& key, const std::string& bytes)>
      rewrite;
};

std::string Pattern(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

Objects TestObjects() {
  return {{"version", "v2\n"},           {"empty", ""},
          {"big", Pattern(300000, 1)},   {"arr/.zarray", "{}"},
          {"arr/0.0", Pattern(1000, 2)}, {"arr/0.1", Pattern(10, 3)},
          {"arr/sub/deep", "deep"},      {"zz", "last"}};
}

void WriteTree(const Objects& objects, const fs::path& root) {
  for (const auto& [key, bytes] : objects) {
    const fs::path p = root / key;
    fs::create_directories(p.parent_path());
    std::ofstream(p.string(), std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
}

// The objects zipped by Python's zipfile (the writer behind zarr's ZipStore), read through the
// local backend. A zip space is one version of its archive: it has nothing to rewrite (a changed
// archive is ESTALE for good; tests/io/zip_test.cc checks that).
SpaceBackend ZipBackend(const std::string& name, const std::string& method) {
  static const char* const kZip =
      "import os, sys, zipfile\n"
      "root, out, method = sys.argv[1:]\n"
      "with zipfile.ZipFile(out, 'w', getattr(zipfile, method)) as zf:\n"
      "    for d, _, names in sorted(os.walk(root)):\n"
      "        for n in sorted(names):\n"
      "            zf.write(os.path.join(d, n), os.path.relpath(os.path.join(d, n), root))\n";
  auto make = [method](const Objects& o, const fs::path& tmp) -> std::shared_ptr<const ByteSpace> {
    WriteTree(o, tmp / "store");
    const std::string zip = (tmp / "store.zip").string();
    const int rc = testutil::RunCommand(
        {"/usr/bin/python3", "-c", kZip, (tmp / "store").string(), zip, method});
    if (rc != 0) return nullptr;
    auto archive = LocalByteSource::OpenPath(zip);
    if (!archive.ok()) return nullptr;
    auto space = OpenZipSpace(*archive);
    EXPECT_TRUE(space.ok()) << space.status().ToString();
    return space.ok() ? *space : nullptr;
  };
  return {name, make, nullptr};
}

#ifdef OMICSFS_REMOTE_BACKENDS
// A remote space with what must outlive it: the server, the block cache and its pool.
class ServedSpace : public ByteSpace {
 public:
  ServedSpace(std::shared_ptr<void> keep, std::shared_ptr<const ByteSpace> space)
      : keep_(std::move(keep)), space_(std::move(space)) {}
  const std::string& Describe() const override { return space_->Describe(); }
  Result<std::shared_ptr<const ByteSource>> Open(const std::string& key) const override {
    return space_->Open(key);
  }
  Result<std::vector<ListEntry>> List(const std::string& prefix) const override {
    return space_->List(prefix);
  }
  Result<std::vector<KeyInfo>> ListRecursive(const std::string& prefix) const override {
    return space_->ListRecursive(prefix);
  }
  Result<std::optional<std::string>> Get(const std::string& key, uint64_t max) const override {
    return space_->Get(key, max);
  }

 private:
  std::shared_ptr<void> keep_;
  std::shared_ptr<const ByteSpace> space_;
};

// Blocks of 64 KiB, so that the 300 000-byte object spans several and ranges cross them.
struct Cached {
  std::shared_ptr<cache::CachePool> pool = std::make_shared<cache::CachePool>(64 << 20);
  std::shared_ptr<BlockCache> cache;
  Cached() {
    BlockCacheOptions o;
    o.block_size = 65536;
    cache = BlockCache::Create(pool.get(), o);
  }
};

std::shared_ptr<const ByteSpace> MakeHttp(const Objects& o, const fs::path& tmp, bool cached) {
  WriteTree(o, tmp / "store");
  std::shared_ptr<testutil::NginxServer> server =
      testutil::NginxServer::Start((tmp / "store").string());
  if (server == nullptr) return nullptr;
  auto client = http::HttpClient::Create({});
  if (!client.ok()) return nullptr;
  std::vector<std::string> keys;
  for (const auto& [k, v] : o) keys.push_back(k);
  auto keep =
      std::make_shared<std::pair<std::shared_ptr<testutil::NginxServer>, std::shared_ptr<Cached>>>(
          server, cached ? std::make_shared<Cached>() : nullptr);
  auto space = http::HttpByteSpace::Create(server->http_url(), *client, keys,
                                           cached ? keep->second->cache : nullptr);
  if (!space.ok()) return nullptr;
  return std::make_shared<ServedSpace>(keep, *space);
}

// nginx's ETag is the mtime in seconds and the size: a same-size rewrite within the second
// needs another mtime to be seen (object stores give every PUT a new ETag).
void RewriteServed(const fs::path& tmp, const std::string& key, const std::string& bytes) {
  const std::string p = (tmp / "store" / key).string();
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
  struct timespec t[2] = {{1'700'000'000, 0}, {1'700'000'000, 0}};
  ::utimensat(AT_FDCWD, p.c_str(), t, 0);
}

// One bucket per test, on the binary's Swift s3api server (which checks signatures).
std::shared_ptr<const ByteSpace> MakeS3(const Objects& o, const fs::path& tmp) {
  testutil::S3Server* s3 = testutil::S3ServerEnvironment::Get();
  if (s3 == nullptr) return nullptr;
  WriteTree(o, tmp / "store");
  static std::atomic<int> n{0};
  const std::string bucket = "conformance" + std::to_string(n++);
  s3->CreateBucket(bucket);
  s3->PutTree(bucket, "p", (tmp / "store").string());
  std::ofstream(tmp / "bucket") << bucket;
  s3::Credentials c{s3->access_key(), s3->secret_key(), "", "test"};
  s3::S3Options so;
  so.endpoint = s3->endpoint();
  so.region = s3->region();
  auto space = s3::S3ByteSpace::Create("s3://" + bucket + "/p", so, c);
  EXPECT_TRUE(space.ok()) << space.status().ToString();
  return space.ok() ? *space : nullptr;
}

void RewriteS3(const fs::path& tmp, const std::string& key, const std::string& bytes) {
  std::string bucket;
  std::ifstream(tmp / "bucket") >> bucket;
  const fs::path p = tmp / "rewritten";
  std::ofstream(p.string(), std::ios::binary | std::ios::trunc) << bytes;
  testutil::S3ServerEnvironment::Get()->PutFile(bucket, "p/" + key, p.string());
}

const auto* const kS3 = ::testing::AddGlobalTestEnvironment(new testutil::S3ServerEnvironment());
#endif

std::vector<SpaceBackend> Backends() {
  std::vector<SpaceBackend> b;
#ifdef OMICSFS_REMOTE_BACKENDS
  b.push_back({"http",
               [](const Objects& o, const fs::path& tmp) { return MakeHttp(o, tmp, false); },
               RewriteServed});
  b.push_back({"http_cached",
               [](const Objects& o, const fs::path& tmp) { return MakeHttp(o, tmp, true); },
               RewriteServed});
  b.push_back({"s3", MakeS3, RewriteS3});
  return b;
#endif
  b.push_back({"local",
               [](const Objects& o, const fs::path& tmp) -> std::shared_ptr<const ByteSpace> {
                 WriteTree(o, tmp / "store");
                 return std::make_shared<LocalByteSpace>((tmp / "store").string());
               },
               [](const fs::path& tmp, const std::string& key, const std::string& bytes) {
                 std::ofstream((tmp / "store" / key).string(), std::ios::binary | std::ios::trunc)
                     << bytes;
               }});
  b.push_back({"memory",
               [](const Objects& o, const fs::path&) -> std::shared_ptr<const ByteSpace> {
                 return std::make_shared<MemoryByteSpace>(o);
               },
               nullptr});
  b.push_back(ZipBackend("zip_stored", "ZIP_STORED"));
  b.push_back(ZipBackend("zip_deflated", "ZIP_DEFLATED"));
  return b;
}

class ByteSpaceConformance : public ::testing::TestWithParam<SpaceBackend> {
 protected:
  void SetUp() override {
    tmp_ = fs::temp_directory_path() / fs::unique_path("omicsfs-space-%%%%%%");
    fs::create_directories(tmp_);
    objects_ = TestObjects();
    space_ = GetParam().make(objects_, tmp_);
    ASSERT_NE(space_, nullptr);
  }
  void TearDown() override { fs::remove_all(tmp_); }

  std::shared_ptr<const ByteSource> MustOpen(const std::string& key) {
    auto s = space_->Open(key);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : nullptr;
  }

  fs::path tmp_;
  Objects objects_;
  std::shared_ptr<const ByteSpace> space_;
};

TEST_P(ByteSpaceConformance, EveryObjectReadsBackWhole) {
  for (const auto& [key, bytes] : objects_) {
    auto source = MustOpen(key);
    ASSERT_NE(source, nullptr) << key;
    EXPECT_EQ(source->Size(), bytes.size()) << key;
    auto all = source->ReadAll(1 << 20);
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    EXPECT_EQ(*all, bytes) << key;
    auto got = space_->Get(key, 1 << 20);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_TRUE(got->has_value()) << key;
    EXPECT_EQ(**got, bytes) << key;
  }
}

TEST_P(ByteSpaceConformance, RangesAreExactAndBoundsAreChecked) {
  auto source = MustOpen("big");
  ASSERT_NE(source, nullptr);
  const std::string& big = objects_.at("big");
  for (auto [offset, length] : std::vector<std::pair<uint64_t, size_t>>{
           {0, 1}, {0, 4096}, {12345, 70000}, {big.size() - 1, 1}, {big.size(), 0}, {100, 0}}) {
    std::string out(length, '\0');
    ASSERT_TRUE(source->ReadExact(offset, out.data(), length).ok()) << offset << "+" << length;
    EXPECT_EQ(out, big.substr(offset, length));
  }
  char c;
  for (auto [offset, length] : std::vector<std::pair<uint64_t, size_t>>{
           {big.size(), 1}, {big.size() - 1, 2}, {~uint64_t{0}, 1}}) {
    Status s = source->ReadExact(offset, &c, length);
    EXPECT_EQ(s.code(), ErrorCode::kCorrupt) << offset;
    EXPECT_NE(s.message().find(source->Describe()), std::string::npos) << s.message();
  }
  auto capped = source->ReadAll(1000);
  EXPECT_EQ(capped.status().code(), ErrorCode::kCorrupt);
  auto capped_get = space_->Get("big", 1000);
  EXPECT_EQ(capped_get.status().code(), ErrorCode::kCorrupt);
}

TEST_P(ByteSpaceConformance, AbsentIsAValue) {
  for (const std::string key : {"nothing", "arr/9.9", "nodir/x", "arr/sub/none"}) {
    auto s = space_->Open(key);
    ASSERT_TRUE(s.ok()) << key << ": " << s.status().ToString();
    EXPECT_EQ(*s, nullptr) << key;
    auto g = space_->Get(key, 100);
    ASSERT_TRUE(g.ok()) << key << ": " << g.status().ToString();
    EXPECT_FALSE(g->has_value()) << key;
  }
  // A folder is not an object.
  auto dir = space_->Open("arr");
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(*dir, nullptr);
}

TEST_P(ByteSpaceConformance, BadKeysAreRefusedTheSameWayEverywhere) {
  for (const std::string key :
       {"", "/version", "arr/", "arr//0.0", "../x", "arr/../version", "./version", "arr/."}) {
    EXPECT_EQ(space_->Open(key).status().code(), ErrorCode::kInvalidArgument) << "'" << key << "'";
    EXPECT_EQ(space_->Get(key, 10).status().code(), ErrorCode::kInvalidArgument)
        << "'" << key << "'";
    if (!key.empty()) {
      EXPECT_EQ(space_->List(key).status().code(), ErrorCode::kInvalidArgument)
          << "'" << key << "'";
    }
  }
}

std::vector<std::string> Names(const std::vector<ListEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries)
    out.push_back(e.name + (e.kind == EntryKind::kDirectory ? "/" : ""));
  return out;
}

TEST_P(ByteSpaceConformance, ListingsAreSortedWithFoldersMarked) {
  auto root = space_->List("");
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  EXPECT_EQ(Names(*root), (std::vector<std::string>{"arr/", "big", "empty", "version", "zz"}));
  for (const auto& e : *root) {
    if (e.kind == EntryKind::kFile) {
      EXPECT_EQ(e.info.size, objects_.at(e.name).size()) << e.name;
    }
  }
  auto arr = space_->List("arr");
  ASSERT_TRUE(arr.ok());
  EXPECT_EQ(Names(*arr), (std::vector<std::string>{".zarray", "0.0", "0.1", "sub/"}));
  auto none = space_->List("nothing/here");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_P(ByteSpaceConformance, RecursiveListingsGiveEveryObjectOnce) {
  auto all = space_->ListRecursive("");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  std::vector<std::string> keys;
  for (const auto& k : *all) {
    keys.push_back(k.key);
    EXPECT_EQ(k.info.size, objects_.at(k.key).size()) << k.key;
  }
  std::vector<std::string> want;
  for (const auto& [key, bytes] : objects_) want.push_back(key);
  EXPECT_EQ(keys, want);
  auto arr = space_->ListRecursive("arr");
  ASSERT_TRUE(arr.ok()) << arr.status().ToString();
  keys.clear();
  for (const auto& k : *arr) keys.push_back(k.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"arr/.zarray", "arr/0.0", "arr/0.1", "arr/sub/deep"}));
  auto sub = SubSpace(space_, "arr")->ListRecursive("sub");
  ASSERT_TRUE(sub.ok()) << sub.status().ToString();
  ASSERT_EQ(sub->size(), 1u);
  EXPECT_EQ(sub->front().key, "sub/deep");
  EXPECT_EQ(space_->ListRecursive("../x").status().code(), ErrorCode::kInvalidArgument);
}

// A folder listed again right after a recursive listing covering it (S3 answers that one from
// the recursive listing: opening a store lists its root just after its stamp's listing) is
// listed as before it: the same names, kinds, sizes and versions.
TEST_P(ByteSpaceConformance, AFolderListsTheSameAfterARecursiveListing) {
  auto line = [](const std::vector<ListEntry>& entries) {
    std::string out;
    for (const auto& e : entries) {
      out += e.name + (e.kind == EntryKind::kDirectory ? "/" : " " + std::to_string(e.info.size)) +
             " " + e.info.stamp + "\n";
    }
    return out;
  };
  const std::vector<std::string> folders = {"", "arr", "arr/sub", "nothing/here"};
  std::vector<std::string> before;
  for (const auto& f : folders) {
    auto l = space_->List(f);
    ASSERT_TRUE(l.ok()) << f << ": " << l.status().ToString();
    before.push_back(line(*l));
  }
  ASSERT_TRUE(space_->ListRecursive("").ok());
  for (size_t i = 0; i < folders.size(); ++i) {
    auto l = space_->List(folders[i]);
    ASSERT_TRUE(l.ok()) << folders[i] << ": " << l.status().ToString();
    EXPECT_EQ(line(*l), before[i]) << "folder '" << folders[i] << "'";
  }
  auto arr = SubSpace(space_, "arr");
  ASSERT_TRUE(arr->ListRecursive("").ok());
  auto sub = arr->List("sub");
  ASSERT_TRUE(sub.ok());
  EXPECT_EQ(line(*sub), before[2]);
}

TEST_P(ByteSpaceConformance, SubSpacesSeeTheirFolderAsRoot) {
  auto sub = SubSpace(space_, "arr");
  EXPECT_EQ(sub->Describe(), space_->Describe() + "/arr");
  auto deep = sub->Get("sub/deep", 100);
  ASSERT_TRUE(deep.ok() && deep->has_value());
  EXPECT_EQ(**deep, "deep");
  auto listed = sub->List("");
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(Names(*listed), (std::vector<std::string>{".zarray", "0.0", "0.1", "sub/"}));
  EXPECT_EQ(sub->Open("../version").status().code(), ErrorCode::kInvalidArgument);
  auto source = sub->Open("0.0");
  ASSERT_TRUE(source.ok() && *source != nullptr);
  EXPECT_EQ((*source)->Describe(), space_->Describe() + "/arr/0.0");
}

TEST_P(ByteSpaceConformance, ConcurrentReadersAgree) {
  auto source = MustOpen("big");
  ASSERT_NE(source, nullptr);
  const std::string& big = objects_.at("big");
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < 50; ++i) {
        const uint64_t off = rng() % big.size();
        const size_t len = std::min<size_t>(rng() % 20000, big.size() - off);
        std::string out(len, '\0');
        if (!source->ReadExact(off, out.data(), len).ok() || out != big.substr(off, len)) ++bad;
        auto g = space_->Get("arr/0.0", 1 << 20);
        if (!g.ok() || !g->has_value() || **g != objects_.at("arr/0.0")) ++bad;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST_P(ByteSpaceConformance, AChangedObjectIsStaleNeverMixed) {
  if (!GetParam().rewrite) GTEST_SKIP() << GetParam().name << " objects cannot change";
  auto source = MustOpen("big");
  ASSERT_NE(source, nullptr);
  std::this_thread::sleep_for(
      std::chrono::milliseconds(20));  // a later ctime, whatever the clock's grain
  GetParam().rewrite(tmp_, "big", Pattern(300000, 99));
  std::string out(1000, '\0');
  Status s = source->ReadExact(0, out.data(), out.size());
  EXPECT_EQ(s.sys_errno(), ESTALE) << s.ToString();
  EXPECT_NE(s.message().find(source->Describe()), std::string::npos) << s.message();
  // A new open sees the new bytes.
  auto again = MustOpen("big");
  ASSERT_NE(again, nullptr);
  auto all = again->ReadAll(1 << 20);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(*all, Pattern(300000, 99));
}

INSTANTIATE_TEST_SUITE_P(Backends, ByteSpaceConformance, ::testing::ValuesIn(Backends()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace omicsfs::io
