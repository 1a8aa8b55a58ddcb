// 10x.h5's plan and renderer (text/tenx_h5_source.h) over random BPCells stores of every value
// type and both orders: the file's matrix/indptr, indices and data are the CSC arrays of the
// genes × cells matrix (int64 pointers and indices, the store's values): a column-major store's
// own arrays; a row-major store's columns from its transposed copy, rows ascending, persisted and
// reused. Whatever the chunk size, the same bytes. The plan is Cell Ranger's layout, and h5py
// reads the strings back (all-empty S1 strings included).
#include "text/tenx_h5_source.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "formats/bpcells/matrix.h"
#include "testutil/mount_fixture.h"
#include "testutil/store_writer.h"
#include "util/fs.h"

namespace omicsfs::text {
namespace {

using io::h5::H5Type;
using testutil::ValueKind;

std::string ReadAll(const ByteView& v, uint64_t offset, uint64_t length) {
  auto pieces = v.Read(offset, length);
  EXPECT_TRUE(pieces.ok()) << pieces.status().ToString();
  std::string out;
  if (!pieces.ok()) return out;
  for (const auto& p : *pieces) out.append(p.buffer->data() + p.offset, p.length);
  return out;
}

template <typename T, typename From>
std::string Le(const std::vector<From>& v) {
  std::string out;
  for (From x : v) {
    const T t = static_cast<T>(x);
    out.append(reinterpret_cast<const char*>(&t), sizeof(T));
  }
  return out;
}

// The CSC arrays (per column, rows ascending) of a spec in either order.
struct Csc {
  std::vector<int64_t> indptr, indices;
  std::vector<double> values;
};
Csc CscOf(const testutil::MatrixSpec& s) {
  if (!s.row_major) {
    return {std::vector<int64_t>(s.idxptr.begin(), s.idxptr.end()),
            std::vector<int64_t>(s.inner.begin(), s.inner.end()), s.values};
  }
  std::vector<std::vector<std::pair<int64_t, double>>> cols(s.cols);
  for (uint32_t r = 0; r < s.rows; ++r) {
    for (uint64_t k = s.idxptr[r]; k < s.idxptr[r + 1]; ++k)
      cols[s.inner[k]].push_back({r, s.values[k]});
  }
  Csc c;
  c.indptr.push_back(0);
  for (const auto& col : cols) {
    for (const auto& [r, v] : col) {
      c.indices.push_back(r);
      c.values.push_back(v);
    }
    c.indptr.push_back(static_cast<int64_t>(c.indices.size()));
  }
  return c;
}

TEST(TenxH5Source, TheArraysAreTheColumnsAtEveryChunkSize) {
  for (ValueKind kind : {ValueKind::kUInt32, ValueKind::kFloat32, ValueKind::kFloat64}) {
    for (bool row_major : {false, true}) {
      SCOPED_TRACE(std::to_string(static_cast<int>(kind)) + (row_major ? " row" : " col"));
      auto spec = testutil::RandomMatrix(300, 90, 0.05, kind, row_major, true, 2, 11);
      auto m =
          formats::bpcells::Matrix::Open(testutil::ToMemoryStore(testutil::MakeMatrixStore(spec)));
      ASSERT_TRUE(m.ok()) << m.status().ToString();
      auto plan = TenxH5Plan(**m);
      ASSERT_TRUE(plan.ok()) << plan.status().ToString();
      const auto& ds = plan->datasets;
      ASSERT_EQ(ds.size(), 10u);
      EXPECT_EQ(ds[7].path, "/matrix/indptr");
      EXPECT_EQ(ds[7].value.type, H5Type::kInt64);
      EXPECT_EQ(ds[8].value.type, H5Type::kInt64);
      EXPECT_EQ(ds[9].value.type, kind == ValueKind::kUInt32    ? H5Type::kUInt32
                                  : kind == ValueKind::kFloat32 ? H5Type::kFloat32
                                                                : H5Type::kFloat64);
      const Csc want = CscOf(spec);
      const std::string values = kind == ValueKind::kUInt32    ? Le<uint32_t>(want.values)
                                 : kind == ValueKind::kFloat32 ? Le<float>(want.values)
                                                               : Le<double>(want.values);
      testutil::TempDir scratch;
      cache::CachePool pool(64 << 20);
      std::string whole;
      // The default chunk, then chunks of 128 entries: the second reuses the persisted copy.
      for (uint64_t per : {uint64_t{1} << 18, uint64_t{128}}) {
        auto view = std::make_shared<const H5FileView>(
            [m = *m] { return TenxH5Plan(*m); },
            TenxH5Renderer(*m, &pool, {scratch.path()},
                           formats::TransposedCopy::In(scratch.path(), "store key", false), per),
            SizingOptions{}, "10x.h5");
        auto size = view->Size();
        ASSERT_TRUE(size.ok()) << size.status().ToString();
        const std::string bytes = ReadAll(*view, 0, *size);
        ASSERT_EQ(bytes.size(), *size);
        std::vector<std::string> arrays;
        for (size_t d = 0; d < 3; ++d) {
          auto e = view->Extent(d);
          ASSERT_TRUE(e.ok());
          arrays.push_back(bytes.substr(e->offset, e->bytes));
        }
        EXPECT_EQ(arrays[0], Le<int64_t>(want.indptr)) << "per " << per;
        EXPECT_EQ(arrays[1], Le<int64_t>(want.indices)) << "per " << per;
        EXPECT_EQ(arrays[2], values) << "per " << per;
        if (whole.empty()) {
          whole = bytes;
        } else {
          EXPECT_EQ(bytes, whole);
        }
      }
      // A row-major store's copy was persisted (and only then).
      size_t copies = 0;
      for (const auto& e : fs::directory_iterator(scratch.path()))
        copies += e.path().extension() == ".csr";
      EXPECT_EQ(copies, row_major ? 1u : 0u);
    }
  }
}

TEST(TenxH5Source, CellRangersLayoutReadBackByH5py) {
  // No names: the stand-ins; 10 rows make `genome` 10 empty S1 strings (10 bytes, the case a
  // moved short std::string once wrote as garbage).
  auto spec = testutil::RandomMatrix(10, 3, 0.5, ValueKind::kUInt32, false, true, 2, 3,
                                     /*names=*/false);
  auto m = formats::bpcells::Matrix::Open(testutil::ToMemoryStore(testutil::MakeMatrixStore(spec)));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto plan = TenxH5Plan(**m);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::vector<std::string> paths;
  for (const auto& g : plan->groups) paths.push_back(g.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"/", "/matrix", "/matrix/features"}));
  paths.clear();
  for (const auto& d : plan->datasets) paths.push_back(d.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"/matrix/barcodes", "/matrix/features/_all_tag_keys",
                                             "/matrix/features/feature_type",
                                             "/matrix/features/genome", "/matrix/features/id",
                                             "/matrix/features/name", "/matrix/shape",
                                             "/matrix/indptr", "/matrix/indices", "/matrix/data"}));
  EXPECT_EQ(plan->datasets[0].value.strings, (std::vector<std::string>{"col1", "col2", "col3"}));
  EXPECT_EQ(plan->datasets[0].value.strings_as.fixed, 4u);
  EXPECT_FALSE(plan->datasets[0].value.strings_as.utf8);
  EXPECT_EQ(plan->datasets[3].value.strings_as.fixed, 1u);
  EXPECT_EQ(plan->datasets[4].value.strings.back(), "row10");
  EXPECT_EQ(plan->datasets[6].value.type, H5Type::kInt32);

  cache::CachePool pool(16 << 20);
  testutil::TempDir tmp;
  H5FileView view([m = *m] { return TenxH5Plan(*m); },
                  TenxH5Renderer(*m, &pool, {tmp.path()}, formats::TransposedCopy()),
                  SizingOptions{}, "10x.h5");
  auto size = view.Size();
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  {
    std::ofstream f(tmp.path() + "/10x.h5", std::ios::binary);
    f << ReadAll(view, 0, *size);
  }
  if (testutil::RunCommand({"/usr/bin/python3", "-c", "import h5py"}) != 0)
    GTEST_SKIP() << "h5py missing: .ci/setup installs it";
  const std::string py =
      "import sys, h5py\n"
      "f = h5py.File(sys.argv[1], 'r')\n"
      "m = f['matrix']\n"
      "print(list(f.keys()), f.attrs['filetype'], f.attrs['version'])\n"
      "print(list(m['features/genome'][:]) == [b''] * 10, m['features/genome'].dtype)\n"
      "print(list(m['features/feature_type'][:]) == [b'Gene Expression'] * 10)\n"
      "print(list(m['features/_all_tag_keys'][:]), list(m['shape'][:]), m['barcodes'][2])\n";
  std::string out;
  ASSERT_EQ(testutil::RunCommand({"/usr/bin/python3", "-c", py, tmp.path() + "/10x.h5"}, &out), 0)
      << out;
  EXPECT_EQ(out,
            "['matrix'] b'matrix' 2\n"
            "True |S1\n"
            "True\n"
            "[b'genome'] [10, 3] b'col3'\n");
}

}  // namespace
}  // namespace omicsfs::text
