#include "cache/cache_pool.h"

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <deque>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "util/huge_arena.h"

namespace omicsfs::cache {

namespace {
uint64_t ProbationBudget(uint64_t budget, CachePolicy policy) {
  switch (policy) {
    case CachePolicy::kLru:
      return budget;
    case CachePolicy::kS3Fifo:
      return budget / 10;
    case CachePolicy::kTwoQ:
      break;
  }
  return budget / 8;
}

uint64_t NextInstance() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

CachePool::CachePool(uint64_t budget_bytes, double max_entry_fraction, CachePolicy policy)
    : budget_(budget_bytes),
      max_entry_(static_cast<uint64_t>(static_cast<double>(budget_bytes) * max_entry_fraction)),
      policy_(policy),
      probation_budget_(ProbationBudget(budget_bytes, policy)),
      instance_(NextInstance()) {}

namespace {
std::atomic<CachePool*> g_arena_pool{nullptr};
uint64_t ShedForArena(uint64_t bytes) {
  CachePool* pool = g_arena_pool.load(std::memory_order_acquire);
  return pool != nullptr ? pool->Shed(bytes) : 0;
}
}  // namespace

CachePool::~CachePool() {
  CachePool* self = this;
  if (g_arena_pool.compare_exchange_strong(self, nullptr)) arena::SetReclaimer(nullptr);
}

void CachePool::ReclaimForArena() {
  g_arena_pool.store(this, std::memory_order_release);
  arena::SetReclaimer(&ShedForArena);
}

uint64_t CachePool::Shed(uint64_t bytes) {
  std::vector<Object> dropped;  // destroyed after the lock is released
  uint64_t freed = 0;
  {
    std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
    if (!lock.owns_lock()) return 0;
    for (std::list<CacheKey>* list : {&probation_list_, &ahead_list_, &protected_list_}) {
      for (auto pos = list->end(); pos != list->begin() && freed < bytes;) {
        --pos;
        auto it = entries_.find(*pos);
        if (it->second.value.value.use_count() > 1) continue;  // a reader holds it: frees nothing
        freed += it->second.value.bytes;
        const CacheKey key = *pos;
        ++pos;  // DropLocked erases the node; `pos` stays valid one past it
        dropped.push_back(DropLocked(entries_.find(key), /*erase=*/false));
      }
    }
  }
  return freed;
}

uint64_t CachePool::NewOwnerId() {
  std::lock_guard<std::mutex> lock(mu_);
  return next_owner_++;
}

CacheStats CachePool::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  CacheStats s = stats_;
  s.probation = probation_;
  s.protected_ = protected_;
  s.ghost_entries = ghosts_.size();
  s.ahead_bytes = ahead_bytes_;
  return s;
}

bool CachePool::Contains(const CacheKey& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.count(key) != 0;
}

void CachePool::LinkLocked(Entry* e, const CacheKey& key, Segment to) {
  e->segment = to;
  ListOf(to).push_front(key);
  e->pos = ListOf(to).begin();
  SegmentOf(to).bytes += e->value.bytes;
  ++SegmentOf(to).entries;
  if (to == Segment::kAhead) ahead_bytes_ += e->value.bytes;
}

void CachePool::UnlinkLocked(Entry* e) {
  ListOf(e->segment).erase(e->pos);
  SegmentOf(e->segment).bytes -= e->value.bytes;
  --SegmentOf(e->segment).entries;
  if (e->segment == Segment::kAhead) ahead_bytes_ -= e->value.bytes;
}

void CachePool::ForgetGhostLocked(std::unordered_map<CacheKey, Ghost, CacheKeyHash>::iterator g) {
  ghost_bytes_ -= g->second.bytes;
  ghost_list_.erase(g->second.pos);
  ghosts_.erase(g);
}

Object CachePool::DropLocked(std::unordered_map<CacheKey, Entry, CacheKeyHash>::iterator it,
                             bool erase) {
  Entry& e = it->second;
  UnlinkLocked(&e);
  stats_.bytes -= e.value.bytes;
  --stats_.entries;
  if (!erase) {
    ++SegmentOf(e.segment).evictions;
    ++stats_.evictions;
    evicted_since_trim_ += e.value.bytes;
    // Read once and gone: remembered, so that a second read (after this one's correlated
    // reads, which hit while it was in probation) admits it to the protected segment.
    if (e.segment == Segment::kProbation && e.read && policy_ != CachePolicy::kLru)
      RememberLocked(it->first, e.value.bytes);
  }
  Object value = std::move(e.value.value);
  entries_.erase(it);
  return value;
}

void CachePool::RememberLocked(const CacheKey& key, uint64_t bytes) {
  if (auto g = ghosts_.find(key); g != ghosts_.end()) ForgetGhostLocked(g);
  ghost_list_.push_front(key);
  ghosts_.emplace(key, Ghost{bytes, ghost_list_.begin()});
  ghost_bytes_ += bytes;
  while (ghost_bytes_ > budget_ && !ghost_list_.empty())
    ForgetGhostLocked(ghosts_.find(ghost_list_.back()));
}

void CachePool::MoveLocked(Entry* e, const CacheKey& key, Segment to) {
  UnlinkLocked(e);
  LinkLocked(e, key, to);
  if (to == Segment::kProbation) probation_clock_ += e->value.bytes;
}

// Probation's read and seeded entries first hold at most its share (but always its newest
// entry: one larger than the share still reaches its reader's next read), and read-ahead not yet
// read at most half the budget; then the budget is kept by dropping the least recently used
// protected entries, then probation's oldest, then read-ahead's. Entries no reader holds are
// freed here, under the lock, as before (an arena free is short).
void CachePool::EvictLocked() {
  while (probation_.bytes - ahead_bytes_ > probation_budget_ && probation_list_.size() > 1) {
    auto it = entries_.find(probation_list_.back());
    if (policy_ == CachePolicy::kS3Fifo && it->second.again) {  // read again while in probation
      it->second.again = false;
      MoveLocked(&it->second, it->first, Segment::kProtected);
      ++stats_.promotions;
      continue;
    }
    (void)DropLocked(it, /*erase=*/false);
  }
  while (ahead_bytes_ > budget_ / 2 && ahead_list_.size() > 1) {
    (void)DropLocked(entries_.find(ahead_list_.back()), /*erase=*/false);
  }
  while (stats_.bytes > budget_) {
    std::list<CacheKey>& from = !protected_list_.empty()   ? protected_list_
                                : !probation_list_.empty() ? probation_list_
                                                           : ahead_list_;
    if (from.empty()) break;
    (void)DropLocked(entries_.find(from.back()), /*erase=*/false);
  }
}

void CachePool::InsertLocked(const CacheKey& key, Sized value, bool read, bool protect,
                             bool ahead) {
  if (entries_.count(key) != 0) return;
  if (value.bytes > max_entry_) {
    ++stats_.uncached;
    return;
  }
  if (policy_ == CachePolicy::kLru) protect = true;
  if (protect) {
    if (auto g = ghosts_.find(key); g != ghosts_.end()) ForgetGhostLocked(g);
  }
  const Segment segment = protect          ? Segment::kProtected
                          : read || !ahead ? Segment::kProbation
                                           : Segment::kAhead;
  if (segment != Segment::kAhead) probation_clock_ += value.bytes;
  stats_.bytes += value.bytes;
  ++stats_.entries;
  Entry& e = entries_.emplace(key, Entry{}).first->second;
  e.read_at = probation_clock_;
  e.value = std::move(value);
  e.read = read;
  LinkLocked(&e, key, segment);
  EvictLocked();
}

void CachePool::Insert(const CacheKey& key, Buffer value, bool ahead) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t bytes = arena::Footprint(value->data(), value->size());
    InsertLocked(key, Sized{std::move(value), bytes}, /*read=*/false, /*protect=*/false, ahead);
  }
  MaybeReleaseMemory();
}

// Evicted buffers go back to malloc, whose per-thread arenas keep the pages and fragment. After
// every 1/16 of the budget evicted, the process's resident size is checked; only when it passes
// the budget plus kResidentSlack are free pages handed back to the system (outside the lock).
// Trimming unconditionally (as before) made every reused page fault in again: ~1/3 of the CPU
// time of a VCF `cat` went to page faults.
void CachePool::MaybeReleaseMemory() {
  const uint64_t threshold = std::max<uint64_t>(budget_ / 16, 8 << 20);
  uint64_t evicted = evicted_since_trim_.load(std::memory_order_relaxed);
  if (evicted < threshold) return;
  if (!evicted_since_trim_.compare_exchange_strong(evicted, 0)) return;  // another thread checks
  // The huge-page arena (util/huge_arena.h) is resident once carved and never given back: it is
  // what the budget buys, not something a trim could return. Trimming malloc because the arena
  // made RSS pass budget + slack released malloc's free pages for nothing and made every small
  // allocation fault in again (VCF `cat`: 28 850 faults, ~37 000 per GB served).
  const uint64_t carved = arena::GetStats().carved;
  if (ResidentBytes() > std::max(budget_, carved) + kResidentSlack) ::malloc_trim(0);
}

uint64_t CachePool::ResidentBytes() {
  static const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  char buf[128];
  const ssize_t n = fd >= 0 ? ::pread(fd, buf, sizeof buf - 1, 0) : -1;
  if (n <= 0) return UINT64_MAX;  // unknown: trim
  buf[n] = '\0';
  unsigned long long size = 0, resident = 0;
  if (std::sscanf(buf, "%llu %llu", &size, &resident) != 2) return UINT64_MAX;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

void CachePool::EraseOwner(uint64_t owner) {
  std::vector<Object> dropped;  // destroyed after the lock is released
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    auto next = std::next(it);
    if (it->first.owner == owner) dropped.push_back(DropLocked(it, /*erase=*/true));
    it = next;
  }
  for (auto it = ghost_list_.begin(); it != ghost_list_.end();) {
    auto next = std::next(it);
    if (it->owner == owner) ForgetGhostLocked(ghosts_.find(*it));
    it = next;
  }
}

CachePool::ComputeObject CachePool::FromString(const Compute& compute) {
  return [&compute]() -> Result<Sized> {
    ASSIGN_OR_RETURN(std::string s, compute());
    auto buffer = std::make_shared<const std::string>(std::move(s));
    const uint64_t bytes = arena::Footprint(buffer->data(), buffer->size());
    return Sized{std::move(buffer), bytes};
  };
}

Result<Buffer> CachePool::GetOrCompute(const CacheKey& key, const Compute& compute) {
  ASSIGN_OR_RETURN(Object o, GetOrComputeObject(key, FromString(compute)));
  return std::static_pointer_cast<const std::string>(o);
}

// Requires mu_. Registers a computation of `key` (a miss); `pass`: a NotReads scope's.
void CachePool::StartLocked(const CacheKey& key, bool read, std::promise<Result<Sized>>* promise,
                            bool pass) {
  Pending p;
  p.flight = promise->get_future().share();
  p.read = read;
  p.ahead = !pass;  // a pass's goes to probation unread, whatever ghost its key left
  p.protect = policy_ == CachePolicy::kLru || (!pass && ghosts_.count(key) != 0);
  if (policy_ != CachePolicy::kLru && p.protect) ++stats_.ghost_hits;
  ++stats_.misses;
  ++(p.protect ? protected_ : probation_).misses;
  if (key.kind == CacheKind::kSourceBlock) ++stats_.source_blocks;
  if (key.kind == CacheKind::kSourcePart) ++stats_.source_parts;
  in_flight_.emplace(key, std::move(p));
}

namespace {
thread_local int t_not_reads = 0;  // NotReads scopes alive on this thread

// What a pass (a NotReads scope) got last, held by its thread until the scope ends (oldest
// first when the pins are full). A pass renders several chunks from one set of decoded blocks
// (a VCF variants-chunk's arrays: ~55 MB for 1 000 variants × 5 000 samples); those go to
// probation, an eighth of the cache (32 MB of 256M), so without the pins each text chunk over
// the set decoded all of it again (the 20 000 × 5 000 bench cohort's first listing: minutes).
// Pinned values may outlive their entries: all threads' pins together stay within the pool's
// pin budget (the limit is process-wide: one daemon, one pool).
struct PinKey {
  uint64_t pool;  // the pool's instance: a later pool at the same address is another
  CacheKey key;
  bool operator==(const PinKey&) const = default;
};
struct PinKeyHash {
  size_t operator()(const PinKey& k) const {
    return CacheKeyHash()(k.key) ^ static_cast<size_t>(k.pool * 0x9E3779B97F4A7C15ull);
  }
};
// Found by key (a pass of small blocks pins thousands: no scan per get), dropped oldest first.
thread_local std::unordered_map<PinKey, Object, PinKeyHash> t_pins;
thread_local std::deque<std::pair<PinKey, uint64_t>> t_pin_order;  // key, bytes
thread_local uint64_t t_pinned_bytes = 0;
std::atomic<uint64_t> g_pinned_bytes{0};

// A HandOff's: the handing thread's pins (read by its workers: that thread changes them only
// once the hand-off is over) and what its workers got, pinned by it then.
struct HandedPin {
  PinKey key;
  Object value;
  uint64_t bytes, limit;
};
struct PinSinkState {
  const std::unordered_map<PinKey, Object, PinKeyHash>* handing_pins = nullptr;
  std::mutex mu;
  std::vector<HandedPin> got;
};
thread_local PinSinkState* t_pin_sink = nullptr;  // set by a Carry within a pass

const Object* FindPin(uint64_t pool, const CacheKey& key) {
  auto it = t_pins.find(PinKey{pool, key});
  if (it != t_pins.end()) return &it->second;
  if (t_pin_sink != nullptr) {
    auto h = t_pin_sink->handing_pins->find(PinKey{pool, key});
    if (h != t_pin_sink->handing_pins->end()) return &h->second;
  }
  return nullptr;
}

void DropOldestPin() {
  const auto& [key, bytes] = t_pin_order.front();
  g_pinned_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  t_pinned_bytes -= bytes;
  t_pins.erase(key);
  t_pin_order.pop_front();
}

// `limit`: all threads' pins; a thread's own stay within half of it (two pass threads each hold
// their block set: measured, one thread holding the whole limit left the other thrashing).
void AddPin(uint64_t pool, const CacheKey& key, Object value, uint64_t bytes, uint64_t limit) {
  if (bytes > limit / 2 || FindPin(pool, key) != nullptr) return;  // (pinned by a nested get)
  if (t_pin_sink != nullptr) {  // a worker's, within a pass: the handing thread pins it
    std::lock_guard<std::mutex> lock(t_pin_sink->mu);
    t_pin_sink->got.push_back(HandedPin{PinKey{pool, key}, std::move(value), bytes, limit});
    return;
  }
  while (t_pinned_bytes + bytes > limit / 2) DropOldestPin();
  uint64_t cur = g_pinned_bytes.load(std::memory_order_relaxed);
  do {
    while (cur + bytes > limit && !t_pin_order.empty()) {  // this thread's oldest make room
      DropOldestPin();
      cur = g_pinned_bytes.load(std::memory_order_relaxed);
    }
    if (cur + bytes > limit) return;  // other passes hold the pins: not pinned
  } while (!g_pinned_bytes.compare_exchange_weak(cur, cur + bytes, std::memory_order_relaxed));
  t_pins.emplace(PinKey{pool, key}, std::move(value));
  t_pin_order.emplace_back(PinKey{pool, key}, bytes);
  t_pinned_bytes += bytes;
}
}  // namespace

CachePool::NotReads::NotReads() { ++t_not_reads; }
CachePool::NotReads::~NotReads() {
  if (--t_not_reads == 0) {
    while (!t_pin_order.empty()) DropOldestPin();
  }
}

bool CachePool::InNotReads() { return t_not_reads > 0; }

namespace {
thread_local int t_streaming = 0;  // Streaming scopes (on) alive on this thread
}  // namespace

CachePool::Streaming::Streaming(bool on) : on_(on) {
  if (on_) ++t_streaming;
}
CachePool::Streaming::~Streaming() {
  if (on_) --t_streaming;
}
bool CachePool::InStreaming() { return t_streaming > 0; }

CachePool::HandOff::HandOff() : not_reads_(InNotReads()), streaming_(InStreaming()) {
  if (not_reads_) {
    auto sink = std::make_shared<PinSinkState>();
    sink->handing_pins = &t_pins;
    sink_ = std::move(sink);
  }
}

CachePool::HandOff::~HandOff() {
  if (!sink_) return;
  // In the order got; a key two workers got (one computed, one waited) is pinned once.
  for (HandedPin& h : static_cast<PinSinkState*>(sink_.get())->got)
    AddPin(h.key.pool, h.key.key, std::move(h.value), h.bytes, h.limit);
}

CachePool::Carry::Carry(const HandOff& from) : from_(from), outer_sink_(t_pin_sink) {
  if (from_.not_reads_) {
    ++t_not_reads;
    t_pin_sink = static_cast<PinSinkState*>(from_.sink_.get());
  }
  if (from_.streaming_) ++t_streaming;
}

CachePool::Carry::~Carry() {
  if (from_.streaming_) --t_streaming;
  if (from_.not_reads_) {
    t_pin_sink = static_cast<PinSinkState*>(outer_sink_);
    if (--t_not_reads == 0) {
      while (!t_pin_order.empty()) DropOldestPin();
    }
  }
}

uint64_t CachePool::PinnedBytes() { return g_pinned_bytes.load(std::memory_order_relaxed); }

uint64_t CachePool::pin_budget() const { return policy_ == CachePolicy::kLru ? 0 : budget_ / 2; }

Result<Object> CachePool::GetOrComputeObject(const CacheKey& key, const ComputeObject& compute) {
  const bool reading = t_not_reads == 0;
  if (!reading && pin_budget() > 0) {
    if (const Object* pinned = FindPin(instance_, key)) return *pinned;
    ASSIGN_OR_RETURN(Sized got, GetOrComputeSized(key, compute, reading));
    AddPin(instance_, key, got.value, got.bytes, pin_budget());
    return std::move(got.value);
  }
  ASSIGN_OR_RETURN(Sized got, GetOrComputeSized(key, compute, reading));
  return std::move(got.value);
}

Result<Sized> CachePool::GetOrComputeSized(const CacheKey& key, const ComputeObject& compute,
                                           bool reading) {
  std::promise<Result<Sized>> promise;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      Entry& e = it->second;
      ++stats_.hits;
      ++SegmentOf(e.segment).hits;
      if (!reading) return e.value;
      if (e.segment == Segment::kProtected) {
        protected_list_.splice(protected_list_.begin(), protected_list_, e.pos);
      } else if (!e.read) {
        e.read = true;  // read-ahead or the sizing pass made it: this is its first read
        if (e.segment == Segment::kAhead) {  // now in probation's share
          MoveLocked(&e, key, Segment::kProbation);
          e.read_at = probation_clock_;
          Sized value = e.value;
          EvictLocked();  // `e` itself is probation's newest: it stays
          return value;
        }
        e.read_at = probation_clock_;
      } else if (policy_ == CachePolicy::kS3Fifo) {
        e.again = true;  // promoted when it leaves probation
      } else if (probation_clock_ - e.read_at >= probation_budget_ / 2) {
        MoveLocked(&e, key, Segment::kProtected);  // a second read, not the first one's sequel
        ++stats_.promotions;
      } else {
        // A sequel: the window restarts, so a run of reads close together (a chunk read in
        // several requests, a decoded chunk used by each text chunk over it) is one read.
        e.read_at = probation_clock_;
      }
      return e.value;
    }
    if (auto it = in_flight_.find(key); it != in_flight_.end()) {
      it->second.read = it->second.read || reading;
      Flight flight = it->second.flight;
      ++stats_.waits;
      lock.unlock();
      const Result<Sized>& r = flight.get();
      return r;
    }
    StartLocked(key, reading, &promise, /*pass=*/!reading);
  }
  return RunComputation(key, compute, &promise);
}

bool CachePool::ContainsOrPending(const CacheKey& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.count(key) != 0 || in_flight_.count(key) != 0;
}

void CachePool::Warm(const CacheKey& key, const Compute& compute) {
  std::promise<Result<Sized>> promise;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.count(key) != 0 || in_flight_.count(key) != 0) return;
    StartLocked(key, /*read=*/false, &promise);
  }
  (void)RunComputation(key, FromString(compute), &promise);
}

// Runs a computation registered in in_flight_ and publishes its result exactly once.
Result<Sized> CachePool::RunComputation(const CacheKey& key, const ComputeObject& compute,
                                        std::promise<Result<Sized>>* promise) {
  Result<Sized> result = InternalError("cache: computation did not finish");
  try {
    result = compute();
  } catch (const std::bad_alloc&) {
    result = Status(ErrorCode::kOutOfMemory, "cache: out of memory while decoding");
  } catch (const std::exception& e) {
    result = InternalError(std::string("cache: unexpected exception: ") + e.what());
  } catch (...) {
    result = InternalError("cache: unexpected exception");
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto p = in_flight_.find(key);
    const bool read = p->second.read, protect = p->second.protect, ahead = p->second.ahead;
    in_flight_.erase(p);
    if (result.ok()) InsertLocked(key, *result, read, protect, ahead);
  }
  promise->set_value(result);
  MaybeReleaseMemory();
  return result;
}

}  // namespace omicsfs::cache
