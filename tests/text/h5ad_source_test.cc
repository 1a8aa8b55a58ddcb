// matrix.h5ad's plan and renderer (text/h5ad_source.h) over random BPCells stores of every value
// type and both orders: X's arrays in the file are the store's pointers, indices and values as
// written (little-endian, the plan's types), whatever the chunk size (chunks of 128 entries make
// many; the default one), and so the files are the same bytes.
#include "text/h5ad_source.h"

#include <gtest/gtest.h>

#include <cstring>

#include "formats/bpcells/matrix.h"
#include "testutil/store_writer.h"

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

TEST(H5adSource, TheArraysAreTheStoresAtEveryChunkSize) {
  for (ValueKind kind : {ValueKind::kUInt32, ValueKind::kFloat32, ValueKind::kFloat64}) {
    for (bool row_major : {false, true}) {
      auto spec = testutil::RandomMatrix(300, 90, 0.05, kind, row_major, true, 2, 5);
      auto m =
          formats::bpcells::Matrix::Open(testutil::ToMemoryStore(testutil::MakeMatrixStore(spec)));
      ASSERT_TRUE(m.ok()) << m.status().ToString();
      auto plan = H5adPlan(**m);
      ASSERT_TRUE(plan.ok()) << plan.status().ToString();
      const auto& ds = plan->datasets;
      ASSERT_EQ(ds.size(), 5u);
      EXPECT_EQ(ds[2].path, "/X/indptr");
      EXPECT_EQ(ds[2].value.type, H5Type::kInt32);
      EXPECT_EQ(ds[3].value.type, H5Type::kInt32);
      const H5Type want_type = kind == ValueKind::kUInt32    ? H5Type::kUInt32
                               : kind == ValueKind::kFloat32 ? H5Type::kFloat32
                                                             : H5Type::kFloat64;
      EXPECT_EQ(ds[4].value.type, want_type);
      EXPECT_EQ(plan->groups[1].attributes[0].value.strings[0],
                row_major ? "csc_matrix" : "csr_matrix");

      cache::CachePool pool(64 << 20);
      std::string whole;
      for (uint64_t per : {uint64_t{128}, H5adRenderer::kEntriesPerChunk}) {
        auto view = std::make_shared<const H5FileView>(
            [m = *m] { return H5adPlan(*m); }, std::make_shared<const H5adRenderer>(*m, &pool, per),
            SizingOptions{}, "matrix.h5ad");
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
        EXPECT_EQ(arrays[0], Le<int32_t>(spec.idxptr)) << "per " << per;
        EXPECT_EQ(arrays[1], Le<int32_t>(spec.inner)) << "per " << per;
        const std::string values = kind == ValueKind::kUInt32    ? Le<uint32_t>(spec.values)
                                   : kind == ValueKind::kFloat32 ? Le<float>(spec.values)
                                                                 : Le<double>(spec.values);
        EXPECT_EQ(arrays[2], values) << "per " << per;
        if (whole.empty()) {
          whole = bytes;
        } else {
          EXPECT_EQ(bytes, whole);
        }
      }
    }
  }
}

TEST(H5adSource, NamesOrStandIns) {
  auto spec = testutil::RandomMatrix(4, 3, 0.5, ValueKind::kUInt32, false, true, 2, 3,
                                     /*names=*/false);
  auto m = formats::bpcells::Matrix::Open(testutil::ToMemoryStore(testutil::MakeMatrixStore(spec)));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto plan = H5adPlan(**m);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->datasets[0].path, "/obs/_index");
  EXPECT_EQ(plan->datasets[0].value.strings, (std::vector<std::string>{"col1", "col2", "col3"}));
  EXPECT_EQ(plan->datasets[1].value.strings,
            (std::vector<std::string>{"row1", "row2", "row3", "row4"}));
}

}  // namespace
}  // namespace omicsfs::text
