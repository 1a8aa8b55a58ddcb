// What a VCF Zarr value means: the missing and fill sentinels of integers (-1, -2), floats (two
// NaN payloads) and strings ("", "."), read from decoded blocks of any dtype.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "formats/zarr/array.h"

namespace omicsfs::formats::vcz {

inline constexpr int64_t kIntMissing = -1, kIntFill = -2;
inline constexpr uint32_t kFloatMissing = 0x7F800001u, kFloatFill = 0x7F800002u;

inline float FloatAt(const zarr::DenseBlock& b, uint64_t i) {
  if (b.dtype == zarr::DType::kFloat64) {
    double d;
    std::memcpy(&d, b.raw() + i * 8, 8);
    return static_cast<float>(d);
  }
  float f;
  std::memcpy(&f, b.raw() + i * 4, 4);
  return f;
}

inline uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline bool StringMissing(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == '.' || c == '\0'; });
}

template <typename T>
bool IntsMissing(const zarr::DenseBlock& b, uint64_t first, uint64_t n) {
  if constexpr (std::is_unsigned_v<T>) return n == 0;  // the sentinels are negative
  const T* v = b.data<T>() + first;
  for (uint64_t i = 0; i < n; ++i) {
    const int64_t x = v[i];
    if (x != kIntMissing && x != kIntFill) return false;
  }
  return true;
}

// True when values [first, first+n) are all missing or fill (Flag: false).
inline bool AllMissing(const zarr::DenseBlock& b, uint64_t first, uint64_t n) {
  using zarr::DType;
  switch (b.dtype) {
    case DType::kBool:
      return zarr::IntAt(b, first) == 0;
    case DType::kInt8:
      return IntsMissing<int8_t>(b, first, n);
    case DType::kInt16:
      return IntsMissing<int16_t>(b, first, n);
    case DType::kInt32:
      return IntsMissing<int32_t>(b, first, n);
    case DType::kInt64:
      return IntsMissing<int64_t>(b, first, n);
    case DType::kUInt8:
      return IntsMissing<uint8_t>(b, first, n);
    case DType::kUInt16:
      return IntsMissing<uint16_t>(b, first, n);
    case DType::kUInt32:
      return IntsMissing<uint32_t>(b, first, n);
    case DType::kUInt64:
      return IntsMissing<uint64_t>(b, first, n);
    default:
      break;
  }
  for (uint64_t i = first; i < first + n; ++i) {
    if (zarr::IsString(b.dtype)) {
      if (!StringMissing(b.strings[i])) return false;
    } else {
      uint32_t u = Bits(FloatAt(b, i));
      if (u != kFloatMissing && u != kFloatFill) return false;
    }
  }
  return true;
}

}  // namespace omicsfs::formats::vcz
