// The HDF5 vetting helper, run as the daemon runs it (io/h5_vet.h).
#include "io/h5_vet.h"

#include "io/h5_array_store.h"

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

#include "testutil/mount_fixture.h"
#include "testutil/store_writer.h"
#include "util/fs.h"

namespace omicsfs::io {
namespace {

const std::string kCorpus = OMICSFS_CORPUS_DIR;

H5Vetter Helper() {
  H5Vetter v;
  v.helper = OMICSFS_H5VET;
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
  const std::string path = (fs::temp_directory_path() / fs::unique_path("omicsfs-vet-%%%%%%.h5")).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(H5Vet, CorpusFilesPassAndMakeNoComplaint) {
  for (const char* f : {"counts_root_group.h5", "stores_v1.h5", "stores_v2.h5", "frags_gzip.h5", "fixedstr.h5",
                        "filtered_feature_bc_matrix.h5"}) {
    const std::string path = kCorpus + "/bpcells/h5/" + f;
    auto listed = ListGroupsWithStringAttribute(path, "version");
    ASSERT_TRUE(listed.ok()) << f;
    auto reported = VetHdf5File(Helper(), path);
    ASSERT_TRUE(reported.ok()) << f << ": " << reported.status().message();
    ASSERT_EQ(reported->size(), listed->size()) << f;
    for (size_t i = 0; i < listed->size(); ++i) {
      EXPECT_EQ((*reported)[i].group, (*listed)[i].group) << f;
      EXPECT_EQ((*reported)[i].value, (*listed)[i].value) << f;
    }
    std::string notes;
    std::vector<H5GroupAttribute> stores;
    EXPECT_TRUE(VetHdf5InProcess(path, 1 << 20, &notes, &stores).ok()) << f;
    EXPECT_EQ(notes, "") << f;
    EXPECT_EQ(stores.size(), listed->size()) << f;
  }
}

// The report cannot be forged by names in the file (notes quote them) and a cut or miscounted
// report is not taken.
TEST(H5Vet, ReportRoundTripsAnyNameAndRefusesDamage) {
  const std::vector<H5GroupAttribute> stores = {
      {"/", "v2-matrix"}, {"/odd name\nomicsfs-h5vet report\nend 0", "unpacked-uint-matrix-v2"}, {"/\xc3\xa9", ""}};
  const std::string report = FormatVetReport({stores, ""});
  for (const std::string& notes : {std::string(), std::string("omicsfs-h5vet report\nerror 41\nend 0\nsome note\n")}) {
    auto parsed = ParseVetReport(notes + report);
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(parsed->error, "");
    ASSERT_EQ(parsed->stores.size(), stores.size());
    for (size_t i = 0; i < stores.size(); ++i) {
      EXPECT_EQ(parsed->stores[i].group, stores[i].group);
      EXPECT_EQ(parsed->stores[i].value, stores[i].value);
    }
  }
  // A file that cannot be opened at all: its reason travels in the report.
  auto refused = ParseVetReport("note\n" + FormatVetReport({{}, "x.h5: truncated file: eof = 10\nend 0"}));
  ASSERT_TRUE(refused.ok()) << refused.status().message();
  EXPECT_EQ(refused->error, "x.h5: truncated file: eof = 10\nend 0");
  EXPECT_FALSE(ParseVetReport("").ok());
  EXPECT_FALSE(ParseVetReport(report.substr(0, report.size() - 1)).ok());
  const size_t end = report.rfind("end ");
  EXPECT_FALSE(ParseVetReport(report.substr(0, end) + "end 2\n").ok());
  EXPECT_FALSE(ParseVetReport(report.substr(0, end)).ok());
  EXPECT_FALSE(ParseVetReport(report + "trailing\n").ok());
}

TEST(H5Vet, CrashInLibhdf5IsReportedNotSuffered) {
  const std::string path = DamagedHeapCopy();
  Status st = VetHdf5File(Helper(), path).status();
  EXPECT_FALSE(st.ok());
  // The helper either dies (a plain or ASan build) or, where the sanitizer's allocator lets the
  // 2 GiB allocation succeed first (TSan), passes the memory limit: refused either way.
  EXPECT_NE(st.message().find("not opened: libhdf5"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("in a separate process"), std::string::npos) << st.message();
  fs::remove(path);
}

TEST(H5Vet, MemoryAndTimeLimits) {
  const std::string path = kCorpus + "/bpcells/h5/stores_v2.h5";
  H5Vetter v = Helper();
  v.max_rss_bytes = 1 << 20;  // any process needs more
  Status st = VetHdf5File(v, path).status();
  EXPECT_NE(st.message().find("MiB of memory to parse it in a separate process"), std::string::npos) << st.message();
  v = Helper();
  v.timeout_s = 1e-6;
  st = VetHdf5File(v, path).status();
  EXPECT_NE(st.message().find("no answer within the time limit"), std::string::npos) << st.message();
}

TEST(H5Vet, DisabledVetterListsInProcess) {
  auto listed = VetHdf5File(H5Vetter{}, kCorpus + "/bpcells/h5/stores_v2.h5");
  ASSERT_TRUE(listed.ok());
  EXPECT_GE(listed->size(), 2u);
  EXPECT_FALSE(VetHdf5File(H5Vetter{}, "/nonexistent.h5").ok());
  H5Vetter v;
  v.helper = "/nonexistent/omicsfs-h5vet";
  EXPECT_FALSE(VetHdf5File(v, kCorpus + "/bpcells/h5/stores_v2.h5").ok());
}

// Found by fuzz_h5: a string reference naming a heap object that does not exist made libhdf5 read
// past its heap table, in the daemon (the helper, in another memory layout, survived it). The
// references are now checked before libhdf5 follows them.
TEST(H5Vet, DamagedStringReferencesAreRefusedBeforeLibhdf5FollowsThem) {
  const std::string path = std::string(OMICSFS_SOURCE_DIR) + "/tests/fuzz/regressions/fuzz_h5/heap-index-past-table.h5";
  auto store = H5ArrayStore::Open(path, "/");
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto names = (*store)->ReadStrings("row_names");
  ASSERT_FALSE(names.ok());
  EXPECT_NE(names.status().message().find("refers to object 2577 of the global heap collection at 83784, which does not exist"),
            std::string::npos) << names.status().message();
  // The intact file reads as before.
  auto intact = H5ArrayStore::Open(kCorpus + "/bpcells/h5/counts_root_group.h5", "/");
  ASSERT_TRUE(intact.ok());
  auto good = (*intact)->ReadStrings("row_names");
  ASSERT_TRUE(good.ok()) << good.status().message();
  EXPECT_GT(good->size(), 100u);
}

std::string TempH5() {
  return (fs::temp_directory_path() / fs::unique_path("omicsfs-strings-%%%%%%.h5")).string();
}

std::vector<std::string> Names(size_t n) {
  std::vector<std::string> v;
  for (size_t i = 0; i < n; ++i) v.push_back("gene-" + std::to_string(i * 7919 % 100003) + (i % 5 == 0 ? "" : "-x"));
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
  EXPECT_NE(read.status().message().find("string 197 refers to object 60000"), std::string::npos) << read.status().message();
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
  EXPECT_NE(read.status().message().find("stored compact are not read"), std::string::npos) << read.status().message();
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
    if (close != std::string::npos && std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 &&
        ppid == parent) {
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
  const std::string fifo = (fs::temp_directory_path() / fs::unique_path("omicsfs-vet-fifo-%%%%%%")).string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string helper = OMICSFS_H5VET;
  // sh stands for the daemon: it starts the helper and waits for it.
  const char* argv[] = {"/bin/sh", "-c", "\"$0\" \"$1\" & wait", helper.c_str(), fifo.c_str(), nullptr};
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
