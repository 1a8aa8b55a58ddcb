// Every datg file of the shared corpus through a real mount; pandas reads the mounted TSV;
// truncated and bit-flipped files give ERROR.txt or EIO with a log line, never a crash.
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <random>
#include <thread>

#include "testutil/mount_fixture.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::MountedFs;
using testutil::ReadMaybeGz;
using testutil::ReadWhole;

const std::string kCorpus = OMICSFS_CORPUS_DIR "/datg";

std::vector<std::string> Names() {
  std::vector<std::string> out;
  for (auto& e : fs::directory_iterator(kCorpus)) {
    if (e.path().extension() == ".datg") out.push_back(e.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Expected(const std::string& name) {
  const std::string plain = kCorpus + "/" + name + ".expected.tsv";
  return fs::exists(plain) ? ReadMaybeGz(plain) : ReadMaybeGz(plain + ".gz");
}

class DatgMount : public testutil::SharedMountTest<DatgMount> {
 public:
  static std::string Source() { return kCorpus; }
};

TEST_F(DatgMount, EveryFileIsByteIdentical) {
  ASSERT_NE(mount_, nullptr);
  auto names = Names();
  EXPECT_EQ(names.size(), 11u);
  for (const auto& n : names) {
    SCOPED_TRACE(n);
    const std::string dir = mount_->path() + "/" + n + ".datg";
    std::string got;
    int err = 0;
    ASSERT_TRUE(ReadWhole(dir + "/matrix.tsv", &got, &err)) << "errno " << err;
    const std::string want = Expected(n);
    EXPECT_TRUE(got == want) << "matrix.tsv differs (" << got.size() << " vs " << want.size()
                             << " bytes)";
    ASSERT_TRUE(ReadWhole(dir + "/rownames.txt", &got));
    EXPECT_EQ(got, ReadMaybeGz(kCorpus + "/" + n + ".rows.txt.gz"));
    ASSERT_TRUE(ReadWhole(dir + "/colnames.txt", &got));
    EXPECT_EQ(got, ReadMaybeGz(kCorpus + "/" + n + ".cols.txt.gz"));
  }
  // Companions are consumed; unrelated files pass through.
  struct stat st;
  EXPECT_NE(::stat((mount_->path() + "/tiny_3x4.rows.txt.gz").c_str(), &st), 0);
  EXPECT_NE(::stat((mount_->path() + "/tiny_3x4.sha256").c_str(), &st), 0);
  EXPECT_NE(::stat((mount_->path() + "/legacy_lz4block_300x7.md5").c_str(), &st), 0);
  EXPECT_EQ(::stat((mount_->path() + "/manifest.tsv").c_str(), &st), 0);
}

TEST_F(DatgMount, RandomReadsEqualSequential) {
  ASSERT_NE(mount_, nullptr);
  const std::string path = mount_->path() + "/multiblock_rpb1100_2300x500.datg/matrix.tsv";
  std::string seq;
  ASSERT_TRUE(ReadWhole(path, &seq));
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      int fd = ::open(path.c_str(), O_RDONLY);
      std::mt19937_64 rng(t + 9);
      std::string buf;
      for (int r = 0; r < 200 && fd >= 0; ++r) {
        uint64_t off = rng() % seq.size();
        size_t len = 1 + rng() % 300000;
        buf.resize(len);
        ssize_t n = ::pread(fd, buf.data(), len, static_cast<off_t>(off));
        size_t want = std::min<size_t>(len, seq.size() - off);
        if (n != static_cast<ssize_t>(want) || buf.compare(0, want, seq, off, want) != 0) ++bad;
      }
      if (fd >= 0) ::close(fd);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST_F(DatgMount, PandasReadsTheMountedTsv) {
  ASSERT_NE(mount_, nullptr);
  for (const char* n : {"zscores_1000x50", "narrow_19999x2", "tiny_3x4"}) {
    const std::string path = mount_->path() + "/" + n + ".datg/matrix.tsv";
    std::string out;
    int rc = testutil::RunCommand(
        {"/usr/bin/python3", "-c",
         "import sys, pandas as pd; df = pd.read_csv(sys.argv[1], sep='\\t', index_col=0, "
         "keep_default_na=False, na_values=['NaN']); print(df.shape[0], df.shape[1])",
         path},
        &out);
    ASSERT_EQ(rc, 0) << n;
    std::string dims = std::string(n).substr(std::string(n).rfind('_') + 1);
    EXPECT_EQ(out, dims.replace(dims.find('x'), 1, " ") + "\n") << n;
  }
}

TEST(DatgCorruption, TruncatedAndFlippedFilesFailCleanly) {
  fs::path src = fs::temp_directory_path() / fs::unique_path("omicsfs-datg-%%%%%%");
  fs::create_directories(src);
  auto copy = [&](const std::string& from, const std::string& to) {
    for (const char* ext : {".datg", ".rows.txt.gz", ".cols.txt.gz"}) {
      fs::copy_file(kCorpus + "/" + from + ext, src / (to + ext));
      fs::permissions(src / (to + ext), fs::owner_read | fs::owner_write);
    }
  };
  copy("zscores_1000x50", "good");
  copy("zscores_1000x50", "truncated");
  copy("zscores_1000x50", "flipped");
  copy("zscores_1000x50", "names");
  copy("legacy_lz4block_300x7", "legacyflip");
  fs::resize_file(src / "truncated.datg", fs::file_size(src / "truncated.datg") - 10);
  auto flip = [&](const fs::path& p, uint64_t at) {
    std::string b;
    ASSERT_TRUE(ReadWhole(p.string(), &b));
    b[at] = static_cast<char>(b[at] ^ 0x10);
    std::ofstream(p.string(), std::ios::binary | std::ios::trunc) << b;
  };
  flip(src / "flipped.datg", 200000);   // inside a data block (content checksum)
  flip(src / "legacyflip.datg", 5000);  // inside a legacy chunk (XXH32 check)
  fs::copy_file(kCorpus + "/tiny_3x4.rows.txt.gz", src / "names.rows.txt.gz",
                fs::copy_option::overwrite_if_exists);

  auto m = MountedFs::Start(OMICSFS_BINARY, src.string());
  ASSERT_NE(m, nullptr);
  std::string got;
  for (const char* n : {"truncated", "names"}) {
    std::vector<std::string> entries;
    for (auto& e : fs::directory_iterator(m->path() + "/" + n + ".datg"))
      entries.push_back(e.path().filename().string());
    EXPECT_EQ(entries, std::vector<std::string>{"ERROR.txt"}) << n;
  }
  ASSERT_TRUE(ReadWhole(m->path() + "/names.datg/ERROR.txt", &got));
  EXPECT_NE(got.find("names.rows.txt.gz"), std::string::npos) << got;
  for (const char* n : {"flipped", "legacyflip"}) {
    int err = 0;
    EXPECT_FALSE(ReadWhole(m->path() + "/" + n + ".datg/matrix.tsv", &got, &err)) << n;
    EXPECT_EQ(err, EIO) << n;
  }
  const std::string log = m->Log();
  EXPECT_NE(log.find("flipped.datg: row block"), std::string::npos) << log;
  EXPECT_NE(log.find("legacyflip.datg: row block"), std::string::npos) << log;
  ASSERT_TRUE(ReadWhole(m->path() + "/good.datg/matrix.tsv", &got));
  EXPECT_TRUE(got == Expected("zscores_1000x50"));
  EXPECT_TRUE(m->alive());
  m.reset();
  fs::remove_all(src);
}

}  // namespace
}  // namespace omicsfs
