#include "text/number_format.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "text/digits.h"

namespace omicsfs::text {

void AppendUInt(std::string* out, uint64_t v) {
  char buf[kMaxNumberChars];
  out->append(buf, WriteUInt(buf, v));
}
void AppendInt(std::string* out, int64_t v) {
  char buf[kMaxNumberChars];
  out->append(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
}

void AppendVcfFloat(std::string* out, float v) {
  if (std::isnan(v)) {
    out->append(std::signbit(v) ? "-nan" : "nan");
    return;
  }
  if (std::isinf(v)) {
    out->append(v < 0 ? "-inf" : "inf");
    return;
  }
  if (v == 0) {
    out->append(std::signbit(v) ? "-0" : "0");
    return;
  }
  // The shortest round-trip digit count is a lower bound for p.
  char buf[64];
  char* end = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific).ptr;
  int p = 0;
  for (char* q = buf; q < end && *q != 'e'; ++q) p += (*q >= '0' && *q <= '9');
  for (;; ++p) {
    end = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific, p - 1).ptr;
    float back = 0;
    std::from_chars(buf, end, back);
    if (back == v || p >= 9) break;
  }
  // buf = [-]d[.ddd]e±XX: collect the digits and the exponent.
  const char* q = buf;
  bool negative = *q == '-';
  if (negative) ++q;
  std::string digits;
  for (; *q != 'e'; ++q) {
    if (*q != '.') digits.push_back(*q);
  }
  int exponent = 0;
  std::from_chars(q + (q[1] == '+' ? 2 : 1), end, exponent);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int precision = std::max(6, p);
  if (negative) out->push_back('-');
  if (exponent < -4 || exponent >= precision) {
    out->push_back(digits[0]);
    if (digits.size() > 1) {
      out->push_back('.');
      out->append(digits, 1);
    }
    out->push_back('e');
    out->push_back(exponent < 0 ? '-' : '+');
    int ax = exponent < 0 ? -exponent : exponent;
    if (ax < 10) out->push_back('0');
    AppendUInt(out, static_cast<uint64_t>(ax));
  } else if (exponent >= 0) {
    const size_t int_digits = static_cast<size_t>(exponent) + 1;
    if (digits.size() <= int_digits) {
      out->append(digits);
      out->append(int_digits - digits.size(), '0');
    } else {
      out->append(digits, 0, int_digits);
      out->push_back('.');
      out->append(digits, int_digits);
    }
  } else {
    out->append("0.");
    out->append(static_cast<size_t>(-exponent - 1), '0');
    out->append(digits);
  }
}

namespace {

// Java's Double.toString (JDK 19 and later) picks, for a double v, the decimal that is shortest
// among those that round to v (closest to v on a tie of length, then the even one); when that is
// a single digit it picks the closest decimal of one or two digits. This is the Schubfach
// algorithm (R. Giulietti, "The Schubfach way to render doubles", 2020), written here from its
// description: v = c·2^q is scaled by a 126-bit approximation g of 10^-k (from a table built once
// with exact integer arithmetic), which brackets v and the ends of its rounding interval
// precisely enough to decide between the candidates s·10^k and (s+1)·10^k, and their multiples of
// ten. Checked against a std::to_chars-based reference on every corpus value and ~50 M random
// doubles (tests/text/java_double_test.cc).
constexpr int kQMin = -1074;  // exponent of the smallest subnormal
constexpr uint64_t kCMin = uint64_t{1} << 52;
constexpr int kKMin = -324, kKMax = 292;  // range of k = floor(log10(v)) - ...

// floor(q·log10(2)), floor(log10(3/4·2^q)), floor(e·log2(10)): exact for the ranges used here.
constexpr int FloorLog10Pow2(int q) {
  return static_cast<int>((int64_t{q} * 661971961083LL) >> 41);
}
constexpr int FloorLog10ThreeQuartersPow2(int q) {
  return static_cast<int>((int64_t{q} * 661971961083LL - 274743187321LL) >> 41);
}
constexpr int FloorLog2Pow10(int e) {
  return static_cast<int>((int64_t{e} * 913124641741LL) >> 38);
}

__extension__ typedef unsigned __int128 U128;

// floor(10^e · 2^shift) when it is below 2^128 (the callers choose shift so that it is), and
// whether that floor is exact: exact integer arithmetic on a little-endian big integer.
U128 ScaledPow10(int e, int shift, bool* exact) {
  std::vector<uint32_t> n{1};
  bool dropped = false;
  auto mul_small = [&n](uint32_t m) {
    uint64_t carry = 0;
    for (auto& w : n) {
      const uint64_t x = uint64_t{w} * m + carry;
      w = static_cast<uint32_t>(x);
      carry = x >> 32;
    }
    if (carry) n.push_back(static_cast<uint32_t>(carry));
  };
  auto div_small = [&n, &dropped](uint32_t d) {  // floor division
    uint64_t rem = 0;
    for (size_t i = n.size(); i-- > 0;) {
      const uint64_t x = (rem << 32) | n[i];
      n[i] = static_cast<uint32_t>(x / d);
      rem = x % d;
    }
    dropped |= rem != 0;
    while (n.size() > 1 && n.back() == 0) n.pop_back();
  };
  auto shift_left = [&n](int bits) {
    n.insert(n.begin(), static_cast<size_t>(bits / 32), 0u);
    if (bits % 32) {
      uint32_t carry = 0;
      for (auto& w : n) {
        const uint32_t next = w >> (32 - bits % 32);
        w = (w << (bits % 32)) | carry;
        carry = next;
      }
      if (carry) n.push_back(carry);
    }
  };
  int right = 0;  // bits still to drop
  if (e >= 0) {
    for (int i = 0; i < e; ++i) mul_small(10);
    if (shift >= 0)
      shift_left(shift);
    else
      right = -shift;
  } else {
    shift_left(shift);
    for (int i = 0; i < -e; ++i) div_small(10);  // floor(floor(a/10)/10) = floor(a/100)
  }
  U128 g = 0;
  for (int bit = 127 + right; bit >= 0; --bit) {
    const size_t word = static_cast<size_t>(bit / 32);
    const uint32_t b = word < n.size() ? (n[word] >> (bit % 32)) & 1 : 0;
    if (bit >= right)
      g = (g << 1) | b;
    else
      dropped |= b != 0;
  }
  *exact = !dropped;
  return g;
}

// Schubfach: g(k) = floor(10^-k · 2^(125 - floor(log2(10^-k)))) + 1, in [2^125, 2^126), split as
// 63 + 63 bits. Dragonbox: 10^k · 2^(127 - floor(log2(10^k))) rounded up, in [2^127, 2^128).
constexpr int kCacheMin = -290, kCacheMax = 326;
struct PowerTable {
  uint64_t g1[kKMax - kKMin + 1];
  uint64_t g0[kKMax - kKMin + 1];
  U128 cache[kCacheMax - kCacheMin + 1];

  PowerTable() {
    bool exact = false;
    for (int k = kKMin; k <= kKMax; ++k) {
      const U128 g = ScaledPow10(-k, 125 - FloorLog2Pow10(-k), &exact) + 1;
      g1[k - kKMin] = static_cast<uint64_t>(g >> 63);
      g0[k - kKMin] = static_cast<uint64_t>(g) & ((uint64_t{1} << 63) - 1);
    }
    for (int k = kCacheMin; k <= kCacheMax; ++k) {
      const U128 c = ScaledPow10(k, 127 - FloorLog2Pow10(k), &exact);
      cache[k - kCacheMin] = c + !exact;
    }
  }
};

// Built when the program starts (a few milliseconds), not on first use: a function-local static
// made every value call a function that checks whether it was built, which cost registers.
// Built before the default-priority static initialisers of every other file, so that none of
// them could format with an empty table.
__attribute__((init_priority(101))) const PowerTable kPowers;

// Round-to-odd of (g1·2^63 + g0)·cp / 2^126 (the scaled value, with a sticky last bit).
inline uint64_t ScaledRoundOdd(uint64_t g1, uint64_t g0, uint64_t cp) {
  const uint64_t x1 = static_cast<uint64_t>((U128{g0} * cp) >> 64);
  const U128 y = U128{g1} * cp;
  const uint64_t y0 = static_cast<uint64_t>(y), y1 = static_cast<uint64_t>(y >> 64);
  const uint64_t z = (y0 >> 1) + x1;
  const uint64_t vbp = y1 + (z >> 63);
  const uint64_t mask63 = (uint64_t{1} << 63) - 1;
  return vbp | (((z & mask63) + mask63) >> 63);
}

// The decimal f·10^e (f may end in zeros) Java prints for v = c·2^q (c > 0).
inline void JavaDecimal(int q, uint64_t c, int dk, uint64_t* f, int* e) {
  const uint64_t out = c & 1;  // an even c includes the ends of its rounding interval
  const uint64_t cb = c << 2, cbr = cb + 2;
  uint64_t cbl;
  int k;
  if (c != kCMin || q == kQMin) {
    cbl = cb - 2;
    k = FloorLog10Pow2(q);
  } else {  // a power of two: the interval below is half as wide
    cbl = cb - 1;
    k = FloorLog10ThreeQuartersPow2(q);
  }
  const int h = q + FloorLog2Pow10(-k) + 2;
  const PowerTable& t = kPowers;
  const uint64_t g1 = t.g1[k - kKMin], g0 = t.g0[k - kKMin];
  const uint64_t vb = ScaledRoundOdd(g1, g0, cb << h);
  const uint64_t vbl = ScaledRoundOdd(g1, g0, cbl << h);
  const uint64_t vbr = ScaledRoundOdd(g1, g0, cbr << h);
  const uint64_t s = vb >> 2;
  // Both candidates computed and chosen without branches: for arbitrary values which one wins
  // is unpredictable, and a mispredicted branch cost more than the arithmetic.
  const uint64_t sp10 = 10 * (s / 10), tp10 = sp10 + 10;
  const bool upin = vbl + out <= sp10 << 2;
  const bool wpin = (tp10 << 2) + out <= vbr;
  const bool use_short = (s >= 100) & (upin != wpin);  // one digit fewer: exactly one candidate
  const uint64_t tt = s + 1;
  const bool uin = vbl + out <= s << 2;
  const bool win = (tt << 2) + out <= vbr;
  const int64_t cmp = static_cast<int64_t>(vb - ((s + tt) << 1));  // closer one; even on a tie
  const bool pick_s = uin != win ? uin : (cmp < 0) | ((cmp == 0) & ((s & 1) == 0));
  const uint64_t long_f = pick_s ? s : tt;
  const uint64_t short_f = upin ? sp10 : tp10;
  *f = use_short ? short_f : long_f;
  *e = use_short ? k : k + dk;
}

// The same decimal for a normal double whose rounding interval is symmetric (c is not a power of
// two), by the Dragonbox algorithm (J. Jeon, "Dragonbox: A New Floating-Point Binary-to-Decimal
// Conversion Algorithm", 2020), written here from its description: one 64×128-bit product gives
// the upper end of the interval scaled by 10^k so that the interval is 10^2..10^3 units wide
// (delta). At most one multiple of 1000 lies in it: when one does, it is the shortest; otherwise
// the shortest are the multiples of 100 in it, and the one closest to v is v's scaled value
// rounded to a multiple of 100 (ties to even). For normal doubles Java's rules pick the same
// decimal (its one-or-two-digit rule only matters for subnormals, left to JavaDecimal). The rare
// exact cases are decided from the parity and integrality of other scaled values.
struct ScaledParity {
  bool parity, is_integer;
};
// floor(two_f · 2^beta · cache / 2^128): its lowest bit, and whether it is an integer.
inline ScaledParity MulParity(uint64_t two_f, U128 cache, int beta) {
  const U128 lo = U128{two_f} * static_cast<uint64_t>(cache);
  const uint64_t high =
      two_f * static_cast<uint64_t>(cache >> 64) + static_cast<uint64_t>(lo >> 64);
  const uint64_t low = static_cast<uint64_t>(lo);
  return {((high >> (64 - beta)) & 1) != 0, ((high << beta) | (low >> (64 - beta))) == 0};
}

inline void NearestShortest(int e2, uint64_t fc, uint64_t* f, int* e) {
  constexpr int kKappa = 2;
  constexpr uint32_t kBig = 1000, kSmall = 100;  // 10^(kappa+1), 10^kappa
  const int minus_k = FloorLog10Pow2(e2) - kKappa;
  const U128 cache = kPowers.cache[-minus_k - kCacheMin];
  const int beta = e2 + FloorLog2Pow10(-minus_k);  // 6..9
  const uint64_t cache_hi = static_cast<uint64_t>(cache >> 64);
  const uint32_t deltai =
      static_cast<uint32_t>(cache_hi >> (63 - beta));  // interval width, 100..999
  const uint64_t two_fc = fc << 1;
  const bool closed = (fc & 1) == 0;  // an even c includes the ends of its rounding interval
  // z = the upper end, scaled; z_integer: whether it is an integer.
  const uint64_t u = (two_fc | 1) << beta;
  const U128 zr = U128{u} * cache_hi + ((U128{u} * static_cast<uint64_t>(cache)) >> 64);
  const uint64_t zi = static_cast<uint64_t>(zr >> 64);
  const bool z_integer = static_cast<uint64_t>(zr) == 0;
  uint64_t s = zi / kBig;
  uint32_t r = static_cast<uint32_t>(zi - kBig * s);
  bool big;  // a multiple of 1000 lies in the interval
  if (r < deltai) {
    big = true;
    if (r == 0 && z_integer && !closed) {  // it is the excluded upper end itself
      big = false;
      --s;
      r = kBig;
    }
  } else if (r > deltai) {
    big = false;
  } else {  // r == deltai: is the lower end's fraction at most the upper end's?
    const ScaledParity x = MulParity(two_fc - 1, cache, beta);
    big = x.parity || (x.is_integer && closed);
  }
  if (big) {
    *f = s;
    *e = minus_k + kKappa + 1;
    return;
  }
  // The multiple of 100 closest to v: from the distance of z to the interval's middle.
  uint32_t dist = r - deltai / 2 + kSmall / 2;
  const bool approx_y_parity = ((dist ^ (kSmall / 2)) & 1) != 0;
  const bool divisible = dist % kSmall == 0;
  s = 10 * s + dist / kSmall;
  if (divisible) {  // the approximation may be one too high, or v may lie halfway: decide exactly
    const ScaledParity y = MulParity(two_fc, cache, beta);
    if (y.parity != approx_y_parity) {
      --s;
    } else if (y.is_integer && (s & 1) != 0) {
      --s;  // halfway between two: the even one
    }
  }
  *f = s;
  *e = minus_k + kKappa;
}

// The decimal f·10^e (f may end in zeros) Java prints for the finite non-zero double of these
// exponent and fraction fields.
inline void ShortestDecimal(int biased, uint64_t frac, uint64_t* f, int* e) {
  *e = 0;
  if (biased != 0) {
    const int mq = -kQMin + 1 - biased;  // v = c·2^-mq
    const uint64_t c = kCMin | frac;
    const bool small_int =
        (static_cast<unsigned>(mq - 1) < 52u) & ((c & ((uint64_t{1} << (mq & 63)) - 1)) == 0);
    if (small_int) {  // an integer below 2^53: itself
      *f = c >> mq;
    } else if (frac != 0) {
      NearestShortest(-mq, c, f, e);
    } else {  // a power of two: its interval is asymmetric
      JavaDecimal(-mq, c, 0, f, e);
    }
  } else if (frac < 3) {  // the two smallest subnormals: one more digit of precision
    JavaDecimal(kQMin, 10 * frac, -1, f, e);
  } else {
    JavaDecimal(kQMin, frac, 0, f, e);
  }
}

}  // namespace

size_t JavaDoubleLength(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  const uint64_t frac = bits & ((uint64_t{1} << 52) - 1);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  const size_t sign = bits >> 63;
  if (biased == 0x7ff) return frac != 0 ? 3 : 8 + sign;  // NaN, [-]Infinity
  if (biased == 0 && frac == 0) return 3 + sign;         // [-]0.0
  uint64_t f = 0;
  int e = 0;
  ShortestDecimal(biased, frac, &f, &e);
  const int n = DecimalDigits(f);
  const int exponent = e + n - 1;
  int sig = n;  // digits printed: without trailing zeros
  for (uint64_t t = f; sig > 1 && t % 10 == 0; t /= 10) --sig;
  if (exponent >= -3 && exponent < 7) {
    if (exponent < 0) return sign + 2 + static_cast<size_t>(-exponent - 1 + sig);  // 0.000ddd
    const int int_digits = exponent + 1;
    return sign + static_cast<size_t>(sig <= int_digits ? int_digits + 2 : sig + 1);
  }
  const unsigned x = static_cast<unsigned>(exponent < 0 ? -exponent : exponent);
  return sign + static_cast<size_t>(sig > 1 ? sig + 1 : 3) + 1 + (exponent < 0) +
         (x >= 100  ? 3
          : x >= 10 ? 2
                    : 1);
}

char* WriteJavaDouble(char* p, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  const uint64_t frac = bits & ((uint64_t{1} << 52) - 1);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  if (biased == 0x7ff) {
    if (frac != 0) return std::copy_n("NaN", 3, p);
    return (bits >> 63) ? std::copy_n("-Infinity", 9, p) : std::copy_n("Infinity", 8, p);
  }
  if (biased == 0 && frac == 0)
    return (bits >> 63) ? std::copy_n("-0.0", 4, p) : std::copy_n("0.0", 3, p);
  *p = '-';
  p += bits >> 63;
  uint64_t f = 0;
  int e = 0;
  ShortestDecimal(biased, frac, &f, &e);
  // f scaled to exactly 17 digits D[0..16] (the zeros it gains are trailing zeros, not printed):
  // D[0] alone, D[1..8] and D[9..16] as two words of ASCII in memory order; the text is built in
  // registers and written with unaligned stores, without a round trip through a stack buffer.
  const int n = DecimalDigits(f);
  const int exponent = e + n - 1;  // v ≈ D[0].D[1]D[2]…·10^exponent
  const uint64_t f17 = f * kPow10[17 - n];
  const uint64_t rest = f17 % 10000000000000000ULL;
  const uint64_t d0 = '0' + f17 / 10000000000000000ULL;
  uint64_t w1, w2;
  digits::Digits16(rest, &w1, &w2);
  const int tz2 = digits::TrailingZeros(w2);
  const int sig = 17 - (tz2 < 8 ? tz2 : 8 + digits::TrailingZeros(w1));  // digits printed (>= 1)
  const uint64_t x = d0 | w1 << 8, y = w1 >> 56 | w2 << 8,
                 z = w2 >> 56;           // D[0..7], D[8..15], D[16]
  if (exponent >= -3 && exponent < 7) {  // 10^-3 <= |v| < 10^7: plain notation
    // Both layouts computed and one chosen without branches (which one wins is as unpredictable
    // as the data): |v| >= 1: D[0..l-1] '.' D[l..] with l = exponent + 1, at least one fraction
    // digit ("100.0"); |v| < 1: "0." then -exponent - 1 zeros then D[0..sig-1]. Either is four
    // stores: a word at p, the point, two words (and a byte) after it.
    const bool ge1 = exponent >= 0;
    const int l = ge1 ? exponent + 1 : 1, zeros = ge1 ? 0 : -exponent - 1;
    const int sh = 8 * l;  // 8..56
    uint64_t zero_point;
    std::memcpy(&zero_point, "0.000000", 8);
    const uint64_t head = ge1 ? x : zero_point;
    const uint64_t a = ge1 ? (x >> sh | y << (64 - sh)) : x;
    const uint64_t b = ge1 ? (y >> sh | z << (64 - sh)) : y;
    const uint64_t c = ge1 ? z >> sh : z;
    const int at = ge1 ? l + 1 : 2 + zeros;  // where the digits after the point start
    std::memcpy(p, &head, 8);
    p[ge1 ? l : 1] = '.';
    std::memcpy(p + at, &a, 8);
    std::memcpy(p + at + 8, &b, 8);
    p[at + 16] = static_cast<char>(c);
    return p + (ge1 ? at + std::max(sig - l, 1) : at + sig);
  }
  p[0] = static_cast<char>(d0);
  p[1] = '.';
  std::memcpy(p + 2, &w1, 8);
  std::memcpy(p + 10, &w2, 8);
  p += sig > 1 ? sig + 1 : 3;  // at least one digit after the point: "1.0E10"
  *p++ = 'E';
  if (exponent < 0) *p++ = '-';
  const unsigned ax = static_cast<unsigned>(exponent < 0 ? -exponent : exponent);  // 1..324
  if (ax >= 100) *p++ = static_cast<char>('0' + ax / 100);
  if (ax >= 10) {
    std::memcpy(p, kDigitPairs + 2 * (ax % 100), 2);
    return p + 2;
  }
  *p++ = static_cast<char>('0' + ax);
  return p;
}

void AppendJavaDouble(std::string* out, double v) {
  char buf[kMaxJavaDoubleChars];
  out->append(buf, WriteJavaDouble(buf, v));
}

void AppendFloat(std::string* out, float v) {
  char buf[kMaxNumberChars];
  out->append(buf, WriteFloat(buf, v));
}
void AppendDouble(std::string* out, double v) {
  char buf[kMaxNumberChars];
  out->append(buf, WriteDouble(buf, v));
}

}  // namespace omicsfs::text
