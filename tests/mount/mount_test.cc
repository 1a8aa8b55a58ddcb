// End-to-end through a real mount: bundled examples, random reads, read-only, corrupt stores.
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "testutil/mount_fixture.h"
#include "testutil/store_writer.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::MountedFs;
using testutil::ReadWhole;

const std::string kData = OMICSFS_TEST_DATA;

using testutil::TempDir;

std::string Expected(const char* name) {
  std::string s;
  ReadWhole(kData + "/expected/" + name, &s);
  return s;
}

TEST(MountTest, BundledExamples) {
  auto m = MountedFs::Start(OMICSFS_BINARY, kData + "/examples");
  ASSERT_NE(m, nullptr);
  const std::string want = Expected("counts.col.mtx");
  for (const char* dir : {"counts.packed", "counts_gzip.h5/mat", "counts_gzip.h5/mat_packed"}) {
    std::string got;
    ASSERT_TRUE(ReadWhole(m->path() + "/" + dir + "/matrix.mtx", &got)) << dir;
    EXPECT_TRUE(got == want) << dir;
    ASSERT_TRUE(ReadWhole(m->path() + "/" + dir + "/rownames.txt", &got));
    EXPECT_EQ(got, Expected("counts.rownames.txt"));
    ASSERT_TRUE(ReadWhole(m->path() + "/" + dir + "/colnames.txt", &got));
    EXPECT_EQ(got, Expected("counts.colnames.txt"));
    std::string unzipped;
    ASSERT_EQ(
        testutil::RunCommand({"zcat", m->path() + "/" + dir + "/10x/matrix.mtx.gz"}, &unzipped), 0);
    EXPECT_TRUE(unzipped == want) << dir << "/10x/matrix.mtx.gz";
  }
  // One store of every other kind, copies of corpus stores: their views equal the corpus's
  // expected texts, and tabix answers region queries on the twins (what .ci/demo shows).
  std::vector<std::string> names;
  for (auto& e : fs::directory_iterator(m->path())) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"counts.packed", "counts_gzip.h5", "frags.packed",
                                             "sample.vcz", "tiny_3x4.datg"}));
  const std::string corpus = OMICSFS_CORPUS_DIR;
  const std::string vcf = testutil::ReadMaybeGz(corpus + "/vcf-zarr/sample/expected.vcf");
  const std::string bed = testutil::ReadMaybeGz(corpus + "/bpcells/expected/frags.bed.tsv");
  for (const auto& [view, text] :
       {std::pair<std::string, std::string>{"sample.vcz/sample.vcf", vcf},
        {"frags.packed/fragments.bed", bed},
        {"tiny_3x4.datg/matrix.tsv",
         testutil::ReadMaybeGz(corpus + "/datg/tiny_3x4.expected.tsv")}}) {
    std::string got;
    ASSERT_TRUE(ReadWhole(m->path() + "/" + view, &got)) << view;
    EXPECT_FALSE(text.empty()) << view;
    EXPECT_TRUE(got == text) << view;
  }
  // tabix REGION: the records of the expected text that overlap the region.
  auto overlapping = [](const std::string& text, const std::string& contig, int64_t lo, int64_t hi,
                        bool is_vcf) {
    std::string out;
    std::istringstream ss(text);
    for (std::string line; std::getline(ss, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream fields(line);
      std::string chrom;
      int64_t a = 0, b = 0;
      fields >> chrom >> a;
      if (!is_vcf) fields >> b;
      const bool hit = is_vcf ? a >= lo && a <= hi : a < hi && b >= lo;  // bed: 0-based half-open
      if (chrom == contig && hit) out += line + "\n";
    }
    return out;
  };
  std::string out;
  ASSERT_EQ(testutil::RunCommand(
                {"tabix", m->path() + "/sample.vcz/sample.vcf.gz", "20:1000000-1240000"}, &out),
            0);
  EXPECT_EQ(out, overlapping(vcf, "20", 1000000, 1240000, true));
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 4);
  ASSERT_EQ(testutil::RunCommand(
                {"tabix", m->path() + "/frags.packed/fragments.bed.gz", "chr2:1-100000"}, &out),
            0);
  EXPECT_EQ(out, overlapping(bed, "chr2", 1, 100000, false));
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 34);
}

class GeneratedMount : public ::testing::Test {
 protected:
  void SetUp() override {
    // ~120k entries: several chunks of matrix.mtx; a small cache forces eviction and re-rendering.
    auto spec =
        testutil::RandomMatrix(3000, 400, 0.1, testutil::ValueKind::kFloat32, false, true, 2, 77);
    ASSERT_TRUE(
        testutil::WriteDirStore(testutil::MakeMatrixStore(spec), src_.path() + "/big.packed").ok());
    auto spec2 =
        testutil::RandomMatrix(500, 700, 0.05, testutil::ValueKind::kUInt32, true, true, 1, 78);
    ASSERT_TRUE(testutil::WriteH5Store(testutil::MakeMatrixStore(spec2), src_.path() + "/more.h5",
                                       "/a/rowmajor")
                    .ok());
    m_ = MountedFs::Start(OMICSFS_BINARY, src_.path(), {"-o", "cache_size=1M"});
    ASSERT_NE(m_, nullptr);
  }
  TempDir src_;
  std::unique_ptr<MountedFs> m_;
};

TEST_F(GeneratedMount, RandomPreadsFromManyThreadsEqualSequentialBytes) {
  for (const char* f :
       {"big.packed/matrix.mtx", "more.h5/a/rowmajor/matrix.mtx", "big.packed/genes.tsv"}) {
    SCOPED_TRACE(f);
    const std::string path = m_->path() + "/" + f;
    std::string seq;
    ASSERT_TRUE(ReadWhole(path, &seq));
    std::string cat;
    ASSERT_EQ(testutil::RunCommand({OMICSFS_BINARY, "cat", src_.path(), f}, &cat), 0);
    EXPECT_TRUE(cat == seq) << "omicsfs cat differs from the mount";
    struct stat st;
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    ASSERT_EQ(static_cast<size_t>(st.st_size), seq.size());
    std::atomic<int> bad{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 6; ++t) {
      threads.emplace_back([&, t] {
        int fd = ::open(path.c_str(), O_RDONLY);
        if (fd < 0) {
          ++bad;
          return;
        }
        std::mt19937_64 rng(t * 1000 + 1);
        std::string buf;
        for (int r = 0; r < 300; ++r) {
          uint64_t off = rng() % (seq.size() + 10);
          size_t len = 1 + rng() % (r % 10 == 0 ? 1500000 : 70000);
          buf.resize(len);
          ssize_t n = ::pread(fd, buf.data(), len, static_cast<off_t>(off));
          size_t want = off >= seq.size() ? 0 : std::min<size_t>(len, seq.size() - off);
          if (n != static_cast<ssize_t>(want) || buf.compare(0, want, seq, off, want) != 0) ++bad;
        }
        ::close(fd);
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(bad.load(), 0);
  }
}

TEST_F(GeneratedMount, TailMmapAndSeek) {
  const std::string path = m_->path() + "/big.packed/matrix.mtx";
  std::string seq;
  ASSERT_TRUE(ReadWhole(path, &seq));
  std::string tail;
  ASSERT_EQ(testutil::RunCommand({"tail", "-c", "1000", path}, &tail), 0);
  EXPECT_EQ(tail, seq.substr(seq.size() - 1000));
  std::string dd;
  ASSERT_EQ(testutil::RunCommand(
                {"dd", "if=" + path, "bs=4096", "skip=100", "count=3", "status=none"}, &dd),
            0);
  EXPECT_EQ(dd, seq.substr(409600, 3 * 4096));
  int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* p = ::mmap(nullptr, seq.size(), PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(p, MAP_FAILED);
  EXPECT_EQ(std::memcmp(p, seq.data(), seq.size()), 0);
  ::munmap(p, seq.size());
  EXPECT_EQ(::lseek(fd, 0, SEEK_END), static_cast<off_t>(seq.size()));
  ::close(fd);
}

TEST_F(GeneratedMount, EverythingIsReadOnly) {
  const std::string file = m_->path() + "/big.packed/matrix.mtx";
  errno = 0;
  EXPECT_LT(::open(file.c_str(), O_WRONLY), 0);
  EXPECT_EQ(errno, EROFS);
  errno = 0;
  EXPECT_LT(::open(file.c_str(), O_RDWR), 0);
  EXPECT_EQ(errno, EROFS);
  errno = 0;
  EXPECT_LT(::open((m_->path() + "/new.txt").c_str(), O_CREAT | O_WRONLY, 0644), 0);
  EXPECT_EQ(errno, EROFS);
  errno = 0;
  EXPECT_NE(::rename(file.c_str(), (m_->path() + "/x").c_str()), 0);
  EXPECT_EQ(errno, EROFS);
  errno = 0;
  EXPECT_NE(::mkdir((m_->path() + "/d").c_str(), 0755), 0);
  EXPECT_EQ(errno, EROFS);
  errno = 0;
  EXPECT_NE(::unlink(file.c_str()), 0);
  EXPECT_EQ(errno, EROFS);
  errno = 0;
  EXPECT_NE(::truncate(file.c_str(), 0), 0);
  EXPECT_EQ(errno, EROFS);
  errno = 0;
  EXPECT_NE(::chmod(file.c_str(), 0777), 0);
  EXPECT_EQ(errno, EROFS);
}

// Copies the bundled counts.packed store and breaks it in several ways.
class CorruptMount : public ::testing::Test {
 protected:
  void Copy(const std::string& name) {
    fs::create_directories(fs::path(src_.path()) / name);
    for (auto& e : fs::directory_iterator(kData + "/examples/counts.packed")) {
      fs::copy_file(e.path(), fs::path(src_.path()) / name / e.path().filename());
      fs::permissions(fs::path(src_.path()) / name / e.path().filename(),
                      fs::owner_read | fs::owner_write | fs::others_read | fs::group_read);
    }
  }
  void Patch(const std::string& file, uint64_t offset, uint32_t value) {
    std::FILE* f = std::fopen(file.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    std::fseek(f, static_cast<long>(offset), SEEK_SET);
    std::fwrite(&value, 4, 1, f);
    std::fclose(f);
  }
  TempDir src_;
};

TEST_F(CorruptMount, CorruptChunkFailsWithEioAndOthersKeepWorking) {
  Copy("good");
  Copy("badwidth");
  Copy("truncated");
  Copy("badversion");
  // badwidth: index_idx entry 6 grows by 4 words per block afterwards → block 5 claims > 32 bits
  // would need a consistent end; instead shift one interior boundary so a block spans 132 words.
  {
    const std::string idx = src_.path() + "/badwidth/index_idx";
    std::string bytes;
    ASSERT_TRUE(ReadWhole(idx, &bytes));
    uint32_t v5, v6;
    std::memcpy(&v5, bytes.data() + 8 + 5 * 4, 4);
    std::memcpy(&v6, bytes.data() + 8 + 6 * 4, 4);
    Patch(idx, 8 + 6 * 4, v5 + 132);  // block 5: 33 bits; block 6 then runs backwards or short
  }
  fs::resize_file(fs::path(src_.path()) / "truncated" / "val_data",
                  fs::file_size(fs::path(src_.path()) / "truncated" / "val_data") - 4);
  { std::ofstream(src_.path() + "/badversion/version") << "packed-uint-matrix-v7\n"; }

  auto m = MountedFs::Start(OMICSFS_BINARY, src_.path());
  ASSERT_NE(m, nullptr);
  std::string got;
  int err = 0;
  EXPECT_FALSE(ReadWhole(m->path() + "/badwidth/matrix.mtx", &got, &err));
  EXPECT_EQ(err, EIO);
  std::string log = m->Log();
  EXPECT_NE(log.find(src_.path() + "/badwidth"), std::string::npos) << log;
  EXPECT_NE(log.find("index_idx"), std::string::npos) << log;
  EXPECT_NE(log.find("block 5"), std::string::npos) << log;
  // The names of the same store, and every other store, still work.
  ASSERT_TRUE(ReadWhole(m->path() + "/badwidth/rownames.txt", &got));
  EXPECT_EQ(got, Expected("counts.rownames.txt"));
  ASSERT_TRUE(ReadWhole(m->path() + "/good/matrix.mtx", &got));
  EXPECT_TRUE(got == Expected("counts.col.mtx"));
  // Stores that cannot be opened show only ERROR.txt, naming the cause.
  for (const char* s : {"truncated", "badversion"}) {
    std::vector<std::string> names;
    for (auto& e : fs::directory_iterator(m->path() + "/" + s))
      names.push_back(e.path().filename().string());
    EXPECT_EQ(names, std::vector<std::string>{"ERROR.txt"}) << s;
  }
  ASSERT_TRUE(ReadWhole(m->path() + "/truncated/ERROR.txt", &got));
  EXPECT_NE(got.find("val_data"), std::string::npos) << got;
  ASSERT_TRUE(ReadWhole(m->path() + "/badversion/ERROR.txt", &got));
  EXPECT_NE(got.find("packed-uint-matrix-v7"), std::string::npos) << got;
  EXPECT_TRUE(m->alive());
}

TEST_F(CorruptMount, RowIndexBeyondShapeIsEio) {
  // An unpacked store whose index points past nrow: a clean EIO, never bytes.
  auto spec = testutil::RandomMatrix(30, 10, 0.3, testutil::ValueKind::kUInt32, false, false, 2, 3);
  spec.inner[5] = 30;
  ASSERT_TRUE(testutil::WriteDirStore(testutil::MakeMatrixStore(spec), src_.path() + "/rows").ok());
  auto m = MountedFs::Start(OMICSFS_BINARY, src_.path());
  ASSERT_NE(m, nullptr);
  std::string got;
  int err = 0;
  EXPECT_FALSE(ReadWhole(m->path() + "/rows/matrix.mtx", &got, &err));
  EXPECT_EQ(err, EIO);
  EXPECT_NE(m->Log().find("entry 5"), std::string::npos) << m->Log();
  EXPECT_TRUE(m->alive());
}

}  // namespace
}  // namespace omicsfs

namespace omicsfs {
namespace {

TEST(MountLifecycle, SigtermAndSigintUnmountCleanly) {
  for (int sig : {SIGTERM, SIGINT}) {
    auto m = MountedFs::Start(OMICSFS_BINARY, kData + "/examples");
    ASSERT_NE(m, nullptr);
    std::string got;
    ASSERT_TRUE(ReadWhole(m->path() + "/counts.packed/colnames.txt", &got));
    EXPECT_EQ(m->SignalAndWait(sig), 0) << "signal " << sig;
    EXPECT_FALSE(testutil::IsMountPoint(m->path())) << "signal " << sig;
  }
}

TEST(MountLifecycle, SingleThreadedMode) {
  auto m = MountedFs::Start(OMICSFS_BINARY, kData + "/examples", {"-s", "-o", "threads=2"});
  ASSERT_NE(m, nullptr);
  std::string got;
  ASSERT_TRUE(ReadWhole(m->path() + "/counts_gzip.h5/mat_packed/matrix.mtx", &got));
  EXPECT_TRUE(got == Expected("counts.col.mtx"));
}

}  // namespace
}  // namespace omicsfs

namespace omicsfs {
namespace {

// A dense view far larger than memory: 20 000 × 200 000 col-major (~8 GB of text) mounts, sizes
// exactly from the stored entries, serves tail and random reads, with bounded memory.
TEST(DenseLargeMount, TwentyThousandByTwoHundredThousand) {
  const uint32_t kRows = 20000, kCols = 200000;
  auto spec = testutil::SparseColMajor(kRows, kCols, 0.0004, 11);
  TempDir src;
  ASSERT_TRUE(
      testutil::WriteDirStore(testutil::MakeMatrixStore(spec), src.path() + "/wide.packed").ok());
  // Reference: per-row entries (CSR) and row byte offsets.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> rows(kRows);
  for (uint32_t c = 0; c < kCols; ++c) {
    for (uint64_t i = spec.idxptr[c]; i < spec.idxptr[c + 1]; ++i)
      rows[spec.inner[i]].push_back({c, static_cast<uint32_t>(spec.values[i])});
  }
  std::string header;
  for (uint32_t c = 1; c <= kCols; ++c) header.append("\t").append(std::to_string(c));
  header += "\n";
  auto render = [&](uint32_t r) {
    std::string s = std::to_string(r + 1);
    size_t k = 0;
    for (uint32_t c = 0; c < kCols; ++c) {
      if (k < rows[r].size() && rows[r][k].first == c) {
        s.append("\t").append(std::to_string(rows[r][k++].second));
      } else {
        s += "\t0";
      }
    }
    return s + "\n";
  };
  std::vector<uint64_t> start(kRows + 1, header.size());
  for (uint32_t r = 0; r < kRows; ++r) {
    uint64_t len = std::to_string(r + 1).size() + 2 * uint64_t{kCols} + 1;
    for (const auto& e : rows[r]) len += std::to_string(e.second).size() - 1;
    start[r + 1] = start[r] + len;
  }
  auto expected_at = [&](uint64_t off, size_t len) {
    std::string out;
    while (len > 0 && off < start[kRows]) {
      if (off < header.size()) {
        size_t take = std::min<size_t>(len, header.size() - off);
        out += header.substr(off, take);
        off += take;
        len -= take;
        continue;
      }
      uint32_t r = static_cast<uint32_t>(std::upper_bound(start.begin(), start.end(), off) -
                                         start.begin() - 1);
      std::string row = render(r);
      size_t from = off - start[r], take = std::min<size_t>(len, row.size() - from);
      out += row.substr(from, take);
      off += take;
      len -= take;
    }
    return out;
  };

  auto m = MountedFs::Start(OMICSFS_BINARY, src.path(),
                            {"-o", "cache_size=32M,index_dir=" + src.path() + "/index"});
  ASSERT_NE(m, nullptr);
  const std::string path = m->path() + "/wide.packed/matrix.tsv";
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  ASSERT_EQ(static_cast<uint64_t>(st.st_size), start[kRows]);
  std::string tail;
  ASSERT_EQ(testutil::RunCommand({"tail", "-c", "5000", path}, &tail), 0);
  EXPECT_EQ(tail, expected_at(start[kRows] - 5000, 5000));
  int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 40; ++i) {
    uint64_t off = rng() % start[kRows];
    std::string buf(100000, '\0');
    ssize_t n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(off));
    ASSERT_GT(n, 0);
    buf.resize(static_cast<size_t>(n));
    ASSERT_EQ(buf, expected_at(off, buf.size())) << "offset " << off;
  }
  ::close(fd);
  // Memory: the cache budget plus a bounded working set (no whole-view materialisation).
  std::ifstream status("/proc/" + std::to_string(m->pid()) + "/status");
  std::string line;
  uint64_t rss_kb = 0;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) rss_kb = std::stoull(line.substr(6));
  }
  std::printf("daemon RSS %llu kB, view %llu bytes\n", static_cast<unsigned long long>(rss_kb),
              static_cast<unsigned long long>(start[kRows]));
  EXPECT_GT(rss_kb, 0u);
#if defined(__SANITIZE_ADDRESS__)
  constexpr uint64_t kSanitizerSlackKb =
      512 * 1024;  // ASan shadow memory and its 256 MB quarantine
#else
  constexpr uint64_t kSanitizerSlackKb = 0;
#endif
  EXPECT_LT(rss_kb, (32 + 200) * 1024u + kSanitizerSlackKb) << "daemon RSS " << rss_kb << " kB";
}

}  // namespace
}  // namespace omicsfs

namespace omicsfs {
namespace {

// Sizes persist in index_dir, keyed by the store's fingerprint: a later mount answers from the
// index; a damaged index file is ignored; a changed store gets a new index.
TEST(PersistedIndex, ReusedIgnoredWhenDamagedAndRekeyedOnChange) {
  TempDir src, idx;
  auto spec =
      testutil::RandomMatrix(400, 300, 0.2, testutil::ValueKind::kFloat64, false, true, 2, 5);
  ASSERT_TRUE(
      testutil::WriteDirStore(testutil::MakeMatrixStore(spec), src.path() + "/m.packed").ok());
  // The last two levels are created when missing (a fresh $HOME has no ~/.cache).
  fs::create_directories(fs::path(idx.path()) / "home");
  const std::string index_dir = idx.path() + "/home/.cache/omicsfs";
  const std::vector<std::string> opts = {"-o", "index_dir=" + index_dir};
  std::string first;
  {
    auto m = MountedFs::Start(OMICSFS_BINARY, src.path(), opts);
    ASSERT_NE(m, nullptr);
    ASSERT_TRUE(ReadWhole(m->path() + "/m.packed/matrix.mtx", &first));
  }
  std::vector<fs::path> files;
  for (auto& e : fs::directory_iterator(index_dir)) files.push_back(e.path());
  ASSERT_FALSE(files.empty());
  EXPECT_EQ(fs::status(index_dir).permissions(), fs::owner_all);
  {
    std::vector<std::string> dbg = {"-d", "-o", "index_dir=" + index_dir};
    auto m = MountedFs::Start(OMICSFS_BINARY, src.path(), dbg);
    ASSERT_NE(m, nullptr);
    std::string again;
    ASSERT_TRUE(ReadWhole(m->path() + "/m.packed/matrix.mtx", &again));
    EXPECT_TRUE(again == first);
    EXPECT_NE(
        m->Log().find("matrix.mtx of " + src.path() + "/m.packed: size from the persisted index"),
        std::string::npos);
  }
  for (const auto& f : files)
    std::ofstream(f.string(), std::ios::binary | std::ios::trunc) << "garbage";
  {
    auto m = MountedFs::Start(OMICSFS_BINARY, src.path(), opts);
    ASSERT_NE(m, nullptr);
    std::string again;
    ASSERT_TRUE(ReadWhole(m->path() + "/m.packed/matrix.mtx", &again));
    EXPECT_TRUE(again == first);
  }
  // Rewrite the store with other values: the fingerprint changes, so the old index is not used.
  auto spec2 =
      testutil::RandomMatrix(400, 300, 0.3, testutil::ValueKind::kFloat64, false, true, 2, 6);
  fs::remove_all(fs::path(src.path()) / "m.packed");
  ASSERT_TRUE(
      testutil::WriteDirStore(testutil::MakeMatrixStore(spec2), src.path() + "/m.packed").ok());
  std::string want2;
  ASSERT_EQ(testutil::RunCommand({OMICSFS_BINARY, "cat", "-o", "index_dir=" + index_dir, src.path(),
                                  "m.packed/matrix.mtx"},
                                 &want2),
            0);
  {
    auto m = MountedFs::Start(OMICSFS_BINARY, src.path(), opts);
    ASSERT_NE(m, nullptr);
    std::string got;
    ASSERT_TRUE(ReadWhole(m->path() + "/m.packed/matrix.mtx", &got));
    EXPECT_TRUE(got == want2);
    EXPECT_FALSE(got == first);
  }
}

// The transposed copy of a col-major store persists in index_dir: reused by the next mount, and
// a damaged copy fails reads with EIO (never other values) until rebuild_index makes it anew.
TEST(PersistedIndex, TransposedCopyReusedAndVerified) {
  TempDir src, idx;
  auto spec =
      testutil::RandomMatrix(3000, 400, 0.1, testutil::ValueKind::kUInt32, false, true, 2, 8);
  ASSERT_TRUE(
      testutil::WriteDirStore(testutil::MakeMatrixStore(spec), src.path() + "/m.packed").ok());
  std::string want;
  ASSERT_EQ(testutil::RunCommand({OMICSFS_BINARY, "cat", src.path(), "m.packed/matrix.tsv"}, &want),
            0);
  const std::vector<std::string> opts = {"-d", "-o", "index_dir=" + idx.path()};
  auto csr_files = [&] {
    std::vector<fs::path> out;
    for (auto& e : fs::directory_iterator(idx.path()))
      if (e.path().extension() == ".csr") out.push_back(e.path());
    return out;
  };
  {
    auto m = MountedFs::Start(OMICSFS_BINARY, src.path(), opts);
    ASSERT_NE(m, nullptr);
    std::string got;
    ASSERT_TRUE(ReadWhole(m->path() + "/m.packed/matrix.tsv", &got));
    EXPECT_TRUE(got == want);
    EXPECT_NE(m->Log().find("transposed copy persisted"), std::string::npos) << m->Log();
  }
  ASSERT_EQ(csr_files().size(), 1u);
  const fs::path csr = csr_files()[0];
  {
    auto m = MountedFs::Start(OMICSFS_BINARY, src.path(), opts);
    ASSERT_NE(m, nullptr);
    std::string got;
    ASSERT_TRUE(ReadWhole(m->path() + "/m.packed/matrix.tsv", &got));
    EXPECT_TRUE(got == want);
    EXPECT_NE(m->Log().find("transposed copy reused"), std::string::npos) << m->Log();
  }
  {  // flip one byte of the records (after the 4 KiB-aligned header)
    std::fstream f(csr.string(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-100, std::ios::end);
    char c;
    f.get(c);
    f.seekp(-100, std::ios::end);
    f.put(static_cast<char>(c ^ 0x5a));
  }
  {
    auto m = MountedFs::Start(OMICSFS_BINARY, src.path(), opts);
    ASSERT_NE(m, nullptr);
    std::string got;
    int err = 0;
    EXPECT_FALSE(ReadWhole(m->path() + "/m.packed/matrix.tsv", &got, &err));
    EXPECT_EQ(err, EIO);
    EXPECT_EQ(got, want.substr(0, got.size()));  // what came before the damaged block is right
    EXPECT_NE(m->Log().find("fails its checksum"), std::string::npos) << m->Log();
  }
  {
    auto m = MountedFs::Start(OMICSFS_BINARY, src.path(),
                              {"-o", "index_dir=" + idx.path() + ",rebuild_index"});
    ASSERT_NE(m, nullptr);
    std::string got;
    ASSERT_TRUE(ReadWhole(m->path() + "/m.packed/matrix.tsv", &got));
    EXPECT_TRUE(got == want);
  }
}

TEST(PersistedIndex, OldIndexFilesAreCollectedAtMount) {
  TempDir idx;
  const fs::path old_file = fs::path(idx.path()) / "0123456789abcdef.idx";
  for (const std::string age : {"0", "30"}) {
    std::ofstream(old_file.string()) << "stale";
    struct timespec t[2] = {{::time(nullptr) - 40 * 86400, 0}, {::time(nullptr) - 40 * 86400, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, old_file.c_str(), t, 0), 0);
    auto m = MountedFs::Start(OMICSFS_BINARY, kData + "/examples",
                              {"-o", "index_dir=" + idx.path() + ",index_max_age=" + age});
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(fs::exists(old_file), age == "0") << "index_max_age=" << age;
  }
}

TEST(PersistedIndex, UnwritableIndexDirFallsBackToMemory) {
  auto m = MountedFs::Start(OMICSFS_BINARY, kData + "/examples", {"-o", "index_dir=/proc"});
  ASSERT_NE(m, nullptr);
  std::string got;
  ASSERT_TRUE(ReadWhole(m->path() + "/counts.packed/matrix.mtx", &got));
  EXPECT_TRUE(got == Expected("counts.col.mtx"));
  EXPECT_NE(m->Log().find("not writable"), std::string::npos) << m->Log();
}

// index_dir inside SOURCE holds omicsfs's own files: it is not mirrored (another directory of
// the same name is), and inside a store given as SOURCE it is not part of the store's
// fingerprint, so writing an index does not make the next mount see a changed store.
TEST(PersistedIndex, IndexDirInsideSourceIsNotMirrored) {
  TempDir src;
  auto spec =
      testutil::RandomMatrix(200, 100, 0.2, testutil::ValueKind::kFloat64, false, true, 2, 7);
  ASSERT_TRUE(
      testutil::WriteDirStore(testutil::MakeMatrixStore(spec), src.path() + "/m.packed").ok());
  fs::create_directories(fs::path(src.path()) / "sub" / ".idx");
  std::ofstream(src.path() + "/sub/.idx/mine.txt") << "a user's file\n";
  {
    auto m =
        MountedFs::Start(OMICSFS_BINARY, src.path(), {"-o", "index_dir=" + src.path() + "/.idx"});
    ASSERT_NE(m, nullptr);
    std::string mtx;
    ASSERT_TRUE(ReadWhole(m->path() + "/m.packed/matrix.mtx", &mtx));  // writes an index
    ASSERT_FALSE(fs::is_empty(fs::path(src.path()) / ".idx"));
    std::vector<std::string> names;
    for (auto& e : fs::directory_iterator(m->path())) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"m.packed", "sub"}));
    std::string mine;
    ASSERT_TRUE(ReadWhole(m->path() + "/sub/.idx/mine.txt", &mine));
    EXPECT_EQ(mine, "a user's file\n");
  }
  // A store as SOURCE, its index directory inside it (spelled differently on the second mount).
  const std::string store = src.path() + "/m.packed";
  const std::vector<std::string> opts = {"-d", "-o", "index_dir=" + store + "/idx"};
  std::string first;
  {
    auto m = MountedFs::Start(OMICSFS_BINARY, store, opts);
    ASSERT_NE(m, nullptr);
    ASSERT_TRUE(ReadWhole(m->path() + "/matrix.mtx", &first));
    for (auto& e : fs::directory_iterator(m->path()))
      EXPECT_NE(e.path().filename().string(), "idx");
  }
  {
    auto m =
        MountedFs::Start(OMICSFS_BINARY, store, {"-d", "-o", "index_dir=" + store + "/./idx/"});
    ASSERT_NE(m, nullptr);
    std::string again;
    ASSERT_TRUE(ReadWhole(m->path() + "/matrix.mtx", &again));
    EXPECT_TRUE(again == first);
    EXPECT_NE(m->Log().find("size from the persisted index"), std::string::npos) << m->Log();
  }
}

}  // namespace
}  // namespace omicsfs
