// A shared mount (allow_other) enforces the permissions of its sources: another user reads through
// it only what they can read on disk. Real mounts; the other user is `nobody`, and every access is
// made by a real program (cat, ls, head) run as that user through setpriv.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "testutil/mount_fixture.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::MountedFs;
using testutil::ReadWhole;
using testutil::RunCommand;

const std::string kData = OMICSFS_TEST_DATA;

class Source {
 public:
  Source() : path_(fs::temp_directory_path() / fs::unique_path("omicsfs-perm-%%%%%%")) {
    fs::create_directories(path_);
    ::chmod(path_.c_str(), 0755);
  }
  ~Source() {
    fs_error ec;
    fs::remove_all(path_, ec);
  }
  std::string str() const { return path_.string(); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

void CopyStore(const std::string& from, const std::string& to, mode_t dir_mode, mode_t file_mode) {
  fs::create_directories(to);
  for (fs::directory_iterator it(from), end; it != end; ++it) {
    const std::string dst = to + "/" + it->path().filename().string();
    fs::copy_file(it->path(), dst);
    ::chmod(dst.c_str(), file_mode);
  }
  ::chmod(to.c_str(), dir_mode);
}

void WriteFile(const std::string& path, const std::string& text, mode_t mode) {
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(text.c_str(), f);
  std::fclose(f);
  ::chmod(path.c_str(), mode);
}

// Runs argv as user nobody; returns the exit status and captures stdout. stderr (the refusal's
// wording) goes to the test log.
int AsNobody(std::vector<std::string> argv, std::string* out = nullptr) {
  std::vector<std::string> cmd = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                  "--"};
  cmd.insert(cmd.end(), argv.begin(), argv.end());
  return RunCommand(cmd, out, std::chrono::seconds(60));
}

// The shell's exit status of `test -r PATH` as nobody: 0 readable, 1 not.
int NobodyCanOpen(const std::string& path) {
  return AsNobody({"sh", "-c", "exec 3<\"$1\" 2>/dev/null && head -c1 <&3 >/dev/null", "sh", path});
}

struct Layout {
  Source src;
  Layout() {
    CopyStore(kData + "/examples/counts.packed", src / "public.packed", 0755, 0644);
    CopyStore(kData + "/examples/counts.packed", src / "private.packed", 0700, 0600);
    // A readable directory whose files are not: its views are no more readable than its files.
    CopyStore(kData + "/examples/counts.packed", src / "halfopen.packed", 0755, 0600);
    fs::copy_file(kData + "/examples/counts_gzip.h5", src / "private.h5");
    ::chmod((src / "private.h5").c_str(), 0600);
    WriteFile(src / "secret.txt", "secret\n", 0600);
    WriteFile(src / "open.txt", "open\n", 0644);
  }
};

TEST(Permissions, AllowOtherEnforcesTheSourcesModes) {
  Layout l;
  auto m = MountedFs::Start(OMICSFS_BINARY, l.src.str(), {"-o", "allow_other"});
  ASSERT_NE(m, nullptr);
  const std::string mp = m->path();
  // The mounting user reads everything, as before.
  for (const char* f :
       {"public.packed/matrix.mtx", "private.packed/matrix.mtx", "halfopen.packed/matrix.mtx",
        "private.h5/mat/matrix.mtx", "secret.txt", "open.txt"}) {
    std::string got;
    EXPECT_TRUE(ReadWhole(mp + "/" + f, &got)) << f;
    EXPECT_FALSE(got.empty()) << f;
  }
  // Another user: what is world-readable on disk stays readable through the mount...
  std::string out;
  ASSERT_EQ(AsNobody({"head", "-3", mp + "/public.packed/matrix.mtx"}, &out), 0);
  EXPECT_EQ(out.rfind("%%MatrixMarket matrix coordinate", 0), 0u) << out;
  ASSERT_EQ(AsNobody({"cat", mp + "/open.txt"}, &out), 0);
  EXPECT_EQ(out, "open\n");
  EXPECT_EQ(AsNobody({"ls", mp + "/public.packed"}, &out), 0);
  EXPECT_NE(out.find("matrix.mtx"), std::string::npos);
  // ...and what is not is refused, as on disk (EACCES: cat and ls exit 1, `exec 3<` fails).
  EXPECT_NE(NobodyCanOpen(l.src / "private.packed/matrix"), 0) << "the test's premise";
  for (const char* f :
       {"private.packed/matrix.mtx", "halfopen.packed/matrix.mtx", "halfopen.packed/genes.tsv",
        "halfopen.packed/10x/matrix.mtx.gz", "private.h5/mat/10x/features.tsv.gz",
        "private.h5/mat/matrix.mtx", "secret.txt"}) {
    EXPECT_NE(NobodyCanOpen(mp + "/" + f), 0) << f << " readable by nobody";
  }
  EXPECT_EQ(NobodyCanOpen(mp + "/open.txt"), 0);
  EXPECT_NE(AsNobody({"cat", mp + "/secret.txt"}, &out), 0);
  EXPECT_EQ(out, "");
  EXPECT_NE(AsNobody({"ls", mp + "/private.packed"}, &out), 0) << "listing a 0700 store";
  EXPECT_EQ(out, "");
  EXPECT_NE(AsNobody({"ls", mp + "/private.h5"}, &out), 0) << "listing a 0600 HDF5 file's groups";
  // The modes shown are those of the sources, without write bits.
  struct stat st;
  ASSERT_EQ(::stat((mp + "/private.packed").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0500u);
  ASSERT_EQ(::stat((mp + "/halfopen.packed").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0555u);
  ASSERT_EQ(::stat((mp + "/halfopen.packed/matrix.mtx").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0400u);
  ASSERT_EQ(::stat((mp + "/public.packed/matrix.mtx").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0444u);
  // The 10x folder: entered and read by whoever reads the store's views.
  ASSERT_EQ(::stat((mp + "/public.packed/10x").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0555u);
  ASSERT_EQ(::stat((mp + "/halfopen.packed/10x").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0500u);
  ASSERT_EQ(::stat((mp + "/halfopen.packed/10x/barcodes.tsv.gz").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0400u);
  EXPECT_EQ(NobodyCanOpen(mp + "/public.packed/10x/matrix.mtx.gz"), 0);
  EXPECT_NE(AsNobody({"ls", mp + "/halfopen.packed/10x"}, &out), 0);
}

TEST(Permissions, ViewsKeepTheOwnerAndGroupOfTheirSource) {
  Layout l;
  for (const char* p : {"private.packed", "private.h5", "secret.txt"}) {
    ASSERT_EQ(::chown((l.src / p).c_str(), 4321, 4322), 0);
  }
  for (fs::directory_iterator it(l.src / "private.packed"), end; it != end; ++it) {
    ASSERT_EQ(::chown(it->path().c_str(), 4321, 4322), 0);
  }
  auto m = MountedFs::Start(OMICSFS_BINARY, l.src.str(), {"-o", "allow_other"});
  ASSERT_NE(m, nullptr);
  for (const char* f : {"private.packed", "private.packed/matrix.mtx", "private.packed/genes.tsv",
                        "private.h5", "private.h5/mat/matrix.mtx", "secret.txt"}) {
    struct stat st;
    ASSERT_EQ(::stat((m->path() + "/" + f).c_str(), &st), 0) << f;
    EXPECT_EQ(st.st_uid, 4321u) << f;
    EXPECT_EQ(st.st_gid, 4322u) << f;
  }
  // Owned by someone else and 0600: nobody is still refused; the owner's own checks are the
  // kernel's (root reads it through the mount as on disk).
  EXPECT_NE(NobodyCanOpen(m->path() + "/private.packed/matrix.mtx"), 0);
  std::string got;
  EXPECT_TRUE(ReadWhole(m->path() + "/private.packed/matrix.mtx", &got));
}

// The explicit opt-out does what it says: no checks (so the tests above can fail).
TEST(Permissions, NoDefaultPermissionsIsAnExplicitOptOut) {
  Layout l;
  auto m =
      MountedFs::Start(OMICSFS_BINARY, l.src.str(), {"-o", "allow_other,no_default_permissions"});
  ASSERT_NE(m, nullptr);
  std::string out;
  EXPECT_EQ(AsNobody({"cat", m->path() + "/secret.txt"}, &out), 0);
  EXPECT_EQ(out, "secret\n");
  std::string log;
  EXPECT_NE(RunCommand({OMICSFS_BINARY, "-o", "no_default_permissions,default_permissions",
                        l.src.str(), "/nonexistent"},
                       &log),
            0);
}

// Index files and transposed copies written into a shared index_dir are the mounting user's own,
// mode 0600, whatever the umask: other users of the directory cannot read derived data.
TEST(Permissions, IndexFilesArePrivateInASharedIndexDir) {
  Layout l;
  Source shared;
  ::chmod(shared.str().c_str(), 01777);
  const mode_t old_umask = ::umask(0);
  {
    auto m = MountedFs::Start(OMICSFS_BINARY, l.src.str(),
                              {"-o", "allow_other,index_dir=" + shared.str()});
    ::umask(old_umask);
    ASSERT_NE(m, nullptr);
    std::string got;
    // A col-major store: matrix.tsv makes a transposed copy; every view read persists its index.
    for (const char* f :
         {"public.packed/matrix.tsv", "public.packed/matrix.mtx", "private.h5/mat/matrix.tsv"}) {
      ASSERT_TRUE(ReadWhole(m->path() + "/" + f, &got)) << f;
    }
  }
  ::umask(old_umask);
  int files = 0, csr = 0;
  for (fs::recursive_directory_iterator it(shared.str()), end; it != end; ++it) {
    struct stat st;
    ASSERT_EQ(::lstat(it->path().c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, ::geteuid()) << it->path();
    EXPECT_EQ(st.st_mode & 077, 0u) << it->path() << " mode " << std::oct << (st.st_mode & 07777);
    if (S_ISREG(st.st_mode)) ++files;
    if (it->path().extension() == ".csr") ++csr;
  }
  EXPECT_GE(files, 3);
  EXPECT_GE(csr, 1) << "no transposed copy was persisted; the check above saw none";
}

}  // namespace
}  // namespace omicsfs
