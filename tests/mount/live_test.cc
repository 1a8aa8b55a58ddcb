// Live changes through a real mount: stores rewritten, replaced, added and removed while mounted
// are noticed by the rescan and served afresh; an open file never returns a mix of old and new
// bytes (it reads its old bytes, or fails with ESTALE).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <functional>
#include <thread>

#include "testutil/mount_fixture.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::MountedFs;
using testutil::ReadMaybeGz;
using testutil::ReadWhole;

const std::string kCorpus = OMICSFS_CORPUS_DIR;

class LiveMount : public ::testing::Test {
 protected:
  void SetUp() override {
    src_ = fs::temp_directory_path() / fs::unique_path("omicsfs-live-%%%%%%");
    fs::create_directories(src_);
    Copy(kCorpus + "/bpcells/dir/v2/rna.packed", src_ / "a.packed");
    Copy(kCorpus + "/vcf-zarr/sample/sample.vcz", src_ / "sample.vcz");
    for (const char* ext : {".datg", ".rows.txt.gz", ".cols.txt.gz"}) {
      fs::copy_file(kCorpus + "/datg/edge_1x1" + ext, src_ / (std::string("m") + ext));
    }
    std::ofstream(src_ / "notes.txt") << "first\n";
    rna_ = ReadMaybeGz(kCorpus + "/bpcells/expected/rna.col.mtx");
    counts_ = ReadMaybeGz(kCorpus + "/bpcells/expected/counts.col.mtx");
    m_ = MountedFs::Start(OMICSFS_BINARY, src_.string(), {"-o", "rescan=0.1,cache_size=1M"});
    ASSERT_NE(m_, nullptr);
    // Times on disk tick coarsely: changes made by the test must land in a later tick.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  void TearDown() override {
    m_.reset();
    fs::remove_all(src_);
  }
  static void Copy(const fs::path& from, const fs::path& to) {
    fs::create_directories(to);
    for (fs::recursive_directory_iterator it(from), end; it != end; ++it) {
      const fs::path dst = to / fs::relative(it->path(), from);
      if (fs::is_directory(it->status())) {
        fs::create_directories(dst);
      } else {
        fs::copy_file(it->path(), dst);
        fs::permissions(dst, fs::owner_read | fs::owner_write | fs::group_read | fs::others_read);
      }
    }
  }
  std::string At(const std::string& vpath) const { return m_->path() + "/" + vpath; }
  // Polls (≤ 15 s) until `ok` holds: the rescan runs every 0.1 s.
  static bool Eventually(const std::function<bool()>& ok) {
    for (int i = 0; i < 300; ++i) {
      if (ok()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return ok();
  }
  bool Reads(const std::string& vpath, const std::string& want) const {
    std::string got;
    return ReadWhole(At(vpath), &got) && got == want;
  }

  fs::path src_;
  std::unique_ptr<MountedFs> m_;
  std::string rna_, counts_;
};

TEST_F(LiveMount, ReplacedStoreIsServedAfresh) {
  ASSERT_TRUE(Reads("a.packed/matrix.mtx", rna_));
  // Swapped by renames, so that no rescan sees a half-copied store (a busy machine once showed
  // one: its views were logged as removed).
  const fs::path staged = fs::path(src_.string() + "-staged"),
                 old = fs::path(src_.string() + "-old");
  Copy(kCorpus + "/bpcells/dir/v2/counts.packed", staged);
  fs::rename(src_ / "a.packed", old);
  fs::rename(staged, src_ / "a.packed");
  fs::remove_all(old);
  EXPECT_TRUE(Eventually([&] { return Reads("a.packed/matrix.mtx", counts_); })) << m_->Log();
  struct stat st;
  ASSERT_EQ(::stat(At("a.packed/matrix.mtx").c_str(), &st), 0);
  EXPECT_EQ(static_cast<size_t>(st.st_size), counts_.size());
  // One line for the store, none for its views.
  EXPECT_NE(m_->Log().find("rescan: changed: a.packed\n"), std::string::npos) << m_->Log();
  EXPECT_EQ(m_->Log().find("matrix.mtx\n"), std::string::npos) << m_->Log();
}

TEST_F(LiveMount, RewrittenPlainFileAndDatgAreServedAfresh) {
  ASSERT_TRUE(Reads("notes.txt", "first\n"));
  std::ofstream(src_ / "notes.txt") << "second, longer\n";  // in place: same inode
  EXPECT_TRUE(Eventually([&] { return Reads("notes.txt", "second, longer\n"); })) << m_->Log();
  ASSERT_TRUE(Reads("m.datg/matrix.tsv", ReadMaybeGz(kCorpus + "/datg/edge_1x1.expected.tsv")));
  for (const char* ext : {".datg", ".rows.txt.gz", ".cols.txt.gz"}) {
    fs::remove(src_ / (std::string("m") + ext));
    fs::copy_file(kCorpus + "/datg/edge_0x3" + ext, src_ / (std::string("m") + ext));
  }
  const std::string want = ReadMaybeGz(kCorpus + "/datg/edge_0x3.expected.tsv");
  EXPECT_TRUE(Eventually([&] { return Reads("m.datg/matrix.tsv", want); })) << m_->Log();
}

TEST_F(LiveMount, OpenFileNeverMixesOldAndNewBytes) {
  const int fd = ::open(At("a.packed/matrix.mtx").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::string got(4096, '\0');
  ASSERT_EQ(::pread(fd, got.data(), got.size(), 0), 4096);
  ASSERT_EQ(got, rna_.substr(0, 4096));
  // Replace the store (same size class, different bytes) and wait until new opens see it.
  fs::remove_all(src_ / "a.packed");
  Copy(kCorpus + "/bpcells/dir/v2/counts.packed", src_ / "a.packed");
  ASSERT_TRUE(Eventually([&] { return Reads("a.packed/matrix.mtx", counts_); })) << m_->Log();
  // The old descriptor: every byte it still returns is the old file's; then ESTALE (or EIO).
  uint64_t off = 4096;
  int err = 0;
  for (;;) {
    char buf[65536];
    const ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(off));
    if (n < 0) {
      err = errno;
      break;
    }
    if (n == 0) break;
    ASSERT_EQ(std::string(buf, static_cast<size_t>(n)), rna_.substr(off, static_cast<size_t>(n)))
        << "at " << off;
    off += static_cast<uint64_t>(n);
  }
  if (err != 0) {
    EXPECT_TRUE(err == ESTALE || err == EIO) << "errno " << err;
  } else {
    EXPECT_EQ(off, rna_.size());
  }
  struct stat st;  // fstat of the old descriptor still works (the old inode)
  EXPECT_EQ(::fstat(fd, &st), 0);
  ::close(fd);
  EXPECT_TRUE(m_->alive());
}

TEST_F(LiveMount, RemovedAndAddedStores) {
  struct stat st;
  ASSERT_EQ(::stat(At("sample.vcz/sample.vcf").c_str(), &st), 0);
  const int fd = ::open(At("sample.vcz/sample.vcf").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  fs::remove_all(src_ / "sample.vcz");
  Copy(kCorpus + "/bpcells/dir/v2/counts.packed", src_ / "new.packed");
  EXPECT_TRUE(Eventually([&] {
    return ::stat(At("sample.vcz").c_str(), &st) != 0 && errno == ENOENT;
  })) << m_->Log();
  EXPECT_TRUE(Eventually([&] { return Reads("new.packed/matrix.mtx", counts_); })) << m_->Log();
  std::string listing;
  ASSERT_EQ(testutil::RunCommand({"ls", m_->path()}, &listing), 0);
  EXPECT_EQ(listing, "a.packed\nm.datg\nnew.packed\nnotes.txt\n");
  // The descriptor opened before the removal: old bytes or an error, never fill values.
  const std::string want = ReadMaybeGz(kCorpus + "/vcf-zarr/sample/expected.vcf");
  std::string got;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  if (n < 0) {
    EXPECT_TRUE(errno == ESTALE || errno == EIO) << "errno " << errno;
    EXPECT_EQ(got, want.substr(0, got.size()));
  } else {
    EXPECT_EQ(got, want);
  }
  ::close(fd);
  EXPECT_TRUE(Reads("a.packed/matrix.mtx", rna_));  // untouched neighbours keep working
  EXPECT_TRUE(m_->alive());
}

}  // namespace
}  // namespace omicsfs
