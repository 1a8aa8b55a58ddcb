// Text written through raw pointers into a per-thread scratch buffer that is never zero-filled,
// then appended to the chunk in one copy. (std::string::resize zero-fills every reservation, and
// renderers reserve for the longest possible numbers: measured, memset and the page faults of
// fresh over-reserved strings took ~25% of MTX rendering.)
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace omicsfs::text {

// Copies n bytes to p with fixed-size moves when n ≤ 32 (two overlapping ones; reads only
// [s, s+n)), so the short names of a column cost no library call. Returns p + n.
inline char* PutShort(char* p, const char* s, size_t n) {
  if (n >= 16) {
    if (n > 32) {
      std::memcpy(p, s, n);
    } else {
      std::memcpy(p, s, 16);
      std::memcpy(p + n - 16, s + n - 16, 16);
    }
  } else if (n >= 8) {
    std::memcpy(p, s, 8);
    std::memcpy(p + n - 8, s + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(p, s, 4);
    std::memcpy(p + n - 4, s + n - 4, 4);
  } else {
    for (size_t i = 0; i < n; ++i) p[i] = s[i];
  }
  return p + n;
}

class RawText {
 public:
  explicit RawText(std::string* out) : out_(out), s_(Acquire()) {}
  ~RawText() {
    Flush();
    if (!own_) s_.in_use = false;
  }
  RawText(const RawText&) = delete;
  RawText& operator=(const RawText&) = delete;

  // Where to write the next bytes; room for `need` of them.
  char* Reserve(size_t need) {
    if (n_ + need > s_.cap) Grow(n_ + need);
    return s_.data.get() + n_;
  }
  void Commit(char* end) { n_ = static_cast<size_t>(end - s_.data.get()); }
  void Put(char c) {
    *Reserve(1) = c;
    ++n_;
  }
  void Put(std::string_view v) {
    std::memcpy(Reserve(v.size()), v.data(), v.size());
    n_ += v.size();
  }
  // Bytes of the chunk so far: appended plus pending.
  size_t written() const { return out_->size() + n_; }
  void Flush() {
    out_->append(s_.data.get(), n_);
    n_ = 0;
  }

 private:
  struct Buffer {
    std::unique_ptr<char[]> data;
    size_t cap = 0;
    bool in_use = false;
  };
  // The thread's scratch buffer, or (if a RawText on this thread already holds it) a private one.
  Buffer& Acquire() {
    thread_local Buffer b;
    if (b.in_use) {
      own_ = std::make_unique<Buffer>();
      return *own_;
    }
    b.in_use = true;
    return b;
  }
  void Grow(size_t need) {
    size_t cap = std::max(need, s_.cap * 2);
    std::unique_ptr<char[]> d(new char[cap]);  // uninitialised on purpose
    if (n_ > 0) std::memcpy(d.get(), s_.data.get(), n_);
    s_.data = std::move(d);
    s_.cap = cap;
  }

  std::string* out_;
  std::unique_ptr<Buffer> own_;  // declared before s_: Acquire() may set it
  Buffer& s_;
  size_t n_ = 0;
};

}  // namespace omicsfs::text
