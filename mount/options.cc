#include "mount/options.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "util/fs.h"
#include "vfs/discover.h"

namespace omicsfs::mount {
namespace {

// "OPTION=SECONDS": 0..86400, fractions allowed.
Result<double> ParseSeconds(const std::string& value) {
  char* end = nullptr;
  const double seconds = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !(seconds >= 0) || seconds > 86400) {
    return InvalidArgumentError("must be 0..86400 seconds, not '" + value + "'");
  }
  return seconds;
}

// A path option as an absolute path: a detached daemon leaves its working directory for /, so a
// relative index_dir, log_file, ca_file or helper would name another place once it has.
std::string Absolute(const std::string& path) {
  fs_error ec;
  const fs::path a = fs::absolute(fs::path(path), ec);
  return ec ? path : a.lexically_normal().string();
}

Status ApplyOptionValue(const std::string& opt, const std::string& key, const std::string& value,
                        Options* o) {
  if (key == "cache_size") {
    ASSIGN_OR_RETURN(o->cache_size, ParseSize(value));
    if (o->cache_size < kMinCacheSize)
      return InvalidArgumentError("must be at least 1M, not '" + value + "'");
  } else if (key == "index_dir") {
    if (value.empty()) return InvalidArgumentError("needs a directory");
    o->index_dir = Absolute(value);
    o->index_dir_given = true;
  } else if (key == "lists") {
    if (value.empty()) return InvalidArgumentError("needs a directory");
    char* real = ::realpath(value.c_str(), nullptr);  // the daemon leaves its working directory
    if (real == nullptr)
      return InvalidArgumentError("cannot use '" + value + "': " + std::strerror(errno));
    o->lists_dir = real;
    std::free(real);
    struct stat st;
    if (::stat(o->lists_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return InvalidArgumentError("'" + value + "' is not a directory");
  } else if (key == "log_file") {
    if (value.empty()) return InvalidArgumentError("needs a file");
    o->log_file = Absolute(value);
  } else if (key == "threads") {
    char* end = nullptr;
    unsigned long n = std::strtoul(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || n == 0 || n > 1024) {
      return InvalidArgumentError("must be 1..1024, not '" + value + "'");
    }
    o->threads = static_cast<unsigned>(n);
  } else if (key == "index_max_age") {
    char* end = nullptr;
    const unsigned long days = std::strtoul(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || days > 36500) {
      return InvalidArgumentError("must be a number of days, not '" + value + "'");
    }
    o->index_max_age_days = static_cast<unsigned>(days);
  } else if (key == "rescan") {
    ASSIGN_OR_RETURN(o->rescan_s, ParseSeconds(value));
  } else if (key == "h5vet") {
    ASSIGN_OR_RETURN(o->h5vet_s, ParseSeconds(value));
  } else if (key == "progress") {
    ASSIGN_OR_RETURN(o->progress_s, ParseSeconds(value));
    if (o->progress_s <= 0) return InvalidArgumentError("must be more than 0 seconds");
  } else if (key == "h5vet_helper") {
    if (value.empty()) return InvalidArgumentError("needs a path");
    o->h5vet_helper = Absolute(value);
  } else if (key == "s3_endpoint") {
    if (value.rfind("http://", 0) != 0 && value.rfind("https://", 0) != 0) {
      return InvalidArgumentError("needs an http:// or https:// URL, not '" + value + "'");
    }
    o->s3_endpoint = value;
  } else if (key == "s3_region") {
    if (value.empty()) return InvalidArgumentError("needs a region name");
    o->s3_region = value;
  } else if (key == "s3_anonymous") {
    o->s3_anonymous = true;
  } else if (key == "s3_parts") {
    if (value == "0") {
      o->s3_parts = 0;
    } else {
      ASSIGN_OR_RETURN(o->s3_parts, ParseSize(value));
    }
  } else if (key == "ca_file") {
    if (value.empty()) return InvalidArgumentError("needs a PEM file");
    o->ca_file = Absolute(value);
  } else if (key == "http_timeout") {
    ASSIGN_OR_RETURN(o->http_timeout_s, ParseSeconds(value));
    if (o->http_timeout_s < 1) return InvalidArgumentError("must be at least 1 second");
  } else if (key == "http_retries") {
    char* end = nullptr;
    const unsigned long n = std::strtoul(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || n > 20)
      return InvalidArgumentError("must be 0..20, not '" + value + "'");
    o->http_retries = static_cast<int>(n);
  } else if (key == "http_parallel") {
    char* end = nullptr;
    const unsigned long n = std::strtoul(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || n < 1 || n > 64)
      return InvalidArgumentError("must be 1..64, not '" + value + "'");
    o->http_parallel = static_cast<unsigned>(n);
  } else if (key == "aws_access_key_id" || key == "aws_secret_access_key" ||
             key == "aws_session_token") {
    return InvalidArgumentError(
        "credentials are never taken from the command line (ps shows them to every "
        "user); set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or use ~/.aws/credentials");
  } else if (key == "direct_io") {
    o->direct_io = true;
  } else if (key == "follow_symlinks") {
    o->follow_symlinks = true;
  } else if (key == "no_default_permissions") {
    o->no_default_permissions = true;
  } else if (key == "rebuild_index") {
    o->rebuild_index = true;
  } else if (key == "ro" || key == "rw" || key == "noauto" || key == "auto" || key == "nofail" ||
             key == "_netdev" || key == "user" || key == "users" || key == "nouser" ||
             key == "defaults" || key.rfind("x-", 0) == 0) {
    // fstab / mount(8) options: omicsfs is always read-only; the rest are mount(8)'s business.
    if (key == "rw") return InvalidArgumentError("omicsfs is read-only");
  } else {
    o->fuse_options.push_back(opt);
  }
  return OkStatus();
}

// One bad value gives one line naming its option: "cache_size: bad size 'abc'".
Status ApplyOption(const std::string& opt, Options* o) {
  if (opt.empty()) return OkStatus();
  const auto eq = opt.find('=');
  const std::string key = opt.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : opt.substr(eq + 1);
  Status s = ApplyOptionValue(opt, key, value, o);
  if (!s.ok()) return InvalidArgumentError(key + ": " + s.message());
  return OkStatus();
}

Status ApplyOptionList(const std::string& list, Options* o) {
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    RETURN_IF_ERROR(ApplyOption(list.substr(pos, comma - pos), o));
    pos = comma + 1;
  }
  return OkStatus();
}

}  // namespace

Result<uint64_t> ParseSize(const std::string& text) {
  if (text.empty()) return InvalidArgumentError("empty size");
  char* end = nullptr;
  unsigned long long n = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str()) return InvalidArgumentError("bad size '" + text + "'");
  std::string suffix = end;
  uint64_t mult = 1;
  if (suffix == "" || suffix == "B")
    mult = 1;
  else if (suffix == "K" || suffix == "k" || suffix == "KiB")
    mult = uint64_t{1} << 10;
  else if (suffix == "M" || suffix == "m" || suffix == "MiB")
    mult = uint64_t{1} << 20;
  else if (suffix == "G" || suffix == "g" || suffix == "GiB")
    mult = uint64_t{1} << 30;
  else if (suffix == "T" || suffix == "t" || suffix == "TiB")
    mult = uint64_t{1} << 40;
  else
    return InvalidArgumentError("bad size suffix in '" + text + "'");
  if (n > UINT64_MAX / mult) return InvalidArgumentError("size too large: '" + text + "'");
  if (n == 0) return InvalidArgumentError("size must not be 0");
  return static_cast<uint64_t>(n) * mult;
}

std::string DefaultLogFile(const std::string& mountpoint) {
  std::string dir;
  if (const char* x = std::getenv("XDG_STATE_HOME"); x && *x) {
    dir = std::string(x) + "/omicsfs";
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    dir = std::string(h) + "/.local/state/omicsfs";
  } else {
    return "";
  }
  std::string name;
  for (char c : mountpoint) name += c == '/' ? '-' : c;
  while (!name.empty() && name.front() == '-') name.erase(0, 1);
  return dir + "/" + (name.empty() ? "root" : name) + ".log";
}

std::string DefaultIndexDir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/omicsfs";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/omicsfs";
  return "";
}

Result<Options> ParseOptions(int argc, const char* const* argv) {
  Options o;
  std::vector<std::string> positional;
  int i = 1;
  if (argc > 1) {
    std::string first = argv[1];
    if (first == "ls") {
      o.command = Command::kLs;
      i = 2;
    }
    if (first == "cat") {
      o.command = Command::kCat;
      i = 2;
    }
    if (first == "index") {
      o.command = Command::kIndex;
      i = 2;
    }
  }
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      o.command = Command::kHelp;
      return o;
    }
    if (a == "--rebuild-index") {
      o.rebuild_index = true;
      continue;
    }
    if (a == "--version" || a == "-V") {
      o.command = Command::kVersion;
      return o;
    }
    if (a == "-f") {
      o.foreground = true;
      continue;
    }
    if (a == "-l" && o.command == Command::kLs) {
      o.long_listing = true;
      continue;
    }
    if (a == "-s") {
      o.single_threaded = true;
      continue;
    }
    if (a == "-d" || a == "--debug") {
      o.debug = true;
      o.foreground = true;
      continue;
    }
    if (a == "-o") {
      if (i + 1 >= argc) return InvalidArgumentError("-o needs an argument");
      RETURN_IF_ERROR(ApplyOptionList(argv[++i], &o));
      continue;
    }
    if (a.rfind("-o", 0) == 0 && a.size() > 2) {
      RETURN_IF_ERROR(ApplyOptionList(a.substr(2), &o));
      continue;
    }
    if (a.size() > 1 && a[0] == '-') return InvalidArgumentError("unknown option '" + a + "'");
    positional.push_back(a);
  }
  switch (o.command) {
    case Command::kMount:
      if (positional.size() != 2) return InvalidArgumentError("expected SOURCE MOUNTPOINT");
      o.mountpoint = positional[1];
      break;
    case Command::kLs:
      if (positional.empty() || positional.size() > 2)
        return InvalidArgumentError("expected SOURCE [VPATH]");
      if (positional.size() == 2) o.vpath = positional[1];
      break;
    case Command::kCat:
      if (positional.size() != 2) return InvalidArgumentError("expected SOURCE VPATH");
      o.vpath = positional[1];
      break;
    case Command::kIndex:
      if (positional.size() != 1) return InvalidArgumentError("expected SOURCE");
      break;
    default:
      break;
  }
  o.source = positional[0];
  if (o.index_dir.empty()) o.index_dir = DefaultIndexDir();
  // Without default_permissions the kernel leaves permission checks to the daemon, which does
  // none: under allow_other every local user would read every store of the mounting user.
  auto has = [&](const char* f) {
    return std::find(o.fuse_options.begin(), o.fuse_options.end(), f) != o.fuse_options.end();
  };
  if (has("allow_other") && !has("default_permissions") && !o.no_default_permissions) {
    o.fuse_options.push_back("default_permissions");
  }
  if (o.no_default_permissions && has("default_permissions")) {
    return InvalidArgumentError("no_default_permissions contradicts default_permissions");
  }
  return o;
}

std::string UsageText() {
  return R"(usage: omicsfs [options] SOURCE MOUNTPOINT   mount SOURCE read-only at MOUNTPOINT
       omicsfs ls [-l] [options] SOURCE [VPATH]  list the virtual tree without mounting
       omicsfs cat [options] SOURCE VPATH    write one virtual file to stdout
       omicsfs index [options] SOURCE        size every view and build its indexes into
                                             index_dir now, so a later mount answers at once
       fusermount3 -u MOUNTPOINT             unmount

SOURCE is a directory (mirrored: every store in it becomes a folder of views, everything else
is passed through read-only) or a single store. Stores, in the order they are recognised:
)" + vfs::StoresHelp() +
         R"(A store that cannot be read shows a folder holding ERROR.txt with the reason.

SOURCE may also be remote:
  s3://BUCKET/PREFIX            every store under PREFIX, mirrored like a directory
  https://HOST/PATH, http://    one store: Zarr through its consolidated metadata (.zmetadata,
                                or consolidated_metadata in zarr.json), BPCells through its
                                fixed array names, datg as .../NAME.datg beside its companions,
                                HDF5 as .../NAME.h5 (or .hdf5)
  Remote HDF5 files (named .h5, .hdf5, .he5, .hdf, .h5ad, .loom) are read through the block
  cache and vetted by omicsfs-h5vet over the same URL, as local ones are.
  S3 credentials come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, else
  the AWS_PROFILE (default "default") of ~/.aws/credentials; never from the command line.

options:
  -f                   stay in the foreground (log to stderr)
  -s                   single-threaded
  -d                   debug log (implies -f)
  -o OPT[,OPT...]      mount options:
     cache_size=SIZE   decode cache budget, e.g. 512M, 2G (default 1G, at least 1M)
     index_dir=DIR     where size/offset indexes persist (default $XDG_CACHE_HOME/omicsfs,
                       else ~/.cache/omicsfs); omicsfs creates at most its last two levels
     lists=DIR         the lists slices name: samples=@NAME reads DIR/NAME.txt (one ID a
                       line), regions=@NAME reads DIR/NAME.bed; read when a slice is made,
                       again after the file changes
     log_file=PATH     where the daemon logs; default with -f: stderr; detached:
                       $XDG_STATE_HOME/omicsfs/MOUNTPOINT.log (else ~/.local/state/omicsfs/);
                       the last problems are also in MOUNTPOINT/.omicsfs/errors, and cache
                       and index figures in MOUNTPOINT/.omicsfs/status
     threads=N         threads that decode: sizing and index passes, read-ahead,
                       and the FUSE workers' maximum (default: one per core;
                       FUSE workers up to 16)
     rescan=SECONDS    how often SOURCE is checked for changed, new and removed stores
                       (default 5; stretched to 20x the time a check takes; 0 = never)
     follow_symlinks   show a symlink as its target (a store if it is one), inside or
                       outside SOURCE; loops are shown as the links they are
     progress=SECONDS  how often a long sizing or index pass logs its progress (default 10)
     h5vet=SECONDS     before the daemon parses an HDF5 file, a helper process parses it
                       first (libhdf5 is not safe on damaged files); a file the helper refuses
                       (crash, damage, more than SECONDS) shows ERROR.txt with its reason
                       (default 60; 0 = parse HDF5 in the daemon unvetted)
     h5vet_helper=PATH the helper (default: omicsfs-h5vet beside omicsfs)
     s3_endpoint=URL   an S3-compatible service instead of AWS (path-style requests)
     s3_region=R       the region requests are signed for (default us-east-1)
     s3_anonymous      unsigned requests (public buckets)
     s3_parts=SIZE     from a distant server (first byte in 2 ms or more), a Zarr chunk the
                       listing says is SIZE or larger is read by the blosc blocks a short read
                       needs (a region query), not whole (default 4M; 0 = whole; a near
                       server's chunks are always read so)
     ca_file=PATH      trust this PEM certificate for https (e.g. a self-signed server)
     http_timeout=SECONDS  connect timeout, and how long a transfer may stall (default 20)
     http_retries=N    retries, with backoff, after 5xx, 429, timeouts, cut transfers (default 4)
     http_parallel=N   requests one reader keeps in flight for a store's objects once the
                       server's first byte averages 2 ms or more (default 8; 1 = one at a time)
     direct_io         bypass the page cache
     rebuild_index     ignore persisted size indexes and write them anew
     index_max_age=DAYS  remove index files unused for DAYS at mount (default 30; 0 = never)
     allow_other       let other users read the mount; implies default_permissions: the
                       kernel enforces the modes shown, which are those of the sources
                       (a view is readable by whom can read every file of its store)
     no_default_permissions  with allow_other, check no permissions: every user reads
                       everything the mounting user can (use only on single-user hosts)
     default_permissions, allow_root, ...   passed to FUSE
  -h, --help           this text
  -V, --version        version

exit codes: 0 ok, 1 usage, 2 SOURCE unusable, 3 mount failed, 4 a file could not be read (cat)
)";
}

}  // namespace omicsfs::mount
