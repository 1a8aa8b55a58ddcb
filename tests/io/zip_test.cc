// The zip backend (io/zip) over corpus VCF Zarr stores zipped every way their writers do it
// (Python's zipfile, as zarr's ZipStore and bio2zarr use it, and Info-ZIP's zip): every key's
// bytes and every listing equal the directory's, damage is Corrupt naming archive and entry, the
// open reads only the archive's end, and reads from many threads agree.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "io/local/local_space.h"
#include "io/zip/zip_space.h"
#include "io/zip_fixture.h"
#include "testutil/mount_fixture.h"
#include "util/fs.h"

namespace omicsfs::io {
namespace {

using namespace ziptest;  // NOLINT: the shared fixture

// -------------------------------------------------------------------------------------------
// Every store, every way of zipping it.

class ZipStoreTest : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {
 protected:
  void SetUp() override {
    const Archives& a = Archives::Get();
    ASSERT_EQ(a.error(), "");
    store_ = std::get<0>(GetParam());
    const std::string variant = std::get<1>(GetParam());
    if (variant.rfind("cli", 0) == 0 && !a.have_zip_cli()) GTEST_SKIP() << "no zip CLI";
    archive_ = ArchiveSource::Load(a.Path(store_, variant));
    tree_ = &a.TreeOf(store_);
    space_ = OpenOrDie(archive_);
    ASSERT_NE(space_, nullptr);
  }

  std::string store_;
  std::shared_ptr<ArchiveSource> archive_;
  const Tree* tree_ = nullptr;
  std::shared_ptr<const ByteSpace> space_;
};

TEST_P(ZipStoreTest, EveryKeyHasTheFilesBytes) {
  EXPECT_EQ(space_->Describe(), archive_->Describe());
  for (const auto& [key, bytes] : tree_->files) {
    auto got = space_->Get(key, 1 << 30);
    ASSERT_TRUE(got.ok()) << key << ": " << got.status().ToString();
    ASSERT_TRUE(got->has_value()) << key;
    EXPECT_EQ(**got, bytes) << key;
    auto src = space_->Open(key);
    ASSERT_TRUE(src.ok()) << key << ": " << src.status().ToString();
    ASSERT_NE(*src, nullptr) << key;
    EXPECT_EQ((*src)->Describe(), archive_->Describe() + "/" + key);
    EXPECT_EQ((*src)->Size(), bytes.size()) << key;
    auto all = (*src)->ReadAll(1 << 30);
    ASSERT_TRUE(all.ok()) << key << ": " << all.status().ToString();
    EXPECT_EQ(*all, bytes) << key;
    if (bytes.size() > 2) {  // a range inside the entry
      std::string mid(bytes.size() - 2, '\0');
      ASSERT_TRUE((*src)->ReadExact(1, mid.data(), mid.size()).ok()) << key;
      EXPECT_EQ(mid, bytes.substr(1, bytes.size() - 2)) << key;
    }
    char c;
    EXPECT_EQ((*src)->ReadExact(bytes.size(), &c, 1).code(), ErrorCode::kCorrupt) << key;
  }
}

TEST_P(ZipStoreTest, ListingsEqualTheDirectorys) {
  for (const auto& [dir, expected] : tree_->dirs) {
    auto listed = space_->List(dir);
    ASSERT_TRUE(listed.ok()) << dir << ": " << listed.status().ToString();
    std::vector<std::pair<std::string, EntryKind>> got;
    for (const ListEntry& e : *listed) {
      got.emplace_back(e.name, e.kind);
      const std::string key = dir.empty() ? e.name : dir + "/" + e.name;
      if (e.kind == EntryKind::kFile) {
        EXPECT_EQ(e.info.size, tree_->files.at(key).size()) << key;
        EXPECT_EQ(e.info.perm, 0440u) << key;
        EXPECT_EQ(e.info.stamp.rfind(archive_->Info().stamp, 0), 0u) << e.info.stamp;
      }
    }
    EXPECT_EQ(got, expected) << "listing of '" << dir << "'";
  }
  // A file's key and a missing folder list as empty.
  for (const std::string& p : {tree_->files.begin()->first, std::string("no/such/folder")}) {
    auto listed = space_->List(p);
    ASSERT_TRUE(listed.ok()) << p;
    EXPECT_TRUE(listed->empty()) << p;
  }
}

TEST_P(ZipStoreTest, AbsentKeysAreValuesAndBadKeysAreRefused) {
  for (const std::string key : {"missing", "no/such/key", ".zattrs.missing"}) {
    auto src = space_->Open(key);
    ASSERT_TRUE(src.ok()) << key;
    EXPECT_EQ(*src, nullptr) << key;
    auto got = space_->Get(key, 100);
    ASSERT_TRUE(got.ok()) << key;
    EXPECT_FALSE(got->has_value()) << key;
  }
  // A folder is not an object.
  const std::string folder = tree_->dirs.rbegin()->first;
  if (!folder.empty()) {
    EXPECT_EQ(*space_->Open(folder), nullptr) << folder;
  }
  for (const std::string bad : {"", "/abs", "a/", "a//b", "..", "a/../b", "./a", "a/."}) {
    EXPECT_EQ(space_->Open(bad).status().code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_EQ(space_->Get(bad, 100).status().code(), ErrorCode::kInvalidArgument) << bad;
    if (!bad.empty()) {
      EXPECT_EQ(space_->List(bad).status().code(), ErrorCode::kInvalidArgument) << bad;
    }
  }
  const auto& [key, bytes] = *tree_->files.rbegin();
  if (!bytes.empty()) {
    auto small = space_->Get(key, bytes.size() - 1);
    EXPECT_EQ(small.status().code(), ErrorCode::kCorrupt) << key;
  }
}

// The open reads the archive's tail and its central directory, nothing of the entries.
TEST_P(ZipStoreTest, OpenReadsOnlyTheEnd) {
  auto fresh = ArchiveSource::Load(archive_->Describe());
  ASSERT_NE(OpenOrDie(fresh), nullptr);
  // Tail window (64 KiB + end records) and a central directory of well under 160 bytes a key.
  EXPECT_LE(fresh->reads.load(), 3u);
  EXPECT_LE(fresh->bytes_read.load(),
            65535u + 98 + 160 * (tree_->files.size() + tree_->dirs.size()));
}

// Get is one read of the archive (one request when it is remote), the local header included.
TEST_P(ZipStoreTest, EachGetIsOneRead) {
  for (const auto& [key, bytes] : tree_->files) {
    const uint64_t before = archive_->reads.load();
    auto got = space_->Get(key, 1 << 30);
    ASSERT_TRUE(got.ok() && got->has_value()) << key;
    EXPECT_EQ(archive_->reads.load() - before, 1u) << key;
  }
}

TEST_P(ZipStoreTest, EightThreadsReadTheSameBytes) {
  std::vector<std::string> keys;
  for (const auto& kv : tree_->files) keys.push_back(kv.first);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < keys.size(); ++i) {
        const std::string& key = keys[(i * 7 + t * 131) % keys.size()];
        const std::string& want = tree_->files.at(key);
        auto got = space_->Get(key, 1 << 30);
        if (!got.ok() || !got->has_value() || **got != want) ++bad;
        auto src = space_->Open(key);
        if (!src.ok() || *src == nullptr) {
          ++bad;
          continue;
        }
        std::string part(want.size() / 2, '\0');
        const uint64_t at = want.size() - part.size();
        if (!(*src)->ReadExact(at, part.data(), part.size()).ok() || part != want.substr(at)) ++bad;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

// A read of a changed archive is ESTALE, at open and through every entry, never bytes.
TEST_P(ZipStoreTest, AChangedArchiveIsStale) {
  const auto& [key, bytes] = *tree_->files.rbegin();
  auto opened = space_->Open(key);
  ASSERT_TRUE(opened.ok() && *opened != nullptr);
  archive_->changed = true;
  std::string buf(bytes.size(), '\0');
  const Status read = (*opened)->ReadExact(0, buf.data(), buf.size());
  const bool inflated_at_open = read.ok();  // deflated entries were read when opened
  if (!inflated_at_open) {
    EXPECT_EQ(read.sys_errno(), ESTALE) << read.ToString();
  }
  EXPECT_EQ(space_->Get(key, 1 << 30).status().sys_errno(), ESTALE);
  EXPECT_EQ(space_->Open(key).status().sys_errno(), inflated_at_open ? ESTALE : 0);
  auto reopened = OpenZipSpace(archive_);
  EXPECT_EQ(reopened.status().sys_errno(), ESTALE) << reopened.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(Corpus, ZipStoreTest,
                         ::testing::Combine(::testing::ValuesIn(kStores),
                                            ::testing::ValuesIn(kVariants)),
                         [](const auto& info) {
                           return StoreName(std::get<0>(info.param)) + "_" +
                                  std::get<1>(info.param);
                         });

// -------------------------------------------------------------------------------------------
// Damage.

class ZipDamageTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { ASSERT_EQ(Archives::Get().error(), ""); }
};

// A flipped byte inside an entry is Corrupt naming archive and entry, when it is read whole.
TEST_P(ZipDamageTest, AFlippedEntryByteIsCorrupt) {
  const Archives& a = Archives::Get();
  const std::string key = a.FlippedKey(GetParam());
  for (const std::string variant : {"flip_stored", "flip_deflated"}) {
    auto archive = ArchiveSource::Load(a.Path(GetParam(), variant));
    auto space = OpenOrDie(archive);
    ASSERT_NE(space, nullptr);
    auto got = space->Get(key, 1 << 30);
    EXPECT_EQ(got.status().code(), ErrorCode::kCorrupt) << variant;
    EXPECT_NE(got.status().message().find(archive->Describe() + "/" + key), std::string::npos)
        << got.status().message();
    auto opened = space->Open(key);
    if (variant == "flip_deflated") {
      EXPECT_EQ(opened.status().code(), ErrorCode::kCorrupt) << variant;
      continue;
    }
    ASSERT_TRUE(opened.ok() && *opened != nullptr);
    EXPECT_EQ((*opened)->ReadAll(1 << 30).status().code(), ErrorCode::kCorrupt);
    // The other entries are intact.
    for (const auto& [k, bytes] : a.TreeOf(GetParam()).files) {
      if (k == key) continue;
      auto other = space->Get(k, 1 << 30);
      ASSERT_TRUE(other.ok()) << k << ": " << other.status().ToString();
      EXPECT_EQ(**other, bytes) << k;
    }
  }
}

// A cut archive, or one that is not an archive, is refused at open with its path.
TEST_P(ZipDamageTest, ATruncatedArchiveIsRefusedAtOpen) {
  const std::string path = Archives::Get().Path(GetParam(), "deflated");
  const std::string whole = Slurp(path);
  for (size_t keep : {size_t{0}, size_t{10}, size_t{100}, whole.size() / 2, whole.size() - 30,
                      whole.size() - 22, whole.size() - 1}) {
    auto space = OpenZipSpace(std::make_shared<ArchiveSource>(path, whole.substr(0, keep)));
    ASSERT_FALSE(space.ok()) << keep;
    EXPECT_EQ(space.status().code(), ErrorCode::kCorrupt)
        << keep << ": " << space.status().ToString();
    EXPECT_NE(space.status().message().find(path), std::string::npos) << space.status().message();
  }
  // The end record kept, the central directory before it cut away: the archive's head is gone.
  auto space = OpenZipSpace(std::make_shared<ArchiveSource>(path, whole.substr(whole.size() / 2)));
  EXPECT_EQ(space.status().code(), ErrorCode::kCorrupt) << space.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(Corpus, ZipDamageTest, ::testing::ValuesIn(kStores),
                         [](const auto& info) { return StoreName(info.param); });

// -------------------------------------------------------------------------------------------
// One archive each.

std::shared_ptr<const ByteSpace> OpenOdd(const std::string& name) {
  EXPECT_EQ(Archives::Get().error(), "");
  return OpenOrDie(ArchiveSource::Load(Archives::Get().Odd(name)));
}

std::vector<std::string> Names(const ByteSpace& space, const std::string& prefix) {
  std::vector<std::string> out;
  auto listed = space.List(prefix);
  EXPECT_TRUE(listed.ok()) << listed.status().ToString();
  if (listed.ok()) {
    for (const ListEntry& e : *listed)
      out.push_back(e.name + (e.kind == EntryKind::kDirectory ? "/" : ""));
  }
  return out;
}

TEST(ZipSpace, ABigArchiveIsOpenedFromItsEnd) {
  const std::string path = Archives::Get().Path(kStores[2], "big");
  auto archive = ArchiveSource::Load(path);
  auto space = OpenOrDie(archive);
  ASSERT_NE(space, nullptr);
  const uint64_t at_open = archive->bytes_read.load();
  const Tree& tree = Archives::Get().TreeOf(kStores[2]);
  EXPECT_EQ(archive->reads.load(), 2u) << "the tail window, then the central directory";
  EXPECT_LE(at_open, 65535u + 98 + 160 * (tree.files.size() + 3)) << "of " << archive->size();
  EXPECT_LT(at_open * 100, archive->size()) << "under 1 % of the archive";
  // One entry afterwards: one read, its local header and its bytes.
  const auto& [key, bytes] = *tree.files.begin();
  archive->bytes_read = 0;
  archive->reads = 0;
  auto got = space->Get(key, 1 << 30);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(**got, bytes);
  EXPECT_EQ(archive->reads.load(), 1u);
  EXPECT_EQ(archive->bytes_read.load(), 30 + key.size() + bytes.size());
  // The data offset is kept: a second read is one read of the bytes alone.
  archive->bytes_read = 0;
  ASSERT_TRUE(space->Get(key, 1 << 30).ok());
  EXPECT_EQ(archive->bytes_read.load(), bytes.size());
}

TEST(ZipSpace, AnEndRecordBehindACommentFullOfSignatures) {
  for (const char* store : kStores) {
    auto space = OpenOrDie(ArchiveSource::Load(Archives::Get().Path(store, "comment_trap")));
    ASSERT_NE(space, nullptr);
    for (const auto& [key, bytes] : Archives::Get().TreeOf(store).files) {
      auto got = space->Get(key, 1 << 30);
      ASSERT_TRUE(got.ok() && got->has_value()) << key;
      EXPECT_EQ(**got, bytes) << key;
    }
  }
}

TEST(ZipSpace, ANameHeldTwiceIsTheLastOne) {
  auto space = OpenOdd("dups");
  ASSERT_NE(space, nullptr);
  EXPECT_EQ(Names(*space, ""), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(**space->Get("a", 100), "second, longer");
  auto src = space->Open("a");
  ASSERT_TRUE(src.ok() && *src != nullptr);
  EXPECT_EQ(*(*src)->ReadAll(100), "second, longer");
}

TEST(ZipSpace, NamesThatAreNotKeysAreLeftOut) {
  auto space = OpenOdd("badnames");
  ASSERT_NE(space, nullptr);
  EXPECT_EQ(Names(*space, ""), (std::vector<std::string>{"empty/", "ok/"}));
  EXPECT_EQ(Names(*space, "ok"), (std::vector<std::string>{"fine"}));
  EXPECT_TRUE(Names(*space, "empty").empty());
  EXPECT_EQ(**space->Get("ok/fine", 100), "fine");
  EXPECT_EQ(*space->Open("dot"), nullptr);
}

TEST(ZipSpace, AKeyThatIsBothFileAndFolderIsCorrupt) {
  const std::string path = Archives::Get().Odd("conflict");
  auto space = OpenZipSpace(ArchiveSource::Load(path));
  EXPECT_EQ(space.status().code(), ErrorCode::kCorrupt);
  EXPECT_NE(space.status().message().find(path), std::string::npos) << space.status().message();
}

TEST(ZipSpace, OtherMethodsAreListedButUnsupported) {
  auto space = OpenOdd("bzip2");
  ASSERT_NE(space, nullptr);
  EXPECT_EQ(Names(*space, ""), (std::vector<std::string>{"plain", "squeezed"}));
  EXPECT_EQ(**space->Get("plain", 100), "plain bytes");
  auto src = space->Open("squeezed");
  EXPECT_EQ(src.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(src.status().message().find("squeezed"), std::string::npos) << src.status().message();
  EXPECT_EQ(space->Get("squeezed", 10000).status().code(), ErrorCode::kUnsupported);
}

TEST(ZipSpace, EncryptedEntriesAreUnsupported) {
  if (!Archives::Get().have_zip_cli()) GTEST_SKIP() << "no zip CLI";
  auto space = OpenOdd("encrypted");
  ASSERT_NE(space, nullptr);
  EXPECT_EQ(Names(*space, ""), (std::vector<std::string>{"s.txt"}));
  EXPECT_EQ(space->Open("s.txt").status().code(), ErrorCode::kUnsupported);
}

TEST(ZipSpace, EmptyEntriesAndEmptyArchives) {
  auto space = OpenOdd("empty_entries");
  ASSERT_NE(space, nullptr);
  for (const std::string key : {"zero_stored", "zero_deflated"}) {
    auto got = space->Get(key, 0);
    ASSERT_TRUE(got.ok() && got->has_value()) << key << ": " << got.status().ToString();
    EXPECT_EQ(**got, "");
    auto src = space->Open(key);
    ASSERT_TRUE(src.ok() && *src != nullptr) << key;
    EXPECT_EQ(*(*src)->ReadAll(0), "");
  }
  auto none = OpenOdd("none");  // an archive of no entries is an empty store
  ASSERT_NE(none, nullptr);
  EXPECT_TRUE(Names(*none, "").empty());
  for (const std::string name : {"empty", "garbage"}) {  // an empty file is not an archive
    auto bad = OpenZipSpace(ArchiveSource::Load(Archives::Get().Odd(name)));
    EXPECT_EQ(bad.status().code(), ErrorCode::kCorrupt) << name;
  }
}

// Info-ZIP's zip records the files' times to the second in its extended timestamp field; with -X
// (the "cli" archive) it leaves that field out, and only the DOS time remains: two-second steps,
// odd seconds rounded up. (This test once assumed the field in "cli" and so passed only when the
// corpus's files had been written on an even second.)
TEST(ZipSpace, TimesAreTheEntries) {
  if (!Archives::Get().have_zip_cli()) GTEST_SKIP() << "no zip CLI";
  const std::string store = std::string(OMICSFS_CORPUS_DIR) + "/vcf-zarr/" + kStores[0];
  auto exact = OpenOrDie(ArchiveSource::Load(Archives::Get().Path(kStores[0], "cli_fz")));
  auto dos = OpenOrDie(ArchiveSource::Load(Archives::Get().Path(kStores[0], "cli")));
  ASSERT_NE(exact, nullptr);
  ASSERT_NE(dos, nullptr);
  for (const auto& [key, bytes] : Archives::Get().TreeOf(kStores[0]).files) {
    struct stat st;
    ASSERT_EQ(::stat((store + "/" + key).c_str(), &st), 0);
    auto src = exact->Open(key);
    ASSERT_TRUE(src.ok() && *src != nullptr);
    EXPECT_EQ((*src)->Info().mtime.tv_sec, st.st_mtim.tv_sec) << key;
    src = dos->Open(key);
    ASSERT_TRUE(src.ok() && *src != nullptr);
    EXPECT_EQ((*src)->Info().mtime.tv_sec, (st.st_mtim.tv_sec + 1) & ~time_t{1})
        << key << " (DOS time)";
  }
}

// -------------------------------------------------------------------------------------------
// Through the local backend: the archive a real file, its change check the file's.

TEST(ZipSpaceOverLocal, EveryKeyReadsBack) {
  const Archives& a = Archives::Get();
  for (const std::string variant : {"stored", "deflated", "zip64_all", "cli_stream"}) {
    if (variant.rfind("cli", 0) == 0 && !a.have_zip_cli()) continue;
    const std::string path = a.Path(kStores[0], variant);
    auto archive = LocalByteSource::OpenPath(path);
    ASSERT_TRUE(archive.ok()) << archive.status().ToString();
    auto space = OpenOrDie(*archive);
    ASSERT_NE(space, nullptr);
    EXPECT_EQ(space->Describe(), path);
    for (const auto& [key, bytes] : a.TreeOf(kStores[0]).files) {
      auto got = space->Get(key, 1 << 30);
      ASSERT_TRUE(got.ok() && got->has_value()) << variant << " " << key;
      EXPECT_EQ(**got, bytes) << variant << " " << key;
    }
  }
}

TEST(ZipSpaceOverLocal, ARewrittenArchiveIsStale) {
  const Archives& a = Archives::Get();
  const std::string path = a.Scratch("rewritten.zip");
  fs::copy_file(a.Path(kStores[0], "stored"), path, fs::copy_option::overwrite_if_exists);
  auto archive = LocalByteSource::OpenPath(path);
  ASSERT_TRUE(archive.ok()) << archive.status().ToString();
  auto space = OpenOrDie(*archive);
  ASSERT_NE(space, nullptr);
  const auto& [key, bytes] = *a.TreeOf(kStores[0]).files.rbegin();
  auto opened = space->Open(key);
  ASSERT_TRUE(opened.ok() && *opened != nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a later ctime
  {
    const std::string other = Slurp(a.Path(kStores[0], "deflated"));
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(other.data(), other.size());
  }
  std::string buf(bytes.size(), '\0');
  const Status read = (*opened)->ReadExact(0, buf.data(), buf.size());
  EXPECT_EQ(read.sys_errno(), ESTALE) << read.ToString();
  EXPECT_NE(read.message().find(path + "/" + key), std::string::npos) << read.message();
  EXPECT_EQ(space->Get(key, 1 << 30).status().sys_errno(), ESTALE);
  // The archive opened again is the new one.
  auto again = LocalByteSource::OpenPath(path);
  ASSERT_TRUE(again.ok());
  auto fresh = OpenOrDie(*again);
  ASSERT_NE(fresh, nullptr);
  auto got = fresh->Get(key, 1 << 30);
  ASSERT_TRUE(got.ok() && got->has_value()) << got.status().ToString();
  EXPECT_EQ(**got, bytes);
}

}  // namespace
}  // namespace omicsfs::io
