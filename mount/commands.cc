#include "mount/commands.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cache/cache_pool.h"
#include "io/h5_vet.h"
#include "io/remote/remote.h"
#include "mount/errno_map.h"
#include "mount/fuse_ops.h"
#include "mount/rescan.h"
#include "mount/setup.h"
#include "text/index_store.h"
#include "text/prefetcher.h"
#include "util/fs.h"
#include "util/huge_arena.h"
#include "util/log.h"
#include "vfs/discover.h"

namespace omicsfs::mount {
namespace {

// The HDF5 vetting helper: omicsfs-h5vet beside this executable unless named (h5vet_helper=).
io::H5Vetter VetterFor(const Options& o) {
  io::H5Vetter v;
  if (o.h5vet_s <= 0) return v;
  v.timeout_s = o.h5vet_s;
  v.helper = o.h5vet_helper;
  if (v.helper.empty()) {
    fs_error ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    v.helper = (ec ? fs::path("omicsfs-h5vet") : self.parent_path() / "omicsfs-h5vet").string();
  }
  return v;
}

vfs::DiscoverOptions DiscoverOptionsFor(const Options& o, const std::string& index_dir,
                                        cache::CachePool* pool, text::Prefetcher* prefetcher,
                                        const text::IndexStore* index) {
  vfs::DiscoverOptions d;
  d.pool = pool;
  d.h5vet = VetterFor(o);
  d.sizing.prefetcher = prefetcher;
  d.sizing.threads = o.threads;  // the sizing and index passes (0: one per core)
  d.sizing.index = index;
  d.sizing.progress_s = o.progress_s;
  d.index_dir = index_dir;
  d.lists_dir = o.lists_dir;
  d.follow_symlinks = o.follow_symlinks;
  return d;
}

Status CheckHelper(const vfs::DiscoverOptions& d) {
  if (d.h5vet.enabled() && ::access(d.h5vet.helper.c_str(), X_OK) != 0) {
    return NotFoundError(
        "the HDF5 vetting helper " + d.h5vet.helper +
        " is missing (install it beside omicsfs, name it with -o h5vet_helper=PATH, "
        "or parse HDF5 files unvetted with -o h5vet=0)");
  }
  return OkStatus();
}

// A remote SOURCE is opened once: its client, block cache and space serve every rescan.
Status OpenSource(const Options& o, cache::CachePool* pool, bool defer_threads,
                  vfs::DiscoverOptions* d, io::RemoteSource* remote) {
  if (!io::IsRemoteUrl(o.source)) return OkStatus();
  io::RemoteOptions r;
  r.s3_endpoint = o.s3_endpoint;
  r.s3_region = o.s3_region;
  r.s3_anonymous = o.s3_anonymous;
  if (o.s3_parts) r.s3_parts_min = *o.s3_parts;
  r.http.ca_file = o.ca_file;
  r.http.connect_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.http_timeout_s * 1000));
  r.http.low_speed_time = r.http.connect_timeout;
  r.http.retries = o.http_retries;
  r.http.parallel_requests = o.http_parallel;
  r.pool = pool;
  r.defer_threads = defer_threads;
  ASSIGN_OR_RETURN(*remote, io::OpenRemote(o.source, r, vfs::FixedKeys()));
  d->space = remote->space;
  d->space_key = remote->key;
  d->h5vet.remote_args = io::RemoteHelperArgs(r);  // the helper reads remote HDF5 files too
  return OkStatus();
}

Result<std::shared_ptr<vfs::Tree>> Build(const vfs::DiscoverOptions& d, const std::string& source) {
  RETURN_IF_ERROR(CheckHelper(d));
  return vfs::Discover(source, d);
}

// Whether `ino`, listed a moment ago, was withdrawn since (its content turned out not to exist:
// a region index tabix refuses, found by the pass that sized another file of its folder).
bool WithdrawnSince(const vfs::Tree& tree, vfs::Ino ino) {
  auto content = tree.Open(ino, O_RDONLY);
  return content.ok() && (*content)->Withdrawn().has_value();
}

// ls, cat and index report only what was asked: discovery's lines about other stores (and a
// failed read's own log line) are not printed; the command prints its one line.
void Quiet(const Options& o) {
  if (!o.debug) SetLogLevel(LogLevel::kSilent);
}

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "omicsfs: %s\n", message.c_str());
  return code;
}

std::string ModeString(const vfs::Attr& a) {
  std::string m = S_ISDIR(a.mode) ? "d" : S_ISLNK(a.mode) ? "l" : "-";
  const char* rwx = "rwxrwxrwx";
  for (int i = 0; i < 9; ++i) m += (a.mode & (0400 >> i)) ? rwx[i] : '-';
  return m;
}

// The huge-page arena (util/huge_arena.h) holds the cache (which counts its blocks' footprints)
// and 48 MiB for buffers being rendered and libraries' scratch (blosc, zstd: mount/memory.cc); a
// buffer that finds no room makes the cache drop its least recently used entries
// (CachePool::ReclaimForArena) before it goes to malloc. Measured on a VCF `cat` (256 MiB cache):
// with 16 MiB, 32-38 blocks a `cat` still went to malloc, as fresh pages (7 000 faults); with
// 48 MiB none did (1 050 faults), and peak RSS stayed ~306 MiB: what went to malloc before was
// resident too. The rest of the daemon (code, small objects, FUSE buffers, stacks) keeps RSS
// within cache_size + 64 MB.
// OMICSFS_ARENA=off (malloc only), =4k (no huge pages) or =noreclaim (buffers past the arena go
// to malloc at once) are for benchmarks.
std::string ArenaMode() {
  const char* mode = std::getenv("OMICSFS_ARENA");
  return mode ? mode : "";
}
void ConfigureArena(const Options& o) {
  const std::string m = ArenaMode();
  if (m == "off") return;
  arena::Configure(o.cache_size + (uint64_t{48} << 20), m != "4k");
}
// Buffers past the arena's room take the place of the cache's least recently used entries.
void ReclaimForArena(cache::CachePool* pool) {
  if (ArenaMode() != "noreclaim") pool->ReclaimForArena();
}

// The decode cache's policy (cache/cache_pool.h): 2Q, the daemon's; OMICSFS_CACHE_POLICY=lru
// (the single LRU of before issue 28) or =s3fifo are for benchmarks (bench/cache).
cache::CachePolicy CachePolicyFromEnv() {
  const char* p = std::getenv("OMICSFS_CACHE_POLICY");
  const std::string m = p ? p : "";
  if (m == "lru") return cache::CachePolicy::kLru;
  if (m == "s3fifo") return cache::CachePolicy::kS3Fifo;
  return cache::CachePolicy::kTwoQ;
}

// Read-ahead workers: threads=N, else one more than the cores, so rendering keeps every core
// busy while FUSE threads block in the kernel (measured: datg cat 309 → 482 MB/s on 2 cores).
unsigned Workers(const Options& o) {
  return o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency()) + 1;
}

// Raises the kernel readahead of the new mount (its backing device info) to 1 MiB so sequential
// readers ask in large requests; best effort (needs root). Reads /proc/self/mountinfo only: a
// stat of our own mountpoint would wait for the loop that is not running yet.
void RaiseReadahead(const std::string& mountpoint) {
  char resolved[PATH_MAX];
  if (::realpath(mountpoint.c_str(), resolved) == nullptr) return;
  std::ifstream info("/proc/self/mountinfo");
  std::string line, found;
  while (std::getline(info, line)) {
    std::istringstream ss(line);
    std::string id, parent, dev, root, mp;
    ss >> id >> parent >> dev >> root >> mp;
    if (mp == resolved) found = dev;  // the last match is the newest mount
  }
  if (found.empty()) return;
  std::ofstream ra("/sys/class/bdi/" + found + "/read_ahead_kb");
  ra << "1024\n";
  if (ra) LogDebug("readahead of " + mountpoint + " raised to 1 MiB");
}

bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

int RunLs(const Options& o) {
  Quiet(o);
  cache::CachePool pool(o.cache_size, 0.25, CachePolicyFromEnv());
  vfs::DiscoverOptions d = DiscoverOptionsFor(o, "", &pool, nullptr, nullptr);
  io::RemoteSource remote;
  if (Status st = OpenSource(o, &pool, false, &d, &remote); !st.ok())
    return Fail(kExitSource, st.message());
  auto tree = Build(d, o.source);
  if (!tree.ok()) return Fail(kExitSource, tree.status().message());
  auto ino = (*tree)->Resolve(o.vpath);
  if (!ino.ok()) return Fail(kExitUsage, ino.status().message());
  int rc = kExitOk;
  auto line = [&](vfs::Ino at, const std::string& name, bool dir) -> std::string {
    std::string prefix;
    if (o.long_listing) {
      auto attr = (*tree)->GetAttr(at);  // sizes a view: -l asks for its size
      if (!attr.ok()) {
        if (WithdrawnSince(**tree, at)) return "";  // no longer in the folder
        rc = Fail(kExitRead, name + ": " + attr.status().message());
        return "";
      }
      char size[32];
      std::snprintf(size, sizeof size, " %14llu ", static_cast<unsigned long long>(attr->size));
      prefix = ModeString(*attr) + size;
    }
    return prefix + name + (dir ? "/" : "") + "\n";
  };
  std::string out;
  auto entries = (*tree)->ReadDir(*ino);
  if (!entries.ok()) {
    out = line(*ino, o.vpath, false);
  } else {
    for (const auto& e : *entries) {
      if (e.name == "." || e.name == "..") continue;
      out += line(e.ino, e.name, e.kind == vfs::NodeKind::kDirectory);
    }
  }
  if (!WriteAll(STDOUT_FILENO, out.data(), out.size())) return kExitRead;
  return rc;
}

int RunCat(const Options& o) {
  Quiet(o);
  ConfigureArena(o);
  auto index_dir = PrepareIndexDir(o.index_dir, o.index_dir_given);
  if (!index_dir.ok()) return Fail(kExitUsage, index_dir.status().message());
  cache::CachePool pool(o.cache_size, 0.25, CachePolicyFromEnv());
  ReclaimForArena(&pool);
  text::Prefetcher prefetcher;  // declared after the pool: stops before it goes
  prefetcher.Start(Workers(o));
  text::IndexStore index(*index_dir, o.rebuild_index);
  vfs::DiscoverOptions d = DiscoverOptionsFor(o, *index_dir, &pool, &prefetcher, &index);
  io::RemoteSource remote;
  if (Status st = OpenSource(o, &pool, false, &d, &remote); !st.ok())
    return Fail(kExitSource, st.message());
  auto tree = Build(d, o.source);
  if (!tree.ok()) return Fail(kExitSource, tree.status().message());
  auto ino = (*tree)->Resolve(o.vpath);
  if (!ino.ok()) return Fail(kExitUsage, ino.status().message());
  auto content = (*tree)->Open(*ino, O_RDONLY);
  if (!content.ok()) return Fail(kExitUsage, o.vpath + ": " + content.status().message());
  constexpr uint64_t kStep = 1 << 20;
  for (uint64_t off = 0;; off += kStep) {
    auto pieces = (*content)->Read(off, kStep);
    if (!pieces.ok()) return Fail(kExitRead, o.vpath + ": " + pieces.status().message());
    uint64_t got = 0;
    for (const auto& p : *pieces) {
      if (!WriteAll(STDOUT_FILENO, p.buffer->data() + p.offset, p.length)) return kExitRead;
      got += p.length;
    }
    if (got < kStep) break;
  }
  return kExitOk;
}

// Every file of the tree, with its path.
void CollectFiles(const vfs::Tree& tree, vfs::Ino dir, const std::string& path,
                  std::vector<std::pair<std::string, vfs::Ino>>* out) {
  auto entries = tree.ReadDir(dir);
  if (!entries.ok()) return;
  for (const auto& e : *entries) {
    if (e.name == "." || e.name == "..") continue;
    const std::string p = path.empty() ? e.name : path + "/" + e.name;
    if (e.kind == vfs::NodeKind::kDirectory) CollectFiles(tree, e.ino, p, out);
    if (e.kind == vfs::NodeKind::kFile) out->emplace_back(p, e.ino);
  }
}

// `omicsfs index`: sizes every view (transposed copies and indexes included) into index_dir, two
// views at a time (each pass already uses every core), with a progress bar on a terminal and a
// line every `progress` seconds otherwise.
int RunIndex(const Options& o) {
  Quiet(o);
  auto index_dir = PrepareIndexDir(o.index_dir, o.index_dir_given);
  if (!index_dir.ok()) return Fail(kExitUsage, index_dir.status().message());
  if (index_dir->empty())
    return Fail(kExitUsage, "index: no index_dir to write to (name one with -o index_dir=DIR)");
  cache::CachePool pool(o.cache_size, 0.25, CachePolicyFromEnv());
  text::IndexStore index(*index_dir, o.rebuild_index);
  text::SizingOptions::Progress progress;
  vfs::DiscoverOptions d = DiscoverOptionsFor(o, *index_dir, &pool, nullptr, &index);
  d.sizing.progress = &progress;
  io::RemoteSource remote;
  if (Status st = OpenSource(o, &pool, false, &d, &remote); !st.ok())
    return Fail(kExitSource, st.message());
  auto tree = Build(d, o.source);
  if (!tree.ok()) return Fail(kExitSource, tree.status().message());
  std::vector<std::pair<std::string, vfs::Ino>> files, todo;
  CollectFiles(**tree, vfs::kRootIno, "", &files);
  for (const auto& f : files) {
    auto content = (*tree)->Open(f.second, O_RDONLY);
    if (content.ok() && !(*content)->SizeKnown()) todo.push_back(f);
  }
  const auto start = std::chrono::steady_clock::now();
  std::atomic<size_t> next{0}, done{0}, failed{0}, withdrawn{0};
  std::mutex out_mu;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < todo.size();) {
      auto attr = (*tree)->GetAttr(todo[i].second);
      std::lock_guard lock(out_mu);
      if (!attr.ok() && WithdrawnSince(**tree, todo[i].second)) {
        // Cannot exist (index_dir now says so: a mount will not list it); not a failure.
        ++withdrawn;
        std::fprintf(stderr, "\romicsfs: %s\n", attr.status().message().c_str());
      } else if (!attr.ok()) {
        ++failed;
        std::fprintf(stderr, "\romicsfs: %s: %s\n", todo[i].first.c_str(),
                     attr.status().message().c_str());
      }
      ++done;
    }
  };
  const bool tty = ::isatty(STDERR_FILENO);
  auto report = [&](bool last) {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const uint64_t total = progress.chunks_total.load(), sized = progress.chunks_done.load();
    std::lock_guard lock(out_mu);
    if (tty) {
      const size_t width = 30, filled = todo.empty() ? width : width * done.load() / todo.size();
      std::fprintf(stderr, "\r[%s%s] %zu/%zu views, %llu/%llu chunks, %.0f s%s",
                   std::string(filled, '#').c_str(), std::string(width - filled, ' ').c_str(),
                   done.load(), todo.size(), static_cast<unsigned long long>(sized),
                   static_cast<unsigned long long>(total), s, last ? "\n" : "");
    } else {
      std::fprintf(stderr, "omicsfs: index: %zu/%zu views, %llu/%llu chunks, %.0f s\n", done.load(),
                   todo.size(), static_cast<unsigned long long>(sized),
                   static_cast<unsigned long long>(total), s);
    }
  };
  std::vector<std::thread> workers;
  for (int t = 0; t < 2; ++t) workers.emplace_back(work);
  const auto interval = std::chrono::duration<double>(tty ? 0.2 : o.progress_s);
  auto last_report = std::chrono::steady_clock::now();
  while (done.load() < todo.size()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (std::chrono::steady_clock::now() - last_report >= interval) {
      report(false);
      last_report = std::chrono::steady_clock::now();
    }
  }
  for (auto& t : workers) t.join();
  report(true);
  std::fprintf(stderr,
               "omicsfs: index: %zu views sized (%zu already indexed), %zu that cannot exist, %zu "
               "failed, into %s\n",
               todo.size() - failed.load() - withdrawn.load(), files.size() - todo.size(),
               withdrawn.load(), failed.load(), index_dir->c_str());
  return failed.load() ? kExitRead : kExitOk;
}

namespace {

// The FUSE session from creation to destruction; teardown written once.
class Session {
 public:
  ~Session() {
    if (se_ == nullptr) return;
    if (mounted_) fuse_session_unmount(se_);
    if (handlers_) fuse_remove_signal_handlers(se_);
    fuse_session_destroy(se_);
  }
  Status Create(const Options& o, const char* argv0, Daemon* daemon) {
    std::string mount_opts = "ro,fsname=" + o.source + ",subtype=omicsfs";
    for (const auto& f : o.fuse_options) mount_opts += "," + f;
    std::vector<std::string> args = {argv0, "-o", mount_opts};
    if (o.debug) args.push_back("-d");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    struct fuse_args fargs = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
    se_ = fuse_session_new(&fargs, &Operations(), sizeof(fuse_lowlevel_ops), daemon);
    fuse_opt_free_args(&fargs);
    if (se_ == nullptr)
      return InvalidArgumentError("cannot create the FUSE session (bad mount options?)");
    if (fuse_set_signal_handlers(se_) != 0) return InternalError("cannot install signal handlers");
    handlers_ = true;
    if (fuse_session_mount(se_, o.mountpoint.c_str()) != 0)
      return IoError("cannot mount at " + o.mountpoint, EIO);
    mounted_ = true;
    return OkStatus();
  }
  fuse_session* get() const { return se_; }

 private:
  fuse_session* se_ = nullptr;
  bool handlers_ = false, mounted_ = false;
};

int Loop(const Options& o, fuse_session* se) {
  if (o.single_threaded) return fuse_session_loop(se);
  fuse_loop_config* cfg = fuse_loop_cfg_create();
  fuse_loop_cfg_set_clone_fd(cfg, 0);
  fuse_loop_cfg_set_max_threads(cfg, o.threads ? o.threads : 16);
  fuse_loop_cfg_set_idle_threads(cfg, o.threads ? o.threads : 4);
  const int rc = fuse_session_loop_mt(se, cfg);
  fuse_loop_cfg_destroy(cfg);
  return rc;
}

}  // namespace

int RunMount(const Options& o, const char* argv0) {
  ConfigureArena(o);
  if (!o.log_file.empty()) {  // named: every line goes there, from the first
    if (Status st = SetLogFile(o.log_file); !st.ok()) return Fail(kExitUsage, st.message());
  }
  if (Status st = CheckMountpoint(o.mountpoint, o.source); !st.ok())
    return Fail(kExitMount, st.message());
  auto index_dir = PrepareIndexDir(o.index_dir, o.index_dir_given);
  if (!index_dir.ok()) return Fail(kExitUsage, index_dir.status().message());
  fs_error ec;  // the daemon changes directory to / when it detaches: rescans need absolute paths
  const std::string source =
      io::IsRemoteUrl(o.source) ? o.source : fs::absolute(o.source, ec).lexically_normal().string();
  const std::string mountpoint = fs::absolute(o.mountpoint, ec).lexically_normal().string();
  std::string log_file = o.log_file;
  if (log_file.empty() && !o.foreground) {  // detaching: the default file gets every line
    log_file = DefaultLogFile(mountpoint);
    if (Status st = SetLogFile(log_file, /*also_stderr=*/true); !st.ok()) {
      LogWarning(st.message() + "; logging to syslog once detached");
      log_file.clear();
    }
  }

  text::SizingOptions::Progress sizing;  // outlives the tree's views, which count into it
  cache::CachePool pool(o.cache_size, 0.25, CachePolicyFromEnv());
  ReclaimForArena(&pool);
  text::Prefetcher prefetcher;  // declared after the pool: stops before it goes; started below
  text::IndexStore index(*index_dir, o.rebuild_index);
  index.CollectGarbage(std::chrono::hours(24) * o.index_max_age_days);
  vfs::Withdrawals withdrawals;  // outlives the tree's views, which report to it
  Daemon daemon;
  // A pass found a file that cannot exist: the releaser drops it and the kernel's entries of it.
  withdrawals.notify = [&daemon] {
    if (daemon.tree != nullptr) daemon.tree->NoteWithdrawn();
  };
  vfs::DiscoverOptions discover = DiscoverOptionsFor(o, *index_dir, &pool, &prefetcher, &index);
  io::RemoteSource remote;  // read-ahead threads start after fuse_daemonize's fork, below
  discover.sizing.progress = &sizing;
  discover.withdrawals = &withdrawals;
  discover.control_files = ControlFiles({source, mountpoint, *index_dir, log_file, &pool,
                                         &daemon.tree, &remote, &sizing, &withdrawals});
  if (Status st = OpenSource(o, &pool, /*defer_threads=*/true, &discover, &remote); !st.ok()) {
    return Fail(kExitSource, st.message());
  }
  auto tree = Build(discover, o.source);
  if (!tree.ok()) return Fail(kExitSource, tree.status().message());
  daemon.tree = *tree;
  daemon.pool = &pool;
  daemon.direct_io = o.direct_io;

  Session session;
  if (Status st = session.Create(o, argv0, &daemon); !st.ok()) {
    return Fail(st.code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitMount, st.message());
  }
  fuse_session* se = session.get();
  LogInfo("mounted " + o.source + " at " + o.mountpoint + " (" +
          std::to_string(daemon.tree->size()) + " nodes)");
  if (!o.foreground) {
    if (!log_file.empty()) LogInfo("logging to " + log_file);
    SetLogTee(false);
    if (log_file.empty()) SetLogToSyslog(true);
    if (fuse_daemonize(0) != 0) return kExitMount;
  }
  prefetcher.Start(Workers(o));  // after fuse_daemonize: threads do not survive its fork
  if (remote.cache != nullptr) remote.cache->Start();
  Rescanner rescanner(
      [&](const vfs::Tree* previous) {
        vfs::DiscoverOptions d = discover;
        d.previous = previous;
        return vfs::Discover(source, d);
      },
      daemon.tree.get(), se, o.rescan_s);
  rescanner.Start();
  Releaser releaser(daemon.tree.get(), se);
  releaser.Start();
  // The kernel sets the mount's readahead when it processes our INIT reply, so raise it a few
  // times during the first seconds (the last write sticks).
  std::thread([mp = o.mountpoint] {
    for (int ms : {100, 400, 1000, 2000}) {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      RaiseReadahead(mp);
    }
  }).detach();
  const int loop = Loop(o, se);
  rescanner.Stop();  // before the session goes: it sends notifications through it
  releaser.Stop();
  LogInfo("unmounted " + o.mountpoint);
  return loop < 0 ? kExitMount : kExitOk;
}

}  // namespace omicsfs::mount
