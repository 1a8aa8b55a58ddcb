// Robustness through a real mount: many readers on many views at once, permissions carried from
// the source, odd names, and a source that is never written.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "testutil/mount_fixture.h"
#include "testutil/store_writer.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::MountedFs;
using testutil::ReadWhole;

const std::string kShared = OMICSFS_CORPUS_DIR;

// Content hash of every file below `dir` (path, size, mtime, bytes).
uint64_t TreeHash(const std::string& dir) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  };
  std::vector<std::string> files;
  for (fs::recursive_directory_iterator it(dir), end; it != end; ++it) {
    if (fs::is_regular_file(it->symlink_status())) files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    struct stat st;
    ::stat(f.c_str(), &st);
    mix(f + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
        std::to_string(st.st_mtim.tv_nsec));
    std::string bytes;
    ReadWhole(f, &bytes);
    mix(bytes);
  }
  return h;
}

TEST(Robust, ManyReadersOnManyViewsAgreeAndTheSourceIsNeverWritten) {
  const uint64_t before = TreeHash(kShared);
  auto m = MountedFs::Start(OMICSFS_BINARY, kShared, {"-o", "cache_size=8M"});
  ASSERT_NE(m, nullptr);
  const std::vector<std::string> views = {
      "bpcells/dir/v2/rna.packed/matrix.mtx",
      "bpcells/dir/v2/rnalog64.packed/matrix.mtx",
      "bpcells/h5/rna.h5/rna_packed/matrix.tsv",
      "bpcells/dir/v2/atac.packed/fragments.tsv",
      "bpcells/h5/stores_v2.h5/frags_packed/fragments.bed",
      "bpcells/dir/v1/counts.rowmajor.packed/matrix.tsv",
      "vcf-zarr/chr22/chr22.vcz/chr22.vcf",
      "vcf-zarr/chr22_v9_s32/chr22_v9_s32.vcz/sites.vcf",
      "vcf-zarr/multi_contig_v500/multi_contig_v500.vcz/multi_contig_v500.vcf",
      "vcf-zarr/upstream_sample_v3/upstream_sample_v3.vcz/upstream_sample_v3.vcf",
      "datg/zscores_1000x50.datg/matrix.tsv",
      "datg/wide_5x200000.datg/matrix.tsv",
      "datg/legacy_lz4block_300x7.datg/matrix.tsv",
      "bpcells/h5/filtered_feature_bc_matrix.h5"};
  std::map<std::string, std::string> want;
  for (const auto& v : views) {
    ASSERT_EQ(testutil::RunCommand({OMICSFS_BINARY, "cat", kShared, v}, &want[v]), 0) << v;
    ASSERT_FALSE(want[v].empty()) << v;
  }
  std::atomic<int> bad{0}, reads{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(100 + t);
      for (int i = 0; i < 150; ++i) {
        const std::string& v = views[rng() % views.size()];
        const std::string& w = want[v];
        if (i % 10 == 0) {  // listing and stat while others read
          DIR* d = ::opendir((m->path() + "/" + v.substr(0, v.rfind('/'))).c_str());
          if (d == nullptr) {
            ++bad;
            continue;
          }
          while (::readdir(d) != nullptr) {
          }
          ::closedir(d);
        }
        int fd = ::open((m->path() + "/" + v).c_str(), O_RDONLY);
        if (fd < 0) {
          ++bad;
          continue;
        }
        uint64_t off = rng() % w.size();
        size_t len = 1 + rng() % 200000;
        std::string buf(len, '\0');
        ssize_t n = ::pread(fd, buf.data(), len, static_cast<off_t>(off));
        size_t expect = std::min<size_t>(len, w.size() - off);
        if (n != static_cast<ssize_t>(expect) || buf.compare(0, expect, w, off, expect) != 0) ++bad;
        ++reads;
        ::close(fd);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(reads.load(), 8 * 150);
  EXPECT_TRUE(m->alive());
  m.reset();
  EXPECT_EQ(TreeHash(kShared), before) << "the source changed";
}

TEST(Robust, PermissionsOddNamesAndSymlinks) {
  fs::path src = fs::temp_directory_path() / fs::unique_path("omicsfs-perm-%%%%%%");
  fs::create_directories(src);
  auto spec = testutil::RandomMatrix(20, 10, 0.3, testutil::ValueKind::kUInt32, false, true, 2, 1);
  const std::string odd = "odd name ü\nline.packed";
  ASSERT_TRUE(testutil::WriteDirStore(testutil::MakeMatrixStore(spec), (src / odd).string()).ok());
  ASSERT_TRUE(
      testutil::WriteDirStore(testutil::MakeMatrixStore(spec), (src / "private.packed").string())
          .ok());
  ::chmod((src / "private.packed").c_str(), 0700);
  std::ofstream((src / "secret.txt").string()) << "s";
  ::chmod((src / "secret.txt").c_str(), 0600);
  fs::create_symlink("/etc", src / "outside");
  auto m = MountedFs::Start(OMICSFS_BINARY, src.string());
  ASSERT_NE(m, nullptr);
  struct stat st;
  ASSERT_EQ(::stat((m->path() + "/private.packed").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0500u);
  ASSERT_EQ(::stat((m->path() + "/private.packed/matrix.mtx").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0400u);  // views carry the store's read permissions
  ASSERT_EQ(::stat((m->path() + "/secret.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0400u);
  ASSERT_EQ(::lstat((m->path() + "/outside").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));  // shown as a symlink, not followed during discovery
  char target[64] = {};
  EXPECT_EQ(::readlink((m->path() + "/outside").c_str(), target, sizeof(target) - 1), 4);
  EXPECT_STREQ(target, "/etc");
  std::string a, b;
  ASSERT_TRUE(ReadWhole(m->path() + "/" + odd + "/matrix.mtx", &a));
  ASSERT_TRUE(ReadWhole(m->path() + "/private.packed/matrix.mtx", &b));
  EXPECT_TRUE(a == b);
  m.reset();
  fs::remove_all(src);
}

// libhdf5 1.10.8 copies a global-heap object of the size the file states: a damaged size crashes
// it. Such a file must never be parsed by the daemon: its vetting helper crashes instead, the
// file is shown as a folder whose ERROR.txt says why (so does the log), and the other stores
// keep working.
TEST(Robust, HdfFileThatCrashesLibhdf5IsVettedOut) {
  fs::path src = fs::temp_directory_path() / fs::unique_path("omicsfs-h5vet-%%%%%%");
  fs::create_directories(src);
  std::string bytes;
  ASSERT_TRUE(ReadWhole(kShared + "/bpcells/h5/counts_root_group.h5", &bytes));
  const size_t gcol = bytes.find("GCOL");
  ASSERT_NE(gcol, std::string::npos);
  const uint64_t huge =
      0x7fffff00;  // the first heap object's size (after a 16-byte collection header)
  std::memcpy(&bytes[gcol + 16 + 8], &huge, 8);
  std::ofstream((src / "damaged.h5").string(), std::ios::binary) << bytes;
  fs::copy_file(kShared + "/bpcells/h5/counts_root_group.h5", src / "intact.h5");
  auto m = MountedFs::Start(OMICSFS_BINARY, src.string());
  ASSERT_NE(m, nullptr);
  struct stat st;
  ASSERT_EQ(::stat((m->path() + "/damaged.h5").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  std::string shown;
  ASSERT_TRUE(ReadWhole(m->path() + "/damaged.h5/ERROR.txt", &shown));
  EXPECT_NE(shown.find("damaged.h5: not opened: libhdf5"), std::string::npos) << shown;
  std::string mtx, want;
  ASSERT_TRUE(ReadWhole(m->path() + "/intact.h5/matrix.mtx", &mtx));
  ASSERT_TRUE(ReadWhole(kShared + "/bpcells/expected/counts.col.mtx", &want));
  EXPECT_TRUE(mtx == want);
  EXPECT_TRUE(m->alive());
  const std::string log = m->Log();
  // A crash of the helper, or (TSan's allocator) its memory limit: refused either way.
  EXPECT_NE(log.find("damaged.h5: not opened: libhdf5"), std::string::npos) << log;
  EXPECT_EQ(log.find("intact.h5: not opened"), std::string::npos) << log;
  m.reset();
  // The helper is what keeps the daemon alive: unvetted (h5vet=0), libhdf5 parses the file in
  // the process itself and `omicsfs ls` dies of it; vetted, the listing succeeds.
  std::string out;
  EXPECT_NE(testutil::RunCommand({OMICSFS_BINARY, "ls", "-o", "h5vet=0", src.string()}, &out), 0);
  EXPECT_EQ(testutil::RunCommand({OMICSFS_BINARY, "ls", src.string()}, &out), 0);
  EXPECT_NE(out.find("damaged.h5/\n"), std::string::npos) << out;
  EXPECT_NE(out.find("intact.h5/\n"), std::string::npos) << out;
  fs::remove_all(src);
}

// A helper that dies after its probe (a script running the real helper, then SIGSEGV): a file
// the probe shows as BPCells or AnnData is refused with ERROR.txt by its kind, as one the helper
// dies on before its probe is; an HDF5 file no kind claims on its probe (Cell Ranger's) stays a
// plain file, byte for byte.
TEST(Robust, HdfFileVettedOutAfterItsProbeIsRefusedOnlyByItsKind) {
  fs::path src = fs::temp_directory_path() / fs::unique_path("omicsfs-h5vet-%%%%%%");
  fs::create_directories(src);
  const std::string helper = (fs::path(OMICSFS_BINARY).parent_path() / "omicsfs-h5vet").string();
  const std::string script = (src.parent_path() / (src.filename().string() + "-dies.sh")).string();
  std::ofstream(script) << "#!/bin/sh\n\"" << helper << "\" \"$@\"\nkill -SEGV $$\n";
  ::chmod(script.c_str(), 0755);
  fs::copy_file(kShared + "/bpcells/h5/counts_root_group.h5", src / "bpcells.h5");
  fs::copy_file(kShared + "/anndata/dense_f32.h5ad", src / "dense_f32.h5ad");
  fs::copy_file(kShared + "/bpcells/h5/filtered_feature_bc_matrix.h5", src / "tenx.h5");
  auto m = MountedFs::Start(OMICSFS_BINARY, src.string(), {"-o", "h5vet_helper=" + script});
  ASSERT_NE(m, nullptr);
  struct stat st;
  for (const char* refused : {"bpcells.h5", "dense_f32.h5ad"}) {
    ASSERT_EQ(::stat((m->path() + "/" + refused).c_str(), &st), 0) << refused;
    EXPECT_TRUE(S_ISDIR(st.st_mode)) << refused;
    std::string shown;
    ASSERT_TRUE(ReadWhole(m->path() + "/" + refused + "/ERROR.txt", &shown)) << refused;
    EXPECT_NE(shown.find(std::string(refused) + ": not opened: libhdf5 did not survive"),
              std::string::npos)
        << shown;
  }
  ASSERT_EQ(::stat((m->path() + "/tenx.h5").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  std::string got, want;
  ASSERT_TRUE(ReadWhole(m->path() + "/tenx.h5", &got));
  ASSERT_TRUE(ReadWhole(kShared + "/bpcells/h5/filtered_feature_bc_matrix.h5", &want));
  EXPECT_TRUE(got == want);
  EXPECT_TRUE(m->alive());
  m.reset();
  fs::remove_all(src);
  fs::remove(script);
}

TEST(Robust, MissingHdfVettingHelperIsAClearStartupError) {
  std::string out;
  const int rc =
      testutil::RunCommand({OMICSFS_BINARY, "ls", "-o", "h5vet_helper=/nonexistent/omicsfs-h5vet",
                            kShared + "/bpcells/h5/counts_root_group.h5"},
                           &out);
  EXPECT_EQ(rc, 2);
  std::string plain;
  EXPECT_EQ(testutil::RunCommand(
                {OMICSFS_BINARY, "ls", "-o", "h5vet=0,h5vet_helper=/nonexistent/omicsfs-h5vet",
                 kShared + "/bpcells/h5/counts_root_group.h5"},
                &plain),
            0);
  EXPECT_NE(plain.find("matrix.mtx"), std::string::npos) << plain;
}

}  // namespace
}  // namespace omicsfs
