// STEM.bcf and STEM.bcf.csi of every VCF Zarr store of the shared corpus, and of a region ×
// samples slice, through a real mount, against the real tools on the same folder's views:
// `bgzip -dc STEM.bcf` is `bcftools view --no-version -Ou STEM.vcf`; `bgzip -t` passes; the .csi
// decompresses to what `bcftools index -c` writes for a copy; `bcftools view -r` prints the same
// records from STEM.bcf as from STEM.vcf.gz; pysam reads it. The first listing sizes STEM.bcf and
// builds its index in the pass that sizes STEM.vcf; a damaged chunk is EIO on the read that meets
// it.
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

#include "testutil/mount_fixture.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::MountedFs;
using testutil::ReadWhole;
using testutil::TempDir;

const std::string kCorpus = OMICSFS_CORPUS_DIR "/vcf-zarr";

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `cmd` in sh; stdout into *out, stderr into *err. Returns the exit status.
int Sh(const std::string& cmd, std::string* out, std::string* err, const std::string& tmp) {
  const std::string err_path = tmp + "/stderr.txt";
  std::string ignored;
  int rc = testutil::RunCommand({"sh", "-c", "{ " + cmd + "; } 2>" + Quote(err_path)},
                                out != nullptr ? out : &ignored);
  if (err != nullptr) ReadWhole(err_path, err);
  return rc;
}

struct Store {
  std::string folder, store, stem;
};

std::vector<Store> Stores() {
  std::vector<Store> out;
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

// A whole contig and a window inside it, from the VCF view's records (its first and middle one).
std::vector<std::string> RegionsOf(const std::string& vcf) {
  std::vector<std::pair<std::string, long>> recs;
  std::istringstream ss(vcf);
  for (std::string line; std::getline(ss, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t t1 = line.find('\t'), t2 = line.find('\t', t1 + 1);
    recs.emplace_back(line.substr(0, t1), std::stol(line.substr(t1 + 1, t2 - t1 - 1)));
  }
  if (recs.empty()) return {};
  const auto& [contig, pos] = recs[recs.size() / 2];
  return {recs.front().first, contig + ":" + std::to_string(std::max(1L, pos - 1000)) + "-" +
                                  std::to_string(pos + 1000)};
}

const char kPysam[] = R"(
import sys, pysam
path, region = sys.argv[1], sys.argv[2]
with pysam.VariantFile(path) as f:
    n = sum(1 for r in f)
with pysam.VariantFile(path) as f:
    m = sum(1 for r in f.fetch(region=region))
print(n, m)
)";

// The folder's STEM.bcf and its .csi against bcftools, bgzip and pysam.
void CheckBcf(const std::string& dir, const std::string& stem, const std::string& tmp) {
  SCOPED_TRACE(dir);
  const std::string bcf = dir + "/" + stem + ".bcf";
  std::string mine, want, err, vcf;
  ASSERT_TRUE(ReadWhole(bcf, &mine));
  struct stat st;
  ASSERT_EQ(::stat(bcf.c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), mine.size());
  EXPECT_EQ(Sh("bgzip -t " + Quote(bcf), nullptr, &err, tmp), 0) << err;
  ASSERT_EQ(Sh("bgzip -dc " + Quote(bcf), &mine, &err, tmp), 0) << err;
  ASSERT_EQ(
      Sh("bcftools view --no-version -Ou " + Quote(dir + "/" + stem + ".vcf"), &want, &err, tmp), 0)
      << err;
  EXPECT_TRUE(mine == want) << "bgzip -dc " << stem << ".bcf: " << mine.size()
                            << " bytes, bcftools view -Ou of " << stem << ".vcf: " << want.size();
  // The index: what bcftools index -c writes for a copy.
  const std::string copy = tmp + "/copy.bcf";
  ASSERT_EQ(Sh("cp " + Quote(bcf) + " " + Quote(copy) + " && bcftools index -f -c " + Quote(copy),
               nullptr, &err, tmp),
            0)
      << err;
  std::string index, their_index;
  ASSERT_EQ(Sh("bgzip -dc " + Quote(bcf + ".csi"), &index, &err, tmp), 0) << err;
  ASSERT_EQ(Sh("bgzip -dc " + Quote(copy + ".csi"), &their_index, &err, tmp), 0) << err;
  EXPECT_TRUE(index == their_index) << index.size() << " vs " << their_index.size() << " bytes";
  // Region queries: the records of STEM.vcf.gz, through the mount's own indexes.
  ASSERT_TRUE(ReadWhole(dir + "/" + stem + ".vcf", &vcf));
  const std::vector<std::string> regions = RegionsOf(vcf);
  for (const std::string& r : regions) {
    std::string from_bcf, from_gz, gz_err;
    EXPECT_EQ(
        Sh("bcftools view --no-version -H -r " + Quote(r) + " " + Quote(bcf), &from_bcf, &err, tmp),
        0)
        << r << ": " << err;
    EXPECT_EQ(Sh("bcftools view --no-version -H -r " + Quote(r) + " " +
                     Quote(dir + "/" + stem + ".vcf.gz"),
                 &from_gz, &gz_err, tmp),
              0)
        << r << ": " << gz_err;
    EXPECT_EQ(from_bcf, from_gz) << r;
    EXPECT_NE(from_bcf, "") << r;
    EXPECT_EQ(err.find("[E::"), std::string::npos) << err;
  }
  // htslib through pysam: every record, and a region through the .csi.
  if (::access("/usr/bin/python3", X_OK) == 0 && !regions.empty()) {
    std::string out;
    const std::string script = tmp + "/read.py";
    std::ofstream(script) << kPysam;
    ASSERT_EQ(Sh("/usr/bin/python3 " + Quote(script) + " " + Quote(bcf) + " " + Quote(regions[1]),
                 &out, &err, tmp),
              0)
        << err;
    std::string gz_out;
    ASSERT_EQ(Sh("bcftools view -H " + Quote(bcf) + " | wc -l; bcftools view -H -r " +
                     Quote(regions[1]) + " " + Quote(bcf) + " | wc -l",
                 &gz_out, &err, tmp),
              0);
    std::istringstream a(out), b(gz_out);
    long n1 = -1, m1 = -1, n2 = -2, m2 = -2;
    a >> n1 >> m1;
    b >> n2 >> m2;
    EXPECT_EQ(n1, n2) << out;
    EXPECT_EQ(m1, m2) << out;
  }
}

class BcfMount : public testutil::SharedMountTest<BcfMount> {
 public:
  static std::string Source() { return kCorpus; }
};

TEST_F(BcfMount, EveryStoreIsWhatBcftoolsWrites) {
  ASSERT_NE(mount_, nullptr);
  TempDir tmp;
  const auto stores = Stores();
  EXPECT_EQ(stores.size(), 23u);
  for (const auto& s : stores) {
    CheckBcf(mount_->path() + "/" + s.folder + "/" + s.store, s.stem, tmp.path());
  }
}

// A slice's STEM.bcf is the BCF of that slice's STEM.vcf (records of a region, two samples in the
// order given: bcftools recounts AC/AN, and its .csi numbers the slice's header contigs).
TEST_F(BcfMount, ARegionBySamplesSlice) {
  ASSERT_NE(mount_, nullptr);
  TempDir tmp;
  CheckBcf(mount_->path() +
               "/chr22_v9_s32/chr22_v9_s32.vcz/region=chr22:10510500-10512000/"
               "samples=HG00097,HG00096",
           "chr22_v9_s32", tmp.path());
  CheckBcf(mount_->path() + "/sample/sample.vcz/samples=NA00003,NA00001/region=20:1-1230237",
           "sample", tmp.path());
}

// The first `ls -l` sizes STEM.bcf and builds STEM.bcf.csi in the pass that sizes STEM.vcf (and
// its indexes): reading them all afterwards adds no sizing pass.
TEST(BcfOnePass, SizedAndIndexedWithTheVcfView) {
  TempDir idx;
  auto m = MountedFs::Start(OMICSFS_BINARY, kCorpus + "/chr22_v9_s32/chr22_v9_s32.vcz",
                            {"-o", "index_dir=" + idx.path()});
  ASSERT_NE(m, nullptr);
  auto sized = [&] {
    std::string status;
    EXPECT_TRUE(ReadWhole(m->path() + "/.omicsfs/status", &status));
    return testutil::NumberBefore(status, " chunks read by sizing passes");
  };
  struct stat st;
  ASSERT_EQ(::stat((m->path() + "/samples.txt").c_str(), &st), 0);
  const long before = sized();
  ASSERT_GE(before, 0);
  ASSERT_EQ(::stat((m->path() + "/chr22_v9_s32.vcf").c_str(), &st), 0);
  const long one_pass = sized() - before;
  EXPECT_GT(one_pass, 0);
  std::string got;
  for (const char* f : {"chr22_v9_s32.bcf", "chr22_v9_s32.bcf.csi", "chr22_v9_s32.vcf.gz.csi",
                        "chr22_v9_s32.vcf.gz.tbi"}) {
    ASSERT_EQ(::stat((m->path() + "/" + f).c_str(), &st), 0) << f;
    ASSERT_TRUE(ReadWhole(m->path() + "/" + f, &got)) << f;
    EXPECT_EQ(static_cast<uint64_t>(st.st_size), got.size()) << f;
  }
  EXPECT_EQ(sized() - before, one_pass) << "STEM.bcf or its index needed a pass of its own";
}

// A truncated FORMAT chunk: reading STEM.bcf, which needs it, is EIO and the log names the array
// and the chunk; the views that do not need it are still served.
TEST(BcfDamage, CorruptChunkIsEio) {
  TempDir src;
  const fs::path store = fs::path(src.path()) / "cohort.vcz";
  testutil::CopyTree(kCorpus + "/sample/sample.vcz", store.string());
  const fs::path chunk = store / "call_DP" / "0" / "0";
  std::string bytes;
  ASSERT_TRUE(ReadWhole(chunk.string(), &bytes));
  bytes.resize(bytes.size() / 2);
  { std::ofstream(chunk.string(), std::ios::binary | std::ios::trunc) << bytes; }
  auto m = MountedFs::Start(OMICSFS_BINARY, src.path());
  ASSERT_NE(m, nullptr);
  std::string got;
  int err = 0;
  EXPECT_FALSE(ReadWhole(m->path() + "/cohort.vcz/cohort.bcf", &got, &err));
  EXPECT_EQ(err, EIO);
  const std::string log = m->Log();
  EXPECT_NE(log.find("call_DP"), std::string::npos) << log;
  EXPECT_NE(log.find("chunk 0/0"), std::string::npos) << log;
  EXPECT_TRUE(ReadWhole(m->path() + "/cohort.vcz/sites.vcf", &got));
  EXPECT_TRUE(m->alive());
}

// A cohort whose chunks are cut into many small blosc blocks (as large chunks are): short reads
// decode only the blocks of their records (a region query, head, tail, random reads), read by
// parts from the chunk files or from zip members (stored or deflated), and what they serve equals
// the same cohort stored one block per chunk (decoded whole): bcftools -r on STEM.bcf and
// STEM.vcf.gz, the bytes of STEM.vcf, STEM.bcf and the PLINK .bed.
TEST(BcfBlocks, ReadsOfAFewRecordsDecodeOnlyTheirBlocks) {
  TempDir src, tmp;
  for (const char* kind : {"whole", "blocks"}) {
    const std::string out = src.path() + "/" + kind + "/cohort.vcz";
    ASSERT_EQ(testutil::RunCommand({OMICSFS_GEN_VCZ, out, "3000", "60", "1000", "25",
                                    std::string(kind) == "whole" ? "16777216" : "2048"}),
              0);
  }
  // The blocks store zipped too (zarr's ZipStore layout), its members deflated and stored.
  for (const char* method : {"8", "0"}) {
    const std::string dir = src.path() + "/zip" + method;
    fs::create_directories(dir);
    ASSERT_EQ(testutil::ZipFolder(src.path() + "/blocks/cohort.vcz", dir + "/cohort.vcz.zip",
                                  std::string(method) == "8"),
              0);
  }
  const std::vector<std::string> kinds = {"blocks", "zip8", "zip0"};
  // Sized (and indexed) by a first mount: the second one decodes only what its reads need.
  TempDir idx;
  const std::vector<std::string> options = {"-o", "cache_size=64M,index_dir=" + idx.path()};
  {
    auto first = MountedFs::Start(OMICSFS_BINARY, src.path(), options);
    ASSERT_NE(first, nullptr);
    std::string listing;
    for (const std::string& kind : {std::string("whole"), kinds[0], kinds[1], kinds[2]}) {
      ASSERT_EQ(Sh("ls -l " + Quote(first->path() + "/" + kind + "/cohort.vcz"), &listing, nullptr,
                   tmp.path()),
                0)
          << kind;
    }
  }
  auto m = MountedFs::Start(OMICSFS_BINARY, src.path(), options);
  ASSERT_NE(m, nullptr);
  const std::string whole = m->path() + "/whole/cohort.vcz";
  auto store = [&](const std::string& kind) { return m->path() + "/" + kind + "/cohort.vcz"; };
  std::string vcf;
  ASSERT_TRUE(ReadWhole(whole + "/cohort.vcf", &vcf));
  // Regions inside one variants-chunk, across two, at the ends (positions grow ~150 a record).
  for (const char* region : {"chr1:100000-120000", "chr1:150000-160000", "chr1:10000-13000",
                             "chr1:440000-460000", "chr1:1-1000000"}) {
    for (const char* file : {"/cohort.bcf", "/cohort.vcf.gz"}) {
      const std::string view = "bcftools view --no-version -r " + Quote(region) + " ";
      std::string a;
      ASSERT_EQ(Sh(view + Quote(whole + file), &a, nullptr, tmp.path()), 0);
      size_t records = 0;
      for (size_t at = 0; (at = a.find("\nchr1\t", at)) != std::string::npos; ++at) ++records;
      EXPECT_GT(records, 15u) << region;
      for (const std::string& kind : kinds) {
        std::string b;
        ASSERT_EQ(Sh(view + Quote(store(kind) + file), &b, nullptr, tmp.path()), 0) << kind;
        EXPECT_TRUE(a == b) << kind << " " << region << " " << file;
      }
    }
  }
  // The blocks stores' chunks were read by parts (the whole store's have one block each).
  std::string status;
  ASSERT_TRUE(ReadWhole(m->path() + "/.omicsfs/status", &status));
  EXPECT_GT(testutil::NumberBefore(status, " parts alone"), 300) << status;
  const std::string blocks = store("blocks");
  std::string got;
  ASSERT_EQ(Sh("head -c 300000 " + Quote(blocks + "/cohort.vcf"), &got, nullptr, tmp.path()), 0);
  EXPECT_TRUE(got == vcf.substr(0, 300000));
  ASSERT_EQ(Sh("tail -c 300000 " + Quote(blocks + "/cohort.vcf"), &got, nullptr, tmp.path()), 0);
  EXPECT_TRUE(got == vcf.substr(vcf.size() - 300000));
  const int fd = ::open((blocks + "/cohort.vcf").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 60; ++i) {
    const uint64_t off = rng() % vcf.size(), len = 1 + rng() % 40000;
    std::string buf(len, '\0');
    const ssize_t n = ::pread(fd, buf.data(), len, static_cast<off_t>(off));
    ASSERT_GE(n, 0);
    ASSERT_TRUE(buf.substr(0, n) == vcf.substr(off, len)) << "pread at " << off;
  }
  ::close(fd);
  for (const char* file : {"/cohort.vcf", "/cohort.bcf", "/cohort.bed"}) {
    std::string a, b;
    ASSERT_TRUE(ReadWhole(whole + file, &a)) << file;
    for (const std::string& kind : kinds) {
      ASSERT_TRUE(ReadWhole(store(kind) + file, &b)) << kind << file;
      EXPECT_TRUE(a == b) << kind << file;
    }
  }
  EXPECT_TRUE(m->alive());
}

}  // namespace
}  // namespace omicsfs
