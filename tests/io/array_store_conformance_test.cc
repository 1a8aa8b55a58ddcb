// One conformance suite over every ArrayStore backend (memory, directory, HDF5 group, HDF5 root,
// HDF5 over a ByteSource).
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <thread>

#include "io/h5_array_store.h"
#include "io/local/local_space.h"
#include "io/memory_array_store.h"
#include "io/space_array_store.h"
#include "testutil/mount_fixture.h"
#include "testutil/store_writer.h"
#include "util/fs.h"

namespace omicsfs::io {
namespace {

using testutil::Slurp;

testutil::StoreSpec SampleSpec() {
  testutil::StoreSpec s;
  s.version = "packed-uint-matrix-v2";
  std::vector<uint32_t> u32(5000);
  for (size_t i = 0; i < u32.size(); ++i) u32[i] = static_cast<uint32_t>(i * 2654435761u);
  s.Put("u32", u32);
  s.Put("u64", std::vector<uint64_t>{0, 1, uint64_t{1} << 40, UINT64_MAX});
  s.Put("f32", std::vector<float>{0.1f, -3.5f, 1e-7f});
  s.Put("f64", std::vector<double>{1.0 / 3, 6.02214076e23});
  s.Put("empty", std::vector<uint32_t>{});
  s.PutStrings("names", {"a", "with space", " lead", "ü é 细胞 🧬", "#hash", "back\\slash"});
  s.PutStrings("no_names", {});
  return s;
}

struct Backend {
  std::string name;
  std::function<std::shared_ptr<ArrayStore>(const testutil::StoreSpec&, const fs::path&)> make;
};

std::shared_ptr<ArrayStore> MakeMemory(const testutil::StoreSpec& spec, const fs::path&) {
  return testutil::ToMemoryStore(spec);
}

std::shared_ptr<ArrayStore> MakeDir(const testutil::StoreSpec& spec, const fs::path& tmp) {
  std::string dir = (tmp / "store").string();
  EXPECT_TRUE(testutil::WriteDirStore(spec, dir).ok());
  auto s = SpaceArrayStore::Open(std::make_shared<LocalByteSpace>(dir));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::shared_ptr<ArrayStore>(std::move(s).value()) : nullptr;
}

std::shared_ptr<ArrayStore> MakeH5(const testutil::StoreSpec& spec, const fs::path& tmp,
                                   const std::string& group) {
  std::string file = (tmp / "stores.h5").string();
  EXPECT_TRUE(testutil::WriteH5Store(spec, file, group).ok());
  auto s = H5ArrayStore::Open(file, group);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::shared_ptr<ArrayStore>(std::move(s).value()) : nullptr;
}

// The same file read through the ByteSource driver (io/h5_vfd.h) from a LocalByteSource.
std::shared_ptr<ArrayStore> MakeH5Source(const testutil::StoreSpec& spec, const fs::path& tmp,
                                         const std::string& group) {
  std::string file = (tmp / "stores.h5").string();
  EXPECT_TRUE(testutil::WriteH5Store(spec, file, group).ok());
  auto source = LocalByteSource::OpenPath(file);
  EXPECT_TRUE(source.ok()) << source.status().ToString();
  if (!source.ok()) return nullptr;
  auto s = H5ArrayStore::Open(*source, group);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::shared_ptr<ArrayStore>(std::move(s).value()) : nullptr;
}

class ArrayStoreConformance : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    tmp_ = fs::temp_directory_path() / fs::unique_path("omicsfs-io-%%%%%%");
    fs::create_directories(tmp_);
    spec_ = SampleSpec();
    store_ = GetParam().make(spec_, tmp_);
    ASSERT_NE(store_, nullptr);
  }
  void TearDown() override { fs::remove_all(tmp_); }

  fs::path tmp_;
  testutil::StoreSpec spec_;
  std::shared_ptr<ArrayStore> store_;
};

TEST_P(ArrayStoreConformance, Version) {
  auto v = store_->Version();
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, "packed-uint-matrix-v2");
}

TEST_P(ArrayStoreConformance, InfoReportsTypeAndLength) {
  struct Want {
    const char* name;
    ElemType type;
    uint64_t length;
  };
  for (Want w : {Want{"u32", ElemType::kUInt32, 5000}, Want{"u64", ElemType::kUInt64, 4},
                 Want{"f32", ElemType::kFloat32, 3}, Want{"f64", ElemType::kFloat64, 2},
                 Want{"empty", ElemType::kUInt32, 0}, Want{"names", ElemType::kString, 6},
                 Want{"no_names", ElemType::kString, 0}}) {
    auto info = store_->Info(w.name);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    ASSERT_TRUE(info->has_value()) << w.name;
    EXPECT_EQ((*info)->type, w.type) << w.name;
    EXPECT_EQ((*info)->length, w.length) << w.name;
  }
}

TEST_P(ArrayStoreConformance, AbsentIsAValueNotAnError) {
  auto info = store_->Info("does_not_exist");
  ASSERT_TRUE(info.ok());
  EXPECT_FALSE(info->has_value());
  uint32_t x;
  EXPECT_FALSE(store_->ReadRange<uint32_t>("does_not_exist", 0, 1, &x).ok());
}

TEST_P(ArrayStoreConformance, ReadsRangesExactly) {
  auto want = spec_.Get<uint32_t>("u32");
  std::vector<uint32_t> got(100);
  ASSERT_TRUE(store_->ReadRange("u32", 1234, 100, got.data()).ok());
  for (int i = 0; i < 100; ++i) ASSERT_EQ(got[i], want[1234 + i]);
  auto all = store_->ReadAll<uint32_t>("u32");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, want);
  auto u64 = store_->ReadAll<uint64_t>("u64");
  ASSERT_TRUE(u64.ok());
  EXPECT_EQ(*u64, spec_.Get<uint64_t>("u64"));
  auto f32 = store_->ReadAll<float>("f32");
  ASSERT_TRUE(f32.ok());
  EXPECT_EQ(*f32, spec_.Get<float>("f32"));
  auto f64 = store_->ReadAll<double>("f64");
  ASSERT_TRUE(f64.ok());
  EXPECT_EQ(*f64, spec_.Get<double>("f64"));
  auto widened = store_->ReadAllAsU64("u32");
  ASSERT_TRUE(widened.ok());
  EXPECT_EQ((*widened)[7], want[7]);
  auto empty = store_->ReadAll<uint32_t>("empty");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST_P(ArrayStoreConformance, RangeAndTypeAreChecked) {
  std::vector<uint32_t> buf(10);
  EXPECT_EQ(store_->ReadRange("u32", 4995, 10, buf.data()).code(), ErrorCode::kCorrupt);
  EXPECT_EQ(store_->ReadRange("u32", UINT64_MAX - 2, 5, buf.data()).code(), ErrorCode::kCorrupt);
  std::vector<uint64_t> wide(2);
  EXPECT_EQ(store_->ReadRange("u32", 0, 2, wide.data()).code(), ErrorCode::kCorrupt);
}

TEST_P(ArrayStoreConformance, Strings) {
  auto names = store_->ReadStrings("names");
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  EXPECT_EQ(*names, spec_.arrays.at("names").strings);
  auto none = store_->ReadStrings("no_names");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_P(ArrayStoreConformance, ConcurrentReadsAgree) {
  auto want = spec_.Get<uint32_t>("u32");
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::vector<uint32_t> got(97);
      for (int r = 0; r < 200; ++r) {
        uint64_t first = static_cast<uint64_t>((t * 131 + r * 17) % 4900);
        if (!store_->ReadRange("u32", first, 97, got.data()).ok()) {
          ++mismatches;
          continue;
        }
        for (int i = 0; i < 97; ++i)
          if (got[i] != want[first + i]) ++mismatches;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Backends, ArrayStoreConformance,
    ::testing::Values(Backend{"memory", MakeMemory}, Backend{"dir", MakeDir},
                      Backend{"h5_group",
                              [](auto& s, auto& t) { return MakeH5(s, t, "/a/b/store"); }},
                      Backend{"h5_root", [](auto& s, auto& t) { return MakeH5(s, t, "/"); }},
                      Backend{"h5_over_byte_source",
                              [](auto& s, auto& t) { return MakeH5Source(s, t, "/a/b/store"); }}),
    [](const auto& info) { return info.param.name; });

std::string Lines(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

// Fixed-length HDF5 strings written by h5py (NULLPAD and NULLTERM) read like BPCells reads them.
TEST(H5ArrayStoreTest, FixedLengthStringsFromCorpus) {
  const std::string corpus = OMICSFS_CORPUS_DIR "/bpcells";
  for (const char* group : {"/counts_packed_fixedstr", "/counts_packed_fixedstr_nullterm"}) {
    auto s = H5ArrayStore::Open(corpus + "/h5/fixedstr.h5", group);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    auto v = (*s)->Version();
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(*v, "packed-uint-matrix-v2");
    auto rows = (*s)->ReadStrings("row_names");
    ASSERT_TRUE(rows.ok());
    EXPECT_EQ(Lines(*rows), Slurp(corpus + "/expected/counts.rownames.txt")) << group;
    auto order = (*s)->ReadStrings("storage_order");
    ASSERT_TRUE(order.ok());
    EXPECT_EQ(*order, std::vector<std::string>{"col"});
  }
}

TEST(H5ArrayStoreTest, ListsStoreGroupsIncludingRootAndNested) {
  const std::string corpus = OMICSFS_CORPUS_DIR "/bpcells";
  auto groups = ListGroupsWithStringAttribute(corpus + "/h5/stores_v2.h5", "version");
  ASSERT_TRUE(groups.ok());
  bool nested = false;
  for (const auto& g : *groups) nested |= g.group == "/nested/deeper/counts_packed";
  EXPECT_TRUE(nested);
  auto root = ListGroupsWithStringAttribute(corpus + "/h5/counts_root_group.h5", "version");
  ASSERT_TRUE(root.ok());
  ASSERT_EQ(root->size(), 1u);
  EXPECT_EQ((*root)[0].group, "/");
  // A root attribute `version` that is an integer is not a string attribute.
  auto tenx =
      ListGroupsWithStringAttribute(corpus + "/h5/filtered_feature_bc_matrix.h5", "version");
  ASSERT_TRUE(tenx.ok());
  EXPECT_TRUE(tenx->empty());
  EXPECT_TRUE(IsHdf5File(corpus + "/h5/stores_v2.h5"));
  EXPECT_FALSE(IsHdf5File(corpus + "/manifest.tsv"));
}

TEST(SpaceArrayStoreTest, TruncatedNumericFileIsCorrupt) {
  fs::path tmp = fs::temp_directory_path() / fs::unique_path("omicsfs-io-%%%%%%");
  fs::create_directories(tmp);
  std::ofstream(tmp.string() + "/version") << "packed-uint-matrix-v2\n";
  std::ofstream(tmp.string() + "/bad", std::ios::binary) << std::string("UINT32v1") + "abcde";
  auto s = SpaceArrayStore::Open(std::make_shared<LocalByteSpace>(tmp.string()));
  ASSERT_TRUE(s.ok());
  auto info = (*s)->Info("bad");
  EXPECT_EQ(info.status().code(), ErrorCode::kCorrupt);
  EXPECT_NE(info.status().message().find("bad"), std::string::npos);
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace omicsfs::io
