// Remote SOURCEs through real mounts and real servers on loopback: stores served by nginx
// (http:// and https://) and by an S3 that checks signatures (Swift with s3api), each mounted
// byte-identical to the same store mounted from the local disk; and the faults a cluster meets.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>

#include "testutil/mount_fixture.h"
#include "testutil/nginx_server.h"
#include "testutil/s3_server.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::MountedFs;
using testutil::NginxServer;
using testutil::ReadWhole;
using testutil::RunCommand;
using testutil::S3Server;
using testutil::S3ServerEnvironment;

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new S3ServerEnvironment());
const std::string kCorpus = OMICSFS_CORPUS_DIR;

// Whether `name` is in the listing of `dir` now (a fresh opendir).
bool Listed(const std::string& dir, const std::string& name) {
  fs_error ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() == name) return true;
  }
  return false;
}

void SnapshotInto(const std::string& root, const std::string& rel,
                  std::map<std::string, std::string>* out) {
  fs_error ec;
  for (fs::directory_iterator it(root + rel, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string child = rel + "/" + it->path().filename().string();
    if (child == "/.omicsfs") continue;
    struct stat st;
    if (::stat((root + child).c_str(), &st) != 0 &&
        !Listed(root + rel, it->path().filename().string())) {
      // Listed, then withdrawn (a region index tabix refuses) by the pass its stat ran, or one a
      // file stat'ed before it ran: left out, as a mount whose index_dir says so never lists it.
      continue;
    }
    if (::stat((root + child).c_str(), &st) != 0) {  // a view whose size cannot be known
      (*out)[child] = "<stat errno " + std::to_string(errno) + ">";
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      (*out)[child] = "<dir>";
      SnapshotInto(root, child, out);
      continue;
    }
    std::string bytes;
    int err = 0;
    (*out)[child] =
        ReadWhole(root + child, &bytes, &err) ? bytes : "<errno " + std::to_string(err) + ">";
  }
  EXPECT_FALSE(ec) << root + rel << ": " << ec.message();
}

// Every file below `root` (path → bytes; folders → "<dir>"), the control folder left out.
// Unreadable files map to "<errno N>": the same failure must happen on both sides.
std::map<std::string, std::string> Snapshot(const std::string& root) {
  std::map<std::string, std::string> out;
  SnapshotInto(root, "", &out);
  return out;
}

// Compares two snapshots; ERROR.txt files name their backend's paths, so only their presence.
// `same_mtime` false: the two stores are different objects (a zip and its folder), so the .bgi,
// which records its .bgen's mtime (bgenix's Metadata table), may differ.
void ExpectSameTree(const std::map<std::string, std::string>& want,
                    const std::map<std::string, std::string>& got, const std::string& what,
                    bool same_mtime = true) {
  EXPECT_GE(want.size(), 3u) << what << ": the local reference shows almost nothing";
  size_t differing = 0;
  for (const auto& [path, bytes] : want) {
    auto it = got.find(path);
    if (it == got.end()) {
      ADD_FAILURE() << what << ": missing " << path;
      continue;
    }
    if (path.ends_with("/ERROR.txt") || path == "/ERROR.txt") continue;
    if (!same_mtime && path.ends_with(".bgen.bgi")) continue;
    if (it->second != bytes && ++differing <= 10) {
      ADD_FAILURE() << what << ": " << path << " differs (" << it->second.size() << " vs "
                    << bytes.size() << " bytes)"
                    << (it->second.size() < 200 ? ": " + it->second : "");
    }
  }
  for (const auto& [path, bytes] : got) {
    if (!want.count(path)) ADD_FAILURE() << what << ": only remotely: " << path;
  }
  EXPECT_EQ(differing, 0u) << what;
}

std::map<std::string, std::string> Sub(const std::map<std::string, std::string>& all,
                                       const std::string& prefix) {
  std::map<std::string, std::string> out;
  for (auto it = all.lower_bound(prefix + "/");
       it != all.end() && it->first.rfind(prefix + "/", 0) == 0; ++it) {
    out[it->first.substr(prefix.size())] = it->second;
  }
  return out;
}

class RemoteMount : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // The local reference: the corpus mounted from disk, once.
    local_ = MountedFs::Start(OMICSFS_BINARY, kCorpus, {}, std::chrono::seconds(1800))
                 .release();  // the whole suite
    ASSERT_NE(local_, nullptr);
  }
  static void TearDownTestSuite() {
    delete local_;
    local_ = nullptr;
  }
  static std::map<std::string, std::string> Local(const std::string& vpath) {
    return Snapshot(local_->path() + vpath);
  }
  static void SetS3Env(const S3Server& s) {
    ::setenv("AWS_ACCESS_KEY_ID", s.access_key().c_str(), 1);
    ::setenv("AWS_SECRET_ACCESS_KEY", s.secret_key().c_str(), 1);
    ::unsetenv("AWS_SESSION_TOKEN");
    ::unsetenv("AWS_PROFILE");
  }
  static std::vector<std::string> S3Args(const S3Server& s) {
    return {"-o", "s3_endpoint=" + s.endpoint() + ",s3_region=" + s.region() + ",rescan=0"};
  }

  static inline MountedFs* local_ = nullptr;
};

// One store per URL, as plain HTTP allows: every VCF Zarr store with consolidated metadata,
// every BPCells directory store, and datg matrices named by their .datg URL.
TEST_F(RemoteMount, HttpStoresMountLikeLocalOnes) {
  std::string error;
  auto nginx = NginxServer::Start(kCorpus, {}, &error);
  ASSERT_NE(nginx, nullptr) << error;
  std::vector<std::string> stores;
  for (const auto& e : fs::directory_iterator(kCorpus + "/vcf-zarr")) {
    const std::string name = e.path().filename().string();
    if (fs::exists(e.path() / (name + ".vcz") / ".zmetadata"))
      stores.push_back("/vcf-zarr/" + name + "/" + name + ".vcz");
  }
  for (const char* v : {"v1", "v2"}) {
    for (const auto& e : fs::directory_iterator(kCorpus + "/bpcells/dir/" + v)) {
      stores.push_back("/bpcells/dir/" + std::string(v) + "/" + e.path().filename().string());
    }
  }
  for (const char* d : {"edge_1x1", "edge_0x3"})
    stores.push_back(std::string("/datg/") + d + ".datg");
  ASSERT_GT(stores.size(), 40u);
  for (const std::string& store : stores) {
    auto m = MountedFs::Start(OMICSFS_BINARY, nginx->http_url() + store, {"-o", "rescan=0"});
    ASSERT_NE(m, nullptr) << store;
    ExpectSameTree(Local(store), Snapshot(m->path()), store);
  }
}

TEST_F(RemoteMount, HttpsVerifiesTheServer) {
  std::string error;
  auto nginx = NginxServer::Start(kCorpus, {}, &error);
  ASSERT_NE(nginx, nullptr) << error;
  const std::string store = "/vcf-zarr/sample/sample.vcz";
  auto m = MountedFs::Start(OMICSFS_BINARY, nginx->https_url() + store,
                            {"-o", "rescan=0,ca_file=" + nginx->ca_file()});
  ASSERT_NE(m, nullptr);
  ExpectSameTree(Local(store), Snapshot(m->path()), "https");
  // Without the certificate the server is not trusted: SOURCE unusable, exit 2.
  std::string out;
  EXPECT_EQ(RunCommand({OMICSFS_BINARY, "ls", nginx->https_url() + store}, &out), 2) << out;
}

// The whole corpus in a bucket, mounted at once: the same tree as the local mount (the HDF5
// files: Hdf5FilesMountLikeLocalOnes).
TEST_F(RemoteMount, S3BucketMountsLikeTheLocalCorpus) {
  S3Server* s3 = S3ServerEnvironment::Get();
  ASSERT_NE(s3, nullptr);
  s3->CreateBucket("corpus");
  s3->PutTree("corpus", "c/vcf-zarr", kCorpus + "/vcf-zarr");
  s3->PutTree("corpus", "c/bpcells/dir", kCorpus + "/bpcells/dir");
  s3->PutTree("corpus", "c/datg", kCorpus + "/datg");
  SetS3Env(*s3);
  auto m = MountedFs::Start(OMICSFS_BINARY, "s3://corpus/c", S3Args(*s3), std::chrono::seconds(600),
                            std::chrono::seconds(180));
  ASSERT_NE(m, nullptr);
  const auto remote = Snapshot(m->path());
  // Uploaded objects carry the upload's Last-Modified: only the .bgi (which records its .bgen's
  // mtime) may differ from the local files'.
  for (const char* top : {"/vcf-zarr", "/bpcells/dir", "/datg"}) {
    ExpectSameTree(Local(top), Sub(remote, top), top, /*same_mtime=*/false);
  }
  // ls and cat take the URL too.
  std::string out;
  std::vector<std::string> cat = {OMICSFS_BINARY, "cat"};
  for (const auto& a : S3Args(*s3)) cat.push_back(a);
  cat.push_back("s3://corpus/c");
  cat.push_back("vcf-zarr/sample/sample.vcz/sample.vcf");
  EXPECT_EQ(RunCommand(cat, &out), 0);
  EXPECT_EQ(out, remote.at("/vcf-zarr/sample/sample.vcz/sample.vcf"));
}

// The "remote: N requests" count of MOUNT/.omicsfs/status.
uint64_t RemoteRequests(const MountedFs& m) {
  std::string status;
  EXPECT_TRUE(ReadWhole(m.path() + "/.omicsfs/status", &status));
  const size_t at = status.find("remote: ");
  EXPECT_NE(at, std::string::npos) << status;
  return at == std::string::npos ? 0 : std::stoull(status.substr(at + 8));
}

// Lazy discovery: the mount answers after listing the bucket's root, and `ls` of the root opens
// no store (each store: a listing and ~40 GETs); what is then looked into reads as locally.
TEST_F(RemoteMount, ABucketMountAnswersBeforeOpeningItsStores) {
  S3Server* s3 = S3ServerEnvironment::Get();
  ASSERT_NE(s3, nullptr);
  s3->CreateBucket("lazy");
  s3->PutTree("lazy", "l/v1", kCorpus + "/bpcells/dir/v1");
  s3->PutTree("lazy", "l/sample", kCorpus + "/vcf-zarr/sample");
  SetS3Env(*s3);
  auto m = MountedFs::Start(OMICSFS_BINARY, "s3://lazy/l", S3Args(*s3));
  ASSERT_NE(m, nullptr);
  const uint64_t mounted = RemoteRequests(*m);
  EXPECT_LE(mounted, 3u);  // the credentials probe and the root's listing
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(m->path()))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"sample", "v1"}));
  struct stat st;
  ASSERT_EQ(::stat((m->path() + "/v1").c_str(), &st), 0);
  EXPECT_EQ(RemoteRequests(*m), mounted) << "ls and stat of the root opened something";
  std::string status;
  ASSERT_TRUE(ReadWhole(m->path() + "/.omicsfs/status", &status));
  EXPECT_NE(status.find("folders not opened yet: 2"), std::string::npos) << status;
  ExpectSameTree(Local("/bpcells/dir/v1"), Snapshot(m->path() + "/v1"), "lazy v1", false);
  ExpectSameTree(Local("/vcf-zarr/sample"), Snapshot(m->path() + "/sample"), "lazy sample", false);
  EXPECT_GT(RemoteRequests(*m), mounted + 20);
}

// A slice of a bucket's store fetches only its chunks: a region × one sample costs a small part
// of what the whole view costs, and reads as the same slice of the local store does.
TEST_F(RemoteMount, ARemoteSliceFetchesOnlyItsChunks) {
  S3Server* s3 = S3ServerEnvironment::Get();
  ASSERT_NE(s3, nullptr);
  s3->CreateBucket("slices");
  s3->PutTree("slices", "s/chr22", kCorpus + "/vcf-zarr/chr22_v9_s32");  // 100 × 100, chunks 9 × 32
  SetS3Env(*s3);
  auto m = MountedFs::Start(OMICSFS_BINARY, "s3://slices/s", S3Args(*s3));
  ASSERT_NE(m, nullptr);
  const std::string store = "/chr22/chr22_v9_s32.vcz";
  struct stat st;
  ASSERT_EQ(::stat((m->path() + store + "/samples.txt").c_str(), &st), 0);  // the store is open
  const std::string cut = "/region=chr22:10510500-10510600/samples=HG00100/chr22_v9_s32.vcf";
  const std::string slice = store + cut;
  const uint64_t before = RemoteRequests(*m);
  std::string remote, local;
  ASSERT_TRUE(ReadWhole(m->path() + slice, &remote));
  const uint64_t sliced = RemoteRequests(*m) - before;
  ASSERT_TRUE(ReadWhole(local_->path() + "/vcf-zarr/chr22_v9_s32/chr22_v9_s32.vcz" + cut, &local));
  EXPECT_EQ(remote, local);
  EXPECT_FALSE(local.empty());
  std::string whole;
  const uint64_t before_whole = RemoteRequests(*m);
  ASSERT_TRUE(ReadWhole(m->path() + store + "/chr22_v9_s32.vcf", &whole));
  const uint64_t all = RemoteRequests(*m) - before_whole;
  std::printf("s3 slice: %ju requests for a region x 1 sample; %ju for the whole view\n",
              static_cast<uintmax_t>(sliced), static_cast<uintmax_t>(all));
  EXPECT_GT(sliced, 0u);
  // The slice's records sit in 2 of the 12 variants-chunks and its sample in 1 of 4 sample
  // chunks (FORMAT fields that sample lacks are looked up in the others: the parent's FORMAT
  // column names a field any sample holds).
  EXPECT_LT(sliced * 4, all) << "the slice fetched more than its chunks";
}

// The "N requests in flight per reader" of MOUNT/.omicsfs/status (HttpClient::Parallelism()).
int InFlightPerReader(const MountedFs& m) {
  std::string status;
  EXPECT_TRUE(ReadWhole(m.path() + "/.omicsfs/status", &status));
  const long n = testutil::NumberBefore(status, " requests in flight per reader");
  EXPECT_GE(n, 0) << status;
  return static_cast<int>(n);
}

// A server 10 ms away (nginx behind tests/servers/latency_proxy.py): once the first bytes take
// that long, a reader fetches a record range's arrays together (http_parallel, 8), and the text
// is the same byte for byte. With http_parallel=1 each reader fetches one at a time.
TEST_F(RemoteMount, ASlowServerIsReadWithRequestsInParallel) {
  std::string error;
  auto nginx = NginxServer::Start(kCorpus, {}, &error);
  ASSERT_NE(nginx, nullptr) << error;
  auto proxy = testutil::LatencyProxy::Start(nginx->http_url(), 10, &error);
  ASSERT_NE(proxy, nullptr) << error;
  const std::string store = "/vcf-zarr/chr22_v9_s32/chr22_v9_s32.vcz";
  {
    auto m = MountedFs::Start(OMICSFS_BINARY, proxy->url() + store, {"-o", "rescan=0"});
    ASSERT_NE(m, nullptr);
    ExpectSameTree(Local(store), Snapshot(m->path()), "10 ms away");
    EXPECT_EQ(InFlightPerReader(*m), 8);
    EXPECT_GE(proxy->MaxInFlight(), 2) << "the proxy never saw two requests at once";
  }
  auto serial =
      MountedFs::Start(OMICSFS_BINARY, proxy->url() + store, {"-o", "rescan=0,http_parallel=1"});
  ASSERT_NE(serial, nullptr);
  ExpectSameTree(Local(store), Snapshot(serial->path()), "10 ms away, serial");
  EXPECT_EQ(InFlightPerReader(*serial), 1);
}

// `len` bytes of `path` at `offset` (one pread), or "<errno N>".
std::string ReadAt(const std::string& path, uint64_t offset, size_t len) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return "<errno " + std::to_string(errno) + ">";
  std::string buf(len, '\0');
  const ssize_t n = ::pread(fd, buf.data(), len, static_cast<off_t>(offset));
  const int err = errno;
  ::close(fd);
  if (n < 0) return "<errno " + std::to_string(err) + ">";
  buf.resize(static_cast<size_t>(n));
  return buf;
}

// An S3 10 ms away: chunks the listing says are at least -o s3_parts large are read by ranged
// GETs (the blosc header and block table, then the blocks a short read's records lie in, together),
// not fetched whole as with s3_parts=0 (then its blocks are decoded from the whole chunk). The
// bytes served are the local mount's either way, and the reads by ranges fetch less: one
// variants-chunk of 8 000 records whose call_AD, call_GQ and call_DP chunks are 5.5, 2.8 and 2.5 MB
// in 64 KiB blosc blocks.
TEST_F(RemoteMount, ADistantS3ReadsLargeChunksByTheirBlocks) {
  S3Server* s3 = S3ServerEnvironment::Get();
  ASSERT_NE(s3, nullptr);
  testutil::TempDir src, idx;
  ASSERT_EQ(RunCommand({OMICSFS_GEN_VCZ, src.path() + "/cohort.vcz", "8000", "400", "8000", "400",
                        "65536"}),
            0);
  s3->CreateBucket("parts");
  s3->PutTree("parts", "p/cohort.vcz", src.path() + "/cohort.vcz");
  SetS3Env(*s3);
  std::string error;
  auto proxy = testutil::LatencyProxy::Start(s3->endpoint(), 10, &error);
  ASSERT_NE(proxy, nullptr) << error;
  auto local = MountedFs::Start(OMICSFS_BINARY, src.path());
  ASSERT_NE(local, nullptr);
  const std::string view = "/cohort.vcz/cohort.vcf";
  std::string vcf;
  ASSERT_TRUE(ReadWhole(local->path() + view, &vcf));
  ASSERT_GT(vcf.size(), 20000000u);  // ~3 KB a record: a read of 60 000 is ~20 of 8 000
  auto args = [&](const std::string& parts) {
    return std::vector<std::string>{
        "-o", "s3_endpoint=" + proxy->url() + ",s3_region=" + s3->region() +
                  ",rescan=0,cache_size=64M,index_dir=" + idx.path() + ",s3_parts=" + parts};
  };
  {  // sized once, so that the mounts below start with reads
    auto first = MountedFs::Start(OMICSFS_BINARY, "s3://parts/p", args("1K"));
    ASSERT_NE(first, nullptr);
    struct stat st;
    ASSERT_EQ(::stat((first->path() + view).c_str(), &st), 0);
    ASSERT_EQ(static_cast<uint64_t>(st.st_size), vcf.size());
    // The pass reads every row a few at a time, and the cache (64M) cannot keep the larger
    // chunks decoded while it goes through them (call_AD: 19 MB): it reads those by their
    // blocks, never a whole chunk for each text chunk (that fetched ~130 times the store).
    // Measured 1.6-1.8 times the store: the pass's threads render neighbouring text chunks at
    // once, and both fetch the blocks they share.
    uint64_t stored = 0;
    for (const auto& e : fs::recursive_directory_iterator(src.path()))
      if (fs::is_regular_file(e.path())) stored += fs::file_size(e.path());
    std::string s;
    ASSERT_TRUE(ReadWhole(first->path() + "/.omicsfs/status", &s));
    const auto fetched = static_cast<uint64_t>(testutil::NumberBefore(s, " bytes fetched"));
    EXPECT_LE(fetched, 3 * stored) << stored << " bytes stored; " << s;
  }
  std::map<std::string, long> fetched, requests;
  for (const std::string parts : {"1K", "0"}) {
    auto m = MountedFs::Start(OMICSFS_BINARY, "s3://parts/p", args(parts));
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(InFlightPerReader(*m), 8) << "the server does not look distant";
    auto status = [&] {
      std::string s;
      EXPECT_TRUE(ReadWhole(m->path() + "/.omicsfs/status", &s));
      return s;
    };
    const long before = testutil::NumberBefore(status(), " bytes fetched");
    const long requests_before = static_cast<long>(RemoteRequests(*m));
    // A few records twice (with the kernel's read-ahead and the neighbouring text chunks a first
    // read renders, a few hundred of the chunk's 8 000; 12 MB apart: not one sequential run,
    // which past a quarter of the view would decode whole chunks, as a `cat` does).
    for (uint64_t at : {vcf.size() / 2, vcf.size() - 70000}) {
      EXPECT_TRUE(ReadAt(m->path() + view, at, 60000) == vcf.substr(at, 60000))
          << "s3_parts=" << parts << " at " << at;
    }
    const std::string after = status();
    fetched[parts] = testutil::NumberBefore(after, " bytes fetched") - before;
    requests[parts] = static_cast<long>(RemoteRequests(*m)) - requests_before;
    EXPECT_GT(testutil::NumberBefore(after, " parts alone"), 0) << after;
  }
  std::printf("s3 short reads: by parts %ld bytes in %ld requests; whole chunks %ld bytes in %ld\n",
              fetched["1K"], requests["1K"], fetched["0"], requests["0"]);
  EXPECT_LT(fetched["1K"] * 4, fetched["0"]) << "reading by parts saved less than three quarters";
}

TEST_F(RemoteMount, WrongS3CredentialsRefuseTheMount) {
  S3Server* s3 = S3ServerEnvironment::Get();
  ASSERT_NE(s3, nullptr);
  s3->CreateBucket("keys");
  s3->PutFile("keys", "a/notes.txt", kCorpus + "/datg/edge_1x1.expected.tsv");
  ::setenv("AWS_ACCESS_KEY_ID", s3->access_key().c_str(), 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret", 1);
  const fs::path mp = fs::temp_directory_path() / fs::unique_path("omicsfs-mnt-%%%%%%");
  fs::create_directories(mp);
  std::vector<std::string> args = {OMICSFS_BINARY, "-f"};
  for (const auto& a : S3Args(*s3)) args.push_back(a);
  args.push_back("s3://keys/a");
  args.push_back(mp.string());
  std::string out;
  const int rc = RunCommand(args, &out, std::chrono::seconds(60));
  EXPECT_EQ(rc, 2) << out;
  fs::remove(mp);
  SetS3Env(*s3);
  args = {OMICSFS_BINARY, "ls"};
  for (const auto& a : S3Args(*s3)) args.push_back(a);
  args.push_back("s3://keys/a");
  EXPECT_EQ(RunCommand(args, &out), 0);
  EXPECT_NE(out.find("notes.txt"), std::string::npos) << out;
}

// NAME.vcz.zip (zarr's ZipStore layout, written by Python's zipfile as bio2zarr does) is the store
// NAME.vcz/, from a local folder, from nginx and from a bucket, deflated or stored.
TEST_F(RemoteMount, ZippedStoresMountLikeTheirFolders) {
  const fs::path dir = fs::temp_directory_path() / fs::unique_path("omicsfs-zips-%%%%%%");
  fs::create_directories(dir);
  const std::vector<std::pair<std::string, std::string>> zips = {
      {"/vcf-zarr/sample/sample.vcz", "sample.vcz.zip"},                     // deflated
      {"/vcf-zarr/sample_v3_s2/sample_v3_s2.vcz", "sample_v3_s2.vcz.zip"}};  // stored (Zarr v3)
  for (size_t i = 0; i < zips.size(); ++i) {
    ASSERT_EQ(testutil::ZipFolder(kCorpus + zips[i].first, (dir / zips[i].second).string(), i == 0),
              0);
  }
  auto local = MountedFs::Start(OMICSFS_BINARY, dir.string(), {"-o", "rescan=0"});
  ASSERT_NE(local, nullptr);
  std::string error;
  auto nginx = NginxServer::Start(dir.string(), {}, &error);
  ASSERT_NE(nginx, nullptr) << error;
  S3Server* s3 = S3ServerEnvironment::Get();
  ASSERT_NE(s3, nullptr);
  s3->CreateBucket("zips");
  s3->PutTree("zips", "z", dir.string());
  SetS3Env(*s3);
  auto bucket = MountedFs::Start(OMICSFS_BINARY, "s3://zips/z", S3Args(*s3));
  ASSERT_NE(bucket, nullptr);
  for (const auto& [store, zip] : zips) {
    const std::string name = zip.substr(0, zip.size() - 4);
    const auto want = Local(store);
    ExpectSameTree(want, Snapshot(local->path() + "/" + name), "local " + zip, false);
    ExpectSameTree(want, Snapshot(bucket->path() + "/" + name), "s3 " + zip, false);
    auto http = MountedFs::Start(OMICSFS_BINARY, nginx->http_url() + "/" + zip, {"-o", "rescan=0"});
    ASSERT_NE(http, nullptr) << zip;
    ExpectSameTree(want, Snapshot(http->path()), "http " + zip, false);
  }
  fs::remove_all(dir);
}

// HDF5 files with BPCells store groups, by URL from nginx and in a bucket: read through the
// ByteSource driver and the block cache, vetted by the helper over the same URL, they mount as
// the same folders of stores as locally. Requests per file are printed (field notes: ROS3 made
// 14 requests for a 6.4 KB file).
TEST_F(RemoteMount, Hdf5FilesMountLikeLocalOnes) {
  const std::string dir = kCorpus + "/bpcells/h5";
  std::string error;
  auto nginx = NginxServer::Start(dir, {}, &error);
  ASSERT_NE(nginx, nullptr) << error;
  int stores = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (!fs::is_directory(local_->path() + "/bpcells/h5/" + name)) continue;  // no BPCells groups
    const size_t log_before = nginx->AccessLog().size();
    auto m = MountedFs::Start(OMICSFS_BINARY, nginx->http_url() + "/" + name, {"-o", "rescan=0"});
    ASSERT_NE(m, nullptr) << name;
    const uint64_t opened = RemoteRequests(*m);
    ExpectSameTree(Local("/bpcells/h5/" + name), Snapshot(m->path()), "http " + name);
    const uint64_t read = RemoteRequests(*m);
    std::printf(
        "%-32s %8ju bytes: %ju requests to mount, %ju after reading every view; "
        "%zu by the daemon and the vetting helper together\n",
        name.c_str(), static_cast<uintmax_t>(fs::file_size(e.path())),
        static_cast<uintmax_t>(opened), static_cast<uintmax_t>(read),
        nginx->AccessLog().size() - log_before);
    EXPECT_GT(opened, 0u);
    // Why 8 + 1 per MiB: a HEAD, the blocks of a file below 1 MiB in one request, plus what the
    // read-ahead and the cache's eviction may add; ROS3 needs more than that for a 6.4 KB file.
    EXPECT_LE(read, 8 + fs::file_size(e.path()) / (1 << 20)) << name;
    ++stores;
  }
  EXPECT_GE(stores, 6);
  S3Server* s3 = S3ServerEnvironment::Get();
  ASSERT_NE(s3, nullptr);
  s3->CreateBucket("hdf5");
  s3->PutTree("hdf5", "h", dir);
  SetS3Env(*s3);
  auto bucket = MountedFs::Start(OMICSFS_BINARY, "s3://hdf5/h", S3Args(*s3));
  ASSERT_NE(bucket, nullptr);
  ExpectSameTree(Local("/bpcells/h5"), Snapshot(bucket->path()), "s3 h5");
  std::printf("s3://hdf5/h (%d files): %ju requests\n", stores,
              static_cast<uintmax_t>(RemoteRequests(*bucket)));
}

// AnnData (issue 37): an .h5ad by URL from nginx (read through the ByteSource driver, vetted by
// the helper over the same URL), and an .h5ad with the Zarr store in a bucket, show the same
// folders as locally, byte for byte.
TEST_F(RemoteMount, AnnDataFilesAndZarrStoresMountLikeLocalOnes) {
  const std::string dir = kCorpus + "/anndata";
  std::string error;
  auto nginx = NginxServer::Start(dir, {}, &error);
  ASSERT_NE(nginx, nullptr) << error;
  auto m =
      MountedFs::Start(OMICSFS_BINARY, nginx->http_url() + "/layers_raw.h5ad", {"-o", "rescan=0"});
  ASSERT_NE(m, nullptr);
  ExpectSameTree(Local("/anndata/layers_raw.h5ad"), Snapshot(m->path()), "http layers_raw.h5ad");
  m.reset();
  S3Server* s3 = S3ServerEnvironment::Get();
  ASSERT_NE(s3, nullptr);
  s3->CreateBucket("anndata");
  s3->PutFile("anndata", "a/pbmc_csr_f32.h5ad", dir + "/pbmc_csr_f32.h5ad");
  s3->PutTree("anndata", "a/pbmc_csr_f32.zarr", dir + "/pbmc_csr_f32.zarr");
  SetS3Env(*s3);
  auto bucket = MountedFs::Start(OMICSFS_BINARY, "s3://anndata/a", S3Args(*s3));
  ASSERT_NE(bucket, nullptr);
  for (const char* store : {"/pbmc_csr_f32.h5ad", "/pbmc_csr_f32.zarr"}) {
    ExpectSameTree(Local(std::string("/anndata") + store), Snapshot(bucket->path() + store),
                   std::string("s3 ") + store);
  }
}

// A damaged HDF5 file served remotely (truncated: the helper refuses it) is a folder with
// ERROR.txt, by URL and in a bucket, and the daemon lives on.
TEST_F(RemoteMount, ADamagedRemoteHdf5FileIsAnError) {
  const fs::path dir = fs::temp_directory_path() / fs::unique_path("omicsfs-h5-%%%%%%");
  fs::create_directories(dir);
  std::string bytes;
  ASSERT_TRUE(ReadWhole(kCorpus + "/bpcells/h5/stores_v2.h5", &bytes));
  std::ofstream(dir / "damaged.h5", std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  std::string error;
  auto nginx = NginxServer::Start(dir.string(), {}, &error);
  ASSERT_NE(nginx, nullptr) << error;
  auto http =
      MountedFs::Start(OMICSFS_BINARY, nginx->http_url() + "/damaged.h5", {"-o", "rescan=0"});
  ASSERT_NE(http, nullptr);
  std::string text;
  EXPECT_TRUE(ReadWhole(http->path() + "/ERROR.txt", &text)) << http->Log();
  EXPECT_NE(text.find("damaged.h5"), std::string::npos) << text;
  EXPECT_TRUE(http->alive());
  S3Server* s3 = S3ServerEnvironment::Get();
  ASSERT_NE(s3, nullptr);
  s3->CreateBucket("h5bad");
  s3->PutFile("h5bad", "d/damaged.h5", (dir / "damaged.h5").string());
  s3->PutFile("h5bad", "d/rna.h5", kCorpus + "/bpcells/h5/rna.h5");
  SetS3Env(*s3);
  auto bucket = MountedFs::Start(OMICSFS_BINARY, "s3://h5bad/d", S3Args(*s3));
  ASSERT_NE(bucket, nullptr);
  EXPECT_TRUE(ReadWhole(bucket->path() + "/damaged.h5/ERROR.txt", &text)) << bucket->Log();
  EXPECT_NE(text.find("damaged.h5"), std::string::npos) << text;
  ExpectSameTree(Local("/bpcells/h5/rna.h5"), Snapshot(bucket->path() + "/rna.h5"),
                 "s3 rna.h5 beside a damaged file");
  EXPECT_TRUE(bucket->alive());
  fs::remove_all(dir);
}

// The server goes away in the middle of a cat: the read fails with EIO within the timeout, the
// daemon stays up, and once the server is back, reads work again.
TEST_F(RemoteMount, AStoppedServerGivesEioThenRecovers) {
  S3Server* s3 = S3ServerEnvironment::Get();
  ASSERT_NE(s3, nullptr);
  s3->CreateBucket("faults");
  s3->PutTree("faults", "s/chr22.vcz", kCorpus + "/vcf-zarr/chr22_v9_s32/chr22_v9_s32.vcz");
  SetS3Env(*s3);
  std::vector<std::string> args = S3Args(*s3);
  args.back() += ",http_timeout=5,http_retries=1,cache_size=1M";  // nothing stays cached
  auto m = MountedFs::Start(OMICSFS_BINARY, "s3://faults/s", args);
  ASSERT_NE(m, nullptr);
  const std::string vcf = m->path() + "/chr22.vcz/chr22.vcf";
  std::string first;
  ASSERT_TRUE(ReadWhole(vcf, &first));
  ASSERT_GT(first.size(), 100000u);
  ASSERT_TRUE(s3->Pause());
  const auto t0 = std::chrono::steady_clock::now();
  // A fresh region of a file never read: sites.vcf is rendered from chunks not cached yet.
  std::string sites;
  int err = 0;
  const bool ok = ReadWhole(m->path() + "/chr22.vcz/sites.vcf", &sites, &err);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_FALSE(ok);
  EXPECT_EQ(err, EIO);
  EXPECT_LT(took, 90.0);  // two 5 s attempts per request, a few requests; a hang would be 900 s
  EXPECT_TRUE(m->alive());
  ASSERT_TRUE(s3->Resume());
  std::string again;
  EXPECT_TRUE(ReadWhole(m->path() + "/chr22.vcz/sites.vcf", &again, &err)) << err << m->Log();
  EXPECT_EQ(again, Local("/vcf-zarr/chr22_v9_s32/chr22_v9_s32.vcz").at("/sites.vcf"));
}

// An object rewritten after the mount: reads of the changed store give ESTALE or EIO, never a
// mix of old and new bytes.
TEST_F(RemoteMount, ARewrittenObjectIsNeverMixed) {
  S3Server* s3 = S3ServerEnvironment::Get();
  ASSERT_NE(s3, nullptr);
  s3->CreateBucket("rewrite");
  s3->PutTree("rewrite", "r/m.packed", kCorpus + "/bpcells/dir/v2/rna.packed");
  SetS3Env(*s3);
  std::vector<std::string> args = S3Args(*s3);
  args.back() += ",cache_size=1M";
  auto m = MountedFs::Start(OMICSFS_BINARY, "s3://rewrite/r", args);
  ASSERT_NE(m, nullptr);
  const std::string want = Local("/bpcells/dir/v2/rna.packed").at("/matrix.mtx");
  // Opened before the rewrite (folders are opened when first looked into).
  struct stat st;
  ASSERT_EQ(::stat((m->path() + "/m.packed/matrix.mtx").c_str(), &st), 0);
  // Another store's array under the same key: same name, other bytes.
  s3->PutFile("rewrite", "r/m.packed/val_data", kCorpus + "/bpcells/dir/v2/counts.packed/val_data");
  std::string got;
  int err = 0;
  if (ReadWhole(m->path() + "/m.packed/matrix.mtx", &got, &err)) {
    EXPECT_EQ(got, want) << "bytes of two versions";
  } else {
    EXPECT_TRUE(err == ESTALE || err == EIO) << err;
  }
}

// A store replaced in the bucket is served afresh after a rescan (its objects' ETags changed);
// an unchanged store is kept as it was.
TEST_F(RemoteMount, ARescanPicksUpAReplacedStore) {
  S3Server* s3 = S3ServerEnvironment::Get();
  ASSERT_NE(s3, nullptr);
  s3->CreateBucket("live");
  s3->PutTree("live", "l/a.packed", kCorpus + "/bpcells/dir/v2/rna.packed");
  s3->PutTree("live", "l/b.packed", kCorpus + "/bpcells/dir/v2/counts.packed");
  SetS3Env(*s3);
  std::vector<std::string> args = S3Args(*s3);
  args.back() = "s3_endpoint=" + s3->endpoint() + ",s3_region=" + s3->region() + ",rescan=1";
  auto m = MountedFs::Start(OMICSFS_BINARY, "s3://live/l", args);
  ASSERT_NE(m, nullptr);
  const std::string rna = Local("/bpcells/dir/v2/rna.packed").at("/matrix.mtx");
  const std::string counts = Local("/bpcells/dir/v2/counts.packed").at("/matrix.mtx");
  std::string got;
  ASSERT_TRUE(ReadWhole(m->path() + "/a.packed/matrix.mtx", &got));
  ASSERT_EQ(got, rna);
  s3->PutTree("live", "l/a.packed", kCorpus + "/bpcells/dir/v2/counts.packed");
  bool fresh = false;
  for (int i = 0; i < 300 && !fresh; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    fresh = ReadWhole(m->path() + "/a.packed/matrix.mtx", &got) && got == counts;
  }
  EXPECT_TRUE(fresh) << m->Log();
  EXPECT_NE(m->Log().find("changed: a.packed"), std::string::npos) << m->Log();
  EXPECT_EQ(m->Log().find("changed: b.packed"), std::string::npos) << m->Log();
}

}  // namespace
}  // namespace omicsfs
