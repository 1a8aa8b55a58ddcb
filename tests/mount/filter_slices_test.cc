// Filter slices of VCF Zarr stores (types=, alleles=, filter=, min-af=, max-af=, include=,
// exclude=) through a real mount, against bcftools run here on the full mounted view: the
// slice's records are the ones `bcftools view FILTER FULL.vcf` keeps, in its order, each the
// parent view's own line; with samples= (either order) those of `bcftools view -s L FULL |
// bcftools view FILTER`; with region= those of `bcftools view -r R FULL.vcf.gz | bcftools view
// FILTER`; the PLINK fileset of a filtered slice is plink2's of the slice's VCF.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include "testutil/mount_fixture.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::Join;
using testutil::MountedFs;
using testutil::ReadOrFail;
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

std::vector<std::string> Records(const std::string& vcf) {
  std::vector<std::string> out;
  for (auto& line : Split(vcf, '\n')) {
    if (!line.empty() && line[0] != '#') out.push_back(std::move(line));
  }
  return out;
}

std::string Key(const std::string& line) {
  auto f = Split(line, '\t');
  f.resize(5);
  return Join(f, "\t");
}

std::string Keys(const std::vector<std::string>& records) {
  std::string out;
  for (const auto& r : records) out += Key(r) + "\n";
  return out;
}

std::string Quoted(const std::string& s) {  // for sh -c: single quotes
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A path component's value: '/' and '%' escaped as the selector reads them.
std::string Escaped(const std::string& expr) {
  std::string out;
  for (char c : expr) {
    if (c == '%')
      out += "%25";
    else if (c == '/')
      out += "%2F";
    else
      out += c;
  }
  return out;
}

class FilterSlices : public testutil::SliceSuite<FilterSlices> {
 protected:
  static void SetUpTestSuite() {
    MakeLists("omicsfs-filter-lists-");
    std::ofstream(lists_ + "/deep.expr") << "INFO/DP>10 && FMT/GQ>=40\n";
    // Its own index_dir: the rows a filter keeps are persisted there (a fresh one per run).
    fs::create_directory(lists_ + "/index");
    mount_ = MountedFs::Start(OMICSFS_BINARY, kCorpus,
                              {"-o", "lists=" + lists_ + ",index_dir=" + lists_ + "/index"})
                 .release();
    ASSERT_NE(mount_, nullptr);
  }
  static std::vector<std::string> Stores() {
    std::vector<std::string> out;
    for (auto& folder : fs::directory_iterator(kCorpus)) {
      if (!fs::is_directory(folder.path())) continue;
      for (auto& e : fs::directory_iterator(folder.path())) {
        if (e.path().extension() == ".vcz" && fs::is_directory(e.path()))
          out.push_back(folder.path().filename().string());
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  static std::string Store(const std::string& folder) {
    for (auto& e : fs::directory_iterator(mount_->path() + "/" + folder)) {
      if (e.path().extension() == ".vcz") return e.path().string();
    }
    ADD_FAILURE() << "no store in " << folder;
    return "";
  }
  static std::string Stem(const std::string& store) { return fs::path(store).stem().string(); }

  // The slice `path` (below the store) holds the parent's lines of the records the shell
  // pipeline `want` prints (bcftools view -H ...), in its order.
  static void Expect(const std::string& store, const std::string& path, const std::string& want) {
    SCOPED_TRACE(store + "/" + path);
    const std::string stem = Stem(store);
    const std::string slice_path = store + "/" + path + "/" + stem + ".vcf";
    std::string slice;
    if (!testutil::ReadWhole(slice_path, &slice)) {
      std::string error;
      testutil::ReadWhole(store + "/" + path + "/ERROR.txt", &error);
      ADD_FAILURE() << "cannot read " << slice_path << ": " << error;
      return;
    }
    const auto parent = Records(ReadOrFail(store + "/" + stem + ".vcf"));
    const std::set<std::string> lines(parent.begin(), parent.end());
    const auto records = Records(slice);
    for (const auto& line : records)
      EXPECT_TRUE(lines.count(line) || path.find("samples=") != std::string::npos)
          << "not a line of the parent: " << line.substr(0, 80);
    EXPECT_EQ(Keys(records), ShOrFail(want + " | cut -f1-5"));
  }
  static std::string ErrorOf(const std::string& dir) {
    std::string text;
    testutil::ReadWhole(dir + "/ERROR.txt", &text);
    return text;
  }
};

// Each simple selector over every corpus store, against bcftools on the full view.
TEST_F(FilterSlices, SimpleSelectorsKeepWhatBcftoolsKeeps) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"types=snps", "-v snps"},
      {"types=indels,mnps", "-v indels,mnps"},
      {"types=^snps", "-V snps"},
      {"types=other", "-v other"},
      {"alleles=2", "-m2 -M2"},
      {"alleles=3-", "-m3"},
      {"alleles=1-2", "-m1 -M2"},
      {"filter=PASS", "-f PASS"},
      {"filter=.,q10", "-f .,q10"},
      {"min-af=0.1", "-q 0.1"},
      {"min-af=0.05:minor", "-q 0.05:minor"},
      // (-Q/-q :alt1 of a record without ALT reads a stale count in bcftools: not compared)
      {"alleles=2-/max-af=0.5:alt1", "-m2 -Q 0.5:alt1"},
      {"max-af=0.3:nonmajor", "-Q 0.3:nonmajor"},
      {"min-af=0.6:major", "-q 0.6:major"},
  };
  const std::vector<std::string> stores = Stores();
  ASSERT_GE(stores.size(), 20u);
  for (const std::string& folder : stores) {
    const std::string store = Store(folder), stem = Stem(store);
    for (const auto& [sel, opts] : cases) {
      Expect(store, sel, "bcftools view -H " + opts + " " + store + "/" + stem + ".vcf");
    }
  }
}

// Conditions together, and with samples= and region= in either order: the filter sees the
// slice's samples and recounted AC/AN; bytes are the slice's own (both orders the same).
TEST_F(FilterSlices, ComposeWithSamplesAndRegionInEitherOrder) {
  struct Case {
    std::string folder, samples, region, sel, opts;
  };
  const std::vector<Case> cases = {
      {"sample", "NA00003,NA00001", "20", "min-af=0.3", "-q 0.3"},
      {"sample", "NA00002", "20:1-1230237", "types=snps/alleles=2", "-v snps -m2 -M2"},
      {"chr22", "HG00262,HG00100,HG00141", "chr22:10510000-10520000", "min-af=0.1:minor",
       "-q 0.1:minor"},
      {"chr22", "^HG00100", "chr22:10500000-10600000", "max-af=0.2", "-Q 0.2"},
      {"1kg_2020_chrM", "HG00096,HG00097,HG00099", "chrM:1-5000", "min-af=0.01/types=snps",
       "-q 0.01 -v snps"},
      {"msprime_diploid", "tsk_0,tsk_1,tsk_2", "1:3-9", "min-af=0.2:minor", "-q 0.2:minor"},
  };
  for (const Case& c : cases) {
    const std::string store = Store(c.folder), stem = Stem(store);
    const std::string full = store + "/" + stem;
    // samples= and the filter, both orders.
    const std::string want_s =
        "bcftools view -s " + Quoted(c.samples) + " " + full + ".vcf | bcftools view -H " + c.opts;
    Expect(store, "samples=" + c.samples + "/" + c.sel, want_s);
    Expect(store, c.sel + "/samples=" + c.samples, want_s);
    EXPECT_EQ(ReadOrFail(store + "/samples=" + c.samples + "/" + c.sel + "/" + stem + ".vcf"),
              ReadOrFail(store + "/" + c.sel + "/samples=" + c.samples + "/" + stem + ".vcf"));
    // region= and the filter, both orders.
    const std::string want_r =
        "bcftools view -r " + c.region + " " + full + ".vcf.gz | bcftools view -H " + c.opts;
    Expect(store, "region=" + c.region + "/" + c.sel, want_r);
    Expect(store, c.sel + "/region=" + c.region, want_r);
    // All three.
    Expect(store, c.sel + "/region=" + c.region + "/samples=" + c.samples,
           "bcftools view -r " + c.region + " -s " + Quoted(c.samples) + " " + full +
               ".vcf.gz | bcftools view -H " + c.opts);
  }
}

// Every view of a filtered slice is the view of its records: the .vcf.gz decompresses to the
// .vcf, the BCF is bcftools' of it, and the PLINK fileset is plink2's of the slice's VCF.
TEST_F(FilterSlices, EveryViewIsTheViewOfTheFilteredRecords) {
  const std::string tmp = testutil::MakeTempDir("omicsfs-filter-plink-");
  for (const std::string folder : {"chr22", "sample", "1kg_2020_chrM"}) {
    SCOPED_TRACE(folder);
    const std::string store = Store(folder), stem = Stem(store);
    const std::string dir = store + "/types=snps/alleles=2/min-af=0.01:minor";
    const std::string vcf = ReadOrFail(dir + "/" + stem + ".vcf");
    EXPECT_EQ(ShOrFail("gzip -dc " + dir + "/" + stem + ".vcf.gz"), vcf);
    EXPECT_EQ(ShOrFail("bcftools view -H " + dir + "/" + stem + ".bcf | cut -f1-5"),
              Keys(Records(vcf)));
    struct stat st {};
    if (::stat((dir + "/" + stem + ".bed").c_str(), &st) != 0) continue;  // no samples
    ASSERT_EQ(RunCommand({"plink2", "--vcf", dir + "/" + stem + ".vcf", "--make-bed", "--double-id",
                          "--max-alleles", "2", "--vcf-half-call", "m", "--allow-extra-chr",
                          "--threads", "1", "--out", tmp + "/" + folder}),
              0);
    for (const char* ext : {".bed", ".bim", ".fam"})
      EXPECT_EQ(ReadOrFail(dir + "/" + stem + ext), ReadOrFail(tmp + "/" + folder + ext)) << ext;
  }
  fs_error ec;
  fs::remove_all(tmp, ec);
}

// bcftools -i / -e expressions (INFO and FORMAT fields, missing values, arrays, GT= classes,
// computed counts, functions, & vs &&), each over several stores: the records bcftools keeps.
TEST_F(FilterSlices, ExpressionsKeepWhatBcftoolsKeeps) {
  const std::vector<std::string> everywhere = {
      "QUAL>30",
      "QUAL=\".\" || QUAL<20",
      "GT=\"het\"",
      "GT=\"hom\" && GT!=\"ref\"",
      "GT=\"mis\"",
      "GT=\"alt\"",
      "N_MISSING>0",
      "F_MISSING>=0.3",
      "N_ALT>=2",
      "MAF<0.05",
      "MAF[*]<0.05",
      "AC>1",
      "AN>=4",
      "AF[0]>0.1 || AF[1]>0.1",
      "TYPE=\"snp\" && FILTER=\"PASS\"",
      "TYPE~\"indel\" || TYPE=\"ref\"",
      "FILTER!=\"PASS\"",
      "ID!=\".\"",
      "strlen(REF)>1 || strlen(ALT)>1",
      "abs(POS-1000)<900",
      "REF=\"A\" && ALT=\"G\"",
      "POS>=100 && POS<=20000",
  };
  const std::vector<std::pair<std::string, std::vector<std::string>>> per_store = {
      {"sample",
       {"INFO/DP>10", "INFO/DP!=14", "INFO/DP=\".\"", "FMT/DP>5 & FMT/GQ>40",
        "FMT/DP>5 && FMT/GQ>40", "FMT/HQ[*]>50", "FMT/DP=\".\"", "FMT/DP!=8", "AF[1]>0.4",
        "INFO/AF=\".\"", "DB=1 || H2=1", "INFO/DP>10 | FMT/GQ>48", "FMT/GQ>40 & GT=\"het\"",
        "INFO/DP+1>12 && QUAL<40", "FMT/DP*2>10", "AA=\"T\"", "CHROM=\"X\"", "ID=\"rs6054257\""}},
      {"chr22",
       {"INFO/DP>1000 && QUAL<100", "FMT/DP>=10 & FMT/GQ>=30", "FMT/AD[*]>20",
        "INFO/MQ<50 || INFO/FS>10", "MQ=\".\"", "INFO/AC/INFO/AN>0.3", "MAC>=2",
        "FMT/DP<5 | QUAL<20", "INFO/DP/N_SAMPLES>20"}},
      {"field_type_combos",
       {"IIA=\".\"", "IIA<0", "IFA=\".\"", "IF1>0.5", "II2[1]>3", "IS1=\"abc\"", "IS2!=\".\"",
        "ISA[0]=\"x\"", "IB0=1", "FI2[*]>2", "II1+IF1>3", "FIR>=1 & FF1<2"}},
  };
  std::vector<std::pair<std::string, std::string>> cases;  // folder, expression
  for (const std::string folder : {"sample", "chr22", "chr_m_indels", "1kg_2020_chrM",
                                   "mixed_ploidy", "triploid", "msprime_diploid"}) {
    for (const auto& e : everywhere) cases.emplace_back(folder, e);
  }
  for (const auto& [folder, exprs] : per_store)
    for (const auto& e : exprs) cases.emplace_back(folder, e);
  for (const auto& [folder, e] : cases) {
    const std::string store = Store(folder), stem = Stem(store);
    const std::string full = store + "/" + stem + ".vcf";
    Expect(store, "include=" + Escaped(e), "bcftools view -H -i " + Quoted(e) + " " + full);
  }
  // exclude= is -e; a few over one store.
  const std::string store = Store("sample"), full = store + "/sample.vcf";
  for (const std::string e : {"GT=\"mis\"", "INFO/DP!=14", "FMT/DP>5 & FMT/GQ>40"})
    Expect(store, "exclude=" + Escaped(e), "bcftools view -H -e " + Quoted(e) + " " + full);
  // A list: LISTS/NAME.expr, verbatim ('/' as it is).
  Expect(store, "include=@deep", "bcftools view -H -i 'INFO/DP>10 && FMT/GQ>=40' " + full);
}

// Expressions see the slice's samples (and their recounted AC/AN) and its region, in either order.
TEST_F(FilterSlices, ExpressionsComposeWithSamplesAndRegion) {
  struct Case {
    std::string folder, samples, region, expr;
  };
  const std::vector<Case> cases = {
      {"sample", "NA00003,NA00001", "20", "GT=\"het\""},
      {"sample", "NA00002", "20:1-1230237", "AC>0 && FMT/DP>3"},
      {"chr22", "HG00262,HG00100,HG00141", "chr22:10510000-10520000", "MAF>=0.1 & N_MISSING=0"},
      {"chr22", "^HG00100", "chr22:10500000-10600000", "F_MISSING<0.2 && FMT/GQ>30"},
  };
  for (const Case& c : cases) {
    const std::string store = Store(c.folder), stem = Stem(store);
    const std::string full = store + "/" + stem;
    const std::string sel = "include=" + Escaped(c.expr);
    const std::string want_s = "bcftools view -s " + Quoted(c.samples) + " " + full +
                               ".vcf | bcftools view -H -i " + Quoted(c.expr);
    Expect(store, "samples=" + c.samples + "/" + sel, want_s);
    Expect(store, sel + "/samples=" + c.samples, want_s);
    const std::string want_r = "bcftools view -r " + c.region + " " + full +
                               ".vcf.gz | bcftools view -H -i " + Quoted(c.expr);
    Expect(store, "region=" + c.region + "/" + sel, want_r);
    Expect(store, sel + "/region=" + c.region, want_r);
  }
}

// Files of index_dir that hold the rows of a filter (their key says so).
size_t KeptFiles(const std::string& dir) {
  size_t n = 0;
  for (auto& e : fs::recursive_directory_iterator(dir)) {
    std::string bytes;
    if (e.path().extension() == ".rix" && testutil::ReadWhole(e.path().string(), &bytes))
      n += bytes.find("\nfilter rows ") != std::string::npos;
  }
  return n;
}

// The rows a filter keeps are computed once per store and filter, kept in index_dir, and shared
// by every slice that asks the same (any order, other FORMAT fields) and by a later mount.
TEST_F(FilterSlices, KeptRowsAreSharedAndPersisted) {
  const std::string store = Store("chr22"), stem = Stem(store);
  const std::string index = lists_ + "/index";
  const size_t before = KeptFiles(index);
  const std::string vcf = ReadOrFail(store + "/types=mnps,other/alleles=2-4/" + stem + ".vcf");
  EXPECT_EQ(KeptFiles(index), before + 2);  // each folder of the path: types=, then both
  ReadOrFail(store + "/alleles=2-4/types=other,mnps/" + stem + ".vcf");  // + alleles= alone
  ReadOrFail(store + "/alleles=2-4/format=GT/types=mnps,other/" + stem + ".vcf");
  EXPECT_EQ(KeptFiles(index), before + 3);  // the same filters: the same rows
  ReadOrFail(store + "/alleles=2-4/samples=HG00100/types=mnps,other/" + stem + ".vcf");
  EXPECT_EQ(KeptFiles(index), before + 5);  // other samples: other counts (two folders)
  // A later mount reads them back (the same bytes).
  auto again = MountedFs::Start(OMICSFS_BINARY, kCorpus, {"-o", "index_dir=" + index});
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(ReadOrFail(again->path() + "/chr22/" + stem + ".vcz/types=mnps,other/alleles=2-4/" +
                       stem + ".vcf"),
            vcf);
  EXPECT_EQ(KeptFiles(index), before + 5);
}

// A bad condition is a folder holding only ERROR.txt, one line naming what is wrong.
TEST_F(FilterSlices, BadConditionsGiveErrorTxt) {
  const std::string store = Store("sample");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"types=snp", "unknown type 'snp'"},
      {"alleles=0", "not N, N-M or N-"},
      {"alleles=3-2", "not N, N-M or N-"},
      {"min-af=x", "not a frequency"},
      {"min-af=0.1:rare", "unknown allele type 'rare'"},
      {"alleles=^2", "cannot exclude"},
      {"types=snps/types=indels", "given twice"},
      {"types=snps/types=indels", "given twice"},
      {"include=QUAL>1/exclude=QUAL<1", "cannot both be given"},
      // Expressions: syntax, an unknown tag, a type mismatch, what is not supported.
      {"include=QUAL>", "ends too early"},
      {"include=(QUAL>1", "'(' is not closed"},
      {"include=INFO%2FNOPE>1", "\"NOPE\" is not defined as INFO"},
      {"include=DP>1", "ambiguous: both INFO/DP and FORMAT/DP"},
      {"include=REF>1", "a string compared with a number"},
      {"include=max(FMT%2FDP)>1", "the function max() is not supported"},
      {"include=INFO%2FAA~\"T\"", "regular expressions"},
      {"include=FMT%2FHQ[0:1]>1", "is not supported"},
      {"include=QUAL", "a value, not a condition"},
      {"include=@absent", "cannot read"},
  };
  for (const auto& [sel, message] : cases) {
    SCOPED_TRACE(sel);
    const std::string dir = store + "/" + sel;
    const std::string error = ErrorOf(dir);
    EXPECT_NE(error.find(message), std::string::npos) << error;
    EXPECT_EQ(std::count(error.begin(), error.end(), '\n'), 1) << error;
  }
}

}  // namespace
}  // namespace omicsfs
