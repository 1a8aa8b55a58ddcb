// Command line: `omicsfs [options] SOURCE MOUNTPOINT`, `omicsfs ls [options] SOURCE [VPATH]`,
// `omicsfs cat [options] SOURCE VPATH`, --help, --version. `-o` options may come anywhere (fstab).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace omicsfs::mount {

enum class Command { kMount, kLs, kCat, kIndex, kHelp, kVersion };

struct Options {
  Command command = Command::kMount;
  std::string source;
  std::string mountpoint;     // mount
  std::string vpath;          // ls / cat
  bool long_listing = false;  // ls -l
  bool foreground = false;
  bool single_threaded = false;
  bool debug = false;
  uint64_t cache_size = uint64_t{1} << 30;
  std::string index_dir;
  bool index_dir_given = false;  // named with -o index_dir= (else the default)
  std::string lists_dir;         // -o lists=DIR (absolute), the lists slices name
  std::string log_file;          // -o log_file=PATH (default when detached: DefaultLogFile)
  double progress_s = 10;        // long passes log progress this often
  bool follow_symlinks = false;  // a symlink is shown as its target (a store if it is one)
  unsigned threads = 0;          // 0: default
  bool direct_io = false;
  double rescan_s = 5.0;             // 0: the tree is fixed at mount time
  unsigned index_max_age_days = 30;  // index files unused this long are removed at mount; 0: never
  bool rebuild_index = false;
  double h5vet_s =
      60;  // HDF5 files are parsed first by a helper process with this time limit; 0: not
  std::string h5vet_helper;  // the helper (empty: omicsfs-h5vet beside this executable)
  // allow_other implies default_permissions (the kernel checks the modes omicsfs reports, which
  // are those of the sources); this turns that off explicitly.
  bool no_default_permissions = false;
  // Remote SOURCEs (s3://, http(s)://). Credentials never come from the command line.
  std::string s3_endpoint;    // -o s3_endpoint=URL (any S3-compatible service)
  std::string s3_region;      // -o s3_region=R
  bool s3_anonymous = false;  // -o s3_anonymous (public buckets: unsigned requests)
  // -o s3_parts=SIZE: listed objects this large read by parts (0: never); unset: the default.
  std::optional<uint64_t> s3_parts;
  std::string ca_file;         // -o ca_file=PATH: trust this PEM for https (self-signed servers)
  double http_timeout_s = 20;  // -o http_timeout=SECONDS: connect, and a stalled transfer
  int http_retries = 4;        // -o http_retries=N: attempts after the first
  unsigned http_parallel = 8;  // -o http_parallel=N: requests one reader keeps in flight
  std::vector<std::string> fuse_options;  // passed through to libfuse (allow_other, …)
};

Result<Options> ParseOptions(int argc, const char* const* argv);
// "512M", "2G", "1048576", "64K" → bytes.
Result<uint64_t> ParseSize(const std::string& text);
// The smallest decode cache that works: one rendered chunk and a read's pieces.
inline constexpr uint64_t kMinCacheSize = uint64_t{1} << 20;
std::string DefaultIndexDir();
// $XDG_STATE_HOME/omicsfs/NAME.log, else ~/.local/state/omicsfs/NAME.log, NAME from the
// mountpoint's absolute path ('/' → '-'); empty when neither variable is set.
std::string DefaultLogFile(const std::string& mountpoint);
std::string UsageText();

}  // namespace omicsfs::mount
