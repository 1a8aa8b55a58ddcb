// The command line: exit codes, --help/--version, ls and cat without mounting.
#include <gtest/gtest.h>
#include <unistd.h>

#include "testutil/mount_fixture.h"
#include "util/fs.h"

namespace omicsfs {
namespace {

using testutil::RunCommand;

const std::string kExamples = OMICSFS_TEST_DATA "/examples";

TEST(CliTest, HelpAndVersion) {
  std::string out;
  EXPECT_EQ(RunCommand({OMICSFS_BINARY, "--help"}, &out), 0);
  EXPECT_NE(out.find("cache_size"), std::string::npos);
  // Every selector of every kind, with an example (the selector table, vfs/selectors.h).
  for (const char* said : {"Slices are folders", "slices of matrix:", "slices of fragments:",
                           "samples=NA00001,NA00003", "region=20:1-2000000", "regions=@exons",
                           "format=GT,DP", "region=chr1:1-1000000", "cells=@tcells",
                           "groups=@clusters", "rows=CD3E,MS4A1", "cols=@bcells"}) {
    EXPECT_NE(out.find(said), std::string::npos) << said << " in\n" << out;
  }
  for (const std::string& line : testutil::Lines(out)) EXPECT_LE(line.size(), 100u) << line;
  EXPECT_EQ(RunCommand({OMICSFS_BINARY, "--version"}, &out), 0);
  EXPECT_EQ(out.rfind("omicsfs ", 0), 0u);
}

TEST(CliTest, ExitCodes) {
  EXPECT_EQ(RunCommand({OMICSFS_BINARY}), 1);
  EXPECT_EQ(RunCommand({OMICSFS_BINARY, "--bogus", "a", "b"}), 1);
  EXPECT_EQ(RunCommand({OMICSFS_BINARY, "-o", "cache_size=lots", kExamples, "/tmp"}), 1);
  EXPECT_EQ(RunCommand({OMICSFS_BINARY, "-o", "s3_parts=some", kExamples, "/tmp"}), 1);
  EXPECT_EQ(RunCommand({OMICSFS_BINARY, "-f", "/nonexistent/source", "/tmp"}), 2);
  EXPECT_EQ(RunCommand({OMICSFS_BINARY, "-f", kExamples, "/nonexistent/mountpoint"}), 3);
  EXPECT_EQ(RunCommand({OMICSFS_BINARY, "cat", kExamples, "no/such/file"}), 1);
}

TEST(CliTest, LsAndCat) {
  std::string out;
  EXPECT_EQ(RunCommand({OMICSFS_BINARY, "ls", kExamples}, &out), 0);
  EXPECT_EQ(out, "counts.packed/\ncounts_gzip.h5/\nfrags.packed/\nsample.vcz/\ntiny_3x4.datg/\n");
  EXPECT_EQ(RunCommand({OMICSFS_BINARY, "ls", kExamples, "counts_gzip.h5/mat"}, &out), 0);
  EXPECT_EQ(out,
            "10x/\n10x.h5\nbarcodes.tsv\ncolnames.txt\ngenes.tsv\nmatrix.h5ad\nmatrix.mtx\n"
            "matrix.tsv\n"
            "rownames.txt\n");
  EXPECT_EQ(RunCommand({OMICSFS_BINARY, "ls", kExamples, "counts_gzip.h5/mat/10x"}, &out), 0);
  EXPECT_EQ(out, "barcodes.tsv.gz\nfeatures.tsv.gz\nmatrix.mtx.gz\n");
  EXPECT_EQ(RunCommand({OMICSFS_BINARY, "cat", kExamples, "counts.packed/matrix.mtx"}, &out), 0);
  std::string want;
  ASSERT_TRUE(testutil::ReadWhole(OMICSFS_TEST_DATA "/expected/counts.col.mtx", &want));
  EXPECT_TRUE(out == want);
  // A single store as SOURCE.
  EXPECT_EQ(RunCommand({OMICSFS_BINARY, "cat", kExamples + "/counts.packed", "colnames.txt"}, &out),
            0);
  ASSERT_TRUE(testutil::ReadWhole(OMICSFS_TEST_DATA "/expected/counts.colnames.txt", &want));
  EXPECT_EQ(out, want);
}

}  // namespace
}  // namespace omicsfs

namespace omicsfs {
namespace {

// Without -f the daemon detaches (and changes directory to /) only once the mount is usable;
// a relative SOURCE must keep working.
TEST(CliTest, BackgroundMountWithRelativeSource) {
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof(cwd)), nullptr);
  std::string rel = fs::relative(kExamples, cwd).string();
  ASSERT_FALSE(rel.empty());
  ASSERT_NE(rel[0], '/');
  std::string mnt = (fs::temp_directory_path() / fs::unique_path("omicsfs-bg-%%%%%%")).string();
  fs::create_directories(mnt);
  EXPECT_EQ(RunCommand({OMICSFS_BINARY, rel, mnt}), 0);
  EXPECT_TRUE(testutil::IsMountPoint(mnt));
  std::string got, want;
  if (testutil::IsMountPoint(mnt)) {
    EXPECT_TRUE(testutil::ReadWhole(mnt + "/counts.packed/matrix.mtx", &got));
    ASSERT_TRUE(testutil::ReadWhole(OMICSFS_TEST_DATA "/expected/counts.col.mtx", &want));
    EXPECT_TRUE(got == want);
    EXPECT_EQ(RunCommand({"fusermount3", "-u", mnt}), 0);
  }
  if (testutil::IsMountPoint(mnt)) RunCommand({"fusermount3", "-uz", mnt});
  fs::remove(mnt);
}

}  // namespace
}  // namespace omicsfs
