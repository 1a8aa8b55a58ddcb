// What the zip tests share: corpus VCF Zarr stores zipped every way their writers do it (Python's
// zipfile, as zarr's ZipStore and bio2zarr use it: tests/io/make_zips.py; Info-ZIP's zip), once
// per test binary, and an in-memory archive source that counts its reads.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "io/byte_source.h"
#include "io/zip/zip_space.h"
#include "testutil/mount_fixture.h"
#include "util/fs.h"

namespace omicsfs::io::ziptest {

using testutil::Slurp;

// An archive held in memory, as a ByteSource that counts what is read of it and can be told
// that the object behind it changed (its reads then fail with ESTALE, as every backend's do).
class ArchiveSource : public ByteSource {
 public:
  ArchiveSource(std::string path, std::string bytes)
      : path_(std::move(path)), bytes_(std::move(bytes)) {
    info_.size = bytes_.size();
    info_.mtime.tv_sec = 1700000000;
    info_.perm = 0440;
    info_.stamp = "archive-stamp-" + std::to_string(bytes_.size());
  }
  static std::shared_ptr<ArchiveSource> Load(const std::string& path) {
    return std::make_shared<ArchiveSource>(path, Slurp(path));
  }
  const std::string& Describe() const override { return path_; }
  const ObjectInfo& Info() const override { return info_; }
  Status ReadExact(uint64_t offset, void* out, size_t length) const override {
    if (changed.load()) return IoError(path_ + ": changed since it was opened", ESTALE);
    if (offset > bytes_.size() || length > bytes_.size() - offset) {
      return CorruptError(path_ + ": bytes " + std::to_string(offset) + "+" +
                          std::to_string(length) + " lie past its end");
    }
    reads.fetch_add(1);
    bytes_read.fetch_add(length);
    if (length > 0) std::memcpy(out, bytes_.data() + offset, length);
    return OkStatus();
  }
  uint64_t size() const { return bytes_.size(); }

  mutable std::atomic<uint64_t> reads{0};
  mutable std::atomic<uint64_t> bytes_read{0};
  std::atomic<bool> changed{false};

 private:
  std::string path_;
  std::string bytes_;
  ObjectInfo info_;
};

// A store directory as the zip space should show it: every file's bytes, every folder's entries.
struct Tree {
  std::map<std::string, std::string> files;                                    // key → bytes
  std::map<std::string, std::vector<std::pair<std::string, EntryKind>>> dirs;  // "" = the root
};

inline Tree Walk(const std::string& root) {
  Tree t;
  t.dirs[""];
  for (fs::recursive_directory_iterator it(root), end; it != end; ++it) {
    const std::string key = fs::relative(it->path(), root).generic_string();
    const std::string parent = fs::path(key).parent_path().generic_string();
    const bool dir = fs::is_directory(it->status());
    t.dirs[parent].emplace_back(it->path().filename().string(),
                                dir ? EntryKind::kDirectory : EntryKind::kFile);
    if (dir) {
      t.dirs[key];
    } else {
      t.files[key] = Slurp(it->path().string());
    }
  }
  for (auto& [d, entries] : t.dirs) std::sort(entries.begin(), entries.end());
  return t;
}

const char* const kStores[] = {"sample/sample.vcz", "sample_v3_s2/sample_v3_s2.vcz",
                               "chr22_v9_s32/chr22_v9_s32.vcz"};
const char* const kVariants[] = {"stored", "deflated",   "mixed",      "zip64_forced", "zip64_all",
                                 "cli",    "cli_stored", "cli_stream", "cli_fz"};

inline std::string StoreName(const std::string& store) { return fs::path(store).stem().string(); }

// The archives, written once per run into one temporary directory (removed at exit).
class Archives {
 public:
  static const Archives& Get() {
    static const Archives a;
    return a;
  }
  ~Archives() { fs::remove_all(root_); }
  std::string Path(const std::string& store, const std::string& name) const {
    return (root_ / StoreName(store) / (name + ".zip")).string();
  }
  std::string Odd(const std::string& name) const {
    return (root_ / "odd" / (name + ".zip")).string();
  }
  // Every archive lies under root(): STORE/VARIANT.zip (StoreName), odd/NAME.zip.
  const fs::path& root() const { return root_; }
  std::string Scratch(const std::string& name) const { return (root_ / name).string(); }
  const Tree& TreeOf(const std::string& store) const { return trees_.at(store); }
  std::string FlippedKey(const std::string& store) const {
    return Slurp((root_ / StoreName(store) / "flipped_key").string());
  }
  bool have_zip_cli() const { return have_zip_; }
  const std::string& error() const { return error_; }

 private:
  Archives() : root_(fs::temp_directory_path() / fs::unique_path("omicsfs-zip-%%%%%%")) {
    const std::string script = std::string(OMICSFS_SOURCE_DIR) + "/tests/io/make_zips.py";
    have_zip_ = fs::exists("/usr/bin/zip");
    for (const char* store : kStores) {
      const std::string dir = std::string(OMICSFS_CORPUS_DIR) + "/vcf-zarr/" + store;
      const std::string out = (root_ / StoreName(store)).string();
      fs::create_directories(out);
      trees_[store] = Walk(dir);
      Run({"/usr/bin/python3", script, dir, out});
      if (!have_zip_) continue;
      Run({"sh", "-c", "cd '" + dir + "' && zip -q -r -X '" + out + "/cli.zip' ."});
      Run({"sh", "-c", "cd '" + dir + "' && zip -q -r -X -0 '" + out + "/cli_stored.zip' ."});
      Run({"sh", "-c", "cd '" + dir + "' && zip -q -r - . > '" + out + "/cli_stream.zip'"});
      Run({"sh", "-c", "cd '" + dir + "' && zip -q -r -fz '" + out + "/cli_fz.zip' ."});
    }
    fs::create_directories(root_ / "odd");
    Run({"/usr/bin/python3", script, "--odd", (root_ / "odd").string()});
    if (have_zip_) {
      Run({"sh", "-c",
           "cd '" + (root_ / "odd").string() +
               "' && echo secret bytes > s.txt && zip -q -P pw encrypted.zip s.txt"});
    }
  }
  void Run(const std::vector<std::string>& argv) {
    if (testutil::RunCommand(argv) != 0) error_ += "failed: " + argv.back() + "\n";
  }

  fs::path root_;
  std::map<std::string, Tree> trees_;
  bool have_zip_ = false;
  std::string error_;
};

inline std::shared_ptr<const ByteSpace> OpenOrDie(std::shared_ptr<const ByteSource> archive) {
  auto space = OpenZipSpace(std::move(archive));
  EXPECT_TRUE(space.ok()) << space.status().ToString();
  return space.ok() ? *space : nullptr;
}

}  // namespace omicsfs::io::ziptest
