#include "text/vcf_samples.h"

#include <algorithm>
#include <memory>

namespace omicsfs::text::vcf {
namespace {

using formats::zarr::DType;

// 0..999 as text: the digits in the low bytes (first digit lowest), their count in the top byte.
constexpr auto kSmall = [] {
  std::array<uint32_t, 1000> t{};
  for (uint32_t i = 0; i < 1000; ++i) {
    const uint32_t d0 = '0' + i / 100, d1 = '0' + i / 10 % 10, d2 = '0' + i % 10;
    t[i] = i >= 100  ? d0 | d1 << 8 | d2 << 16 | 3u << 24
           : i >= 10 ? d1 | d2 << 8 | 2u << 24
                     : d2 | 1u << 24;
  }
  return t;
}();

// Diploid int8 calls whose alleles are both in -2..13 (fill, missing, 0..13): "\t" then the
// entry, by the pair and the phasing; the text in the low bytes, its length in the top byte.
constexpr int kGtMin = -2, kGtSpan = 16;
constexpr auto kDiploid = [] {
  std::array<uint64_t, 2 * kGtSpan * kGtSpan> t{};
  for (int phased = 0; phased < 2; ++phased) {
    for (int a = kGtMin; a < kGtMin + kGtSpan; ++a) {
      for (int b = kGtMin; b < kGtMin + kGtSpan; ++b) {
        char text[8] = {'\t'};
        int n = 1;
        auto put = [&](int x) {
          if (x == -1) {
            text[n++] = '.';
          } else {
            if (x >= 10) text[n++] = static_cast<char>('0' + x / 10);
            text[n++] = static_cast<char>('0' + x % 10);
          }
        };
        if (a != -2) {
          put(a);
          if (b != -2) {
            text[n++] = phased ? '|' : '/';
            put(b);
          }
        }
        uint64_t w = static_cast<uint64_t>(n) << 56;
        for (int i = 0; i < n; ++i)
          w |= static_cast<uint64_t>(static_cast<unsigned char>(text[i])) << (8 * i);
        t[(phased * kGtSpan + (a - kGtMin)) * kGtSpan + (b - kGtMin)] = w;
      }
    }
  }
  return t;
}();

// One value that is not a fill: '.' for missing, else [-]digits. Writes up to 4 bytes where the
// text is shorter (the caller's slot has room; later bytes overwrite them).
template <typename T>
inline char* PutValue(char* p, T x) {
  if constexpr (std::is_signed_v<T>) {
    const int64_t v = x;
    if (static_cast<uint64_t>(v) < 1000) {
      const uint32_t w = kSmall[v];
      std::memcpy(p, &w, 4);
      return p + (w >> 24);
    }
    if (v == formats::vcz::kIntMissing) {
      *p = '.';
      return p + 1;
    }
    return WriteInt(p, v);
  } else {
    const uint64_t v = x;
    if (v < 1000) {
      const uint32_t w = kSmall[v];
      std::memcpy(p, &w, 4);
      return p + (w >> 24);
    }
    return WriteUnsigned(p, v);
  }
}

// An entry of N values (N = 0: n values), as PutInts writes it.
template <typename T, int N>
inline char* PutEntry(char* p, const T* v, uint64_t n, char sep) {
  constexpr bool kFills = std::is_signed_v<T>;
  const T fill = static_cast<T>(kFills ? formats::vcz::kIntFill : 0);
  if constexpr (N == 1) {
    if (!kFills || v[0] != fill) p = PutValue(p, v[0]);
  } else if constexpr (N == 3) {  // AD of biallelic sites in triallelic stores: the third a fill
    if (!kFills || v[0] != fill) {
      p = PutValue(p, v[0]);
      if (!kFills || v[1] != fill) {
        *p++ = sep;
        p = PutValue(p, v[1]);
        if (!kFills || v[2] != fill) {
          *p++ = sep;
          p = PutValue(p, v[2]);
        }
      }
    }
  } else if constexpr (N == 2) {
    if (!kFills || v[0] != fill) {
      p = PutValue(p, v[0]);
      if (!kFills || v[1] != fill) {
        *p++ = sep;
        p = PutValue(p, v[1]);
      }
    }
  } else {
    for (uint64_t c = 0; c < n; ++c) {
      if (kFills && v[c] == fill) break;
      if (c > 0) *p++ = sep;
      p = PutValue(p, v[c]);
    }
  }
  return p;
}

// Samples per block: a block's slots of every column stay in the first-level cache.
constexpr uint64_t kBlock = 128;
constexpr uint64_t kSlack = 4;  // PutValue's over-write

// Sample s's entry of a column, its leading ':' or '\t' included, in a slot of `width` bytes
// (slots[(s - s0)·width]); its length in lens[s - s0].
template <typename T, int N>
void FillSlots(const IntColumn& col, uint64_t s0, uint64_t s1, char lead, const uint8_t* phased,
               bool gt, char* slots, uint64_t width, uint8_t* lens) {
  const T* v = reinterpret_cast<const T*>(col.values);
  const uint64_t n = col.n;
  for (uint64_t s = s0; s < s1; ++s) {
    char* q = slots + (s - s0) * width;
    *q = lead;
    const char sep = !gt ? ',' : (phased != nullptr && phased[s] != 0) ? '|' : '/';
    lens[s - s0] = static_cast<uint8_t>(PutEntry<T, N>(q + 1, v + s * n, n, sep) - q);
  }
}

// Diploid int8 genotypes, '\t' first: one table look-up per call where both alleles are small.
void FillDiploid(const IntColumn& col, uint64_t s0, uint64_t s1, const uint8_t* phased, char* slots,
                 uint64_t width, uint8_t* lens) {
  const int8_t* v = reinterpret_cast<const int8_t*>(col.values);
  for (uint64_t s = s0; s < s1; ++s) {
    char* q = slots + (s - s0) * width;
    const int8_t a = v[2 * s], b = v[2 * s + 1];
    // 1 when phased, without a branch (phasing is as unpredictable as the data).
    const unsigned ph = phased != nullptr ? (phased[s] + 255u) >> 8 : 0;
    const unsigned ia = static_cast<uint8_t>(a - kGtMin), ib = static_cast<uint8_t>(b - kGtMin);
    if ((ia | ib) < kGtSpan) {
      const uint64_t w = kDiploid[(ph * kGtSpan + ia) * kGtSpan + ib];
      std::memcpy(q, &w, 8);
      lens[s - s0] = static_cast<uint8_t>(w >> 56);
    } else {
      *q = '\t';
      lens[s - s0] =
          static_cast<uint8_t>(PutEntry<int8_t, 2>(q + 1, v + 2 * s, 2, ph ? '|' : '/') - q);
    }
  }
}

template <typename T>
void FillSlotsOf(const IntColumn& col, uint64_t s0, uint64_t s1, char lead, const uint8_t* phased,
                 bool gt, char* slots, uint64_t width, uint8_t* lens) {
  switch (col.n) {
    case 1:
      return FillSlots<T, 1>(col, s0, s1, lead, phased, gt, slots, width, lens);
    case 2:
      return FillSlots<T, 2>(col, s0, s1, lead, phased, gt, slots, width, lens);
    case 3:
      return FillSlots<T, 3>(col, s0, s1, lead, phased, gt, slots, width, lens);
    default:
      return FillSlots<T, 0>(col, s0, s1, lead, phased, gt, slots, width, lens);
  }
}

void Fill(const IntColumn& col, uint64_t s0, uint64_t s1, char lead, const uint8_t* phased, bool gt,
          char* slots, uint64_t width, uint8_t* lens) {
  if (gt && col.dtype == DType::kInt8 && col.n == 2)
    return FillDiploid(col, s0, s1, phased, slots, width, lens);
  switch (col.dtype) {
    case DType::kInt8:
      return FillSlotsOf<int8_t>(col, s0, s1, lead, phased, gt, slots, width, lens);
    case DType::kInt16:
      return FillSlotsOf<int16_t>(col, s0, s1, lead, phased, gt, slots, width, lens);
    case DType::kInt32:
      return FillSlotsOf<int32_t>(col, s0, s1, lead, phased, gt, slots, width, lens);
    case DType::kInt64:
      return FillSlotsOf<int64_t>(col, s0, s1, lead, phased, gt, slots, width, lens);
    case DType::kUInt16:
      return FillSlotsOf<uint16_t>(col, s0, s1, lead, phased, gt, slots, width, lens);
    case DType::kUInt32:
      return FillSlotsOf<uint32_t>(col, s0, s1, lead, phased, gt, slots, width, lens);
    case DType::kUInt64:
      return FillSlotsOf<uint64_t>(col, s0, s1, lead, phased, gt, slots, width, lens);
    default:
      return FillSlotsOf<uint8_t>(col, s0, s1, lead, phased, gt, slots, width,
                                  lens);  // kUInt8, kBool
  }
}

// The longest entry of a column, its leading character included.
uint64_t EntryMax(const IntColumn& c) { return 1 + c.n * (MaxChars(c.dtype) + 1); }

// Entries longer than a slot's length byte allows are written straight, sample by sample.
template <typename T>
char* PutIntsOf(char* p, const IntColumn& c, uint64_t s, char sep) {
  return PutInts(p, reinterpret_cast<const T*>(c.values) + s * c.n, c.n, sep);
}
char* PutStraight(char* p, const IntColumn& c, uint64_t s, char sep) {
  switch (c.dtype) {
    case DType::kInt8:
      return PutIntsOf<int8_t>(p, c, s, sep);
    case DType::kInt16:
      return PutIntsOf<int16_t>(p, c, s, sep);
    case DType::kInt32:
      return PutIntsOf<int32_t>(p, c, s, sep);
    case DType::kInt64:
      return PutIntsOf<int64_t>(p, c, s, sep);
    case DType::kUInt16:
      return PutIntsOf<uint16_t>(p, c, s, sep);
    case DType::kUInt32:
      return PutIntsOf<uint32_t>(p, c, s, sep);
    case DType::kUInt64:
      return PutIntsOf<uint64_t>(p, c, s, sep);
    default:
      return PutIntsOf<uint8_t>(p, c, s, sep);
  }
}

// Slot i of each column (K columns; K = 0: ncols), one after the other: 16 bytes at a time, the
// bytes past an entry's end overwritten by the next.
template <size_t K>
char* Interleave(char* p, uint64_t count, char* const* slots, const uint64_t* widths,
                 const uint8_t (*lens)[kBlock], size_t ncols) {
  const size_t k = K == 0 ? ncols : K;
  const char* from[16];
  for (size_t c = 0; c < k; ++c) from[c] = slots[c];
  for (uint64_t i = 0; i < count; ++i) {
#pragma GCC unroll 8
    for (size_t c = 0; c < k; ++c) {
      const uint64_t len = lens[c][i];
      std::memcpy(p, from[c], 16);
      for (uint64_t o = 16; o < len; o += 16) std::memcpy(p + o, from[c] + o, 16);
      from[c] += widths[c];
      p += len;
    }
  }
  return p;
}

}  // namespace

uint64_t MaxChars(DType t) {
  switch (t) {
    case DType::kInt8:
      return 4;
    case DType::kUInt8:
    case DType::kBool:
      return 3;
    case DType::kInt16:
      return 6;
    case DType::kUInt16:
      return 5;
    case DType::kInt32:
      return 11;
    case DType::kUInt32:
      return 10;
    default:
      return 20;
  }
}

uint64_t IntSamplesBound(const IntColumn* cols, size_t ncols, uint64_t ns) {
  uint64_t per_sample = ncols == 0 ? 1 : 0;  // '\t' alone
  for (size_t c = 0; c < ncols; ++c) per_sample += EntryMax(cols[c]) + kSlack;
  return ns * per_sample + 16;  // the last slot's copy runs to a multiple of 16
}

char* WriteIntSamples(char* p, const IntColumn* cols, size_t ncols, uint64_t ns, bool gt,
                      const uint8_t* phased) {
  if (ncols == 0) {
    for (uint64_t s = 0; s < ns; ++s) *p++ = '\t';
    return p;
  }
  // Slots of 16·k bytes; entries that may not fit 240 bytes (many values per sample) go the
  // straight way, every column with them.
  uint64_t widths[16];
  uint64_t total = 0;
  bool slotted = ncols <= 16;
  for (size_t c = 0; c < ncols && slotted; ++c) {
    widths[c] = (EntryMax(cols[c]) + kSlack + 15) / 16 * 16;
    slotted = widths[c] <= 240;
    total += widths[c];
  }
  if (!slotted) {
    for (uint64_t s = 0; s < ns; ++s) {
      for (size_t c = 0; c < ncols; ++c) {
        *p++ = c == 0 ? '\t' : ':';
        p = PutStraight(p, cols[c], s,
                        c == 0 && gt ? (phased != nullptr && phased[s] != 0 ? '|' : '/') : ',');
      }
    }
    return p;
  }
  struct Scratch {
    std::unique_ptr<char[]> slots;
    uint64_t cap = 0;
    uint8_t lens[16][kBlock];
  };
  thread_local Scratch scratch;
  if (scratch.cap < total * kBlock) {
    scratch.slots.reset(new char[total * kBlock]);
    scratch.cap = total * kBlock;
  }
  char* slots[16];
  for (size_t c = 0, at = 0; c < ncols; at += widths[c] * kBlock, ++c)
    slots[c] = scratch.slots.get() + at;
  for (uint64_t s0 = 0; s0 < ns; s0 += kBlock) {
    const uint64_t s1 = std::min(ns, s0 + kBlock);
    for (size_t c = 0; c < ncols; ++c) {
      Fill(cols[c], s0, s1, c == 0 ? '\t' : ':', phased, gt && c == 0, slots[c], widths[c],
           scratch.lens[c]);
    }
    switch (ncols) {  // the columns' loop unrolled for the usual counts (GT:AD:DP:GQ is 4)
      case 1:
        p = Interleave<1>(p, s1 - s0, slots, widths, scratch.lens, ncols);
        break;
      case 2:
        p = Interleave<2>(p, s1 - s0, slots, widths, scratch.lens, ncols);
        break;
      case 3:
        p = Interleave<3>(p, s1 - s0, slots, widths, scratch.lens, ncols);
        break;
      case 4:
        p = Interleave<4>(p, s1 - s0, slots, widths, scratch.lens, ncols);
        break;
      case 5:
        p = Interleave<5>(p, s1 - s0, slots, widths, scratch.lens, ncols);
        break;
      case 6:
        p = Interleave<6>(p, s1 - s0, slots, widths, scratch.lens, ncols);
        break;
      default:
        p = Interleave<0>(p, s1 - s0, slots, widths, scratch.lens, ncols);
        break;
    }
  }
  return p;
}

}  // namespace omicsfs::text::vcf
