// The ByteSpace walk (the one s3:// and https:// sources take) against the local walk, over the
// same folder of corpus stores: the same tree, the same bytes in every file.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "io/local/local_space.h"
#include "util/fs.h"
#include "vfs/discover.h"

namespace omicsfs::vfs {
namespace {

const std::string kCorpus = OMICSFS_CORPUS_DIR;

class SpaceDiscover : public ::testing::Test {
 protected:
  void SetUp() override {
    src_ = fs::temp_directory_path() / fs::unique_path("omicsfs-spacewalk-%%%%%%");
    fs::create_directories(src_ / "nested" / "deeper");
    for (const char* d : {"bpcells/dir/v2/rna.packed", "bpcells/dir/v2/frags.packed",
                          "bpcells/dir/v2/atac.packed", "bpcells/dir/v1/counts.unpacked",
                          "vcf-zarr/sample/sample.vcz", "vcf-zarr/field_type_combos_lz4"}) {
      fs::copy(kCorpus + "/" + d, src_ / "nested" / fs::path(d).filename(),
               fs::copy_options::recursive);
    }
    fs::copy(kCorpus + "/vcf-zarr/upstream_sample_v3", src_ / "nested" / "deeper" / "v3",
             fs::copy_options::recursive);
    for (const char* f : {"edge_1x1.datg", "edge_1x1.rows.txt.gz", "edge_1x1.cols.txt.gz",
                          "edge_1x1.expected.tsv"}) {
      fs::copy_file(kCorpus + "/datg/" + f, src_ / f);
    }
    fs::copy_file(kCorpus + "/datg/edge_0x3.datg", src_ / "lonely.datg");  // no companions
    pool_ = std::make_unique<cache::CachePool>(64 << 20);
  }
  void TearDown() override { fs::remove_all(src_); }

  DiscoverOptions Options() const {
    DiscoverOptions o;
    o.pool = pool_.get();
    return o;
  }

  // Every path below `ino` with its kind and, for files, its bytes.
  static void Walk(const Tree& t, Ino ino, const std::string& path,
                   std::map<std::string, std::string>* out) {
    auto entries = t.ReadDir(ino);
    ASSERT_TRUE(entries.ok()) << path;
    for (const auto& e : *entries) {
      if (e.name == "." || e.name == "..") continue;
      auto child = t.Lookup(ino, e.name);
      const std::string p = path + "/" + e.name;
      if (!child.ok() && child.status().code() == ErrorCode::kNotFound) {
        // Withdrawn since the listing: a region index tabix refuses, found by the pass of its
        // view (sized a moment ago, as a file listed before it). The same in both walks.
        (*out)[p] = "withdrawn";
        continue;
      }
      ASSERT_TRUE(child.ok()) << p;
      auto kind = t.Kind(*child);
      ASSERT_TRUE(kind.ok());
      if (*kind == NodeKind::kDirectory) {
        (*out)[p + "/"] = "";
        Walk(t, *child, p, out);
      } else {
        // A view that fails (an index of unsortable records) must fail the same way in both.
        auto attr = t.GetAttr(*child);
        if (!attr.ok()) {
          (*out)[p] = "error " + std::to_string(static_cast<int>(attr.status().code()));
          continue;
        }
        std::string bytes;
        auto pieces = t.Read(*child, 0, uint64_t{1} << 30);
        ASSERT_TRUE(pieces.ok()) << p << ": " << pieces.status().ToString();
        for (const auto& piece : *pieces)
          bytes.append(piece.buffer->data() + piece.offset, piece.length);
        EXPECT_EQ(bytes.size(), attr->size) << p;
        (*out)[p] = std::move(bytes);
      }
    }
  }

  fs::path src_;
  std::unique_ptr<cache::CachePool> pool_;
};

TEST_F(SpaceDiscover, SameTreeSameBytesAsTheLocalWalk) {
  auto local = Discover(src_.string(), Options());
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  DiscoverOptions o = Options();
  o.space = std::make_shared<io::LocalByteSpace>(src_.string());
  auto spaced = Discover("ignored", o);
  ASSERT_TRUE(spaced.ok()) << spaced.status().ToString();
  std::map<std::string, std::string> a, b;
  Walk(**local, kRootIno, "", &a);
  Walk(**spaced, kRootIno, "", &b);
  ASSERT_GT(a.size(), 60u);
  for (const char* must :
       {"/nested/rna.packed/matrix.mtx", "/nested/atac.packed/fragments.tsv.gz.tbi",
        "/nested/sample.vcz/sample.vcf", "/nested/deeper/v3/expected.vcf",
        "/edge_1x1.datg/matrix.tsv", "/lonely.datg/ERROR.txt"}) {
    EXPECT_TRUE(a.count(must)) << must;
  }
  for (const auto& [path, bytes] : a) {
    auto it = b.find(path);
    if (it == b.end()) {
      ADD_FAILURE() << "missing from the space walk: " << path;
      continue;
    }
    if (path.ends_with("/ERROR.txt")) continue;  // names the same problem, worded per backend
    EXPECT_TRUE(it->second == bytes)
        << path << " differs (" << it->second.size() << " vs " << bytes.size() << " bytes)";
  }
  for (const auto& [path, bytes] : b)
    EXPECT_TRUE(a.count(path)) << "only in the space walk: " << path;
}

TEST_F(SpaceDiscover, OneStoreAtTheRootAndOneDatgObject) {
  DiscoverOptions o = Options();
  o.space = std::make_shared<io::LocalByteSpace>((src_ / "nested" / "sample.vcz").string());
  auto tree = Discover("ignored", o);
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  EXPECT_TRUE((*tree)->Lookup(kRootIno, "sample.vcf").ok());
  EXPECT_TRUE((*tree)->Lookup(kRootIno, "sample.vcf.gz.tbi").ok());

  o.space = std::make_shared<io::LocalByteSpace>(src_.string());
  o.space_key = "edge_1x1.datg";
  tree = Discover("ignored", o);
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  auto m = (*tree)->Lookup(kRootIno, "matrix.tsv");
  ASSERT_TRUE(m.ok());
  auto pieces = (*tree)->Read(*m, 0, 1 << 20);
  ASSERT_TRUE(pieces.ok());
  std::string got;
  for (const auto& p : *pieces) got.append(p.buffer->data() + p.offset, p.length);
  std::ifstream in(kCorpus + "/datg/edge_1x1.expected.tsv", std::ios::binary);
  EXPECT_EQ(got, std::string(std::istreambuf_iterator<char>(in), {}));
}

}  // namespace
}  // namespace omicsfs::vfs
