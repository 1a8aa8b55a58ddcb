#include "mount/fuse_ops.h"

#include <sys/statvfs.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "mount/errno_map.h"
#include "util/log.h"

namespace omicsfs::mount {
namespace {

constexpr blksize_t kBlockSize = 1 << 20;

Daemon& D(fuse_req_t req) { return *static_cast<Daemon*>(fuse_req_userdata(req)); }

struct stat ToStat(const vfs::Attr& a) {
  struct stat st;
  std::memset(&st, 0, sizeof(st));
  st.st_ino = a.ino;
  st.st_mode = a.mode;
  st.st_nlink = a.nlink;
  st.st_size = static_cast<off_t>(a.size);
  st.st_blksize = kBlockSize;
  st.st_blocks = static_cast<blkcnt_t>((a.size + 511) / 512);
  st.st_mtim = a.mtime;
  st.st_ctim = a.mtime;
  st.st_atim = a.mtime;
  st.st_uid = a.uid;
  st.st_gid = a.gid;
  return st;
}

// Runs `body` (which returns an errno, 0 = it replied itself) and guarantees one reply.
template <typename F>
void Guard(fuse_req_t req, const char* op, F&& body) {
  int err;
  try {
    err = body();
  } catch (const std::bad_alloc&) {
    LogError(std::string(op) + ": out of memory");
    err = ENOMEM;
  } catch (const std::exception& e) {
    LogError(std::string(op) + ": unexpected exception: " + e.what());
    err = EIO;
  } catch (...) {
    LogError(std::string(op) + ": unexpected exception");
    err = EIO;
  }
  if (err != 0) fuse_reply_err(req, err);
}

void OpInit(void* userdata, struct fuse_conn_info* conn) {
  // Listing must never wait for a sizing pass: plain readdir, no attributes.
  conn->want &= ~FUSE_CAP_READDIRPLUS;
  conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
  if (conn->capable & FUSE_CAP_ASYNC_READ) conn->want |= FUSE_CAP_ASYNC_READ;
  if (conn->capable & FUSE_CAP_CACHE_SYMLINKS) conn->want |= FUSE_CAP_CACHE_SYMLINKS;
}

void OpLookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Guard(req, "lookup", [&]() -> int {
    const Daemon& d = D(req);
    // The kernel's reference is taken with the lookup: nothing frees (and reuses) the inode
    // while its attributes are read, which may run a sizing pass.
    auto ino = d.tree->LookupAndRemember(parent, name);
    if (!ino.ok()) return ToErrno(ino.status());
    auto attr = d.tree->GetAttr(*ino);
    if (!attr.ok()) {
      d.tree->Forget(*ino, 1);
      return ToErrno(attr.status());
    }
    fuse_entry_param e;
    std::memset(&e, 0, sizeof(e));
    e.ino = *ino;
    e.attr = ToStat(*attr);
    e.attr_timeout = attr->uncached ? 0 : d.timeout_s;
    e.entry_timeout = attr->uncached ? 0 : d.timeout_s;
    if (fuse_reply_entry(req, &e) != 0) d.tree->Forget(*ino, 1);  // interrupted: never seen
    return 0;
  });
}

void OpForget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  D(req).tree->Forget(ino, nlookup);
  fuse_reply_none(req);
}

void OpForgetMulti(fuse_req_t req, size_t count, struct fuse_forget_data* forgets) {
  for (size_t i = 0; i < count; ++i) D(req).tree->Forget(forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none(req);
}

void OpGetattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info*) {
  Guard(req, "getattr", [&]() -> int {
    const Daemon& d = D(req);
    auto attr = d.tree->GetAttr(ino);
    if (!attr.ok()) return ToErrno(attr.status());
    struct stat st = ToStat(*attr);
    fuse_reply_attr(req, &st, attr->uncached ? 0 : d.timeout_s);
    return 0;
  });
}

void OpReadlink(fuse_req_t req, fuse_ino_t ino) {
  Guard(req, "readlink", [&]() -> int {
    auto target = D(req).tree->ReadLink(ino);
    if (!target.ok()) return ToErrno(target.status());
    fuse_reply_readlink(req, target->c_str());
    return 0;
  });
}

void OpOpendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info* fi) {
  Guard(req, "opendir", [&]() -> int {
    auto kind = D(req).tree->Kind(ino);
    if (!kind.ok()) return ToErrno(kind.status());
    if (*kind != vfs::NodeKind::kDirectory) return ENOTDIR;
    // The kernel keeps a listing unless a file in it may still be withdrawn (a region index no
    // pass has built or refused yet): the listing after a pass's verdict then comes from the
    // tree at once, not from a cache the releaser has yet to clear (Tree::TakeWithdrawn).
    const bool settled = D(req).tree->ListingSettled(ino);
    fi->cache_readdir = settled;
    fi->keep_cache = settled;
    fuse_reply_open(req, fi);
    return 0;
  });
}

void OpReaddir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info*) {
  Guard(req, "readdir", [&]() -> int {
    auto entries = D(req).tree->ReadDir(ino);
    if (!entries.ok()) return ToErrno(entries.status());
    std::string buf(size, '\0');
    size_t used = 0;
    for (size_t i = static_cast<size_t>(off); i < entries->size(); ++i) {
      const vfs::DirEntry& e = (*entries)[i];
      struct stat st;
      std::memset(&st, 0, sizeof(st));
      st.st_ino = e.ino;
      st.st_mode = e.kind == vfs::NodeKind::kDirectory ? S_IFDIR
                   : e.kind == vfs::NodeKind::kSymlink ? S_IFLNK
                                                       : S_IFREG;
      size_t need = fuse_add_direntry(req, buf.data() + used, size - used, e.name.c_str(), &st,
                                      static_cast<off_t>(i + 1));
      if (need > size - used) break;
      used += need;
    }
    fuse_reply_buf(req, buf.data(), used);
    return 0;
  });
}

void OpReleasedir(fuse_req_t req, fuse_ino_t, struct fuse_file_info*) {
  Guard(req, "releasedir", [&]() -> int { return fuse_reply_err(req, 0), 0; });
}

// An open file reads the content its inode had when it was opened, even after a rescan.
void OpOpen(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info* fi) {
  Guard(req, "open", [&]() -> int {
    Daemon& d = D(req);
    auto content = d.tree->Open(ino, fi->flags);
    if (!content.ok()) return ToErrno(content.status());
    const bool uncached = (*content)->Uncached();
    const bool direct = (*content)->DirectIo();
    fi->fh = d.open_files.Add(std::move(content).value());
    // An inode's content never changes (a changed file gets a new inode at the next rescan);
    // content that differs from its inode's until then is read past the kernel's caches.
    fi->keep_cache = uncached ? 0 : 1;
    if (d.direct_io || uncached || direct) fi->direct_io = 1;
    if (fuse_reply_open(req, fi) != 0) d.open_files.Remove(fi->fh);  // no release will come
    return 0;
  });
}

void OpRead(fuse_req_t req, fuse_ino_t, size_t size, off_t off, struct fuse_file_info* fi) {
  Guard(req, "read", [&]() -> int {
    if (off < 0) return EINVAL;
    const vfs::FileContent* content = OpenFiles::Get(fi->fh);
    if (content == nullptr) return EBADF;
    auto pieces = content->Read(static_cast<uint64_t>(off), size);
    if (!pieces.ok()) return ReadErrno(pieces.status());
    std::vector<struct iovec> iov;
    iov.reserve(pieces->size());
    for (const auto& p : *pieces) {
      iov.push_back({const_cast<char*>(p.buffer->data()) + p.offset, p.length});
    }
    fuse_reply_iov(req, iov.data(), static_cast<int>(iov.size()));  // pieces pinned until here
    return 0;
  });
}

void OpRelease(fuse_req_t req, fuse_ino_t, struct fuse_file_info* fi) {
  D(req).open_files.Remove(fi->fh);
  fi->fh = 0;
  fuse_reply_err(req, 0);
}

void OpStatfs(fuse_req_t req, fuse_ino_t) {
  Guard(req, "statfs", [&]() -> int {
    struct statvfs s;
    std::memset(&s, 0, sizeof(s));
    s.f_bsize = kBlockSize;
    s.f_frsize = kBlockSize;
    s.f_files = D(req).tree->size();
    s.f_namemax = 255;
    s.f_flag = ST_RDONLY;
    fuse_reply_statfs(req, &s);
    return 0;
  });
}

void OpAccess(fuse_req_t req, fuse_ino_t ino, int mask) {
  Guard(req, "access", [&]() -> int {
    if (auto kind = D(req).tree->Kind(ino); !kind.ok()) return ToErrno(kind.status());
    return (mask & W_OK) ? EROFS : (fuse_reply_err(req, 0), 0);
  });
}

// Every modifying operation: read-only filesystem.
void OpSetattr(fuse_req_t req, fuse_ino_t, struct stat*, int, struct fuse_file_info*) {
  fuse_reply_err(req, EROFS);
}
void OpMknod(fuse_req_t req, fuse_ino_t, const char*, mode_t, dev_t) { fuse_reply_err(req, EROFS); }
void OpMkdir(fuse_req_t req, fuse_ino_t, const char*, mode_t) { fuse_reply_err(req, EROFS); }
void OpUnlink(fuse_req_t req, fuse_ino_t, const char*) { fuse_reply_err(req, EROFS); }
void OpSymlink(fuse_req_t req, const char*, fuse_ino_t, const char*) { fuse_reply_err(req, EROFS); }
void OpRename(fuse_req_t req, fuse_ino_t, const char*, fuse_ino_t, const char*, unsigned) {
  fuse_reply_err(req, EROFS);
}
void OpLink(fuse_req_t req, fuse_ino_t, fuse_ino_t, const char*) { fuse_reply_err(req, EROFS); }
void OpWrite(fuse_req_t req, fuse_ino_t, const char*, size_t, off_t, struct fuse_file_info*) {
  fuse_reply_err(req, EROFS);
}
void OpCreate(fuse_req_t req, fuse_ino_t, const char*, mode_t, struct fuse_file_info*) {
  fuse_reply_err(req, EROFS);
}
void OpSetxattr(fuse_req_t req, fuse_ino_t, const char*, const char*, size_t, int) {
  fuse_reply_err(req, EROFS);
}
void OpRemovexattr(fuse_req_t req, fuse_ino_t, const char*) { fuse_reply_err(req, EROFS); }

fuse_lowlevel_ops MakeOperations() {
  fuse_lowlevel_ops ops;
  std::memset(&ops, 0, sizeof(ops));
  ops.init = OpInit;
  ops.lookup = OpLookup;
  ops.forget = OpForget;
  ops.forget_multi = OpForgetMulti;
  ops.getattr = OpGetattr;
  ops.readlink = OpReadlink;
  ops.opendir = OpOpendir;
  ops.readdir = OpReaddir;
  ops.releasedir = OpReleasedir;
  ops.open = OpOpen;
  ops.read = OpRead;
  ops.release = OpRelease;
  ops.statfs = OpStatfs;
  ops.access = OpAccess;
  ops.setattr = OpSetattr;
  ops.mknod = OpMknod;
  ops.mkdir = OpMkdir;
  ops.unlink = OpUnlink;
  ops.rmdir = OpUnlink;
  ops.symlink = OpSymlink;
  ops.rename = OpRename;
  ops.link = OpLink;
  ops.write = OpWrite;
  ops.create = OpCreate;
  ops.setxattr = OpSetxattr;
  ops.removexattr = OpRemovexattr;
  return ops;
}

}  // namespace

uint64_t OpenFiles::Add(std::shared_ptr<const vfs::FileContent> content) {
  auto handle = std::make_unique<std::shared_ptr<const vfs::FileContent>>(std::move(content));
  const uint64_t fh = reinterpret_cast<uint64_t>(handle.get());
  std::lock_guard lock(mu_);
  handles_.emplace(fh, std::move(handle));
  return fh;
}

void OpenFiles::Remove(uint64_t fh) {
  std::lock_guard lock(mu_);
  handles_.erase(fh);
}

const fuse_lowlevel_ops& Operations() {
  static const fuse_lowlevel_ops ops = MakeOperations();
  return ops;
}

}  // namespace omicsfs::mount
