// The HDF5 driver over io::ByteSource (io/h5_vfd.h): every corpus HDF5 file reads the same through
// it as through libhdf5's own driver; damaged and failing sources fail cleanly, never with
// other bytes.
#include "io/h5_vfd.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#include "io/h5_array_store.h"
#include "io/h5_vet.h"
#include "io/local/local_space.h"
#include "testutil/mount_fixture.h"
#include "util/fs.h"

namespace omicsfs::io {
namespace {

const std::string kH5 = OMICSFS_CORPUS_DIR "/bpcells/h5";
const char* const kFiles[] = {
    "counts_gzip.h5", "counts_root_group.h5", "filtered_feature_bc_matrix.h5",
    "fixedstr.h5",    "frags_gzip.h5",        "rna.h5",
    "stores_v1.h5",   "stores_v2.h5"};

std::shared_ptr<const ByteSource> Local(const std::string& path) {
  auto s = LocalByteSource::OpenPath(path);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::shared_ptr<const ByteSource>(*s) : nullptr;
}

// A ByteSource over another that counts reads and can fail from the n-th read on.
class FaultySource : public ByteSource {
 public:
  FaultySource(std::shared_ptr<const ByteSource> base, int fail_from, int err)
      : base_(std::move(base)), fail_from_(fail_from), err_(err) {}
  const std::string& Describe() const override { return base_->Describe(); }
  const ObjectInfo& Info() const override { return base_->Info(); }
  Status ReadExact(uint64_t offset, void* out, size_t length) const override {
    const int n = reads_++;
    if (fail_from_ >= 0 && n >= fail_from_) {
      std::memset(out, 0x5a, length);  // garbage a careless driver would hand on
      return IoError(Describe() + ": injected failure", err_);
    }
    return base_->ReadExact(offset, out, length);
  }
  int reads() const { return reads_; }

 private:
  std::shared_ptr<const ByteSource> base_;
  const int fail_from_;
  const int err_;
  mutable std::atomic<int> reads_{0};
};

// Every array of a store: numeric ones as bytes, strings joined, the version first.
std::map<std::string, std::string> Contents(const H5ArrayStore& s) {
  std::map<std::string, std::string> out;
  auto v = s.Version();
  out[" version"] = v.ok() ? *v : "<" + v.status().message() + ">";
  auto names = s.DatasetNames();
  EXPECT_TRUE(names.ok()) << names.status().ToString();
  if (!names.ok()) return out;
  for (const std::string& name : *names) {
    auto info = s.Info(name);
    if (!info.ok() || !info->has_value()) {
      out[name] = "<no info>";
      continue;
    }
    const ArrayInfo& a = **info;
    if (a.type == ElemType::kString) {
      auto strings = s.ReadStrings(name);
      std::string joined;
      for (const auto& x : strings.ok() ? *strings : std::vector<std::string>{"<failed>"})
        joined += x + "\n";
      out[name] = joined;
      continue;
    }
    std::string bytes(a.length * ElemSize(a.type), '\0');
    Status st = s.Read(name, a.type, 0, a.length, bytes.data());
    out[name] = st.ok() ? bytes : "<" + st.message() + ">";
  }
  return out;
}

TEST(H5Vfd, CorpusFilesReadTheSameAsThroughThePosixDriver) {
  int stores = 0;
  for (const char* f : kFiles) {
    const std::string path = kH5 + "/" + f;
    auto source = Local(path);
    ASSERT_NE(source, nullptr);
    auto want_groups = ListGroupsWithStringAttribute(path, "version");
    auto got_groups = ListGroupsWithStringAttribute(source, "version");
    ASSERT_TRUE(want_groups.ok() && got_groups.ok()) << f << ": " << got_groups.status().ToString();
    ASSERT_EQ(want_groups->size(), got_groups->size()) << f;
    for (size_t i = 0; i < want_groups->size(); ++i) {
      const auto& g = (*want_groups)[i];
      EXPECT_EQ(g.group, (*got_groups)[i].group) << f;
      EXPECT_EQ(g.value, (*got_groups)[i].value) << f;
      auto want = H5ArrayStore::Open(path, g.group);
      auto got = H5ArrayStore::Open(source, g.group);
      ASSERT_TRUE(want.ok() && got.ok()) << f << ":" << g.group << ": " << got.status().ToString();
      EXPECT_EQ((*got)->Describe(), path + ":" + g.group);
      EXPECT_EQ(Contents(**want), Contents(**got)) << f << ":" << g.group;
      ++stores;
    }
    EXPECT_TRUE(*IsHdf5Source(*source)) << f;
  }
  EXPECT_GE(stores, 10);
  auto text = Local(OMICSFS_CORPUS_DIR "/bpcells/manifest.tsv");
  ASSERT_NE(text, nullptr);
  EXPECT_FALSE(*IsHdf5Source(*text));
}

TEST(H5Vfd, VettingOverASourceReportsWhatThePathDoes) {
  for (const char* f : {"stores_v2.h5", "frags_gzip.h5", "fixedstr.h5"}) {
    H5Probe by_path, by_source;
    ASSERT_TRUE(ProbeHdf5InProcess(kH5 + "/" + f, H5Bounds{}, &by_path).ok());
    ASSERT_TRUE(ProbeHdf5InProcess(Local(kH5 + "/" + f), H5Bounds{}, &by_source).ok());
    ASSERT_EQ(by_path.groups.size(), by_source.groups.size()) << f;
    for (size_t i = 0; i < by_path.groups.size(); ++i) {
      EXPECT_EQ(by_path.groups[i].path, by_source.groups[i].path);
      ASSERT_EQ(by_path.groups[i].attributes.size(), by_source.groups[i].attributes.size());
      for (size_t a = 0; a < by_path.groups[i].attributes.size(); ++a) {
        EXPECT_EQ(by_path.groups[i].attributes[a].values, by_source.groups[i].attributes[a].values);
      }
    }
    std::string notes_path, notes_source;
    VetHdf5InProcess(kH5 + "/" + f, by_path, {"version"}, 1 << 20, &notes_path);
    VetHdf5InProcess(Local(kH5 + "/" + f), by_source, {"version"}, 1 << 20, &notes_source);
    EXPECT_EQ(notes_path, notes_source) << f;
  }
}

// Truncated copies: opening fails, or every read either fails or gives the full file's bytes.
TEST(H5Vfd, TruncatedCopiesFailCleanly) {
  std::string bytes;
  ASSERT_TRUE(testutil::ReadWhole(kH5 + "/stores_v2.h5", &bytes));
  const auto full = H5ArrayStore::Open(Local(kH5 + "/stores_v2.h5"), "/counts_packed");
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  const auto want = Contents(**full);
  const fs::path tmp = fs::temp_directory_path() / fs::unique_path("omicsfs-vfd-%%%%%%.h5");
  int opened = 0, failed_reads = 0;
  for (size_t cut :
       {size_t{100}, size_t{2048}, bytes.size() / 4, bytes.size() / 2, bytes.size() - 1000}) {
    std::ofstream(tmp.string(), std::ios::binary | std::ios::trunc)
        .write(bytes.data(), static_cast<std::streamsize>(cut));
    auto source = Local(tmp.string());
    ASSERT_NE(source, nullptr);
    auto groups = ListGroupsWithStringAttribute(source, "version");
    auto store = H5ArrayStore::Open(source, "/counts_packed");
    if (!store.ok()) {
      EXPECT_FALSE(store.status().message().empty());
      EXPECT_FALSE(groups.ok() && !groups->empty() && cut < 2048) << cut;
      continue;
    }
    ++opened;
    for (const auto& [name, got] : Contents(**store)) {
      if (got.starts_with("<")) {
        ++failed_reads;
        continue;
      }
      EXPECT_EQ(got, want.at(name)) << "cut at " << cut << ": " << name;
    }
  }
  fs::remove(tmp);
  // libhdf5 refuses a file whose end of allocation lies past its end ("truncated file").
  EXPECT_EQ(opened, 0) << failed_reads;
}

// A source that fails (ESTALE: changed since opened; EIO) fails the read with its own error, and
// the bytes it scribbled never reach the caller.
TEST(H5Vfd, SourceErrorsFailTheReadWithTheSourcesError) {
  for (int err : {ESTALE, EIO}) {
    auto base = Local(kH5 + "/rna.h5");
    auto counting = std::make_shared<FaultySource>(base, -1, 0);
    auto groups = ListGroupsWithStringAttribute(counting, "version");
    ASSERT_TRUE(groups.ok() && !groups->empty());
    const std::string group = groups->front().group;
    // Reads while opening and listing: fail from the first read after them.
    auto faulty = std::make_shared<FaultySource>(base, 0, err);
    auto store = H5ArrayStore::Open(faulty, group);
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.status().sys_errno(), err) << store.status().ToString();
    EXPECT_NE(store.status().message().find("injected failure"), std::string::npos)
        << store.status().ToString();
    // Opened, and its dataset inspected, on a good source: count those reads; then a fresh
    // store on a source that fails from the next read on (the data, not yet read by anyone).
    auto counted = std::make_shared<FaultySource>(base, -1, 0);
    auto good = H5ArrayStore::Open(counted, group);
    ASSERT_TRUE(good.ok()) << good.status().ToString();
    auto info = (*good)->Info("idxptr");
    ASSERT_TRUE(info.ok() && info->has_value()) << info.status().ToString();
    auto late = std::make_shared<FaultySource>(base, counted->reads(), err);
    auto s = H5ArrayStore::Open(late, group);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE((*s)->Info("idxptr").ok());
    std::vector<char> buf((*info)->length * ElemSize((*info)->type), 0);
    Status st = (*s)->Read("idxptr", (*info)->type, 0, (*info)->length, buf.data());
    EXPECT_FALSE(st.ok());
    EXPECT_EQ(st.sys_errno(), err) << st.ToString();
    EXPECT_NE(st.message().find(base->Describe()), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find(" bytes at "), std::string::npos) << st.ToString();
  }
}

TEST(H5Vfd, ManyThreadsReadOneSource) {
  auto source = Local(kH5 + "/stores_v2.h5");
  auto store = H5ArrayStore::Open(source, "/counts_packed");
  ASSERT_TRUE(store.ok());
  const auto want = Contents(**store);
  std::vector<std::thread> threads;
  std::atomic<int> differing{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < 5; ++r) {
        auto s = H5ArrayStore::Open(source, "/counts_packed");
        if (!s.ok() || Contents(**s) != want) ++differing;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(differing.load(), 0);
}

TEST(H5Vfd, TheDriverRegistersOnceAndRefusesWriting) {
  const hid_t a = h5::ByteSourceDriver();
  EXPECT_GE(a, 0);
  EXPECT_EQ(a, h5::ByteSourceDriver());
  auto source = Local(kH5 + "/rna.h5");
  const hid_t fapl = h5::MakeByteSourceFapl(source);
  ASSERT_GE(fapl, 0);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t rw = H5Fopen("x", H5F_ACC_RDWR, fapl);
  EXPECT_LT(rw, 0);
  const hid_t copy = H5Pcopy(fapl);  // copies hold the source too
  H5Pclose(fapl);
  const hid_t f = H5Fopen("x", H5F_ACC_RDONLY, copy);
  EXPECT_GE(f, 0);
  H5Pclose(copy);
  if (f >= 0) H5Fclose(f);
  EXPECT_EQ(h5::MakeByteSourceFapl(nullptr), H5I_INVALID_HID);
}

}  // namespace
}  // namespace omicsfs::io
