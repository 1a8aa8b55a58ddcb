// The integer writers of the VCF view: one value, one entry (values up to the first fill, '.' for
// missing, a separator between), and a record's sample columns when every shown FORMAT field
// (GT included) is an integer array — nearly all of a VCF's text.
#pragma once

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "formats/vcz/values.h"
#include "formats/zarr/array.h"

namespace omicsfs::text::vcf {

// "00".."99": two digits per value, for a branch-light path below 100.
inline constexpr auto kTwoDigits = [] {
  std::array<char, 200> t{};
  for (int i = 0; i < 100; ++i) {
    t[2 * i] = static_cast<char>('0' + i / 10);
    t[2 * i + 1] = static_cast<char>('0' + i % 10);
  }
  return t;
}();

inline char* WriteInt(char* p, int64_t v) {
  const uint64_t u = static_cast<uint64_t>(v);
  if (u < 100) {
    const bool two = v >= 10;
    std::memcpy(p, &kTwoDigits[2 * v + (two ? 0 : 1)], 2);  // writes 2 bytes, keeps 1 or 2
    return p + 1 + two;
  }
  if (u < 10000) {  // depths and likelihoods: mostly below 10 000
    const uint64_t hi = u / 100, lo = u % 100;
    const bool two = hi >= 10;
    std::memcpy(p, &kTwoDigits[2 * hi + (two ? 0 : 1)], 2);
    p += 1 + two;
    std::memcpy(p, &kTwoDigits[2 * lo], 2);
    return p + 2;
  }
  return std::to_chars(p, p + 24, v).ptr;
}

inline char* WriteUnsigned(char* p, uint64_t v) {
  return v <= static_cast<uint64_t>(INT64_MAX) ? WriteInt(p, static_cast<int64_t>(v))
                                               : std::to_chars(p, p + 24, v).ptr;
}

inline constexpr uint64_t kMaxIntChars = 22;  // a separator and an int64 with its sign

// One entry of `n` integers as vcztools writes it: values up to the first fill, '.' for missing
// (signed types only: the sentinels are negative), `sep` between. Writes at most n·kMaxIntChars.
template <typename T>
inline char* PutInts(char* p, const T* v, uint64_t n, char sep) {
  for (uint64_t c = 0; c < n; ++c) {
    if constexpr (std::is_signed_v<T>) {
      const int64_t x = v[c];
      if (x == formats::vcz::kIntFill) break;
      if (c > 0) *p++ = sep;
      if (x == formats::vcz::kIntMissing) {
        *p++ = '.';
      } else {
        p = WriteInt(p, x);
      }
    } else {
      if (c > 0) *p++ = sep;
      p = WriteUnsigned(p, v[c]);
    }
  }
  return p;
}

// The integer types the per-sample fast path writes, and the widest value of each (sign included).
inline bool IsIntType(formats::zarr::DType t) {
  return formats::zarr::IsSignedInt(t) || formats::zarr::IsUnsignedInt(t) ||
         t == formats::zarr::DType::kBool;
}
uint64_t MaxChars(formats::zarr::DType t);

// One FORMAT column of a record: sample s's entry is values [s·n, s·n + n) of `dtype` at `values`
// (an integer type or bool).
struct IntColumn {
  formats::zarr::DType dtype = formats::zarr::DType::kInt32;
  const char* values = nullptr;
  uint64_t n = 1;
};

// The most bytes WriteIntSamples writes for ns samples (slack included).
uint64_t IntSamplesBound(const IntColumn* cols, size_t ncols, uint64_t ns);

// For each sample s in [0, ns): '\t', then each column's entry, ':' before all but the first.
// With `gt`, column 0 is the genotype: its values are separated by '|' where phased[s] is
// nonzero (phased may be null), else '/'; other columns' values by ','. Returns the end.
char* WriteIntSamples(char* p, const IntColumn* cols, size_t ncols, uint64_t ns, bool gt,
                      const uint8_t* phased);

}  // namespace omicsfs::text::vcf
