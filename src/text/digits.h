// Decimal digits as ASCII words, for the number formatters: 8 or 16 zero-padded digits of an
// integer in memory order (first digit in the lowest byte), without a division per digit.
#pragma once

#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace omicsfs::text::digits {

// The eight digits of x (< 10^8). SWAR: x splits into two 4-digit lanes of 32 bits, each into two
// 2-digit lanes of 16 bits, each into two digits of 8 bits, with multiply-shift divisions that
// stay exact inside each lane (4-digit lanes: y·10486 >> 20 = y / 100 for y < 10^4; 2-digit
// lanes: y·103 >> 10 = y / 10 for y < 100) and products that never carry into the next lane.
inline uint64_t Digits8(uint32_t x) {
  uint64_t y = (x / 10000) | uint64_t{x % 10000} << 32;
  const uint64_t hundreds = ((y * 10486) >> 20) & 0x0000007F0000007FULL;
  y = hundreds | (y - hundreds * 100) << 16;
  const uint64_t tens = ((y * 103) >> 10) & 0x000F000F000F000FULL;
  y = tens | (y - tens * 10) << 8;
  return y | 0x3030303030303030ULL;
}

// The sixteen digits of x (< 10^16) as two words, the first eight in *first: the portable way.
inline void Digits16Scalar(uint64_t x, uint64_t* first, uint64_t* second) {
  *first = Digits8(static_cast<uint32_t>(x / 100000000));
  *second = Digits8(static_cast<uint32_t>(x % 100000000));
}

// The same. With SSE2 the digits come out of vector multiplies: the scalar way needs ~12
// multiplies on the one scalar multiplier, which the shortest-decimal step of a double keeps
// busy already (this step of WriteJavaDouble: ~9 → ~5 ns per value).
inline void Digits16(uint64_t x, uint64_t* first, uint64_t* second) {
#if defined(__SSE2__)
  const uint32_t hi8 = static_cast<uint32_t>(x / 100000000),
                 lo8 = static_cast<uint32_t>(x % 100000000);
  const __m128i v = _mm_set_epi64x(lo8, hi8);
  const __m128i q = _mm_srli_epi64(_mm_mul_epu32(v, _mm_set1_epi32(static_cast<int>(0xD1B71759u))),
                                   45);  // v / 10^4
  const __m128i r = _mm_sub_epi32(v, _mm_mul_epu32(q, _mm_set1_epi32(10000)));
  const __m128i u = _mm_or_si128(q, _mm_slli_epi64(r, 32));  // 32-bit lanes: qh rh ql rl
  const __m128i p = _mm_packs_epi32(u, u);     // 16-bit lanes: qh rh ql rl qh rh ql rl
  const __m128i d = _mm_unpacklo_epi16(p, p);  // qh qh rh rh ql ql rl rl
  // Each 4-digit y in four 16-bit lanes: floor(y / 10^3, 10^2, 10, 1) = mulhi(mulhi(4y, m), 2^(16 -
  // s)) with s = 10, 7, 3, 1 (exact for y < 10^4); a digit is that minus 10 times the lane before.
  const __m128i m = _mm_setr_epi16(16778, 20972, 13108, -32768, 16778, 20972, 13108, -32768);
  const __m128i s = _mm_setr_epi16(64, 512, 8192, -32768, 64, 512, 8192, -32768);
  auto lanes = [&](__m128i y) {
    const __m128i f = _mm_mulhi_epu16(_mm_mulhi_epu16(_mm_slli_epi16(y, 2), m), s);
    return _mm_sub_epi16(f, _mm_mullo_epi16(_mm_slli_epi64(f, 16), _mm_set1_epi16(10)));
  };
  const __m128i text = _mm_or_si128(
      _mm_packus_epi16(lanes(_mm_unpacklo_epi32(d, d)), lanes(_mm_unpackhi_epi32(d, d))),
      _mm_set1_epi8('0'));
  *first = static_cast<uint64_t>(_mm_cvtsi128_si64(text));
  *second = static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(text, text)));
#else
  Digits16Scalar(x, first, second);
#endif
}

// How many of the eight digits in w (from Digits8 or Digits16) are '0' at its end.
inline int TrailingZeros(uint64_t w) {
  const uint64_t nonzero =
      ((w & 0x0F0F0F0F0F0F0F0FULL) + 0x7F7F7F7F7F7F7F7FULL) & 0x8080808080808080ULL;
  return nonzero == 0 ? 8 : __builtin_clzll(nonzero) >> 3;
}

}  // namespace omicsfs::text::digits
