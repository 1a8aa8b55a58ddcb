// PLINK 1 binary views of VCF Zarr stores through real mounts. The reference is the real plink2
// (2.00a3.5) run here on each store's mounted STEM.vcf; plink 1.9 and plink2 then read the
// mounted fileset and must report what they report on plink2's own fileset.
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
#include "text/plink_source.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::CopyTree;
using testutil::MountedFs;
using testutil::ReadWhole;
using testutil::RunCommand;
using testutil::Slurp;

const std::string kCorpus = OMICSFS_CORPUS_DIR "/vcf-zarr";

struct VczStore {
  std::string folder, store, stem;
};

std::vector<VczStore> Stores() {
  std::vector<VczStore> out;
  for (auto& f : fs::directory_iterator(kCorpus)) {
    if (!fs::is_directory(f.path())) continue;
    for (auto& e : fs::directory_iterator(f.path())) {
      if (e.path().extension() == ".vcz") {
        out.push_back(
            {f.path().filename().string(), e.path().filename().string(), e.path().stem().string()});
      }
    }
  }
  std::sort(out.begin(), out.end(),
            [](const VczStore& a, const VczStore& b) { return a.folder < b.folder; });
  return out;
}

fs::path TempDir(const char* pattern) {
  fs::path p = fs::temp_directory_path() / fs::unique_path(pattern);
  fs::create_directories(p);
  return p;
}

// plink2's own conversion of a VCF into OUT.{bed,bim,fam}; its exit status.
int Plink2MakeBed(const std::string& vcf, const std::string& out) {
  return RunCommand({"plink2", "--vcf", vcf, "--make-bed", "--double-id", "--max-alleles", "2",
                     "--vcf-half-call", "m", "--allow-extra-chr", "--threads", "1", "--out", out});
}

class PlinkMount : public testutil::SharedMountTest<PlinkMount> {
 public:
  static std::string Source() { return kCorpus; }
};

TEST_F(PlinkMount, EveryStorePlink2AcceptsIsByteIdentical) {
  ASSERT_NE(mount_, nullptr);
  const fs::path tmp = TempDir("omicsfs-plink-%%%%%%");
  int accepted = 0, refused = 0;
  for (const auto& s : Stores()) {
    SCOPED_TRACE(s.folder);
    const std::string dir = mount_->path() + "/" + s.folder + "/" + s.store + "/";
    const std::string ref = (tmp / s.folder).string();
    const int rc = Plink2MakeBed(dir + s.stem + ".vcf", ref);
    struct stat st;
    if (rc != 0) {  // plink2 refuses the store: no fileset, and the log says why
      ++refused;
      EXPECT_NE(::stat((dir + s.stem + ".bed").c_str(), &st), 0);
      EXPECT_EQ(errno, ENOENT);
      EXPECT_NE(::stat((dir + s.stem + ".bim").c_str(), &st), 0);
      EXPECT_NE(::stat((dir + s.stem + ".fam").c_str(), &st), 0);
      EXPECT_NE(mount_->Log().find(s.store + ": no " + s.stem + ".bed/.bim/.fam: "),
                std::string::npos);
      EXPECT_EQ(::stat((dir + s.stem + ".vcf").c_str(), &st), 0);  // the VCF views stay
      continue;
    }
    ++accepted;
    for (const char* ext : {".bed", ".bim", ".fam"}) {
      std::string got;
      int err = 0;
      ASSERT_TRUE(ReadWhole(dir + s.stem + ext, &got, &err)) << ext << " errno " << err;
      const std::string want = Slurp(ref + ext);
      EXPECT_TRUE(got == want) << s.stem << ext << " differs (" << got.size() << " vs "
                               << want.size() << " bytes)";
      ASSERT_EQ(::stat((dir + s.stem + ext).c_str(), &st), 0);
      EXPECT_EQ(static_cast<size_t>(st.st_size), want.size()) << ext;
    }
  }
  // 23 stores: 3 have no samples and 4 only multi-allelic records (plink2 refuses those 7).
  EXPECT_EQ(accepted, 16);
  EXPECT_EQ(refused, 7);
  fs::remove_all(tmp);
}

// The statistics plink 1.9 and plink2 compute from the mounted fileset equal those from plink2's
// own fileset (mixed ploidy, haploid chrX, monomorphic sites, triploid calls, 100 samples).
TEST_F(PlinkMount, Plink19AndPlink2ReadTheMountedFileset) {
  ASSERT_NE(mount_, nullptr);
  const fs::path tmp = TempDir("omicsfs-plinkstats-%%%%%%");
  int compared = 0;
  for (const std::string folder :
       {"sample", "mixed_ploidy", "chr22", "1kg_2020_chrM", "triploid"}) {
    SCOPED_TRACE(folder);
    const std::string stem = folder == "chr22" ? "chr22" : folder;
    const std::string mounted = mount_->path() + "/" + folder + "/" + stem + ".vcz/" + stem;
    const std::string own = (tmp / (folder + "-own")).string();
    ASSERT_EQ(Plink2MakeBed(mounted + ".vcf", own), 0);
    struct Run {
      std::string tool;
      std::vector<std::string> args, outputs;
    };
    const std::vector<Run> runs = {
        {"plink1.9",
         {"--freq", "--missing", "--hardy", "--allow-extra-chr", "--allow-no-sex"},
         {".frq", ".imiss", ".lmiss", ".hwe"}},
        {"plink2",
         {"--freq", "--missing", "--hardy", "--allow-extra-chr"},
         {".afreq", ".smiss", ".vmiss", ".hardy"}}};
    for (const auto& run : runs) {
      std::string outputs[2];
      int i = 0;
      for (const std::string& bfile : {mounted, own}) {
        const std::string out = (tmp / (folder + "-" + run.tool + std::to_string(i))).string();
        std::vector<std::string> argv = {run.tool, "--bfile", bfile, "--out", out};
        argv.insert(argv.end(), run.args.begin(), run.args.end());
        EXPECT_EQ(RunCommand(argv), 0) << run.tool << " --bfile " << bfile;
        for (const auto& ext : run.outputs) outputs[i] += ext + ":\n" + Slurp(out + ext);
        ++i;
      }
      EXPECT_GT(outputs[0].size(), 100u) << run.tool;
      EXPECT_EQ(outputs[0], outputs[1]) << run.tool;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 10);
  fs::remove_all(tmp);
}

// A generated cohort (2 000 variants × 1 001 samples, 100-variant chunks: ~20 .bed chunks of
// 25 KB, multi-allelic sites and missing calls): byte-identical to plink2, and 16 threads reading
// random ranges get what one sequential read gets.
TEST(PlinkCohort, RandomParallelReadsEqualSequentialAndPlink2) {
  const fs::path src = TempDir("omicsfs-plinkgen-%%%%%%");
  ASSERT_EQ(
      RunCommand({OMICSFS_GEN_VCZ, (src / "cohort.vcz").string(), "2000", "1001", "100", "300"}),
      0);
  auto m = MountedFs::Start(OMICSFS_BINARY, src.string(), {"-o", "cache_size=4M"});
  ASSERT_NE(m, nullptr);
  const std::string bed = m->path() + "/cohort.vcz/cohort.bed";
  std::string whole;
  ASSERT_TRUE(ReadWhole(bed, &whole));
  const std::string ref = (src / "ref").string();
  ASSERT_EQ(Plink2MakeBed(m->path() + "/cohort.vcz/cohort.vcf", ref), 0);
  EXPECT_TRUE(whole == Slurp(ref + ".bed")) << whole.size();
  EXPECT_EQ(Slurp(m->path() + "/cohort.vcz/cohort.bim"), Slurp(ref + ".bim"));
  const uint64_t biallelic = (whole.size() - 3) / 251;
  EXPECT_EQ(whole.size(), 3 + biallelic * 251);
  EXPECT_GT(biallelic, 1900u);
  EXPECT_LT(biallelic, 2000u);  // some multi-allelic records were left out

  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 16; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      const int fd = ::open(bed.c_str(), O_RDONLY);
      if (fd < 0) {
        ++failures;
        return;
      }
      std::string buf;
      for (int i = 0; i < 200; ++i) {
        const uint64_t off = rng() % whole.size();
        const uint64_t len = 1 + rng() % 70000;
        buf.resize(len);
        const ssize_t n = ::pread(fd, buf.data(), len, static_cast<off_t>(off));
        const uint64_t want = std::min<uint64_t>(len, whole.size() - off);
        if (n != static_cast<ssize_t>(want)) {
          ++failures;
          continue;
        }
        if (buf.compare(0, want, whole, off, want) != 0) ++mismatches;
      }
      ::close(fd);
    });
  }
  for (auto& r : readers) r.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
  m.reset();
  fs::remove_all(src);
}

// plink2's chromosome codes, asked of plink2 itself: one one-record VCF per contig name.
TEST(PlinkChromosome, MatchesPlink2OnEveryNameKind) {
  const fs::path tmp = TempDir("omicsfs-plinkchr-%%%%%%");
  const std::vector<std::string> names = {"1",        "chr1",     "CHR1",
                                          "cHr5",     "01",       "chr02",
                                          "001",      "chr001",   "0",
                                          "chr00",    "22",       "23",
                                          "chr24",    "25",       "26",
                                          "27",       "chr28",    "29",
                                          "chr99",    "100",      "X",
                                          "x",        "chrX",     "Y",
                                          "XY",       "chrxy",    "Xy",
                                          "M",        "chrM",     "MT",
                                          "chrMt",    "PAR1",     "par2",
                                          "chrPAR1",  "PAR3",     "chr",
                                          "chrchr1",  "1_random", "chrUn_gl000220",
                                          "HLA-A*01", "26a",      "-1"};
  int refused = 0;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const std::string vcf = (tmp / "c.vcf").string(), out = (tmp / "c").string();
    {
      std::ofstream(vcf)
          << "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\n"
          << name << "\t5\t.\tA\tC\t.\t.\t.\tGT\t0/1\n";
    }
    fs::remove(out + ".bim");
    const int rc = Plink2MakeBed(vcf, out);
    const auto code = text::PlinkChromosome(name);
    if (rc != 0) {
      ++refused;
      EXPECT_FALSE(code.has_value()) << *code;
      continue;
    }
    const std::string bim = Slurp(out + ".bim");
    ASSERT_TRUE(code.has_value());
    EXPECT_EQ(bim.substr(0, bim.find('\t')), *code);
  }
  EXPECT_EQ(refused, 2);  // 29 and chr99
  fs::remove_all(tmp);
}

TEST(PlinkCorruption, CorruptGenotypeChunkIsEioAndNamesStoreArrayChunk) {
  const fs::path src = TempDir("omicsfs-plinkbad-%%%%%%");
  CopyTree(kCorpus + "/sample/sample.vcz", (src / "cohort.vcz").string());
  // Truncated: blosc stores tiny chunks uncompressed without a checksum, a short chunk is caught.
  const fs::path chunk = src / "cohort.vcz" / "call_genotype" / "0" / "0" / "0";
  fs::permissions(chunk, fs::owner_read | fs::owner_write);
  std::string bytes;
  ASSERT_TRUE(ReadWhole(chunk.string(), &bytes));
  bytes.resize(bytes.size() / 2);
  { std::ofstream(chunk.string(), std::ios::binary | std::ios::trunc) << bytes; }

  auto m = MountedFs::Start(OMICSFS_BINARY, src.string());
  ASSERT_NE(m, nullptr);
  const std::string dir = m->path() + "/cohort.vcz/";
  std::string got;
  int err = 0;
  EXPECT_FALSE(ReadWhole(dir + "cohort.bed", &got, &err));
  EXPECT_EQ(err, EIO);
  const std::string log = m->Log();
  EXPECT_NE(log.find("cohort.vcz"), std::string::npos) << log;
  EXPECT_NE(log.find("call_genotype"), std::string::npos) << log;
  EXPECT_NE(log.find("chunk 0/0/0"), std::string::npos) << log;
  // The .bim and .fam do not read genotypes.
  EXPECT_TRUE(ReadWhole(dir + "cohort.bim", &got));
  EXPECT_NE(got.find("rs6054257"), std::string::npos);
  EXPECT_TRUE(ReadWhole(dir + "cohort.fam", &got));
  EXPECT_EQ(got,
            "NA00001\tNA00001\t0\t0\t0\t-9\nNA00002\tNA00002\t0\t0\t0\t-"
            "9\nNA00003\tNA00003\t0\t0\t0\t-9\n");
  EXPECT_TRUE(m->alive());
  m.reset();
  fs::remove_all(src);
}

}  // namespace
}  // namespace omicsfs
