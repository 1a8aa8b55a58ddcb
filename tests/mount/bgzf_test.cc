// BGZF twins and their region indexes through real mounts, with the real tools as reference:
// every corpus VCF Zarr and BPCells fragments view's `.gz` equals `bgzip -l 0 -c` of the plain
// view (fragments: the same with a first block of 32 640 bytes, which bedtools needs) and passes
// `bgzip -t`; bedtools intersect (the twin as -a and as -b) and merge read it as they read the
// plain view; its `.tbi` and `.csi` decompress to what `tabix [-C]` writes for a copy (or both
// refuse); bcftools view -r, tabix REGION and pysam fetch answer the same on the
// mount as on the indexed copy, without a warning, and so do tabix -l, tabix and bcftools over
// the mount's `.gz` with one of its indexes alone beside it; random reads and tail equal a
// sequential read. VCF stores get a .csi always and a .tbi where tabix writes one: stores written
// here with contig lengths of 2^31 - 1 and every end at or before 2^29 get both, one with an end
// past 2^29 (or positions past 6·10^8) only the .csi; an unsorted store's index is EIO with a log
// line, its plain and .gz views keep working.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "testutil/mount_fixture.h"
#include "testutil/store_writer.h"
#include "testutil/zarr_writer.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::MountedFs;
using testutil::ReadWhole;

const std::string kCorpus = OMICSFS_CORPUS_DIR;

using testutil::TempDir;

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `cmd` in sh; stdout into *out, stderr into *err. Returns the exit status.
int Sh(const std::string& cmd, std::string* out, std::string* err, const std::string& tmp) {
  const std::string err_path = tmp + "/stderr.txt";
  int rc = testutil::RunCommand({"sh", "-c", cmd + " 2>" + Quote(err_path)}, out);
  if (err != nullptr) ReadWhole(err_path, err);
  return rc;
}

bool WriteFile(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary);
  f << data;
  return static_cast<bool>(f);
}

struct Region {
  std::string contig;
  int64_t lo = 0, hi = 0;  // 1-based, inclusive
};

// Whole contigs (at most two) and two windows of each, from the plain text's first two columns.
std::vector<std::string> RegionsOf(const std::string& text) {
  std::vector<Region> contigs;
  std::istringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t t1 = line.find('\t'), t2 = line.find('\t', t1 + 1);
    const std::string contig = line.substr(0, t1);
    const int64_t pos = std::stoll(line.substr(t1 + 1, t2 - t1 - 1));
    if (contigs.empty() || contigs.back().contig != contig) contigs.push_back({contig, pos, pos});
    contigs.back().lo = std::min(contigs.back().lo, pos);
    contigs.back().hi = std::max(contigs.back().hi, pos);
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < contigs.size() && i < 2; ++i) {
    const Region& r = contigs[i];
    out.push_back(r.contig);
    const int64_t mid = r.lo + (r.hi - r.lo) / 2;
    out.push_back(r.contig + ":" + std::to_string(std::max<int64_t>(1, r.lo)) + "-" +
                  std::to_string(mid));
    out.push_back(r.contig + ":" + std::to_string(mid + 1) + "-" + std::to_string(r.hi + 1000));
  }
  return out;
}

// The same query on the mounted file and on the indexed copy: same output, no stderr on the mount.
void ExpectSameQuery(const std::string& what, const std::string& on_mount,
                     const std::string& on_copy, const std::string& tmp) {
  std::string mine, theirs, err, copy_err;
  const int rc = Sh(on_mount, &mine, &err, tmp);
  const int copy_rc = Sh(on_copy, &theirs, &copy_err, tmp);
  EXPECT_EQ(rc, copy_rc) << what << ": " << err;
  EXPECT_TRUE(mine == theirs) << what << ": " << mine.size() << " vs " << theirs.size() << " bytes";
  EXPECT_EQ(err, copy_err) << what;
  // htslib warns about nothing in our files: only the store's own header draws warnings (tag
  // names that VCF 4.3 does not allow, from the source VCF), on the copy just the same.
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.rfind("[W::bcf_hrec_check] Invalid tag name", 0), 0u) << what << ": " << line;
  }
}

// What the twin of `plain` must be, from bgzip itself: `bgzip -l 0 -c`, or for a BED-like view
// (`bedtools_layout`) the same with its first block cut at 32 640 bytes: bgzip's blocks of the
// first 32 640 bytes (without their EOF block), then bgzip's of the rest.
std::string Twin(const std::string& plain, bool bedtools_layout, const std::string& tmp) {
  const size_t cut = bedtools_layout ? std::min<size_t>(plain.size(), 32640) : plain.size();
  std::string head, tail;
  EXPECT_TRUE(WriteFile(tmp + "/head", plain.substr(0, cut)));
  EXPECT_TRUE(WriteFile(tmp + "/tail", plain.substr(cut)));
  EXPECT_EQ(Sh("bgzip -l 0 -c " + Quote(tmp + "/head"), &head, nullptr, tmp), 0);
  if (cut == plain.size()) return head;
  EXPECT_EQ(Sh("bgzip -l 0 -c " + Quote(tmp + "/tail"), &tail, nullptr, tmp), 0);
  return head.substr(0, head.size() - 28) + tail;
}

// About 60 intervals of 1 kb around records spread over the text (BED: col 2; VCF: POS - 1).
std::string PeaksOf(const std::string& text, bool vcf) {
  std::vector<std::pair<std::string, int64_t>> starts;
  std::istringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t t1 = line.find('\t'), t2 = line.find('\t', t1 + 1);
    const int64_t pos = std::stoll(line.substr(t1 + 1, t2 - t1 - 1));
    starts.emplace_back(line.substr(0, t1), pos - (vcf ? 1 : 0));
  }
  std::string out;
  const size_t step = std::max<size_t>(1, starts.size() / 60);
  for (size_t i = 0; i < starts.size(); i += step) {
    const auto& [contig, at] = starts[i];
    out += contig + "\t" + std::to_string(std::max<int64_t>(0, at - 500)) + "\t" +
           std::to_string(at + 500) + "\n";
  }
  return out;
}

// bedtools reads the twin NAME.gz as it reads NAME: intersect with it as -b (counts per peak) and
// as -a, and merge print the same, or refuse the same record (a zero-length fragment in the
// 10x form). (bedtools 2.30 read nothing from `bgzip -l 0` bytes of BED text longer than 32 KiB,
// and exited 0.)
void ExpectBedtoolsReads(const std::string& dir, const std::string& name, bool vcf,
                         const std::string& tmp) {
  SCOPED_TRACE("bedtools " + dir + "/" + name + ".gz");
  std::string plain;
  ASSERT_TRUE(ReadWhole(dir + "/" + name, &plain));
  const std::string peaks = tmp + "/peaks.bed";
  ASSERT_TRUE(WriteFile(peaks, PeaksOf(plain, vcf)));
  const std::string gz = dir + "/" + name + ".gz", text = dir + "/" + name;
  for (const std::string& cmd :
       {"bedtools intersect -c -a " + Quote(peaks) + " -b ",
        "bedtools intersect -u -b " + Quote(peaks) + " -a ", std::string("bedtools merge -i ")}) {
    std::string mine, theirs, err, text_err;
    const int rc = Sh(cmd + Quote(gz), &mine, &err, tmp);
    EXPECT_EQ(rc, Sh(cmd + Quote(text), &theirs, &text_err, tmp)) << cmd << ": " << err;
    EXPECT_TRUE(mine == theirs) << cmd << "GZ: " << mine.size() << " bytes, on the text "
                                << theirs.size();
    for (size_t at = 0; (at = err.find(gz, at)) != std::string::npos; at += text.size()) {
      err.replace(at, gz.size(), text);
    }
    EXPECT_EQ(err, text_err) << cmd;
    if (rc == 0) {
      EXPECT_EQ(err, "") << cmd;
      EXPECT_NE(theirs, "") << cmd;
    } else {
      EXPECT_NE(text_err.find("Invalid record"), std::string::npos) << cmd << ": " << text_err;
    }
  }
}

const char kPysam[] = R"(
import sys, pysam
path, region, kind, ext = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
if kind == "vcf":
    with pysam.VariantFile(path, index_filename=path + ext) as f:
        for r in f.fetch(region=region):
            sys.stdout.write(str(r))
else:
    with pysam.TabixFile(path, index=path + ext, encoding="utf-8") as f:
        for line in f.fetch(region=region):
            sys.stdout.write(line + "\n")
)";

// One view NAME of a mounted store: NAME.gz, its indexes, region queries, random reads. Queries
// through one index alone (`tabix -l`, then tabix and bcftools over the first `forced_regions`
// regions), and pysam through every index with `each_pysam` (else the first: the .tbi where there
// is one; tabix and bcftools on the mount read the .csi when both are there).
void CheckView(const std::string& dir, const std::string& name, bool vcf,
               const std::string& tmp_root, size_t forced_regions = 1, bool each_pysam = false) {
  SCOPED_TRACE(dir + "/" + name);
  static int views = 0;  // a fresh folder per view: no index of another view lies beside the copy
  const std::string tmp = tmp_root + "/" + std::to_string(++views);
  fs::create_directories(tmp);
  std::string plain, gz;
  int err = 0;
  ASSERT_TRUE(ReadWhole(dir + "/" + name, &plain, &err)) << "errno " << err;
  ASSERT_TRUE(ReadWhole(dir + "/" + name + ".gz", &gz, &err)) << "errno " << err;
  const std::string ref = Twin(plain, !vcf, tmp);
  EXPECT_TRUE(gz == ref) << name << ".gz: " << gz.size() << " bytes, bgzip -l 0 wrote "
                         << ref.size() << (vcf ? "" : " (cut at 32 640)");
  std::string out, serr;
  EXPECT_EQ(Sh("bgzip -t " + Quote(dir + "/" + name + ".gz"), &out, &serr, tmp), 0) << serr;
  EXPECT_EQ(serr, "");
  ExpectBedtoolsReads(dir, name, vcf, tmp);

  // From the listing (a stat would wait for the index, and fail with it when tabix refuses).
  // VCF: a .csi always, and a .tbi where tabix writes one; fragments: one of them, or none when
  // tabix refuses the text (the pass that sized the plain view, read above, found that out).
  std::set<std::string> names;
  for (auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  std::vector<std::string> exts;
  for (const char* ext : {".tbi", ".csi"}) {
    if (names.count(name + ".gz" + ext)) exts.push_back(ext);
  }
  if (vcf) {
    EXPECT_TRUE(names.count(name + ".gz.csi"));
  } else {
    EXPECT_LE(exts.size(), 1u);
  }
  const std::string copy = tmp + "/copy" + (vcf ? ".vcf.gz" : ".bed.gz");
  ASSERT_TRUE(WriteFile(copy, ref));
  const std::string on = Quote(dir + "/" + name + ".gz"), cp = Quote(copy);
  if (exts.empty()) {  // none listed: tabix writes neither, and the mount has neither
    for (const std::string ext : {".tbi", ".csi"}) {
      EXPECT_NE(Sh(std::string("tabix -f ") + (ext == ".csi" ? "-C " : "") + "-p " +
                       (vcf ? "vcf " : "bed ") + cp,
                   &out, &serr, tmp),
                0)
          << name << ": tabix writes a " << ext << " the mount does not list";
      struct stat st;
      EXPECT_NE(::stat((dir + "/" + name + ".gz" + ext).c_str(), &st), 0) << ext;
      EXPECT_EQ(errno, ENOENT) << ext;
    }
  }
  const std::vector<std::string> regions = RegionsOf(plain);
  std::vector<std::string> usable;  // the indexes tabix also writes
  for (const std::string& ext : exts) {
    SCOPED_TRACE(ext);
    const int tabix_rc = Sh(std::string("tabix -f ") + (ext == ".csi" ? "-C " : "") + "-p " +
                                (vcf ? "vcf " : "bed ") + cp,
                            &out, &serr, tmp);
    std::string index;
    const bool readable = ReadWhole(dir + "/" + name + ".gz" + ext, &index, &err);
    if (tabix_rc != 0) {  // tabix refuses this text: so does the mount
      EXPECT_FALSE(vcf && ext == ".tbi") << "a .tbi is listed where tabix writes none: " << serr;
      EXPECT_FALSE(readable) << "tabix refused: " << serr;
      EXPECT_EQ(err, EIO);
      continue;
    }
    ASSERT_TRUE(readable) << "errno " << err;
    ASSERT_TRUE(WriteFile(tmp + "/mine" + ext, index));
    std::string mine_raw, theirs_raw;
    ASSERT_EQ(Sh("bgzip -dc " + Quote(tmp + "/mine" + ext), &mine_raw, &serr, tmp), 0) << serr;
    ASSERT_EQ(Sh("bgzip -dc " + Quote(copy + ext), &theirs_raw, nullptr, tmp), 0);
    EXPECT_TRUE(mine_raw == theirs_raw) << name << ext << " differs: " << mine_raw.size() << " vs "
                                        << theirs_raw.size() << " bytes";
    usable.push_back(ext);
    // htslib takes the .csi when both lie beside the file: the mount's .gz and this index alone in
    // a folder make it use this one.
    const std::string forced_dir = tmp + "/forced" + ext;
    fs::create_directories(forced_dir);
    const std::string forced = forced_dir + "/f" + (vcf ? ".vcf.gz" : ".bed.gz");
    ASSERT_TRUE(WriteFile(forced, gz));
    ASSERT_TRUE(WriteFile(forced + ext, index));
    ExpectSameQuery("tabix -l", "tabix -l " + Quote(forced), "tabix -l " + cp, tmp);
    for (size_t i = 0; i < regions.size() && i < forced_regions; ++i) {
      const std::string r = Quote(regions[i]);
      ExpectSameQuery("tabix " + regions[i], "tabix " + Quote(forced) + " " + r,
                      "tabix " + cp + " " + r, tmp);
      if (vcf) {
        ExpectSameQuery("bcftools -r " + regions[i],
                        "bcftools view --no-version -r " + r + " " + Quote(forced),
                        "bcftools view --no-version -r " + r + " " + cp, tmp);
      }
    }
  }
  if (usable.empty()) return;

  ASSERT_TRUE(WriteFile(tmp + "/fetch.py", kPysam));
  for (const std::string& region : regions) {
    const std::string r = Quote(region);
    ExpectSameQuery("tabix " + region, "tabix " + on + " " + r, "tabix " + cp + " " + r, tmp);
    const std::string py = "/usr/bin/python3 " + Quote(tmp + "/fetch.py") + " ";
    for (size_t e = 0; e < (each_pysam ? usable.size() : 1);
         ++e) {  // pysam told which index to read
      const std::string& ext = usable[e];
      const std::string kind = (vcf ? " vcf " : " bed ") + ext;
      ExpectSameQuery("pysam " + region + " " + ext, py + on + " " + r + kind,
                      py + cp + " " + r + kind, tmp);
    }
    if (vcf) {
      ExpectSameQuery("bcftools -r " + region, "bcftools view --no-version -r " + r + " " + on,
                      "bcftools view --no-version -r " + r + " " + cp, tmp);
    }
  }

  // Random reads and the tail equal the sequential read.
  const int fd = ::open((dir + "/" + name + ".gz").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::mt19937_64 rng(gz.size());
  for (int i = 0; i < 40; ++i) {
    const uint64_t off = rng() % gz.size(), len = 1 + rng() % 150000;
    std::string buf(len, '\0');
    const ssize_t n = ::pread(fd, buf.data(), len, static_cast<off_t>(off));
    ASSERT_GE(n, 0);
    EXPECT_EQ(buf.substr(0, n), gz.substr(off, len)) << "pread at " << off;
  }
  ::close(fd);
  std::string tail;
  ASSERT_EQ(Sh("tail -c 70000 " + on, &tail, nullptr, tmp), 0);
  EXPECT_TRUE(tail == gz.substr(gz.size() - std::min<size_t>(gz.size(), 70000)));
}

TEST(BgzfMount, EveryVczStore) {
  TempDir idx, tmp;
  auto m =
      MountedFs::Start(OMICSFS_BINARY, kCorpus + "/vcf-zarr", {"-o", "index_dir=" + idx.path()});
  ASSERT_NE(m, nullptr);
  int stores = 0;
  for (auto& folder : fs::directory_iterator(kCorpus + "/vcf-zarr")) {
    if (!fs::is_directory(folder.path())) continue;
    for (auto& e : fs::directory_iterator(folder.path())) {
      if (e.path().extension() != ".vcz") continue;
      const std::string dir =
          m->path() + "/" + folder.path().filename().string() + "/" + e.path().filename().string();
      CheckView(dir, e.path().stem().string() + ".vcf", true, tmp.path());
      CheckView(dir, "sites.vcf", true, tmp.path());
      ++stores;
    }
  }
  EXPECT_EQ(stores, 23);
}

TEST(BgzfMount, EveryFragmentsStore) {
  TempDir idx, tmp;
  auto m =
      MountedFs::Start(OMICSFS_BINARY, kCorpus + "/bpcells/dir", {"-o", "index_dir=" + idx.path()});
  ASSERT_NE(m, nullptr);
  int stores = 0, csi = 0, unindexed = 0;
  for (const char* v : {"v1", "v2"}) {
    for (auto& e : fs::directory_iterator(kCorpus + "/bpcells/dir/" + v)) {
      std::string version;
      ReadWhole(e.path().string() + "/version", &version);
      if (version.find("fragments") == std::string::npos) continue;
      const std::string dir = m->path() + "/" + v + "/" + e.path().filename().string();
      csi += fs::exists(e.path()) && ::access((dir + "/fragments.bed.gz.csi").c_str(), F_OK) == 0;
      CheckView(dir, "fragments.bed", false, tmp.path());
      CheckView(dir, "fragments.tsv", false, tmp.path());
      auto absent = [&](const std::string& name) {  // not there at all (not a failing file)
        struct stat st;
        return ::stat((dir + "/" + name).c_str(), &st) != 0 && errno == ENOENT;
      };
      unindexed += absent("fragments.tsv.gz.csi") && absent("fragments.tsv.gz.tbi");
      ++stores;
    }
  }
  EXPECT_EQ(stores, 5);
  EXPECT_EQ(csi, 4);  // the frags stores hold a fragment at 2 000 000 000: past what .tbi holds
  // ... and zero-length fragments: their 10x lines end before they begin (no 10x form indexed).
  EXPECT_EQ(unindexed, 4);
}

// What `ls -l` does: readdir, then lstat of every name. The names listed, and those whose lstat
// failed (with its errno).
std::set<std::string> ListAndStat(const std::string& dir, std::map<std::string, int>* failed) {
  std::set<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  EXPECT_NE(d, nullptr) << dir;
  if (d == nullptr) return names;
  while (struct dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    names.insert(n);
    struct stat st;
    if (::lstat((dir + "/" + n).c_str(), &st) != 0) (*failed)[n] = errno;
  }
  ::closedir(d);
  return names;
}

// frags.packed holds zero-length fragments: its 10x form (fragments.tsv, end inclusive) has lines
// that end before they begin, which tabix refuses (-p bed, with -C too), so fragments.tsv.gz.csi
// cannot exist. Listing never waits for a pass, so the first `ls -l` of a fresh store may meet it
// once (EIO, or gone by the time ls stats it); once the pass has run (a stat of the index, or the
// `ls -l` itself) the next `ls -l` shows no such entry and no error, and the status says why; a
// later mount with the same index_dir never lists it. The other views' indexes equal tabix's.
TEST(BgzfMount, AnIndexTabixRefusesIsDroppedOnceKnownAndNeverListedAgain) {
  TempDir src, tmp;
  const std::string store = src.path() + "/frags.packed";
  fs::copy(kCorpus + "/bpcells/dir/v1/frags.packed", store, fs::copy_options::recursive);
  const std::string gone = "fragments.tsv.gz.csi";
  // Clean: readdir + lstat and `ls -l` both, without the index and without an error.
  auto expect_clean = [&](const std::string& dir, const std::string& when) {
    SCOPED_TRACE(when);
    std::map<std::string, int> failed;
    const std::set<std::string> names = ListAndStat(dir, &failed);
    EXPECT_EQ(names,
              (std::set<std::string>{"cells.txt", "chromosomes.txt", "coverage.bedgraph",
                                     "coverage.bw", "fragments.bed", "fragments.bed.gz",
                                     "fragments.bed.gz.csi", "fragments.tsv", "fragments.tsv.gz",
                                     "insertions.bedgraph", "insertions.bw"}));
    EXPECT_TRUE(failed.empty()) << failed.begin()->first << ": errno " << failed.begin()->second;
    std::string out, err;
    EXPECT_EQ(Sh("ls -l " + Quote(dir), &out, &err, tmp.path()), 0) << err;
    EXPECT_EQ(err, "");
    EXPECT_EQ(out.find(gone), std::string::npos) << out;
    EXPECT_EQ(out.find('?'), std::string::npos) << out;
    struct stat st;
    EXPECT_NE(::stat((dir + "/" + gone).c_str(), &st), 0);
    EXPECT_EQ(errno, ENOENT);
  };
  auto expect_status = [&](const MountedFs& m) -> std::string {  // the line saying why
    std::string status;
    EXPECT_TRUE(ReadWhole(m.path() + "/.omicsfs/status", &status));
    EXPECT_NE(status.find("indexes not listed: 1 (tabix refuses their records"), std::string::npos)
        << status;
    const size_t at = status.find("  " + gone + " of " + store + ": contig chr1, record ");
    EXPECT_NE(at, std::string::npos) << status;
    return at == std::string::npos ? "(none)" : status.substr(at, status.find('\n', at) - at);
  };
  std::string why;
  TempDir idx;
  {
    auto m = MountedFs::Start(OMICSFS_BINARY, src.path(), {"-o", "index_dir=" + idx.path()});
    ASSERT_NE(m, nullptr);
    const std::string dir = m->path() + "/frags.packed";
    std::string out, err;
    Sh("ls -l " + Quote(dir), &out, &err, tmp.path());  // the first: may meet it, about it alone
    for (const std::string& line : testutil::Lines(err)) {
      EXPECT_NE(line.find(gone), std::string::npos) << line;
    }
    expect_clean(dir, "the next ls -l");
    why = expect_status(*m);
    const std::string log = m->Log();
    EXPECT_NE(log.find(gone + " of " + store +
                       ": cannot exist: tabix refuses its records (contig chr1, record "),
              std::string::npos)
        << log;

    // The truth: tabix, given the served fragments.tsv.gz, refuses to index it (both forms), for
    // the record the status names; the BED form's .csi is tabix's.
    std::string gz, bed_gz, bed_csi, terr;
    ASSERT_TRUE(ReadWhole(dir + "/fragments.tsv.gz", &gz));
    ASSERT_TRUE(ReadWhole(dir + "/fragments.bed.gz", &bed_gz));
    ASSERT_TRUE(ReadWhole(dir + "/fragments.bed.gz.csi", &bed_csi));
    ASSERT_TRUE(WriteFile(tmp.path() + "/t.tsv.gz", gz));
    for (const char* form : {"", "-C "}) {
      EXPECT_NE(Sh(std::string("tabix -f ") + form + "-p bed " + Quote(tmp.path() + "/t.tsv.gz"),
                   &out, &terr, tmp.path()),
                0)
          << form;
      // htslib: "end E < begin B" (B 1-based), as the status says "end E before begin B".
      const size_t e = terr.find("end "), lt = terr.find(" < begin ");
      ASSERT_TRUE(e != std::string::npos && lt != std::string::npos) << terr;
      const std::string end = terr.substr(e + 4, lt - e - 4);
      const std::string begin =
          terr.substr(lt + 9, terr.find_first_not_of("0123456789", lt + 9) - lt - 9);
      EXPECT_NE(why.find("end " + end + " before begin " + begin), std::string::npos) << why << "\n"
                                                                                      << terr;
    }
    ASSERT_TRUE(WriteFile(tmp.path() + "/b.bed.gz", bed_gz));
    ASSERT_EQ(Sh("tabix -f -C -p bed " + Quote(tmp.path() + "/b.bed.gz"), &out, &terr, tmp.path()),
              0)
        << terr;
    std::string mine, theirs;
    ASSERT_TRUE(WriteFile(tmp.path() + "/mine.csi", bed_csi));
    ASSERT_EQ(Sh("bgzip -dc " + Quote(tmp.path() + "/mine.csi"), &mine, nullptr, tmp.path()), 0);
    ASSERT_EQ(Sh("bgzip -dc " + Quote(tmp.path() + "/b.bed.gz.csi"), &theirs, nullptr, tmp.path()),
              0);
    EXPECT_TRUE(mine == theirs) << mine.size() << " vs " << theirs.size() << " bytes";
  }
  {  // A later mount with the same index_dir: not listed from the start, and the status says why.
    auto m = MountedFs::Start(OMICSFS_BINARY, src.path(), {"-o", "index_dir=" + idx.path()});
    ASSERT_NE(m, nullptr);
    expect_clean(m->path() + "/frags.packed", "a later mount's first ls -l");
    EXPECT_EQ(expect_status(*m), why);
    const std::string log = m->Log();
    EXPECT_NE(log.find(gone + " of " + store + ": not listed: tabix refuses its records"),
              std::string::npos)
        << log;
  }
  {  // A fresh index_dir, the index asked for first: EIO once (its pass finds it), then gone.
    TempDir idx2;
    auto m = MountedFs::Start(OMICSFS_BINARY, src.path(), {"-o", "index_dir=" + idx2.path()});
    ASSERT_NE(m, nullptr);
    const std::string dir = m->path() + "/frags.packed";
    struct stat st;
    EXPECT_NE(::stat((dir + "/" + gone).c_str(), &st), 0);
    EXPECT_EQ(errno, EIO);
    expect_clean(dir, "ls -l after a stat of the index");
    EXPECT_EQ(expect_status(*m), why);
  }
}

// A fragments store's first listing: the pass that sizes one of its two views reads each chunk's
// fragments once and sizes the other and builds both views' indexes from them; the rest of the
// listing, both indexes and a whole read add no chunk to what MOUNT/.omicsfs/status counts.
// (EveryFragmentsStore checks these derived sizes and indexes against bgzip and tabix.)
TEST(BgzfMount, AFragmentsStoreIsReadOnceForBothViewsAndTheirIndexes) {
  TempDir idx;
  auto m = MountedFs::Start(OMICSFS_BINARY, kCorpus + "/bpcells/dir/v2",
                            {"-o", "index_dir=" + idx.path()});
  ASSERT_NE(m, nullptr);
  auto sized = [&] {
    std::string status;
    EXPECT_TRUE(ReadWhole(m->path() + "/.omicsfs/status", &status));
    return testutil::NumberBefore(status, " chunks read by sizing passes");
  };
  const std::string dir = m->path() + "/atac.packed";
  struct stat st;
  for (const char* list : {"cells.txt", "chromosomes.txt"})
    ASSERT_EQ(::stat((dir + "/" + list).c_str(), &st), 0);
  const long before = sized();  // the name lists' one chunk each
  ASSERT_GE(before, 0);
  ASSERT_EQ(::stat((dir + "/fragments.tsv").c_str(), &st), 0);  // the 10x view asked first
  const long one_pass = sized() - before;
  EXPECT_GT(one_pass, 0);
  std::string out, text, index;
  ASSERT_EQ(Sh("ls -l " + Quote(dir), &out, nullptr, idx.path()), 0);
  for (const char* view : {"fragments.bed", "fragments.tsv"}) {
    ASSERT_TRUE(ReadWhole(dir + "/" + view + ".gz.tbi", &index)) << view;
    ASSERT_TRUE(ReadWhole(dir + "/" + view, &text)) << view;
    ASSERT_EQ(::stat((dir + "/" + view).c_str(), &st), 0);
    EXPECT_EQ(static_cast<uint64_t>(st.st_size), text.size()) << view;
  }
  EXPECT_EQ(sized() - before, one_pass) << "the BED view and both indexes were read again";
}

// sample.vcz with every position moved past 2^29 and contig lengths of 7·10^8: a .csi (tabix -C).
TEST(BgzfMount, CsiForPositionsPastTbi) {
  TempDir src, idx, tmp;
  const std::string store = src.path() + "/big.vcz";
  const fs::path from = kCorpus + "/vcf-zarr/sample/sample.vcz";
  for (fs::recursive_directory_iterator it(from), end; it != end; ++it) {
    const fs::path dst = fs::path(store) / fs::relative(it->path(), from);
    if (fs::is_directory(it->status())) {
      fs::create_directories(dst);
    } else {
      fs::create_directories(dst.parent_path());
      fs::copy_file(it->path(), dst);
    }
  }
  const std::vector<int32_t> pos = {111, 112, 14370, 17330, 1110696, 1230237, 1234567, 1235237, 10};
  std::string bytes;
  for (int32_t p : pos) {
    const int32_t moved = p + 600000000;
    bytes.append(reinterpret_cast<const char*>(&moved), 4);
  }
  testutil::ZarrArraySpec spec;
  spec.shape = spec.chunks = {pos.size()};
  spec.dimension_names = {"variants"};
  fs::remove_all(store + "/variant_position");
  ASSERT_TRUE(testutil::WriteZarrArray(store, "variant_position", spec, bytes).ok());
  std::string lengths;
  for (int i = 0; i < 3; ++i) {
    const int64_t len = 700000000;
    lengths.append(reinterpret_cast<const char*>(&len), 8);
  }
  testutil::ZarrArraySpec lspec;
  lspec.dtype = "<i8";
  lspec.shape = lspec.chunks = {3};
  lspec.dimension_names = {"contigs"};
  ASSERT_TRUE(testutil::WriteZarrArray(store, "contig_length", lspec, lengths).ok());
  auto m = MountedFs::Start(OMICSFS_BINARY, src.path(), {"-o", "index_dir=" + idx.path()});
  ASSERT_NE(m, nullptr);
  struct stat st;
  ASSERT_EQ(::stat((m->path() + "/big.vcz/big.vcf.gz.csi").c_str(), &st), 0);
  EXPECT_NE(::stat((m->path() + "/big.vcz/big.vcf.gz.tbi").c_str(), &st), 0);
  // The copied region_index describes the old positions: its first chunk disagrees with the
  // arrays, so it is not used (and the ends are computed).
  EXPECT_NE(m->Log().find("region_index not used"), std::string::npos) << m->Log();
  std::string head;
  ASSERT_TRUE(ReadWhole(m->path() + "/big.vcz/sites.vcf", &head));
  ASSERT_NE(head.find("\t600014370\t"), std::string::npos);
  CheckView(m->path() + "/big.vcz", "big.vcf", true, tmp.path());
  CheckView(m->path() + "/big.vcz", "sites.vcf", true, tmp.path());
}

// A store whose header declares contigs of 2^31 - 1 (which once gave it a .csi only), written
// with region_index: every record ends at or before 2^29 (the last exactly there, POS 2^29 - 1
// with REF AC: tabix accepts it), so both indexes are listed; with one more base the store gets
// the .csi alone, and tabix -p vcf refuses that text.
TEST(BgzfMount, TbiAndCsiWhereTabixWritesBoth) {
  TempDir src, idx, tmp;
  auto store = [&](const std::string& name, int32_t last_ref_bases) {
    testutil::VczSpec v;
    v.contigs = {"1", "2"};
    v.contig_lengths = {2147483647, 2147483647};
    for (int32_t i = 0; i < 2000; ++i) {  // every 16 kb window of the linear index has a record
      v.contig.push_back(0);
      v.position.push_back(1 + i * 268000);
      v.ref.push_back(i % 3 == 0 ? "ACG" : "A");
    }
    v.contig.push_back(0);
    v.position.push_back((int32_t{1} << 29) - 1);
    v.ref.push_back(std::string(last_ref_bases, 'C'));
    for (int32_t i = 0; i < 999; ++i) {
      v.contig.push_back(1);
      v.position.push_back(1000 + i * 1000);
      v.ref.push_back("G");
    }
    for (const auto& r : v.ref) v.length.push_back(static_cast<int32_t>(r.size()));
    v.chunk = 1000;
    // bio2zarr's rows: per chunk of 1000 and contig run.
    for (size_t i = 0; i < v.position.size(); ++i) {
      const int64_t c = static_cast<int64_t>(i / v.chunk), end = v.position[i] + v.length[i] - 1;
      if (v.region_index.empty() || v.region_index.back()[0] != c ||
          v.region_index.back()[1] != v.contig[i]) {
        v.region_index.push_back({c, v.contig[i], v.position[i], v.position[i], end, 0});
      }
      auto& row = v.region_index.back();
      row[3] = v.position[i];
      row[4] = std::max(row[4], end);
      ++row[5];
    }
    ASSERT_TRUE(testutil::WriteVczStore(src.path() + "/" + name, v).ok());
  };
  store("huge.vcz", 2);  // ends at 2^29
  store("past.vcz", 3);  // ends at 2^29 + 1
  auto m = MountedFs::Start(OMICSFS_BINARY, src.path(), {"-o", "index_dir=" + idx.path()});
  ASSERT_NE(m, nullptr);
  std::set<std::string> huge, past;
  for (auto& e : fs::directory_iterator(m->path() + "/huge.vcz"))
    huge.insert(e.path().filename().string());
  for (auto& e : fs::directory_iterator(m->path() + "/past.vcz"))
    past.insert(e.path().filename().string());
  for (const char* f :
       {"huge.vcf.gz.tbi", "huge.vcf.gz.csi", "sites.vcf.gz.tbi", "sites.vcf.gz.csi"}) {
    EXPECT_TRUE(huge.count(f)) << f;
  }
  for (const char* f : {"past.vcf.gz.csi", "sites.vcf.gz.csi"}) EXPECT_TRUE(past.count(f)) << f;
  for (const char* f : {"past.vcf.gz.tbi", "sites.vcf.gz.tbi"}) EXPECT_FALSE(past.count(f)) << f;
  std::string text;
  ASSERT_TRUE(ReadWhole(m->path() + "/huge.vcz/sites.vcf", &text));
  EXPECT_NE(text.find("##contig=<ID=1,length=2147483647>"), std::string::npos);
  EXPECT_NE(text.find("1\t536870911\t.\tCC\t"), std::string::npos);
  EXPECT_EQ(m->Log().find("region_index not used"), std::string::npos) << m->Log();
  // tabix writes a .tbi for the first and refuses one for the second.
  for (const char* s : {"huge", "past"}) {
    std::string gz, out;
    ASSERT_TRUE(ReadWhole(m->path() + "/" + s + ".vcz/" + s + ".vcf.gz", &gz));
    const std::string copy = tmp.path() + "/" + s + ".vcf.gz";
    ASSERT_TRUE(WriteFile(copy, gz));
    EXPECT_EQ(Sh("tabix -p vcf " + Quote(copy), &out, nullptr, tmp.path()) == 0,
              std::string(s) == "huge")
        << s;
  }
  for (const char* s : {"huge", "past"}) {
    const std::string dir = m->path() + "/" + s + ".vcz";
    CheckView(dir, std::string(s) + ".vcf", true, tmp.path(), 3, true);
    CheckView(dir, "sites.vcf", true, tmp.path(), 3, true);
  }
}

// Starts out of order within chr1: tabix refuses it, so the index cannot exist. Read first, it is
// EIO with a line naming the store, the contig and the record; from then on it is not listed and
// the status says why; fragments.bed and fragments.bed.gz still read.
TEST(BgzfMount, UnsortedStoreIndexIsEioOnceThenNotListed) {
  TempDir src, idx, tmp;
  testutil::FragmentsSpec f;
  f.chr_names = {"chr1", "chr2"};
  f.cell_names = {"AAA", "CCC"};
  f.by_chr = {{{100, 200, 0}, {300, 400, 1}, {250, 260, 0}}, {{5, 9, 1}}};
  f.packed = false;
  const std::string store = src.path() + "/unsorted";
  ASSERT_TRUE(testutil::WriteDirStore(testutil::MakeFragmentsStore(f), store).ok());
  auto m = MountedFs::Start(OMICSFS_BINARY, src.path(), {"-o", "index_dir=" + idx.path()});
  ASSERT_NE(m, nullptr);
  const std::string dir = m->path() + "/unsorted";
  std::string text, gz, index;
  int err = 0;
  EXPECT_FALSE(ReadWhole(dir + "/fragments.bed.gz.tbi", &index, &err));  // met first: its pass runs
  EXPECT_EQ(err, EIO);
  ASSERT_TRUE(ReadWhole(dir + "/fragments.bed", &text));
  EXPECT_EQ(text,
            "chr1\t100\t200\tAAA\nchr1\t300\t400\tCCC\nchr1\t250\t260\tAAA\nchr2\t5\t9\tCCC\n");
  ASSERT_TRUE(ReadWhole(dir + "/fragments.bed.gz", &gz));
  ASSERT_TRUE(WriteFile(tmp.path() + "/plain", text));
  std::string ref;
  ASSERT_EQ(Sh("bgzip -l 0 -c " + Quote(tmp.path() + "/plain"), &ref, nullptr, tmp.path()), 0);
  EXPECT_TRUE(gz == ref);
  EXPECT_FALSE(ReadWhole(dir + "/fragments.bed.gz.tbi", &index, &err));
  EXPECT_EQ(err, ENOENT) << "no longer there";
  std::set<std::string> names;
  for (auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  EXPECT_EQ(names, (std::set<std::string>{"cells.txt", "chromosomes.txt", "coverage.bedgraph",
                                          "coverage.bw", "fragments.bed", "fragments.bed.gz",
                                          "fragments.tsv", "fragments.tsv.gz",
                                          "insertions.bedgraph", "insertions.bw"}));
  // The tracks pile fragments in order: an unsorted store's are EIO too (and the log says why).
  std::string track;
  EXPECT_FALSE(ReadWhole(dir + "/coverage.bedgraph", &track, &err));
  EXPECT_EQ(err, EIO);
  std::string status;
  ASSERT_TRUE(ReadWhole(m->path() + "/.omicsfs/status", &status));
  EXPECT_NE(status.find("indexes not listed: 2 "), std::string::npos) << status;
  EXPECT_NE(status.find("  fragments.bed.gz.tbi of " + store +
                        ": contig chr1, record 3 (position 251): not sorted"),
            std::string::npos)
      << status;
  const std::string log = m->Log();
  const size_t at = log.find("fragments.bed.gz.tbi");
  ASSERT_NE(at, std::string::npos) << log;
  const std::string line = log.substr(at, log.find('\n', at) - at);
  EXPECT_NE(line.find(store), std::string::npos) << line;
  EXPECT_NE(line.find("contig chr1"), std::string::npos) << line;
  EXPECT_NE(line.find("record 3"), std::string::npos) << line;
  // tabix refuses the same text.
  ASSERT_TRUE(WriteFile(tmp.path() + "/x.bed.gz", ref));
  std::string out;
  EXPECT_NE(Sh("tabix -p bed " + Quote(tmp.path() + "/x.bed.gz"), &out, nullptr, tmp.path()), 0);
  // Still readable after the failed index.
  ASSERT_TRUE(ReadWhole(dir + "/fragments.bed", &text));
  ASSERT_TRUE(ReadWhole(dir + "/fragments.bed.gz", &gz));
}

}  // namespace
}  // namespace omicsfs
