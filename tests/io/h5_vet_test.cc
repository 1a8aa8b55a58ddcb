// The HDF5 vetting helper, run as the daemon runs it (io/h5_vet.h).
#include "io/h5_vet.h"

#include <gtest/gtest.h>
#include <hdf5.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>

#include "io/h5_array_store.h"
#include "testutil/mount_fixture.h"
#include "testutil/store_writer.h"
#include "util/fs.h"

namespace omicsfs::io {
namespace {

const std::string kCorpus = OMICSFS_CORPUS_DIR;

const std::vector<std::string> kMarks = {"version"};  // BPCells' (vfs/kinds/bpcells.cc)

H5Vetter Helper() {
  H5Vetter v;
  v.helper = OMICSFS_H5VET;
  v.store_marks = kMarks;
  return v;
}

// counts_root_group.h5 with its first global-heap object claiming ~2 GiB: libhdf5 1.10.8 copies
// that many bytes (docs/robustness.md).
std::string DamagedHeapCopy() {
  std::string bytes;
  EXPECT_TRUE(testutil::ReadWhole(kCorpus + "/bpcells/h5/counts_root_group.h5", &bytes));
  const size_t gcol = bytes.find("GCOL");
  EXPECT_NE(gcol, std::string::npos);
  const uint64_t huge = 0x7fffff00;
  std::memcpy(&bytes[gcol + 16 + 8], &huge, 8);
  const std::string path =
      (fs::temp_directory_path() / fs::unique_path("omicsfs-vet-%%%%%%.h5")).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// The helper's verdict: its error, or why it could not vet what it probed.
Status Outcome(const Result<H5Probe>& probe) { return probe.ok() ? probe->vetted : probe.status(); }

// The groups with a string `version`, as the probe reports them.
std::vector<H5GroupAttribute> Versions(const H5Probe& probe) {
  std::vector<H5GroupAttribute> out;
  for (const auto& g : probe.groups) {
    if (const std::string* v = g.Attribute("version")) out.push_back({g.path, *v});
  }
  return out;
}

void ExpectSameProbe(const H5Probe& got, const H5Probe& want, const std::string& what) {
  EXPECT_EQ(got.cut, want.cut) << what;
  ASSERT_EQ(got.groups.size(), want.groups.size()) << what;
  for (size_t i = 0; i < want.groups.size(); ++i) {
    EXPECT_EQ(got.groups[i].path, want.groups[i].path) << what;
    ASSERT_EQ(got.groups[i].attributes.size(), want.groups[i].attributes.size())
        << what << want.groups[i].path;
    for (size_t a = 0; a < want.groups[i].attributes.size(); ++a) {
      EXPECT_EQ(got.groups[i].attributes[a].name, want.groups[i].attributes[a].name) << what;
      EXPECT_EQ(got.groups[i].attributes[a].values, want.groups[i].attributes[a].values) << what;
    }
  }
}

TEST(H5Vet, CorpusFilesPassAndMakeNoComplaint) {
  for (const char* f : {"counts_root_group.h5", "stores_v1.h5", "stores_v2.h5", "frags_gzip.h5",
                        "fixedstr.h5", "filtered_feature_bc_matrix.h5"}) {
    const std::string path = kCorpus + "/bpcells/h5/" + f;
    auto listed = ListGroupsWithStringAttribute(path, "version");
    ASSERT_TRUE(listed.ok()) << f;
    auto reported = ProbeHdf5File(Helper(), path);
    ASSERT_TRUE(reported.ok()) << f << ": " << reported.status().message();
    EXPECT_TRUE(reported->vetted.ok()) << f << ": " << reported->vetted.message();
    const auto versions = Versions(*reported);
    ASSERT_EQ(versions.size(), listed->size()) << f;
    for (size_t i = 0; i < listed->size(); ++i) {
      EXPECT_EQ(versions[i].group, (*listed)[i].group) << f;
      EXPECT_EQ(versions[i].value, (*listed)[i].value) << f;
    }
    H5Probe probe;
    ASSERT_TRUE(ProbeHdf5InProcess(path, H5Bounds{}, &probe).ok()) << f;
    ExpectSameProbe(*reported, probe, f);
    std::string notes;
    VetHdf5InProcess(path, probe, kMarks, 1 << 20, &notes);
    EXPECT_EQ(notes, "") << f;
  }
}

// AnnData files (h5py's): the root says what the file is, each element what it encodes; none has a
// BPCells `version`.
TEST(H5Vet, AnnDataFilesReportTheirEncodings) {
  int files = 0, column_orders = 0;
  for (const auto& e : fs::directory_iterator(kCorpus + "/anndata")) {
    if (e.path().extension() != ".h5ad") continue;
    ++files;
    const std::string f = e.path().filename().string();
    auto probe = ProbeHdf5File(Helper(), e.path().string());
    ASSERT_TRUE(probe.ok()) << f << ": " << probe.status().message();
    EXPECT_TRUE(probe->vetted.ok()) << f << ": " << probe->vetted.message();
    ASSERT_NE(probe->Root(), nullptr) << f;
    EXPECT_EQ(probe->Root()->path, "/");
    ASSERT_NE(probe->Root()->Attribute("encoding-type"), nullptr) << f;
    EXPECT_EQ(*probe->Root()->Attribute("encoding-type"), "anndata") << f;
    bool obs = false;
    for (const auto& g : probe->groups) {
      if (g.path != "/obs") continue;
      obs = true;
      ASSERT_NE(g.Attribute("encoding-type"), nullptr) << f;
      EXPECT_EQ(*g.Attribute("encoding-type"), "dataframe") << f;
      // An array of strings is reported whole (Attribute() gives scalars only); a frame with no
      // column has an empty one, which h5py writes as floats: not reported.
      for (const auto& a : g.attributes)
        column_orders += a.name == "column-order" && !a.values.empty();
    }
    EXPECT_TRUE(obs) << f;
    EXPECT_TRUE(Versions(*probe).empty()) << f;
  }
  EXPECT_GE(files, 5);
  EXPECT_GE(column_orders, 4);
}

std::string TempH5(const char* name = "omicsfs-probe-%%%%%%.h5") {
  return (fs::temp_directory_path() / fs::unique_path(name)).string();
}

// Writes a string attribute of `values` (a scalar when `scalar`) on `obj`; fixed-length strings
// when `width` > 0.
void PutStringAttribute(hid_t obj, const char* name, const std::vector<std::string>& values,
                        bool scalar = true, size_t width = 0) {
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, width > 0 ? width : H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  hsize_t n = values.size();
  hid_t space = scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr);
  hid_t attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  if (width > 0) {
    std::string buf;
    for (const auto& v : values) buf += v + std::string(width - v.size(), '\0');
    H5Awrite(attr, type, buf.data());
  } else {
    std::vector<const char*> ptrs;
    for (const auto& v : values) ptrs.push_back(v.c_str());
    H5Awrite(attr, type, ptrs.data());
  }
  H5Aclose(attr);
  H5Sclose(space);
  H5Tclose(type);
}

TEST(H5Vet, ProbeReportsGroupsAndTheirStringAttributes) {
  const std::string path = TempH5();
  {
    hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    PutStringAttribute(f, "encoding-type", {"anndata"});
    PutStringAttribute(f, "encoding-version", {"0.1.0"});
    hid_t obs = H5Gcreate2(f, "obs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    PutStringAttribute(obs, "column-order", {"cell_type", "", "n_genes"}, /*scalar=*/false);
    PutStringAttribute(obs, "_index", {"cells"}, true, /*width=*/16);
    PutStringAttribute(obs, "empty", {""});
    const int one = 1;
    hid_t scalar = H5Screate(H5S_SCALAR);
    hid_t number = H5Acreate2(obs, "numeric", H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(number, H5T_NATIVE_INT, &one);
    H5Aclose(number);
    hid_t deep = H5Gcreate2(f, "obs/nested group", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    PutStringAttribute(deep, "version", {"v2-matrix"});
    hid_t bare = H5Gcreate2(f, "bare", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t ds = H5Dcreate2(f, "data", H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    PutStringAttribute(ds, "encoding-type", {"not a group's"});
    for (hid_t id : {ds}) H5Dclose(id);
    for (hid_t id : {bare, deep, obs}) H5Gclose(id);
    H5Sclose(scalar);
    H5Fclose(f);
  }
  for (const bool helper : {true, false}) {
    auto probe = ProbeHdf5File(helper ? Helper() : H5Vetter{}, path);
    ASSERT_TRUE(probe.ok()) << probe.status().message();
    EXPECT_TRUE(probe->vetted.ok());
    EXPECT_FALSE(probe->cut);
    ASSERT_EQ(probe->groups.size(), 4u);
    const H5Group& root = probe->groups[0];
    EXPECT_EQ(root.path, "/");
    ASSERT_EQ(root.attributes.size(), 2u);
    EXPECT_EQ(*root.Attribute("encoding-type"), "anndata");
    EXPECT_EQ(*root.Attribute("encoding-version"), "0.1.0");
    EXPECT_EQ(probe->groups[1].path, "/bare");
    EXPECT_TRUE(probe->groups[1].attributes.empty());
    const H5Group& obs = probe->groups[2];
    EXPECT_EQ(obs.path, "/obs");
    ASSERT_EQ(obs.attributes.size(), 3u);  // the numeric one is not reported; in name order
    EXPECT_EQ(obs.attributes[0].name, "_index");
    EXPECT_EQ(obs.attributes[0].values, std::vector<std::string>{"cells"});
    EXPECT_EQ(obs.attributes[1].name, "column-order");
    EXPECT_EQ(obs.attributes[1].values, (std::vector<std::string>{"cell_type", "", "n_genes"}));
    EXPECT_EQ(obs.Attribute("column-order"), nullptr);  // not a scalar
    EXPECT_EQ(*obs.Attribute("empty"), "");
    EXPECT_EQ(obs.Attribute("numeric"), nullptr);
    EXPECT_EQ(probe->groups[3].path, "/obs/nested group");
    EXPECT_EQ(*probe->groups[3].Attribute("version"), "v2-matrix");
  }
  fs::remove(path);
}

TEST(H5Vet, AFileWithNoGroupsReportsItsRootOnly) {
  const std::string path = TempH5();
  {
    hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t scalar = H5Screate(H5S_SCALAR);
    hid_t ds = H5Dcreate2(f, "x", H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dclose(ds);
    H5Sclose(scalar);
    H5Fclose(f);
  }
  auto probe = ProbeHdf5File(Helper(), path);
  ASSERT_TRUE(probe.ok()) << probe.status().message();
  ASSERT_EQ(probe->groups.size(), 1u);
  EXPECT_EQ(probe->groups[0].path, "/");
  EXPECT_TRUE(probe->groups[0].attributes.empty());
  EXPECT_FALSE(probe->cut);
  fs::remove(path);
}

// A file of more groups than a probe reports: the walk stops at the bound (and says so); the
// attributes past theirs are left out too.
TEST(H5Vet, TheProbeIsBounded) {
  const H5Bounds bounds;
  const std::string path = TempH5();
  {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST,
                         H5F_LIBVER_LATEST);  // compact groups: a quick write
    hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    PutStringAttribute(f, "encoding-type", {"anndata"});
    PutStringAttribute(f, "wide", {"w"}, true, /*width=*/4096);
    for (size_t i = 0; i < bounds.groups + 50; ++i) {
      char name[32];
      std::snprintf(name, sizeof name, "g%06zu", i);
      H5Gclose(H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    }
    hid_t g = H5Gopen2(f, "g000000", H5P_DEFAULT);
    for (size_t i = 0; i < bounds.attributes + 3; ++i) {
      PutStringAttribute(g, (std::string("a") + std::to_string(100 + i)).c_str(), {"x"});
    }
    PutStringAttribute(g, "many", std::vector<std::string>(bounds.values + 1, "y"),
                       /*scalar=*/false);
    H5Gclose(g);
    H5Fclose(f);
    H5Pclose(fapl);
  }
  auto probe = ProbeHdf5File(Helper(), path);
  ASSERT_TRUE(probe.ok()) << probe.status().message();
  EXPECT_TRUE(probe->cut);
  ASSERT_EQ(probe->groups.size(), bounds.groups);
  EXPECT_EQ(*probe->Root()->Attribute("encoding-type"), "anndata");
  EXPECT_EQ(*probe->Root()->Attribute("wide"), "w");
  EXPECT_EQ(probe->groups[1].path, "/g000000");
  EXPECT_EQ(probe->groups[1].attributes.size(), bounds.attributes);
  for (const auto& a : probe->groups[1].attributes) EXPECT_NE(a.name, "many");
  EXPECT_EQ(probe->groups.back().path, "/g009998");
  // The report stays small: names and values within bounds.bytes, hex-encoded.
  EXPECT_LT(FormatVetReport({*probe, ""}).size(), 2 * bounds.bytes + 20 * bounds.groups);

  // The byte bound, in process with small bounds.
  H5Bounds small;
  small.bytes = 100;
  H5Probe cut;
  ASSERT_TRUE(ProbeHdf5InProcess(path, small, &cut).ok());
  EXPECT_TRUE(cut.cut);
  size_t bytes = 0;
  for (const auto& g : cut.groups) {
    bytes += g.path.size();
    for (const auto& a : g.attributes) {
      bytes += a.name.size();
      for (const auto& v : a.values) bytes += v.size();
    }
  }
  EXPECT_LE(bytes, small.bytes);
  EXPECT_GE(cut.groups.size(), 2u);
  EXPECT_EQ(*cut.Root()->Attribute("encoding-type"), "anndata");
  EXPECT_EQ(cut.Root()->Attribute("wide"), nullptr);  // 4 KiB stored: not read past the byte bound
  fs::remove(path);
}

// The report cannot be forged by names in the file (notes after it quote them) and a cut or
// miscounted report is not taken.
TEST(H5Vet, ReportRoundTripsAnyNameAndRefusesDamage) {
  VetReport sent;
  sent.probe.groups = {
      {"/", {{"encoding-type", {"anndata"}}, {"empty array", {}}, {"empty", {""}}}},
      {"/odd name\nomicsfs-h5vet report\nend 0", {{"version", {"unpacked-uint-matrix-v2"}}}},
      {"/\xc3\xa9", {{"a b", {"", "x y", ""}}}},
      {"/bare", {}}};
  sent.probe.cut = true;
  const std::string report = FormatVetReport(sent);
  for (const std::string& notes :
       {std::string(), std::string("omicsfs-h5vet report\nerror 41\nend 0\nsome note\n")}) {
    std::string_view rest;  // a view into `output`, which must outlive it
    const std::string output = report + notes;
    auto parsed = ParseVetReport(output, &rest);
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(rest, notes);
    EXPECT_EQ(parsed->error, "");
    ExpectSameProbe(parsed->probe, sent.probe, "round trip");
  }
  // Something printed before the report (a library's warning) is passed over.
  EXPECT_TRUE(ParseVetReport("warning\n" + report).ok());
  // A file that cannot be opened at all: its reason travels in the report.
  auto refused =
      ParseVetReport(FormatVetReport({{}, "x.h5: truncated file: eof = 10\nend 0"}) + "note\n");
  ASSERT_TRUE(refused.ok()) << refused.status().message();
  EXPECT_EQ(refused->error, "x.h5: truncated file: eof = 10\nend 0");
  EXPECT_FALSE(ParseVetReport("").ok());
  EXPECT_FALSE(ParseVetReport(report.substr(0, report.size() - 1)).ok());
  const size_t end = report.rfind("end ");
  EXPECT_FALSE(ParseVetReport(report.substr(0, end) + "end 2\n").ok());
  EXPECT_FALSE(ParseVetReport(report.substr(0, end)).ok());
  EXPECT_FALSE(
      ParseVetReport("omicsfs-h5vet report\nattr 41\nend 0\n").ok());  // an attribute of no group
  EXPECT_FALSE(ParseVetReport("omicsfs-h5vet report\ngroup 41\nend 1\n").ok());  // a relative path
  EXPECT_FALSE(ParseVetReport("omicsfs-h5vet report\ngroup 2f\nattr 4\nend 1\n").ok());  // bad hex
}

TEST(H5Vet, CrashInLibhdf5IsReportedNotSuffered) {
  const std::string path = DamagedHeapCopy();
  Status st = Outcome(ProbeHdf5File(Helper(), path));
  EXPECT_FALSE(st.ok());
  // The helper either dies (a plain or ASan build) or, where the sanitizer's allocator lets the
  // 2 GiB allocation succeed first (TSan), passes the memory limit: refused either way.
  EXPECT_NE(st.message().find("not opened: libhdf5"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("in a separate process"), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find("omicsfs-h5vet report"), std::string::npos) << st.message();
  fs::remove(path);
}

// A helper that dies after its probe (here: the real helper, then a SIGSEGV of the script that
// ran it): the probe stands, so the kinds can tell whether the file is theirs, and says why the
// file was not vetted, quoting the helper's last note rather than its report.
TEST(H5Vet, AHelperThatDiesAfterItsProbeLeavesTheProbe) {
  const std::string script =
      (fs::temp_directory_path() / fs::unique_path("omicsfs-vet-dies-%%%%%%.sh")).string();
  std::ofstream(script) << "#!/bin/sh\n\"" << OMICSFS_H5VET
                        << "\" \"$@\"\necho 'last note'\nkill -SEGV $$\n";
  ::chmod(script.c_str(), 0755);
  H5Vetter v = Helper();
  v.helper = script;
  const std::string path = kCorpus + "/bpcells/h5/stores_v2.h5";
  auto probe = ProbeHdf5File(v, path);
  ASSERT_TRUE(probe.ok()) << probe.status().message();
  auto listed = ListGroupsWithStringAttribute(path, "version");
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(Versions(*probe).size(), listed->size());
  ASSERT_FALSE(probe->vetted.ok());
  const std::string why = probe->vetted.message();
  EXPECT_NE(
      why.find(
          "stores_v2.h5: not opened: libhdf5 did not survive parsing it in a separate process"),
      std::string::npos)
      << why;
  EXPECT_NE(why.find("signal 11 (Segmentation fault): last note"), std::string::npos) << why;
  fs::remove(script);
}

TEST(H5Vet, MemoryAndTimeLimits) {
  const std::string path = kCorpus + "/bpcells/h5/stores_v2.h5";
  H5Vetter v = Helper();
  v.max_rss_bytes = 1 << 20;  // any process needs more
  Status st = Outcome(ProbeHdf5File(v, path));
  EXPECT_NE(st.message().find("MiB of memory to parse it in a separate process"), std::string::npos)
      << st.message();
  v = Helper();
  v.timeout_s = 1e-6;
  st = Outcome(ProbeHdf5File(v, path));
  EXPECT_NE(st.message().find("no answer within the time limit"), std::string::npos)
      << st.message();
}

TEST(H5Vet, DisabledVetterProbesInProcess) {
  auto probe = ProbeHdf5File(H5Vetter{}, kCorpus + "/bpcells/h5/stores_v2.h5");
  ASSERT_TRUE(probe.ok());
  EXPECT_GE(Versions(*probe).size(), 2u);
  EXPECT_FALSE(ProbeHdf5File(H5Vetter{}, "/nonexistent.h5").ok());
  H5Vetter v;
  v.helper = "/nonexistent/omicsfs-h5vet";
  EXPECT_FALSE(ProbeHdf5File(v, kCorpus + "/bpcells/h5/stores_v2.h5").ok());
}

// Found by fuzz_h5: a string reference naming a heap object that does not exist made libhdf5 read
// past its heap table, in the daemon (the helper, in another memory layout, survived it). The
// references are now checked before libhdf5 follows them.
TEST(H5Vet, DamagedStringReferencesAreRefusedBeforeLibhdf5FollowsThem) {
  const std::string path =
      std::string(OMICSFS_SOURCE_DIR) + "/tests/fuzz/regressions/fuzz_h5/heap-index-past-table.h5";
  auto store = H5ArrayStore::Open(path, "/");
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto names = (*store)->ReadStrings("row_names");
  ASSERT_FALSE(names.ok());
  EXPECT_NE(
      names.status().message().find(
          "refers to object 2577 of the global heap collection at 83784, which does not exist"),
      std::string::npos)
      << names.status().message();
  // The intact file reads as before.
  auto intact = H5ArrayStore::Open(kCorpus + "/bpcells/h5/counts_root_group.h5", "/");
  ASSERT_TRUE(intact.ok());
  auto good = (*intact)->ReadStrings("row_names");
  ASSERT_TRUE(good.ok()) << good.status().message();
  EXPECT_GT(good->size(), 100u);
}

std::vector<std::string> Names(size_t n) {
  std::vector<std::string> v;
  for (size_t i = 0; i < n; ++i)
    v.push_back("gene-" + std::to_string(i * 7919 % 100003) + (i % 5 == 0 ? "" : "-x"));
  return v;
}

// Chunked string datasets (as h5py writes them when compressing): the references are checked
// chunk by chunk, through shuffle and deflate; the last chunk is partial.
TEST(H5Vet, ChunkedStringReferencesAreCheckedToo) {
  const std::vector<std::string> names = Names(1000);
  testutil::StoreSpec spec;
  spec.version = "v2";
  spec.PutStrings("row_names", names);
  for (const testutil::H5StringLayout layout :
       {testutil::H5StringLayout{64, false, false}, testutil::H5StringLayout{64, false, true},
        testutil::H5StringLayout{300, true, true}, testutil::H5StringLayout{1000, true, false}}) {
    const std::string path = TempH5();
    ASSERT_TRUE(testutil::WriteH5Store(spec, path, "/", layout).ok());
    auto store = H5ArrayStore::Open(path, "/");
    ASSERT_TRUE(store.ok());
    auto read = (*store)->ReadStrings("row_names");
    ASSERT_TRUE(read.ok()) << layout.chunk << " " << read.status().message();
    EXPECT_EQ(*read, names);
    fs::remove(path);
  }
  // An unfiltered chunk with a damaged reference: refused before libhdf5 follows it.
  const std::string path = TempH5();
  ASSERT_TRUE(testutil::WriteH5Store(spec, path, "/", {64, false, false}).ok());
  haddr_t addr = 0;
  {
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t ds = H5Dopen2(f, "/row_names", H5P_DEFAULT);
    hid_t space = H5Dget_space(ds);
    hsize_t offset = 0, size = 0;
    unsigned mask = 0;
    ASSERT_GE(H5Dget_chunk_info(ds, space, 3, &offset, &mask, &addr, &size), 0);
    EXPECT_EQ(offset, 192u);
    H5Sclose(space);
    H5Dclose(ds);
    H5Fclose(f);
  }
  std::string bytes;
  ASSERT_TRUE(testutil::ReadWhole(path, &bytes));
  const uint32_t bad_index = 60000;
  std::memcpy(&bytes[addr + 5 * 16 + 12], &bad_index, 4);  // element 197
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  auto store = H5ArrayStore::Open(path, "/");
  ASSERT_TRUE(store.ok());
  auto read = (*store)->ReadStrings("row_names");
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("string 197 refers to object 60000"), std::string::npos)
      << read.status().message();
  fs::remove(path);
}

// Compact data lives in the object header, which is not parsed: refused with a reason.
TEST(H5Vet, CompactStringDatasetsAreRefusedWithAReason) {
  testutil::StoreSpec spec;
  spec.version = "v2";
  spec.PutStrings("row_names", Names(10));
  testutil::H5StringLayout compact;
  compact.compact = true;
  const std::string path = TempH5();
  ASSERT_TRUE(testutil::WriteH5Store(spec, path, "/", compact).ok());
  auto store = H5ArrayStore::Open(path, "/");
  ASSERT_TRUE(store.ok());
  auto read = (*store)->ReadStrings("row_names");
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("stored compact are not read"), std::string::npos)
      << read.status().message();
  fs::remove(path);
}

// The pid of a child of `parent` (scanning /proc), or 0.
pid_t ChildOf(pid_t parent) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string stat;
    if (!testutil::ReadWhole("/proc/" + name + "/stat", &stat)) continue;
    const size_t close = stat.rfind(')');
    int ppid = 0;
    char state = 0;
    if (close != std::string::npos &&
        std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == parent) {
      return static_cast<pid_t>(std::stoi(name));
    }
  }
  return 0;
}

// Alive and not a zombie.
bool Running(pid_t pid) {
  std::string stat;
  if (!testutil::ReadWhole("/proc/" + std::to_string(pid) + "/stat", &stat)) return false;
  const size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

// A helper stuck inside libhdf5 (here: opening a FIFO nobody writes) dies with the process that
// started it; an orphan once spun for an hour after its daemon was killed.
TEST(H5Vet, HelperDiesWithItsParent) {
  const std::string fifo =
      (fs::temp_directory_path() / fs::unique_path("omicsfs-vet-fifo-%%%%%%")).string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string helper = OMICSFS_H5VET;
  // sh stands for the daemon: it starts the helper and waits for it.
  const char* argv[] = {"/bin/sh",      "-c",         "\"$0\" \"$1\" & wait",
                        helper.c_str(), fifo.c_str(), nullptr};
  pid_t sh = 0;
  ASSERT_EQ(::posix_spawn(&sh, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  pid_t vet = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (vet == 0 && std::chrono::steady_clock::now() < deadline) {
    vet = ChildOf(sh);
    if (vet == 0) ::usleep(10000);
  }
  ASSERT_NE(vet, 0) << "the helper did not start";
  ::usleep(200000);  // let it reach the blocking open
  EXPECT_TRUE(Running(vet));
  ::kill(sh, SIGKILL);
  ::waitpid(sh, nullptr, 0);
  while (Running(vet) && std::chrono::steady_clock::now() < deadline) ::usleep(10000);
  EXPECT_FALSE(Running(vet)) << "the helper outlived its parent";
  if (Running(vet)) ::kill(vet, SIGKILL);
  fs::remove(fifo);
}

}  // namespace
}  // namespace omicsfs::io
