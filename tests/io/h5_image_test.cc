// The HDF5 image builder (io/h5_image.h): the image of a plan, with its external datasets' bytes
// spliced in at their extents, is a file libhdf5, h5py and h5dump read as planned; the image is
// the same on every build (in one process after other libhdf5 work, and in another process);
// libhdf5 never writes where an external dataset lies; Parse refuses damaged images.
#include "io/h5_image.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <numeric>
#include <thread>

#include "io/h5_handle.h"
#include "testutil/mount_fixture.h"

namespace omicsfs::io::h5 {
namespace {

// An AnnData-like plan: root and group attributes, names written whole (vlen UTF-8 and fixed
// ASCII), an empty attribute, three external arrays of different types, one empty.
H5Plan SmallPlan(uint64_t n) {
  H5Plan p;
  auto enc = [](const char* type, const char* version) {
    return std::vector<H5Attribute>{{"encoding-type", H5Value::String(type)},
                                    {"encoding-version", H5Value::String(version)}};
  };
  p.AddGroup("/", enc("anndata", "0.1.0"));
  auto x = enc("csr_matrix", "0.1.0");
  x.push_back({"shape", H5Value::Int64s({2, int64_t(n)})});
  p.AddGroup("/X", x);
  auto obs = enc("dataframe", "0.2.0");
  obs.push_back({"_index", H5Value::String("_index")});
  obs.push_back({"column-order", H5Value::Float64s({})});
  p.AddGroup("/obs", obs);
  p.AddGroup("/uns", enc("dict", "0.1.0"));
  p.AddDataset("/obs/_index", H5Value::Strings({"cell_ä", "c2"}), enc("string-array", "0.2.0"));
  p.AddDataset("/obs/fixed", H5Value::Strings({"AAAC-1", "G"}, H5Strings{8, false}));
  p.AddExternal("/X/indptr", H5Type::kInt64, 3);
  p.AddExternal("/X/indices", H5Type::kUInt32, n);
  p.AddExternal("/X/data", H5Type::kFloat64, n);
  p.AddExternal("/X/empty", H5Type::kInt32, 0);
  return p;
}

std::string Le64(const std::vector<uint64_t>& v) {
  std::string s(v.size() * 8, '\0');
  std::memcpy(s.data(), v.data(), s.size());  // little-endian host (x86-64, aarch64)
  return s;
}

// The whole file: segments, the external bytes at their extents, zeros elsewhere.
std::string Splice(const H5Image& im, const std::vector<std::string>& external) {
  std::string f(im.size, '\0');
  for (const auto& s : im.segments)
    std::memcpy(f.data() + s.offset, s.bytes.data(), s.bytes.size());
  for (size_t i = 0; i < external.size(); ++i) {
    EXPECT_EQ(external[i].size(), im.external[i].bytes);
    std::memcpy(f.data() + im.external[i].offset, external[i].data(), external[i].size());
  }
  return f;
}

struct Spliced {
  std::string path;
  std::vector<uint64_t> indptr, indices;
  std::vector<double> data;
};

Spliced WriteSpliced(const H5Image& im, uint64_t n, const std::string& dir) {
  Spliced s;
  s.path = dir + "/x.h5ad";
  s.indptr = {0, n / 2, n};
  s.indices.resize(n);
  std::iota(s.indices.begin(), s.indices.end(), 7);
  std::string idx;
  for (uint64_t v : s.indices) {
    const auto u = static_cast<uint32_t>(v);
    idx.append(reinterpret_cast<const char*>(&u), 4);
  }
  s.data.resize(n);
  for (uint64_t i = 0; i < n; ++i) s.data[i] = 0.5 * double(i);
  std::string data(n * 8, '\0');
  std::memcpy(data.data(), s.data.data(), data.size());
  std::ofstream(s.path, std::ios::binary) << Splice(im, {Le64(s.indptr), idx, data, ""});
  return s;
}

TEST(H5Image, LibhdfReadsTheSplicedFile) {
  const uint64_t n = 100000;
  auto im = BuildImage(SmallPlan(n), "small.h5ad");
  ASSERT_TRUE(im.ok()) << im.status().ToString();
  ASSERT_EQ(im->external.size(), 4u);
  EXPECT_EQ(im->external[0].bytes, 24u);
  EXPECT_EQ(im->external[1].bytes, n * 4);
  EXPECT_EQ(im->external[2].bytes, n * 8);
  EXPECT_EQ(im->external[3].bytes, 0u);
  // Arrays of a page or more start on a page.
  EXPECT_EQ(im->external[1].offset % 4096, 0u);
  EXPECT_EQ(im->external[2].offset % 4096, 0u);
  // Only metadata was recorded: far less than the file.
  uint64_t recorded = 0;
  for (const auto& s : im->segments) recorded += s.bytes.size();
  EXPECT_LT(recorded, 64u << 10);
  EXPECT_GE(im->size, n * 12);

  testutil::TempDir dir;
  const Spliced s = WriteSpliced(*im, n, dir.path());
  auto file = OpenFile(s.path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  Handle set = DatasetHandle(H5Dopen2(file->get(), "/X/data", H5P_DEFAULT));
  ASSERT_TRUE(set.valid());
  std::vector<double> data(n);
  ASSERT_GE(H5Dread(set.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), 0);
  EXPECT_EQ(data, s.data);
  Handle idx = DatasetHandle(H5Dopen2(file->get(), "/X/indices", H5P_DEFAULT));
  std::vector<uint64_t> indices(n);
  ASSERT_GE(H5Dread(idx.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, indices.data()),
            0);
  EXPECT_EQ(indices, s.indices);
  Handle names = DatasetHandle(H5Dopen2(file->get(), "/obs/_index", H5P_DEFAULT));
  auto got = ReadStringValues(names.get(), false, "obs/_index");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, (std::vector<std::string>{"cell_ä", "c2"}));
  Handle fixed = DatasetHandle(H5Dopen2(file->get(), "/obs/fixed", H5P_DEFAULT));
  auto got_fixed = ReadStringValues(fixed.get(), false, "obs/fixed");
  ASSERT_TRUE(got_fixed.ok()) << got_fixed.status().ToString();
  EXPECT_EQ(*got_fixed, (std::vector<std::string>{"AAAC-1", "G"}));
}

// The real clients: h5py reads every array and attribute as planned; h5dump opens every object.
TEST(H5Image, H5pyAndH5dumpReadTheSplicedFile) {
  const uint64_t n = 1000;
  auto im = BuildImage(SmallPlan(n), "small.h5ad");
  ASSERT_TRUE(im.ok()) << im.status().ToString();
  testutil::TempDir dir;
  const Spliced s = WriteSpliced(*im, n, dir.path());
  if (::access("/usr/bin/h5dump", X_OK) == 0) {
    std::string out;
    EXPECT_EQ(testutil::RunCommand({"/usr/bin/h5dump", "-H", s.path}, &out), 0) << out;
    EXPECT_NE(out.find("DATASET \"indices\""), std::string::npos) << out;
  }
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  const std::string script =
      "import sys, h5py, numpy as np\n"
      "f = h5py.File(sys.argv[1], 'r')\n"
      "a = dict(f.attrs); x = f['X']\n"
      "assert a['encoding-type'] == 'anndata', a\n"
      "assert list(x.attrs['shape']) == [2, " +
      std::to_string(n) +
      "]\n"
      "assert x['indices'].dtype == np.uint32 and x['data'].dtype == np.float64\n"
      "assert list(x['indptr'][:]) == [0, " +
      std::to_string(n / 2) + ", " + std::to_string(n) +
      "]\n"
      "assert (x['indices'][:] == np.arange(7, 7 + " +
      std::to_string(n) +
      ")).all()\n"
      "assert (x['data'][:] == 0.5 * np.arange(" +
      std::to_string(n) +
      ")).all()\n"
      "assert x['empty'].shape == (0,)\n"
      "assert [v.decode() for v in f['obs/_index'][:]] == ['cell_ä', 'c2']\n"
      "assert list(f['obs/fixed'][:]) == [b'AAAC-1', b'G']\n"
      "assert f['obs'].attrs['column-order'].shape == (0,)\n"
      "assert f['X/data'].id.get_offset() is not None\n"
      "print('ok')\n";
  std::string out;
  if (testutil::RunCommand({"/usr/bin/python3", "-c", "import h5py"}, &out) != 0)
    GTEST_SKIP() << "no h5py";
  EXPECT_EQ(testutil::RunCommand({"/usr/bin/python3", "-c", script, s.path}, &out), 0) << out;
  EXPECT_EQ(out, "ok\n");
}

// The same bytes every time: a second build, one after other libhdf5 work in this process (its
// free lists hold other memory then) and a second later (no object timestamps), and the
// serialized form round-trips.
TEST(H5Image, SameBytesEveryBuild) {
  auto a = BuildImage(SmallPlan(5000), "a.h5ad");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  {
    H5Plan other;
    other.AddGroup("/g");
    std::vector<std::string> many;
    for (int i = 0; i < 20000; ++i) many.push_back("noise" + std::to_string(i * 7919));
    other.AddDataset("/g/names", H5Value::Strings(many));
    ASSERT_TRUE(BuildImage(other, "other.h5").ok());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  auto b = BuildImage(SmallPlan(5000), "b.h5ad");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(a->Serialize(), b->Serialize());
  auto back = H5Image::Parse(a->Serialize());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->Serialize(), a->Serialize());
}

TEST(H5Image, ParseRefusesDamage) {
  auto a = BuildImage(SmallPlan(100), "a.h5ad");
  ASSERT_TRUE(a.ok());
  const std::string good = a->Serialize();
  EXPECT_FALSE(H5Image::Parse(good.substr(0, good.size() - 1)).ok());
  EXPECT_FALSE(H5Image::Parse("x" + good).ok());
  H5Image overlap = *a;
  overlap.external[1].offset = overlap.segments[0].offset;
  EXPECT_FALSE(H5Image::Parse(overlap.Serialize()).ok());
  H5Image past = *a;
  past.size = 10;
  EXPECT_FALSE(H5Image::Parse(past.Serialize()).ok());
}

TEST(H5Image, BadPlansFail) {
  H5Plan missing;
  missing.AddExternal("/nowhere/x", H5Type::kInt32, 4);
  auto r = BuildImage(missing, "m.h5");
  EXPECT_FALSE(r.ok());
  H5Plan too_long;
  too_long.AddDataset("/s", H5Value::Strings({"abcdef"}, H5Strings{3, false}));
  r = BuildImage(too_long, "t.h5");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  H5Plan short_bytes;
  short_bytes.AddDataset("/n", H5Value::Numbers(H5Type::kInt32, {4}, "abc"));
  EXPECT_EQ(BuildImage(short_bytes, "s.h5").status().code(), ErrorCode::kInvalidArgument);
}

// Large externals cost nothing: a plan of 2^40 bytes of arrays makes a small image.
TEST(H5Image, HugeExternalsAllocateNothing) {
  H5Plan p;
  p.AddExternal("/big", H5Type::kFloat64, uint64_t{1} << 37);
  p.AddDataset("/after", H5Value::Int64s({1, 2, 3}));
  auto im = BuildImage(p, "huge.h5");
  ASSERT_TRUE(im.ok()) << im.status().ToString();
  EXPECT_GE(im->size, uint64_t{1} << 40);
  uint64_t recorded = 0;
  for (const auto& s : im->segments) recorded += s.bytes.size();
  EXPECT_LT(recorded, 16u << 10);
}

}  // namespace
}  // namespace omicsfs::io::h5
