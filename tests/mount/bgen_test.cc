// BGEN views of VCF Zarr stores through real mounts. The references are real tools: plink2
// (2.00a3.5) reads the mounted STEM.bgen + STEM.sample back into a fileset that must equal the
// mounted STEM.bed/.bim byte for byte; sqlite3 opens the mounted STEM.bgen.bgi, whose every row
// must point at the block of its variant in the mounted .bgen (parsed here, zlib checks each
// genotype stream and its Adler-32).
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "testutil/mount_fixture.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::CopyTree;
using testutil::MountedFs;
using testutil::ReadWhole;
using testutil::RunCommand;
using testutil::Slurp;

const std::string kCorpus = OMICSFS_CORPUS_DIR "/vcf-zarr";

fs::path TempDir(const char* pattern) {
  fs::path p = fs::temp_directory_path() / fs::unique_path(pattern);
  fs::create_directories(p);
  return p;
}

// plink2 reads DIR/STEM.bgen with DIR/STEM.sample into OUT.{bed,bim,fam}; its exit status.
int Plink2FromBgen(const std::string& prefix, const std::string& out) {
  return RunCommand({"plink2", "--bgen", prefix + ".bgen", "ref-first", "--sample",
                     prefix + ".sample", "--make-bed", "--allow-extra-chr", "--threads", "1",
                     "--out", out});
}

// plink2's reading of the mounted BGEN equals the mounted .bed and .bim, byte for byte.
void ExpectPlink2ReadsBed(const std::string& prefix, const std::string& out) {
  ASSERT_EQ(Plink2FromBgen(prefix, out), 0) << Slurp(out + ".log");
  const std::string bed = Slurp(prefix + ".bed");
  EXPECT_GT(bed.size(), 3u);
  EXPECT_TRUE(Slurp(out + ".bed") == bed) << prefix << ".bed differs";
  EXPECT_EQ(Slurp(out + ".bim"), Slurp(prefix + ".bim"));
}

uint64_t Le(const std::string& b, uint64_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b.at(at + i));
  return v;
}

// One variant block parsed from the .bgen, as a .bgi row would describe it.
std::string ParseBlock(const std::string& bgen, uint64_t at, uint64_t* end) {
  std::ostringstream row;
  auto str = [&](int len_bytes) {
    const uint64_t n = Le(bgen, at, len_bytes);
    std::string s = bgen.substr(at + len_bytes, n);
    at += len_bytes + n;
    return s;
  };
  const std::string varid = str(2), rsid = str(2), chrom = str(2);
  EXPECT_EQ(varid, rsid);
  const uint64_t pos = Le(bgen, at, 4), k = Le(bgen, at + 4, 2);
  at += 6;
  row << chrom << '\t' << pos << '\t' << rsid << '\t' << k;
  for (uint64_t i = 0; i < k; ++i) row << '\t' << str(4);
  const uint64_t c = Le(bgen, at, 4), d = Le(bgen, at + 4, 4);
  std::string raw(d, '\0');
  uLongf raw_len = d;
  EXPECT_EQ(uncompress(reinterpret_cast<Bytef*>(raw.data()), &raw_len,
                       reinterpret_cast<const Bytef*>(bgen.data() + at + 8), c - 4),
            Z_OK);
  EXPECT_EQ(raw_len, d);
  *end = at + 4 + c;
  return row.str();
}

// Every Variant row of the mounted .bgi points at its block; the blocks tile the file from the
// header's offset to the end; the Metadata row matches the file. Returns the rows checked.
int ExpectIndexMatches(const std::string& prefix) {
  const std::string bgen = Slurp(prefix + ".bgen");
  std::string rows, meta;
  EXPECT_EQ(RunCommand({"sqlite3", "-separator", "\t", prefix + ".bgen.bgi",
                        "SELECT chromosome, position, rsid, number_of_alleles, allele1, allele2, "
                        "file_start_position, "
                        "size_in_bytes FROM Variant ORDER BY file_start_position"},
                       &rows),
            0);
  EXPECT_EQ(RunCommand({"sqlite3", "-separator", "\t", prefix + ".bgen.bgi",
                        "SELECT file_size, hex(first_1000_bytes) FROM Metadata"},
                       &meta),
            0);
  std::string hex;
  for (size_t i = 0; i < std::min<size_t>(1000, bgen.size()); ++i) {
    static const char* kHex = "0123456789ABCDEF";
    hex.push_back(kHex[static_cast<uint8_t>(bgen[i]) >> 4]);
    hex.push_back(kHex[bgen[i] & 15]);
  }
  EXPECT_EQ(meta, std::to_string(bgen.size()) + "\t" + hex + "\n");
  uint64_t at = 4 + Le(bgen, 0, 4);
  int n = 0;
  std::istringstream in(rows);
  for (std::string line; std::getline(in, line); ++n) {
    const size_t t7 = line.rfind('\t'), t6 = line.rfind('\t', t7 - 1);
    const uint64_t start = std::stoull(line.substr(t6 + 1, t7 - t6 - 1)),
                   size = std::stoull(line.substr(t7 + 1));
    EXPECT_EQ(start, at) << line;
    uint64_t end = 0;
    EXPECT_EQ(ParseBlock(bgen, start, &end), line.substr(0, t6)) << line;
    EXPECT_EQ(end - start, size) << line;
    at = end;
  }
  EXPECT_EQ(at, bgen.size());
  EXPECT_EQ(static_cast<uint64_t>(n), Le(bgen, 8, 4));  // M in the header
  return n;
}

class BgenMount : public testutil::SharedMountTest<BgenMount> {
 public:
  static std::string Source() { return kCorpus; }
};

// Every store with a .bed has a BGEN (and only those): plink2 reads it back to the .bed, the
// .bgi indexes it, st_size is the bytes read.
TEST_F(BgenMount, EveryStoreWithABedReadsBackToItAndIsIndexed) {
  ASSERT_NE(mount_, nullptr);
  const fs::path tmp = TempDir("omicsfs-bgen-%%%%%%");
  int with = 0, without = 0, rows = 0;
  for (auto& f : fs::directory_iterator(kCorpus)) {
    if (!fs::is_directory(f.path())) continue;
    for (auto& e : fs::directory_iterator(f.path())) {
      if (e.path().extension() != ".vcz") continue;
      const std::string folder = f.path().filename().string(), stem = e.path().stem().string();
      SCOPED_TRACE(folder);
      const std::string prefix =
          mount_->path() + "/" + folder + "/" + e.path().filename().string() + "/" + stem;
      struct stat st;
      const bool bed = ::stat((prefix + ".bed").c_str(), &st) == 0;
      EXPECT_EQ(::stat((prefix + ".bgen").c_str(), &st) == 0, bed);
      if (!bed) {
        ++without;
        continue;
      }
      ++with;
      EXPECT_EQ(static_cast<size_t>(st.st_size), Slurp(prefix + ".bgen").size());
      ExpectPlink2ReadsBed(prefix, (tmp / folder).string());
      rows += ExpectIndexMatches(prefix);
    }
  }
  EXPECT_EQ(with, 16);  // as the PLINK test: mixed_ploidy, triploid and all-missing included
  EXPECT_EQ(without, 7);
  EXPECT_EQ(rows, 465);
  fs::remove_all(tmp);
}

TEST_F(BgenMount, SampleFileIsWhatPlink2AndQctoolRead) {
  ASSERT_NE(mount_, nullptr);
  EXPECT_EQ(Slurp(mount_->path() + "/sample/sample.vcz/sample.sample"),
            "ID_1 ID_2 missing\n0 0 0\nNA00001 NA00001 0\nNA00002 NA00002 0\nNA00003 NA00003 0\n");
}

// A generated cohort of 22 001 samples (a genotype stream of 66 013 bytes: two stored deflate
// blocks; not a multiple of 4), 300 variants in chunks of 50 with multi-allelic sites and missing
// calls: plink2 reads it back to the .bed, the .bgi indexes it, and 16 threads reading random
// ranges get what one sequential read gets. The .bgi persisted in index_dir is served again.
TEST(BgenCohort, RandomParallelReadsEqualSequentialAndPlink2) {
  const fs::path src = TempDir("omicsfs-bgengen-%%%%%%");
  ASSERT_EQ(
      RunCommand({OMICSFS_GEN_VCZ, (src / "cohort.vcz").string(), "300", "22001", "50", "5000"}),
      0);
  const std::string index_dir = (src / "idx").string();
  auto m = MountedFs::Start(OMICSFS_BINARY, src.string(),
                            {"-o", "cache_size=8M,index_dir=" + index_dir});
  ASSERT_NE(m, nullptr);
  const std::string prefix = m->path() + "/cohort.vcz/cohort";
  std::string whole;
  ASSERT_TRUE(ReadWhole(prefix + ".bgen", &whole));
  ExpectPlink2ReadsBed(prefix, (src / "ref").string());
  EXPECT_GT(ExpectIndexMatches(prefix), 250);
  const std::string bgi = Slurp(prefix + ".bgen.bgi");

  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 16; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      const int fd = ::open((prefix + ".bgen").c_str(), O_RDONLY);
      if (fd < 0) {
        ++failures;
        return;
      }
      std::string buf;
      for (int i = 0; i < 100; ++i) {
        const uint64_t off = rng() % whole.size(), len = 1 + rng() % 200000;
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
  // A second mount serves the persisted index (the same bytes, found in index_dir).
  bool persisted = false;
  for (auto& e : fs::directory_iterator(index_dir))
    persisted = persisted || e.path().extension() == ".rix";
  EXPECT_TRUE(persisted);
  m = MountedFs::Start(OMICSFS_BINARY, src.string(), {"-o", "index_dir=" + index_dir});
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(Slurp(m->path() + "/cohort.vcz/cohort.bgen.bgi") == bgi);
  m.reset();
  fs::remove_all(src);
}

TEST(BgenCorruption, CorruptGenotypeChunkIsEioAndNamesStoreArrayChunk) {
  const fs::path src = TempDir("omicsfs-bgenbad-%%%%%%");
  CopyTree(kCorpus + "/sample/sample.vcz", (src / "cohort.vcz").string());
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
  EXPECT_FALSE(ReadWhole(dir + "cohort.bgen", &got, &err));
  EXPECT_EQ(err, EIO);
  const std::string log = m->Log();
  EXPECT_NE(log.find("cohort.bgen of"), std::string::npos) << log;
  EXPECT_NE(log.find("call_genotype"), std::string::npos) << log;
  EXPECT_NE(log.find("chunk 0/0/0"), std::string::npos) << log;
  EXPECT_TRUE(ReadWhole(dir + "cohort.sample", &got));  // reads no genotypes
  EXPECT_NE(got.find("NA00003 NA00003 0\n"), std::string::npos);
  EXPECT_TRUE(m->alive());
  m.reset();
  fs::remove_all(src);
}

}  // namespace
}  // namespace omicsfs
