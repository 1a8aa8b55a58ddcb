// The daemon's operator new/delete: blocks of 64 KiB … 64 MiB (rendered chunks, decoded chunks,
// render and scratch buffers) come from the huge-page arena (util/huge_arena.h), everything else
// from malloc. Linked into the omicsfs executable only, never into sanitizer builds (which must
// see every allocation) or the tests.
#include <cstdlib>
#include <new>

#include "util/huge_arena.h"

namespace {

void* Get(std::size_t n) {
  if (n >= omicsfs::arena::kMinBlock) {
    if (void* p = omicsfs::arena::Allocate(n)) return p;
  }
  return std::malloc(n == 0 ? 1 : n);
}

void* GetOrThrow(std::size_t n) {
  if (void* p = Get(n)) return p;
  throw std::bad_alloc();
}

void* GetAligned(std::size_t n, std::align_val_t al) {
  const auto a = static_cast<std::size_t>(al);
  if (a <= 64) return Get(n);  // arena payloads are 64-byte aligned; malloc's 16
  void* p = nullptr;
  return ::posix_memalign(&p, a, n == 0 ? 1 : n) == 0 ? p : nullptr;
}

void Put(void* p) noexcept {
  if (p != nullptr && !omicsfs::arena::Release(p)) std::free(p);
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
void* operator new(std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept { return GetAligned(n, al); }
void* operator new[](std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept { return GetAligned(n, al); }

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
