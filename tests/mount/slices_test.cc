// Slices of VCF Zarr stores (region=, regions=@, samples=, format=) through a real mount,
// against the real tools run here on the same bytes: bcftools decides which records, which
// samples in which order and AC/AN; the slice's text must be the parent view's own lines (cut
// to the chosen samples and FORMAT fields); its .vcf.gz, .tbi and PLINK fileset are what bgzip,
// tabix and plink2 make of the slice's VCF.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "testutil/mount_fixture.h"
#include "testutil/zarr_writer.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::Join;
using testutil::Lines;
using testutil::MountedFs;
using testutil::ReadOrFail;
using testutil::ReadWhole;
using testutil::RunCommand;
using testutil::ShOrFail;

const std::string kCorpus = OMICSFS_CORPUS_DIR "/vcf-zarr";

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

std::string Header(const std::string& vcf) {
  std::string h;
  for (const auto& line : Split(vcf, '\n')) {
    if (line.empty() || line[0] != '#') break;
    h += line + "\n";
  }
  return h;
}

std::vector<std::string> Records(const std::string& vcf) {
  std::vector<std::string> out;
  for (auto& line : Split(vcf, '\n')) {
    if (!line.empty() && line[0] != '#') out.push_back(std::move(line));
  }
  return out;
}

// A record's identity: CHROM POS ID REF ALT.
std::string Key(const std::string& line) {
  auto f = Split(line, '\t');
  f.resize(5);
  return Join(f, "\t");
}

// INFO without AC and AN, in order (a samples slice recounts those two, in place or appended).
std::string InfoBesidesCounts(const std::string& info) {
  std::vector<std::string> kept;
  for (const auto& kv : Split(info, ';')) {
    if (!kv.starts_with("AC=") && !kv.starts_with("AN=")) kept.push_back(kv);
  }
  return kept.empty() ? "." : Join(kept, ";");
}

class Slices : public testutil::SliceSuite<Slices> {
 protected:
  static void SetUpTestSuite() {
    MakeLists("omicsfs-lists-");
    std::ofstream(lists_ + "/cases.txt") << "NA00003\nNA00001\n";
    std::ofstream(lists_ + "/chr22.txt") << "HG00262\nHG00100\nHG00141\nHG00182\nHG00183\n";
    std::ofstream(lists_ + "/two.bed")
        << "# a comment\n20\t1110695\t1234567\nX\t0\t100\n19\t0\t111\n";
    std::ofstream(lists_ + "/bad.bed") << "20\tten\t20\n";
    std::ofstream(lists_ + "/big.bed") << "20\t14000\t1110700\n";
    std::ofstream(lists_ + "/huge.bed") << "20\t9223372036854775807\t9223372036854775807\n";
    ::mkfifo((lists_ + "/fifo.txt").c_str(), 0644);  // must not block a lookup
    std::ofstream(lists_ + "/unknown.txt") << "NA00001\nNA1\nNA2\nNA9\n";
    std::ofstream(lists_ + "/empty.txt") << "";
    std::ofstream(lists_ + "/windows.txt")
        << "\xEF\xBB\xBFNA00003\r\nNA00001\r\n";  // Notepad's: BOM, CRLF
    std::ofstream(lists_ + "/spaced.txt") << "NA00003\nNA00001 \n";
    fs::create_directory(lists_ + "/folder.txt");  // a list that cannot be read
    Mount(kCorpus);
  }
  static std::string Store(const std::string& folder) {
    for (auto& e : fs::directory_iterator(mount_->path() + "/" + folder)) {
      if (e.path().extension() == ".vcz") return e.path().string();
    }
    ADD_FAILURE() << "no store in " << folder;
    return "";
  }
  static std::string Stem(const std::string& store) { return fs::path(store).stem().string(); }

  // A region slice holds the lines of the parent's view that bcftools view -r selects from the
  // full twin, in its order, byte for byte, under the parent's header.
  static void ExpectRegion(const std::string& folder, const std::string& region) {
    SCOPED_TRACE(folder + " region=" + region);
    const std::string store = Store(folder), stem = Stem(store);
    const std::string parent = ReadOrFail(store + "/" + stem + ".vcf");
    const std::string slice = ReadOrFail(store + "/region=" + region + "/" + stem + ".vcf");
    EXPECT_EQ(Header(slice), Header(parent));
    const std::vector<std::string> parent_records = Records(parent);
    const std::set<std::string> lines(parent_records.begin(), parent_records.end());
    std::vector<std::string> keys;
    for (const auto& line : Records(slice)) {
      EXPECT_TRUE(lines.count(line)) << "not a line of the parent: " << line.substr(0, 80);
      keys.push_back(Key(line));
    }
    const std::string want = ShOrFail("bcftools view -H -r '" + region + "' " + store + "/" + stem +
                                      ".vcf.gz | cut -f1-5");
    EXPECT_EQ(Join(keys, "\n") + (keys.empty() ? "" : "\n"), want);
  }
};

TEST_F(Slices, RegionsSelectWhatBcftoolsSelectsAndKeepTheParentsLines) {
  ExpectRegion("sample", "20:1110000-1234567");
  ExpectRegion("sample", "20:14370");                     // one position
  ExpectRegion("sample", "20:1234567-");                  // to the contig's end
  ExpectRegion("sample", "X,20:1-20000");                 // contigs in the order named
  ExpectRegion("sample", "20:17330-1110696,20:1-20000");  // overlapping regions: each record once
  ExpectRegion("sample", "19");
  ExpectRegion("sample", "20:5000000-6000000");         // no records: the header only
  ExpectRegion("sample_v3_s2", "20:1-1230237,19:112");  // chunk edges
  ExpectRegion("chr_m_indels", "chrM:300-320");         // deletions reaching into the region
  ExpectRegion("chr_m_indels", "chrM:3107-3110");
  ExpectRegion("1kg_2020_chrM", "chrM:100-2000");
  ExpectRegion("multi_contig_v500", "3:1000-200000,1");  // many chunks, several contigs
  ExpectRegion("multi_contig_v500", "4");
}

// region= then regions= narrows: the records both select, in the first's order (bcftools -r …
// piped into -R …).
TEST_F(Slices, RegionAndRegionsIntersect) {
  const std::string store = Store("sample");
  const std::string both = ReadOrFail(store + "/region=20:1-20000,X/regions=@big/sample.vcf");
  std::vector<std::string> keys;
  for (const auto& line : Records(both)) keys.push_back(Key(line));
  const auto first = Split(
      ShOrFail("bcftools view -H -r 20:1-20000,X " + store + "/sample.vcf.gz | cut -f1-5"), '\n');
  const auto second = Split(ShOrFail("bcftools view -H -R " + lists_ + "/big.bed " + store +
                                     "/sample.vcf.gz | cut -f1-5"),
                            '\n');
  std::vector<std::string> want;
  for (const auto& k : first) {
    if (std::find(second.begin(), second.end(), k) != second.end()) want.push_back(k);
  }
  EXPECT_EQ(keys, want);
  EXPECT_EQ(keys.size(), 2u);  // 20:14370 and 20:17330
  EXPECT_EQ(ReadOrFail(store + "/regions=@big/region=20:1-20000,X/sample.vcf"), both);
}

TEST_F(Slices, BedListsSelectWhatBcftoolsDashCapitalRSelects) {
  const std::string store = Store("sample");
  const std::string slice = ReadOrFail(store + "/regions=@two/sample.vcf");
  std::vector<std::string> keys;
  for (const auto& line : Records(slice)) keys.push_back(Key(line));
  const std::string want = ShOrFail("bcftools view -H -R " + lists_ + "/two.bed " + store +
                                    "/sample.vcf.gz | cut -f1-5");
  EXPECT_EQ(Join(keys, "\n") + "\n", want);
}

// Compares a samples slice with bcftools view -s on the full view: samples, genotypes, AC/AN
// (bcftools' own query of both), and the slice's bytes: the parent's line, INFO with AC/AN
// recounted, the FORMAT column as it was, the chosen samples' columns unchanged.
void ExpectSamples(const std::string& store, const std::string& selector,
                   const std::string& bcftools_list) {
  SCOPED_TRACE(store + " " + selector);
  const std::string stem = fs::path(store).stem().string();
  const std::string full = store + "/" + stem + ".vcf",
                    sliced = store + "/" + selector + "/" + stem + ".vcf";
  const std::string fmt = "'%CHROM\\t%POS\\t%REF\\t%ALT\\t%INFO/AC\\t%INFO/AN[\\t%SAMPLE=%GT]\\n'";
  // The header only through the pipe: `query -l` stops reading after it (a whole VCF would get
  // SIGPIPE, which pipefail reports).
  EXPECT_EQ(ShOrFail("bcftools query -l " + sliced),
            ShOrFail("bcftools view --no-version -h -s '" + bcftools_list + "' " + full +
                     " | bcftools query -l"));
  EXPECT_EQ(ShOrFail("bcftools query -f " + fmt + " " + sliced),
            ShOrFail("bcftools view --no-version -s '" + bcftools_list + "' " + full +
                     " | bcftools query -f " + fmt));
  const std::string parent = ReadOrFail(full), slice = ReadOrFail(sliced);
  ASSERT_FALSE(Header(parent).empty());
  ASSERT_FALSE(Header(slice).empty());
  auto parent_cols = Split(Split(Header(parent), '\n').back(), '\t');
  auto slice_cols = Split(Split(Header(slice), '\n').back(), '\t');
  std::vector<size_t> pick;  // the parent's column of each of the slice's samples
  for (size_t c = 9; c < slice_cols.size(); ++c) {
    pick.push_back(std::find(parent_cols.begin(), parent_cols.end(), slice_cols[c]) -
                   parent_cols.begin());
  }
  const auto parent_records = Records(parent), slice_records = Records(slice);
  ASSERT_EQ(parent_records.size(), slice_records.size());
  for (size_t r = 0; r < parent_records.size(); ++r) {
    const auto p = Split(parent_records[r], '\t'), s = Split(slice_records[r], '\t');
    ASSERT_EQ(s.size(), 9 + pick.size());
    for (size_t c = 0; c < 7; ++c) EXPECT_EQ(s[c], p[c]);
    EXPECT_EQ(InfoBesidesCounts(s[7]), InfoBesidesCounts(p[7]));
    EXPECT_EQ(s[8], p[8]);
    for (size_t j = 0; j < pick.size(); ++j)
      EXPECT_EQ(s[9 + j], p[pick[j]]) << "record " << r << " sample " << slice_cols[9 + j];
  }
}

TEST_F(Slices, SamplesAreWhatBcftoolsKeepsWithAcAnRecounted) {
  ExpectSamples(Store("sample"), "samples=NA00003,NA00001", "NA00003,NA00001");
  ExpectSamples(Store("sample"), "samples=^NA00002", "^NA00002");
  ExpectSamples(Store("sample"), "samples=@cases", "NA00003,NA00001");
  ExpectSamples(Store("sample_v3_s2"), "samples=NA00003",
                "NA00003");  // the last, partial sample chunk
  ExpectSamples(Store("chr22_v9_s32"), "samples=@chr22",
                "HG00262,HG00100,HG00141,HG00182,HG00183");  // across 32-sample chunks
  ExpectSamples(Store("mixed_ploidy"), "samples=S2,S3", "S2,S3");
  // bcftools declares AC/AN whenever it subsets samples, even with nothing to recount (no GT).
  const std::string no_gt =
      Store("msprime_diploid") + "/format=^GT/samples=tsk_0/msprime_diploid.vcf";
  const std::string theirs = ShOrFail(
      "bcftools annotate -x FORMAT/GT " + Store("msprime_diploid") +
      "/msprime_diploid.vcf | bcftools view --no-version -s tsk_0 | grep -c '^##INFO=<ID=A[CN],'");
  EXPECT_EQ(ShOrFail("grep -c '^##INFO=<ID=A[CN],' " + no_gt), theirs);
  // The header gains bcftools' AC/AN lines only where it lacks them; samples.txt follows.
  EXPECT_EQ(ReadOrFail(Store("sample") + "/samples=@cases/samples.txt"), "NA00003\nNA00001\n");
}

TEST_F(Slices, FormatKeepsOnlyTheNamedFieldsAsBcftoolsAnnotateDoes) {
  const std::string store = Store("sample");
  for (const std::string& keys : {std::string("GT"), std::string("GQ,HQ"), std::string("DP")}) {
    SCOPED_TRACE(keys);
    std::string x;
    for (const auto& k : Split(keys, ',')) x += (x.empty() ? "^FORMAT/" : ",FORMAT/") + k;
    const std::string theirs =
        ShOrFail("bcftools annotate -x '" + x + "' " + store + "/sample.vcf | grep -v '^#'");
    const std::string ours = ReadOrFail(store + "/format=" + keys + "/sample.vcf");
    // bcftools' records, re-rendered: the FORMAT column and the sample columns must agree.
    const auto their_records = Records(theirs), our_records = Records(ours);
    ASSERT_EQ(their_records.size(), our_records.size());
    for (size_t r = 0; r < our_records.size(); ++r) {
      auto t = Split(their_records[r], '\t'), o = Split(our_records[r], '\t');
      ASSERT_EQ(t.size(), o.size());
      for (size_t c = 8; c < o.size(); ++c)
        EXPECT_EQ(o[c], t[c]) << "record " << r << " column " << c;
    }
    for (const auto& line : Split(Header(ours), '\n')) {  // only the kept fields' header lines
      if (!line.starts_with("##FORMAT=<ID=")) continue;
      EXPECT_NE(("," + keys + ",").find("," + line.substr(13, line.find(',') - 13) + ","),
                std::string::npos)
          << line;
    }
  }
}

TEST_F(Slices, SelectorsComposeInAnyOrderToTheSameBytes) {
  const std::string store = Store("chr22_v9_s32");
  const std::string a = ReadOrFail(
      store + "/region=chr22:10510500-10512000/samples=@chr22/format=GT/chr22_v9_s32.vcf");
  const std::string b = ReadOrFail(
      store + "/format=GT/samples=@chr22/region=chr22:10510500-10512000/chr22_v9_s32.vcf");
  const std::string c = ReadOrFail(
      store + "/samples=@chr22/region=chr22:10510500-10512000/format=GT/chr22_v9_s32.vcf");
  EXPECT_EQ(a, c);
  // format=GT before samples= keeps GT, so bcftools recounts in both orders here: the same bytes.
  EXPECT_EQ(a, b);
  EXPECT_FALSE(Records(a).empty());
  const std::string want = ShOrFail("bcftools view -H -r chr22:10510500-10512000 " + store +
                                    "/chr22_v9_s32.vcf.gz | cut -f1-5");
  std::vector<std::string> keys;
  for (const auto& line : Records(a)) keys.push_back(Key(line));
  EXPECT_EQ(Join(keys, "\n") + "\n", want);
  EXPECT_EQ(ShOrFail("bcftools query -l " + store +
                     "/region=chr22:10510500-10512000/samples=@chr22/format=GT/chr22_v9_s32.vcf"),
            "HG00262\nHG00100\nHG00141\nHG00182\nHG00183\n");
}

TEST_F(Slices, ASliceHoldsTheWholeViewSetMadeFromItsVcf) {
  const std::string dir = Store("chr22_v9_s32") + "/region=chr22:10510500-10512000/samples=@chr22";
  const std::string stem = "chr22_v9_s32";
  std::set<std::string> names;
  for (auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  for (const char* n : {".vcf", ".vcf.gz", ".vcf.gz.tbi", ".bed", ".bim", ".fam"})
    EXPECT_TRUE(names.count(stem + n)) << n;
  EXPECT_TRUE(names.count("sites.vcf"));
  EXPECT_TRUE(names.count("samples.txt"));
  // The twin is the VCF, its index what tabix writes for a copy of it.
  const std::string tmp = testutil::MakeTempDir("omicsfs-slice-");
  ASSERT_FALSE(tmp.empty());
  EXPECT_EQ(ShOrFail("bgzip -dc " + dir + "/" + stem + ".vcf.gz | md5sum"),
            ShOrFail("md5sum < " + dir + "/" + stem + ".vcf"));
  ShOrFail("cp " + dir + "/" + stem + ".vcf.gz " + tmp + "/copy.vcf.gz && tabix -p vcf " + tmp +
           "/copy.vcf.gz");
  EXPECT_EQ(ShOrFail("gzip -dc " + dir + "/" + stem + ".vcf.gz.tbi | md5sum"),
            ShOrFail("gzip -dc " + tmp + "/copy.vcf.gz.tbi | md5sum"));
  EXPECT_EQ(ShOrFail("bcftools view -H -r chr22:10511000-10511500 " + dir + "/" + stem + ".vcf.gz"),
            ShOrFail("bcftools view -H -r chr22:10511000-10511500 " + tmp + "/copy.vcf.gz"));
  // The PLINK fileset is plink2's conversion of the slice's VCF.
  ASSERT_EQ(RunCommand({"plink2", "--vcf", dir + "/" + stem + ".vcf", "--make-bed", "--double-id",
                        "--max-alleles", "2", "--vcf-half-call", "m", "--allow-extra-chr",
                        "--threads", "1", "--out", tmp + "/p"}),
            0);
  for (const char* ext : {".bed", ".bim", ".fam"}) {
    EXPECT_EQ(ReadOrFail(dir + "/" + stem + ext), ReadOrFail(tmp + "/p" + ext)) << ext;
  }
  fs_error ec;
  fs::remove_all(tmp, ec);
}

// A bad selector is a folder holding only ERROR.txt, one line that says what is wrong.
TEST_F(Slices, BadSelectorsGiveAFolderWithOnlyErrorTxt) {
  const std::string store = Store("sample");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"region=20:x-5", "'x' is not a position"},
      {"region=20:500-100", "the end is before the start"},
      {"region=chrZ:1-100", "no contig 'chrZ'"},
      {"regions=@bad", "not a BED interval"},
      {"regions=@absent", "cannot read"},
      {"samples=@unknown", "3 of 4 samples are not in sample.vcz: 'NA1', 'NA2', 'NA9'"},
      {"samples=@empty", "samples=@empty: no sample given"},
      {"samples=@folder", "not a regular file"},
      {"samples=@fifo", "not a regular file"},
      {"regions=@huge", "a position past 2^63"},
      {"samples=^NA00001,NA00002,NA00003", "no sample is left"},
      {"samples=NA00001,NA00001", "listed twice"},
      {"samples=@no%good", "[A-Za-z0-9._-]+"},
      {"format=XY", "1 of 1 FORMAT fields are not in sample.vcz: 'XY'"},
      {"region=20/region=19", "given twice"},
      {"colour=blue", "no slice key 'colour'"},
      // Any KEY=VALUE is a selector: another case is told the key.
      {"Samples=NA00001",
       "no slice key 'Samples' (this store knows region=, regions=@NAME, samples=, format=, "
       "types=, "
       "alleles=, filter=, min-af=, max-af=, include=, exclude=; keys are lower case: samples=)"},
      {"sample=NA00001",
       "no slice key 'sample' (this store knows region=, regions=@NAME, samples=, format=, types=, "
       "alleles=, filter=, min-af=, max-af=, include=, exclude=)"},
      {"9=x", "no slice key '9'"},
      // A name with what a terminal would not show is quoted with it escaped.
      {"samples=@spaced", "1 of 2 samples are not in sample.vcz: 'NA00001\\x20'"},
      {"region={20", "not {CONTIG} or {CONTIG}:RANGE"},
      {"region={21}:1-5", "no contig '21'"},
  };
  for (const auto& [name, says] : cases) testutil::ExpectOnlyErrorTxt(store + "/" + name, says);
  // Slices are never listed, the store's views are untouched, and names that are no selector
  // are absent.
  for (auto& e : fs::directory_iterator(store))
    EXPECT_EQ(e.path().filename().string().find('='), std::string::npos);
  struct stat st;
  EXPECT_NE(::stat((store + "/notaselector").c_str(), &st), 0);
  EXPECT_EQ(ReadOrFail(store + "/sample.vcf"), ReadOrFail(kCorpus + "/sample/expected.vcf"));
}

// A list saved with a byte-order mark and CRLF line ends reads as the same names.
TEST_F(Slices, AListWithABomAndCrlfLineEndsIsTheSameList) {
  const std::string store = Store("sample");
  EXPECT_EQ(ReadOrFail(store + "/samples=@windows/sample.vcf"),
            ReadOrFail(store + "/samples=NA00003,NA00001/sample.vcf"));
  EXPECT_EQ(ReadOrFail(store + "/samples=@windows/samples.txt"), "NA00003\nNA00001\n");
}

// htslib's brace form names a contig whatever it holds ({NAME}:BEG-END), as tabix reads it
// (bcftools 1.16's -r takes it without a word and selects nothing: tabix is the truth here).
TEST_F(Slices, TheBraceFormOfARegionIsHtslibs) {
  const std::string store = Store("sample");
  const std::string plain = ReadOrFail(store + "/region=20:1-20000/sample.vcf");
  EXPECT_EQ(ReadOrFail(store + "/region={20}:1-20000/sample.vcf"), plain);
  EXPECT_EQ(ReadOrFail(store + "/region={20}/sample.vcf"),
            ReadOrFail(store + "/region=20/sample.vcf"));
  const std::string want = ShOrFail("tabix " + store + "/sample.vcf.gz '{20}:1-20000' | cut -f1-5");
  std::vector<std::string> keys;
  for (const auto& line : Records(plain)) keys.push_back(Key(line));
  EXPECT_EQ(Join(keys, "\n") + (keys.empty() ? "" : "\n"), want);
}

// Two samples of one ID: choosing the ID is ambiguous (refused, as every kind refuses a shared
// name), ^ drops both. A copy of sample.vcz whose sample_id names samples 1 and 3 alike.
TEST_F(Slices, ASampleIdTheStoreHoldsTwiceIsAmbiguous) {
  const std::string src = testutil::MakeTempDir("omicsfs-vcz-dup-");
  ASSERT_FALSE(src.empty());
  ASSERT_EQ(RunCommand({"cp", "-r", kCorpus + "/sample/sample.vcz", src + "/dup.vcz"}), 0);
  testutil::ZarrArraySpec spec;
  spec.dtype = "|O";
  spec.shape = spec.chunks = {3};
  spec.dimension_names = {"samples"};
  fs::remove_all(src + "/dup.vcz/sample_id");
  ASSERT_TRUE(testutil::WriteZarrArray(src + "/dup.vcz", "sample_id", spec, "",
                                       {"NA00001", "NA00002", "NA00001"})
                  .ok());
  {
    auto mount = MountedFs::Start(OMICSFS_BINARY, src, {});
    ASSERT_NE(mount, nullptr);
    const std::string store = mount->path() + "/dup.vcz";
    testutil::ExpectOnlyErrorTxt(store + "/samples=NA00001",
                                 "samples=: sample 'NA00001' is ambiguous: 2 samples of dup.vcz "
                                 "bear that name (exclude them with ^)");
    EXPECT_EQ(ReadOrFail(store + "/samples=^NA00001/samples.txt"), "NA00002\n");
    EXPECT_EQ(ReadOrFail(store + "/samples=NA00002/samples.txt"), "NA00002\n");
  }
  fs_error ec;
  fs::remove_all(src, ec);
}

TEST_F(Slices, AnEditedListServesTheNewSubsetAndOpenFilesKeepTheirBytes) {
  const std::string list = lists_ + "/edited.txt";
  std::ofstream(list) << "NA00001\n";
  const std::string path = Store("sample") + "/samples=@edited/sample.vcf";
  const std::string before = ReadOrFail(path);
  EXPECT_EQ(ShOrFail("bcftools query -l " + path), "NA00001\n");
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  { std::ofstream(list + ".new") << "NA00002\nNA00003\n"; }
  ASSERT_EQ(::rename((list + ".new").c_str(), list.c_str()), 0);
  // The next open sees the new list.
  EXPECT_EQ(ShOrFail("bcftools query -l " + path), "NA00002\nNA00003\n");
  // The file open before keeps its bytes (or refuses: never a mix).
  std::string again(before.size() + 16, '\0');
  const ssize_t n = ::pread(fd, again.data(), again.size(), 0);
  if (n >= 0) {
    again.resize(n);
    EXPECT_EQ(again, before);
  } else {
    EXPECT_EQ(errno, ESTALE);
  }
  ::close(fd);
}

TEST_F(Slices, AListOnlyItsOwnerMayReadMakesItsSlicesOwnerOnly) {
  const std::string list = lists_ + "/private.txt";
  std::ofstream(list) << "NA00002\n";
  ASSERT_EQ(::chmod(list.c_str(), 0600), 0);
  const std::string dir = Store("sample") + "/samples=@private";
  struct stat st;
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0500u);
  ASSERT_EQ(::stat((dir + "/sample.vcf").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0400u);
  ASSERT_EQ(::stat((Store("sample") + "/samples=NA00002/sample.vcf").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0444u);
}

// A status line's number: "NAME: N ..." (-1 when absent).
long StatusNumber(const std::string& status, const std::string& name) {
  const size_t at = status.find(name + ": ");
  return at == std::string::npos ? -1 : std::stol(status.substr(at + name.size() + 2));
}

TEST_F(Slices, ManySlicesDoNotGrowTheDaemon) {
  const std::string store = Store("multi_contig_v500");
  const std::string status_path = mount_->path() + "/.omicsfs/status";
  auto visit = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      const std::string dir = store + "/region=1:" + std::to_string(1000 * i + 1) + "-" +
                              std::to_string(1000 * i + 500);
      struct stat st;
      ASSERT_EQ(::stat((dir + "/sites.vcf").c_str(), &st), 0) << dir << ": errno " << errno;
    }
  };
  // Other stores' slice folders (earlier tests) count too; this store may add 64 at most.
  const long others = StatusNumber(ReadOrFail(status_path), "slice folders");
  ASSERT_GE(others, 0);
  visit(0, 100);
  // The kernel keeps every folder it saw; past the store's bound (64) the daemon asks it to drop
  // the least recently used, and forgets them when it does.
  auto settled = [&](long* folders, long* nodes) {
    for (int tries = 0; tries < 100; ++tries) {
      const std::string status = ReadOrFail(status_path);
      *folders = StatusNumber(status, "slice folders");
      *nodes = StatusNumber(status, "nodes");
      if (*folders >= 0 && *folders <= others + 64) return;
      ::usleep(100 * 1000);
    }
  };
  long folders = 0, nodes_after_100 = 0, nodes_after_1000 = 0;
  settled(&folders, &nodes_after_100);
  EXPECT_LE(folders, others + 64);
  visit(100, 1000);
  settled(&folders, &nodes_after_1000);
  EXPECT_LE(folders, others + 64);
  // Ten times the slices, not ten times the nodes: freed inodes are reused.
  EXPECT_LE(nodes_after_1000, nodes_after_100 + 64 * 20)
      << nodes_after_100 << " then " << nodes_after_1000;
}

// Readers in parallel on many slices of one store, past its bound (folders made, dropped and
// made again while others read): every read equals the single-threaded one.
TEST_F(Slices, ParallelReadersOfManySlicesAgree) {
  const std::string store = Store("multi_contig_v500");
  std::vector<std::string> paths, want;
  for (int i = 0; i < 80; ++i) {
    paths.push_back(store + "/region=" + std::to_string(i % 5) + ":" +
                    std::to_string(1 + 2000 * i) + "-" + std::to_string(2000 * i + 30000) +
                    "/multi_contig_v500.vcf");
    want.push_back(ReadOrFail(paths.back()));
  }
  std::atomic<int> wrong{0}, failed{0}, last_errno{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&, t] {
      for (int k = 0; k < 160; ++k) {
        const size_t i = (k * 7 + t * 13) % paths.size();
        std::string got;
        int err = 0;
        if (!ReadWhole(paths[i], &got, &err)) {
          ++failed;
          last_errno = err;
        } else if (got != want[i]) {
          ++wrong;
        }
      }
    });
  }
  for (auto& r : readers) r.join();
  EXPECT_EQ(failed.load(), 0) << "errno " << last_errno.load();
  EXPECT_EQ(wrong.load(), 0);
}

// A zipped store has the same slices as its folder.
TEST_F(Slices, AZippedStoreIsSlicedAsItsFolder) {
  const std::string tmp = testutil::MakeTempDir("omicsfs-zipped-");
  ASSERT_FALSE(tmp.empty());
  ShOrFail("cd " + kCorpus + "/sample/sample.vcz && zip -q -r -X " + tmp + "/sample.vcz.zip .");
  auto zipped = MountedFs::Start(OMICSFS_BINARY, tmp, {"-o", "lists=" + lists_});
  ASSERT_NE(zipped, nullptr);
  for (const std::string cut :
       {"region=20:1-1230237/samples=@cases", "format=GT,DP/samples=^NA00002", "regions=@two"}) {
    SCOPED_TRACE(cut);
    EXPECT_EQ(ReadOrFail(zipped->path() + "/sample.vcz/" + cut + "/sample.vcf"),
              ReadOrFail(Store("sample") + "/" + cut + "/sample.vcf"));
  }
  zipped.reset();
  fs_error ec;
  fs::remove_all(tmp, ec);
}

// omicsfs ls and cat take slice paths too.
TEST_F(Slices, LsAndCatTakeSlicePaths) {
  std::string out;
  const std::string vpath = "sample/sample.vcz/region=20:1-20000/samples=@cases/sample.vcf";
  ASSERT_EQ(RunCommand({OMICSFS_BINARY, "cat", "-o", "lists=" + lists_, kCorpus, vpath}, &out), 0);
  EXPECT_EQ(out, ReadOrFail(mount_->path() + "/" + vpath));
  ASSERT_EQ(RunCommand({OMICSFS_BINARY, "ls", "-o", "lists=" + lists_, kCorpus,
                        "sample/sample.vcz/format=GT"},
                       &out),
            0);
  EXPECT_NE(out.find("sample.vcf.gz.tbi\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace omicsfs
