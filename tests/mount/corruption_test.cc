// Corruption harness: copies of small corpus stores of every format with bytes flipped and files
// truncated or removed at many points, all mounted at once; every view is read in full (twice).
// Required: the daemon never crashes or hangs; a read returns EIO or exactly st_size bytes, the
// same bytes every time; untouched stores keep working.
#include <dirent.h>
#include <errno.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>

#include "testutil/mount_fixture.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::CopyTree;
using testutil::MountedFs;
using testutil::ReadWhole;

const std::string kCorpus = OMICSFS_CORPUS_DIR;

std::vector<fs::path> FilesBelow(const fs::path& p) {
  std::vector<fs::path> out;
  if (fs::is_regular_file(p)) return {p};
  for (fs::recursive_directory_iterator it(p), end; it != end; ++it) {
    if (fs::is_regular_file(it->path())) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Every entry below `dir`, by readdir alone (a lookup that fails with EIO must not stop the walk).
void Walk(const std::string& dir, std::vector<std::string>* out) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (struct dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    out->push_back(dir + "/" + name);
    if (e->d_type == DT_DIR) Walk(dir + "/" + name, out);
  }
  ::closedir(d);
}

// Whether `path` is in its folder's listing now.
bool Listed(const std::string& path) {
  const fs::path p(path);
  fs_error ec;
  for (fs::directory_iterator it(p.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() == p.filename()) return true;
  }
  return false;
}

void Damage(const fs::path& file, std::mt19937_64& rng) {
  std::string bytes;
  if (!ReadWhole(file.string(), &bytes)) return;  // removed by an earlier damage
  switch (rng() % 4) {
    case 0:  // truncate
      bytes.resize(bytes.empty() ? 0 : rng() % bytes.size());
      break;
    case 1:  // remove
      fs::remove(file);
      return;
    default:  // flip a few bytes
      for (int i = 0; i < 1 + static_cast<int>(rng() % 4) && !bytes.empty(); ++i) {
        bytes[rng() % bytes.size()] ^= static_cast<char>(1 + rng() % 255);
      }
  }
  std::ofstream(file.string(), std::ios::binary | std::ios::trunc) << bytes;
}

TEST(CorruptionHarness, DamagedCopiesNeverCrashHangOrLie) {
  fs::path src = fs::temp_directory_path() / fs::unique_path("omicsfs-harness-%%%%%%");
  struct Store {
    std::string from, name;
  };
  const std::vector<Store> stores = {
      {"bpcells/dir/v2/counts.packed", "counts.packed"},
      {"bpcells/dir/v1/float32.packed", "float32.packed"},
      {"bpcells/dir/v2/frags.packed", "frags.packed"},
      // HDF5 files: libhdf5 itself is not safe on some of these (H5HG_read trusts a stored
      // object size); the vetting helper takes those crashes (io/h5_vet.h).
      {"bpcells/h5/counts_root_group.h5", "root.h5"},
      {"bpcells/h5/frags_gzip.h5", "frags.h5"},
      {"bpcells/h5/fixedstr.h5", "fixedstr.h5"},
      {"vcf-zarr/sample/sample.vcz", "sample.vcz"},
      {"vcf-zarr/upstream_sample_v3/upstream_sample_v3.vcz", "v3.vcz"},
  };
  // OMICSFS_HARNESS_SEED / OMICSFS_HARNESS_COPIES run it longer by hand (docs/robustness.md).
  const char* seed_env = std::getenv("OMICSFS_HARNESS_SEED");
  const char* copies_env = std::getenv("OMICSFS_HARNESS_COPIES");
  std::mt19937_64 rng(seed_env ? std::strtoull(seed_env, nullptr, 10) : 20261122);
  const int kCopies = copies_env ? std::atoi(copies_env) : 12;
  for (const auto& s : stores) {
    for (int c = 0; c < kCopies; ++c) {
      fs::path dst = src / (std::to_string(c) + "_" + s.name);
      if (fs::is_directory(kCorpus + "/" + s.from)) {
        CopyTree(kCorpus + "/" + s.from, dst.string());
      } else {
        fs::create_directories(src);
        fs::copy_file(kCorpus + "/" + s.from, dst);
        fs::permissions(dst, fs::owner_read | fs::owner_write);
      }
      auto files = FilesBelow(dst);
      for (int d = 0; d < 1 + c % 3 && !files.empty(); ++d)
        Damage(files[rng() % files.size()], rng);
    }
  }
  // datg: damage the .datg itself (companions stay).
  for (int c = 0; c < kCopies; ++c) {
    for (const char* ext : {".datg", ".rows.txt.gz", ".cols.txt.gz"}) {
      fs::copy_file(kCorpus + "/datg/rpb7_50x10" + ext,
                    src / (std::string("d") + std::to_string(c) + ext));
      fs::permissions(src / (std::string("d") + std::to_string(c) + ext),
                      fs::owner_read | fs::owner_write);
    }
    Damage(src / ("d" + std::to_string(c) + ".datg"), rng);
  }
  CopyTree(kCorpus + "/bpcells/dir/v2/counts.packed", (src / "intact.packed").string());

  auto m = MountedFs::Start(OMICSFS_BINARY, src.string(),
                            {"-o", "cache_size=16M,index_dir=" + (src / ".index").string()});
  ASSERT_NE(m, nullptr);
  int files = 0, eio = 0, withdrawn = 0;
  std::vector<std::string> entries;
  Walk(m->path(), &entries);
  for (const std::string& path : entries) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT && !Listed(path)) {
      ++withdrawn;  // an index tabix refuses, found by the pass of a file stat'ed before it
      continue;
    }
    if (::lstat(path.c_str(), &st) != 0) {  // sizing failed at lookup: EIO, never a crash
      EXPECT_EQ(errno, EIO) << path;
      ++files;
      ++eio;
      continue;
    }
    if (!S_ISREG(st.st_mode)) continue;
    std::string a, b;
    int err_a = 0, err_b = 0;
    const bool stat_ok = ::stat(path.c_str(), &st) == 0;
    const bool ok_a = ReadWhole(path, &a, &err_a), ok_b = ReadWhole(path, &b, &err_b);
    ++files;
    if (!ok_a || !ok_b || !stat_ok) {
      EXPECT_EQ(ok_a, ok_b) << path;
      if (!ok_a) {
        EXPECT_EQ(err_a, EIO) << path;
      }
      ++eio;
      continue;
    }
    EXPECT_EQ(static_cast<size_t>(st.st_size), a.size()) << path;
    EXPECT_TRUE(a == b) << path;
  }
  EXPECT_GT(files, 100);
  EXPECT_GT(eio, 0);
  std::string intact, want;
  ASSERT_TRUE(ReadWhole(m->path() + "/intact.packed/matrix.mtx", &intact));
  ASSERT_TRUE(ReadWhole(kCorpus + "/bpcells/expected/counts.col.mtx", &want));
  EXPECT_TRUE(intact == want);
  EXPECT_TRUE(m->alive());
  // How many damaged HDF5 copies the vetting helper kept out of the daemon (for the record).
  const std::string log = m->Log();
  int vetted_out = 0;
  for (size_t at = log.find(": not opened: libhdf5"); at != std::string::npos;
       at = log.find(": not opened: libhdf5", at + 1)) {
    ++vetted_out;
  }
  std::printf("%d files, %d EIO, %d withdrawn, %d HDF5 files kept out by the vetting helper\n",
              files, eio, withdrawn, vetted_out);
  m.reset();
  fs::remove_all(src);
}

// AnnData files (issue 37): a truncated .h5ad is a folder holding ERROR.txt; a flipped byte
// inside X/data's deflate stream is EIO on the read of matrix.mtx, while the tables and names are
// served and the daemon lives; an .h5ad anndata wrote with compression='lzf' (h5py's filter,
// decoded here) shows the same text as the uncompressed file.
TEST(AnnDataDamage, TruncatedFlippedAndLzfFiles) {
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  testutil::TempDir dir("omicsfs-anndata-damage-");
  const std::string src = dir.path() + "/src";
  fs::create_directories(src);
  const std::string corpus = kCorpus + "/anndata";
  std::string bytes;
  ASSERT_TRUE(ReadWhole(corpus + "/pbmc_csr_f32.h5ad", &bytes));
  std::ofstream(src + "/truncated.h5ad", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  fs::copy_file(corpus + "/gzip_csr.h5ad", src + "/flipped.h5ad");
  const std::string script = R"(
import sys, h5py, anndata
src, corpus = sys.argv[1], sys.argv[2]
with h5py.File(src + "/flipped.h5ad", "r") as f:
    info = f["X/data"].id.get_chunk_info(0)
with open(src + "/flipped.h5ad", "r+b") as f:
    at = info.byte_offset + info.size // 2
    f.seek(at)
    b = f.read(1)
    f.seek(at)
    f.write(bytes([b[0] ^ 0xFF]))
anndata.read_h5ad(corpus + "/pbmc_csr_f32.h5ad").write_h5ad(src + "/lzf.h5ad", compression="lzf")
print("ok")
)";
  std::string out;
  ASSERT_EQ(testutil::RunCommand({"/usr/bin/python3", "-c", script, src, corpus}, &out), 0) << out;
  auto m = MountedFs::Start(OMICSFS_BINARY, src, {});
  ASSERT_NE(m, nullptr);
  struct stat st;
  ASSERT_EQ(::stat((m->path() + "/truncated.h5ad").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  std::string shown;
  EXPECT_TRUE(ReadWhole(m->path() + "/truncated.h5ad/ERROR.txt", &shown));
  EXPECT_NE(shown.find("truncated.h5ad"), std::string::npos) << shown;

  std::string got;
  int err = 0;
  EXPECT_FALSE(ReadWhole(m->path() + "/flipped.h5ad/matrix.mtx", &got, &err));
  EXPECT_EQ(err, EIO);
  std::string want;
  for (const char* table : {"obs.tsv", "var.tsv"}) {
    ASSERT_TRUE(ReadWhole(m->path() + "/flipped.h5ad/" + table, &got)) << table;
    ASSERT_TRUE(ReadWhole(corpus + "/expected/gzip_csr/" + table, &want));
    EXPECT_TRUE(got == want) << table;
  }
  ASSERT_TRUE(ReadWhole(m->path() + "/flipped.h5ad/colnames.txt", &got));
  ASSERT_TRUE(ReadWhole(corpus + "/expected/gzip_csr/X/colnames.txt", &want));
  EXPECT_TRUE(got == want);

  for (const char* view : {"X/matrix.mtx", "X/rownames.txt", "obs.tsv", "var.tsv"}) {
    std::string name = view;
    if (name.starts_with("X/")) name = name.substr(2);
    ASSERT_TRUE(ReadWhole(m->path() + "/lzf.h5ad/" + name, &got, &err)) << view << " " << err;
    ASSERT_TRUE(ReadWhole(corpus + "/expected/pbmc_csr_f32/" + view, &want));
    EXPECT_TRUE(got == want) << view;
  }
  EXPECT_TRUE(m->alive());
}

}  // namespace
}  // namespace omicsfs
