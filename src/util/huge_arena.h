// A process-wide arena for large blocks (rendered chunks, decoded Zarr chunks, render and scratch
// buffers: 64 KiB … 64 MiB), backed by one dedicated anonymous mapping advised MADV_HUGEPAGE.
//
// Why: on VMs where a fresh 4 KiB page costs ~13.5 µs to fault in (free-page reporting,
// ballooning), a `cat` of a 397 MB view with a 256 MiB cache took ~68 000 minor faults in the
// daemon — the cache's memory faulted in page by page as it grew, and again after every trim.
// Here a block freed is kept on its size class's free list and handed to the next allocation of
// that class: the arena's memory is faulted in once, as the cache grows to its budget, in 2 MiB
// huge pages where the kernel allows it, and recycled from then on.
//
// Blocks (page multiples) are carved from the mapping with a bump pointer up to a limit (the
// cache budget plus a slack, set by the daemon); freed blocks are coalesced with free neighbours
// and served best-fit, the rest split off. Past the limit with no free extent large enough, and
// for sizes outside [kMinBlock, kMaxBlock], allocation falls back to malloc, so the arena never
// holds more than its limit. Thread-safe. The daemon routes operator new/delete through it
// (mount/memory.cc); sanitizer builds do not (they must see every block).
#pragma once

#include <cstddef>
#include <cstdint>

namespace omicsfs::arena {

inline constexpr size_t kMinBlock = size_t{64} << 10;  // smaller requests: malloc
inline constexpr size_t kMaxBlock = size_t{64} << 20;  // larger requests: malloc (mmap)

struct Stats {
  bool enabled = false;          // the mapping exists
  bool huge_pages = false;       // MADV_HUGEPAGE was accepted
  uint64_t limit = 0;            // bytes the arena may carve
  uint64_t carved = 0;           // bytes carved so far (touched at most once each)
  uint64_t free_bytes = 0;       // bytes on the free lists
  uint64_t allocations = 0;      // served by the arena
  uint64_t reused = 0;           // of those, from freed memory
  uint64_t fallbacks = 0;        // in the size range but past the limit: malloc
  uint64_t reclaims = 0;         // allocations served after the reclaimer freed memory
  uint64_t without_reclaim = 0;  // allocations asked with may_reclaim false (C libraries' scratch)
};

// Reserves the mapping (address space only, advised MADV_HUGEPAGE unless `huge_pages` is false)
// and sets the limit; 0 disables the arena. Called once, early; safe to call again to change the
// limit (never below what is carved).
void Configure(uint64_t limit_bytes, bool huge_pages = true);
// A block of at least `size` bytes (64-byte aligned), or nullptr when the arena does not serve
// this size (outside the classes, past the limit, disabled). `may_reclaim` false: never calls the
// reclaimer (C malloc from inside a library, which may hold its own locks: mount/memory.cc).
void* Allocate(size_t size, bool may_reclaim = true);
// Returns true when `p` is an arena block (then it is recycled); false for any other pointer.
bool Release(void* p);
// Whether `p` is a live arena block (a range check and its header's magic).
bool Owns(const void* p);
// Usable size of an arena block (its size rounded up to whole pages, less the header).
size_t BlockSize(const void* p);
// The memory a buffer of `size` bytes at `data` really holds: its arena block (with its header)
// when it is one, else `size`. Budgets count this.
uint64_t Footprint(const void* data, uint64_t size);
Stats GetStats();

// What the arena calls when a block does not fit (no free extent large enough, the limit
// reached): it should free about `bytes` of arena blocks it holds (the decode cache drops its
// least recently used entries) and return how many it freed, without waiting for any lock.
// The allocation is then tried once more before it goes to malloc: buffers being rendered take
// the cache's memory instead of fresh pages. Called without the arena's lock, never recursively
// on one thread. nullptr (the default) turns it off.
using Reclaimer = uint64_t (*)(uint64_t bytes);
void SetReclaimer(Reclaimer reclaimer);

}  // namespace omicsfs::arena
