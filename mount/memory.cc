// The daemon's allocators: blocks of 64 KiB … 64 MiB come from the huge-page arena
// (util/huge_arena.h), everything else from glibc's malloc. Linked into the omicsfs executable
// only, never into sanitizer builds (which must see every allocation) or the tests.
//
// Two entry points. C++ operator new/delete: rendered chunks, decoded chunks, render buffers.
// And C malloc/free/calloc/realloc/posix_memalign (glibc supports replacing them: "Replacing
// malloc" in its manual), which libraries call for their scratch: blosc takes three buffers of its
// block size (256 KiB in vcf2zarr's stores) and a zstd context for every chunk it decodes, and
// frees them after. From malloc those were fresh pages again and again (a VCF `cat`: ~70 % of the
// daemon's faults were in libzstd touching them). C allocations never ask the cache to make room
// (the library may hold its own locks): they take arena memory only where it is free.
#include <dlfcn.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "util/huge_arena.h"

// glibc's own allocator, under the names it exports for replacements to call.
extern "C" {
void* __libc_malloc(std::size_t);
void __libc_free(void*);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
}

namespace {

namespace arena = omicsfs::arena;

void* Get(std::size_t n) {
  if (n >= arena::kMinBlock) {
    if (void* p = arena::Allocate(n)) return p;
  }
  return __libc_malloc(n == 0 ? 1 : n);
}

void* GetOrThrow(std::size_t n) {
  if (void* p = Get(n)) return p;
  throw std::bad_alloc();
}

void* GetAligned(std::size_t n, std::align_val_t al) {
  const auto a = static_cast<std::size_t>(al);
  if (a <= 64) return Get(n);  // arena payloads are 64-byte aligned; malloc's 16
  return __libc_memalign(a, n == 0 ? 1 : n);
}

void Put(void* p) noexcept {
  if (p != nullptr && !arena::Release(p)) __libc_free(p);
}

// C allocations: the arena where it has room, without reclaiming; else glibc.
void* CGet(std::size_t n) {
  if (n >= arena::kMinBlock) {
    if (void* p = arena::Allocate(n, /*may_reclaim=*/false)) return p;
  }
  return __libc_malloc(n);
}

}  // namespace

void* operator new(std::size_t n) { return GetOrThrow(n); }
void* operator new[](std::size_t n) { return GetOrThrow(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return Get(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return Get(n); }
void* operator new(std::size_t n, std::align_val_t al) {
  if (void* p = GetAligned(n, al)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t al) { return operator new(n, al); }
void* operator new(std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  return GetAligned(n, al);
}
void* operator new[](std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  return GetAligned(n, al);
}

void operator delete(void* p) noexcept { Put(p); }
void operator delete[](void* p) noexcept { Put(p); }
void operator delete(void* p, std::size_t) noexcept { Put(p); }
void operator delete[](void* p, std::size_t) noexcept { Put(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { Put(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { Put(p); }
void operator delete(void* p, std::align_val_t) noexcept { Put(p); }
void operator delete[](void* p, std::align_val_t) noexcept { Put(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { Put(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { Put(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { Put(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { Put(p); }

extern "C" {

void* malloc(std::size_t n) { return CGet(n); }

void free(void* p) { Put(p); }

void* calloc(std::size_t count, std::size_t size) {
  std::size_t n;
  if (__builtin_mul_overflow(count, size, &n)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (n >= arena::kMinBlock) {
    if (void* p = arena::Allocate(n, /*may_reclaim=*/false))
      return std::memset(p, 0, n);  // recycled
  }
  return __libc_calloc(count, size);
}

// A glibc block stays with glibc (its size is known only to glibc); an arena block that must grow
// moves.
void* realloc(void* p, std::size_t n) {
  if (p == nullptr) return CGet(n);
  if (!arena::Owns(p)) return __libc_realloc(p, n);
  if (n == 0) {
    Put(p);
    return nullptr;
  }
  const std::size_t have = arena::BlockSize(p);
  if (n <= have) return p;
  void* q = CGet(n);
  if (q == nullptr) return nullptr;
  std::memcpy(q, p, have);
  Put(p);
  return q;
}

int posix_memalign(void** out, std::size_t alignment, std::size_t n) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment % sizeof(void*) != 0)
    return EINVAL;
  if (alignment <= 64 && n >= arena::kMinBlock) {  // arena payloads are 64-byte aligned
    if (void* p = arena::Allocate(n, /*may_reclaim=*/false)) {
      *out = p;
      return 0;
    }
  }
  void* p = __libc_memalign(alignment, n == 0 ? 1 : n);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

// Libraries that track their own sizes (SQLite, where built with it) ask this of every pointer.
// aligned_alloc, memalign and valloc stay glibc's: their blocks are glibc's, and free() above
// hands those back to glibc.
std::size_t malloc_usable_size(void* p) {
  if (p == nullptr) return 0;
  if (arena::Owns(p)) return arena::BlockSize(p);
  using Fn = std::size_t (*)(void*);
  static const Fn libc = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, "malloc_usable_size"));
  return libc != nullptr ? libc(p) : 0;
}

}  // extern "C"
