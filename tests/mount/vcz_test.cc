// Every VCF Zarr store of the shared corpus through a real mount: STEM.vcf, sites.vcf and
// samples.txt byte for byte; bcftools reads each mounted view; a corrupt chunk is a clean EIO.
#include <errno.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "testutil/mount_fixture.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::MountedFs;
using testutil::ReadWhole;

const std::string kCorpus = OMICSFS_CORPUS_DIR "/vcf-zarr";

struct VczStore {
  std::string folder, store, stem;
};

std::vector<VczStore> Stores() {
  std::vector<VczStore> out;
  std::vector<fs::path> folders;
  for (auto& e : fs::directory_iterator(kCorpus)) {
    if (fs::is_directory(e.path())) folders.push_back(e.path());
  }
  std::sort(folders.begin(), folders.end());
  for (const auto& f : folders) {
    for (auto& e : fs::directory_iterator(f)) {
      if (e.path().extension() == ".vcz") {
        out.push_back(
            {f.filename().string(), e.path().filename().string(), e.path().stem().string()});
      }
    }
  }
  return out;
}

std::string SamplesOf(const std::string& vcf) {
  size_t line = vcf.find("\n#CHROM");
  size_t end = vcf.find('\n', line + 1);
  std::istringstream ss(vcf.substr(line + 1, end - line - 1));
  std::string col, out;
  for (int i = 0; std::getline(ss, col, '\t'); ++i) {
    if (i >= 9) out += col + "\n";
  }
  return out;
}

class VczMount : public testutil::SharedMountTest<VczMount> {
 public:
  static std::string Source() { return kCorpus; }
};

TEST_F(VczMount, EveryStoreIsByteIdentical) {
  ASSERT_NE(mount_, nullptr);
  auto stores = Stores();
  EXPECT_EQ(stores.size(), 23u);
  for (const auto& s : stores) {
    SCOPED_TRACE(s.folder);
    const std::string dir = mount_->path() + "/" + s.folder + "/" + s.store;
    std::string full, sites, samples, want_full, want_sites;
    int err = 0;
    ASSERT_TRUE(ReadWhole(kCorpus + "/" + s.folder + "/expected.vcf", &want_full));
    ASSERT_TRUE(ReadWhole(kCorpus + "/" + s.folder + "/expected.sites.vcf", &want_sites));
    ASSERT_TRUE(ReadWhole(dir + "/" + s.stem + ".vcf", &full, &err)) << "errno " << err;
    EXPECT_TRUE(full == want_full)
        << s.stem << ".vcf differs (" << full.size() << " vs " << want_full.size() << " bytes)";
    ASSERT_TRUE(ReadWhole(dir + "/sites.vcf", &sites, &err)) << "errno " << err;
    EXPECT_TRUE(sites == want_sites)
        << "sites.vcf differs (" << sites.size() << " vs " << want_sites.size() << " bytes)";
    ASSERT_TRUE(ReadWhole(dir + "/samples.txt", &samples));
    EXPECT_EQ(samples, SamplesOf(want_full));
    // The store's internal arrays are not shown.
    struct stat st;
    EXPECT_NE(::stat((dir + "/variant_position").c_str(), &st), 0);
  }
}

TEST_F(VczMount, BcftoolsReadsEveryMountedView) {
  ASSERT_NE(mount_, nullptr);
  for (const auto& s : Stores()) {
    for (const std::string& view : {s.stem + ".vcf", std::string("sites.vcf")}) {
      const std::string path = mount_->path() + "/" + s.folder + "/" + s.store + "/" + view;
      std::string out;
      int rc = testutil::RunCommand(
          {"bcftools", "view", "--no-version", "-Ou", "-o", "/dev/null", path}, &out);
      EXPECT_EQ(rc, 0) << "bcftools view " << s.folder << "/" << view;
    }
  }
}

TEST(VczCorruption, CorruptChunkIsEioAndNamesArrayAndChunk) {
  fs::path src = fs::temp_directory_path() / fs::unique_path("omicsfs-vcz-%%%%%%");
  fs::create_directories(src);
  fs::path store = src / "cohort.vcz";
  fs::path good = src / "good.vcz";
  for (const auto& target : {store, good}) {
    fs::create_directories(target);
    for (auto it = fs::recursive_directory_iterator(kCorpus + "/sample/sample.vcz");
         it != fs::recursive_directory_iterator(); ++it) {
      fs::path rel = fs::relative(it->path(), kCorpus + "/sample/sample.vcz");
      if (fs::is_directory(it->path()))
        fs::create_directories(target / rel);
      else
        fs::copy_file(it->path(), target / rel);
    }
  }
  // Truncate call_DP's only chunk (blosc stores tiny chunks uncompressed, without a checksum, so
  // flipped payload bytes there are undetectable by any reader; a short chunk is always caught).
  fs::path chunk = store / "call_DP" / "0" / "0";
  fs::permissions(chunk, fs::owner_read | fs::owner_write);
  std::string bytes;
  ASSERT_TRUE(ReadWhole(chunk.string(), &bytes));
  bytes.resize(bytes.size() / 2);
  { std::ofstream(chunk.string(), std::ios::binary | std::ios::trunc) << bytes; }

  auto m = MountedFs::Start(OMICSFS_BINARY, src.string());
  ASSERT_NE(m, nullptr);
  std::string got;
  int err = 0;
  EXPECT_FALSE(ReadWhole(m->path() + "/cohort.vcz/cohort.vcf", &got, &err));
  EXPECT_EQ(err, EIO);
  const std::string log = m->Log();
  EXPECT_NE(log.find("call_DP"), std::string::npos) << log;
  EXPECT_NE(log.find("chunk 0/0"), std::string::npos) << log;
  // Views that do not touch the chunk, and other stores, still work.
  EXPECT_TRUE(ReadWhole(m->path() + "/cohort.vcz/sites.vcf", &got));
  EXPECT_TRUE(ReadWhole(m->path() + "/cohort.vcz/samples.txt", &got));
  std::string want;
  ASSERT_TRUE(ReadWhole(kCorpus + "/sample/expected.vcf", &want));
  EXPECT_TRUE(ReadWhole(m->path() + "/good.vcz/good.vcf", &got));
  EXPECT_TRUE(got == want);
  EXPECT_TRUE(m->alive());
  m.reset();
  fs::remove_all(src);
}

// Blosc and zstd allocate their scratch for every chunk with C malloc; in the daemon that comes
// from the huge-page arena too (mount/memory.cc), where it was fresh pages before. Sanitizer
// builds keep their own allocators: there nothing is routed to the arena.
TEST(VczMemory, BloscScratchComesFromTheDaemonsArena) {
  auto m = MountedFs::Start(OMICSFS_BINARY, kCorpus + "/chr22_v9_s32/chr22_v9_s32.vcz");
  ASSERT_NE(m, nullptr);
  std::string got, status;
  ASSERT_TRUE(ReadWhole(m->path() + "/chr22_v9_s32.vcf", &got));
  ASSERT_TRUE(ReadWhole(m->path() + "/.omicsfs/status", &status));
  const size_t at = status.find("arena: ");
  ASSERT_NE(at, std::string::npos) << status;
  const std::string line = status.substr(at, status.find('\n', at) - at);
  const long c_blocks = testutil::NumberBefore(line, " for C libraries");
  ASSERT_GE(c_blocks, 0) << line;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  EXPECT_NE(line.find(" 0 blocks ("), std::string::npos)
      << "nothing is routed to the arena: " << line;
  EXPECT_EQ(c_blocks, 0) << line;
#else
  EXPECT_EQ(line.find("arena: off"), std::string::npos) << line;
  EXPECT_GT(c_blocks, 0) << line;
#endif
}

}  // namespace
}  // namespace omicsfs
