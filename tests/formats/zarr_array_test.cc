#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <random>

#include "cache/cache_pool.h"
#include "formats/zarr/array.h"
#include "io/local/local_space.h"
#include "io/memory_blob_store.h"
#include "io/space_blob_store.h"
#include "testutil/zarr_writer.h"
#include "util/fs.h"

namespace omicsfs::formats::zarr {
namespace {

using testutil::ZarrArraySpec;

class ZarrArrayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fs::unique_path("omicsfs-zarr-%%%%%%");
    fs::create_directories(dir_);
    blobs_ =
        std::make_shared<io::SpaceBlobStore>(std::make_shared<io::LocalByteSpace>(dir_.string()));
  }
  void TearDown() override { fs::remove_all(dir_); }
  Result<ZarrArray> Open(const std::string& name) { return ZarrArray::Open(blobs_, name); }

  fs::path dir_;
  std::shared_ptr<io::SpaceBlobStore> blobs_;
};

template <typename T>
std::string Bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

TEST_F(ZarrArrayTest, EveryCompressorSeparatorAndFormatWithInnerChunks) {
  std::vector<int32_t> values(10 * 3 * 5);
  std::mt19937 rng(1);
  for (auto& v : values) v = static_cast<int32_t>(rng() % 2000) - 1000;
  int n = 0;
  for (std::string comp : {"blosc", "zlib", "gzip", "zstd", "lz4", "none"}) {
    for (char sep : {'.', '/'}) {
      for (int format : {2, 3}) {
        if (format == 3 && comp == "lz4") continue;  // not a Zarr v3 codec
        ZarrArraySpec spec;
        spec.dtype = "<i4";
        spec.shape = {10, 3, 5};
        spec.chunks = {4, 2, 2};  // edge chunks in every dimension
        spec.compressor = comp;
        spec.separator = sep;
        spec.zarr_format = format;
        spec.dimension_names = {"variants", "samples", "ploidy"};
        const std::string name = "a" + std::to_string(n++);
        ASSERT_TRUE(testutil::WriteZarrArray(dir_.string(), name, spec, Bytes(values)).ok());
        auto a = Open(name);
        ASSERT_TRUE(a.ok()) << a.status().ToString();
        EXPECT_EQ(a->meta().dimension_names, spec.dimension_names);
        for (uint64_t r0 = 0; r0 < 10; ++r0) {
          for (uint64_t r1 = r0; r1 <= 10; r1 += 3) {
            auto b = a->ReadRows(r0, r1);
            ASSERT_TRUE(b.ok()) << comp << " " << sep << " v" << format << ": "
                                << b.status().ToString();
            ASSERT_EQ(b->row_elems, 15u);
            ASSERT_EQ(b->bytes(), Bytes(values).substr(r0 * 15 * 4, (r1 - r0) * 15 * 4))
                << comp << sep << format;
          }
        }
      }
    }
  }
}

// Rows × a column range (dimension 1) read only the chunks holding those columns, cropped at
// every chunk edge; strings too.
TEST_F(ZarrArrayTest, ColumnRangesAcrossChunkEdges) {
  const uint64_t R = 7, C = 10, P = 3;
  std::vector<int16_t> values(R * C * P);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int16_t>(i * 7 - 300);
  ZarrArraySpec spec;
  spec.dtype = "<i2";
  spec.shape = {R, C, P};
  spec.chunks = {3, 4, 2};
  ASSERT_TRUE(testutil::WriteZarrArray(dir_.string(), "a", spec, Bytes(values)).ok());
  auto a = Open("a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  for (uint64_t r0 = 0; r0 < R; r0 += 2) {
    for (uint64_t r1 = r0 + 1; r1 <= R; r1 += 3) {
      for (uint64_t c0 = 0; c0 < C; ++c0) {
        for (uint64_t c1 = c0; c1 <= C; ++c1) {
          auto b = a->ReadRows(r0, r1, c0, c1);
          ASSERT_TRUE(b.ok()) << b.status().ToString();
          ASSERT_EQ(b->row_elems, (c1 - c0) * P);
          std::vector<int16_t> want;
          for (uint64_t r = r0; r < r1; ++r) {
            for (uint64_t c = c0; c < c1; ++c) {
              for (uint64_t p = 0; p < P; ++p) want.push_back(values[(r * C + c) * P + p]);
            }
          }
          ASSERT_EQ(std::string(b->raw(), b->rows * b->row_elems * 2), Bytes(want))
              << r0 << "-" << r1 << " x " << c0 << "-" << c1;
        }
      }
    }
  }
  EXPECT_FALSE(a->ReadRows(0, 1, 3, 11).ok());  // past the columns
}

// Cached(r0, r1): every chunk rows [r0, r1) need (all of the other dimensions) is in the decode
// cache; what a read decodes is, and nothing is without a cache.
TEST_F(ZarrArrayTest, CachedKnowsWhichRowsNeedDecoding) {
  std::vector<int16_t> values(7 * 10 * 3);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int16_t>(i);
  ZarrArraySpec spec;
  spec.dtype = "<i2";
  spec.shape = {7, 10, 3};
  spec.chunks = {3, 4, 2};
  ASSERT_TRUE(testutil::WriteZarrArray(dir_.string(), "a", spec, Bytes(values)).ok());
  auto a = Open("a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_FALSE(a->Cached(0, 1));  // no cache
  cache::CachePool pool(64 << 20);
  a->UseCache(&pool);
  EXPECT_FALSE(a->Cached(0, 1));
  EXPECT_TRUE(a->Cached(2, 2));               // no rows
  ASSERT_TRUE(a->ReadRows(0, 2, 0, 4).ok());  // the first chunk of dimension 1 only
  EXPECT_FALSE(a->Cached(0, 3));
  ASSERT_TRUE(a->ReadRows(1, 2).ok());  // every chunk of rows 0..2
  EXPECT_TRUE(a->Cached(0, 3));
  EXPECT_FALSE(a->Cached(2, 4));  // row 3 is in the next chunk
  ASSERT_TRUE(a->ReadRows(6, 7).ok());
  EXPECT_TRUE(a->Cached(6, 7));
  EXPECT_FALSE(a->Cached(0, 7));
}

TEST_F(ZarrArrayTest, Dtypes) {
  struct Case {
    std::string dtype;
    std::string raw;
    std::string native;
  };
  std::vector<int16_t> i16 = {1, -2, 300, -32768, 5, 6, 7};
  std::vector<double> f64 = {1.5, -2.25, 1e300, 0, 5, 6, 7};
  std::vector<Case> cases = {
      {"|b1", std::string("\x01\x00\x01\x00\x00\x01\x01", 7),
       std::string("\x01\x00\x01\x00\x00\x01\x01", 7)},
      {"|i1", std::string("\xff\xfe\x05\x07\x00\x01\x02", 7),
       std::string("\xff\xfe\x05\x07\x00\x01\x02", 7)},
      {"<i2", Bytes(i16), Bytes(i16)},
      {">i2", Bytes(i16), Bytes(i16)},  // the writer stores big-endian, the reader returns native
      {"<f8", Bytes(f64), Bytes(f64)},
      {">f8", Bytes(f64), Bytes(f64)},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    ZarrArraySpec spec;
    spec.dtype = cases[i].dtype;
    spec.shape = {7};
    spec.chunks = {3};
    const std::string name = std::string("d") + std::to_string(i);
    ASSERT_TRUE(testutil::WriteZarrArray(dir_.string(), name, spec, cases[i].raw).ok());
    auto a = Open(name);
    ASSERT_TRUE(a.ok()) << cases[i].dtype << ": " << a.status().ToString();
    auto b = a->ReadAll();
    ASSERT_TRUE(b.ok()) << cases[i].dtype;
    EXPECT_EQ(b->bytes(), cases[i].native) << cases[i].dtype;
  }
}

TEST_F(ZarrArrayTest, StringDtypes) {
  // |S3: trailing NULs stripped; <U2: UTF-32LE to UTF-8; |O: vlen-utf8.
  ZarrArraySpec s;
  s.dtype = "|S3";
  s.shape = {3};
  s.chunks = {2};
  ASSERT_TRUE(testutil::WriteZarrArray(dir_.string(), "s", s, std::string("ab\0xyzq\0\0", 9)).ok());
  auto a = Open("s");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->ReadAll()->strings, (std::vector<std::string>{"ab", "xyz", "q"}));

  ZarrArraySpec u;
  u.dtype = "<U2";
  u.shape = {2};
  u.chunks = {2};
  std::vector<uint32_t> cps = {0xFC, 0x41, 0x7EC6, 0};  // "üA", "细"
  ASSERT_TRUE(testutil::WriteZarrArray(dir_.string(), "u", u, Bytes(cps)).ok());
  auto ua = Open("u");
  ASSERT_TRUE(ua.ok());
  EXPECT_EQ(ua->ReadAll()->strings, (std::vector<std::string>{"üA", "细"}));

  for (int format : {2, 3}) {
    ZarrArraySpec o;
    o.dtype = "|O";
    o.shape = {5};
    o.chunks = {2};
    o.zarr_format = format;
    o.fill_value = "";
    std::vector<std::string> items = {"A", "", "GAC", "ü", "x"};
    const std::string name = "o" + std::to_string(format);
    ASSERT_TRUE(testutil::WriteZarrArray(dir_.string(), name, o, "", items).ok());
    auto oa = Open(name);
    ASSERT_TRUE(oa.ok()) << oa.status().ToString();
    EXPECT_EQ(oa->ReadRows(1, 5)->strings,
              (std::vector<std::string>(items.begin() + 1, items.end())));
  }
}

TEST_F(ZarrArrayTest, AbsentChunksAreFill) {
  std::vector<int8_t> v = {1, 2, 3, 4, 5, 6, 7};
  ZarrArraySpec spec;
  spec.dtype = "|i1";
  spec.shape = {7};
  spec.chunks = {3};
  spec.fill_value = -2;
  spec.skip_chunks = {"1"};
  ASSERT_TRUE(testutil::WriteZarrArray(dir_.string(), "f", spec, Bytes(v)).ok());
  auto a = Open("f");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->ReadAll()->bytes(), Bytes(std::vector<int8_t>{1, 2, 3, -2, -2, -2, 7}));
  spec.fill_value = nullptr;  // zarr-python 3 reads a null fill as 0
  ASSERT_TRUE(testutil::WriteZarrArray(dir_.string(), "g", spec, Bytes(v)).ok());
  EXPECT_EQ(Open("g")->ReadAll()->bytes(), Bytes(std::vector<int8_t>{1, 2, 3, 0, 0, 0, 7}));
}

TEST_F(ZarrArrayTest, RefusesWhatItCannotReadWithTheReason) {
  fs::create_directories(dir_ / "f_order");
  std::ofstream(dir_ / "f_order" / ".zarray")
      << R"({"zarr_format":2,"shape":[4],"chunks":[2],"dtype":"<i4","compressor":null,"fill_value":0,"order":"F","filters":null})";
  auto f = Open("f_order");
  EXPECT_EQ(f.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(f.status().message().find("order"), std::string::npos);
  fs::create_directories(dir_ / "bz");
  std::ofstream(dir_ / "bz" / ".zarray")
      << R"({"zarr_format":2,"shape":[4],"chunks":[2],"dtype":"<i4","compressor":{"id":"bz2"},"fill_value":0,"order":"C","filters":null})";
  auto bz = Open("bz");
  EXPECT_NE(bz.status().message().find("bz2"), std::string::npos);
  fs::create_directories(dir_ / "bad");
  std::ofstream(dir_ / "bad" / ".zarray") << R"({"zarr_format":2,"shape":[4],)";
  EXPECT_EQ(Open("bad").status().code(), ErrorCode::kCorrupt);
}

TEST_F(ZarrArrayTest, HugeChunksAreRefusedBeforeAnyAllocation) {
  fs::create_directories(dir_ / "huge");
  std::ofstream(dir_ / "huge" / ".zarray")
      << R"({"zarr_format":2,"shape":[100000],"chunks":[65536],"dtype":"|S100000","compressor":null,"fill_value":"","order":"C","filters":null})";
  auto a = Open("huge");
  EXPECT_EQ(a.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(a.status().message().find("MiB chunk limit"), std::string::npos)
      << a.status().message();
}

TEST_F(ZarrArrayTest, CorruptChunkNamesArrayAndChunk) {
  std::vector<int32_t> v(100, 7);
  ZarrArraySpec spec;
  spec.dtype = "<i4";
  spec.shape = {100};
  spec.chunks = {30};
  ASSERT_TRUE(testutil::WriteZarrArray(dir_.string(), "c", spec, Bytes(v)).ok());
  {
    std::ofstream(dir_ / "c" / "2", std::ios::binary | std::ios::trunc)
        << "garbage that is not blosc";
  }
  auto a = Open("c");
  ASSERT_TRUE(a.ok());
  auto bad = a->ReadRows(50, 70);
  EXPECT_EQ(bad.status().code(), ErrorCode::kCorrupt);
  EXPECT_NE(bad.status().message().find("array c chunk 2"), std::string::npos)
      << bad.status().message();
  EXPECT_TRUE(a->ReadRows(0, 60).ok());  // chunks 0 and 1 are fine
}

// A bool array holding a byte other than 0 or 1 is corrupt (never read as true), wherever in
// the chunk the byte lies; the chunks around it still read.
TEST_F(ZarrArrayTest, BoolBytesOtherThanZeroOrOneAreCorrupt) {
  for (size_t at : {size_t{0}, size_t{17}, size_t{29}}) {
    std::vector<uint8_t> v(90, 1);
    for (size_t i = 0; i < v.size(); i += 3) v[i] = 0;
    v[30 + at] = at == 17 ? 0x80 : 2;  // chunk 1
    ZarrArraySpec spec;
    spec.dtype = "|b1";
    spec.shape = {90};
    spec.chunks = {30};
    const std::string name = "b" + std::to_string(at);
    std::string bytes(v.begin(), v.end());
    ASSERT_TRUE(testutil::WriteZarrArray(dir_.string(), name, spec, bytes).ok());
    auto a = Open(name);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    auto bad = a->ReadRows(30, 60);
    EXPECT_EQ(bad.status().code(), ErrorCode::kCorrupt) << at;
    EXPECT_NE(bad.status().message().find("bool value other than 0/1"), std::string::npos)
        << bad.status().message();
    EXPECT_TRUE(a->ReadRows(0, 30).ok());
    EXPECT_TRUE(a->ReadRows(60, 90).ok());
  }
}

// A read of a few rows of a chunk not decoded yet decodes only the blosc blocks holding them
// (kept in the cache), read by parts from a local file or taken from the whole stored chunk
// (stores without reads of parts): every row and column range reads what the whole decode gives,
// across chunk edges in every dimension, rows straddling blocks, blocks written out of order.
TEST_F(ZarrArrayTest, FewRowsReadOnlyTheirBlocks) {
  const uint64_t R = 200, C = 10, P = 3;
  std::vector<int16_t> values(R * C * P);
  std::mt19937 rng(3);
  for (auto& v : values) v = static_cast<int16_t>(rng() % 5000) - 2;
  ZarrArraySpec spec;
  spec.dtype = "<i2";
  spec.shape = {R, C, P};
  spec.chunks = {64, 4, 3};  // 1 536 bytes a chunk: 6 blocks of 256 bytes, rows of 24 bytes
  spec.blosc_cname = "zstd";
  spec.blosc_blocksize = 256;
  spec.blosc_threads = 2;
  ASSERT_TRUE(testutil::WriteZarrArray(dir_.string(), "a", spec, Bytes(values)).ok());
  std::map<std::string, std::string> blobs;
  for (const auto& e : fs::recursive_directory_iterator(dir_)) {
    if (!fs::is_regular_file(e.path())) continue;
    std::ifstream f(e.path().string(), std::ios::binary);
    blobs[fs::relative(e.path(), dir_).generic_string()] =
        std::string(std::istreambuf_iterator<char>(f), {});
  }
  const std::string all = Bytes(values);
  for (bool local : {true, false}) {
    std::shared_ptr<const io::BlobStore> store = blobs_;
    if (!local) store = std::make_shared<io::MemoryBlobStore>(blobs);
    auto a = ZarrArray::Open(store, "a");
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    cache::CachePool pool(64 << 20);
    a->UseCache(&pool);
    // Two rows of chunk 1: their blocks, not the chunk.
    auto two = a->ReadRows(70, 72);
    ASSERT_TRUE(two.ok()) << two.status().ToString();
    EXPECT_EQ(std::string(two->raw(), 2 * C * P * 2), all.substr(70 * C * P * 2, 2 * C * P * 2));
    EXPECT_TRUE(a->Cached(70, 72)) << local;
    EXPECT_FALSE(a->Cached(64, 128)) << local;  // the rest of the chunk was not decoded
    for (int k = 0; k < 300; ++k) {
      const uint64_t r0 = rng() % R, r1 = r0 + 1 + rng() % std::min<uint64_t>(R - r0, 30);
      const uint64_t c0 = rng() % C, c1 = c0 + 1 + rng() % (C - c0);
      auto b = a->ReadRows(r0, r1, c0, c1);
      ASSERT_TRUE(b.ok()) << b.status().ToString();
      std::string expect;
      for (uint64_t r = r0; r < r1; ++r)
        expect += all.substr((r * C + c0) * P * 2, (c1 - c0) * P * 2);
      ASSERT_EQ(std::string(b->raw(), expect.size()), expect)
          << local << " rows " << r0 << ".." << r1 << " columns " << c0 << ".." << c1;
    }
    auto whole = a->ReadRows(0, R);  // then whole chunks, as a pass reads them
    ASSERT_TRUE(whole.ok());
    EXPECT_EQ(std::string(whole->raw(), all.size()), all);
  }
  for (bool streaming : {false, true}) {  // a long sequential run decodes whole chunks
    auto a = Open("a");
    ASSERT_TRUE(a.ok());
    cache::CachePool pool(64 << 20);
    a->UseCache(&pool);
    cache::CachePool::Streaming scope(streaming);
    auto two = a->ReadRows(130, 132);
    ASSERT_TRUE(two.ok());
    EXPECT_EQ(std::string(two->raw(), 2 * C * P * 2), all.substr(130 * C * P * 2, 2 * C * P * 2));
    EXPECT_EQ(a->Cached(128, 192), streaming);
  }
}

// A stored chunk read by parts that is cut short, or rewritten between two reads of its blocks,
// gives an error naming the array and chunk (never bytes of two versions); the others still read.
TEST_F(ZarrArrayTest, ChunksReadByPartsThatChangeOrAreCutAreErrors) {
  const uint64_t R = 300;
  std::vector<int32_t> values(R);
  for (size_t i = 0; i < R; ++i) values[i] = static_cast<int32_t>(i * 2654435761u);
  ZarrArraySpec spec;
  spec.dtype = "<i4";
  spec.shape = {R};
  spec.chunks = {100};
  spec.blosc_blocksize = 64;  // 16 values a block
  ASSERT_TRUE(testutil::WriteZarrArray(dir_.string(), "c", spec, Bytes(values)).ok());
  const fs::path chunk1 = dir_ / "c" / "1";
  std::ifstream f(chunk1.string(), std::ios::binary);
  const std::string stored(std::istreambuf_iterator<char>(f), {});
  {
    auto a = Open("c");
    ASSERT_TRUE(a.ok());
    cache::CachePool pool(64 << 20);
    a->UseCache(&pool);
    ASSERT_TRUE(a->ReadRows(100, 102).ok());  // its header, table and first block
    std::ofstream(chunk1.string(), std::ios::binary | std::ios::trunc)
        << stored.substr(0, stored.size() - 20);
    auto bad = a->ReadRows(190, 192);  // its last block: the file changed since
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("chunk 1"), std::string::npos) << bad.status().message();
    EXPECT_TRUE(a->ReadRows(0, 3).ok());
    EXPECT_TRUE(a->ReadRows(250, 252).ok());
  }
  {  // the cut file met first: its table or block lies past its end
    auto a = Open("c");
    ASSERT_TRUE(a.ok());
    cache::CachePool pool(64 << 20);
    a->UseCache(&pool);
    auto bad = a->ReadRows(190, 192);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), ErrorCode::kCorrupt) << bad.status().ToString();
    EXPECT_NE(bad.status().message().find("array c chunk 1"), std::string::npos)
        << bad.status().message();
    auto good = a->ReadRows(5, 7);
    ASSERT_TRUE(good.ok());
    EXPECT_EQ(std::string(good->raw(), 8), Bytes(values).substr(20, 8));
  }
}

}  // namespace
}  // namespace omicsfs::formats::zarr
