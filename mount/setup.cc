#include "mount/setup.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>

#include "util/fs.h"
#include "util/huge_arena.h"
#include "util/log.h"

namespace omicsfs::mount {
namespace {

// /proc/self/mountinfo escapes spaces, tabs, newlines and backslashes as \ooo.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      out += static_cast<char>(std::strtol(s.substr(i + 1, 3).c_str(), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The filesystem type of the mount at `path` ("" when `path` is not a mountpoint).
std::string MountTypeAt(const std::string& path) {
  std::ifstream info("/proc/self/mountinfo");
  std::string line, type;
  while (std::getline(info, line)) {
    std::istringstream ss(line);
    std::string id, parent, dev, root, mp, field;
    ss >> id >> parent >> dev >> root >> mp;
    if (Unescape(mp) != path) continue;
    while (ss >> field && field != "-") {
    }
    ss >> type;  // the last mount at a path is the one in effect
  }
  return type;
}

std::string RealPath(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) ? std::string(resolved) : std::string();
}

bool Inside(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         (dir == "/" || path[dir.size()] == '/'));
}

size_t CountEntries(const std::string& dir, uint64_t* bytes = nullptr) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return 0;
  size_t n = 0;
  while (struct dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    ++n;
    struct stat st;
    if (bytes != nullptr && ::stat((dir + "/" + name).c_str(), &st) == 0)
      *bytes += static_cast<uint64_t>(st.st_size);
  }
  ::closedir(d);
  return n;
}

}  // namespace

Status CheckMountpoint(const std::string& mountpoint, const std::string& source) {
  const Status dead =
      IoError("mountpoint " + mountpoint +
                  ": an earlier mount there died (Transport endpoint is not connected); "
                  "unmount it with `fusermount3 -u " +
                  mountpoint + "`, then mount again",
              ENOTCONN);
  struct stat st;
  if (::stat(mountpoint.c_str(), &st) != 0)
    return errno == ENOTCONN ? dead : IoError("mountpoint " + mountpoint, errno);
  if (!S_ISDIR(st.st_mode))
    return InvalidArgumentError("mountpoint " + mountpoint + " is not a directory");
  fs_error ec;
  std::string mp = RealPath(mountpoint);
  if (mp.empty()) mp = fs::absolute(mountpoint, ec).lexically_normal().string();
  const std::string src = RealPath(source);
  const std::string type = MountTypeAt(mp);
  // The kernel may answer stat from its cache for a dead FUSE mount; statfs always asks.
  struct statfs sfs;
  if (type.rfind("fuse", 0) == 0 && ::statfs(mountpoint.c_str(), &sfs) != 0 && errno == ENOTCONN)
    return dead;
  if (!src.empty()) {
    if (Inside(mp, src)) {
      return InvalidArgumentError("mountpoint " + mountpoint + " is inside SOURCE " + source +
                                  " (the mount would show itself)");
    }
    if (Inside(src, mp)) {
      return InvalidArgumentError("SOURCE " + source + " is inside mountpoint " + mountpoint +
                                  " (the mount would hide its own source)");
    }
  }
  if (type == "fuse.omicsfs") {
    return InvalidArgumentError("mountpoint " + mountpoint +
                                " is already an omicsfs mount; unmount it first (`fusermount3 -u " +
                                mountpoint + "`)");
  }
  if (const size_t n = CountEntries(mountpoint); n > 0) {
    LogWarning("mountpoint " + mountpoint + " is not empty: its " + std::to_string(n) +
               " entries are hidden while mounted");
  }
  return OkStatus();
}

Result<std::string> PrepareIndexDir(const std::string& dir, bool named) {
  if (dir.empty()) return dir;
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      return InvalidArgumentError("index_dir: " + dir + " is not a directory");
    if (::access(dir.c_str(), W_OK | X_OK) != 0) {
      LogWarning("index_dir " + dir +
                 " is not writable: indexes are read from it but new ones stay in memory");
    }
    return dir;
  }
  // Missing: find the nearest existing parent.
  std::vector<fs::path> missing{fs::path(dir).lexically_normal()};
  if (missing.back().filename().empty() || missing.back().filename() == ".")
    missing.back() = missing.back().parent_path();
  fs::path parent = missing.back().parent_path();
  while (!parent.empty() && parent != parent.root_path() && ::stat(parent.c_str(), &st) != 0) {
    missing.push_back(parent);
    parent = parent.parent_path();
  }
  // GCC 12 at -O3 warns that assigning "." may memcpy overlapping ranges of 2^63 bytes: a false
  // positive of its -Wrestrict through std::string (GCC bug 105651), silenced here only.
#pragma GCC diagnostic push
#ifndef __clang__  // a GCC warning; clang (the fuzz build) has none of that name
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
  if (parent.empty()) parent = ".";
#pragma GCC diagnostic pop
  std::string why;
  if (::stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    why = parent.string() + " is not a directory";
  } else if (parent == parent.root_path() && parent.is_absolute()) {
    why = "omicsfs does not create directories directly under /";
  } else if (missing.size() > 2) {
    why = "omicsfs creates at most its last two levels, and " + missing[1].parent_path().string() +
          " is missing too";
  } else if (::access(parent.c_str(), W_OK | X_OK) != 0) {
    why = parent.string() + " is not writable";
  }
  for (auto it = missing.rbegin(); why.empty() && it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0700) != 0 && errno != EEXIST)
      why = "mkdir " + it->string() + ": " + std::strerror(errno);
  }
  if (why.empty()) return dir;
  if (named) return InvalidArgumentError("index_dir: cannot create " + dir + ": " + why);
  LogWarning("index_dir " + dir + " cannot be created (" + why + "); indexes stay in memory");
  return std::string();
}

std::vector<std::pair<std::string, std::shared_ptr<const vfs::FileContent>>> ControlFiles(
    StatusSources s) {
  auto errors = std::make_shared<const vfs::GeneratedContent>([] {
    std::string out;
    for (const std::string& line : RecentProblems()) out += line + "\n";
    return out;
  });
  auto status = std::make_shared<const vfs::GeneratedContent>([s] {
    std::ostringstream out;
    out << "source: " << s.source << "\nmountpoint: " << s.mountpoint << "\npid: " << ::getpid()
        << "\nlog_file: " << (s.log_file.empty() ? "(stderr)" : s.log_file) << "\n";
    if (s.pool != nullptr) {
      const cache::CacheStats c = s.pool->Stats();
      out << "cache: " << c.bytes << " of " << s.pool->budget() << " bytes in " << c.entries
          << " entries; " << c.hits << " hits, " << c.misses << " misses, " << c.waits << " waits, "
          << c.evictions << " evictions, " << c.uncached << " too large to keep\n";
      // Per segment (docs/cache.md): probation takes new keys (FIFO, an eighth of the budget);
      // protected, keys read again after they left probation (LRU). Protected misses are those
      // re-reads; ghosts are the keys remembered for them.
      const char* policy = s.pool->policy() == cache::CachePolicy::kLru      ? "lru"
                           : s.pool->policy() == cache::CachePolicy::kS3Fifo ? "s3fifo"
                                                                             : "2q";
      out << "cache probation: " << c.probation.bytes - c.ahead_bytes << " of "
          << s.pool->probation_budget() << " bytes and " << c.ahead_bytes
          << " bytes read ahead, not read yet, in " << c.probation.entries << " entries; "
          << c.probation.hits << " hits, " << c.probation.misses << " misses, "
          << c.probation.evictions << " evictions\n"
          << "cache protected: " << c.protected_.bytes << " bytes in " << c.protected_.entries
          << " entries; " << c.protected_.hits << " hits, " << c.protected_.misses << " misses, "
          << c.protected_.evictions << " evictions; " << c.ghost_entries << " ghost keys, "
          << c.ghost_hits << " ghost hits, " << c.promotions << " promotions; policy " << policy
          << "\n"
          << "source blocks decoded: " << c.source_blocks << " whole, " << c.source_parts
          << " parts alone\n";
    }
    const arena::Stats a = arena::GetStats();
    out << "arena: " << (a.enabled ? (a.huge_pages ? "huge pages" : "4 KiB pages") : "off") << ", "
        << a.carved << " of " << a.limit << " bytes carved, " << a.free_bytes << " free; "
        << a.allocations << " blocks (" << a.reused << " reused, " << a.reclaims
        << " after the cache made room, " << a.without_reclaim << " for C libraries), "
        << a.fallbacks << " past the limit to malloc\n";
    if (s.sizing != nullptr) {
      out << "sizing: " << s.sizing->chunks_done.load() << " of " << s.sizing->chunks_total.load()
          << " chunks read by sizing passes\n";
    }
    std::ifstream stat("/proc/self/stat");
    std::string field;
    for (int i = 1; i <= 10 && stat >> field; ++i) {
    }
    out << "minor faults: " << field << "\n";
    if (s.remote != nullptr && s.remote->client != nullptr) {
      const io::http::HttpCounters h = s.remote->client->Counters();
      out << "remote: " << h.requests << " requests, " << h.bytes << " bytes fetched, " << h.retries
          << " retries, " << h.failures << " failed, " << h.connections
          << " connections opened; first byte " << s.remote->client->Latency().count() / 1000.0
          << " ms on average, " << s.remote->client->Parallelism()
          << " requests in flight per reader\n";
      if (s.remote->cache != nullptr) {
        const io::BlockCacheCounters b = s.remote->cache->Counters();
        out << "remote blocks: " << b.base_reads << " reads of " << b.base_bytes << " bytes ("
            << b.readahead_reads << " by read-ahead)\n";
      }
    }
    uint64_t bytes = 0;
    const size_t files = s.index_dir.empty() ? 0 : CountEntries(s.index_dir, &bytes);
    out << "index_dir: " << (s.index_dir.empty() ? "(none: indexes in memory)" : s.index_dir)
        << ", " << files << " files, " << bytes << " bytes\n";
    if (s.withdrawals != nullptr) {
      const auto withdrawn = s.withdrawals->List();
      out << "indexes not listed: " << withdrawn.size()
          << " (tabix refuses their records: they cannot exist)\n";
      for (const auto& [file, why] : withdrawn) out << "  " << file << ": " << why << "\n";
    }
    if (s.tree != nullptr) {
      const std::shared_ptr<vfs::Tree> tree = *s.tree;
      uint64_t views = 0, sized = 0, lazy = 0;
      std::function<void(vfs::Ino)> walk = [&](vfs::Ino dir) {
        lazy += tree->Pending(dir);
        auto entries = tree->ReadDir(dir, /*load=*/false);  // reading the status opens nothing
        if (!entries.ok()) return;
        for (const auto& e : *entries) {
          if (e.name == "." || e.name == "..") continue;
          if (e.kind == vfs::NodeKind::kDirectory) walk(e.ino);
          if (e.kind != vfs::NodeKind::kFile) continue;
          auto content = tree->Open(e.ino, 0);
          if (!content.ok()) continue;
          ++views;
          sized += (*content)->SizeKnown();
        }
      };
      walk(vfs::kRootIno);
      out << "files: " << views << ", sizes known: " << sized << ", nodes: " << tree->size()
          << "\n";
      out << "slice folders: " << tree->made_folders()
          << " (made on lookup, the least recently used forgotten)\n";
      if (lazy != 0) out << "folders not opened yet: " << lazy << "\n";
    }
    return out.str();
  });
  return {{"errors", errors}, {"status", status}};
}

}  // namespace omicsfs::mount
