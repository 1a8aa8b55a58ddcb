// The FUSE ceiling of this machine: a read-only FUSE filesystem with one file, `data`, of SIZE
// bytes served from memory with no decoding, mounted the way omicsfs mounts (page cache,
// keep_cache, multi-threaded loop, 1 MiB blocks). `cat MNT/data` through it is the fastest any
// FUSE view can be read here.
//   memfs SIZE MOUNTPOINT      (foreground; unmount with fusermount3 -u)
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace {

uint64_t g_size = 0;
std::string g_block;  // 64 MiB of text, served repeatedly

void Stat(fuse_ino_t ino, struct stat* st) {
  std::memset(st, 0, sizeof(*st));
  st->st_ino = ino;
  st->st_mode = ino == 1 ? (S_IFDIR | 0555) : (S_IFREG | 0444);
  st->st_nlink = 1;
  st->st_size = ino == 1 ? 0 : static_cast<off_t>(g_size);
  st->st_blksize = 1 << 20;
}

void Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  if (parent != 1 || std::strcmp(name, "data") != 0) return (void)fuse_reply_err(req, ENOENT);
  fuse_entry_param e;
  std::memset(&e, 0, sizeof(e));
  e.ino = 2;
  e.attr_timeout = e.entry_timeout = 3600;
  Stat(2, &e.attr);
  fuse_reply_entry(req, &e);
}

void Getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  struct stat st;
  Stat(ino, &st);
  fuse_reply_attr(req, &st, 3600);
}

void Open(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  fi->keep_cache = 1;
  fuse_reply_open(req, fi);
}

void Read(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info*) {
  const uint64_t o = static_cast<uint64_t>(off);
  if (o >= g_size) return (void)fuse_reply_buf(req, nullptr, 0);
  size = static_cast<size_t>(std::min<uint64_t>(size, g_size - o));
  const size_t at = o % g_block.size();
  size = std::min(size, g_block.size() - at);
  fuse_reply_buf(req, g_block.data() + at, size);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  g_size = std::strtoull(argv[1], nullptr, 10);
  g_block.resize(size_t{64} << 20);
  for (size_t i = 0; i < g_block.size(); ++i)
    g_block[i] = (i % 80 == 79) ? '\n' : static_cast<char>('0' + i % 10);
  fuse_lowlevel_ops ops;
  std::memset(&ops, 0, sizeof(ops));
  ops.lookup = Lookup;
  ops.getattr = Getattr;
  ops.open = Open;
  ops.read = Read;
  char arg0[] = "memfs", o[] = "-o", opts[] = "ro,fsname=memfs,subtype=memfs";
  char* args[] = {arg0, o, opts};
  fuse_args fargs = FUSE_ARGS_INIT(3, args);
  fuse_session* se = fuse_session_new(&fargs, &ops, sizeof(ops), nullptr);
  if (se == nullptr || fuse_set_signal_handlers(se) != 0 || fuse_session_mount(se, argv[2]) != 0)
    return 1;
  fuse_loop_config* cfg = fuse_loop_cfg_create();
  fuse_loop_cfg_set_max_threads(cfg, 16);
  const int rc = fuse_session_loop_mt(se, cfg);
  fuse_loop_cfg_destroy(cfg);
  fuse_session_unmount(se);
  fuse_remove_signal_handlers(se);
  fuse_session_destroy(se);
  return rc < 0 ? 1 : 0;
}
