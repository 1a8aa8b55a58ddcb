#include "text/tabix_index.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "codec/bgzf.h"
#include "util/bytes.h"

namespace omicsfs::text {
namespace {

constexpr uint64_t kMinMarkerDist = 0x10000;  // HTS_MIN_MARKER_DIST: one BGZF block
constexpr int kTbxMaxShift = 31;              // TBX_MAX_SHIFT
constexpr uint32_t kUnset = 0xffffffffu;

int BinFirst(int l) { return ((1 << (3 * l)) - 1) / 7; }
int BinParent(int b) { return (b - 1) >> 3; }
int BinLevel(int b) {
  int l = 0;
  for (; b; ++l) b = BinParent(b);
  return l;
}
int BinBottom(int b, int n_lvls) {
  const int l = BinLevel(b);
  return (b - BinFirst(l)) << (n_lvls - l) * 3;
}
int RegToBin(int64_t beg, int64_t end, int min_shift, int n_lvls) {
  int s = min_shift, t = BinFirst(n_lvls);
  for (--end; n_lvls > 0; --n_lvls, s += 3, t -= 1 << (3 * n_lvls)) {
    if (beg >> s == end >> s) return t + static_cast<int>(beg >> s);
  }
  return 0;
}

}  // namespace

// Named, not anonymous: TabixIndexBuilder::Ref holds a BinHash, and a unity build (which
// includes this file) made GCC warn that a class field has a type of an anonymous namespace.
namespace tabix_bins {

struct Chunk {
  uint64_t u, v;
};
struct Bin {
  uint64_t loff = 0;
  std::vector<Chunk> chunks;
};

// htslib's khash map from uint32 bin numbers (identity hash, quadratic probing, 0.77 load,
// deletions as tombstones). Bins are written in its slot order, so the slots must come out
// exactly as htslib's do: same growth points, same kick-out rehash, same probing.
class BinHash {
 public:
  uint32_t end() const { return n_buckets_; }
  bool Exists(uint32_t k) const { return flags_[k] == 0; }
  uint32_t Key(uint32_t k) const { return keys_[k]; }
  Bin& Val(uint32_t k) { return vals_[k]; }
  const Bin& Val(uint32_t k) const { return vals_[k]; }
  uint32_t size() const { return size_; }

  uint32_t Get(uint32_t key) const {
    if (n_buckets_ == 0) return 0;
    const uint32_t mask = n_buckets_ - 1;
    uint32_t i = key & mask, step = 0;
    const uint32_t last = i;
    while (!Empty(i) && (Deleted(i) || keys_[i] != key)) {
      i = (i + (++step)) & mask;
      if (i == last) return n_buckets_;
    }
    return flags_[i] != 0 ? n_buckets_ : i;
  }

  uint32_t Put(uint32_t key, bool* absent) {
    if (n_occupied_ >= upper_bound_)
      Resize(n_buckets_ > (size_ << 1) ? n_buckets_ - 1 : n_buckets_ + 1);
    const uint32_t mask = n_buckets_ - 1;
    uint32_t x = n_buckets_, site = n_buckets_, i = key & mask, step = 0;
    if (Empty(i)) {
      x = i;
    } else {
      const uint32_t last = i;
      while (!Empty(i) && (Deleted(i) || keys_[i] != key)) {
        if (Deleted(i)) site = i;
        i = (i + (++step)) & mask;
        if (i == last) {
          x = site;
          break;
        }
      }
      if (x == n_buckets_) x = (Empty(i) && site != n_buckets_) ? site : i;
    }
    *absent = flags_[x] != 0;
    if (Empty(x)) ++n_occupied_;
    if (*absent) {
      keys_[x] = key;
      vals_[x] = Bin();
      flags_[x] = 0;
      ++size_;
    }
    return x;
  }

  void Del(uint32_t x) {
    if (x != n_buckets_ && flags_[x] == 0) {
      flags_[x] = kDel;
      --size_;
    }
  }

 private:
  static constexpr uint8_t kDel = 1, kEmpty = 2;
  bool Empty(uint32_t i) const { return flags_[i] & kEmpty; }
  bool Deleted(uint32_t i) const { return flags_[i] & kDel; }
  static uint32_t Bound(uint32_t n) { return static_cast<uint32_t>(n * 0.77 + 0.5); }

  void Resize(uint32_t n) {
    uint32_t want = 4;
    while (want < n) want <<= 1;
    if (size_ >= Bound(want)) return;  // too small for what it holds: unchanged
    std::vector<uint8_t> fresh(want, kEmpty);
    if (n_buckets_ < want) {
      keys_.resize(want);
      vals_.resize(want);
    }
    for (uint32_t j = 0; j != n_buckets_; ++j) {
      if (flags_[j] != 0) continue;
      uint32_t key = keys_[j];
      Bin val = std::move(vals_[j]);
      flags_[j] = kDel;
      for (;;) {  // kick-out: an element still unmoved in its new slot is moved next
        uint32_t i = key & (want - 1), step = 0;
        while (!(fresh[i] & kEmpty)) i = (i + (++step)) & (want - 1);
        fresh[i] &= ~kEmpty;
        if (i < n_buckets_ && flags_[i] == 0) {
          std::swap(key, keys_[i]);
          std::swap(val, vals_[i]);
          flags_[i] = kDel;
        } else {
          keys_[i] = key;
          vals_[i] = std::move(val);
          break;
        }
      }
    }
    keys_.resize(want);
    vals_.resize(want);
    flags_ = std::move(fresh);
    n_buckets_ = want;
    n_occupied_ = size_;
    upper_bound_ = Bound(n_buckets_);
  }

  uint32_t n_buckets_ = 0, size_ = 0, n_occupied_ = 0, upper_bound_ = 0;
  std::vector<uint8_t> flags_;
  std::vector<uint32_t> keys_;
  std::vector<Bin> vals_;
};

}  // namespace tabix_bins

namespace {

using tabix_bins::Bin;
using tabix_bins::BinHash;
using tabix_bins::Chunk;

void PutI32(std::string* out, int32_t v) { PutU32(out, static_cast<uint32_t>(v)); }

// strtoll(s, &end, 0) on a field that is not NUL-terminated.
int64_t ParseLL(std::string_view field, size_t* used) {
  char buf[64];
  const size_t n = std::min(field.size(), sizeof buf - 1);
  std::memcpy(buf, field.data(), n);
  buf[n] = '\0';
  char* e = nullptr;
  const long long v = std::strtoll(buf, &e, 0);
  *used = static_cast<size_t>(e - buf);
  return v;
}

// The INFO END rule of tbx_parse1: "END=" at the start of INFO or ";END=" after it, not ".".
void ApplyInfoEnd(std::string_view info, int64_t begin, int64_t* end) {
  size_t at = info.find("END=");
  if (at == std::string_view::npos) return;
  if (at == 0) {
    at = 4;
  } else {
    at = info.find(";END=");
    if (at == std::string_view::npos) return;
    at += 5;
  }
  if (at >= info.size() || info[at] == '.') return;
  size_t used;
  const int64_t v = ParseLL(info.substr(at), &used);
  if (v > begin) *end = v;  // tabix ignores (and warns about) an END not past the start
}

}  // namespace

bool ParseTabixLine(TabixPreset preset, std::string_view line, std::string_view* contig,
                    int64_t* begin, int64_t* end) {
  bool have_contig = false, have_begin = false;
  *begin = *end = -1;
  size_t b = 0;
  int id = 1;
  for (size_t i = 0; i <= line.size(); ++i) {
    if (i < line.size() && line[i] != '\t') continue;
    const std::string_view field = line.substr(b, i - b);
    if (id == 1) {
      *contig = field;
      have_contig = true;
    } else if (id == 2) {
      size_t used;
      *begin = *end = ParseLL(field, &used);
      if (used == 0) return false;
      if (preset == TabixPreset::kVcf)
        --*begin;
      else
        ++*end;
      if (*begin < 0) *begin = 0;  // tabix warns "Coordinate <= 0"
      if (*end < 1) *end = 1;
      have_begin = true;
    } else if (preset == TabixPreset::kBed && id == 3) {
      size_t used;
      *end = ParseLL(field, &used);
      if (used == 0) return false;
    } else if (preset == TabixPreset::kVcf && id == 4) {
      if (!field.empty()) *end = *begin + static_cast<int64_t>(field.size());
    } else if (preset == TabixPreset::kVcf && id == 8) {
      ApplyInfoEnd(field, *begin, end);
    }
    b = i + 1;
    ++id;
  }
  return have_contig && have_begin && *begin >= 0 && *end >= 0;
}

void NoteVcfContigLength(std::string_view line, int64_t* max_ref_len) {
  if (line.substr(0, 8) != "##contig") return;
  size_t at = line.find("length", 8);
  if (at == std::string_view::npos) return;
  for (at += 6; at < line.size() && (line[at] == ' ' || line[at] == '='); ++at) {
  }
  std::string digits(line.substr(at, 32));
  const int64_t len = std::strtoll(digits.c_str(), nullptr, 10);
  if (*max_ref_len < len) *max_ref_len = len;
}

struct TabixIndexBuilder::Ref {
  BinHash bins;
  std::vector<uint64_t> linear;  // (uint64)-1 = unset until Finish
};

TabixIndexBuilder::TabixIndexBuilder(TabixPreset preset, bool csi, uint64_t offset0,
                                     int64_t max_ref_len, codec::bgzf::StoredLayout layout,
                                     const std::vector<std::string>& contigs)
    : preset_(preset), csi_(csi || preset == TabixPreset::kBcf), layout_(layout) {
  if (preset_ == TabixPreset::kBcf) {
    // bcf_index: the longest contig (2^31 − 1 when no contig has a length) + 256, levels from 0.
    if (max_ref_len == 0) max_ref_len = (int64_t{1} << 31) - 1;
    max_ref_len += 256;
    n_lvls_ = 0;
    for (int64_t s = int64_t{1} << min_shift_; max_ref_len > s; ++n_lvls_, s <<= 3) {
    }
    for (const std::string& c : contigs) {
      tids_.emplace(c, static_cast<int>(names_.size()));
      names_.push_back(c);
      refs_.push_back(nullptr);
    }
  } else if (csi_) {
    n_lvls_ = (kTbxMaxShift - min_shift_ + 2) / 3;
    int64_t s = int64_t{1} << (min_shift_ + n_lvls_ * 3);  // adjust_n_lvls
    for (max_ref_len += 256; max_ref_len > s; ++n_lvls_, s <<= 3) {
    }
  }
  n_bins_ = ((1u << (3 * n_lvls_ + 3)) - 1) / 7;
  last_off_ = save_off_ = off_beg_ = off_end_ = offset0;
}

TabixIndexBuilder::~TabixIndexBuilder() = default;

namespace {

void InsertChunk(BinHash* h, uint32_t bin, uint64_t u, uint64_t v) {
  bool absent;
  const uint32_t k = h->Put(bin, &absent);
  h->Val(k).chunks.push_back({u, v});
}

// hts.c's insert_to_l: windows b..e not set yet take `off`. A contig's records come sorted by
// begin (PushTo refuses others), so every window from b up to the list's end is set already (the
// record that last grew the list covered them from a begin at most b): only new windows are.
void InsertLinear(std::vector<uint64_t>* l, int64_t beg, int64_t end, uint64_t off, int shift) {
  const int64_t b = beg >> shift, e = (end - 1) >> shift;
  const int64_t n = static_cast<int64_t>(l->size());
  if (e < n) return;
  l->resize(e + 1, UINT64_MAX);
  for (int64_t i = std::max(b, n); i <= e; ++i) (*l)[i] = off;
}

}  // namespace

Status TabixIndexBuilder::Push(std::string_view contig, int64_t beg, int64_t end,
                               uint64_t end_voffset) {
  int tid = last_tid_;
  if (tid < 0 ||
      names_[tid] != contig) {  // records of one contig come together: look up once per run
    auto [it, added] = tids_.try_emplace(std::string(contig), static_cast<int>(names_.size()));
    tid = it->second;
    if (added && preset_ == TabixPreset::kBcf) {
      tids_.erase(it);
      return InternalError("BCF index: contig " + std::string(contig) + " is not in the header");
    }
    if (added) {
      names_.emplace_back(contig);
      refs_.push_back(nullptr);
    }
  }
  return PushTo(tid, beg, end, end_voffset);
}

Status TabixIndexBuilder::PushSameContig(int64_t beg, int64_t end, uint64_t end_voffset) {
  if (last_tid_ < 0)
    return InternalError("tabix index: a record pushed as of the last contig before any");
  return PushTo(last_tid_, beg, end, end_voffset);
}

inline void TabixIndexBuilder::Record(int tid, int64_t beg, int64_t end, uint64_t end_voffset) {
  InsertLinear(&refs_[tid]->linear, beg, end, last_off_, min_shift_);
  const uint32_t bin = static_cast<uint32_t>(RegToBin(beg, end, min_shift_, n_lvls_));
  if (last_bin_ != bin) {
    if (save_bin_ != kUnset) InsertChunk(&refs_[save_tid_]->bins, save_bin_, save_off_, last_off_);
    if (last_bin_ == kUnset && save_bin_ != kUnset) {  // a new contig: close the last one's
      off_end_ = last_off_;
      InsertChunk(&refs_[save_tid_]->bins, n_bins_ + 1, off_beg_, off_end_);
      InsertChunk(&refs_[save_tid_]->bins, n_bins_ + 1, n_mapped_, 0);
      n_mapped_ = 0;
      off_beg_ = off_end_;
    }
    save_off_ = last_off_;
    save_bin_ = last_bin_ = bin;
    save_tid_ = tid;
  }
  ++n_mapped_;
  last_off_ = end_voffset;
  last_coor_ = beg;
}

Status TabixIndexBuilder::PushTo(int tid, int64_t beg, int64_t end, uint64_t end_voffset) {
  const int64_t maxpos = int64_t{1} << (min_shift_ + n_lvls_ * 3);
  if (beg > maxpos || end > maxpos) {
    return UnsupportedError("position " + std::to_string(end) + " is beyond what a " +
                            (csi_ ? ".csi" : ".tbi (2^29)") + " index can hold");
  }
  if (last_tid_ != tid) {
    if (refs_[tid]) return CorruptError("not sorted: the records of a contig are not together");
    last_tid_ = tid;
    last_bin_ = kUnset;
  } else if (last_coor_ > beg) {
    return CorruptError("not sorted: position " + std::to_string(beg + 1) + " follows " +
                        std::to_string(last_coor_ + 1));
  }
  if (end < beg) {
    return CorruptError("end " + std::to_string(end) + " before begin " + std::to_string(beg + 1));
  }
  if (!refs_[tid]) refs_[tid] = std::make_unique<Ref>();
  if (beg < 0) beg = 0;
  if (end <= 0) end = 1;
  Record(tid, beg, end, end_voffset);
  return OkStatus();
}

Status TabixIndexBuilder::PushSameContigRun(const RecordSpan* r, size_t n, uint64_t chunk_start,
                                            size_t* pushed) {
  if (last_tid_ < 0 || !refs_[last_tid_]) {
    *pushed = 0;
    return InternalError("tabix index: a run pushed as of the last contig before any record");
  }
  const int64_t maxpos = int64_t{1} << (min_shift_ + n_lvls_ * 3);
  for (size_t i = 0; i < n; ++i) {
    const int64_t beg = r[i].begin, end = r[i].end;
    const uint64_t voffset = layout_.VirtualOffset(chunk_start + r[i].end_in_chunk);
    if (beg >= last_coor_ && beg >= 0 && end >= beg && end > 0 && end <= maxpos) [[likely]] {
      Record(last_tid_, beg, end, voffset);
    } else if (Status st = PushTo(last_tid_, beg, end, voffset); !st.ok()) {  // says why, or clamps
      *pushed = i;
      return st;
    }
  }
  *pushed = n;
  return OkStatus();
}

namespace {

// hts.c's update_loff: fill the linear index's gaps from the right; each bin's loff.
void UpdateLoff(BinHash* h, std::vector<uint64_t>* linear, uint32_t n_bins, int n_lvls) {
  for (int64_t l = static_cast<int64_t>(linear->size()) - 2; l >= 0; --l) {
    if ((*linear)[l] == UINT64_MAX) (*linear)[l] = (*linear)[l + 1];
  }
  for (uint32_t k = 0; k != h->end(); ++k) {
    if (!h->Exists(k)) continue;
    if (h->Key(k) < n_bins) {
      const int bot = BinBottom(static_cast<int>(h->Key(k)), n_lvls);
      h->Val(k).loff = bot < static_cast<int64_t>(linear->size()) ? (*linear)[bot] : 0;
    } else {
      h->Val(k).loff = 0;
    }
  }
}

void SortByStart(std::vector<Chunk>* c) {
  std::sort(c->begin(), c->end(), [](const Chunk& a, const Chunk& b) { return a.u < b.u; });
}

// hts.c's compress_binning: bins spanning less than one BGZF block go to their parent; then
// chunks starting in the block where the previous one ends are merged.
void CompressBins(BinHash* h, uint32_t n_bins, int n_lvls) {
  // Each bin's slot, found once: after many deletions a probe for a parent walks long runs of
  // deleted slots (a sparse view's index, e.g. one cell group's, spent most of its build
  // there). Nothing is added from here on, so the slots (and the order written) stay as they are.
  std::unordered_map<uint32_t, uint32_t> slot;
  slot.reserve(h->size());
  for (uint32_t k = 0; k != h->end(); ++k) {
    if (h->Exists(k)) slot.emplace(h->Key(k), k);
  }
  for (int l = n_lvls; l > 0; --l) {
    const uint32_t start = static_cast<uint32_t>(BinFirst(l));
    for (uint32_t k = 0; k != h->end(); ++k) {
      if (!h->Exists(k) || h->Key(k) >= n_bins || h->Key(k) < start) continue;
      std::vector<Chunk>& p = h->Val(k).chunks;
      if (l < n_lvls && p.size() > 1) SortByStart(&p);
      if ((p.back().v >> 16) - (p.front().u >> 16) >= kMinMarkerDist) continue;
      // A deleted parent is skipped as the probe would (it found no such key).
      const auto parent = slot.find(static_cast<uint32_t>(BinParent(static_cast<int>(h->Key(k)))));
      const uint32_t kp =
          parent == slot.end() || !h->Exists(parent->second) ? h->end() : parent->second;
      if (kp == h->end()) continue;
      std::vector<Chunk>& q = h->Val(kp).chunks;
      q.insert(q.end(), p.begin(), p.end());
      h->Del(k);
    }
  }
  const uint32_t k0 = h->Get(0);
  if (k0 != h->end()) SortByStart(&h->Val(k0).chunks);
  for (uint32_t k = 0; k != h->end(); ++k) {
    if (!h->Exists(k) || h->Key(k) >= n_bins) continue;
    std::vector<Chunk>& p = h->Val(k).chunks;
    size_t m = 0;
    for (size_t l = 1; l < p.size(); ++l) {
      if (p[m].v >> 16 >= p[l].u >> 16) {
        p[m].v = std::max(p[m].v, p[l].v);
      } else {
        p[++m] = p[l];
      }
    }
    p.resize(m + 1);
  }
}

}  // namespace

std::string TabixIndexBuilder::Finish(uint64_t final_voffset) {
  if (save_tid_ >= 0) {
    BinHash& h = refs_[save_tid_]->bins;
    InsertChunk(&h, save_bin_, save_off_, final_voffset);
    InsertChunk(&h, n_bins_ + 1, off_beg_, final_voffset);
    InsertChunk(&h, n_bins_ + 1, n_mapped_, 0);
  }
  for (auto& ref : refs_) {
    if (!ref) continue;  // a header contig without records (kBcf)
    UpdateLoff(&ref->bins, &ref->linear, n_bins_, n_lvls_);
    CompressBins(&ref->bins, n_bins_, n_lvls_);
  }
  return Serialize();
}

std::string TabixIndexBuilder::Serialize() const {
  // tbx_set_meta: the preset's tbx_conf_t, then the contig names in tid order.
  std::string meta;  // none for a BCF's index
  const bool vcf = preset_ == TabixPreset::kVcf;
  for (int32_t v : {vcf ? 2 : 0x10000, 1, 2, vcf ? 0 : 3, int32_t{'#'}, 0}) PutI32(&meta, v);
  std::string names;
  for (const auto& n : names_) names.append(n.c_str(), n.size() + 1);
  PutI32(&meta, static_cast<int32_t>(names.size()));
  meta += names;
  if (preset_ == TabixPreset::kBcf) meta.clear();
  std::string out;
  if (csi_) {
    out.append("CSI\1", 4);
    PutI32(&out, min_shift_);
    PutI32(&out, n_lvls_);
    PutU32(&out, static_cast<uint32_t>(meta.size()));
    out += meta;
    PutI32(&out, static_cast<int32_t>(refs_.size()));
  } else {
    out.append("TBI\1", 4);
    PutI32(&out, static_cast<int32_t>(refs_.size()));
    out += meta;
  }
  for (const auto& ref : refs_) {
    if (!ref) {  // a header contig without records (kBcf): no bins
      PutI32(&out, 0);
      continue;
    }
    const BinHash& h = ref->bins;
    PutI32(&out, static_cast<int32_t>(h.size()));
    for (uint32_t k = 0; k != h.end(); ++k) {
      if (!h.Exists(k)) continue;
      PutU32(&out, h.Key(k));
      if (csi_) PutU64(&out, h.Val(k).loff);
      PutI32(&out, static_cast<int32_t>(h.Val(k).chunks.size()));
      for (const Chunk& c : h.Val(k).chunks) {
        PutU64(&out, c.u);
        PutU64(&out, c.v);
      }
    }
    if (!csi_) {
      PutI32(&out, static_cast<int32_t>(ref->linear.size()));
      for (uint64_t o : ref->linear) PutU64(&out, o);
    }
  }
  PutU64(&out, 0);  // n_no_coor
  return out;
}

}  // namespace omicsfs::text
