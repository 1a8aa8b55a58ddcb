// Runs the real daemon on a private temp mountpoint for a test. A watchdog aborts the mount
// (lazy unmount + SIGKILL) if the test overruns, so a hung daemon fails a test instead of
// hanging it; the destructor always unmounts and reaps the daemon.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace omicsfs::testutil {

class MountedFs {
 public:
  static std::unique_ptr<MountedFs> Start(const std::string& binary, const std::string& source,
                                          const std::vector<std::string>& extra_args = {},
                                          std::chrono::seconds watchdog = std::chrono::seconds(300),
                                          std::chrono::seconds startup = std::chrono::seconds(30));
  ~MountedFs();
  MountedFs(const MountedFs&) = delete;
  MountedFs& operator=(const MountedFs&) = delete;

  const std::string& path() const { return mountpoint_; }
  std::string Log() const;  // the daemon's stderr so far
  bool alive() const;
  pid_t pid() const { return pid_; }
  // Sends `sig` to the daemon and waits (≤ timeout) for it to exit; returns its exit status or -1.
  int SignalAndWait(int sig, std::chrono::seconds timeout = std::chrono::seconds(20));

 private:
  MountedFs() = default;
  void Stop();

  pid_t pid_ = -1;
  std::string mountpoint_;
  std::string log_path_;
  std::thread watchdog_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
};

// One mount shared by every test of a suite: `class X : public SharedMountTest<X>` with a
// `static std::string Source()`. Requires OMICSFS_BINARY (a compile definition of the tests).
#ifdef OMICSFS_BINARY
template <typename Derived>
class SharedMountTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = Derived::Source();
    ASSERT_TRUE(::access(dir.c_str(), R_OK) == 0) << "the shared corpus is missing at " << dir;
    mount_ = MountedFs::Start(OMICSFS_BINARY, dir).release();
    ASSERT_NE(mount_, nullptr);
  }
  static void TearDownTestSuite() {
    delete mount_;
    mount_ = nullptr;
  }
  static inline MountedFs* mount_ = nullptr;
};

#endif

// Runs a command (argv) with a timeout; returns its exit status (or -1), capturing stdout.
int RunCommand(const std::vector<std::string>& argv, std::string* out = nullptr,
               std::chrono::seconds timeout = std::chrono::seconds(120));

// The matrix stores of the corpus manifest (`bpcells`: the corpus's bpcells/ folder): each
// store's folder below it, its reference MatrixMarket and names, storage order and value type
// as numpy names it (float64, float32, uint32).
struct CorpusMatrix {
  std::string dir, mtx, rownames, colnames, order, dtype;
};
std::vector<CorpusMatrix> CorpusMatrices(const std::string& bpcells);

// Runs `script` with Debian's python over `rows` (written as its TSV list, one a line) and
// expects it to print "ok N" for the N rows (the h5ad and 10x.h5 checks).
void ExpectPythonCheck(const std::string& script, const std::vector<std::string>& rows);

bool IsMountPoint(const std::string& path);
// A fresh directory /tmp/PREFIXxxxxxx ("" when it cannot be made).
std::string MakeTempDir(const char* prefix);
// A fresh directory removed with all it holds when this goes.
class TempDir {
 public:
  explicit TempDir(const char* prefix = "omicsfs-test-") : path_(MakeTempDir(prefix)) {}
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};
// Removes a tree, ignoring errors.
void RemoveTree(const std::string& path);
// Copies the tree `from` to `to` (made), its files readable and writable by their owner too
// (tests damage them).
void CopyTree(const std::string& from, const std::string& to);
// A file's bytes ("" when it cannot be read; ReadOrFail where that is a failure).
std::string Slurp(const std::string& path);
// Reads a whole file with read(2); returns false (and sets *err) on a failed read.
bool ReadWhole(const std::string& path, std::string* out, int* err = nullptr);
// The file's bytes; a failed read is a test failure (naming the path and errno) and gives "".
std::string ReadOrFail(const std::string& path);
// The stdout of `bash -c "set -o pipefail; CMD"`; a nonzero exit is a test failure.
std::string ShOrFail(const std::string& cmd);
// The lines of `text` (no trailing empty line).
std::vector<std::string> Lines(const std::string& text);
std::string Join(const std::vector<std::string>& items, const std::string& sep);
// A slice folder that failed: it holds ERROR.txt alone, one line, saying `says`.
void ExpectOnlyErrorTxt(const std::string& dir, const std::string& says);
// Gunzips a file (or returns it unchanged when it does not end in .gz).
std::string ReadMaybeGz(const std::string& path);

// Zips the folder `src` into `out` as zarr's ZipStore (and bio2zarr) lay a store out: Python's
// zipfile, members in sorted order, deflated or stored. Returns the exit status.
int ZipFolder(const std::string& src, const std::string& out, bool deflate);
// The number written just before `phrase` in `text` ("... 8 requests in flight ..." with phrase
// " requests in flight"), as the status file writes its figures; -1 when the phrase is absent.
long NumberBefore(const std::string& text, const std::string& phrase);

#ifdef OMICSFS_BINARY
// The slice tests' preamble: a lists directory (`-o lists=DIR`) and one mount for the whole
// suite, both gone after it. `class X : public SliceSuite<X>`, whose SetUpTestSuite calls
// MakeLists, writes its lists and calls Mount (in the order its lists need: some are made of
// the mounted store's own names).
template <typename Derived>
class SliceSuite : public ::testing::Test {
 protected:
  static void MakeLists(const char* prefix) {
    lists_ = MakeTempDir(prefix);
    ASSERT_FALSE(lists_.empty());
  }
  static void Mount(const std::string& source) {
    mount_ = MountedFs::Start(OMICSFS_BINARY, source, {"-o", "lists=" + lists_}).release();
    ASSERT_NE(mount_, nullptr);
  }
  static void TearDownTestSuite() {
    delete mount_;
    mount_ = nullptr;
    if (!lists_.empty()) RemoveTree(lists_);
  }
  static inline MountedFs* mount_ = nullptr;
  static inline std::string lists_;
};
#endif

}  // namespace omicsfs::testutil
